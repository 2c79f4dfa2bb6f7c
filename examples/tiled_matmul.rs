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

use cmbook::harness::run;
use cmbook::tiling::tiled_matmul::{self, Args};

fn main() -> ExitCode {
    run::main::<Args>(&tiled_matmul::CHAPTER, |run, args| {
        let results = tiled_matmul::measure(run, &args.settings(run))?;
        tiled_matmul::report(run, &results)
    })
}
