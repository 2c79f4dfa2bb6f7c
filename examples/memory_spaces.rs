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

use cmbook::harness::run;
use cmbook::memory_spaces::{self, Args};

fn main() -> ExitCode {
    run::main::<Args>(&memory_spaces::CHAPTER, |run, args| {
        let results = memory_spaces::measure(run, &args.flags.settings(run))?;
        memory_spaces::report(run, &results)
    })
}
