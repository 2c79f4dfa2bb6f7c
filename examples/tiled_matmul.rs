//! Chapter "Reuse, loop permutation, tiling", the GPU half.
//!
//! `cargo run --release --example tiled_matmul` verifies every step of the tiled matrix
//! multiply (and cuBLAS SGEMM, TF32 off) against a double-precision CPU reference at sizes
//! that are not tile multiples, then times each at side x side x side (default 4096), L2
//! cold, and writes the figure `tiling-matmul`, the tables `tiling-kernels` and
//! `tiling-verification`, and their CSVs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::chapters;
use cmbook::harness::run::{self, CommonArgs, Example};
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
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&chapters::TILED_MATMUL, |run, args| {
        let settings = Settings { side: run.pick(args.side, SIDE) as usize };
        let results = tiled_matmul::measure(run, &settings)?;
        tiled_matmul::report(run, &results)
    })
}
