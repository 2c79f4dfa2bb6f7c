//! The command line of `cargo run --release --example hopper_memory`.

use clap::ValueEnum;

use super::measure::{Section, Settings};
use crate::harness::Run;

/// Matrix sides of the TMA section: a power of two, one less (not a multiple of 32 or of
/// 4), and a side not a multiple of 32 whose rows are 16-byte aligned.
const SIDES: [usize; 3] = [8192, 8191, 4100];
const QUICK_SIDES: [usize; 2] = [256, 253];

crate::settings! {
    /// The sizes a reader can set.
    pub struct Sizes / SizesArgs {
        /// Streamed array, in MiB.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=16_384))]
        pub stream_mib: u64 = (512, 8),
        /// Lookup table that fits the persisting L2, in MiB.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1024))]
        pub lookup_mib: u64 = (24, 2),
    }
    and {
        /// The sections to measure (repeat the flag; default: all).
        #[arg(long, value_enum)]
        pub section: Vec<Section>,
        /// Sides of the square matrices of the TMA section [default: 8192, 8191, 4100;
        /// --quick: 256, 253].
        #[arg(long, value_delimiter = ',', action = clap::ArgAction::Set,
              value_parser = clap::value_parser!(u64).range(1..=32_768))]
        pub sides: Vec<u64>,
    }
}

crate::example_args!(
    about =
        "Measure Hopper's memory features: barriers, L2 window, DSMEM, cp.async, TMA",
    flags = SizesArgs
);

impl Args {
    /// This run's settings: the sections and sizes given, else every section at the book's
    /// sizes (or `--quick`'s).
    pub fn settings(&self, run: &Run) -> Settings {
        let sizes = self.flags.settings(run);
        let sections = match sizes.section.is_empty() {
            true => Section::value_variants().to_vec(),
            false => sizes.section,
        };
        let sides = match (sizes.sides.is_empty(), run.quick) {
            (false, _) => sizes.sides.iter().map(|&s| s as usize).collect(),
            (true, false) => SIDES.to_vec(),
            (true, true) => QUICK_SIDES.to_vec(),
        };
        Settings {
            sections,
            stream_mib: sizes.stream_mib,
            lookup_mib: sizes.lookup_mib,
            sides,
        }
    }
}
