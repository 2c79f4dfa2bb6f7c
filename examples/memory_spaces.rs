//! Chapter "Memory spaces — where data lives, and what each place costs".
//!
//! `cargo run --release --example memory_spaces` reads this GPU's capacities, then measures,
//! verifies and records
//! - the lecture's signal example with the vector in constant memory, in global memory and on
//!   the read-only path, next to the copy ceiling of the same run;
//! - a walk over a 32 KiB table with 1 to 32 distinct addresses per warp-wide load, from each
//!   of those three homes, and the constant-memory walk with its addresses spaced three ways;
//! - the main loops of the signal and walk kernels counted in machine code (when `ptxas` and
//!   `nvdisasm` are found);
//! - the three-point stencil from global memory and from a shared tile (static and dynamic),
//!   on an array far larger than L2 (cold) and on one that fits in it (warm);
//! - a per-thread histogram in local memory and in registers, with the compiler's numbers;
//! - pointer chases through global, shared and constant memory at growing footprints, and the
//!   bytes per second each space delivers.

use std::process::ExitCode;

use clap::Parser;
use cmbook::harness::run::{self, CommonArgs, Example};
use cmbook::memory_spaces::{
    self, Settings, CHASE_REPS, CHASE_STEPS, SIGNAL_MATRICES, STENCIL_N,
};

#[derive(Parser, Debug)]
#[command(about = "Memory spaces: where data lives, and what each place costs")]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long, value_name = "COUNT", help = SIGNAL_MATRICES.help(
              "Matrices the signal vector is applied to, 3001 x 2500 floats each \
               (301 x 257 with --quick)"),
          value_parser = clap::value_parser!(u64).range(1..=65_535))]
    signal_matrices: Option<u64>,
    #[arg(long, value_name = "FLOATS",
          help = STENCIL_N.help("Floats of the L2-cold stencil"),
          value_parser = clap::value_parser!(u64).range(1..=4_000_000_000))]
    stencil_n: Option<u64>,
    #[arg(long, value_name = "LOADS", help = CHASE_STEPS.help(&format!(
              "Dependent loads per timed repetition of each pointer chase (each chase is \
               timed {} times, {} with --quick, unless --reps)",
              CHASE_REPS.full, CHASE_REPS.quick)),
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    chase_steps: Option<u64>,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::memory_spaces::CHAPTER, |run, args| {
        let settings = Settings {
            signal_matrices: run.pick(args.signal_matrices, SIGNAL_MATRICES),
            stencil_n: run.pick(args.stencil_n, STENCIL_N),
            chase_steps: run.pick(args.chase_steps, CHASE_STEPS),
            chase_reps: run.pick(args.common.reps, CHASE_REPS),
        };
        let results = memory_spaces::measure(run, &settings)?;
        memory_spaces::report(run, &results)
    })
}
