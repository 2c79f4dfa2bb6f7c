//! The command line of `cargo run --release --example cmm_beyond`.

use super::measure::{
    check_matrices, Part, Settings, CHAIN_REPS, MATRICES, MAX_MATRICES,
};
use crate::harness::args::{CommonArgs, Example, UsageError};
use crate::harness::Run;

/// Chained matrix multiplication past one block: the DP to n = 16384, and chains
/// multiplied in its order.
#[derive(clap::Parser, Debug)]
#[command(
    about = "Chained matrix multiplication past one block: the DP to n = 16384, and \
                   chains multiplied in its order"
)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    #[arg(long, value_name = "N,...", value_delimiter = ',', action = clap::ArgAction::Set,
          help = MATRICES.help(&format!("Chain lengths n (matrices) of the DP, comma-separated, \
                                         each at most {MAX_MATRICES} (the CPU reference grows \
                                         as n^3)")),
          value_parser = clap::value_parser!(u64).range(1..=MAX_MATRICES as u64))]
    pub matrices: Option<Vec<u64>>,
    #[arg(long, value_enum, default_value_t = Part::All,
          help = format!("Which half to measure (each chain multiplication is timed {} times, \
                          --quick: {}, unless --reps is given)",
                         CHAIN_REPS.full, CHAIN_REPS.quick))]
    pub part: Part,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn validate(&self) -> Result<(), UsageError> {
        self.matrices.iter().flatten().try_for_each(|&n| check_matrices(n as usize))
    }
}

impl Args {
    /// This run's settings: the chain lengths given (or the book's), and the repetitions.
    pub fn settings(&self, run: &Run) -> Settings {
        Settings {
            matrices: match &self.matrices {
                Some(given) => given.iter().map(|&n| n as usize).collect(),
                None => run.pick(None, MATRICES).0.to_vec(),
            },
            part: self.part,
            max_reps: run.reps(),
            chain_reps: run.reps_or(CHAIN_REPS) as usize,
        }
    }
}
