//! Chapter "Reuse, loop permutation, tiling", the GPU half.
//!
//! `cargo run --release --example tiled_matmul` verifies every step of the tiled matrix
//! multiply (and cuBLAS SGEMM, TF32 off) against a double-precision CPU reference at sizes
//! that are not tile multiples, then times each at side x side x side (default 4096), L2
//! cold, and writes the figure `tiling-matmul`, the tables `tiling-kernels` and
//! `tiling-verification`, and their CSVs. Then it multiplies matrices larger than a device
//! budget (`--budget-mib`) panel by panel from pinned host memory, with one, two and three
//! streams (`tiling-out-of-core`, `tiling-out-of-core-runs`), checks one function called
//! with a global and a shared pointer (`tiling-generic`), and sets the lecture's 45 GFLOPS
//! beside this GPU's numbers (`tiling-lecture`).

use std::process::ExitCode;

use clap::Parser;
use cmbook::harness::run::{self, CommonArgs, Example};
use cmbook::tiling::out_of_core::BUDGET_MIB;
use cmbook::tiling::tiled_matmul::{self, Settings, SIDE};

#[derive(Parser, Debug)]
#[command(about = "Tiled matrix multiply, step by step, against cuBLAS SGEMM")]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long, value_name = "N",
          help = SIDE.help("Side of the square multiply that is timed, in elements"),
          value_parser = clap::value_parser!(u64).range(1..=32_768))]
    side: Option<u64>,
    #[arg(long, value_name = "MIB",
          help = BUDGET_MIB.help("Device memory the out-of-core multiply may use, in MiB"))]
    budget_mib: Option<f64>,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::tiling::tiled_matmul::CHAPTER, |run, args| {
        let side = run.pick(args.side, SIDE) as usize;
        let settings =
            Settings::new(run.quick, side, run.pick(args.budget_mib, BUDGET_MIB));
        let results = tiled_matmul::measure(run, &settings)?;
        tiled_matmul::report(run, &results)
    })
}
