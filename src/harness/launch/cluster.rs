//! The thread-block cluster launch (`cuLaunchKernelEx` with a cluster dimension, which
//! cudarc's launch builder does not offer), and the occupancy query that tells whether
//! the device runs a cluster shape at all.

use cudarc::driver::sys::{
    self, CUdevice_attribute as Attr, CUfunction_attribute_enum, CUlaunchAttribute,
    CUlaunchAttributeID, CUlaunchConfig,
};
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig};

use super::{check_cluster, Args, LaunchError, PORTABLE_CLUSTER};
use crate::harness::gpu::Gpu;

fn cluster_attribute(cluster: (u32, u32, u32)) -> CUlaunchAttribute {
    // SAFETY: an all-zero attribute is a valid "ignore" attribute; its fields are set
    // below.
    let mut a: CUlaunchAttribute = unsafe { std::mem::zeroed() };
    a.id = CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = cluster.0;
    a.value.clusterDim.y = cluster.1;
    a.value.clusterDim.z = cluster.2;
    a
}

fn launch_config(
    stream: sys::CUstream,
    cfg: LaunchConfig,
    attrs: &mut [CUlaunchAttribute],
) -> CUlaunchConfig {
    CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream,
        attrs: attrs.as_mut_ptr(),
        numAttrs: attrs.len() as u32,
    }
}

/// How many clusters of `cluster` blocks of `f` can be resident at once (0: none, the
/// shape is refused). Checks the shape first and opts in to non-portable sizes above 8.
pub fn max_active_clusters(
    gpu: &Gpu,
    f: &CudaFunction,
    cfg: LaunchConfig,
    cluster: (u32, u32, u32),
) -> anyhow::Result<u32> {
    if gpu.ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)? == 0 {
        return Err(LaunchError::Unsupported("thread-block cluster launch").into());
    }
    check_cluster(cfg.grid_dim, cluster, true)?;
    if cluster.0 * cluster.1 * cluster.2 > PORTABLE_CLUSTER {
        f.set_attribute(
            CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
            1,
        )?;
    }
    let mut attrs = [cluster_attribute(cluster)];
    let config = launch_config(gpu.stream.cu_stream(), cfg, &mut attrs);
    let mut n = 0i32;
    gpu.ctx.bind_to_thread()?;
    // Not cudarc's `CudaFunction::occupancy_max_active_clusters`: it passes no launch
    // attributes, so the cluster shape cannot be given, and our kernels declare none
    // (`__cluster_dims__`) for the driver to take instead.
    // SAFETY: config and its one attribute live for the call; n receives one int.
    let r =
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, f.cu_function(), &config) };
    match r.result() {
        Ok(()) => Ok(n.max(0) as u32),
        // The driver answers an impossible shape with an error, not with 0.
        Err(e) => Err(LaunchError::ClusterRefused {
            cluster,
            why: format!("cuOccupancyMaxActiveClusters answered {e:?}"),
        }
        .into()),
    }
}

/// A cluster launch of one kernel that the device accepted: made by [`plan_cluster`],
/// which asks the driver, and launched any number of times by
/// [`launch_planned_cluster`], which does not. A timed launch then carries no
/// occupancy query between its timing events.
#[derive(Debug, Clone, Copy)]
pub struct ClusterPlan {
    /// The kernel the plan was checked for (its `CUfunction`, as an address).
    function: usize,
    cfg: LaunchConfig,
    cluster: (u32, u32, u32),
    active_clusters: u32,
}

impl ClusterPlan {
    pub fn cfg(&self) -> LaunchConfig {
        self.cfg
    }
    pub fn cluster(&self) -> (u32, u32, u32) {
        self.cluster
    }
    /// Clusters of this shape the GPU holds at once (at least 1).
    pub fn active_clusters(&self) -> u32 {
        self.active_clusters
    }
}

/// Checks a cluster launch of `f` as [`launch_cluster`] does ([`check_cluster`], then
/// [`max_active_clusters`] > 0) and returns it as a plan to launch later.
pub fn plan_cluster(
    gpu: &Gpu,
    f: &CudaFunction,
    cfg: LaunchConfig,
    cluster: (u32, u32, u32),
) -> anyhow::Result<ClusterPlan> {
    let active_clusters = max_active_clusters(gpu, f, cfg, cluster)?;
    if active_clusters == 0 {
        return Err(LaunchError::ClusterRefused {
            cluster,
            why:
                "not one such cluster fits on a GPC (cuOccupancyMaxActiveClusters = 0)"
                    .into(),
        }
        .into());
    }
    Ok(ClusterPlan {
        function: f.cu_function() as usize,
        cfg,
        cluster,
        active_clusters,
    })
}

/// Launches `f` on `stream` as `plan` says, with no query: the checks were made when the
/// plan was. A plan made for another kernel is refused.
///
/// # Safety
/// `args` must match the kernel's parameters in number, order and type.
pub unsafe fn launch_planned_cluster(
    stream: &CudaStream,
    f: &CudaFunction,
    plan: &ClusterPlan,
    mut args: Args<'_>,
) -> anyhow::Result<()> {
    if plan.function != f.cu_function() as usize {
        return Err(LaunchError::BadCluster(
            "this cluster plan was checked for another kernel".into(),
        )
        .into());
    }
    stream.context().bind_to_thread()?;
    let mut attrs = [cluster_attribute(plan.cluster)];
    let config = launch_config(stream.cu_stream(), plan.cfg, &mut attrs);
    let mut params = args.pointers();
    sys::cuLaunchKernelEx(
        &config,
        f.cu_function(),
        params.as_mut_ptr(),
        std::ptr::null_mut(),
    )
    .result()?;
    Ok(())
}

/// Launches `f` with thread-block clusters of shape `cluster`, after the checks of
/// [`check_cluster`] and [`max_active_clusters`]: a shape the device refuses for this
/// kernel (too much shared memory per cluster, too many blocks) is an error here.
///
/// # Safety
/// `args` must match the kernel's parameters in number, order and type.
pub unsafe fn launch_cluster(
    gpu: &Gpu,
    f: &CudaFunction,
    cfg: LaunchConfig,
    cluster: (u32, u32, u32),
    args: Args<'_>,
) -> anyhow::Result<()> {
    let plan = plan_cluster(gpu, f, cfg, cluster)?;
    launch_planned_cluster(&gpu.stream, f, &plan, args)
}
