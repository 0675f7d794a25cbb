//! Native side: the worker's kernel (its portable tile, which LLVM vectorises to SSE2's four
//! lanes, the width of wasm's SIMD128) and gemm (AVX2 with FMA here, as `vit` runs it).

use std::time::Instant;

use product_bench::{Operands, SHAPES, cpu_matmul, rate};

fn main() {
    let start = Instant::now();
    let clock = || start.elapsed().as_secs_f64() * 1000.0;
    for round in 1..=3 {
        for shape in SHAPES {
            let operands = Operands::new(shape);
            let (lhs, rhs) = operands.matrices();
            let ours = rate(&operands, clock, |out| {
                cpu_matmul::add_product(out, lhs, rhs)
            });
            let gemm = rate(&operands, clock, |out| {
                // SAFETY: the strides describe `lhs`, `rhs` and the row-major output in full.
                unsafe {
                    gemm::gemm(
                        operands.m,
                        operands.n,
                        operands.k,
                        out.as_mut_ptr(),
                        1,
                        operands.n as isize,
                        true,
                        lhs.values.as_ptr(),
                        lhs.column_stride as isize,
                        lhs.row_stride as isize,
                        rhs.values.as_ptr(),
                        rhs.column_stride as isize,
                        rhs.row_stride as isize,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    )
                }
            });
            let (layout, m, k, n) = shape;
            println!(
                "{{\"side\":\"native\",\"round\":{round},\"layout\":{layout},\"m\":{m},\"k\":{k},\"n\":{n},\"tile_sse2_gmacs\":{ours:.1},\"gemm_gmacs\":{gemm:.1}}}"
            );
        }
    }
}
