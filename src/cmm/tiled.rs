//! The tiled CMM program (`kernels/cmm_tiled.cu`, `kernels/cmm_tiled_async.cu`): block diagonals of 64 x 64 tiles, the big
//! k ranges as split min-plus products, the rest as a shared-memory wavefront. Solves the
//! whole table of chains far past the paper's one-block limit of n = 1024.
//!
//! Here: the kernels, a problem on the GPU and how a solve is enqueued; the versions and
//! their resources are in `config`, reading back and checking in `verify`.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelTable;
use crate::harness::{Gpu, UsageError};

mod config;
mod verify;

pub use config::{
    check, fits_u32, Config, MinPlus, Sweep, LEAN_THREADS, MAX_N, MINPLUS_SLICE,
    MINPLUS_U32_SHARED_BYTES, SPLIT_BITS, SWEEP_ORDERED_SHARED_BYTES,
    SWEEP_QUADRANTS_SHARED_BYTES, SWEEP_SHARED_BYTES, SWEEP_THREADS,
    SWEEP_U32_SHARED_BYTES, THREADS, TILE,
};
pub use verify::table_from_keys;

crate::kernel_names! {
    /// The functions of `kernels/cmm_tiled.cu` (compute capability 7.0) and
    /// `kernels/cmm_tiled_async.cu` (8.0: cp.async).
    pub enum TiledKernel {
        in "cmm_tiled.cu" {
            /// Block diagonal 0: every 64 x 64 tile on the main diagonal, swept alone.
            DiagonalBlocks => "cmm_tiled_diagonal_blocks_u64",
            /// The big k ranges of block diagonal D as split min-plus tile products.
            MinPlus => "cmm_tiled_minplus_u64",
            /// The rest of block diagonal D: the shared-memory wavefront sweep.
            Wavefront => "cmm_tiled_wavefront_u64",
        }
        in "cmm_tiled_async.cu" {
            /// The min-plus products with 32-bit costs and Hopper's DPX minimum, their
            /// strips streamed with cp.async.
            MinPlusU32 => "cmm_tiled_minplus_u32",
        }
        in "cmm_tiled.cu" {
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
}

/// The kernel files of the tiled program: every kernel runs from compute capability 7.0
/// but the 32-bit min-plus one, which needs 8.0 (cp.async).
pub const TILED_FILES: [&str; 2] = ["cmm_tiled.cu", "cmm_tiled_async.cu"];

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
        // A GPU that cannot give a block that much (a V100, a T4) runs none of the sweeps,
        // and every solve starts with one: its chapter skips the tiled program and asks
        // for nothing here.
        if gpu.info.shared_per_block_optin >= SWEEP_SHARED_BYTES as usize {
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
        }
        // Loaded from compute capability 8.0 only (cp.async).
        if table.available(TiledKernel::MinPlusU32) {
            table.get(TiledKernel::MinPlusU32).set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                MINPLUS_U32_SHARED_BYTES as i32,
            )?;
        }
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
        let cfg = LaunchConfig {
            grid_dim: (p.tiles as u32, 1, p.chains as u32),
            block_dim: (SWEEP_THREADS, 1, 1),
            shared_mem_bytes: SWEEP_SHARED_BYTES,
        };
        let mut b = stream.launch_builder(self.table.get(TiledKernel::DiagonalBlocks));
        b.arg(&p.dims).arg(&mut p.keys).arg(&n).arg(&stride);
        // SAFETY: (dims, keys, n, stride) as in the kernel's header; grid = tiles.
        unsafe { b.launch(cfg)? };
        after(0, &p.keys)?;
        for d in 1..p.tiles {
            if d >= 2 {
                self.enqueue_step(stream, p, d, true)?;
            }
            self.enqueue_step(stream, p, d, false)?;
            after(d, &p.keys)?;
        }
        Ok(())
    }

    /// Enqueues block diagonal `d`'s min-plus launch (`minplus`, `d >= 2`: `splits`
    /// blocks per tile of the diagonal, each `chunk` of its `d - 1` tile products) or
    /// its sweep (one block per tile of the diagonal).
    fn enqueue_step(
        &self,
        stream: &Arc<CudaStream>,
        p: &mut TiledProblem,
        d: usize,
        minplus: bool,
    ) -> anyhow::Result<()> {
        let (n, stride, d_arg) = (p.n as i32, p.stride() as i32, d as i32);
        let (minplus_kernel, sweep_kernel) = p.config.kernels();
        let (kernel, splits, threads, shared, chunk) = if minplus {
            let (chunk, splits) = minplus_split(p.tiles, d, self.minplus_wave);
            let shared = p.config.minplus_shared_bytes();
            (minplus_kernel, splits, THREADS, shared, Some(chunk as i32))
        } else {
            let (threads, shared) =
                (p.config.sweep_threads(), p.config.sweep_shared_bytes());
            (sweep_kernel, 1, threads, shared, None)
        };
        let cfg = LaunchConfig {
            grid_dim: ((p.tiles - d) as u32, splits as u32, p.chains as u32),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: shared,
        };
        let mut b = stream.launch_builder(self.table.get(kernel));
        b.arg(&p.dims).arg(&mut p.keys).arg(&n).arg(&stride).arg(&d_arg);
        if let Some(chunk) = &chunk {
            b.arg(chunk); // splits * chunk covers the D - 1 tiles
        }
        // SAFETY: (dims, keys, n, stride, D[, chunk]) as in the kernels' headers.
        unsafe { b.launch(cfg)? };
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
        self.enqueue_step(&self.gpu.stream, p, d, minplus)
    }

    /// The same solve captured once as a CUDA graph, replayed with one launch.
    pub fn capture(&self, p: &mut TiledProblem) -> anyhow::Result<CudaGraph> {
        super::gpu::capture_graph(&self.gpu.stream, |s| self.enqueue(s, p))
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
