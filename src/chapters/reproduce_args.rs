//! The command line of `cargo run --release --example reproduce`, and the checks made on it
//! before anything runs: in the library, so that the tests parse and check it as the example
//! does.

use std::path::PathBuf;

use super::reproduce::Options;
use crate::harness::run::quick_outside_the_book;
use crate::harness::UsageError;

/// Re-measure every figure of the book, or redraw them from their CSVs.
///
/// The modes (`--compare`, `--roofline`, `--diagrams`, `--redraw-only`, `--sanitize`,
/// `--counters`, and
/// measuring when none is given) exclude one another; a flag that only one mode reads is
/// refused with the others. Each such flag names every mode it cannot go with: clap leaves a
/// `requires` unchecked when the flag it requires conflicts with one given, so `requires`
/// alone would let `--redraw-only --book DIR` through with `--book` ignored.
#[derive(clap::Parser, Debug)]
#[command(
    about = "Re-measure every figure of the book, or redraw them from their CSVs",
    after_help = super::reproduce::needs_help()
)]
pub struct Args {
    /// Folder that receives the figures, tables and data (created if needed).
    #[arg(long, required_unless_present = "appendix_table")]
    pub out: Option<PathBuf>,
    /// Print the appendix's table of commands, rendered from the chapter registry, and exit.
    #[arg(long, exclusive = true)]
    pub appendix_table: bool,
    /// Compare the results in --out (a reader's run) with the book's: writes compare.md and
    /// compare.html into --out. Measures nothing, needs no GPU.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize"])]
    pub compare: bool,
    /// The book's figures folder the comparison reads [default: the checkout's figures/].
    #[arg(long, value_name = "DIR", requires = "compare",
          conflicts_with_all = ["redraw_only", "sanitize", "roofline", "counters", "diagrams"])]
    pub book: Option<PathBuf>,
    /// Compose the roofline figures from the records in --out (the ceilings and every chapter
    /// that computes); measures nothing, needs no GPU.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize", "compare"])]
    pub roofline: bool,
    /// Compute the book's diagrams from the chapters' models into --out (a measuring run
    /// writes them too); measures nothing, needs no GPU.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize", "compare", "roofline", "counters"])]
    pub diagrams: bool,
    /// Redraw every SVG and table in --out from its CSV; measures nothing, needs no GPU.
    #[arg(long)]
    pub redraw_only: bool,
    /// Small sizes and few repetitions (passed on to every example).
    #[arg(long, conflicts_with_all = ["compare", "roofline", "redraw_only", "diagrams"])]
    pub quick: bool,
    /// Only these chapters' examples (comma-separated), e.g. `--only ceilings,cmm_diagonal`.
    #[arg(long, value_delimiter = ',', action = clap::ArgAction::Set,
          conflicts_with_all = ["compare", "roofline", "redraw_only", "diagrams"])]
    pub only: Option<Vec<String>>,
    /// Run every example under each compute-sanitizer tool instead of measuring, and write the
    /// table `sanitizer.md` into --out.
    #[arg(long, conflicts_with = "redraw_only")]
    pub sanitize: bool,
    /// Count instead of measuring: every GPU chapter's example with `--counters` (its key
    /// kernels under Nsight Compute), writing each chapter's counters and predicted-vs-counted
    /// tables into --out.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize", "compare", "roofline"])]
    pub counters: bool,
    /// The compute-sanitizer executable (with --sanitize).
    #[arg(long, default_value = "compute-sanitizer", requires = "sanitize",
          conflicts_with_all = ["redraw_only", "compare", "roofline", "counters", "diagrams"])]
    pub sanitizer: PathBuf,
    /// With --sanitize: how many sanitizer runs go at once on the one GPU.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64),
          requires = "sanitize",
          conflicts_with_all = ["redraw_only", "compare", "roofline", "counters", "diagrams"])]
    pub jobs: u16,
}

impl Args {
    /// The checks clap cannot make, made before anything runs (exit code 2): `--book` goes
    /// only with `--compare` (whatever else is given), and a `--quick` run that measures does
    /// not write into the book's own figures (its quick-size data would replace the book's).
    pub fn validate(&self) -> Result<(), UsageError> {
        if self.book.is_some() && !self.compare {
            return Err(UsageError("--book is read only with --compare".into()));
        }
        let measures = !(self.compare
            || self.roofline
            || self.diagrams
            || self.redraw_only
            || self.sanitize);
        if let (true, true, Some(out)) = (self.quick, measures, &self.out) {
            quick_outside_the_book(
                out,
                crate::harness::compare::book_figures().as_deref(),
            )?;
        }
        for setting in
            [crate::harness::gpu::PRETEND_ENV, crate::harness::toolchain::NVRTC_ENV]
        {
            if let (Some(_), true, Some(out)) =
                (std::env::var_os(setting), measures, &self.out)
            {
                crate::harness::run::setting_outside_the_book(
                    setting,
                    out,
                    crate::harness::compare::book_figures().as_deref(),
                )?;
            }
        }
        Ok(())
    }

    /// What `reproduce` is asked to do.
    pub fn options(self) -> Options {
        Options {
            out: self.out,
            appendix_table: self.appendix_table,
            compare: self.compare,
            roofline: self.roofline,
            diagrams: self.diagrams,
            book: self.book,
            redraw_only: self.redraw_only,
            quick: self.quick,
            only: self.only,
            sanitize: self.sanitize,
            counters: self.counters,
            sanitizer: self.sanitizer,
            jobs: self.jobs.into(),
        }
    }
}
