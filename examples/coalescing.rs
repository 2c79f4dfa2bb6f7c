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

use clap::Parser;
use cmbook::coalescing::{
    self, Settings, CEILING_MIB, OFFSET_MIB, PARTICLES, READONLY_N, SWEEP_MIB,
    TABLE_LEN, TRANSPOSE_SIDE,
};
use cmbook::harness::run::{self, CommonArgs, Example};

const MAX_SIDE: u64 = cmbook::coalescing::measure::MAX_TRANSPOSE_SIDE as u64;

fn u64_in(min: u64, max: u64) -> clap::builder::RangedU64ValueParser {
    clap::value_parser!(u64).range(min..=max)
}

#[derive(Parser, Debug)]
#[command(
    about = "Coalescing, alignment and the matrix transpose: sectors predicted and measured"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long, value_name = "N", value_parser = u64_in(1, MAX_SIDE),
          help = TRANSPOSE_SIDE.help("Side of the square float matrix the transposes \
                                      are timed on"))]
    transpose_side: Option<u64>,
    #[arg(long, value_name = "MIB", value_parser = u64_in(1, 65_536),
          help = SWEEP_MIB.help("Source the stride sweep reads, per type, in MiB"))]
    sweep_mib: Option<u64>,
    #[arg(long, value_name = "MIB", value_parser = u64_in(1, 65_536),
          help = OFFSET_MIB.help("Source the offset sweep reads, in MiB"))]
    offset_mib: Option<u64>,
    #[arg(long, value_name = "MIB", value_parser = u64_in(1, 65_536),
          help = CEILING_MIB.help("Copy that sets the ceiling, in MiB"))]
    ceiling_mib: Option<u64>,
    #[arg(long, value_name = "COUNT", value_parser = u64_in(1, 1_000_000_000),
          help = PARTICLES.help("Particles of the drift"))]
    particles: Option<u64>,
    #[arg(long, value_name = "COUNT", value_parser = u64_in(1, 2_000_000_000),
          help = READONLY_N.help("Elements of the read-only copy and gathers"))]
    readonly_n: Option<u64>,
    #[arg(long, value_name = "FLOATS",
          value_parser = clap::value_parser!(u32).range(1..=1 << 28),
          help = TABLE_LEN.help("Floats in the gathers' table: each is read about \
                                 readonly-n / table-len times"))]
    table_len: Option<u32>,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::coalescing::CHAPTER, |run, args| {
        let settings = Settings {
            ceiling_mib: run.pick(args.ceiling_mib, CEILING_MIB),
            sweep_mib: run.pick(args.sweep_mib, SWEEP_MIB),
            offset_mib: run.pick(args.offset_mib, OFFSET_MIB),
            transpose_side: run.pick(args.transpose_side, TRANSPOSE_SIDE),
            particles: run.pick(args.particles, PARTICLES),
            readonly_n: run.pick(args.readonly_n, READONLY_N),
            table_len: run.pick(args.table_len, TABLE_LEN),
        };
        let results = coalescing::measure(run, &settings)?;
        coalescing::report(run, &results)
    })
}
