//! The mean of per-layer, per-head figures measured a slice of a batch at a time (the page
//! measures attention distance in slices so it never stalls for the whole batch). Slices
//! of equal size: the mean of their means is the batch mean.

/// Sums each slice's figures as they come; [`SliceMean::mean`] divides by their count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SliceMean {
    total: Vec<Vec<f32>>,
    slices: usize,
}

impl SliceMean {
    /// One slice's figures, by layer then head.
    pub fn add(&mut self, part: Vec<Vec<f32>>) {
        if self.total.is_empty() {
            self.total = part;
        } else {
            for (sum, layer) in self.total.iter_mut().zip(part) {
                sum.iter_mut().zip(layer).for_each(|(s, v)| *s += v);
            }
        }
        self.slices += 1;
    }

    /// The mean over the slices added; empty when none was.
    pub fn mean(mut self) -> Vec<Vec<f32>> {
        let slices = self.slices as f32;
        self.total.iter_mut().flatten().for_each(|v| *v /= slices);
        self.total
    }
}
