//! The steps of the tiled matrix multiply, and what each should cost before it is measured.
//!
//! `C = A B` with `A` M x K, `B` K x N, all float and row-major, takes `2 M N K` floating-point
//! operations (one multiply and one add per term). The counts below are per FLOP and assume
//! nothing is served by a cache between the kernel and the memory the count names: they are
//! what the code asks for, the number a cache has to make up for.

use super::device::TilingKernel;

/// One step of the chapter's sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// One thread per element of C, operands from global memory.
    Naive,
    /// The lecture's 16 x 16 shared-memory tiles.
    Tiled16,
    /// Step 2 with its tiles handed to the blocks in groups of [`GROUP_ROWS`] rows
    /// ([`grouped_tile`]): a variant of step 2, not a step of its own.
    Tiled16Grouped,
    /// The same with 32 x 32 tiles.
    Tiled32,
    /// 128 x 128 x 8 block tile, 8 x 8 results per thread in registers, scalar global loads.
    Regs8x8,
    /// The same kernel with float4 global loads (where K and N are multiples of 4).
    Float4,
    /// 4 x 4 quadrants read as float4 from shared memory, and two shared buffers.
    QuadDoubleBuffer,
    /// cuBLAS SGEMM (FP32, TF32 off): the reference.
    Cublas,
}

impl Step {
    pub const ALL: [Step; 8] = [
        Step::Naive,
        Step::Tiled16,
        Step::Tiled16Grouped,
        Step::Tiled32,
        Step::Regs8x8,
        Step::Float4,
        Step::QuadDoubleBuffer,
        Step::Cublas,
    ];

    /// The name in figures and tables.
    pub fn label(self) -> &'static str {
        match self {
            Step::Naive => "1 naive",
            Step::Tiled16 => "2 shared 16x16",
            Step::Tiled16Grouped => "2b shared 16x16, 8-row groups",
            Step::Tiled32 => "3 shared 32x32",
            Step::Regs8x8 => "4 registers 8x8",
            Step::Float4 => "5 + float4 loads",
            Step::QuadDoubleBuffer => "6 + quadrants, double buffer",
            Step::Cublas => "cuBLAS SGEMM",
        }
    }

    /// The kernel of `kernels/tiling.cu` that runs this step, `None` for cuBLAS.
    pub fn kernel(self) -> Option<TilingKernel> {
        match self {
            Step::Naive => Some(TilingKernel::Naive),
            Step::Tiled16 => Some(TilingKernel::Tiled16),
            Step::Tiled16Grouped => Some(TilingKernel::Tiled16Grouped),
            Step::Tiled32 => Some(TilingKernel::Tiled32),
            Step::Regs8x8 | Step::Float4 => Some(TilingKernel::Regs8x8),
            Step::QuadDoubleBuffer => Some(TilingKernel::QuadDoubleBuffer),
            Step::Cublas => None,
        }
    }

    /// Threads per block as (x, y).
    pub fn block(self) -> (u32, u32) {
        match self {
            Step::Naive | Step::Tiled16 | Step::Tiled16Grouped => (16, 16),
            Step::Tiled32 => (32, 32),
            Step::Regs8x8 | Step::Float4 | Step::QuadDoubleBuffer => (256, 1),
            Step::Cublas => (0, 0),
        }
    }

    /// The block's tile of C, (rows, columns).
    pub fn block_tile(self) -> (usize, usize) {
        match self {
            Step::Naive | Step::Tiled16 | Step::Tiled16Grouped => (16, 16),
            Step::Tiled32 => (32, 32),
            Step::Regs8x8 | Step::Float4 | Step::QuadDoubleBuffer => (128, 128),
            Step::Cublas => (0, 0),
        }
    }

    /// The grid for an M x N result: x over columns, y over rows.
    pub fn grid(self, m: usize, n: usize) -> (u32, u32) {
        let (tm, tn) = self.block_tile();
        (n.div_ceil(tn.max(1)) as u32, m.div_ceil(tm.max(1)) as u32)
    }

    /// Bytes of global memory the kernel's loads ask for, per FLOP.
    /// - naive: every multiply-add loads one float of A and one of B: 8 bytes per 2 FLOP;
    /// - a square T x T shared tile: per step of T in k, a thread loads 2 floats and does
    ///   T multiply-adds: 8 / (2 T) bytes per FLOP;
    /// - a BM x BN block tile: per k, BM + BN floats for BM BN multiply-adds.
    pub fn global_bytes_per_flop(self) -> Option<f64> {
        match self {
            Step::Naive => Some(4.0),
            Step::Cublas => None,
            _ => {
                let (bm, bn) = self.block_tile();
                Some(4.0 * (bm + bn) as f64 / (2.0 * (bm * bn) as f64))
            }
        }
    }

    /// Bytes read from shared memory per FLOP: one float of each tile per multiply-add for the
    /// square tiles; TM + TN floats per TM TN multiply-adds with register blocking.
    pub fn shared_bytes_per_flop(self) -> Option<f64> {
        match self {
            Step::Naive | Step::Cublas => None,
            Step::Tiled16 | Step::Tiled16Grouped | Step::Tiled32 => Some(4.0),
            Step::Regs8x8 | Step::Float4 | Step::QuadDoubleBuffer => {
                Some(4.0 * (8 + 8) as f64 / (2.0 * 64.0))
            }
        }
    }

    /// The float offsets in a B-tile row that lane `lane` of a warp reads with its two float4
    /// shared loads per k (steps 4 to 6); `None` for the other steps.
    pub fn b_tile_float4_offsets(self, lane: usize) -> Option<[usize; 2]> {
        let tc = lane % 16;
        match self {
            Step::Regs8x8 | Step::Float4 => Some([tc * 8, tc * 8 + 4]),
            Step::QuadDoubleBuffer => Some([tc * 4, 64 + tc * 4]),
            _ => None,
        }
    }

    /// Shared-memory wavefronts one warp needs for one float4 read of the B tile, in the
    /// model where a 128-bit load is served a quarter-warp (8 lanes) at a time and each
    /// quarter needs as many wavefronts as the most distinct 16-byte chunks that fall on the
    /// same 4 banks. 4 is conflict-free.
    pub fn b_tile_wavefronts(self) -> Option<usize> {
        self.b_tile_float4_offsets(0)?;
        let mut worst = 0;
        for load in 0..2 {
            let mut total = 0;
            for quarter in 0..4 {
                let mut chunks: Vec<usize> = (8 * quarter..8 * quarter + 8)
                    .map(|lane| self.b_tile_float4_offsets(lane).unwrap()[load] / 4)
                    .collect();
                chunks.sort_unstable();
                chunks.dedup();
                total += (0..8)
                    .map(|group| chunks.iter().filter(|&&c| c % 8 == group).count())
                    .max()
                    .unwrap_or(0);
            }
            worst = worst.max(total);
        }
        Some(worst)
    }
}

/// Rows of tiles per group in step 2b: 8 rows of 16 x 16 tiles share each band of B's
/// columns, 16 columns wide, while it is in L2.
pub const GROUP_ROWS: u32 = 8;

/// The tile, (row, column), that block `id` (its linear index in a grid `across` tiles
/// wide and `down` tiles high, x fastest) computes in step 2b: the tiles are numbered down
/// each group of `group` rows first, then across; the last group may have fewer rows.
/// `matmul_tiled16_grouped` in `kernels/tiling.cu` computes the same.
pub fn grouped_tile(id: u64, across: u64, down: u64, group: u64) -> (u64, u64) {
    let first_row = id / (group * across) * group;
    let rows = group.min(down - first_row);
    let in_group = id - first_row * across;
    (first_row + in_group % rows, in_group / rows)
}

/// Floating-point operations of an M x N x K multiply.
pub fn flops(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// The verification tolerance for a sum of K products of inputs in [-1, 1): float rounding
/// grows with the number of terms, so the bound is `2 K` float epsilons (absolute).
pub fn tolerance(k: usize) -> crate::harness::Tolerance {
    crate::harness::Tolerance::new(2.0 * k as f64 * f32::EPSILON as f64, 0.0)
}
