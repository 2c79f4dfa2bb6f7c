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
            /// `__syncthreads` alone, counted.
            BarrierBlock => "barrier_block",
            /// Rounds of two grid barriers (cooperative launch).
            LadderGrid => "ladder_grid",
            /// Grid barriers alone, counted (cooperative launch).
            BarrierGrid => "barrier_grid",
        }
        in "hopper_cluster.cu" {
            /// Rounds of two cluster barriers, checked through distributed shared memory.
            LadderCluster => "ladder_cluster",
            /// Cluster barriers alone (release and acquire), counted.
            BarrierCluster => "barrier_cluster",
            /// Cluster barriers alone with a relaxed arrival, counted.
            BarrierClusterRelaxed => "barrier_cluster_relaxed",
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

use crate::harness::sections::{Need, Section as Part};

/// Thread-block clusters and their shared memory (`hopper_cluster.cu`).
const CLUSTERS: Need =
    Need::Capability((9, 0), "thread-block clusters and distributed shared memory");
/// `cp.async` copies into shared memory (`hopper_async.cu`, `hopper_sgemm.cu`).
const CP_ASYNC: Need = Need::Capability((8, 0), "cp.async copies into shared memory");

/// The rungs of the ladder that are cluster barriers (the rest of the ladder runs anywhere).
pub const CLUSTER_BARRIERS: &str = "cluster barriers";
/// The `--section l2` workloads, each timed without and with a persisting window.
pub const L2_WINDOW: &str = "L2 access-policy window";
pub const DSMEM: &str = "DSMEM all-reduces";
pub const CP_ASYNC_STAGES: &str = "cp.async stages";
/// The TMA's copy and transpose (the padded-tile transpose and the pitched copy beside
/// them run anywhere).
pub const TMA: &str = "TMA copy and transpose";
pub const SGEMM_REGISTERS: &str = "SGEMM fed through registers";
pub const SGEMM_CP_ASYNC: &str = "SGEMM fed by cp.async";

/// The parts of the chapter and what each needs of the GPU; everything else (block and
/// grid barriers, the launch rungs, the padded transpose and the pitched copy, step 6 and
/// cuBLAS) runs on any GPU from 7.0 up.
pub const SECTIONS: &[Part] = &[
    Part { name: CLUSTER_BARRIERS, needs: &[CLUSTERS] },
    Part { name: L2_WINDOW, needs: &[Need::PersistingL2] },
    Part { name: DSMEM, needs: &[CLUSTERS] },
    Part { name: CP_ASYNC_STAGES, needs: &[CP_ASYNC] },
    Part {
        name: TMA,
        needs: &[Need::Capability((9, 0), "the tensor memory accelerator")],
    },
    Part {
        name: SGEMM_REGISTERS,
        needs: &[Need::SharedPerBlock(sgemm::shared_needed(sgemm::Feed::Registers))],
    },
    Part {
        name: SGEMM_CP_ASYNC,
        needs: &[
            CP_ASYNC,
            Need::SharedPerBlock(sgemm::shared_needed(sgemm::Feed::CpAsync)),
        ],
    },
];

impl Section {
    /// The parts of [`SECTIONS`] that `--section` measures, in the order it measures them.
    pub fn parts(self) -> &'static [&'static str] {
        match self {
            Section::Ladder => &[CLUSTER_BARRIERS],
            Section::L2 => &[L2_WINDOW],
            Section::Dsmem => &[DSMEM],
            Section::Stages => &[CP_ASYNC_STAGES],
            Section::Tma => &[TMA],
            Section::Sgemm => &[SGEMM_REGISTERS, SGEMM_CP_ASYNC],
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
        "hopper_memory-skipped",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[Headline::lower(
        "__syncthreads, 256 threads",
        crate::pick!(
            "hopper_memory-ladder",
            [
                ("barrier", "__syncthreads"),
                ("what", "barrier alone"),
                ("who", "256 threads (one block)")
            ],
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
mod plan_tests {
    use super::*;
    use crate::harness::sections::{gpu, plan, GPUS};

    /// What each supported GPU runs: from 9.0 everything; 8.x all but clusters, DSMEM and
    /// the TMA; 7.x also without cp.async and the L2 window (no persisting L2 before 8.0).
    #[test]
    fn the_hopper_plan_of_every_supported_gpu() {
        let everything: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
        let portable = [SGEMM_REGISTERS];
        let ampere = [L2_WINDOW, CP_ASYNC_STAGES, SGEMM_REGISTERS, SGEMM_CP_ASYNC];
        for (name, caps) in GPUS {
            let p = plan(SECTIONS, caps);
            let (major, minor) = caps.capability;
            let want: &[&str] = match caps.capability {
                c if c >= (9, 0) => &everything,
                c if c >= (8, 0) => &ampere,
                _ => &portable,
            };
            assert_eq!(p.run, want, "{name}");
            for skip in &p.skipped {
                assert!(
                    skip.why.ends_with(&format!("this GPU is {major}.{minor}"))
                        || (skip.section == L2_WINDOW && !caps.access_policy_window),
                    "{name}: {skip}"
                );
            }
        }
        let rtx4090 = plan(SECTIONS, &gpu("RTX 4090"));
        assert_eq!(
            rtx4090.skip(TMA).unwrap().to_string(),
            "skipped: TMA copy and transpose: needs compute capability 9.0 \
             (the tensor memory accelerator); this GPU is 8.9"
        );
        let t4 = plan(SECTIONS, &gpu("T4"));
        assert_eq!(
            t4.skip(SGEMM_CP_ASYNC).unwrap().to_string(),
            "skipped: SGEMM fed by cp.async: needs compute capability 8.0 \
             (cp.async copies into shared memory); this GPU is 7.5"
        );
        assert_eq!(
            t4.skip(L2_WINDOW).unwrap().to_string(),
            "skipped: L2 access-policy window: needs a persisting part of L2 \
             (an access-policy window); this GPU has none"
        );
    }

    /// The shared memory each half of the matrix multiplies asks for: the 4-stage kernel
    /// of step 6's layout (73,728 bytes) for the cp.async half, `sgemm_warp_256_k16`
    /// (49,664 bytes) for the other, which fits every GPU from 7.0 (a T4 allows 64 KiB).
    #[test]
    fn the_matrix_multiplies_need_the_shared_memory_of_their_largest_kernel() {
        use sgemm::{shared_needed, Feed};
        assert_eq!(shared_needed(Feed::CpAsync), 4 * sgemm::STAGE_BYTES);
        assert_eq!(shared_needed(Feed::Registers), 4 * 2 * 16 * (128 + 4 + 256));
        assert!(GPUS
            .iter()
            .all(|(_, c)| c.shared_per_block_optin >= shared_needed(Feed::Registers)));
    }

    /// Every part names a `--section`, and every `--section` names parts of [`SECTIONS`].
    #[test]
    fn every_part_belongs_to_one_section() {
        use clap::ValueEnum;
        let mut named: Vec<&str> = Section::value_variants()
            .iter()
            .flat_map(|s| s.parts().iter().copied())
            .collect();
        named.sort();
        let mut parts: Vec<&str> = SECTIONS.iter().map(|s| s.name).collect();
        parts.sort();
        assert_eq!(named, parts);
    }

    /// A kernel fed through registers lives in the portable file, one fed by cp.async in
    /// the file that needs 8.0: the plan and the kernel table agree on what runs.
    #[test]
    fn each_kernel_lies_in_the_file_of_its_feed() {
        use crate::harness::kernels::KernelName;
        for v in sgemm::KERNELS {
            let file = match v.feed {
                sgemm::Feed::Registers => sgemm::FILES[0],
                sgemm::Feed::CpAsync => sgemm::FILES[1],
            };
            assert_eq!(v.kernel.file(), file, "{:?}", v.kernel);
        }
    }
}

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
