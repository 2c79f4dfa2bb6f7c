//! Chapter "CMM beyond the paper": the same dynamic program from n = 128 to n = 16384, and
//! matrix chains multiplied in the order it finds.
//!
//! [`measure()`] verifies and times; [`report()`] draws every figure and table from the results.

pub mod args;
pub mod batch;
pub mod counted;
pub mod exercises;
pub mod instructions;
pub mod measure;
pub mod report;

pub use args::Args;
pub use measure::{
    check_matrices, measure, Lengths, Part, Results, Settings, CHAIN_REPS, MATRICES,
    MAX_MATRICES,
};
pub use report::report;

use crate::harness::chapter::{Chapter, Feature};
use crate::harness::compare::{Claim, Headline, Pick};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "cmm_beyond",
    page: "cmm_beyond.md",
    title: "CMM beyond the paper: to n = 16384",
    needs: Needs::GpuAndCublas.features(&[Feature::CP_ASYNC]).memory(2065 << 20, 16 << 20),
    reps: FullQuick::new(10, 3),
    counted: &["cmm_beyond-counters", "cmm_beyond-counted"],
    writes: &[
        "cmm-beyond-time-vs-n",
        "cmm-beyond-targets",
        "cmm-beyond-versions",
        "cmm-beyond-chains",
        "cmm-beyond-chain-table",
        "cmm-beyond-cpu",
        "cmm-beyond-launches",
        "cmm-beyond-batch",
        "cmm-beyond-overlap",
        "cmm-beyond-paper72",
    ],
    // n = 131 (odd): three tiles per side, so every tiled kernel runs, both min-plus
    // kernels and all three sweeps included; the quick batch is 8 chains of 131 in every
    // launch, and the overlap copies n = 131 strip by strip.
    sanitizer_args: &["--quick", "--reps", "1", "--matrices", "131", "--part", "dp-batch"],
    note:
        "about 5 minutes on an H100 with 16 CPU cores, most of it the CPU references at \
           n = 16384 and of the batch's 1024 chains",
    headlines: &[
        Headline::lower(
            "tiled DP, whole table, n = 1024",
            Pick { stem: "cmm-beyond-targets", filter: &[("n", "1024")], column: "best_ms", key: &["n"], },
            "ms",
        ),
        Headline::lower(
            "tiled DP, whole table, largest n",
            Pick { stem: "cmm-beyond-targets", filter: &[], column: "best_ms", key: &["n"], },
            "ms",
        ),
    ],
    claims: &[Claim::at_least(
        "the DP's order multiplies the tall-skinny-then-wide chain faster than left to right",
        crate::pick!(
            "cmm-beyond-chain-table",
            [("chain", "tall-skinny then wide")],
            "measured_ratio",
            []
        ),
        1.0,
    )],
    exercise: Some(Exercise {
        number: 3,
        file: "exercises_cmm_beyond.cu",
        function: function_of::<exercises::WarpPerCell>,
        check: exercises::check_warp_per_cell,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::tiled::{tile_diagonals, TILE};

    #[test]
    fn the_declared_memory_covers_the_tiled_table_at_the_largest_n() {
        // The tiled program's keys: (tiles x TILE)^2 cells of 64 bits at the largest n.
        for quick in [false, true] {
            let n = *measure::MATRICES.pick(quick).0.iter().max().unwrap();
            let side = tile_diagonals(n) * TILE;
            let peak = (side * side * 8) as u64;
            let declared = CHAPTER.needs.memory.pick(quick);
            // --quick's batch of chains is not a function of n: room for it.
            let slack = if quick { 16 << 20 } else { 2 << 20 };
            assert!((peak..=peak + slack).contains(&declared), "quick: {quick}");
        }
    }
}
