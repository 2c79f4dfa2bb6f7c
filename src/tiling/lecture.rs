//! The numbers of the CS6963 lecture L6 that the chapter sets beside its own, kept as data.
//!
//! Source: "L6: Memory Hierarchy Optimization I, Data Placement", CS6963, University of
//! Utah, spring 2009 (`../shared/seeds/002_e1ad9e09ef32c8d1.txt`), whose matrix-multiply
//! slides are credited to David Kirk/NVIDIA and Wen-mei W. Hwu, ECE 498AL (2007). Every
//! constant says where it stands, and what is our reading rather than the slide's word.

/// The slide "CUDA Code - Save Result": the tiled multiply "should run at about 45 GFLOPS".
/// The slide gives neither the matrix size nor how it was timed.
pub const TILED_GFLOPS: f64 = 45.0;

/// The tile of that multiply (`BLOCK_SIZE`, slide "Shared Memory Usage").
pub const TILE: usize = 16;

/// The lecture does not name its GPU. Its slides "Shared Memory Usage" and "First-order Size
/// Considerations" are Kirk and Hwu's, whose own copies are titled "G80 Shared Memory and
/// Threading" and "First-order Size Considerations in G80"; the figures they use (16 KB of
/// shared memory per SM, at most 8 blocks, uncached global memory) are those of compute
/// capability 1.0. We take the G80 in its GeForce 8800 GTX form as the lecture's GPU.
pub const GPU: &str = "NVIDIA GeForce 8800 GTX (G80, compute capability 1.0)";

/// Stream processors of the GeForce 8800 GTX (NVIDIA's product specification, 2006).
pub const GPU_CORES: u32 = 128;

/// Their clock, the "shader clock", in MHz (NVIDIA's product specification, 2006).
pub const GPU_SHADER_CLOCK_MHZ: f64 = 1350.0;

/// FLOPs per core and clock that a multiply-add counts: 2. (NVIDIA's headline of 518
/// GFLOP/s counts 3, adding a multiply that the G80 could issue beside the multiply-add;
/// a matrix multiply's inner loop is multiply-adds, so 2 is its ceiling.)
pub const FLOPS_PER_CORE_CLOCK: f64 = 2.0;

/// The G80's multiply-add peak in GFLOP/s: 128 x 1.35 GHz x 2 = 345.6.
pub fn gpu_peak_gflops() -> f64 {
    GPU_CORES as f64 * GPU_SHADER_CLOCK_MHZ / 1000.0 * FLOPS_PER_CORE_CLOCK
}

/// Where the peak comes from, for the table's provenance.
pub const PEAK_SOURCE: &str = "NVIDIA GeForce 8800 GTX specification: 128 stream \
processors at a 1350 MHz shader clock; 2 FLOPs per multiply-add";
