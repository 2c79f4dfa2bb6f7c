//! Chapter "ATAX": y = Aᵀ(A·x), two memory-bound matrix-vector products.
//!
//! `cargo run --release --example atax` verifies every kernel variant and host strategy at odd
//! sizes, then at the PolyBench 4.2 datasets (double and float) and at a 16384² float matrix
//! verifies and times: kernels alone (L2 warm and cold, next to the copy bandwidth measured in
//! the same run), and end to end with the transfers (next to the pinned host-to-device copy of
//! A). It writes the `atax-*` figures and tables and their CSVs. `--part pitched` measures
//! only the odd square shapes as allocated and with rows pitched to whole cache lines
//! (`atax-pitched`).

use std::process::ExitCode;

use cmbook::atax::{self, Args};
use cmbook::harness::run;

fn main() -> ExitCode {
    run::main::<Args>(&atax::CHAPTER, |run, args| {
        let results = atax::measure(run, &args.flags.settings(run))?;
        atax::report(run, &results)
    })
}
