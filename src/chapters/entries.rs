//! Every chapter's entry in the registry: its example, page, needs, defaults, what it writes,
//! how it runs under the sanitizers, and its headline numbers and claims.

use super::picks::HISTOGRAM_REGISTERS;
use super::Chapter;
use crate::harness::compare::{Claim, Headline, Pick};
use crate::harness::run::{FullQuick, Needs};

pub const CEILINGS: Chapter = Chapter {
    example: "ceilings",
    page: "ceilings.md",
    title: "Measuring a GPU",
    needs: Needs::Gpu,
    reps: FullQuick::new(30, 5),
    counted: &["ceilings-counters", "ceilings-counted"],
    writes: &[
        "ceilings-device",
        "ceilings-copy",
        "ceilings-transfer",
        "ceilings-launch",
        "ceilings-summary",
        "ceilings-peaks",
    ],
    sanitizer_args: &[
        "--quick",
        "--ceiling-mib",
        "8",
        "--max-transfer-mib",
        "2",
        "--reps",
        "2",
    ],
    note: "",
    headlines: &[
        Headline {
            what: "device copy, copy kernel",
            pick: summary!("device copy, copy kernel"),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "device copy, cuMemcpyDtoD",
            pick: summary!("device copy, cuMemcpyDtoD"),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "host to device, pinned",
            pick: summary!("H2D pinned"),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "empty kernel, back to back",
            pick: summary!("empty kernel, back to back"),
            unit: "µs",
            higher_is_better: false,
        },
    ],
    claims: &[
        Claim {
            text:
                "pinned host memory moves data to the GPU faster than pageable memory",
            a: summary!("H2D pinned"),
            b: Some(summary!("H2D pageable")),
            at_least: 1.0,
        },
        Claim {
            text: "a CUDA graph node costs less than a launch queued back to back",
            a: summary!("empty kernel, back to back", any size),
            b: Some(summary!("CUDA graph node", any size)),
            at_least: 1.0,
        },
    ],
};

pub const MEMORY_SPACES: Chapter = Chapter {
    example: "memory_spaces",
    page: "memory_spaces.md",
    title: "Memory spaces",
    needs: Needs::Gpu,
    reps: FullQuick::new(20, 2),
    counted: &["memory_spaces-counters", "memory_spaces-counted"],
    writes: &[
        "memory_spaces-map",
        "memory_spaces-signal",
        "memory_spaces-divergent",
        "memory_spaces-constant-spacing",
        "memory_spaces-sass",
        "memory_spaces-stencil",
        "memory_spaces-registers",
        "memory_spaces-latency",
        "memory_spaces-bandwidth",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[
        Headline {
            what: "dependent global load, largest footprint",
            pick: Pick {
                stem: "memory_spaces-latency",
                filter: &[("series", "global (one element per 128-byte line)")],
                column: "y",
                key: &["x"],
            },
            unit: "ns",
            higher_is_better: false,
        },
        Headline {
            what: "histogram in registers",
            pick: HISTOGRAM_REGISTERS,
            unit: "G values/s",
            higher_is_better: true,
        },
    ],
    claims: &[Claim {
        text: "a per-thread histogram in registers is faster than one in local memory",
        a: HISTOGRAM_REGISTERS,
        b: Some(Pick {
            stem: "memory_spaces-registers",
            filter: &[("kernel", "`histogram_local`")],
            column: "G values per s",
            key: &["#title"],
        }),
        at_least: 1.0,
    }],
};

pub const COALESCING: Chapter = Chapter {
    example: "coalescing",
    page: "coalescing.md",
    title: "Coalescing, alignment and the transpose",
    needs: Needs::Gpu,
    reps: FullQuick::new(20, 3),
    counted: &["coalescing-counters", "coalescing-counted"],
    writes: &[
        "coalescing-patterns",
        "coalescing-stride",
        "coalescing-offset",
        "coalescing-layout",
        "coalescing-banks",
        "coalescing-transpose",
        "coalescing-transpose-kernels",
        "coalescing-transpose-sides",
        "coalescing-transpose-pitch",
        "coalescing-readonly",
        "coalescing-readonly-ptx",
        "coalescing-readonly-sass",
        "coalescing-granularity",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[
        Headline {
            what: "transpose, padded 32x8 tile",
            pick: transpose!("padded 32x8"),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "best copy, same bytes",
            pick: transpose!("best copy"),
            unit: "GB/s",
            higher_is_better: true,
        },
    ],
    claims: &[
        Claim {
            text: "the padded 32x8 transpose reaches at least 90% of the best copy",
            a: transpose!("padded 32x8"),
            b: Some(transpose!("best copy")),
            at_least: 0.9,
        },
        Claim {
            text: "padding the shared tile makes the 32x8 transpose faster",
            a: transpose!("padded 32x8"),
            b: Some(transpose!("tile 32x8")),
            at_least: 1.0,
        },
    ],
};

pub const LOOP_PERMUTATION: Chapter = Chapter {
    example: "loop_permutation",
    page: "tiling.md",
    title: "Reuse, loop permutation, tiling",
    needs: Needs::Cpu,
    reps: FullQuick::new(21, 3),
    counted: &[],
    writes: &[
        "tiling-traversal",
        "tiling-strip",
        "tiling-strip-ranges",
        "tiling-predictions",
    ],
    sanitizer_args: &[],
    note: "CPU only",
    headlines: &[Headline {
        what: "row order, largest array",
        pick: traversal!("row order (i outer)"),
        unit: "ns/element",
        higher_is_better: false,
    }],
    claims: &[Claim {
        text: "column order is slower than row order on the largest array",
        a: traversal!("column order (j outer)"),
        b: Some(traversal!("row order (i outer)")),
        at_least: 1.0,
    }],
};

pub const TILED_MATMUL: Chapter = Chapter {
    example: "tiled_matmul",
    page: "tiling.md",
    title: "Reuse, loop permutation, tiling",
    needs: Needs::GpuAndCublas,
    reps: FullQuick::new(10, 2),
    counted: &["tiling-counters", "tiling-counted"],
    writes: &[
        "tiling-kernels",
        "tiling-verification",
        "tiling-matmul",
        "tiling-lecture",
        "tiling-out-of-core",
        "tiling-out-of-core-runs",
        "tiling-generic",
    ],
    sanitizer_args: &["--quick", "--reps", "1", "--side", "64", "--budget-mib", "1"],
    note: "",
    headlines: &[
        Headline {
            what: "best tiled step",
            pick: matmul!("6 + quadrants, double buffer", "gflops_median"),
            unit: "GFLOP/s",
            higher_is_better: true,
        },
        Headline {
            what: "cuBLAS SGEMM",
            pick: matmul!("cuBLAS SGEMM", "gflops_median"),
            unit: "GFLOP/s",
            higher_is_better: true,
        },
    ],
    claims: &[Claim {
        text: "the best tiled step reaches at least 80% of cuBLAS SGEMM",
        a: matmul!("6 + quadrants, double buffer", "percent_of_cublas"),
        b: None,
        at_least: 80.0,
    }],
};

pub const CMM_DIAGONAL: Chapter = Chapter {
    example: "cmm_diagonal",
    page: "cmm_diagonal.md",
    title: "Chained matrix multiplication and the diagonal layout",
    needs: Needs::Gpu,
    reps: FullQuick::new(10, 3),
    counted: &["cmm_diagonal-counters", "cmm_diagonal-counted"],
    writes: &[
        "cmm-worked-example",
        "cmm-layout-matrix",
        "cmm-layout-memory",
        "cmm-traffic",
        "cmm-table1-compare",
        "cmm-table1-times",
        "cmm-layout-speedup",
        "cmm-breakeven",
        "cmm-breakeven-n",
        "cmm-time-vs-n",
        "cmm-stride",
        "cmm-experiments",
        "cmm-variants",
        "cmm-streams",
        "cmm-footprint",
        "cmm-stride-alignment",
        "cmm-grid-barrier",
        "cmm-grid-barrier-costs",
    ],
    sanitizer_args: &["--quick", "--reps", "1"],
    note: "",
    headlines: &[
        Headline {
            what: "one block, row-major (the paper's kernel)",
            pick: table1!("our_rowmajor_ms"),
            unit: "ms",
            higher_is_better: false,
        },
        Headline {
            what: "one block, diagonal-major",
            pick: table1!("our_diagonal_ms"),
            unit: "ms",
            higher_is_better: false,
        },
    ],
    claims: &[
        Claim {
            text: "the diagonal layout is faster than row-major (largest n of Table 1)",
            a: table1!("our_layout_speedup"),
            b: None,
            at_least: 1.0,
        },
        Claim {
            text: "4 chains on 4 streams finish sooner than one after another",
            a: streams!("one stream, chains one after another"),
            b: Some(streams!("one stream per chain")),
            at_least: 1.0,
        },
    ],
};

pub const CMM_BEYOND: Chapter = Chapter {
    example: "cmm_beyond",
    page: "cmm_beyond.md",
    title: "CMM beyond the paper: to n = 16384",
    needs: Needs::GpuAndCublas,
    reps: FullQuick::new(10, 3),
    counted: &["cmm_beyond-counters", "cmm_beyond-counted"],
    writes: &[
        "cmm-beyond-time-vs-n",
        "cmm-beyond-targets",
        "cmm-beyond-versions",
        "cmm-beyond-chains",
        "cmm-beyond-chain-table",
        "cmm-beyond-cpu",
        "cmm-beyond-launches",
        "cmm-beyond-batch",
        "cmm-beyond-overlap",
        "cmm-beyond-paper72",
    ],
    // n = 131 (odd): three tiles per side, so every tiled kernel runs, both min-plus
    // kernels and all three sweeps included; the quick batch is 8 chains of 131 in every
    // launch, and the overlap copies n = 131 strip by strip.
    sanitizer_args: &["--quick", "--reps", "1", "--matrices", "131", "--part", "dp-batch"],
    note:
        "about 5 minutes on an H100 with 16 CPU cores, most of it the CPU references at \
           n = 16384 and of the batch's 1024 chains",
    headlines: &[
        Headline {
            what: "tiled DP, whole table, n = 1024",
            pick: Pick {
                stem: "cmm-beyond-targets",
                filter: &[("n", "1024")],
                column: "best_ms",
                key: &["n"],
            },
            unit: "ms",
            higher_is_better: false,
        },
        Headline {
            what: "tiled DP, whole table, largest n",
            pick: Pick {
                stem: "cmm-beyond-targets",
                filter: &[],
                column: "best_ms",
                key: &["n"],
            },
            unit: "ms",
            higher_is_better: false,
        },
    ],
    claims: &[Claim {
        text: "the DP's order multiplies the tall-skinny-then-wide chain faster than left to \
               right",
        a: Pick {
            stem: "cmm-beyond-chain-table",
            filter: &[("chain", "tall-skinny then wide")],
            column: "measured_ratio",
            key: &[],
        },
        b: None,
        at_least: 1.0,
    }],
};

pub const ATAX: Chapter = Chapter {
    example: "atax",
    page: "atax.md",
    title: "ATAX: two matrix-vector products",
    needs: Needs::GpuAndCublas,
    reps: FullQuick::new(30, 3),
    counted: &[
        "atax-counters",
        "atax-counted",
        "atax-pitched-counters",
        "atax-pitched-counted",
    ],
    writes: &[
        "atax-ceilings",
        "atax-kernels",
        "atax-end-to-end",
        "atax-slides",
        "atax-targets",
        "atax-shapes",
        "atax-pitched",
        "atax-playbook",
        "atax-skipped",
        "atax-speedup",
        "atax-breakdown",
        "atax-bandwidth",
        "atax-occupancy",
        "atax-one-time",
        "atax-unified",
    ],
    sanitizer_args: &["--quick", "--reps", "1", "--side", "257", "--ceiling-mib", "4"],
    note: "",
    headlines: &[
        Headline {
            what: "fused single pass, largest float matrix, L2 cold",
            pick: atax_kernel!("fused"),
            unit: "µs",
            higher_is_better: false,
        },
        Headline {
            what: "cuBLAS gemv x2, largest float matrix, L2 cold",
            pick: atax_kernel!("cuBLAS gemv ×2"),
            unit: "µs",
            higher_is_better: false,
        },
    ],
    claims: &[
        Claim {
            text:
                "the fused pass is at least 1.85x faster than cuBLAS's two gemv calls \
                   (largest float matrix, L2 cold)",
            a: atax_kernel!("cuBLAS gemv ×2"),
            b: Some(atax_kernel!("fused")),
            at_least: 1.85,
        },
        Claim {
            text:
                "pinned host memory speeds the whole program up (largest float matrix)",
            a: Pick {
                stem: "atax-end-to-end",
                filter: &[("type", "float"), ("strategy", "pinned, baseline")],
                column: "speedup_median",
                key: &["dataset"],
            },
            b: None,
            at_least: 1.0,
        },
    ],
};

pub const HOPPER_MEMORY: Chapter = Chapter {
    example: "hopper_memory",
    page: "hopper_memory.md",
    title: "Asynchronous memory on Hopper",
    needs: Needs::Gpu,
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
    headlines: &[Headline {
        what: "__syncthreads, 256 threads",
        pick: pick!(
            "hopper_memory-ladder",
            [("barrier", "__syncthreads"), ("who", "256 threads (one block)")],
            "median_ns",
            []
        ),
        unit: "ns",
        higher_is_better: false,
    }],
    claims: &[],
};

pub const MULTI_GPU: Chapter = Chapter {
    example: "multi_gpu",
    page: "multi_gpu.md",
    title: "Memory across GPUs",
    needs: Needs::GpuAndNccl,
    reps: FullQuick::new(10, 3),
    counted: &["multi_gpu-counters", "multi_gpu-counted"],
    writes: &[
        "multi_gpu-devices",
        "multi_gpu-topology",
        "multi_gpu-peer-summary",
        "multi_gpu-peer",
        "multi_gpu-both-ways",
        "multi_gpu-in-flight",
        "multi_gpu-latency",
        "multi_gpu-collectives",
        "multi_gpu-collectives-time",
        "multi_gpu-collectives-table",
        "multi_gpu-torch",
        "multi_gpu-atax-table",
        "multi_gpu-atax",
        "multi_gpu-targets",
    ],
    sanitizer_args: &["--quick", "--reps", "1", "--peer-mib", "1", "--collective-mib", "1"],
    note: "needs NCCL; two GPUs or more for all of it; run src/multi_gpu/torch_reference.py \
           first for the PyTorch comparison",
    headlines: &[
        Headline {
            what: "peer copy, copy engine, one way",
            pick: peer!("copy engine, one way"),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "peer copy, copy engine, both ways at once",
            pick: peer!("copy engine, both ways"),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "NCCL all-reduce bus bandwidth, largest size",
            pick: pick!(
                "multi_gpu-collectives-table",
                [("collective", "all-reduce")],
                "busbw GB/s",
                ["size"]
            ),
            unit: "GB/s",
            higher_is_better: true,
        },
        Headline {
            what: "dependent load of the peer GPU's memory",
            pick: pick!(
                "multi_gpu-latency",
                [("GPU loads from", "the peer GPU's memory")],
                "ns per load",
                ["footprint"]
            ),
            unit: "ns",
            higher_is_better: false,
        },
    ],
    claims: &[
        Claim {
            text: "a kernel that reads the peer's memory reaches at least 90% of the copy \
                   engines (largest copy)",
            a: peer!("kernel reads the peer"),
            b: Some(peer!("copy engine, one way")),
            at_least: 0.9,
        },
        Claim {
            text: "a copy over the peer link is faster than one through the host",
            a: peer!("copy engine, one way"),
            b: Some(peer!("through the host, 8 chunks")),
            at_least: 1.0,
        },
        Claim {
            text: "NCCL's all-reduce through cudarc reaches at least 95% of torch.distributed's \
                   bus bandwidth (largest size)",
            a: pick!("multi_gpu-torch", [], "cudarc / torch", ["size"]),
            b: None,
            at_least: 0.95,
        },
        Claim {
            text: "splitting ATAX's rows over two GPUs makes the kernels at least 1.8x faster \
                   (largest matrix)",
            // One GPU's time over two GPUs' at the same matrix: a run on one GPU has no
            // second row, and the claim is "not measured" there rather than failed.
            a: pick!("multi_gpu-atax-table", [("GPUs", "1")], "kernels µs", ["matrix"]),
            b: Some(pick!("multi_gpu-atax-table", [("GPUs", "2")], "kernels µs", ["matrix"])),
            at_least: 1.8,
        },
    ],
};
