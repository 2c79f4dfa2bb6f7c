//! The command line of `cargo run --release --example ceilings`.

crate::settings! {
    /// The sizes of one run.
    pub struct Settings / SettingsArgs {
        /// Largest device copy, in MiB. The copy sweep doubles up to this size (with
        /// half-steps); its largest copy, L2 cold, is the device-memory ceiling.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
        pub ceiling_mib: u64 = (4096, 64),
        /// Largest host<->device transfer, in MiB.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
        pub max_transfer_mib: u64 = (1024, 16),
    }
}

crate::example_args!(
    about = "Measure the GPU's ceilings: copy bandwidth, host<->device bandwidth, \
             launch cost",
    flags = SettingsArgs,
);
