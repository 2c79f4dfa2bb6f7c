//! Chapter "Chained matrix multiplication and the diagonal data layout": the paper's systems,
//! reproduced and measured (Seifi & Al-Mamun 2024, sections 4-8).
//!
//! - no arguments: the chapter's measurements (Table 1, the layout speedup, the breakeven
//!   sweep, section 7's variants and streams, the experiments that explain the layout's gain);
//! - `--dims 20,2,30,12,8`: solves one chain on the GPU, checked against the CPU;
//! - `--matrices 500 --seed 7`: the same for a random chain of 500 matrices;
//! - `--cpu-only`: answers `--dims` / `--matrices` without a GPU;
//! - `--part stride` / `--part barrier` / `--part paper`: only one part of the measurements.

use std::process::ExitCode;

use cmbook::cmm::diagonal::{self, solve, Args, Settings};
use cmbook::harness::run;

fn main() -> ExitCode {
    run::main::<Args>(&diagonal::CHAPTER, |run, args| match args.chain() {
        Some(dims) => {
            let solution = solve::solve(run, &dims, args.cpu_only)?;
            solve::print(&solution, args.show_order);
            Ok(())
        }
        None => {
            let results = diagonal::measure(run, &Settings::new(run.quick, args.part))?;
            diagonal::report(run, &results)
        }
    })
}
