//! The command line of `cargo run --release --example cmm_diagonal`: the chapter's
//! measurements, or one chain answered (`--dims`, `--matrices`), on the GPU or the CPU.

use super::measure::{Part, DIM_MAX};
use super::solve::{self, SHOWN_ORDER_MAX_N};
use crate::cmm::layout::MAX_N_FOR_I32_INDEX;
use crate::harness::args::{CommonArgs, Example, UsageError};
use crate::harness::chapter::Chapter;
use crate::harness::run::Needs;

/// Chained matrix multiplication: the DP on the GPU, row-major vs diagonal-major.
#[derive(clap::Parser, Debug)]
#[command(
    about = "Chained matrix multiplication: the DP on the GPU, row-major vs diagonal-major"
)]
pub struct Args {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Solve this chain: dimensions p0,p1,...,pn (matrix i is p(i-1) x p(i)).
    #[arg(long, value_delimiter = ',', conflicts_with = "matrices",
          action = clap::ArgAction::Set)]
    pub dims: Option<Vec<u32>>,
    #[arg(long, value_name = "N",
          help = format!("Solve a random chain of this many matrices (dimensions \
                          1..={DIM_MAX}, from --seed); at most {MAX_N_FOR_I32_INDEX}, since \
                          the kernels index the table with 32-bit ints"),
          value_parser = clap::value_parser!(u64).range(1..=MAX_N_FOR_I32_INDEX as u64))]
    pub matrices: Option<u64>,
    /// Answer --dims / --matrices on the CPU only (no GPU needed).
    #[arg(long)]
    pub cpu_only: bool,
    #[arg(long, help = format!("Print the optimal order of --dims / --matrices in full, \
                                however long (by default only up to {SHOWN_ORDER_MAX_N} \
                                matrices)"))]
    pub show_order: bool,
    /// Which part of the chapter's measurements to run (the computed tables always are).
    #[arg(long, value_enum, default_value_t = Part::All,
          conflicts_with_all = ["dims", "matrices", "cpu_only"])]
    pub part: Part,
}

impl Args {
    /// The one chain to answer, if any.
    pub fn chain(&self) -> Option<Vec<u32>> {
        solve::chain_of(self.dims.as_deref(), self.matrices, self.common.seed)
    }
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn needs(&self, chapter: &Chapter) -> Needs {
        if self.cpu_only {
            Needs::Cpu
        } else {
            chapter.needs
        }
    }

    fn validate(&self) -> Result<(), UsageError> {
        solve::check_args(self.chain().as_deref(), self.cpu_only, self.show_order)
    }

    fn without_gpu(&self) -> Option<String> {
        // One chain can be answered on the CPU; the chapter's measurements cannot.
        self.chain()
            .map(|_| "add --cpu-only to answer this chain on the CPU".to_string())
    }
}
