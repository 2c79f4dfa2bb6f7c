//! The shapes of the launches, computed on the CPU: the fused kernel's block for `n`
//! columns, the blocks of the one-launch and cluster forms, and the split-rows grid.

use crate::atax::element::Element;
use crate::harness::launch::ClusterPlan;

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
