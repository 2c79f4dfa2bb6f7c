//! Chapter "ATAX": y = Aᵀ(A·x) with A an m × n row-major matrix, two matrix-vector products
//! that read A twice and do two flops per element read: bound by memory.
//!
//! * [`datasets`]: the PolyBench 4.2 sizes, the large size and the odd verification sizes, and
//!   the bytes each variant must move (the floor times the chapter predicts);
//! * [`reference`](mod@reference): the CPU reference (double accumulation), the tolerance, and the slides'
//!   claims (Testoni & Chiarabini);
//! * [`element`]: the element types (`float`, `double`) and device addresses for cuBLAS;
//! * [`device`]: the kernels of `kernels/atax.cu`, named by type, and cuBLAS, and how each is
//!   launched;
//! * [`measure()`]: every kernel variant and every host strategy, verified then timed;
//! * [`report()`]: the chapter's figures and tables, computed from the results;
//! * [`exercises`]: the solutions of the chapter's exercises.

pub mod args;
pub mod datasets;
pub mod device;
pub mod element;
pub mod exercises;
pub mod measure;
pub mod reference;
pub mod report;

pub use args::{Args, Settings};
pub use measure::{measure, Part};
pub use report::report;

/// The kernel file of this chapter.
pub const KERNEL_FILE: &str = "atax.cu";

/// The parts of the chapter that need more than compute capability 7.0: the one-launch
/// pass with thread-block clusters (its kernels exist in [`KERNEL_FILE`] only where it is
/// compiled for 9.0). Every other part runs on any
/// GPU.
pub const SECTIONS: &[crate::harness::sections::Section] =
    &[crate::harness::sections::Section {
        name: "cluster pass",
        needs: &[crate::harness::sections::Need::Capability(
            (9, 0),
            "thread-block clusters and distributed shared memory",
        )],
    }];

/// The stem of the table of what a run could not measure ([`crate::harness::skipped`]).
pub const SKIPPED_STEM: &str = "atax-skipped";

use crate::harness::chapter::{Chapter, Feature};
use crate::harness::compare::{Claim, Headline, Pick};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

macro_rules! atax_kernel {
    // The last float dataset: the largest matrix of the run.
    ($variant:literal) => {
        $crate::pick!(
            "atax-kernels",
            [("type", "float"), ("variant", $variant)],
            "cold_median_us",
            ["dataset"]
        )
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "atax",
    page: "atax.md",
    title: "ATAX: two matrix-vector products",
    needs: Needs::GpuAndCublas
        .features(&[Feature::CLUSTERS])
        .memory(3172 << 20, 48 << 20),
    reps: FullQuick::new(30, 3),
    counted: &[
        "atax-counters",
        "atax-counted",
        "atax-pitched-counters",
        "atax-pitched-counted",
    ],
    writes: &[
        "atax-ceilings",
        "atax-kernels",
        "atax-end-to-end",
        "atax-slides",
        "atax-targets",
        "atax-shapes",
        "atax-pitched",
        "atax-playbook",
        SKIPPED_STEM,
        "atax-speedup",
        "atax-breakdown",
        "atax-bandwidth",
        "atax-occupancy",
        "atax-one-time",
        "atax-unified",
    ],
    sanitizer_args: &["--quick", "--reps", "1", "--side", "257", "--ceiling-mib", "4"],
    note: "",
    headlines: &[
        Headline::lower(
            "fused single pass, largest float matrix, L2 cold",
            atax_kernel!("fused"),
            "µs",
        ),
        Headline::lower(
            "cuBLAS gemv x2, largest float matrix, L2 cold",
            atax_kernel!("cuBLAS gemv ×2"),
            "µs",
        ),
    ],
    claims: &[
        Claim::ratio(
            "the fused pass is at least 1.85x faster than cuBLAS's two gemv calls \
             (largest float matrix, L2 cold)",
            atax_kernel!("cuBLAS gemv ×2"),
            atax_kernel!("fused"),
            1.85,
        ),
        Claim::at_least(
            "pinned host memory speeds the whole program up (largest float matrix)",
            Pick {
                stem: "atax-end-to-end",
                filter: &[("type", "float"), ("strategy", "pinned, baseline")],
                column: "speedup_median",
                key: &["dataset"],
            },
            1.0,
        ),
    ],
    exercise: Some(Exercise {
        number: 4,
        file: "exercises_atax.cu",
        function: function_of::<exercises::TmpWarp>,
        check: exercises::check_tmp_warp,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_memory_covers_a_its_transpose_and_managed_a() {
        // At the large square: A and Aᵀ on the device, and managed A prefetched beside them
        // by the end-to-end strategies; x, y, tmp and the partial sums come on top, within
        // the declaration's slack. The copy ceiling's source and destination are smaller.
        let peak = |s: &Settings| 3 * s.side * s.side * 4;
        let defaults = |quick| Settings::with_defaults(quick, Part::All);
        let (full, quick) = (defaults(false), defaults(true));
        assert!(2 * (full.ceiling_mib << 20) <= peak(&full));
        // --quick: its shapes are larger than the square (4096 x 1024, A and Aᵀ), and the
        // copy ceiling of 16 MiB source and destination.
        let quick_shapes =
            measure::QUICK_SHAPES.iter().map(|d| 2 * d.m * d.n * 4).max();
        let quick_peak = (quick_shapes.unwrap() as u64)
            .max(peak(&quick))
            .max(2 * (quick.ceiling_mib << 20));
        let declared = CHAPTER.needs.memory;
        let slack = 100 << 20;
        assert!((peak(&full)..=peak(&full) + slack).contains(&declared.full));
        assert!((quick_peak..=quick_peak + (16 << 20)).contains(&declared.quick));
    }
}

#[cfg(test)]
mod plan_tests {
    /// Below 9.0 the chapter skips its cluster pass, naming the need; from 9.0 up it runs all.
    #[test]
    fn the_atax_plan_of_every_supported_gpu() {
        crate::harness::sections::check_one_hopper_section(
            super::SECTIONS,
            "cluster pass",
            "thread-block clusters and distributed shared memory",
        );
    }
}
