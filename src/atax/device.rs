//! The kernels of `kernels/atax.cu` and cuBLAS, named by type, and how each is launched.
//!
//! Launches take device addresses (`CUdeviceptr`) rather than slices, because the same kernels
//! run on device buffers, on row chunks of them (the streamed versions) and on managed memory;
//! every launch function states the lengths its addresses must hold.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::cublas::{sys::cublasOperation_t, CudaBlas, GemvConfig};
use cudarc::driver::sys::{CUdeviceptr, CUfunction_attribute_enum};
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::element::{Element, RawView};
use super::KERNEL_FILE;
use crate::harness::blas::open_blas;
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::launch::{self, Args, ClusterPlan};
use crate::harness::Gpu;

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
    fn function(self) -> String {
        format!("atax_{}_{}", self.function.stem(), T::SUFFIX)
    }
}

/// Threads per block of the one-thread-per-row/column kernels and of the warp-per-row kernel.
pub const BLOCK: u32 = 256;

/// How the fused kernel is launched for a given `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FusedShape {
    /// Columns per thread (the kernel instance).
    pub columns_per_thread: u32,
    /// Threads per block: a multiple of 32 covering `n` columns.
    pub threads: u32,
}

/// The fused kernel's shape for `n` columns: the fewest columns per thread whose block of at
/// most 1024 threads covers `n`; `None` when `n` is beyond the largest instance.
pub fn fused_shape(n: usize, instances: &[u32]) -> Option<FusedShape> {
    let e = *instances.iter().find(|&&e| e as usize * 1024 >= n)?;
    let threads = (n.div_ceil(e as usize).div_ceil(32) * 32).max(32) as u32;
    Some(FusedShape { columns_per_thread: e, threads })
}

/// Where the fused pass keeps a thread's share of y.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FusedForm {
    /// In registers, two rows a step (`fused_rows`): up to 1024 × the largest register
    /// instance columns.
    Registers,
    /// In registers, one row a step, the row read twice (`fused_rows_wide`): up to
    /// 1024 × the largest wide instance columns.
    Wide,
}

/// How the one-launch fused kernels combine the blocks' partial y.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OneLaunch {
    /// Partial rows, a grid barrier, and a sum in a fixed order by the whole grid
    /// (`fused_once`): a cooperative launch.
    GridBarrier,
    /// Atomic additions into an accumulator that the last block copies to y
    /// (`fused_atomic`): an ordinary launch.
    Atomics,
}

/// How a one-launch fused kernel is launched: the kernel, its block, its grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FusedLaunch {
    pub how: OneLaunch,
    pub form: FusedForm,
    pub shape: FusedShape,
    /// Blocks (and, with a grid barrier, rows of `partials`).
    pub blocks: u32,
}

/// Blocks of a one-launch fused kernel for an `m`-row matrix when `resident` blocks fit
/// on the GPU at once: no more than that, no more than the steps of `rows_per_step`
/// rows, and beyond one block per SM (of `sms`) no more than one per 8 rows (every
/// block writes a row of partials or adds a row of atomics); at least one.
pub fn one_launch_blocks(
    resident: u32,
    m: usize,
    rows_per_step: usize,
    sms: u32,
) -> u32 {
    let steps = m.max(1).div_ceil(rows_per_step) as u32;
    let partials_cap = sms.max((m / 8) as u32);
    resident.min(steps).min(partials_cap).max(1)
}

/// Cluster sizes the cluster pass tries, largest first: 8 is the most a cluster may
/// have without the non-portable opt-in, and the most `fused_cluster` adds up
/// (`MAX_CLUSTER_BLOCKS` in `kernels/atax.cu`).
pub const CLUSTER_SIZES: [u32; 4] = [8, 4, 2, 1];

/// The cluster pass's grid: `clusters` clusters of `cluster` blocks each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterGrid {
    pub cluster: u32,
    pub clusters: u32,
}

impl ClusterGrid {
    pub fn blocks(self) -> u32 {
        self.cluster * self.clusters
    }
}

/// The cluster pass's grid for `wanted` blocks: the largest of [`CLUSTER_SIZES`] no
/// larger than `wanted` that the device accepts (`active(size)`, the clusters of that
/// size it holds at once, answers more than 0; an error is a refusal too), and as many
/// whole clusters as `wanted` blocks hold and the GPU holds at once, at least one.
/// Every size refused is an error that gives each refusal.
pub fn cluster_grid(
    wanted: u32,
    mut active: impl FnMut(u32) -> anyhow::Result<u32>,
) -> anyhow::Result<ClusterGrid> {
    let mut refusals = Vec::new();
    for cluster in CLUSTER_SIZES.into_iter().filter(|&c| c <= wanted.max(1)) {
        match active(cluster) {
            Ok(0) => refusals.push(format!("{cluster} blocks: none fits at once")),
            Ok(fit) => {
                let clusters = (wanted / cluster).min(fit).max(1);
                return Ok(ClusterGrid { cluster, clusters });
            }
            Err(e) => refusals.push(format!("{cluster} blocks: {e:#}")),
        }
    }
    anyhow::bail!(
        "the device refuses every cluster size for the cluster pass ({})",
        refusals.join("; ")
    )
}

/// Dynamic shared memory of one block of the cluster pass for `n` columns of `T`: the
/// block's partial y, which its peers read.
pub fn cluster_shared_bytes<T: Element>(n: usize) -> anyhow::Result<u32> {
    Ok(u32::try_from(n * T::BYTES)?)
}

/// How the cluster pass is launched: its block, its grid, and the launch the device
/// accepted (checked once, when this is made).
#[derive(Debug, Clone, Copy)]
pub struct FusedClusterLaunch {
    pub shape: FusedShape,
    pub grid: ClusterGrid,
    pub plan: ClusterPlan,
}

/// The fused pass's form and shape for `n` columns of `T`: registers when an instance
/// covers `n`, else the wide form; `None` beyond both.
pub fn fused_form<T: Element>(n: usize) -> Option<(FusedForm, FusedShape)> {
    fused_shape(n, T::FUSED_COLUMNS_PER_THREAD)
        .map(|s| (FusedForm::Registers, s))
        .or_else(|| {
            fused_shape(n, T::WIDE_COLUMNS_PER_THREAD).map(|s| (FusedForm::Wide, s))
        })
}

/// How the split-rows kernel is launched for an `rows` × `cols` product `Aᵀ·v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitShape {
    /// Blocks of (32, 8) threads across the columns: one per 32 columns.
    pub column_blocks: u32,
    /// Row slices (blocks along y, and rows of `partials`).
    pub slices: u32,
    /// Rows each slice adds up (the last slice may have fewer).
    pub rows_per_slice: u32,
}

/// Warps a block of the split-rows kernel runs: (32, 8) threads.
pub const SPLIT_WARPS_PER_BLOCK: u32 = 8;

/// The split-rows kernel's shape: enough slices that the grid holds `2048 / 256 = 8`
/// blocks per SM (the most warps an SM of compute capability 9.0 keeps resident), but no
/// more than one slice per 64 rows (8 per warp), so that the partial rows stay few next
/// to A.
pub fn split_shape(rows: usize, cols: usize, sms: u32) -> anyhow::Result<SplitShape> {
    let column_blocks = u32::try_from(cols.div_ceil(32).max(1))?;
    let wanted = (8 * sms).div_ceil(column_blocks).max(1) as usize;
    let slices = wanted.min(rows.div_ceil(64)).max(1);
    let rows_per_slice = rows.div_ceil(slices).max(1);
    Ok(SplitShape {
        column_blocks,
        slices: u32::try_from(rows.div_ceil(rows_per_slice).max(1))?,
        rows_per_slice: u32::try_from(rows_per_slice)?,
    })
}

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

    /// The fused kernel's shape for `n` columns, if an instance covers it.
    pub fn fused_shape(&self, n: usize) -> Option<FusedShape> {
        fused_shape(n, T::FUSED_COLUMNS_PER_THREAD)
    }

    /// Blocks of the fused kernel for an `m` × `n` matrix: every SM filled as far as its
    /// registers allow, but never more blocks than row pairs (a block takes two rows a step),
    /// and, beyond one block per SM, no more than one block per 8 rows: every block writes a
    /// whole row of partial sums, which `reduce_partials` reads back, so for short matrices
    /// extra blocks cost more in partials than they add in loads in flight.
    pub fn fused_blocks(&self, m: usize, n: usize) -> anyhow::Result<u32> {
        let shape = self
            .fused_shape(n)
            .ok_or_else(|| anyhow::anyhow!("no fused instance covers n = {n}"))?;
        let f = self.fused_function(shape);
        let per_sm = f
            .occupancy_max_active_blocks_per_multiprocessor(shape.threads, 0, None)?
            .max(1);
        let pairs = m.max(1).div_ceil(2) as u32;
        let partials_cap = self.sms.max((m / 8) as u32);
        Ok((self.sms * per_sm).min(pairs).min(partials_cap).max(1))
    }

    fn fused_function(&self, shape: FusedShape) -> &CudaFunction {
        self.function(AtaxFunction::FusedRows(shape.columns_per_thread))
    }

    /// The one-launch fused kernel `how` for an `m` × `n` matrix in the chapter's form
    /// (see [`fused_form`]) and grid (see [`Kernels::fused_launch_with`]).
    pub fn fused_once_launch(
        &self,
        how: OneLaunch,
        m: usize,
        n: usize,
    ) -> anyhow::Result<FusedLaunch> {
        let (form, shape) = fused_form::<T>(n)
            .ok_or_else(|| anyhow::anyhow!("no fused instance covers n = {n}"))?;
        self.fused_launch_with(how, form, shape, m, None)
    }

    /// A launch of `how`, `form` and `shape` for an `m`-row matrix with `blocks` blocks,
    /// or, for `None`, as many as the SMs hold at once, no more than the rows a block takes
    /// a step allow, and beyond one block per SM no more than one per 8 rows (every block
    /// writes a row of partials or adds a row of atomics). A cooperative launch needs the
    /// whole grid resident: more blocks than the SMs hold is an error.
    pub fn fused_launch_with(
        &self,
        how: OneLaunch,
        form: FusedForm,
        shape: FusedShape,
        m: usize,
        blocks: Option<u32>,
    ) -> anyhow::Result<FusedLaunch> {
        let f = self.once_function(how, form, shape.columns_per_thread);
        let per_sm =
            f.occupancy_max_active_blocks_per_multiprocessor(shape.threads, 0, None)?;
        anyhow::ensure!(
            per_sm > 0,
            "a block of {} threads does not fit an SM",
            shape.threads
        );
        let resident = self.sms * per_sm;
        let rows_per_step = if form == FusedForm::Registers { 2 } else { 1 };
        let blocks = match blocks {
            Some(b) => {
                anyhow::ensure!(
                    (1..=resident).contains(&b),
                    "{b} blocks: a cooperative launch holds 1 to {resident} here"
                );
                b
            }
            None => one_launch_blocks(resident, m, rows_per_step, self.sms),
        };
        Ok(FusedLaunch { how, form, shape, blocks })
    }

    /// The cluster pass for an `m` × `n` matrix (register form only): the blocks of
    /// [`one_launch_blocks`] in whole clusters of [`cluster_grid`], checked with the
    /// device's cluster occupancy query here, once, so that a launch asks nothing.
    pub fn fused_cluster_launch(
        &self,
        gpu: &Gpu,
        m: usize,
        n: usize,
    ) -> anyhow::Result<FusedClusterLaunch> {
        let shape = self
            .fused_shape(n)
            .ok_or_else(|| anyhow::anyhow!("no fused instance covers n = {n}"))?;
        let e = shape.columns_per_thread;
        let f = self.function(AtaxFunction::FusedCluster(e));
        // Beyond 48 KiB of dynamic shared memory a kernel must opt in. The opt-in is
        // the instance's most (1024 e columns), so that no plan lowers another's.
        let most = cluster_shared_bytes::<T>(1024 * e as usize)?;
        f.set_attribute(
            CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            i32::try_from(most)?,
        )?;
        let shared = cluster_shared_bytes::<T>(n)?;
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
            shape.threads,
            shared as usize,
            None,
        )?;
        anyhow::ensure!(
            per_sm > 0,
            "a block of {} threads and {shared} bytes of shared memory does not fit an SM",
            shape.threads
        );
        let wanted = one_launch_blocks(self.sms * per_sm, m, 2, self.sms);
        let cfg = |blocks| LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: shared,
        };
        let grid = cluster_grid(wanted, |c| {
            launch::max_active_clusters(gpu, f, cfg(c), (c, 1, 1))
        })?;
        let plan =
            launch::plan_cluster(gpu, f, cfg(grid.blocks()), (grid.cluster, 1, 1))?;
        Ok(FusedClusterLaunch { shape, grid, plan })
    }

    fn once_function(&self, how: OneLaunch, form: FusedForm, e: u32) -> &CudaFunction {
        self.function(match (how, form) {
            (OneLaunch::GridBarrier, FusedForm::Registers) => {
                AtaxFunction::FusedOnce(e)
            }
            (OneLaunch::GridBarrier, FusedForm::Wide) => AtaxFunction::FusedOnceWide(e),
            (OneLaunch::Atomics, FusedForm::Registers) => AtaxFunction::FusedAtomic(e),
            (OneLaunch::Atomics, FusedForm::Wide) => AtaxFunction::FusedAtomicWide(e),
        })
    }

    /// Copies `x` (at most [`Element::X_CONST_CAPACITY`] elements) into `__constant__` memory.
    pub fn upload_x_const(
        &self,
        stream: &Arc<CudaStream>,
        x: &[T],
    ) -> anyhow::Result<()> {
        anyhow::ensure!(
            x.len() <= T::X_CONST_CAPACITY,
            "x has {} elements; __constant__ holds {}",
            x.len(),
            T::X_CONST_CAPACITY
        );
        self.table.module(KERNEL_FILE).set_constant(stream, "x_const", x)
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

/// Which kernel computes tmp = A·x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmpKernel {
    /// The slides' kernel 1: one thread per row (uncoalesced).
    ThreadPerRow,
    /// The same with x in `__constant__` memory (x must have been uploaded).
    ThreadPerRowXConst,
    /// One thread per row of A reading the transposed matrix (coalesced); `a` is then Aᵀ.
    FromTransposed,
    /// One warp per row, shuffle reduction (coalesced).
    WarpPerRow,
    /// 32 × 32 tiles of A in shared memory.
    TileShared,
}

/// Which kernel computes y = Aᵀ·tmp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YKernel {
    /// The slides' kernel 2: one thread per column (coalesced).
    ThreadPerCol,
    /// 32-row slices of tmp in shared memory, 8 row groups per column.
    TileShared,
}

impl<T: Element> Kernels<T> {
    /// Enqueues tmp[..m] = A·x for the `m` × `n` matrix at `a` (for `FromTransposed`, `a` holds Aᵀ).
    ///
    /// # Safety
    /// `a` must hold m·n elements, `x` n and `tmp` m, all of type T.
    pub unsafe fn launch_tmp(
        &self,
        s: &Arc<CudaStream>,
        kernel: TmpKernel,
        a: CUdeviceptr,
        x: CUdeviceptr,
        tmp: CUdeviceptr,
        (m, n): (usize, usize),
    ) -> anyhow::Result<()> {
        if m == 0 {
            return Ok(());
        }
        let (f, cfg) = match kernel {
            TmpKernel::ThreadPerRow => {
                (AtaxFunction::TmpThreadPerRow, grid_1d(m, BLOCK)?)
            }
            TmpKernel::ThreadPerRowXConst => {
                // x is read from `__constant__` memory: no x argument.
                let f = self.function(AtaxFunction::TmpThreadPerRowXConst);
                return launch(s, f, &[a, tmp], (m, n), grid_1d(m, BLOCK)?);
            }
            TmpKernel::FromTransposed => {
                (AtaxFunction::TmpFromTransposed, grid_1d(m, BLOCK)?)
            }
            TmpKernel::WarpPerRow => {
                (AtaxFunction::TmpWarpPerRow, grid_1d(m * 32, BLOCK)?)
            }
            TmpKernel::TileShared => {
                (AtaxFunction::TmpTileShared, grid_per_32(m, (32, 8, 1))?)
            }
        };
        launch(s, self.function(f), &[a, x, tmp], (m, n), cfg)
    }

    /// Enqueues y[..n] = Aᵀ·tmp.
    ///
    /// # Safety
    /// `a` must hold m·n elements, `tmp` m and `y` n.
    pub unsafe fn launch_y(
        &self,
        s: &Arc<CudaStream>,
        kernel: YKernel,
        a: CUdeviceptr,
        tmp: CUdeviceptr,
        y: CUdeviceptr,
        (m, n): (usize, usize),
    ) -> anyhow::Result<()> {
        let (f, cfg) = match kernel {
            YKernel::ThreadPerCol => (AtaxFunction::YThreadPerCol, grid_1d(n, BLOCK)?),
            YKernel::TileShared => {
                (AtaxFunction::YTileShared, grid_per_32(n, (32, 8, 1))?)
            }
        };
        launch(s, self.function(f), &[a, tmp, y], (m, n), cfg)
    }

    /// Enqueues at = Aᵀ.
    ///
    /// # Safety
    /// `a` and `at` must each hold m·n elements.
    pub unsafe fn launch_transpose(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        at: CUdeviceptr,
        (m, n): (usize, usize),
    ) -> anyhow::Result<()> {
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(n.div_ceil(32))?,
                u32::try_from(m.div_ceil(32))?,
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        launch(
            s,
            self.function(AtaxFunction::TransposeTileShared),
            &[a, at],
            (m, n),
            cfg,
        )
    }

    /// Enqueues the fused pass over the `m` × `n` rows at `a` with `blocks` blocks; block b
    /// writes row b of `partials` (n elements each).
    ///
    /// # Safety
    /// `a` must hold m·n elements, `x` n, `partials` blocks·n.
    pub unsafe fn launch_fused(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        x: CUdeviceptr,
        partials: CUdeviceptr,
        (m, n): (usize, usize),
        blocks: u32,
    ) -> anyhow::Result<()> {
        let shape = self
            .fused_shape(n)
            .ok_or_else(|| anyhow::anyhow!("no fused instance covers n = {n}"))?;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        launch(s, self.fused_function(shape), &[a, x, partials], (m, n), cfg)
    }

    /// Enqueues a one-launch fused kernel: with a grid barrier (a cooperative launch;
    /// `partials` holds l.blocks rows of n, `words` the barrier's two words), or with
    /// atomics (an ordinary launch; `partials` is the accumulator of n, `words` the count
    /// of finished blocks). The kernels leave `words` (and the accumulator) at zero.
    ///
    /// # Safety
    /// `a` must hold m·n elements, `x` and `y` n, `partials` as above, `words` two
    /// `u32`; `l` must come from [`Kernels::fused_launch_with`] for this `n`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_fused_once(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        x: CUdeviceptr,
        partials: CUdeviceptr,
        y: CUdeviceptr,
        words: CUdeviceptr,
        (m, n): (usize, usize),
        l: &FusedLaunch,
    ) -> anyhow::Result<()> {
        let (m32, n32) = dims(m, n)?;
        let cfg = LaunchConfig {
            grid_dim: (l.blocks, 1, 1),
            block_dim: (l.shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = self.once_function(l.how, l.form, l.shape.columns_per_thread);
        let mut b = s.launch_builder(f);
        b.arg(&a).arg(&x).arg(&partials).arg(&y).arg(&words).arg(&m32).arg(&n32);
        match l.how {
            OneLaunch::GridBarrier => b.launch_cooperative(cfg)?,
            OneLaunch::Atomics => b.launch(cfg)?,
        };
        Ok(())
    }

    /// Enqueues the cluster pass: y = Aᵀ(A·x) through the accumulator `acc` (n, zero
    /// between launches) and the count of finished clusters `count` (zero between
    /// launches), both left at zero. Launched as `l`'s plan says, with no query.
    ///
    /// # Safety
    /// `a` must hold m·n elements, `x`, `acc` and `y` n, `count` one `u32`; `l` must come
    /// from [`Kernels::fused_cluster_launch`] for this `m` and `n`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch_fused_cluster(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        x: CUdeviceptr,
        acc: CUdeviceptr,
        y: CUdeviceptr,
        count: CUdeviceptr,
        (m, n): (usize, usize),
        l: &FusedClusterLaunch,
    ) -> anyhow::Result<()> {
        let (m32, n32) = dims(m, n)?;
        // A plan for a shorter row would give each block too little shared memory.
        anyhow::ensure!(
            l.plan.cfg().shared_mem_bytes == cluster_shared_bytes::<T>(n)?,
            "a cluster launch planned for another n than {n}"
        );
        let f = self.function(AtaxFunction::FusedCluster(l.shape.columns_per_thread));
        let args = Args::new()
            .value(a)
            .value(x)
            .value(acc)
            .value(y)
            .value(count)
            .value(m32)
            .value(n32);
        launch::launch_planned_cluster(s, f, &l.plan, args)
    }

    /// Enqueues y[j] = Σ_b partials[b][j] over `blocks` rows, in b order.
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
        s.launch_builder(self.function(AtaxFunction::ReducePartials))
            .arg(&partials)
            .arg(&y)
            .arg(&blocks)
            .arg(&n32)
            .launch(cfg)?;
        Ok(())
    }

    /// The split-rows kernel's shape for an `rows` × `cols` product on this GPU.
    pub fn split_shape(&self, rows: usize, cols: usize) -> anyhow::Result<SplitShape> {
        split_shape(rows, cols, self.sms)
    }

    /// Enqueues out[..cols] = Aᵀ·v for the `rows` × `cols` matrix at `a` with the
    /// split-rows kernel (one partial row of `cols` per slice) and the sum of the slices
    /// by `reduce_partials`. With `a` = A it computes y from tmp; with `a` = Aᵀ
    /// (`rows` = n, `cols` = m) it computes tmp from x.
    ///
    /// # Safety
    /// `a` must hold rows·cols elements, `v` rows, `out` cols and `partials`
    /// `split_shape(rows, cols).slices`·cols.
    pub unsafe fn launch_split(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        v: CUdeviceptr,
        partials: CUdeviceptr,
        out: CUdeviceptr,
        (rows, cols): (usize, usize),
    ) -> anyhow::Result<()> {
        let shape = self.split_shape(rows, cols)?;
        let (rows32, cols32) = dims(rows, cols)?;
        let cfg = LaunchConfig {
            grid_dim: (shape.column_blocks, shape.slices, 1),
            block_dim: (32, SPLIT_WARPS_PER_BLOCK, 1),
            shared_mem_bytes: 0,
        };
        s.launch_builder(self.function(AtaxFunction::YSplitRows))
            .arg(&a)
            .arg(&v)
            .arg(&partials)
            .arg(&rows32)
            .arg(&cols32)
            .arg(&shape.rows_per_slice)
            .launch(cfg)?;
        self.launch_reduce_partials(s, partials, out, shape.slices, cols)
    }

    /// Enqueues cuBLAS's two gemv calls on the timing stream. Row-major A (m × n) is, read
    /// column-major, Aᵀ with leading dimension n: A·x is `CUBLAS_OP_T` on it, Aᵀ·tmp is `CUBLAS_OP_N`.
    ///
    /// # Safety
    /// `a` must hold m·n elements, `x` n, `tmp` m and `y` n.
    pub unsafe fn launch_cublas(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        x: CUdeviceptr,
        tmp: CUdeviceptr,
        y: CUdeviceptr,
        (m, n): (usize, usize),
    ) -> anyhow::Result<()> {
        let (mi, ni) = (i32::try_from(m)?, i32::try_from(n)?);
        let cfg = |trans| GemvConfig {
            trans,
            m: ni,
            n: mi,
            alpha: T::one(),
            lda: ni.max(1),
            incx: 1,
            beta: T::default(),
            incy: 1,
        };
        let a_view = RawView::<T>::new(a, m * n, s);
        T::gemv(
            &self.blas,
            cfg(cublasOperation_t::CUBLAS_OP_T),
            &a_view,
            &RawView::new(x, n, s),
            &mut RawView::new(tmp, m, s),
        )?;
        T::gemv(
            &self.blas,
            cfg(cublasOperation_t::CUBLAS_OP_N),
            &a_view,
            &RawView::new(tmp, m, s),
            &mut RawView::new(y, n, s),
        )?;
        Ok(())
    }
}
