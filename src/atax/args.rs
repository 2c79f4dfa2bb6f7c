//! The command line of `cargo run --release --example atax`.

use super::measure::Part;

crate::settings! {
    /// The sizes of one run, and what it measures.
    pub struct Settings / SettingsArgs {
        /// Side of the square float matrix beyond L2, in elements.
        #[arg(value_name = "N", value_parser = clap::value_parser!(u64).range(1..=32_768))]
        pub side: u64 = (16384, 1024),
        /// MiB copied by the copy kernel that sets the device ceiling.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        pub ceiling_mib: u64 = (1024, 16),
    }
    and {
        /// What to measure: everything, or only the odd square shapes as allocated and
        /// pitched (with the copy ceiling they are compared with).
        #[arg(long, value_enum, default_value_t = Part::All)]
        pub part: Part,
    }
}

crate::example_args!(
    about = "ATAX, y = A^T (A x): ten ways to move A, verified and timed",
    flags = SettingsArgs,
    impl {
        fn counters_part(&self) -> Option<&'static str> {
            (self.flags.part == Part::Pitched).then_some("pitched")
        }
    }
);
