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
//! one after another; each example verifies its own results. A chapter that cannot run here
//! (exit code 2) is skipped and one that fails is reported, and the rest still run; the run ends
//! with a table of each chapter's result and reason, and exits with 1 if a chapter failed.
//! Both modes end by checking that every figure and table in the folder is exactly what its CSV
//! draws and that every CSV carries its provenance.
//!
//! The flags are [`cmbook::chapters::reproduce_args::Args`]; what clap cannot check about them
//! (`--book` without `--compare`, a `--quick` run into the book's own figures) is refused here,
//! before anything runs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::chapters::reproduce;
use cmbook::chapters::reproduce_args::Args;

fn main() -> ExitCode {
    cmbook::harness::run::end_quietly_on_a_closed_pipe();
    let args = Args::parse();
    reproduce::finish(
        args.validate()
            .map_err(anyhow::Error::from)
            .and_then(|()| reproduce::reproduce(args.options())),
    )
}
