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

use crate::cmm::tiled::SWEEP_SHARED_BYTES;
use crate::harness::sections::{Need, Section};

/// Every solve of the tiled program starts with block diagonal 0, swept in three 64 x 64
/// tiles of 8-byte keys: 99,840 bytes of shared memory in one block, past what a T4 (64 KiB)
/// or a V100 (96 KiB) lets a block opt in to.
const SWEEP_SHARED: Need = Need::SharedPerBlock(SWEEP_SHARED_BYTES as usize);
/// The 32-bit min-plus kernel (`kernels/cmm_tiled_async.cu`) streams its strips with
/// cp.async.
const CP_ASYNC: Need = Need::Capability((8, 0), "cp.async copies into shared memory");

/// The versions of the tiled program with 64-bit keys in the min-plus products.
pub const TILED_U64: &str = "tiled program, 64-bit keys";
/// The versions with the 32-bit min-plus kernel.
pub const TILED_U32: &str = "tiled program, 32-bit min-plus";
/// The batch of chains and the copies overlapped with a solve: both solve with the fastest
/// version, which for the chains of the DP's dimensions is a 32-bit one.
pub const BATCH: &str = "batch of chains and overlapped copies";

/// The parts of the chapter that need more than any GPU from compute capability 7.0 offers;
/// everything else (the paper's kernels, the warp-per-cell program, the chains with cuBLAS,
/// the CPU programs) runs on any.
pub const SECTIONS: &[Section] = &[
    Section { name: TILED_U64, needs: &[SWEEP_SHARED] },
    Section { name: TILED_U32, needs: &[CP_ASYNC, SWEEP_SHARED] },
    Section { name: BATCH, needs: &[CP_ASYNC, SWEEP_SHARED] },
];

/// The stem of the table of what a run skipped.
pub const SKIPPED_STEM: &str = "cmm-beyond-skipped";

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
        SKIPPED_STEM,
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

#[cfg(test)]
mod plan_tests {
    use super::{BATCH, SECTIONS, TILED_U32, TILED_U64};
    use crate::harness::kernels;
    use crate::harness::sections::{gpu, plan, Need, GPUS};

    /// From 8.0 with room for the sweeps (A100, RTX 3090 and 4090, H100, RTX 5090) all of
    /// the chapter runs. A V100 has 8.0's features missing and 96 KiB of shared memory, a T4
    /// 64 KiB: neither can sweep a block, so neither runs any of the tiled program; the
    /// paper's kernels, the chains and the CPU programs still run there.
    #[test]
    fn the_cmm_beyond_plan_of_every_supported_gpu() {
        for (name, caps) in GPUS {
            let p = plan(SECTIONS, caps);
            if caps.capability >= (8, 0) {
                assert_eq!(p.run, [TILED_U64, TILED_U32, BATCH], "{name}");
                assert!(p.skipped.is_empty(), "{name}");
            } else {
                assert!(p.run.is_empty(), "{name}");
                assert_eq!(p.skipped.len(), 3, "{name}");
            }
        }
        let t4 = plan(SECTIONS, &gpu("T4"));
        assert_eq!(
            t4.skip(TILED_U64).unwrap().to_string(),
            "skipped: tiled program, 64-bit keys: needs 99840 bytes of shared memory per \
             block; this GPU allows 65536"
        );
        assert_eq!(
            t4.skip(TILED_U32).unwrap().to_string(),
            "skipped: tiled program, 32-bit min-plus: needs compute capability 8.0 (cp.async \
             copies into shared memory); this GPU is 7.5"
        );
        let v100 = plan(SECTIONS, &gpu("V100"));
        assert_eq!(
            v100.skip(TILED_U64).unwrap().why,
            "needs 99840 bytes of shared memory per block; this GPU allows 98304"
        );
        assert!(v100
            .skip(BATCH)
            .unwrap()
            .why
            .starts_with("needs compute capability 8.0"));
    }

    /// A pretended 7.5 on an H100 keeps the H100's shared memory: the 64-bit versions run,
    /// the 32-bit ones and the batch are skipped for cp.async alone.
    #[test]
    fn a_turing_capability_with_hoppers_shared_memory_skips_only_the_cp_async_sections()
    {
        let pretended =
            crate::harness::sections::Caps { capability: (7, 5), ..gpu("H100") };
        let p = plan(SECTIONS, &pretended);
        assert_eq!(p.run, [TILED_U64]);
        assert_eq!(
            p.skipped.iter().map(|s| s.section).collect::<Vec<_>>(),
            [TILED_U32, BATCH]
        );
    }

    /// The capability a section declares is the one its kernel file declares.
    #[test]
    fn the_sections_need_what_the_kernel_files_declare() {
        let declared = kernels::needs("cmm_tiled_async.cu").unwrap();
        for s in SECTIONS.iter().filter(|s| s.name != TILED_U64) {
            assert!(
                s.needs.contains(&Need::Capability(declared.0, declared.1)),
                "{s:?}"
            );
        }
        assert_eq!(kernels::needs("cmm_tiled.cu").unwrap().0, (7, 0));
    }
}
