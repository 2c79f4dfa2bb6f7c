//! Chapter "Measuring a GPU": device copy bandwidth (L2 warm and cold), host↔device bandwidth
//! (pageable and pinned) and the cost of a launch, each verified, then timed.

use std::process::ExitCode;

use clap::Parser;
use cmbook::ceilings::{self, Settings, CEILING_MIB, MAX_TRANSFER_MIB};
use cmbook::harness::run::{self, CommonArgs, Example};

#[derive(Parser, Debug)]
#[command(
    about = "Measure the GPU's ceilings: copy bandwidth, host<->device bandwidth, \
                   launch cost"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// The copy sweep doubles up to this size (with half-steps); its largest copy, L2 cold,
    /// is the device-memory ceiling.
    #[arg(long, value_name = "MIB", help = CEILING_MIB.help("Largest device copy, in MiB"),
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    ceiling_mib: Option<u64>,
    #[arg(long, value_name = "MIB",
          help = MAX_TRANSFER_MIB.help("Largest host<->device transfer, in MiB"),
          value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    max_transfer_mib: Option<u64>,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::ceilings::CHAPTER, |run, args| {
        let settings = Settings {
            ceiling_mib: run.pick(args.ceiling_mib, CEILING_MIB),
            max_transfer_mib: run.pick(args.max_transfer_mib, MAX_TRANSFER_MIB),
        };
        let results = ceilings::measure(run, &settings)?;
        ceilings::report(run, &results)
    })
}
