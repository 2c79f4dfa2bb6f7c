//! The command line of `cargo run --release --example memory_spaces`.

crate::settings! {
    /// The sizes a reader can set, resolved for this run.
    pub struct Settings / SettingsArgs {
        /// Matrices the signal vector is applied to, 3001 x 2500 floats each (301 x 257 with
        /// --quick).
        #[arg(value_name = "COUNT", value_parser = clap::value_parser!(u64).range(1..=65_535))]
        pub signal_matrices: u64 = (32, 3),
        /// Floats of the L2-cold stencil.
        #[arg(value_name = "FLOATS",
              value_parser = clap::value_parser!(u64).range(1..=4_000_000_000))]
        pub stencil_n: u64 = (100_000_007, 100_003),
        /// Dependent loads per timed repetition of each pointer chase (the chases take fewer
        /// repetitions than the other measurements, unless --reps is given).
        #[arg(value_name = "LOADS", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        pub chase_steps: u64 = (100_000, 1000),
    }
}

crate::example_args!(
    about = "Memory spaces: where data lives, and what each place costs",
    flags = SettingsArgs
);
