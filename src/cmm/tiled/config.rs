//! What a tiled solve is made of: the kernels of each version (`Config`), the shared
//! memory and threads each asks for, and the chains the kernels can solve exactly.

use super::{tile_diagonals, TiledKernel};
use crate::cmm::dp::{gpu_safe_bound_key48, validate_dims};
use crate::harness::UsageError;

/// Which min-plus kernel a solve uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinPlus {
    /// 64-bit keys `cost << 16 | split` (`cmm_tiled_minplus_u64`): any chain the key fits.
    U64,
    /// 32-bit costs and a split register, DPX minimum (`cmm_tiled_minplus_u32`): only a chain
    /// whose bound `(n - 1) max(p)^3` the host proves below `2^32`.
    U32,
}

/// Which sweep a solve uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// `cmm_tiled_wavefront_u64`: 1024 threads, 4 cells each.
    Pushed,
    /// `cmm_tiled_wavefront_lean_u64`: 512 threads, 8 cells each, invariants hoisted.
    Lean,
    /// `cmm_tiled_wavefront_u32`: the first sweep's threads and cells with 32-bit costs
    /// (only a chain whose bound the host proves below `2^32 - 1`).
    U32,
    /// `cmm_tiled_wavefront_ordered_u32`: 32-bit costs, each warp's cells finishing
    /// together, so that warps whose cells are final stop issuing (same bound).
    Ordered,
    /// `cmm_tiled_wavefront_quadrants_u32`: 32-bit costs, the block in four 32 x 32
    /// quadrants swept in three phases with min-plus products between (same bound).
    Quadrants,
}

/// The kernels of one tiled solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    pub minplus: MinPlus,
    pub sweep: Sweep,
}

impl Config {
    /// The chapter's first tiled program.
    pub const FIRST: Config = Config { minplus: MinPlus::U64, sweep: Sweep::Pushed };

    /// The fastest kernels that solve `dims` exactly: 32-bit costs where the bound proves
    /// they fit, 64-bit keys otherwise (the answer is the same; only the speed differs).
    pub fn best_for(dims: &[u32]) -> Config {
        // The lean sweep measured slower than the first one, the sweep in quadrants faster
        // than every other 32-bit sweep (the chapter's versions table).
        if fits_u32(dims) {
            Config { minplus: MinPlus::U32, sweep: Sweep::Quadrants }
        } else {
            Config { minplus: MinPlus::U64, sweep: Sweep::Pushed }
        }
    }

    /// A short name for tables: `u64 keys, pushed sweep`.
    pub fn label(self) -> String {
        let minplus = match self.minplus {
            MinPlus::U64 => "u64 keys",
            MinPlus::U32 => "u32 costs + DPX",
        };
        let sweep = match self.sweep {
            Sweep::Pushed => "u64 sweep",
            Sweep::Lean => "lean u64 sweep",
            Sweep::U32 => "u32 sweep",
            Sweep::Ordered => "ordered u32 sweep",
            Sweep::Quadrants => "u32 sweep in quadrants",
        };
        format!("{minplus}, {sweep}")
    }

    /// Dynamic shared memory of the min-plus kernel.
    pub fn minplus_shared_bytes(self) -> u32 {
        match self.minplus {
            MinPlus::U64 => 0,
            MinPlus::U32 => MINPLUS_U32_SHARED_BYTES,
        }
    }

    /// Threads per block of the sweep.
    pub fn sweep_threads(self) -> u32 {
        match self.sweep {
            Sweep::Pushed | Sweep::U32 | Sweep::Ordered | Sweep::Quadrants => {
                SWEEP_THREADS
            }
            Sweep::Lean => LEAN_THREADS,
        }
    }

    /// Dynamic shared memory of the sweep: three 64 x 64 tiles of keys or of costs.
    pub fn sweep_shared_bytes(self) -> u32 {
        match self.sweep {
            Sweep::Pushed | Sweep::Lean => SWEEP_SHARED_BYTES,
            Sweep::U32 => SWEEP_U32_SHARED_BYTES,
            Sweep::Ordered => SWEEP_ORDERED_SHARED_BYTES,
            Sweep::Quadrants => SWEEP_QUADRANTS_SHARED_BYTES,
        }
    }

    /// The min-plus and sweep kernels of this configuration.
    pub fn kernels(self) -> (TiledKernel, TiledKernel) {
        let minplus = match self.minplus {
            MinPlus::U64 => TiledKernel::MinPlus,
            MinPlus::U32 => TiledKernel::MinPlusU32,
        };
        let sweep = match self.sweep {
            Sweep::Pushed => TiledKernel::Wavefront,
            Sweep::Lean => TiledKernel::WavefrontLean,
            Sweep::U32 => TiledKernel::WavefrontU32,
            Sweep::Ordered => TiledKernel::WavefrontOrdered,
            Sweep::Quadrants => TiledKernel::WavefrontQuadrants,
        };
        (minplus, sweep)
    }

    /// Whether this configuration needs the 32-bit bound.
    pub fn needs_u32(self) -> bool {
        self.minplus == MinPlus::U32
            || matches!(self.sweep, Sweep::U32 | Sweep::Ordered | Sweep::Quadrants)
    }
}

/// Whether the 32-bit kernels solve `dims` exactly: every value the DP computes, every
/// candidate included, is at most `(n - 1) max(p)^3`, and the host proves that below
/// `2^32 - 1` (so that no cost equals the sweep's "no candidate yet" word).
pub fn fits_u32(dims: &[u32]) -> bool {
    crate::cmm::dp::cost_upper_bound(dims).is_ok_and(|b| b < u128::from(u32::MAX))
}

/// Points per tile side (`TILE` in the kernel).
pub const TILE: usize = 64;

/// Points c a min-plus block stages at a time (`HALF` in the kernel): its work comes in
/// slices of this many c.
pub const MINPLUS_SLICE: usize = 32;

/// Threads per block of the min-plus kernel (`THREADS`) and of the two sweeps (`SWEEP_THREADS`).
pub const THREADS: u32 = 256;

pub const SWEEP_THREADS: u32 = 1024;

/// Threads per block of the lean sweep (`LEAN_THREADS`).
pub const LEAN_THREADS: u32 = 512;

/// Bits of a key that hold the split (`SPLIT_BITS`).
pub const SPLIT_BITS: u32 = 16;

/// Dynamic shared memory of the two sweeping kernels: three 64 x 64 tiles of 8-byte keys,
/// each row padded by one key (`ROW` in the kernel) against bank conflicts.
pub const SWEEP_SHARED_BYTES: u32 = 3 * (TILE * (TILE + 1) * 8) as u32;

/// Dynamic shared memory of the 32-bit sweep: three 64 x 64 tiles of 4-byte costs.
pub const SWEEP_U32_SHARED_BYTES: u32 = 3 * (TILE * TILE * 4) as u32;

/// Dynamic shared memory of the ordered sweep: the three cost tiles and 16-bit splits.
pub const SWEEP_ORDERED_SHARED_BYTES: u32 =
    SWEEP_U32_SHARED_BYTES + (TILE * TILE * 2) as u32;

/// Dynamic shared memory of the sweep in quadrants: the dimensions of both tiles and three
/// tiles of costs (rows padded to 66), with 32 words or rows of slack around and between
/// them (`QUAD_SLACK`) for the operands of candidates loaded and then discarded.
pub const SWEEP_QUADRANTS_SHARED_BYTES: u32 = {
    const SLACK: usize = 32;
    const ROW: usize = TILE + 2;
    (2 * (SLACK + TILE + SLACK) * 4
        + SLACK * 4
        + 3 * TILE * ROW * 4
        + 2 * SLACK * ROW * 4) as u32
};

/// Dynamic shared memory of the 32-bit min-plus kernel: the raw keys of the next slice's
/// two strips (64 x 32 and 32 x 64), their costs, and 32 dimensions.
pub const MINPLUS_U32_SHARED_BYTES: u32 = (2 * TILE * MINPLUS_SLICE * 8
    + 2 * TILE * MINPLUS_SLICE * 4
    + MINPLUS_SLICE * 4) as u32;

/// The most matrices: every split and every point index must fit the key's 16 low bits.
pub const MAX_N: usize = (1 << SPLIT_BITS) - 2;

impl Config {
    /// [`dependent_steps`](super::dependent_steps) for this configuration's sweep: the sweep in quadrants takes
    /// three sweeps of 2 x 32 - 1 steps per block diagonal, the others one of 2 x 64 - 1.
    pub fn dependent_steps(self, n: usize) -> usize {
        let per_block_diagonal = match self.sweep {
            Sweep::Quadrants => 3 * (TILE - 1),
            _ => 2 * TILE - 1,
        };
        (TILE - 1) + (tile_diagonals(n) - 1) * per_block_diagonal
    }
}

/// Refuses a chain the tiled kernels cannot solve exactly; returns `n`.
pub fn check(dims: &[u32]) -> Result<usize, UsageError> {
    let n = validate_dims(dims).map_err(|e| UsageError(e.to_string()))?;
    if n > MAX_N {
        return Err(UsageError(format!("n = {n} matrices is too many for the tiled kernels: splits are kept in 16 bits, so n <= {MAX_N}")));
    }
    if let Some(p) = dims.iter().find(|&&p| p >= 1 << SPLIT_BITS) {
        return Err(UsageError(format!("dimension {p} is too large for the tiled kernels: p[a] p[c] must fit 32 bits, so every dimension < 65536")));
    }
    gpu_safe_bound_key48(dims).map_err(|e| {
        UsageError(format!("the tiled kernels cannot solve this chain exactly: {e}"))
    })?;
    Ok(n)
}
