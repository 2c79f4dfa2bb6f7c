//! Chapter "Asynchronous memory on Hopper": the synchronisation ladder, the L2
//! access-policy window, distributed shared memory, cp.async stages and the TMA, each
//! verified, then timed; and an FP32 matrix multiply fed by cp.async stages.

use std::process::ExitCode;

use clap::Parser;
use cmbook::harness::run::{self, CommonArgs, Example};
use cmbook::hopper_memory::{self, Section, Settings, LOOKUP_MIB, STREAM_MIB};

/// Matrix sides of the TMA section: a power of two, one less (not a multiple of 32 or of
/// 4), and a side not a multiple of 32 whose rows are 16-byte aligned.
const SIDES: [usize; 3] = [8192, 8191, 4100];
const QUICK_SIDES: [usize; 2] = [256, 253];

#[derive(Parser, Debug)]
#[command(
    about = "Measure Hopper's memory features: barriers, L2 window, DSMEM, cp.async, TMA"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// The sections to measure (repeat the flag; default: all).
    #[arg(long, value_enum)]
    section: Vec<Section>,
    #[arg(long, value_name = "MIB", help = STREAM_MIB.help("Streamed array, in MiB"),
          value_parser = clap::value_parser!(u64).range(1..=16_384))]
    stream_mib: Option<u64>,
    #[arg(long, value_name = "MIB",
          help = LOOKUP_MIB.help("Lookup table that fits the persisting L2, in MiB"),
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    lookup_mib: Option<u64>,
    /// Sides of the square matrices of the TMA section [default: 8192, 8191, 4100;
    /// --quick: 256, 253].
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=32_768))]
    sides: Vec<u64>,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::hopper_memory::CHAPTER, |run, args| {
        let sections = if args.section.is_empty() {
            vec![
                Section::Ladder,
                Section::L2,
                Section::Dsmem,
                Section::Stages,
                Section::Tma,
                Section::Sgemm,
            ]
        } else {
            args.section.clone()
        };
        let sides = match (args.sides.is_empty(), run.quick) {
            (false, _) => args.sides.iter().map(|&s| s as usize).collect(),
            (true, false) => SIDES.to_vec(),
            (true, true) => QUICK_SIDES.to_vec(),
        };
        let settings = Settings {
            sections,
            stream_mib: run.pick(args.stream_mib, STREAM_MIB),
            lookup_mib: run.pick(args.lookup_mib, LOOKUP_MIB),
            sides,
        };
        let results = hopper_memory::measure(run, &settings)?;
        hopper_memory::report(run, &results)
    })
}
