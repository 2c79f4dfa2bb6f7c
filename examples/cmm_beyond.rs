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

use clap::Parser;
use cmbook::cmm::beyond::{self, Part, Settings, CHAIN_REPS, MATRICES, MAX_MATRICES};
use cmbook::harness::run::{self, CommonArgs, Example, UsageError};

#[derive(Parser, Debug)]
#[command(
    about = "Chained matrix multiplication past one block: the DP to n = 16384, and \
                   chains multiplied in its order"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long, value_name = "N,...", value_delimiter = ',',
          help = MATRICES.help(&format!("Chain lengths n (matrices) of the DP, comma-separated, \
                                         each at most {MAX_MATRICES} (the CPU reference grows \
                                         as n^3)")),
          value_parser = clap::value_parser!(u64).range(1..=MAX_MATRICES as u64))]
    matrices: Option<Vec<u64>>,
    #[arg(long, value_enum, default_value_t = Part::All,
          help = format!("Which half to measure (each chain multiplication is timed {} times, \
                          --quick: {}, unless --reps is given)",
                         CHAIN_REPS.full, CHAIN_REPS.quick))]
    part: Part,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn validate(&self) -> Result<(), UsageError> {
        self.matrices
            .iter()
            .flatten()
            .try_for_each(|&n| beyond::check_matrices(n as usize))
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::cmm::beyond::CHAPTER, |run, args| {
        let settings = Settings {
            matrices: match &args.matrices {
                Some(given) => given.iter().map(|&n| n as usize).collect(),
                None => run.pick(None, MATRICES).0.to_vec(),
            },
            part: args.part,
            max_reps: run.reps(),
            chain_reps: run.pick(args.common.reps, CHAIN_REPS) as usize,
        };
        let results = beyond::measure(run, &settings)?;
        beyond::report(run, &results)
    })
}
