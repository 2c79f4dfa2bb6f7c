//! Re-measures every figure of the book on your GPU, or redraws them from their CSVs.
//!
//! ```console
//! cargo build --release --examples
//! cargo run --release --example reproduce -- --out my-gpu/          # every chapter, measured
//! cargo run --release --example reproduce -- --out my-gpu/ --compare  # the comparison page
//! cargo run --release --example reproduce -- --out figures/ --redraw-only   # no GPU needed
//! cargo run --release --example reproduce -- --out figures/ --sanitize      # compute-sanitizer
//! ```
//!
//! `--sanitize` runs every chapter's example in its quick mode under each compute-sanitizer tool
//! (memcheck with leak checking, racecheck, initcheck, synccheck) and writes the table
//! `sanitizer.md` (+ `data/sanitizer.csv`): example × tool → kernels used, errors.
//!
//! The measuring mode runs each chapter's example (built beside this one) with `--out DIR`,
//! one after another, and stops at the first that fails; each example verifies its own results.
//! Both modes end by checking that every figure and table in the folder is exactly what its CSV
//! draws and that every CSV carries its provenance.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use cmbook::chapters::reproduce::{self, Options};

#[derive(Parser, Debug)]
#[command(
    about = "Re-measure every figure of the book, or redraw them from their CSVs"
)]
struct Args {
    /// Folder that receives the figures, tables and data (created if needed).
    #[arg(long, required_unless_present = "appendix_table")]
    out: Option<PathBuf>,
    /// Print the appendix's table of commands, rendered from the chapter registry, and exit.
    #[arg(long, exclusive = true)]
    appendix_table: bool,
    /// Compare the results in --out (a reader's run) with the book's: writes compare.md and
    /// compare.html into --out. Measures nothing, needs no GPU.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize"])]
    compare: bool,
    /// The book's figures folder the comparison reads [default: the checkout's figures/].
    #[arg(long, value_name = "DIR", requires = "compare")]
    book: Option<PathBuf>,
    /// Compose the roofline figures from the records in --out (the ceilings and every chapter
    /// that computes); measures nothing, needs no GPU.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize", "compare"])]
    roofline: bool,
    /// Redraw every SVG and table in --out from its CSV; measures nothing, needs no GPU.
    #[arg(long)]
    redraw_only: bool,
    /// Small sizes and few repetitions (passed on to every example).
    #[arg(long)]
    quick: bool,
    /// Only these chapters' examples (comma-separated), e.g. `--only ceilings,cmm_diagonal`.
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// Run every example under each compute-sanitizer tool instead of measuring, and write the
    /// table `sanitizer.md` into --out.
    #[arg(long, conflicts_with = "redraw_only")]
    sanitize: bool,
    /// Count instead of measuring: every GPU chapter's example with `--counters` (its key
    /// kernels under Nsight Compute), writing each chapter's counters and predicted-vs-counted
    /// tables into --out.
    #[arg(long, conflicts_with_all = ["redraw_only", "sanitize", "compare", "roofline"])]
    counters: bool,
    /// The compute-sanitizer executable.
    #[arg(long, default_value = "compute-sanitizer")]
    sanitizer: PathBuf,
    /// With --sanitize: how many sanitizer runs go at once on the one GPU.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64), requires = "sanitize")]
    jobs: u16,
}

fn main() -> ExitCode {
    let a = Args::parse();
    reproduce::finish(reproduce::reproduce(Options {
        out: a.out,
        appendix_table: a.appendix_table,
        compare: a.compare,
        roofline: a.roofline,
        book: a.book,
        redraw_only: a.redraw_only,
        quick: a.quick,
        only: a.only,
        sanitize: a.sanitize,
        counters: a.counters,
        sanitizer: a.sanitizer,
        jobs: a.jobs.into(),
    }))
}
