//! Chapter "Memory across GPUs": another GPU's memory as the next level of the hierarchy,
//! reached through peer access (NVLink or PCIe) and through NCCL, the library the field uses
//! for collectives (here through cudarc's `nccl` feature).
//!
//! * [`nccl`]: finding NCCL, NVLink multicast off, one communicator per GPU, grouped calls;
//! * [`devices`]: opening every GPU, peer access, what links each pair, timing across GPUs;
//! * [`peer`]: copies between two GPUs by every path, between every pair by the copy engines,
//!   and the latency of one peer load;
//! * [`collectives`]: all-reduce, all-gather and reduce-scatter from bytes to GiB, over the
//!   first 2, 4, ... GPUs;
//! * [`torch`]: PyTorch's all-reduce, recorded by `torch_reference.py`, as the reference;
//! * [`atax`]: the ATAX chapter's fused kernel on rows split over the GPUs;
//! * [`cmm`]: the CMM beyond chapter's batch of chains split over the GPUs;
//! * [`internode`]: on paper, a second node over InfiniBand, from a model fitted to the
//!   measured all-reduce;
//! * [`measure()`]: everything, verified then timed; [`report()`]: every figure and table;
//! * [`exercises`]: the solutions of the chapter's exercises.
//!
//! Every process that starts NCCL here sets `NCCL_NVLS_ENABLE=0` first ([`nccl::prepare`]):
//! NVLink multicast objects can take a shared host's GPUs out of service, and nothing in this
//! chapter creates one.

pub mod args;
pub mod atax;
pub mod cmm;
pub mod collectives;
pub mod devices;
pub mod exercises;
pub mod internode;
pub mod measure;
pub mod nccl;
pub mod peer;
pub mod report;
pub mod torch;

pub use args::{Args, Settings};
pub use measure::measure;
pub use report::report;

use crate::harness::chapter::Chapter;
use crate::harness::compare::{Claim, Headline};
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

macro_rules! peer {
    // A row of the peer-copy summary by path; `size` says at which size.
    ($path:literal) => {
        $crate::pick!("multi_gpu-peer-summary", [("path", $path)], "GB/s", ["size"])
    };
}

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "multi_gpu",
    page: "multi_gpu.md",
    title: "Memory across GPUs",
    needs: Needs::GpuAndNccl.memory(4198 << 20, 32 << 20).gpus(2),
    reps: FullQuick::new(10, 3),
    counted: &["multi_gpu-counters", "multi_gpu-counted"],
    writes: &[
        "multi_gpu-devices",
        "multi_gpu-topology",
        "multi_gpu-topology-diagram",
        "multi_gpu-peer-summary",
        "multi_gpu-peer",
        "multi_gpu-both-ways",
        "multi_gpu-in-flight",
        "multi_gpu-pairs",
        "multi_gpu-fan-out",
        "multi_gpu-latency",
        "multi_gpu-collectives",
        "multi_gpu-collectives-time",
        "multi_gpu-collectives-table",
        "multi_gpu-torch",
        "multi_gpu-two-nodes-links",
        "multi_gpu-two-nodes",
        "multi_gpu-atax-table",
        "multi_gpu-atax",
        "multi_gpu-cmm",
        "multi_gpu-scaling",
        "multi_gpu-targets",
    ],
    sanitizer_args: &[
        "--quick",
        "--reps",
        "1",
        "--peer-mib",
        "1",
        "--collective-mib",
        "1",
        "--no-torch",
    ],
    note: "needs NCCL; two GPUs or more for all of it, three for the fan-out; starts \
           src/multi_gpu/torch_reference.py for the PyTorch comparison where python3 has torch",
    headlines: &[
        Headline::higher(
            "peer copy, copy engine, one way",
            peer!("copy engine, one way"),
            "GB/s",
        ),
        Headline::higher(
            "peer copy, copy engine, both ways at once",
            peer!("copy engine, both ways"),
            "GB/s",
        ),
        Headline::higher(
            "NCCL all-reduce bus bandwidth, largest size",
            crate::pick!( "multi_gpu-collectives-table", [("collective", "all-reduce")], "busbw GB/s", ["GPUs", "size"] ),
            "GB/s",
        ),
        Headline::lower(
            "dependent load of the peer GPU's memory",
            crate::pick!( "multi_gpu-latency", [("GPU loads from", "the peer GPU's memory")], "ns per load", ["footprint"] ),
            "ns",
        ),
    ],
    claims: &[
        Claim::ratio(
            "a kernel that reads the peer's memory reaches at least 90% of the copy \
             engines (largest copy)",
            peer!("kernel reads the peer"),
            peer!("copy engine, one way"),
            0.9,
        ),
        Claim::ratio(
            "a copy over the peer link is faster than one through the host",
            peer!("copy engine, one way"),
            peer!("through the host, 8 chunks"),
            1.0,
        ),
        Claim::at_least(
            "NCCL's all-reduce through cudarc reaches at least 95% of \
             torch.distributed's bus bandwidth (largest size)",
            crate::pick!("multi_gpu-torch", [], "cudarc / torch", ["GPUs", "size"]),
            0.95,
        ),
        // One GPU's time over two GPUs' at the same matrix: a run on one GPU has no
        // second row, and the claim is "not measured" there rather than failed.
        Claim::ratio(
            "splitting ATAX's rows over two GPUs makes the kernels at least 1.8x faster \
             (largest matrix)",
            crate::pick!("multi_gpu-atax-table", [("GPUs", "1")], "kernels µs", ["matrix"]),
            crate::pick!("multi_gpu-atax-table", [("GPUs", "2")], "kernels µs", ["matrix"]),
            1.8,
        ),
    ],
    exercise: Some(Exercise {
        number: 5,
        file: "exercises_multi_gpu.cu",
        function: function_of::<exercises::PeerCopyExercise>,
        check: exercises::check_peer_copy,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_memory_is_atax_on_one_gpu() {
        // On one GPU it holds all of A; the partial sums ((blocks + 3) x cols floats) fit
        // the declaration's slack for up to 1600 blocks. The peer copies and collectives
        // (source and destination) and the CMM batch on one GPU (its key tables) are
        // smaller.
        for quick in [false, true] {
            let s = Settings::with_defaults(quick, None, Vec::new(), false);
            let a = s.atax_rows * s.atax_cols * 4;
            let partials = (1600 + 3) * s.atax_cols * 4;
            let copies = (2 * s.peer_mib.max(s.collective_mib)) << 20;
            let n = cmm::CHAIN_N.pick(quick);
            let side = crate::cmm::tiled::tile_diagonals(n) * crate::cmm::tiled::TILE;
            let batch = s.cmm_chains * (side * side * 8) as u64;
            assert!(batch < a, "quick: {quick}");
            let peak = (a + partials).max(copies);
            let declared = CHAPTER.needs.memory.pick(quick);
            assert!((peak..=peak + (40 << 20)).contains(&declared), "quick: {quick}");
        }
    }
}
