//! The chapter "Chained matrix multiplication and the diagonal layout": the systems of Seifi &
//! Al-Mamun (2024), sections 4 to 8, rebuilt and measured.
//!
//! [`measure()`] verifies and times; [`report()`] draws every figure and table from the results.
//! [`solve`] answers one chain (`--dims`, `--matrices`), on the CPU and, unless `--cpu-only`,
//! on the GPU.

pub mod args;
pub mod measure;
pub mod report;
pub mod solve;

pub use args::Args;
pub use measure::{
    measure, Part, Results, Settings, DIM_MAX, SEPARATION_BLOCKS, STREAMS_N,
    TABLE1_CPU_REPS, TRAFFIC_N, VARIANTS_N,
};
pub use report::report;

use crate::harness::chapter::Chapter;
use crate::harness::compare::{Claim, Headline};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

macro_rules! table1 {
    // The last row of Table 1: its largest n.
    ($column:literal) => {
        $crate::pick!("cmm-table1-compare", [], $column, ["n"])
    };
}

macro_rules! streams {
    ($series:literal) => {
        $crate::pick!("cmm-streams", [("series", $series), ("x", "4")], "y", ["x"])
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "cmm_diagonal",
    page: "cmm_diagonal.md",
    title: "Chained matrix multiplication and the diagonal layout",
    needs: Needs::Gpu.memory(193 << 20, 1 << 20),
    reps: FullQuick::new(10, 3),
    counted: &["cmm_diagonal-counters", "cmm_diagonal-counted"],
    writes: &[
        "cmm-worked-example",
        "cmm-traffic",
        "cmm-table1-compare",
        "cmm-table1-times",
        "cmm-layout-speedup",
        "cmm-breakeven",
        "cmm-breakeven-n",
        "cmm-time-vs-n",
        "cmm-stride",
        "cmm-experiments",
        "cmm-variants",
        "cmm-streams",
        "cmm-footprint",
        "cmm-stride-alignment",
        "cmm-grid-barrier",
        "cmm-grid-barrier-costs",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[
        Headline::lower(
            "one block, row-major (the paper's kernel)",
            table1!("our_rowmajor_ms"),
            "ms",
        ),
        Headline::lower("one block, diagonal-major", table1!("our_diagonal_ms"), "ms"),
    ],
    claims: &[
        Claim::at_least(
            "the diagonal layout is faster than row-major (largest n of Table 1)",
            table1!("our_layout_speedup"),
            1.0,
        ),
        Claim::ratio(
            "4 chains on 4 streams finish sooner than one after another",
            streams!("one stream, chains one after another"),
            streams!("one stream per chain"),
            1.0,
        ),
    ],
    exercise: Some(Exercise {
        number: 4,
        file: "exercises_cmm_diagonal.cu",
        function: function_of::<super::exercises::CellPerThread>,
        check: super::exercises::check_cell_per_thread,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_memory_covers_the_largest_tables() {
        // A row-major table of n: (n + 1)^2 cells of a 64-bit cost and a 32-bit split; the
        // streams section holds one per chain at once.
        let table = |n: usize| ((n + 1) * (n + 1) * 12) as u64;
        for quick in [false, true] {
            let s = Settings::new(quick, Part::All);
            let lists = [&s.table1, &s.breakeven, &s.ratio_sweep, &s.stride_sweep];
            let singles = lists.iter().flat_map(|l| l.iter()).chain(&s.separation_n);
            let largest = singles.chain([&s.variants_n, &s.traffic_n]).max().unwrap();
            let streams =
                *s.streams_k.iter().max().unwrap() as u64 * table(s.streams_n);
            let peak = table(*largest).max(streams);
            let declared = CHAPTER.needs.memory.pick(quick);
            assert!((peak..=peak + (1 << 20)).contains(&declared), "quick: {quick}");
        }
    }
}
