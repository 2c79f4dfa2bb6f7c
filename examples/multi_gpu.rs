//! Chapter "Memory across GPUs": what links the GPUs, copies between two of them by every path
//! (copy engines, a kernel on the peer's memory, through the host), the latency of a peer load,
//! NCCL's all-reduce, all-gather and reduce-scatter from bytes to GiB, and ATAX split over the
//! GPUs; each verified, then timed. Runs on any number of GPUs; with one, it says what it could
//! not measure and measures the rest.
//!
//! The comparison with PyTorch's all-reduce comes from `src/multi_gpu/torch_reference.py`, run
//! first on the same machine (one process per GPU, NVLink multicast off):
//!
//! ```text
//! NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
//!     torchrun --nproc_per_node=2 src/multi_gpu/torch_reference.py --out torch.csv
//! cargo run --release --example multi_gpu -- --torch-reference torch.csv
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use cmbook::harness::run::{self, CommonArgs, Example};
use cmbook::multi_gpu::{
    self, Settings, ATAX_COLS, ATAX_ROWS, COLLECTIVE_MIB, PEER_MIB,
};

#[derive(Parser, Debug)]
#[command(
    about = "Measure memory across GPUs: peer copies and latency, NCCL collectives, ATAX on \
             several GPUs"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Use the first N GPUs (N >= 1) [default: all of them].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    gpus: Option<u32>,
    #[arg(long, value_name = "MIB", help = PEER_MIB.help("Largest copy between two GPUs, in MiB"),
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    peer_mib: Option<u64>,
    #[arg(long, value_name = "MIB",
          help = COLLECTIVE_MIB.help("Largest collective (nccl-tests' size), in MiB"),
          value_parser = clap::value_parser!(u64).range(1..=65_536))]
    collective_mib: Option<u64>,
    #[arg(long, value_name = "ROWS", help = ATAX_ROWS.help("Rows of the largest ATAX matrix"),
          value_parser = clap::value_parser!(u64).range(2..=16_777_216))]
    atax_rows: Option<u64>,
    #[arg(long, value_name = "COLS",
          help = ATAX_COLS.help("Columns of the ATAX matrices (at most 16384)"),
          value_parser = clap::value_parser!(u64).range(1..=16_384))]
    atax_cols: Option<u64>,
    /// The CSV written by src/multi_gpu/torch_reference.py on this machine: PyTorch's
    /// all-reduce, shown beside NCCL's through cudarc [default: none].
    #[arg(long, value_name = "CSV")]
    torch_reference: Option<PathBuf>,
}

impl Example for Args {
    fn common(&self) -> &CommonArgs {
        &self.common
    }
}

fn main() -> ExitCode {
    // NVLink multicast off for NCCL, and NCCL loadable, before anything else starts.
    multi_gpu::nccl::prepare();
    run::main::<Args>(&cmbook::multi_gpu::CHAPTER, |run, args| {
        let settings = Settings {
            gpus: args.gpus.map(|n| n as usize),
            peer_mib: run.pick(args.peer_mib, PEER_MIB),
            collective_mib: run.pick(args.collective_mib, COLLECTIVE_MIB),
            atax_rows: run.pick(args.atax_rows, ATAX_ROWS),
            atax_cols: run.pick(args.atax_cols, ATAX_COLS),
            torch_reference: args.torch_reference.clone(),
        };
        let results = multi_gpu::measure(run, &settings)?;
        multi_gpu::report(run, &results)
    })
}
