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

use clap::Parser;
use cmbook::chapters::Chapter;
use cmbook::cmm::diagonal::solve::{self, SHOWN_ORDER_MAX_N};
use cmbook::cmm::diagonal::{self, Part, Settings, DIM_MAX};
use cmbook::cmm::layout::MAX_N_FOR_I32_INDEX;
use cmbook::harness::run::{self, CommonArgs, Example, Needs, UsageError};

#[derive(Parser, Debug)]
#[command(
    about = "Chained matrix multiplication: the DP on the GPU, row-major vs diagonal-major"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Solve this chain: dimensions p0,p1,...,pn (matrix i is p(i-1) x p(i)).
    #[arg(long, value_delimiter = ',', conflicts_with = "matrices")]
    dims: Option<Vec<u32>>,
    #[arg(long, value_name = "N",
          help = format!("Solve a random chain of this many matrices (dimensions \
                          1..={DIM_MAX}, from --seed); at most {MAX_N_FOR_I32_INDEX}, since \
                          the kernels index the table with 32-bit ints"),
          value_parser = clap::value_parser!(u64).range(1..=MAX_N_FOR_I32_INDEX as u64))]
    matrices: Option<u64>,
    /// Answer --dims / --matrices on the CPU only (no GPU needed).
    #[arg(long)]
    cpu_only: bool,
    #[arg(long, help = format!("Print the optimal order of --dims / --matrices in full, \
                                however long (by default only up to {SHOWN_ORDER_MAX_N} \
                                matrices)"))]
    show_order: bool,
    /// Which part of the chapter's measurements to run (the computed tables always are).
    #[arg(long, value_enum, default_value_t = Part::All)]
    part: Part,
}

impl Args {
    /// The one chain to answer, if any.
    fn chain(&self) -> Option<Vec<u32>> {
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

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::cmm::diagonal::CHAPTER, |run, args| match args.chain() {
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
