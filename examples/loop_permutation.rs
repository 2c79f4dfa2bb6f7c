//! Chapter "Reuse, loop permutation, tiling", the CPU half (no GPU needed).
//!
//! `cargo run --release --example loop_permutation` measures on the CPU
//! - a row-major array updated in row order and in column order, from 4 KiB to 256 MiB;
//! - `D[i] += B[j][i]` in its original, strip-mined and tiled forms, over strip sizes;
//!
//! checks that each pair of orders gives identical results first, and writes the figures
//! `tiling-traversal` and `tiling-strip`, the table `tiling-predictions` (the
//! matrix-multiply model) and their CSVs.

use std::process::ExitCode;

use cmbook::harness::run;
use cmbook::tiling::loop_permutation::{self, Args, Settings};

fn main() -> ExitCode {
    run::main::<Args>(&loop_permutation::CHAPTER, |run, _args| {
        let results = loop_permutation::measure(run, &Settings::new(run.quick))?;
        loop_permutation::report(run, &results)
    })
}
