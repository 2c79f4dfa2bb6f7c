//! The fused passes: one read of A for both products, as the two-launch form (partial
//! y per block, then their sum), the one-launch forms (partials with a last-block sum, or
//! atomics) and the cluster form (the blocks of a cluster add up through distributed
//! shared memory).

use std::sync::Arc;

use cudarc::driver::sys::{CUdeviceptr, CUfunction_attribute_enum};
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::{
    cluster_grid, cluster_shared_bytes, dims, fused_form, fused_shape, launch,
    one_launch_blocks, AtaxFunction, FusedClusterLaunch, FusedForm, FusedLaunch,
    FusedShape, Kernels, OneLaunch,
};
use crate::atax::element::Element;
use crate::harness::launch::{self, Args};
use crate::harness::Gpu;

impl<T: Element> Kernels<T> {
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
        self.table.fused_blocks(self.sms, m, n)
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
}
