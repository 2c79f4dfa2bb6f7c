//! Chapter "Memory across GPUs": what links the GPUs, copies between two of them by every path
//! (copy engines, a kernel on the peer's memory, through the host) and between every pair by
//! the copy engines, the latency of a peer load, NCCL's all-reduce, all-gather and
//! reduce-scatter from bytes to GiB over the first 2, 4, ... GPUs, and ATAX and the CMM batch
//! split over the first 1, 2, 4, ... GPUs; each verified, then timed. Runs on any number of
//! GPUs; with one, it says what it could not measure and measures the rest.
//!
//! PyTorch's all-reduce, the reference for NCCL's through cudarc, comes from
//! `src/multi_gpu/torch_reference.py`: the run starts it itself on the same GPUs, one process
//! per GPU and NVLink multicast off, where `python3` imports torch; or it reads the CSVs the
//! reader recorded with it first:
//!
//! ```text
//! NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
//!     torchrun --nproc_per_node=4 src/multi_gpu/torch_reference.py --out torch4.csv
//! cargo run --release --example multi_gpu -- --torch-reference torch4.csv
//! ```

use std::process::ExitCode;

use cmbook::harness::run;
use cmbook::multi_gpu::{self, Args};

fn main() -> ExitCode {
    // NVLink multicast off for NCCL, and NCCL loadable, before anything else starts.
    multi_gpu::nccl::prepare();
    run::main::<Args>(&multi_gpu::CHAPTER, |run, args| {
        let results = multi_gpu::measure(run, &args.flags.settings(run))?;
        multi_gpu::report(run, &results)
    })
}
