//! The numbers Seifi & Al-Mamun 2024 report, kept as data so the chapter can set them beside
//! ours.
//!
//! Source: N. Seifi and A. Al-Mamun, "Optimizing Memory Access Efficiency in CUDA Kernel via
//! Data Layout Technique", *Journal of Computer and Communications* 12 (2024) 124-139,
//! <https://doi.org/10.4236/jcc.2024.125009>, CC BY 4.0. Every constant below says where in the
//! paper it stands. Only what the paper states is recorded; what it leaves out is said to be
//! left out.

/// Full citation, for captions and CSV provenance.
pub const CITATION: &str = "Seifi, N. and Al-Mamun, A. (2024) Optimizing Memory Access \
Efficiency in CUDA Kernel via Data Layout Technique. Journal of Computer and Communications, \
12, 124-139. https://doi.org/10.4236/jcc.2024.125009";

/// The worked example of Section 4: `A (20x2) B (2x30) C (30x12) D (12x8)`.
///
/// Section 5's input description lists `dim = [20, 2, 30, 12]` for this example, one entry
/// short of the `n + 1 = 5` its own specification (`dim[0..n]`) requires; the full chain is the
/// one of Section 4, used here.
pub const WORKED_EXAMPLE_DIMS: [u32; 5] = [20, 2, 30, 12, 8];

/// The five orders of the worked example with the costs the paper lists (Section 4), in the
/// paper's order and its letter notation (`A` = `A1`, ..., `D` = `A4`).
pub const WORKED_EXAMPLE_ORDERS: [(&str, u64); 5] = [
    ("A(B(CD))", 3680),
    ("(AB)(CD)", 8880),
    ("A((BC)D)", 1232),
    ("((AB)C)D", 10320),
    ("(A(BC))D", 3120),
];

/// The optimum of the worked example, `A((BC)D)` (Section 4: "the third order is the optimal").
pub const WORKED_EXAMPLE_OPTIMUM: u64 = 1232;

/// The GPU of every measurement (Section 8).
pub const GPU: &str = "NVIDIA Tesla V100";

/// The CPU of the serial measurements: the paper does not name it (nor the compiler, its flags,
/// the CUDA version or the clock settings).
pub const CPU: Option<&str> = None;

/// How time was measured (Section 8, Listing 5): CUDA events around "the kernel execution part".
/// Whether the host-device copies fall inside the events is not stated; the discussion of
/// Figure 6 names copy overheads as the reason the GPU loses for small `n`, which suggests
/// they do.
pub const TIMING_METHOD: &str = "cudaEventRecord / cudaEventElapsedTime";

/// One row of Table 1 ("Execution time comparison"), all times in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Table1Row {
    /// Matrices in the chain.
    pub n: u32,
    /// "Serial Version": the CPU program of Listing 1.
    pub serial_ms: f64,
    /// "CUDA Version": one block of `n` threads, row-major table.
    pub cuda_ms: f64,
    /// "Optimized Version": the same with the diagonal-major layout.
    pub data_layout_ms: f64,
}

/// Table 1 of the paper, as printed (the text copy used here is legible in every cell).
/// The serial time is not monotone in `n` (1022: 1259.42 ms, 1023: 1256.18 ms), as printed.
#[rustfmt::skip]
pub const TABLE_1: [Table1Row; 9] = [
    Table1Row { n: 1016, serial_ms: 1157.647583, cuda_ms: 503.206451, data_layout_ms: 266.664520 },
    Table1Row { n: 1017, serial_ms: 1183.510132, cuda_ms: 507.065765, data_layout_ms: 267.320587 },
    Table1Row { n: 1018, serial_ms: 1208.149780, cuda_ms: 511.924133, data_layout_ms: 267.948944 },
    Table1Row { n: 1019, serial_ms: 1211.987061, cuda_ms: 515.101715, data_layout_ms: 268.627838 },
    Table1Row { n: 1020, serial_ms: 1235.212158, cuda_ms: 522.914734, data_layout_ms: 269.454285 },
    Table1Row { n: 1021, serial_ms: 1248.945190, cuda_ms: 529.627014, data_layout_ms: 269.582947 },
    Table1Row { n: 1022, serial_ms: 1259.422119, cuda_ms: 533.740570, data_layout_ms: 270.263611 },
    Table1Row { n: 1023, serial_ms: 1256.181274, cuda_ms: 536.718445, data_layout_ms: 270.705872 },
    Table1Row { n: 1024, serial_ms: 1287.330811, cuda_ms: 542.061615, data_layout_ms: 271.926453 },
];

/// The largest `n` the one-block kernel runs (Section 8): one thread per row of a diagonal and
/// at most 1024 threads per block.
pub const ONE_BLOCK_MAX_N: u32 = 1024;

/// Where the CUDA version starts to beat the serial one (Section 8, Figure 6: "around 218").
pub const BREAKEVEN_N: u32 = 218;

/// The range of `n` plotted in Figure 6.
pub const FIGURE_6_N_RANGE: (u32, u32) = (10, 400);

/// Kernel launch overhead, "relatively fixed at around 0.4 ms" (Section 8, discussing Figure 6).
pub const LAUNCH_OVERHEAD_MS: f64 = 0.4;

/// CUDA over serial at `n = 1024`: "2.4x" (Section 8; 1287 ms vs 542 ms in Table 1).
pub const CUDA_OVER_SERIAL_AT_1024: f64 = 2.4;

/// Data layout over plain CUDA: "up to 2x", "average speedup exceeding 1.8x" (Section 8, on
/// Figure 7). The paragraph on Figure 8 instead gives an average of 1.9x and a maximum of 2.04x;
/// see [`LAYOUT_SPEEDUP_AVERAGE_FIG8`] and [`LAYOUT_SPEEDUP_MAX_FIG8`].
pub const LAYOUT_SPEEDUP_AVERAGE_FIG7: f64 = 1.8;

/// Data layout over plain CUDA, average, as stated for Figure 8.
pub const LAYOUT_SPEEDUP_AVERAGE_FIG8: f64 = 1.9;

/// Data layout over plain CUDA, largest, as stated for Figure 8. No row of Table 1 reaches it
/// (the largest ratio there is 542.06 / 271.93 = 1.99 at `n = 1024`), so it comes from sizes
/// the table does not list.
pub const LAYOUT_SPEEDUP_MAX_FIG8: f64 = 2.04;

/// Data layout and CUDA together over serial: "a combined 4x" (Section 8).
pub const COMBINED_OVER_SERIAL: f64 = 4.0;

/// "Several threads per cell" (Section 7.1): a 16 x 16 block cooperates on each cell ...
pub const THREADS_PER_CELL: u32 = 16 * 16;

/// ... which "reduces kernel time by 41%" compared with one thread per cell (Section 7.1).
pub const THREADS_PER_CELL_KERNEL_TIME_REDUCTION_PERCENT: u32 = 41;

/// CUDA cores per SM *as the paper states them* (Section 7.1, "128 CUDA cores per SM", from
/// which it concludes that an SM processes two cells at once). A V100 SM has 64 FP32 cores
/// according to NVIDIA's Volta documentation; the number is kept as printed.
pub const CORES_PER_SM_AS_STATED: u32 = 128;

/// "2D thread block decomposition" (Section 7.1): each diagonal spread over `N/16 x N/16`
/// blocks of 16 x 16 threads gives "a 23% kernel speedup over the parallel diagonal method
/// alone".
pub const BLOCKS_2D_KERNEL_SPEEDUP_PERCENT: u32 = 23;

/// Streams (Section 7.2): "with 2 streams per instance, we get up to 4x speedup with 4 problems
/// run in parallel". The paper does not give the `n`, the baseline or the times.
pub const STREAMS_PER_INSTANCE: u32 = 2;

/// Independent problem instances run concurrently in the streams experiment (Section 7.2).
pub const STREAMS_PROBLEMS: u32 = 4;

/// The speedup stated for those concurrent instances (Section 7.2).
pub const STREAMS_SPEEDUP: f64 = 4.0;

/// The abstract's headline: "a substantial 50% decrease in execution time".
pub const ABSTRACT_TIME_DECREASE_PERCENT: u32 = 50;
