//! The chapter "Asynchronous memory on Hopper": what the H100's own memory features cost
//! and buy, each verified, then timed — the synchronisation ladder (block, cluster and
//! grid barriers beside a kernel boundary and a graph node), the L2 access-policy window,
//! distributed shared memory inside a cluster, asynchronous copies (`cp.async`) with 1 to 4
//! stages in flight, the Tensor Memory Accelerator (TMA) on a copy and a transpose, and
//! ([`sgemm`]) an FP32 matrix multiply fed by `cp.async` stages beside cuBLAS.
//!
//! [`measure()`] verifies and times; [`report()`] draws every table and figure from the
//! results. The launches the driver offers beyond a plain one (cooperative, cluster, tensor
//! maps, L2 windows) go through [`crate::harness::launch`].

pub mod args;
pub mod exercises;
pub mod l2;
pub mod measure;
pub mod reference;
pub mod report;
pub mod sgemm;
pub mod tma;

pub use args::Args;
pub use measure::{measure, Section, Settings, LOOKUP_MIB, STREAM_MIB};
pub use report::report;

crate::kernel_names! {
    /// The kernels of the chapter: `kernels/hopper_sync.cu`, `hopper_cluster.cu`,
    /// `hopper_async.cu`, `hopper_l2.cu`, `hopper_tma.cu`, `hopper_pitched.cu`,
    /// `hopper_sgemm_warp.cu` and `hopper_sgemm.cu`.
    pub enum HopperKernel {
        in "hopper_sync.cu" {
            /// Rounds of two `__syncthreads`.
            LadderBlock => "ladder_block",
            /// Rounds of two grid barriers (cooperative launch).
            LadderGrid => "ladder_grid",
        }
        in "hopper_cluster.cu" {
            /// Rounds of two cluster barriers, checked through distributed shared memory.
            LadderCluster => "ladder_cluster",
            /// All-reduces inside a cluster through distributed shared memory.
            ExchangeDsmem => "exchange_dsmem",
            /// The same all-reduces through global memory (L2).
            ExchangeGlobal => "exchange_global",
        }
        in "hopper_async.cu" {
            /// `out = a * in` with one `cp.async` stage per thread.
            Stages1 => "stream_cp_async_1",
            Stages2 => "stream_cp_async_2",
            Stages3 => "stream_cp_async_3",
            Stages4 => "stream_cp_async_4",
        }
        in "hopper_l2.cu" {
            /// A stream scaled by entries of a table looked up by a hash.
            Lookup => "l2_lookup",
            /// A table summed, a stream copied, the table summed again.
            Reread => "l2_reread",
        }
        in "hopper_tma.cu" {
            /// A 32 x 32 tile copy by the TMA.
            TmaCopy => "tma_copy",
            /// A transpose whose tiles the TMA loads and stores.
            TmaTranspose => "tma_transpose",
        }
        in "hopper_pitched.cu" {
            /// The padded-tile transpose, with row pitches.
            TransposePadded => "transpose_padded",
            /// A pitched copy with the transpose's access pattern.
            CopyPitched => "copy_pitched",
        }
        in "hopper_sgemm_warp.cu" {
            /// Warp tiles, A k-major, the slice unrolled: 128 x 128, k slices of 8, the
            /// slice through registers.
            Warp128K8 => "sgemm_warp_128_k8",
            /// 128 x 256 tiles (8 x 16 results per thread), one block per SM.
            Warp256K8 => "sgemm_warp_256_k8",
            Warp256K16 => "sgemm_warp_256_k16",
            /// 128 x 256, slices of 16, every warp multiplies (no edge skip).
            Warp256K16All => "sgemm_warp_256_k16_all",
        }
        in "hopper_sgemm.cu" {
            /// FP32 C = A B, 128 x 128 tiles, 2, 3 or 4 cp.async stages.
            Sgemm2 => "sgemm_cp_async_2",
            Sgemm3 => "sgemm_cp_async_3",
            Sgemm4 => "sgemm_cp_async_4",
            /// The warp tiles of `Warp128K8` fed by 3 cp.async stages (A as 4-byte copies).
            Warp128K8Cp3 => "sgemm_warp_128_k8_cp3",
            /// A through registers, B by cp.async.
            Warp128K8Bcp => "sgemm_warp_128_k8_bcp",
            Warp256K8Bcp => "sgemm_warp_256_k8_bcp",
            Warp256K16Bcp => "sgemm_warp_256_k16_bcp",
        }
    }
}

use crate::harness::chapter::{Chapter, Feature};
use crate::harness::compare::Headline;
use crate::harness::exercise::{function_of, Exercise};
use crate::harness::run::{FullQuick, Needs};

/// This chapter's entry: what its example needs, writes, compares with the book and checks.
pub const CHAPTER: Chapter = Chapter {
    example: "hopper_memory",
    page: "hopper_memory.md",
    title: "Asynchronous memory on Hopper",
    needs: Needs::Gpu
        .features(&[Feature::CLUSTERS, Feature::TMA, Feature::CP_ASYNC])
        .memory(1 << 30, 16 << 20),
    reps: FullQuick::new(20, 3),
    counted: &["hopper_memory-counters", "hopper_memory-counted"],
    writes: &[
        "hopper_memory-ladder",
        "hopper_memory-l2",
        "hopper_memory-l2-reuse",
        "hopper_memory-l2-sweep",
        "hopper_memory-dsmem",
        "hopper_memory-stages",
        "hopper_memory-tma",
        "hopper_memory-sass",
        "hopper_memory-sgemm",
        "hopper_memory-sgemm-code",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[Headline::lower(
        "__syncthreads, 256 threads",
        crate::pick!(
            "hopper_memory-ladder",
            [("barrier", "__syncthreads"), ("who", "256 threads (one block)")],
            "median_ns",
            []
        ),
        "ns",
    )],
    claims: &[],
    exercise: Some(Exercise {
        number: 4,
        file: "exercises_hopper.cu",
        function: function_of::<exercises::TransposePitched>,
        check: exercises::check_transpose_pitched,
    }),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_memory_is_the_streamed_copy() {
        // The staged copies' input and output; the L2 lookups' table is smaller.
        let peak =
            |quick| (2 * STREAM_MIB.pick(quick)).max(LOOKUP_MIB.pick(quick)) << 20;
        crate::harness::chapter::check_declared_memory(
            &CHAPTER,
            FullQuick::new(peak(false), peak(true)),
        );
    }
}
