//! Chapter "Coalescing, alignment and the matrix transpose": what a warp's addresses cost.
//!
//! The arithmetic (no GPU needed):
//! * [`sectors`]: the 32-byte sectors and 128-byte lines one warp request touches, and what a
//!   whole kernel moves when every sector crosses once;
//! * [`banks`]: which shared-memory bank each lane of a warp hits, and the conflict degree;
//! * [`patterns`]: the chapter's access patterns (strides, offsets, particles in AoS and SoA)
//!   and the bandwidth the sector arithmetic predicts for each;
//! * [`transpose`]: the transpose kernels' shapes, their per-warp sectors and banks, and the
//!   CPU transpose;
//! * [`reference`](mod@reference): CPU references and inputs for every kernel;
//! * [`readonly`]: the kernels of the read-only data path section;
//! * [`ptx`]: which load instructions the compiler emitted (`ld.global` or `ld.global.nc`);
//! * [`exercises`]: the solutions of the chapter's exercises.
//!
//! The measurements: [`measure()`] holds the chapter's kernel table, verifies every kernel of
//! `kernels/coalescing.cu` against its CPU reference, then times it, at the sizes of one run;
//! [`report()`] draws the chapter's figures and tables from the results.

pub mod args;
pub mod banks;
pub mod counted;
pub mod exercises;
pub mod measure;
pub mod patterns;
pub mod ptx;
pub mod readonly;
pub mod reference;
pub mod report;
pub mod sectors;
pub mod transpose;

pub use args::{Args, Settings};
pub use measure::{measure, Results};
pub use report::report;

/// The kernel file of this chapter.
pub const KERNEL_FILE: &str = "coalescing.cu";

/// The stem of the table of what a run could not measure ([`crate::harness::skipped`]).
pub const SKIPPED_STEM: &str = "coalescing-skipped";

/// The parts of the chapter that need more than compute capability 7.0: the TMA transpose
/// beside the chapter's own (`kernels/hopper_tma.cu`). Every other part runs on any GPU.
pub const SECTIONS: &[crate::harness::sections::Section] =
    &[crate::harness::sections::Section {
        name: "TMA transpose",
        needs: &[crate::harness::sections::Need::Capability(
            (9, 0),
            "the tensor memory accelerator",
        )],
    }];

use crate::harness::chapter::{Chapter, Feature};
use crate::harness::compare::{Claim, Headline};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

macro_rules! transpose {
    ($kernel:literal) => {
        $crate::pick!(
            "coalescing-transpose",
            [("series", "GB/s, read + write"), ("x", $kernel)],
            "y",
            ["#matrix"]
        )
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "coalescing",
    page: "coalescing.md",
    title: "Coalescing, alignment and the transpose",
    needs: Needs::Gpu.features(&[Feature::TMA]).memory(2 << 30, 32 << 20),
    reps: FullQuick::new(20, 3),
    counted: &["coalescing-counters", "coalescing-counted"],
    writes: &[
        "coalescing-patterns",
        "coalescing-stride",
        "coalescing-offset",
        "coalescing-layout",
        "coalescing-transpose",
        "coalescing-transpose-kernels",
        "coalescing-transpose-sides",
        "coalescing-transpose-pitch",
        "coalescing-readonly",
        "coalescing-readonly-ptx",
        "coalescing-readonly-sass",
        "coalescing-granularity",
        SKIPPED_STEM,
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[
        Headline::higher(
            "transpose, padded 32x8 tile",
            transpose!("padded 32x8"),
            "GB/s",
        ),
        Headline::higher("best copy, same bytes", transpose!("best copy"), "GB/s"),
    ],
    claims: &[
        Claim::ratio(
            "the padded 32x8 transpose reaches at least 90% of the best copy",
            transpose!("padded 32x8"),
            transpose!("best copy"),
            0.9,
        ),
        Claim::ratio(
            "padding the shared tile makes the 32x8 transpose faster",
            transpose!("padded 32x8"),
            transpose!("tile 32x8"),
            1.0,
        ),
    ],
    exercise: Some(Exercise {
        number: 4,
        file: "exercises_coalescing.cu",
        function: function_of::<exercises::TransposeTile>,
        check: exercises::check_transpose_tile,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::chapter::check_declared_memory;

    /// Device bytes of each section at `s`: the copy ceiling, the two sweeps (source and
    /// room for a unit-stride read), the particles in both layouts, the packed transpose
    /// (input and output) and the read-only gathers (input, index and output, and the table).
    fn peak(s: Settings) -> u64 {
        let mib = 1u64 << 20;
        let particles = 2 * s.particles * reference::PARTICLE_BYTES;
        let transpose = 2 * s.transpose_side * s.transpose_side * 4;
        let readonly = 3 * s.readonly_n * 4 + u64::from(s.table_len) * 4;
        [2 * s.ceiling_mib * mib, 2 * s.sweep_mib * mib, 2 * s.offset_mib * mib]
            .into_iter()
            .chain([particles, transpose, readonly])
            .max()
            .unwrap()
    }

    #[test]
    fn the_declared_memory_is_the_largest_section() {
        let (full, quick) =
            (Settings::with_defaults(false), Settings::with_defaults(true));
        check_declared_memory(&CHAPTER, FullQuick::new(peak(full), peak(quick)));
    }
}

#[cfg(test)]
mod plan_tests {
    /// Below 9.0 the chapter skips its TMA transpose, naming the need; from 9.0 up it runs all.
    #[test]
    fn the_coalescing_plan_of_every_supported_gpu() {
        crate::harness::sections::check_one_hopper_section(
            super::SECTIONS,
            "TMA transpose",
            "the tensor memory accelerator",
        );
    }
}
