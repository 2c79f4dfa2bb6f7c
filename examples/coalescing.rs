//! Chapter "Coalescing, alignment and the matrix transpose".
//!
//! `cargo run --release --example coalescing` measures, verifies and records
//! - strided loads (stride 1 to 64, float and double) and misaligned loads (offset 0 to 32
//!   floats), each next to what the sector arithmetic predicts;
//! - the float stride sweep again under each L2 fetch granularity limit (32, 64, 128 bytes),
//!   the limit read back and restored afterwards;
//! - a particle drift on an array of structs and on a struct of arrays;
//! - the transpose of an 8192 × 8192 float matrix: naive, shared tile, padded tile, tuned;
//! - the read-only data path (`__ldg`, `const` and `__restrict__` alone and together, loads
//!   written first) on a copy and on gathers, with their loads counted in PTX and SASS;
//!
//! all as fractions of the copy ceiling measured in the same run, L2 cold.

use std::process::ExitCode;

use cmbook::coalescing::{self, Args};
use cmbook::harness::run;

fn main() -> ExitCode {
    run::main::<Args>(&coalescing::CHAPTER, |run, args| {
        let results = coalescing::measure(run, &args.flags.settings(run))?;
        coalescing::report(run, &results)
    })
}
