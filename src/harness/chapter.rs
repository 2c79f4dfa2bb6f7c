//! What a chapter's entry says about its example: what it needs, what it writes, how it runs
//! under the sanitizers, its headline numbers and claims, and its kernel exercise. Each
//! chapter's folder declares its own (`pub const CHAPTER: Chapter` in its `mod.rs`); the list
//! of them, in the book's order, is the top floor's `chapters::ALL`. This module holds only the type,
//! so that the harness can run any chapter without knowing which chapters exist.

use super::compare::{Claim, Headline};
use super::exercise::Exercise;
use super::run::{FullQuick, Needs};

/// One example program and the chapter it measures.
#[derive(Debug, Clone, Copy)]
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
    /// (`<stem>-counted`). See [`super::counters`].
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
    /// The chapter's kernel exercise, if this example's page has one.
    pub exercise: Option<Exercise>,
}

/// Two entries are the same chapter when they name the same example (names are unique).
impl PartialEq for Chapter {
    fn eq(&self, other: &Self) -> bool {
        self.example == other.example
    }
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
