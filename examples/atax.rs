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

use clap::Parser;
use cmbook::atax::{self, Part, Settings, CEILING_MIB, SIDE};
use cmbook::harness::run::{self, CommonArgs, Example};

#[derive(Parser, Debug)]
#[command(about = "ATAX, y = A^T (A x): ten ways to move A, verified and timed")]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long, value_name = "N",
          help = SIDE.help("Side of the square float matrix beyond L2, in elements"),
          value_parser = clap::value_parser!(u64).range(1..=32_768))]
    side: Option<u64>,
    #[arg(long, value_name = "MIB",
          help = CEILING_MIB.help("MiB copied by the copy kernel that sets the device ceiling"),
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    ceiling_mib: Option<u64>,
    #[arg(long, value_enum, default_value_t = Part::All,
          help = "What to measure: everything, or only the odd square shapes as allocated and \
                  pitched (with the copy ceiling they are compared with)")]
    part: Part,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn counters_part(&self) -> Option<&'static str> {
        (self.part == Part::Pitched).then_some("pitched")
    }
}

fn main() -> ExitCode {
    run::main::<Args>(&cmbook::atax::CHAPTER, |run, args| {
        let settings = Settings {
            side: run.pick(args.side, SIDE) as usize,
            ceiling_mib: run.pick(args.ceiling_mib, CEILING_MIB),
            part: args.part,
        };
        let results = atax::measure(run, &settings)?;
        atax::report(run, &results)
    })
}
