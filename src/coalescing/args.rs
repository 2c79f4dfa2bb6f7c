//! The command line of `cargo run --release --example coalescing`.

use super::measure::MAX_TRANSPOSE_SIDE;

crate::settings! {
    /// The sizes of one run.
    pub struct Settings / SettingsArgs {
        /// MiB copied by the copy kernel that sets the ceiling.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        pub ceiling_mib: u64 = (1024, 16),
        /// MiB of source array the stride sweep reads, per element type.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        pub sweep_mib: u64 = (1024, 4),
        /// MiB of source array the offset sweep reads.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        pub offset_mib: u64 = (512, 4),
        /// Side of the square float matrix the transposes are timed on.
        #[arg(value_name = "N",
              value_parser = clap::value_parser!(u64).range(1..=MAX_TRANSPOSE_SIDE as u64))]
        pub transpose_side: u64 = (8192, 513),
        /// Particles of the drift (not a multiple of anything, so that the last round of every
        /// grid-stride loop is partial).
        #[arg(value_name = "COUNT",
              value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
        pub particles: u64 = (16_000_003, 100_003),
        /// Elements of the read-only copy and gathers.
        #[arg(value_name = "COUNT",
              value_parser = clap::value_parser!(u64).range(1..=2_000_000_000))]
        pub readonly_n: u64 = (64_000_003, 1_000_003),
        /// Floats in the gathers' table: each is read about readonly-n / table-len times.
        #[arg(value_name = "FLOATS", value_parser = clap::value_parser!(u32).range(1..=1 << 28))]
        pub table_len: u32 = (16_384, 16_384),
    }
}

crate::example_args!(
    about = "Coalescing, alignment and the matrix transpose: sectors predicted and \
             measured",
    flags = SettingsArgs,
);
