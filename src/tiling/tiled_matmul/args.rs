//! The command line of `cargo run --release --example tiled_matmul`.

use super::measure::Settings;
use crate::harness::Run;

crate::settings! {
    /// The sizes a reader can set.
    pub struct Sizes / SizesArgs {
        /// Side of the square multiply that is timed, in elements.
        #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..=32_768))]
        pub side: u64 = (4096, 256),
        /// Device memory the out-of-core multiply may use, in MiB.
        #[arg(value_name = "MIB", value_parser = crate::harness::args::positive_f64)]
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
