//! The tiled CMM program (`kernels/cmm_tiled.cu`): block diagonals of 64 x 64 tiles, the big
//! k ranges as split min-plus products, the rest as a shared-memory wavefront. Solves the
//! whole table of chains far past the paper's one-block limit of n = 1024.

use std::sync::Arc;

use cudarc::driver::sys::{
    CUfunction_attribute_enum, CUgraphInstantiate_flags, CUstreamCaptureMode,
};
use cudarc::driver::{CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::dp::{gpu_safe_bound_key48, validate_dims, DpTable};
use super::layout::Layout;
use crate::harness::kernels::KernelTable;
use crate::harness::timing::Plan;
use crate::harness::{Gpu, Stats, UsageError, Verified};

crate::kernel_names! {
    /// The functions of `kernels/cmm_tiled.cu`.
    pub enum TiledKernel in "cmm_tiled.cu" {
        /// Block diagonal 0: every 64 x 64 tile on the main diagonal, swept alone.
        DiagonalBlocks => "cmm_tiled_diagonal_blocks_u64",
        /// The big k ranges of block diagonal D as split min-plus tile products.
        MinPlus => "cmm_tiled_minplus_u64",
        /// The rest of block diagonal D: the shared-memory wavefront sweep.
        Wavefront => "cmm_tiled_wavefront_u64",
        /// The min-plus products with 32-bit costs and Hopper's DPX minimum.
        MinPlusU32 => "cmm_tiled_minplus_u32",
        /// The sweep with half the threads and the step-invariant work hoisted.
        WavefrontLean => "cmm_tiled_wavefront_lean_u64",
        /// The sweep with 32-bit costs.
        WavefrontU32 => "cmm_tiled_wavefront_u32",
        /// The 32-bit sweep with its cells dealt out in the order they finish.
        WavefrontOrdered => "cmm_tiled_wavefront_ordered_u32",
        /// The 32-bit sweep in quadrants: three short sweeps and min-plus between them.
        WavefrontQuadrants => "cmm_tiled_wavefront_quadrants_u32",
    }
}

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
    super::dp::cost_upper_bound(dims).is_ok_and(|b| b < u128::from(u32::MAX))
}

/// Points per tile side (`TILE` in the kernel).
pub const TILE: usize = 64;
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

/// The tiled kernels, loaded once.
pub struct TiledKernels<'g> {
    gpu: &'g Gpu,
    table: KernelTable<TiledKernel>,
    /// Blocks of the min-plus kernel one wave of the GPU holds.
    minplus_wave: u32,
}

/// One chain, or a batch of chains of one length, on the device for the tiled kernels.
pub struct TiledProblem {
    pub n: usize,
    /// Chains solved together (the launches' `gridDim.z`); 1 for a single chain.
    pub chains: usize,
    pub config: Config,
    /// Tiles per side: `ceil((n + 1) / 64)`.
    pub tiles: usize,
    pub dims: CudaSlice<u32>,
    /// Per chain, `n + 1` dimensions and `stride x stride` keys `cost << 16 | split`,
    /// `T[a][b]` at `a * stride + b`; chain `z` starts at `z (n + 1)` and `z stride^2`.
    pub keys: CudaSlice<u64>,
}

impl TiledProblem {
    /// Row stride of the key table, a whole number of tiles.
    pub fn stride(&self) -> usize {
        self.tiles * TILE
    }

    /// Keys of one chain.
    pub fn keys_per_chain(&self) -> usize {
        self.stride() * self.stride()
    }
}

/// Block diagonals of a chain of `n` matrices: tiles per side, `ceil((n + 1) / 64)`.
pub fn tile_diagonals(n: usize) -> usize {
    (n + 1).div_ceil(TILE)
}

/// The longest chain of steps that must follow one another in a solve, each a barrier after
/// the last: the 63 diagonals of block diagonal 0, then the 2 x 64 - 1 anti-diagonals of the
/// sweep of every further block diagonal. Whatever the GPU's width, a solve takes at least
/// this many times the duration of one step.
pub fn dependent_steps(n: usize) -> usize {
    (TILE - 1) + (tile_diagonals(n) - 1) * (2 * TILE - 1)
}

impl Config {
    /// [`dependent_steps`] for this configuration's sweep: the sweep in quadrants takes
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

/// Points c a min-plus block stages at a time (`HALF` in the kernel): its work comes in
/// slices of this many c.
pub const MINPLUS_SLICE: usize = 32;

/// How the min-plus launch of block diagonal `d` splits its work: `(chunk, splits)`, the
/// slices of [`MINPLUS_SLICE`] points c per block and the blocks per block of the diagonal,
/// so that `tiles_on_diagonal * splits` blocks fill about two waves of the GPU even on the
/// last block diagonals (and, at small n, where every launch is on the critical path, the
/// blocks are short).
pub fn minplus_split(tiles: usize, d: usize, wave: u32) -> (usize, usize) {
    let slices = (d - 1) * (TILE / MINPLUS_SLICE);
    let on_diagonal = tiles - d;
    let wanted_splits = (2 * wave as usize).div_ceil(on_diagonal).clamp(1, slices);
    let chunk = slices.div_ceil(wanted_splits);
    (chunk, slices.div_ceil(chunk))
}

impl<'g> TiledKernels<'g> {
    pub fn load(gpu: &'g Gpu) -> anyhow::Result<Self> {
        let table = KernelTable::<TiledKernel>::load(gpu)?;
        // 96 KiB of dynamic shared memory is past the 48 KiB a launch gets without asking.
        for sweep in [
            TiledKernel::DiagonalBlocks,
            TiledKernel::Wavefront,
            TiledKernel::WavefrontLean,
            TiledKernel::WavefrontU32,
            TiledKernel::WavefrontOrdered,
            TiledKernel::WavefrontQuadrants,
        ] {
            table.get(sweep).set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                SWEEP_SHARED_BYTES as i32,
            )?;
        }
        table.get(TiledKernel::MinPlusU32).set_attribute(
            CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            MINPLUS_U32_SHARED_BYTES as i32,
        )?;
        let per_sm = table
            .get(TiledKernel::MinPlus)
            .occupancy_max_active_blocks_per_multiprocessor(THREADS, 0, None)?
            .max(1);
        let minplus_wave = per_sm * gpu.info.sms as u32;
        Ok(Self { gpu, table, minplus_wave })
    }

    /// Checks the chain, uploads `dims` and allocates the key table, for the chapter's
    /// first tiled program.
    pub fn prepare(&self, dims: &[u32]) -> anyhow::Result<TiledProblem> {
        self.prepare_batch(std::slice::from_ref(&dims.to_vec()), Config::FIRST)
    }

    /// Checks every chain (all of one length) for `config`, uploads the dimensions and
    /// allocates one key table per chain. A chain the 32-bit kernel cannot solve exactly is
    /// refused when `config` asks for it.
    pub fn prepare_batch(
        &self,
        chains: &[Vec<u32>],
        config: Config,
    ) -> anyhow::Result<TiledProblem> {
        anyhow::ensure!(!chains.is_empty(), "a batch needs at least one chain");
        let mut n = 0;
        for (z, dims) in chains.iter().enumerate() {
            let this = check(dims)?;
            anyhow::ensure!(
                z == 0 || this == n,
                "every chain of a batch has the same length: chain {z} has {this}, not {n}"
            );
            n = this;
            if config.needs_u32() && !fits_u32(dims) {
                let bound = super::dp::cost_upper_bound(dims)?;
                return Err(UsageError(format!(
                    "the 32-bit tiled kernels cannot solve chain {z} exactly: its costs are \
                     bounded by (n - 1) max(p)^3 = {bound}, not below 2^32 - 1 (the 64-bit \
                     kernels can)"
                ))
                .into());
            }
        }
        let tiles = tile_diagonals(n);
        let cells = (tiles * TILE) * (tiles * TILE) * chains.len();
        let flat: Vec<u32> = chains.concat();
        self.gpu.ensure_fits(
            cells * 8 + flat.len() * 4,
            &format!("the tiled DP tables of {} chain(s) of n = {n}", chains.len()),
        )?;
        let s = &self.gpu.stream;
        Ok(TiledProblem {
            n,
            chains: chains.len(),
            config,
            tiles,
            dims: s.clone_htod(&flat)?,
            keys: s.alloc_zeros::<u64>(cells)?,
        })
    }

    /// Enqueues one complete solve on `stream`: reset the keys to the identity of min,
    /// block diagonal 0, then for each block diagonal D its min-plus launch
    /// (D >= 2) and its sweep.
    pub fn enqueue(
        &self,
        stream: &Arc<CudaStream>,
        p: &mut TiledProblem,
    ) -> anyhow::Result<()> {
        self.enqueue_with(stream, p, |_, _| Ok(()))
    }

    // ANCHOR: enqueue
    /// [`TiledKernels::enqueue`], calling `after(d, keys)` once block diagonal `d` is
    /// enqueued (its sweep is the last launch on `stream`): the hook of the copies that
    /// overlap the solve.
    pub fn enqueue_with(
        &self,
        stream: &Arc<CudaStream>,
        p: &mut TiledProblem,
        mut after: impl FnMut(usize, &CudaSlice<u64>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let (n, stride) = (p.n as i32, p.stride() as i32);
        let bytes = p.keys.num_bytes();
        {
            let (ptr, _sync) =
                cudarc::driver::DevicePtrMut::device_ptr_mut(&mut p.keys, stream);
            // SAFETY: ptr and bytes describe the key table; the memset is
            // ordered on `stream`.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    ptr,
                    0xFF,
                    bytes,
                    stream.cu_stream(),
                )?
            };
        }
        let z = p.chains as u32;
        let sweep = |grid: usize, threads: u32, shared: u32| LaunchConfig {
            grid_dim: (grid as u32, 1, z),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: shared,
        };
        let (minplus, wavefront) = p.config.kernels();
        let mut b = stream.launch_builder(self.table.get(TiledKernel::DiagonalBlocks));
        b.arg(&p.dims).arg(&mut p.keys).arg(&n).arg(&stride);
        // SAFETY: (dims, keys, n, stride) as in the kernel's header; grid = tiles.
        unsafe { b.launch(sweep(p.tiles, SWEEP_THREADS, SWEEP_SHARED_BYTES))? };
        after(0, &p.keys)?;
        for d in 1..p.tiles {
            let on_diagonal = p.tiles - d;
            let d_arg = d as i32;
            if d >= 2 {
                let (chunk, splits) = minplus_split(p.tiles, d, self.minplus_wave);
                let chunk_arg = chunk as i32;
                let cfg = LaunchConfig {
                    grid_dim: (on_diagonal as u32, splits as u32, z),
                    block_dim: (THREADS, 1, 1),
                    shared_mem_bytes: p.config.minplus_shared_bytes(),
                };
                let mut b = stream.launch_builder(self.table.get(minplus));
                b.arg(&p.dims)
                    .arg(&mut p.keys)
                    .arg(&n)
                    .arg(&stride)
                    .arg(&d_arg)
                    .arg(&chunk_arg);
                // SAFETY: (dims, keys, n, stride, D, chunk) as in the header;
                // splits * chunk covers the D - 1 tiles.
                unsafe { b.launch(cfg)? };
            }
            let mut b = stream.launch_builder(self.table.get(wavefront));
            b.arg(&p.dims).arg(&mut p.keys).arg(&n).arg(&stride).arg(&d_arg);
            // SAFETY: (dims, keys, n, stride, D) as in the header; one block per
            // block of diagonal D.
            let c = p.config;
            unsafe {
                b.launch(sweep(on_diagonal, c.sweep_threads(), c.sweep_shared_bytes()))?
            };
            after(d, &p.keys)?;
        }
        Ok(())
    }
    // ANCHOR_END: enqueue

    /// One launch of block diagonal `d >= 2`'s min-plus kernel (`minplus`) or of its sweep,
    /// as a solve enqueues it, on the GPU's stream. On a table already solved it changes
    /// nothing (every key is already the minimum it computes): the chapter counts such
    /// single launches.
    pub fn launch_step(
        &self,
        p: &mut TiledProblem,
        d: usize,
        minplus: bool,
    ) -> anyhow::Result<()> {
        anyhow::ensure!(
            d >= 2 && d < p.tiles,
            "block diagonal {d} of {} has no min-plus part",
            p.tiles
        );
        let stream = &self.gpu.stream;
        let (n, stride, d_arg) = (p.n as i32, p.stride() as i32, d as i32);
        let (minplus_kernel, sweep_kernel) = p.config.kernels();
        let on_diagonal = (p.tiles - d) as u32;
        if minplus {
            let (chunk, splits) = minplus_split(p.tiles, d, self.minplus_wave);
            let chunk_arg = chunk as i32;
            let cfg = LaunchConfig {
                grid_dim: (on_diagonal, splits as u32, p.chains as u32),
                block_dim: (THREADS, 1, 1),
                shared_mem_bytes: p.config.minplus_shared_bytes(),
            };
            let mut b = stream.launch_builder(self.table.get(minplus_kernel));
            b.arg(&p.dims)
                .arg(&mut p.keys)
                .arg(&n)
                .arg(&stride)
                .arg(&d_arg)
                .arg(&chunk_arg);
            // SAFETY: as in `enqueue_with`.
            unsafe { b.launch(cfg)? };
        } else {
            let cfg = LaunchConfig {
                grid_dim: (on_diagonal, 1, p.chains as u32),
                block_dim: (p.config.sweep_threads(), 1, 1),
                shared_mem_bytes: p.config.sweep_shared_bytes(),
            };
            let mut b = stream.launch_builder(self.table.get(sweep_kernel));
            b.arg(&p.dims).arg(&mut p.keys).arg(&n).arg(&stride).arg(&d_arg);
            // SAFETY: as in `enqueue_with`.
            unsafe { b.launch(cfg)? };
        }
        Ok(())
    }

    /// The same solve captured once as a CUDA graph, replayed with one launch.
    pub fn capture(&self, p: &mut TiledProblem) -> anyhow::Result<CudaGraph> {
        let s = self.gpu.stream.clone();
        s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        let enqueued = self.enqueue(&s, p);
        // End the capture even after an error.
        let graph = s.end_capture(CUgraphInstantiate_flags(0))?;
        enqueued?;
        graph.ok_or_else(|| anyhow::anyhow!("stream capture produced no graph"))
    }

    /// Blocks of the min-plus kernel one wave of the GPU holds.
    pub fn minplus_wave(&self) -> u32 {
        self.minplus_wave
    }

    /// The kernel table (for single launches the chapter counts).
    pub fn table(&self) -> &KernelTable<TiledKernel> {
        &self.table
    }

    /// Launches per solve: the memset is not counted.
    pub fn launches(tiles: usize) -> usize {
        1 + (tiles - 1) + tiles.saturating_sub(2)
    }

    /// Reads the keys of chain 0 back as a [`DpTable`]: `M[i][j]` is `T[i - 1][j]`.
    pub fn read_back(&self, p: &TiledProblem) -> anyhow::Result<DpTable> {
        self.read_back_chain(p, 0)
    }

    /// Reads the keys of chain `z` of a batch back as a [`DpTable`].
    pub fn read_back_chain(
        &self,
        p: &TiledProblem,
        z: usize,
    ) -> anyhow::Result<DpTable> {
        let per = p.keys_per_chain();
        let keys = self.gpu.stream.clone_dtoh(&p.keys.slice(z * per..(z + 1) * per))?;
        Ok(table_from_keys(p.n, p.stride(), &keys)?)
    }

    /// Compares every chain of a batch with the CPU, cell by cell: `cpu(z)` is chain `z`'s
    /// reference table.
    pub fn check_batch(
        &self,
        p: &TiledProblem,
        cpu: impl Fn(usize) -> anyhow::Result<DpTable> + Sync,
    ) -> anyhow::Result<()> {
        use rayon::prelude::*;
        let stride = p.stride();
        let what = format!("cmm_tiled_*_u64, {}", p.config.label());
        // A few chains at a time: their keys and the CPU's tables, compared in parallel.
        const AT_ONCE: usize = 32;
        for first in (0..p.chains).step_by(AT_ONCE) {
            let last = (first + AT_ONCE).min(p.chains);
            let got: Vec<DpTable> = (first..last)
                .map(|z| self.read_back_chain(p, z))
                .collect::<anyhow::Result<_>>()?;
            (first..last).into_par_iter().zip(got.par_iter()).try_for_each(
                |(z, gpu_table)| -> anyhow::Result<()> {
                    let reference = cpu(z)?;
                    super::gpu::check_table(
                        &what,
                        p.n,
                        &reference,
                        gpu_table,
                        |i, j| z * stride * stride + (i - 1) * stride + j,
                    )
                    .map_err(|mut e| {
                        e.kernel = format!("{} (chain {z} of the batch)", e.kernel);
                        e.into()
                    })
                },
            )?;
        }
        Ok(())
    }

    /// Correct before fast, through [`Gpu::verify_then_time`]: poisons the keys (the solve
    /// itself resets them, so this proves the reset), solves once, compares every cell with the
    /// CPU's table, and only then times complete solves under each of `plans` (table resident
    /// on the GPU, no transfers).
    pub fn verify_then_time(
        &self,
        p: &mut TiledProblem,
        cpu: &DpTable,
        plans: &[Plan],
    ) -> anyhow::Result<Verified<DpTable>> {
        self.gpu.verify_then_time(
            p,
            |gpu, p| gpu.poison(&mut p.keys),
            |s, p| self.enqueue(s, p),
            |_, p| self.check_single(p, cpu),
            plans,
        )
    }

    /// Reads a single chain's table back and compares every cell with `cpu`.
    pub fn check_single(
        &self,
        p: &TiledProblem,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        anyhow::ensure!(p.chains == 1, "verify a batch with check_batch");
        let gpu_table = self.read_back(p)?;
        let stride = p.stride();
        super::gpu::check_table(
            &format!("cmm_tiled_*, {}", p.config.label()),
            p.n,
            cpu,
            &gpu_table,
            |i, j| (i - 1) * stride + j,
        )?;
        Ok(gpu_table)
    }

    /// Verifies one solve replayed from `graph` (captured by [`TiledKernels::capture`]
    /// from `p`): poison, one launch of the graph, every cell compared with `cpu`.
    pub fn solve_verified_graph(
        &self,
        p: &mut TiledProblem,
        graph: &CudaGraph,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        Ok(self
            .gpu
            .verify_then_time(
                p,
                |gpu, p| gpu.poison(&mut p.keys),
                |_, _| Ok(graph.launch()?),
                |_, p| self.check_single(p, cpu),
                &[],
            )?
            .check)
    }

    /// [`TiledKernels::verify_then_time`] without timing: the table, every cell equal to the
    /// CPU's.
    pub fn solve_verified(
        &self,
        p: &mut TiledProblem,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        Ok(self.verify_then_time(p, cpu, &[])?.check)
    }

    /// Times complete solves (table resident on the GPU, no transfers). Only for a problem
    /// [`TiledKernels::solve_verified`] has checked, when the plan depends on that check.
    pub fn time(&self, p: &mut TiledProblem, plan: Plan) -> anyhow::Result<Stats> {
        self.gpu.time(plan, |s| self.enqueue(s, p))
    }
}

/// Decodes a key table (`stride x stride`, `T[a][b]` at `a * stride + b`) into a [`DpTable`].
pub fn table_from_keys(
    n: usize,
    stride: usize,
    keys: &[u64],
) -> Result<DpTable, super::CmmError> {
    let row = n + 1;
    let mut cost = vec![0u64; Layout::RowMajor.dp_len(n)];
    let mut split = vec![0u32; cost.len()];
    for i in 1..=n {
        for j in i..=n {
            let key = keys[(i - 1) * stride + j];
            cost[row * i + j] = key >> SPLIT_BITS;
            split[row * i + j] = (key & ((1 << SPLIT_BITS) - 1)) as u32;
        }
    }
    DpTable::from_layout(Layout::RowMajor, n, &cost, &split)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::dp;

    #[test]
    fn dependent_steps_count_every_sweep() {
        assert_eq!(dependent_steps(62), 63, "one tile: block diagonal 0 only");
        assert_eq!(dependent_steps(1024), 63 + 16 * 127);
        assert_eq!(tile_diagonals(16384), 257);
    }

    #[test]
    fn keys_decode_to_the_table() {
        let dims = [20, 2, 30, 12, 8];
        let cpu = dp::solve_serial(&dims).unwrap();
        let n = 4;
        let stride = TILE;
        let mut keys = vec![u64::MAX; stride * stride];
        for i in 1..=n {
            for j in i..=n {
                keys[(i - 1) * stride + j] =
                    cpu.cost(i, j) << SPLIT_BITS | u64::from(cpu.split(i, j));
            }
        }
        assert_eq!(table_from_keys(n, stride, &keys).unwrap(), cpu);
    }

    #[test]
    fn the_split_covers_every_tile_and_fills_the_gpu() {
        for tiles in [3, 17, 257] {
            for d in 2..tiles {
                let (chunk, splits) = minplus_split(tiles, d, 264);
                assert!(chunk >= 1 && splits >= 1);
                let slices = (d - 1) * TILE / MINPLUS_SLICE;
                assert!(chunk * splits >= slices, "tiles {tiles} d {d}: all c covered");
                assert!(
                    chunk * (splits - 1) < slices,
                    "tiles {tiles} d {d}: no empty split"
                );
                if (tiles - d) * (d - 1) >= 528 {
                    assert!(
                        (tiles - d) * splits >= 264,
                        "tiles {tiles} d {d}: at least a wave of blocks"
                    );
                }
            }
        }
    }

    #[test]
    fn chains_past_the_key_bound_are_refused() {
        assert!(
            check(&[1000; 16385]).is_ok(),
            "n = 16384 with dims up to 1000 fits 48 bits"
        );
        let e = check(&[65535; 4]).unwrap_err().0;
        assert!(e.contains("48"), "{e}");
        assert!(check(&[65536, 2]).unwrap_err().0.contains("65536"));
        assert!(check(&vec![1; MAX_N + 2]).unwrap_err().0.contains("16 bits"));
        assert!(check(&vec![1; MAX_N + 1]).is_ok());
    }
}
