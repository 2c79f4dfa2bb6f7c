//! The chapter "Measuring a GPU": the ceilings every later chapter is measured against.
//!
//! [`measure()`] verifies and times; [`report()`] draws every figure and table from the results.
//! The copy and transfer measurements themselves live in [`crate::harness::ceiling`], because
//! every chapter measures its own ceiling in the same run.

pub mod args;
pub mod exercises;
pub mod measure;
pub mod peaks;
pub mod report;

pub use args::{Args, Settings};
pub use measure::measure;
pub use report::report;

use crate::harness::chapter::Chapter;
use crate::harness::compare::{Claim, Headline};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

macro_rules! summary {
    // A row of the summary table by name; `measured_as` says at which size.
    ($ceiling:literal) => {
        $crate::pick!(
            "ceilings-summary",
            [("ceiling", $ceiling)],
            "median",
            ["measured_as"]
        )
    };
    // The same without its size, for a ratio of two rows measured differently.
    ($ceiling:literal, any size) => {
        $crate::pick!("ceilings-summary", [("ceiling", $ceiling)], "median", [])
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "ceilings",
    page: "ceilings.md",
    title: "Measuring a GPU",
    needs: Needs::Gpu.memory(8 << 30, 128 << 20).fits_smaller(),
    reps: FullQuick::new(30, 5),
    counted: &["ceilings-counters", "ceilings-counted"],
    writes: &[
        "ceilings-device",
        "ceilings-copy",
        "ceilings-transfer",
        "ceilings-launch",
        "ceilings-summary",
        "ceilings-peaks",
    ],
    sanitizer_args: &[
        "--quick",
        "--ceiling-mib",
        "8",
        "--max-transfer-mib",
        "2",
        "--reps",
        "2",
    ],
    note: "",
    headlines: &[
        Headline::higher(
            "device copy, copy kernel",
            summary!("device copy, copy kernel"),
            "GB/s",
        ),
        Headline::higher(
            "device copy, cuMemcpyDtoD",
            summary!("device copy, cuMemcpyDtoD"),
            "GB/s",
        ),
        Headline::higher("host to device, pinned", summary!("H2D pinned"), "GB/s"),
        Headline::lower(
            "empty kernel, back to back",
            summary!("empty kernel, back to back"),
            "µs",
        ),
    ],
    claims: &[
        Claim::ratio(
            "pinned host memory moves data to the GPU faster than pageable memory",
            summary!("H2D pinned"),
            summary!("H2D pageable"),
            1.0,
        ),
        Claim::ratio(
            "a CUDA graph node costs less than a launch queued back to back",
            summary!("empty kernel, back to back", any size),
            summary!("CUDA graph node", any size),
            1.0,
        ),
    ],
    exercise: Some(Exercise {
        number: 4,
        file: "exercises_ceilings.cu",
        function: function_of::<exercises::CopyVec4>,
        check: exercises::check_copy_vec4,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::chapter::check_declared_memory;

    #[test]
    fn the_declared_memory_is_the_largest_copy_source_and_destination() {
        // The copy sweep's largest copy; the transfers and the L2 buffer are smaller.
        let peak = |s: Settings| (2 * s.ceiling_mib).max(s.max_transfer_mib) << 20;
        let (full, quick) =
            (Settings::with_defaults(false), Settings::with_defaults(true));
        check_declared_memory(&CHAPTER, FullQuick::new(peak(full), peak(quick)));
    }
}
