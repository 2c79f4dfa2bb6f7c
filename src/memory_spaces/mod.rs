//! Chapter "Memory spaces — where data lives, and what each place costs".
//!
//! * [`map`]: the table of memory spaces (scope, lifetime, place, cache, who reads and writes),
//!   with this GPU's capacities read from the device;
//! * [`reference`](mod@reference): CPU references and inputs for every kernel of `kernels/memory_spaces.cu`,
//!   and the random cyclic permutations the pointer chases follow;
//! * [`measure()`]: the chapter's kernel table; verifies every kernel against its reference
//!   (outputs poisoned first), then times it, at the sizes of one run;
//! * [`report()`]: the chapter's figures and tables, drawn from a run's results;
//! * [`exercises`]: the solutions of the chapter's exercises.

pub mod args;
pub mod counted;
pub mod exercises;
pub mod map;
pub mod measure;
pub mod reference;
pub mod report;

pub use args::{Args, Settings};
pub use measure::{measure, Results, CHASE_REPS};
pub use report::report;

/// The kernel file of this chapter.
pub const KERNEL_FILE: &str = "memory_spaces.cu";

/// `BLOCK` of the kernel file: threads per block of every kernel but the one-thread chases.
pub const BLOCK: u32 = 256;
/// `SIGNAL_MAX`: floats in `signal_const` (32 KiB of the 64 KiB constant bank).
pub const SIGNAL_MAX: usize = 8192;
/// `CHASE_CONST_MAX`: indices in `chase_const_next` (16 KiB).
pub const CHASE_CONST_MAX: usize = 4096;
/// `HIST_BINS`: bins of the per-thread histograms.
pub const HIST_BINS: usize = 16;
/// `TILE_ROWS`: rows of 32 floats in the bandwidth kernels' tile.
pub const TILE_ROWS: usize = 32;
/// The global-memory chase puts one chain element in each 128-byte line (32 `u32`), so every
/// step touches a line of its own.
pub const LINE_ELEMENTS: usize = 32;

use crate::harness::chapter::Chapter;
use crate::harness::compare::{Claim, Headline, Pick};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

// The title says how many values the histograms count.
const HISTOGRAM_REGISTERS: Pick = crate::pick!(
    "memory_spaces-registers",
    [("kernel", "`histogram_registers`")],
    "G values per s",
    ["#title"]
);

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "memory_spaces",
    page: "memory_spaces.md",
    title: "Memory spaces",
    needs: Needs::Gpu.memory(1 << 30, 32 << 20),
    reps: FullQuick::new(20, 2),
    counted: &["memory_spaces-counters", "memory_spaces-counted"],
    writes: &[
        "memory_spaces-map",
        "memory_spaces-signal",
        "memory_spaces-divergent",
        "memory_spaces-constant-spacing",
        "memory_spaces-sass",
        "memory_spaces-stencil",
        "memory_spaces-registers",
        "memory_spaces-latency",
        "memory_spaces-bandwidth",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[
        Headline::lower(
            "dependent global load, largest footprint",
            Pick {
                stem: "memory_spaces-latency",
                filter: &[("series", "global (one element per 128-byte line)")],
                column: "y",
                key: &["x"],
            },
            "ns",
        ),
        Headline::higher("histogram in registers", HISTOGRAM_REGISTERS, "G values/s"),
    ],
    claims: &[Claim::ratio(
        "a per-thread histogram in registers is faster than one in local memory",
        HISTOGRAM_REGISTERS,
        Pick {
            stem: "memory_spaces-registers",
            filter: &[("kernel", "`histogram_local`")],
            column: "G values per s",
            key: &["#title"],
        },
        1.0,
    )],
    exercise: Some(Exercise {
        number: 4,
        file: "exercises_memory_spaces.cu",
        function: function_of::<exercises::StencilTile>,
        check: exercises::check_stencil_tile,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::chapter::check_declared_memory;

    #[test]
    fn the_declared_memory_covers_the_copy_the_signal_and_the_stencil() {
        // The L2-cold copy ceiling (512 MiB, --quick 16 MiB; source and destination) is the
        // largest; the signal's matrices and the stencil's two arrays follow the settings.
        let copy = FullQuick::new((2 * 512u64) << 20, (2 * 16u64) << 20);
        let (rows, m) = (FullQuick::new(3001u64, 301), FullQuick::new(2500u64, 257));
        for quick in [false, true] {
            let s = Settings::with_defaults(quick);
            let (rows, m) = (rows.pick(quick), m.pick(quick));
            let signal =
                rows * m * s.signal_matrices * 4 + rows * s.signal_matrices * 4;
            let stencil = 2 * s.stencil_n * 4;
            assert!(signal.max(stencil) <= copy.pick(quick), "quick: {quick}");
        }
        check_declared_memory(&CHAPTER, copy);
    }
}
