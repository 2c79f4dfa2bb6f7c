//! The command line of `cargo run --release --example tiled_matmul`.

use super::measure::Settings;
use crate::harness::Run;

/// The smallest device budget of the out-of-core multiply, in MiB: 1 KiB.
pub const BUDGET_MIB_MIN: f64 = 1.0 / 1024.0;
/// The largest, in MiB: 1 TiB, past any GPU's memory (the GPU's own size is checked when it
/// is opened); a budget of 1e30 MiB would not even fit the byte count's `usize`.
pub const BUDGET_MIB_MAX: f64 = 1_048_576.0;

crate::settings! {
    /// The sizes a reader can set.
    pub struct Sizes / SizesArgs {
        /// Side of the square multiply that is timed, in elements.
        #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..=32_768))]
        pub side: u64 = (4096, 256),
        /// Device memory the out-of-core multiply may use, in MiB, from 1 KiB (0.0009765625)
        /// to 1 TiB (1048576).
        #[arg(value_name = "MIB",
              value_parser = crate::harness::args::f64_in(BUDGET_MIB_MIN..=BUDGET_MIB_MAX))]
        pub budget_mib: f64 = (256.0, 1.0),
    }
}

crate::example_args!(
    about = "Tiled matrix multiply, step by step, against cuBLAS SGEMM",
    flags = SizesArgs
);

impl Args {
    /// This run's settings: the sizes given (or their defaults) and the book's other sizes.
    pub fn settings(&self, run: &Run) -> Settings {
        let sizes = self.flags.settings(run);
        Settings::new(run.quick, sizes.side as usize, sizes.budget_mib)
    }
}
