//! `output += lhs · rhs` for the browser's worker: `rhs` packed into panels of 8 columns, then
//! a register tile of 4 rows × 8 columns of the output, in wasm SIMD128.
//!
//! Natively the linear layers call `gemm`, whose AVX2 kernels are near the machine's peak. In
//! the worker the same crate runs its simd128 kernel, a 12 × 4 tile: 12 accumulators, 3 loads
//! and a broadcast fill the 16 vector registers of x86-64, more than V8 leaves free, so its
//! steps spill. The worker's profile (`tests/e2e/profile-train.mjs`, seed preset) put 48 % of a
//! training step in that one kernel. This file's products at the seed's shapes (1088 × 64 ×
//! 192 and 1088 × 128 × 64 forward, the two gradients' layouts), built alone for wasm and timed
//! in headless Chromium against `gemm` in the same build, best of four rounds: 11–14 G
//! multiply-adds per second for `gemm`; here, by tile (rows × columns, accumulators): 2 × 16
//! (8) 14–16.5 G, 2 × 12 (6) 13–15 G, 3 × 8 (6) 12–17 G, 3 × 12 (9) 15–18.5 G, 4 × 8 (8)
//! 16–19 G, 5 × 8 (10) 10–11 G, 6 × 8 (12) 10–12 G.
//!
//! In the `worker_fma` binary (for browsers with relaxed SIMD, [`use_tile`]) the tile's
//! multiply-adds are fused: 1.08–1.29× the rate (`tools/product-bench`).

// Natively only the tests call this: the linear layers run `gemm` there.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

/// Rows of the output in one register tile.
const TILE_ROWS: usize = 4;
/// Columns of the output in one register tile: two SIMD128 vectors of `f32`.
const TILE_COLUMNS: usize = 8;
/// Terms of the sum packed at once: a packed `rhs` panel (depth × 8) stays in L1 and the
/// whole packed `rhs` (depth × at most 192 columns) in L2.
const DEPTH_BLOCK: usize = 256;
/// Rows of `lhs` per pass over the panels: at most 64 KB of `lhs`, read once per panel from L2.
const ROW_BLOCK: usize = 64;

/// A matrix in a slice: its size and the strides of a row and of a column (a transposed view is
/// the same values with the strides swapped).
#[derive(Clone, Copy)]
pub struct Matrix<'a> {
    pub values: &'a [f32],
    pub rows: usize,
    pub columns: usize,
    pub row_stride: usize,
    pub column_stride: usize,
}

impl<'a> Matrix<'a> {
    pub fn row_major(values: &'a [f32], rows: usize, columns: usize) -> Self {
        Self {
            values,
            rows,
            columns,
            row_stride: columns,
            column_stride: 1,
        }
    }

    pub fn transposed(self) -> Self {
        Self {
            values: self.values,
            rows: self.columns,
            columns: self.rows,
            row_stride: self.column_stride,
            column_stride: self.row_stride,
        }
    }

    /// Whether every element the strides reach lies in `values`.
    pub fn fits(&self) -> bool {
        if self.rows == 0 || self.columns == 0 {
            return true;
        }
        let last = (self.rows - 1)
            .checked_mul(self.row_stride)
            .zip((self.columns - 1).checked_mul(self.column_stride))
            .and_then(|(a, b)| a.checked_add(b));
        last.is_some_and(|last| last < self.values.len())
    }

    fn at(&self, row: usize, column: usize) -> f32 {
        self.values[row * self.row_stride + column * self.column_stride]
    }
}

/// `output += lhs · rhs`, with `output` row-major; the caller has checked the sizes.
///
/// # Shapes
/// - lhs: `[m, k]`
/// - rhs: `[k, n]`
/// - output: `[m, n]`
pub fn add_product(output: &mut [f32], lhs: Matrix<'_>, rhs: Matrix<'_>) {
    let (m, k, n) = (lhs.rows, lhs.columns, rhs.columns);
    debug_assert!(rhs.rows == k && output.len() == m * n && lhs.fits() && rhs.fits());
    let panels = n.div_ceil(TILE_COLUMNS);
    let mut packed_rhs = vec![0.0; panels * TILE_COLUMNS * k.min(DEPTH_BLOCK)]; // [panels, depth, 8]
    let tile = chosen_tile();
    for depth_start in (0..k).step_by(DEPTH_BLOCK) {
        let depth = (k - depth_start).min(DEPTH_BLOCK);
        pack_rhs(&mut packed_rhs, rhs, depth_start, depth);
        for row_start in (0..m).step_by(ROW_BLOCK) {
            let rows = (m - row_start).min(ROW_BLOCK);
            for panel in 0..panels {
                let rhs_panel = &packed_rhs[panel * TILE_COLUMNS * depth..][..TILE_COLUMNS * depth];
                let column = panel * TILE_COLUMNS;
                let columns = (n - column).min(TILE_COLUMNS);
                for row in (row_start..row_start + rows).step_by(TILE_ROWS) {
                    // Past the last row the tile reads the last row again, and its sums are
                    // dropped.
                    let lhs_rows: [&[f32]; TILE_ROWS] = std::array::from_fn(|r| {
                        let r = (row + r).min(m - 1);
                        &lhs.values[r * lhs.row_stride + depth_start * lhs.column_stride..]
                    });
                    let sums = tile(depth, lhs_rows, lhs.column_stride, rhs_panel);
                    for (r, sums) in sums.iter().enumerate().take((m - row).min(TILE_ROWS)) {
                        let out = &mut output[(row + r) * n + column..][..columns];
                        out.iter_mut().zip(sums).for_each(|(o, s)| *o += s);
                    }
                }
            }
        }
    }
}

/// `rhs[depth_start .. depth_start + depth, ..]` as panels of 8 columns, each `depth` rows of
/// 8 contiguous values, zero past the last column.
fn pack_rhs(packed: &mut [f32], rhs: Matrix<'_>, depth_start: usize, depth: usize) {
    for (panel, values) in packed
        .chunks_exact_mut(TILE_COLUMNS * depth)
        .take(rhs.columns.div_ceil(TILE_COLUMNS))
        .enumerate()
    {
        for (p, row) in values.chunks_exact_mut(TILE_COLUMNS).enumerate() {
            for (c, value) in row.iter_mut().enumerate() {
                let column = panel * TILE_COLUMNS + c;
                *value = if column < rhs.columns {
                    rhs.at(depth_start + p, column)
                } else {
                    0.0
                };
            }
        }
    }
}

/// A register tile's kernel: `Σₚ lhs[r][p · step] · rhs[p]` over `depth` steps of four rows
/// of `lhs` and a packed panel of 8 columns ([`simd_tile!`](crate::simd_tile) makes them).
pub type Tile = fn(usize, [&[f32]; 4], usize, &[f32]) -> [[f32; 8]; 4];

// The tile macro writes its shape out: it is expanded in other crates.
const _: () = assert!(TILE_ROWS == 4 && TILE_COLUMNS == 8);

/// The kernel [`use_tile`] chose; unset, [`tile`].
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
static CHOSEN_TILE: std::sync::OnceLock<Tile> = std::sync::OnceLock::new();

/// From now on, every product in `tile`, a kernel the binary made with [`simd_tile!`]
/// (crate::simd_tile): `worker_fma` calls this first with its tile in relaxed SIMD's fused
/// multiply-adds. That tile lives in the binary's crate, not here, because LLVM gives every
/// function of a wasm module the target features of any one of them: a relaxed SIMD kernel in
/// the library would put relaxed instructions all through it, and the plain worker (WebKit's,
/// which has no relaxed SIMD) could not compile. So one build of the library serves both
/// workers (a `fused-madd` feature compiled it twice). A second call changes nothing.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub fn use_tile(tile: Tile) {
    let _ = CHOSEN_TILE.set(tile);
}

/// The kernel of this binary's products.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn chosen_tile() -> Tile {
    CHOSEN_TILE.get().copied().unwrap_or(tile)
}

/// Natively, the plain Rust tile.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn chosen_tile() -> Tile {
    tile
}

/// A SIMD128 register tile named `$name` (a [`Tile`]): `simd_tile!(plain tile)`, the
/// library's, with a multiply and an add; `simd_tile!(fused fused_tile)`, `worker_fma`'s, with
/// relaxed SIMD's fused multiply-add (`f32x4.relaxed_madd`; V8 fuses on x86-64 with FMA), in
/// `tools/product-bench` 1.08-1.29× the rate in headless Chromium on this project's 2-core AMD
/// machine. The two differ in their multiply-add alone.
#[macro_export]
macro_rules! simd_tile {
    (plain $name:ident) => {
        $crate::simd_tile!(@tile $name, [], [#[inline(always)]],
            |sum, a, b| core::arch::wasm32::f32x4_add(sum, core::arch::wasm32::f32x4_mul(a, b)));
    };
    (fused $name:ident) => {
        $crate::simd_tile!(@tile $name,
            [#[target_feature(enable = "relaxed-simd")]],
            [#[target_feature(enable = "relaxed-simd")] #[inline]],
            |sum, a, b| core::arch::wasm32::f32x4_relaxed_madd(a, b, sum));
    };
    (@tile $name:ident, [$(#[$tile:meta])*], [$(#[$madd:meta])*],
        |$sum:ident, $a:ident, $b:ident| $multiply_add:expr) => {
        /// The 4 × 8 tile `Σₚ lhs[r][p · step] · rhs[p]` over `depth` steps of four rows of
        /// `lhs` and a packed panel, in eight SIMD128 accumulators.
        $(#[$tile])*
        fn $name(depth: usize, lhs: [&[f32]; 4], step: usize, rhs: &[f32]) -> [[f32; 8]; 4] {
            use core::arch::wasm32::{f32x4_splat, v128, v128_load, v128_store};
            /// `sum + a · b` in four lanes.
            $(#[$madd])*
            fn multiply_add($sum: v128, $a: v128, $b: v128) -> v128 {
                $multiply_add
            }
            if depth == 0 {
                return [[0.0; 8]; 4];
            }
            let mut sums = [[f32x4_splat(0.0); 2]; 4];
            let last = (depth - 1) * step;
            assert!(lhs.iter().all(|row| last < row.len()) && rhs.len() >= depth * 8);
            let (mut rhs_at, mut lhs_at) = (rhs.as_ptr(), lhs.map(<[f32]>::as_ptr));
            for _ in 0..depth {
                // SAFETY: at step p < depth the pointers are at rhs[8p] and lhs[r][p · step],
                // and the assertion keeps rhs[8p + 7] and lhs[r][(depth - 1) · step] inside
                // their slices (the advances after the last step wrap and are never read).
                // `v128_load` has no alignment requirement.
                let (columns, values) = unsafe {
                    let columns: [v128; 2] =
                        std::array::from_fn(|v| v128_load(rhs_at.add(4 * v).cast::<v128>()));
                    (columns, lhs_at.map(|at| *at))
                };
                for (row_sums, value) in sums.iter_mut().zip(values) {
                    let value = f32x4_splat(value);
                    for (sum, columns) in row_sums.iter_mut().zip(columns) {
                        *sum = multiply_add(*sum, columns, value);
                    }
                }
                rhs_at = rhs_at.wrapping_add(8);
                lhs_at = lhs_at.map(|at| at.wrapping_add(step));
            }
            let mut out = [[0.0; 8]; 4];
            for (out, row_sums) in out.iter_mut().zip(sums) {
                for (out, sum) in out.chunks_exact_mut(4).zip(row_sums) {
                    // SAFETY: `out` is four `f32`, the 16 bytes `v128_store` writes, unaligned.
                    unsafe { v128_store(out.as_mut_ptr().cast::<v128>(), sum) };
                }
            }
            out
        }
    };
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
simd_tile!(plain tile);

/// The same tile in plain Rust, in the same order of additions (the tests' reference for the
/// blocking, and the kernel where SIMD128 is off).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn tile(
    depth: usize,
    lhs: [&[f32]; TILE_ROWS],
    step: usize,
    rhs: &[f32],
) -> [[f32; TILE_COLUMNS]; TILE_ROWS] {
    let mut sums = [[0.0; TILE_COLUMNS]; TILE_ROWS];
    for (p, columns) in rhs.chunks_exact(TILE_COLUMNS).take(depth).enumerate() {
        for (row_sums, row) in sums.iter_mut().zip(lhs) {
            let value = row[p * step];
            for (sum, column) in row_sums.iter_mut().zip(columns) {
                *sum += column * value;
            }
        }
    }
    sums
}
