//! The kernels of `kernels/atax.cu` and cuBLAS, named by type, and how each is launched.
//!
//! Launches take device addresses (`CUdeviceptr`) rather than slices, because the same kernels
//! run on device buffers, on row chunks of them (the streamed versions) and on managed memory;
//! every launch function states the lengths its addresses must hold.
//!
//! Here: the kernels' names, the table and the launch every kernel shares; the shapes of
//! the launches (computed on the CPU) are in `shapes`, the fused passes in `fused`, the
//! two-kernel passes, the split-rows pass and cuBLAS in `passes`.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::element::Element;
use super::KERNEL_FILE;
use crate::harness::blas::open_blas;
use crate::harness::kernels::{KernelName, KernelTable, Unavailable};
use crate::harness::Gpu;

mod fused;
mod passes;
mod shapes;

pub use passes::{TmpKernel, YKernel};
pub use shapes::{
    cluster_grid, cluster_shared_bytes, fused_form, fused_shape, one_launch_blocks,
    split_shape, ClusterGrid, FusedClusterLaunch, FusedForm, FusedLaunch, FusedShape,
    OneLaunch, SplitShape, CLUSTER_SIZES, SPLIT_WARPS_PER_BLOCK,
};

/// The functions of `kernels/atax.cu`, each defined once per element type as
/// `atax_<stem>_<f32|f64>` (see [`AtaxKernel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtaxFunction {
    /// The slides' kernel 1: one thread per row of A.
    TmpThreadPerRow,
    /// The slides' kernel 2: one thread per column of A.
    YThreadPerCol,
    /// Kernel 1 reading x from `__constant__` memory.
    TmpThreadPerRowXConst,
    /// Aᵀ through a padded shared tile.
    TransposeTileShared,
    /// Kernel 1 on Aᵀ: one thread per row of A, coalesced.
    TmpFromTransposed,
    /// Kernel 1 with a warp per row.
    TmpWarpPerRow,
    /// Kernel 1 with 32 × 32 tiles of A in shared memory.
    TmpTileShared,
    /// Kernel 2 with 32-row slices of tmp in shared memory.
    YTileShared,
    /// The sum of the fused kernel's partial y, in block order.
    ReducePartials,
    /// Kernel 2 with 8 warps per 32 columns and the rows split into slices: partial y.
    YSplitRows,
    /// The fused pass with this many columns per thread (`fused_rows_e<E>`).
    FusedRows(u32),
    /// The fused pass, a grid barrier and the sum of the partial rows, in one cooperative
    /// launch (`fused_once_e<E>`).
    FusedOnce(u32),
    /// The fused pass for rows beyond the registers (each row read twice, the second
    /// time from L2), in one cooperative launch (`fused_once_wide_e<E>`).
    FusedOnceWide(u32),
    /// The fused pass, its y added with atomics, in one ordinary launch
    /// (`fused_atomic_e<E>`).
    FusedAtomic(u32),
    /// The wide pass, its y added with atomics (`fused_atomic_wide_e<E>`).
    FusedAtomicWide(u32),
    /// The fused pass in thread-block clusters: the blocks of a cluster add their y
    /// through distributed shared memory, then one atomic per column and cluster
    /// (`fused_cluster_e<E>`).
    FusedCluster(u32),
}

impl AtaxFunction {
    /// Every function defined for `T`: the fused pass once per instance `T` declares.
    pub fn all<T: Element>() -> Vec<Self> {
        let mut all = vec![
            Self::TmpThreadPerRow,
            Self::YThreadPerCol,
            Self::TmpThreadPerRowXConst,
            Self::TransposeTileShared,
            Self::TmpFromTransposed,
            Self::TmpWarpPerRow,
            Self::TmpTileShared,
            Self::YTileShared,
            Self::ReducePartials,
            Self::YSplitRows,
        ];
        all.extend(T::FUSED_COLUMNS_PER_THREAD.iter().map(|&e| Self::FusedRows(e)));
        all.extend(T::FUSED_COLUMNS_PER_THREAD.iter().map(|&e| Self::FusedOnce(e)));
        all.extend(T::WIDE_COLUMNS_PER_THREAD.iter().map(|&e| Self::FusedOnceWide(e)));
        all.extend(T::FUSED_COLUMNS_PER_THREAD.iter().map(|&e| Self::FusedAtomic(e)));
        all.extend(
            T::WIDE_COLUMNS_PER_THREAD.iter().map(|&e| Self::FusedAtomicWide(e)),
        );
        all.extend(T::FUSED_COLUMNS_PER_THREAD.iter().map(|&e| Self::FusedCluster(e)));
        all
    }

    /// The name between `atax_` and the element suffix.
    pub fn stem(self) -> String {
        match self {
            Self::TmpThreadPerRow => "tmp_thread_per_row".into(),
            Self::YThreadPerCol => "y_thread_per_col".into(),
            Self::TmpThreadPerRowXConst => "tmp_thread_per_row_x_const".into(),
            Self::TransposeTileShared => "transpose_tile_shared".into(),
            Self::TmpFromTransposed => "tmp_from_transposed".into(),
            Self::TmpWarpPerRow => "tmp_warp_per_row".into(),
            Self::TmpTileShared => "tmp_tile_shared".into(),
            Self::YTileShared => "y_tile_shared".into(),
            Self::ReducePartials => "reduce_partials".into(),
            Self::YSplitRows => "y_split_rows".into(),
            Self::FusedRows(e) => format!("fused_rows_e{e}"),
            Self::FusedOnce(e) => format!("fused_once_e{e}"),
            Self::FusedOnceWide(e) => format!("fused_once_wide_e{e}"),
            Self::FusedAtomic(e) => format!("fused_atomic_e{e}"),
            Self::FusedAtomicWide(e) => format!("fused_atomic_wide_e{e}"),
            Self::FusedCluster(e) => format!("fused_cluster_e{e}"),
        }
    }
}

/// A function of `kernels/atax.cu` in the element type `T`: `atax_<stem>_<T::SUFFIX>`. A
/// table of `AtaxKernel<f32>` holds the float kernels only, so a float launch cannot pick a
/// double kernel.
pub struct AtaxKernel<T> {
    pub function: AtaxFunction,
    element: PhantomData<fn() -> T>,
}

impl<T> AtaxKernel<T> {
    pub const fn new(function: AtaxFunction) -> Self {
        Self { function, element: PhantomData }
    }
}

// By hand, not derived: a derive would ask the same of T (and f32 is neither Eq nor Hash).
impl<T> Clone for AtaxKernel<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for AtaxKernel<T> {}
impl<T> PartialEq for AtaxKernel<T> {
    fn eq(&self, other: &Self) -> bool {
        self.function == other.function
    }
}
impl<T> Eq for AtaxKernel<T> {}
impl<T> std::hash::Hash for AtaxKernel<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.function.hash(state)
    }
}
impl<T> std::fmt::Debug for AtaxKernel<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AtaxKernel({:?})", self.function)
    }
}

impl<T: Element> KernelName for AtaxKernel<T> {
    fn all() -> Vec<Self> {
        AtaxFunction::all::<T>().into_iter().map(Self::new).collect()
    }
    fn file(self) -> &'static str {
        KERNEL_FILE
    }
    fn needs(self) -> Option<((u32, u32), &'static str)> {
        match self.function {
            AtaxFunction::FusedCluster(_) => {
                Some(((9, 0), "thread-block clusters and distributed shared memory"))
            }
            _ => None,
        }
    }
    fn function(self) -> String {
        format!("atax_{}_{}", self.function.stem(), T::SUFFIX)
    }
}

/// What the one-launch-per-pass fused kernel needs of a table of `T` kernels alone: the
/// chapter on several GPUs runs it from its own table, without cuBLAS.
impl<T: Element> KernelTable<AtaxKernel<T>> {
    /// Blocks of the fused kernel for an `m` × `n` matrix on `sms` SMs: every SM filled
    /// as far as its registers allow, never more blocks than row pairs (a block takes two
    /// rows a step), and, beyond one block per SM, no more than one block per 8 rows.
    pub fn fused_blocks(&self, sms: u32, m: usize, n: usize) -> anyhow::Result<u32> {
        let shape = fused_shape(n, T::FUSED_COLUMNS_PER_THREAD)
            .ok_or_else(|| anyhow::anyhow!("no fused instance covers n = {n}"))?;
        let f = self
            .get(AtaxKernel::new(AtaxFunction::FusedRows(shape.columns_per_thread)));
        let per_sm = f
            .occupancy_max_active_blocks_per_multiprocessor(shape.threads, 0, None)?
            .max(1);
        let pairs = m.max(1).div_ceil(2) as u32;
        let partials_cap = sms.max((m / 8) as u32);
        Ok((sms * per_sm).min(pairs).min(partials_cap).max(1))
    }

    /// Enqueues y\[j\] = Σ_b partials\[b\]\[j\] over `blocks` rows, in b order.
    ///
    /// # Safety
    /// `partials` must hold blocks·n elements and `y` n.
    pub unsafe fn launch_reduce_partials(
        &self,
        s: &Arc<CudaStream>,
        partials: CUdeviceptr,
        y: CUdeviceptr,
        blocks: u32,
        n: usize,
    ) -> anyhow::Result<()> {
        let n32 = u32::try_from(n)?;
        let cfg = grid_per_32(n, (32, 32, 1))?;
        s.launch_builder(self.get(AtaxKernel::new(AtaxFunction::ReducePartials)))
            .arg(&partials)
            .arg(&y)
            .arg(&blocks)
            .arg(&n32)
            .launch(cfg)?;
        Ok(())
    }
}

/// Threads per block of the one-thread-per-row/column kernels and of the warp-per-row kernel.
pub const BLOCK: u32 = 256;

/// The kernels of `kernels/atax.cu` for one element type, and cuBLAS.
pub struct Kernels<T: Element> {
    pub table: KernelTable<AtaxKernel<T>>,
    pub blas: CudaBlas,
    pub sms: u32,
}

impl<T: Element> Kernels<T> {
    /// Compiles and loads the file's `T` kernels, and opens cuBLAS on the timing stream.
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        Ok(Self {
            table: KernelTable::load(gpu)?,
            blas: open_blas(gpu)?,
            sms: gpu.info.sms as u32,
        })
    }

    /// The compiled `T` instance of `function`.
    pub fn function(&self, function: AtaxFunction) -> &CudaFunction {
        self.table.get(AtaxKernel::new(function))
    }

    /// Why this GPU cannot run the pass with thread-block clusters
    /// (its kernels need compute capability 9.0); `None` where it can.
    pub fn cluster_unavailable(&self) -> Option<Unavailable> {
        let e = T::FUSED_COLUMNS_PER_THREAD[0];
        self.table.try_get(AtaxKernel::new(AtaxFunction::FusedCluster(e))).err()
    }
}

fn grid_1d(threads: usize, block: u32) -> anyhow::Result<LaunchConfig> {
    let blocks = u32::try_from(threads.div_ceil(block as usize).max(1))?;
    Ok(LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// One block of `block` threads per 32 of `count` (rows or columns): the tiled kernels'
/// launch.
fn grid_per_32(count: usize, block: (u32, u32, u32)) -> anyhow::Result<LaunchConfig> {
    Ok(LaunchConfig {
        grid_dim: (u32::try_from(count.div_ceil(32))?, 1, 1),
        block_dim: block,
        shared_mem_bytes: 0,
    })
}

fn dims(m: usize, n: usize) -> anyhow::Result<(u32, u32)> {
    Ok((u32::try_from(m)?, u32::try_from(n)?))
}

/// Launches `f` with the arguments every kernel of the file takes: its device addresses in
/// order, then the matrix's `m` and `n`.
///
/// # Safety
/// The addresses must hold what `f` reads and writes for an `m` × `n` matrix.
unsafe fn launch(
    s: &Arc<CudaStream>,
    f: &CudaFunction,
    addresses: &[CUdeviceptr],
    (m, n): (usize, usize),
    cfg: LaunchConfig,
) -> anyhow::Result<()> {
    let (m32, n32) = dims(m, n)?;
    let mut b = s.launch_builder(f);
    for a in addresses {
        b.arg(a);
    }
    b.arg(&m32).arg(&n32).launch(cfg)?;
    Ok(())
}
