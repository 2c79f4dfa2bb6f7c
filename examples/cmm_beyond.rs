//! Chapter "CMM beyond the paper": the same dynamic program from n = 128 to n = 16384, and
//! matrix chains multiplied in the order it finds.
//!
//! - no arguments: every variant (the paper's one-block kernel, warp per cell launched per
//!   diagonal and as a CUDA graph, the tiled kernels, the CPU on one thread and on all) at
//!   every size, each GPU table checked cell by cell against the CPU's; then chains of real
//!   matrices multiplied with cuBLAS in both orders;
//! - `--matrices 1000,3001`: only these n (the variants that are practical at that size);
//! - `--part dp` / `--part chains`: only one half.

use std::process::ExitCode;

use cmbook::cmm::beyond::{self, Args};
use cmbook::harness::run;

fn main() -> ExitCode {
    run::main::<Args>(&beyond::CHAPTER, |run, args| {
        let results = beyond::measure(run, &args.settings(run))?;
        beyond::report(run, &results)
    })
}
