//! The one list of the book's chapters and the example behind each: what it needs, what it
//! writes, how it runs under the sanitizers. `reproduce`, the command-line tests, the figure
//! audit and the appendix's table of commands all read it; nothing else lists the chapters.

use crate::harness::compare::{Claim, Headline};
use crate::harness::run::{FullQuick, Needs};

/// One example program and the chapter it measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chapter {
    /// The example's name: `cargo run --release --example <example>`.
    pub example: &'static str,
    /// The chapter's page under `src/book/` and its title in `SUMMARY.md`.
    pub page: &'static str,
    pub title: &'static str,
    /// What a run needs on this machine.
    pub needs: Needs,
    /// Timed repetitions per measurement, unless `--reps` says otherwise.
    pub reps: FullQuick<u32>,
    /// Every figure (`.svg`) and table (`.md`) stem the example writes, each with its CSV.
    pub writes: &'static [&'static str],
    /// What `--counters` writes (empty where nothing is counted yet): the hardware counters of
    /// its key kernels (`<stem>-counters`) and the table of predicted vs counted
    /// (`<stem>-counted`). See [`crate::harness::counters`].
    pub counted: &'static [&'static str],
    /// The arguments it runs with under compute-sanitizer: small, because the tools slow
    /// kernels down by one or two orders of magnitude. Empty for CPU-only examples.
    pub sanitizer_args: &'static [&'static str],
    /// A note for the appendix's table (how long a full run takes, what it needs).
    pub note: &'static str,
    /// The numbers a reader's run is compared with the book's on.
    pub headlines: &'static [Headline],
    /// What the chapter claims, checked on the reader's data and the book's.
    pub claims: &'static [Claim],
}

impl Chapter {
    /// The command a reader types to re-measure the chapter.
    pub fn command(&self) -> String {
        format!("cargo run --release --example {}", self.example)
    }

    /// Whether this example writes the figure or table `stem`.
    pub fn writes(&self, stem: &str) -> bool {
        self.writes.contains(&stem) || self.counted.contains(&stem)
    }
}

// The picks (which CSV, row and column) the registry's headlines and claims read: macros, so
// that their string slices are constants.
#[macro_use]
mod picks;
mod entries;

pub use entries::*;

/// Every chapter's example, in the book's order.
pub const ALL: &[Chapter] = &[
    CEILINGS,
    MEMORY_SPACES,
    COALESCING,
    LOOP_PERMUTATION,
    TILED_MATMUL,
    CMM_DIAGONAL,
    CMM_BEYOND,
    ATAX,
    HOPPER_MEMORY,
    MULTI_GPU,
];

/// What `reproduce` writes itself (not a chapter's measurement): the sanitizer table and the
/// roofline figures it composes from the chapters' records.
pub const REPRODUCE_WRITES: &[&str] = &[
    "sanitizer",
    "ceilings-roofline",
    "ceilings-roofline-kernels",
    "ceilings-little",
    "memory_spaces-roofline",
    "tiling-roofline",
    "atax-roofline",
];

/// The chapter whose example is `name`.
pub fn by_example(name: &str) -> Option<&'static Chapter> {
    ALL.iter().find(|c| c.example == name)
}

/// The example that writes the figure or table `stem`.
pub fn writer_of(stem: &str) -> Option<&'static Chapter> {
    ALL.iter().find(|c| c.writes(stem))
}

/// The appendix's table of commands, rendered from [`ALL`]: one row per chapter page, every
/// example that measures it, and every figure and table it writes.
pub fn appendix_table() -> String {
    let mut md = String::from("| chapter | command | writes |\n|---|---|---|\n");
    let mut pages: Vec<&str> = ALL.iter().map(|c| c.page).collect();
    pages.dedup();
    for page in pages {
        let examples: Vec<&Chapter> = ALL.iter().filter(|c| c.page == page).collect();
        let command = examples
            .iter()
            .map(|c| match c.note {
                "" => format!("`{}`", c.command()),
                note => format!("`{}` ({note})", c.command()),
            })
            .collect::<Vec<_>>()
            .join(" and ");
        let writes = examples
            .iter()
            .map(|c| {
                c.writes.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            })
            .collect::<Vec<_>>()
            .join("; ");
        md.push_str(&format!(
            "| [{}]({page}) | {command} | {writes} |\n",
            examples[0].title
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stem_has_one_writer_and_examples_are_unique() {
        let mut stems: Vec<&str> =
            ALL.iter().flat_map(|c| c.writes.iter().copied()).collect();
        let count = stems.len();
        stems.sort();
        stems.dedup();
        assert_eq!(stems.len(), count, "a figure stem is written by two examples");
        let mut examples: Vec<&str> = ALL.iter().map(|c| c.example).collect();
        examples.dedup();
        assert_eq!(examples.len(), ALL.len());
        assert_eq!(
            writer_of("cmm-beyond-chains").map(|c| c.example),
            Some("cmm_beyond")
        );
        assert_eq!(by_example("atax"), Some(&ATAX));
    }

    #[test]
    fn cpu_only_examples_have_no_sanitizer_run() {
        for c in ALL {
            assert_eq!(
                c.needs == Needs::Cpu,
                c.sanitizer_args.is_empty(),
                "{}",
                c.example
            );
        }
    }
}
