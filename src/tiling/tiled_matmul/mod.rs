//! The GPU half of the chapter (`tiled_matmul`): every step of the tiled matrix multiply, and
//! cuBLAS SGEMM (FP32, TF32 off), verified against a double-precision CPU reference at sizes
//! that are not tile multiples, then timed at one square size with L2 cold.
//!
//! [`measure()`] verifies and times; [`report()`] draws every figure and table from the results.

pub mod args;
pub mod measure;
pub mod report;

pub use args::Args;
pub use measure::{measure, Settings, GENERIC_N};
pub use report::report;

use crate::harness::chapter::Chapter;
use crate::harness::compare::{Claim, Headline};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

macro_rules! matmul {
    ($step:literal, $column:literal) => {
        $crate::pick!("tiling-kernels", [("step", $step)], $column, ["#size"])
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "tiled_matmul",
    page: "tiling.md",
    title: "Reuse, loop permutation, tiling",
    needs: Needs::GpuAndCublas.memory(448 << 20, 7 << 18),
    reps: FullQuick::new(10, 2),
    counted: &["tiling-counters", "tiling-counted"],
    writes: &[
        "tiling-kernels",
        "tiling-verification",
        "tiling-matmul",
        "tiling-lecture",
        "tiling-out-of-core",
        "tiling-out-of-core-runs",
        "tiling-generic",
    ],
    sanitizer_args: &["--quick", "--reps", "1", "--side", "64", "--budget-mib", "1"],
    note: "",
    headlines: &[
        Headline::higher(
            "best tiled step",
            matmul!("6 + quadrants, double buffer", "gflops_median"),
            "GFLOP/s",
        ),
        Headline::higher(
            "cuBLAS SGEMM",
            matmul!("cuBLAS SGEMM", "gflops_median"),
            "GFLOP/s",
        ),
    ],
    claims: &[Claim::at_least(
        "the best tiled step reaches at least 80% of cuBLAS SGEMM",
        matmul!("6 + quadrants, double buffer", "percent_of_cublas"),
        80.0,
    )],
    exercise: Some(Exercise {
        number: 3,
        file: "exercises_tiling.cu",
        function: function_of::<super::exercises::MatmulTile>,
        check: super::exercises::check_matmul_tile,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiling::tiled_matmul::args::Sizes;

    #[test]
    fn the_declared_memory_is_the_timed_multiply_and_the_out_of_core_budget() {
        // A, B and C of the timed side, and the out-of-core multiply's device budget.
        let peak = |s: Sizes| {
            3 * s.side * s.side * 4 + (s.budget_mib * (1 << 20) as f64) as u64
        };
        let (full, quick) = (Sizes::with_defaults(false), Sizes::with_defaults(true));
        crate::harness::chapter::check_declared_memory(
            &CHAPTER,
            FullQuick::new(peak(full), peak(quick)),
        );
    }
}
