//! Chapter "Reuse, loop permutation, tiling": from CPU loops to a tiled matrix multiply.
//!
//! | module | what it holds |
//! |---|---|
//! | [`traversal`] | row-order and column-order sweeps of a 2D array, measured on the CPU |
//! | [`legality`] | dependence distance vectors: is a loop order legal, are loops fully permutable |
//! | [`strip`] | `D[i] += B[j][i]`: original, strip-mined, strip-mined + permuted, measured |
//! | [`model`] | the steps of the tiled matrix multiply and what each should cost (bytes per FLOP) |
//! | [`gemm`] | the GPU side: launching each step and cuBLAS, verification, timing, occupancy |
//! | [`report`] | the chapter's figures and tables |
//! | [`exercises`] | solutions of the exercises |

pub mod exercises;
pub mod gemm;
pub mod legality;
pub mod model;
pub mod report;
pub mod strip;
pub mod traversal;

/// The kernel file of this chapter.
pub const KERNEL_FILE: &str = "tiling.cu";

/// The median of `reps` runs of `work`, in milliseconds, timed with the CPU clock.
pub fn cpu_median_ms(reps: usize, mut work: impl FnMut()) -> crate::harness::Stats {
    assert!(reps > 0);
    let samples: Vec<f64> = (0..reps)
        .map(|_| {
            let start = std::time::Instant::now();
            work();
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    crate::harness::Stats::from_samples(&samples).expect("CPU timings are never NaN")
}
