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
        /// Chains in the CMM batch split over the GPUs (each of the CMM beyond chapter's
        /// batch length).
        #[arg(value_name = "CHAINS", value_parser = clap::value_parser!(u64).range(1..=4096))]
        pub cmm_chains: u64 = (256, 8),
    }
    and {
        /// Use the first N GPUs (N >= 1) [default: all of them]; the scaling measurements
        /// also run on the first 1, 2, 4, ... of them.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
        pub gpus: Option<u32>,
        /// A CSV written by src/multi_gpu/torch_reference.py on this machine (PyTorch's
        /// all-reduce over as many GPUs as torchrun started), shown beside NCCL's through
        /// cudarc; repeat it for several GPU counts. Without it the run starts the script
        /// itself, once per GPU count, where python3 imports torch [default: none].
        #[arg(long, value_name = "CSV")]
        pub torch_reference: Vec<PathBuf>,
        /// Do not start src/multi_gpu/torch_reference.py (no comparison with PyTorch unless
        /// --torch-reference is given).
        #[arg(long)]
        pub no_torch: bool,
    }
}

crate::example_args!(
    about = "Measure memory across GPUs: peer copies and latency, NCCL collectives, ATAX on \
             several GPUs",
    flags = SettingsArgs,
);
