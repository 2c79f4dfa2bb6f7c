//! Macros that name a number in a chapter's record (a [`Pick`]): which CSV, which row, which
//! column, and which columns say at what size it was measured.

use crate::harness::compare::Pick;

/// Picks of the chapters' records, used by the headlines and claims below.
macro_rules! pick {
    ($stem:literal, [$(($c:literal, $v:literal)),*], $column:literal, [$($k:literal),*]) => {
        $crate::harness::compare::Pick { stem: $stem, filter: &[$(($c, $v)),*], column: $column, key: &[$($k),*] }
    };
}

macro_rules! summary {
    // A row of the summary table by name; `measured_as` says at which size.
    ($ceiling:literal) => {
        pick!("ceilings-summary", [("ceiling", $ceiling)], "median", ["measured_as"])
    };
    // The same without its size, for a ratio of two rows measured differently.
    ($ceiling:literal, any size) => {
        pick!("ceilings-summary", [("ceiling", $ceiling)], "median", [])
    };
}

// The title says how many values the histograms count.
pub(super) const HISTOGRAM_REGISTERS: Pick = pick!(
    "memory_spaces-registers",
    [("kernel", "`histogram_registers`")],
    "G values per s",
    ["#title"]
);

macro_rules! transpose {
    ($kernel:literal) => {
        pick!(
            "coalescing-transpose",
            [("series", "GB/s, read + write"), ("x", $kernel)],
            "y",
            ["#matrix"]
        )
    };
}

macro_rules! traversal {
    // The last row of a series: its largest array.
    ($order:literal) => {
        pick!("tiling-traversal", [("series", $order)], "y", ["x"])
    };
}

macro_rules! matmul {
    ($step:literal, $column:literal) => {
        pick!("tiling-kernels", [("step", $step)], $column, ["#size"])
    };
}

macro_rules! table1 {
    // The last row of Table 1: its largest n.
    ($column:literal) => {
        pick!("cmm-table1-compare", [], $column, ["n"])
    };
}

macro_rules! streams {
    ($series:literal) => {
        pick!("cmm-streams", [("series", $series), ("x", "4")], "y", ["x"])
    };
}

macro_rules! atax_kernel {
    // The last float dataset: the largest matrix of the run.
    ($variant:literal) => {
        pick!(
            "atax-kernels",
            [("type", "float"), ("variant", $variant)],
            "cold_median_us",
            ["dataset"]
        )
    };
}

macro_rules! peer {
    // A row of the peer-copy summary by path; `size` says at which size.
    ($path:literal) => {
        pick!("multi_gpu-peer-summary", [("path", $path)], "GB/s", ["size"])
    };
}
