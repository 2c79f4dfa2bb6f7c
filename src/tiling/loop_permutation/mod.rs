//! The CPU half of the chapter (`loop_permutation`): traversal orders and the strip sizes of
//! `D[i] += B[j][i]`, each pair of orders checked for identical results, then timed on the
//! host clock; and the matrix-multiply model's predictions, which need no measurement.
//!
//! [`measure()`] checks and times; [`report()`] draws every figure and table from the results.

pub mod args;
pub mod measure;
pub mod report;

pub use args::Args;
pub use measure::{measure, Settings, MIN_ELEMENTS};
pub use report::report;

use crate::harness::chapter::Chapter;
use crate::harness::compare::{Claim, Headline};
use crate::harness::run::{FullQuick, Needs};

macro_rules! traversal {
    // The last row of a series: its largest array.
    ($order:literal) => {
        $crate::pick!("tiling-traversal", [("series", $order)], "y", ["x"])
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "loop_permutation",
    page: "tiling.md",
    title: "Reuse, loop permutation, tiling",
    needs: Needs::Cpu,
    reps: FullQuick::new(21, 3),
    counted: &[],
    writes: &[
        "tiling-traversal",
        "tiling-strip",
        "tiling-strip-ranges",
        "tiling-predictions",
    ],
    sanitizer_args: &[],
    note: "CPU only",
    headlines: &[Headline::lower(
        "row order, largest array",
        traversal!("row order (i outer)"),
        "ns/element",
    )],
    claims: &[Claim::ratio(
        "column order is slower than row order on the largest array",
        traversal!("column order (j outer)"),
        traversal!("row order (i outer)"),
        1.0,
    )],
    exercise: None,
};
