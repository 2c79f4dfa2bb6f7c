//! The command line of `cargo run --release --example multi_gpu`.

use std::path::PathBuf;

crate::settings! {
    /// The sizes of one run.
    pub struct Settings / SettingsArgs {
        /// Largest copy between two GPUs, in MiB.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        pub peer_mib: u64 = (1024, 16),
        /// Largest collective (nccl-tests' size), in MiB.
        #[arg(value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=65_536))]
        pub collective_mib: u64 = (1024, 16),
        /// Rows of the largest ATAX matrix.
        #[arg(value_name = "ROWS", value_parser = clap::value_parser!(u64).range(2..=16_777_216))]
        pub atax_rows: u64 = (65536, 4096),
        /// Columns of the ATAX matrices (at most 16384: the fused kernel covers up to 16384
        /// floats).
        #[arg(value_name = "COLS", value_parser = clap::value_parser!(u64).range(1..=16_384))]
        pub atax_cols: u64 = (16384, 1024),
    }
    and {
        /// Use the first N GPUs (N >= 1) [default: all of them].
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        pub gpus: Option<u32>,
        /// The CSV written by src/multi_gpu/torch_reference.py on this machine: PyTorch's
        /// all-reduce, shown beside NCCL's through cudarc [default: none].
        #[arg(long, value_name = "CSV")]
        pub torch_reference: Option<PathBuf>,
    }
}

crate::example_args!(
    about = "Measure memory across GPUs: peer copies and latency, NCCL collectives, ATAX on \
             several GPUs",
    flags = SettingsArgs,
);
