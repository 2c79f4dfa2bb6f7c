//! Launches and memory controls that cudarc's safe layer does not offer, wrapped once:
//!
//! | wrapper | driver call | checked on the CPU before the driver is called |
//! |---------|-------------|------------------------------------------------|
//! | [`launch_cooperative`] | `cuLaunchCooperativeKernel` | the grid fits on the GPU at once |
//! | [`launch_cluster`] | `cuLaunchKernelEx` + cluster dimension | cluster shape, grid divisible by it, then `cuOccupancyMaxActiveClusters` > 0 |
//! | [`plan_cluster`] + [`launch_planned_cluster`] | the same, on any stream | the checks of [`launch_cluster`], once, when the plan is made; each launch only that the plan is this kernel's |
//! | [`TensorMap::tiled`] | `cuTensorMapEncodeTiled` | rank, sizes, 16-byte strides and base, box ≤ 256, buffer length |
//! | [`Gpu::l2_window`] | `cuStreamSetAttribute` + `cuCtxSetLimit` | window ≤ the device's maximum, hit ratio in \[0, 1\], carve-out ≤ the persisting-L2 maximum |
//!
//! Every refusal is a [`LaunchError`] that says what was asked and what the limit is,
//! so a shape the device cannot run ends the program with a sentence, not a driver
//! error code (or worse, a kernel that reads past its buffer).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use cudarc::driver::sys::{
    self, CUaccessProperty, CUdevice_attribute as Attr, CUfunction_attribute_enum,
    CUlaunchAttribute, CUlaunchAttributeID, CUlaunchConfig, CUlimit, CUtensorMap,
    CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
};

use super::gpu::Gpu;

/// A launch, tensor map or L2 window that was refused, with the reason in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchError {
    /// A cooperative grid larger than the blocks the GPU can hold at once.
    CooperativeTooLarge { blocks: u64, capacity: u64 },
    /// The device has no cooperative launch (or no cluster launch).
    Unsupported(&'static str),
    /// A cluster shape that no launch can have (zero, too many blocks, grid not
    /// divisible).
    BadCluster(String),
    /// A cluster shape the device refused for this kernel (occupancy query answered 0).
    ClusterRefused { cluster: (u32, u32, u32), why: String },
    /// A tensor map whose arguments break one of the TMA's rules.
    BadTensorMap(String),
    /// An access-policy window outside the device's limits.
    BadWindow(String),
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CooperativeTooLarge { blocks, capacity } => write!(
                f,
                "a cooperative launch of {blocks} blocks is refused: at most {capacity} \
                 blocks of this kernel fit on the GPU at once"
            ),
            Self::Unsupported(what) => write!(f, "this device has no {what}"),
            Self::BadCluster(why) => write!(f, "bad cluster shape: {why}"),
            Self::ClusterRefused { cluster: (x, y, z), why } => write!(
                f,
                "the device refuses clusters of {x}x{y}x{z} blocks for this kernel: {why}"
            ),
            Self::BadTensorMap(why) => write!(f, "bad tensor map: {why}"),
            Self::BadWindow(why) => write!(f, "bad L2 access-policy window: {why}"),
        }
    }
}

impl std::error::Error for LaunchError {}

/// The parameters of one launch, in order, each stored by value (a device pointer, a
/// scalar or a 128-byte tensor map) in its own aligned cell: the driver reads them
/// through pointers at the launch call, so they must outlive it, and the borrows of the
/// buffers (`'a`) must too.
#[derive(Default)]
pub struct Args<'a> {
    cells: Vec<Cell>,
    _borrows: PhantomData<&'a ()>,
}

/// One parameter's bytes; 128 bytes aligned to 128 holds a `CUtensorMap`.
#[repr(C, align(128))]
struct Cell([u8; 128]);

impl<'a> Args<'a> {
    pub fn new() -> Self {
        Self::default()
    }

    /// A scalar (or any plain value of at most 128 bytes), by value.
    pub fn value<T: DeviceRepr>(mut self, v: T) -> Self {
        let size = std::mem::size_of::<T>();
        assert!(size <= 128, "a kernel parameter of {size} bytes (at most 128)");
        let mut cell = Cell([0; 128]);
        // SAFETY: T is plain data (DeviceRepr) of `size` bytes, copied into a cell that
        // holds at least that many.
        unsafe {
            std::ptr::copy_nonoverlapping(
                (&v as *const T).cast::<u8>(),
                cell.0.as_mut_ptr(),
                size,
            )
        };
        self.cells.push(cell);
        self
    }

    /// A buffer the kernel reads.
    pub fn buf<T>(self, b: &'a CudaSlice<T>, gpu: &Gpu) -> Self {
        let (ptr, _sync) = b.device_ptr(&gpu.stream);
        self.value(ptr)
    }

    /// A buffer the kernel writes (the exclusive borrow lasts as long as the
    /// arguments).
    pub fn buf_mut<T>(self, b: &'a mut CudaSlice<T>, gpu: &Gpu) -> Self {
        let (ptr, _sync) = b.device_ptr(&gpu.stream);
        self.value(ptr)
    }

    /// A tensor map, passed by value (`const __grid_constant__ CUtensorMap` in the
    /// kernel).
    pub fn tensor_map(self, m: &'a TensorMap) -> Self {
        self.value(m.raw)
    }

    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.cells.iter_mut().map(|c| c.0.as_mut_ptr().cast::<c_void>()).collect()
    }
}

// SAFETY: a CUtensorMap is 128 opaque bytes the kernel receives by value.
unsafe impl DeviceRepr for TensorMapBytes {}

/// A `CUtensorMap`'s bytes as a kernel parameter.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(128))]
pub struct TensorMapBytes(pub [u64; 16]);

// ---------------------------------------------------------------- cooperative launch

/// Checks that a cooperative grid of `blocks` fits in `capacity` co-resident blocks.
pub fn check_cooperative(blocks: u64, capacity: u64) -> Result<(), LaunchError> {
    if blocks == 0 || blocks > capacity {
        return Err(LaunchError::CooperativeTooLarge { blocks, capacity });
    }
    Ok(())
}

/// How many blocks of `f` (with `block` threads and `shared` dynamic shared bytes) the
/// GPU holds at once: blocks per SM from the occupancy calculator times the SMs.
pub fn cooperative_capacity(
    gpu: &Gpu,
    f: &CudaFunction,
    block: u32,
    shared: u32,
) -> anyhow::Result<u64> {
    let per_sm =
        f.occupancy_max_active_blocks_per_multiprocessor(block, shared as usize, None)?;
    Ok(per_sm as u64 * gpu.info.sms as u64)
}

/// Launches `f` so that all its blocks are resident at once (a grid barrier is then
/// safe), after checking the grid against [`cooperative_capacity`].
///
/// # Safety
/// `args` must match the kernel's parameters in number, order and type.
pub unsafe fn launch_cooperative(
    gpu: &Gpu,
    f: &CudaFunction,
    cfg: LaunchConfig,
    mut args: Args<'_>,
) -> anyhow::Result<()> {
    if gpu.ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 0 {
        return Err(LaunchError::Unsupported("cooperative launch").into());
    }
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    let capacity = cooperative_capacity(gpu, f, b.0 * b.1 * b.2, cfg.shared_mem_bytes)?;
    check_cooperative(g.0 as u64 * g.1 as u64 * g.2 as u64, capacity)?;
    gpu.ctx.bind_to_thread()?;
    let mut params = args.pointers();
    sys::cuLaunchCooperativeKernel(
        f.cu_function(),
        g.0,
        g.1,
        g.2,
        b.0,
        b.1,
        b.2,
        cfg.shared_mem_bytes,
        gpu.stream.cu_stream(),
        params.as_mut_ptr(),
    )
    .result()?;
    Ok(())
}

// ---------------------------------------------------------------- cluster launch

/// The most blocks a cluster may have without opting in, and with
/// (`CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`, compute capability 9.0).
pub const PORTABLE_CLUSTER: u32 = 8;
pub const NON_PORTABLE_CLUSTER: u32 = 16;

// ANCHOR: check_cluster
/// Checks a cluster shape against a grid before anything is asked of the driver: every
/// dimension at least 1, at most 16 blocks (8 without `non_portable`), and the grid
/// a whole number of clusters in each dimension.
pub fn check_cluster(
    grid: (u32, u32, u32),
    cluster: (u32, u32, u32),
    non_portable: bool,
) -> Result<(), LaunchError> {
    let (c, g) = ([cluster.0, cluster.1, cluster.2], [grid.0, grid.1, grid.2]);
    if c.contains(&0) || g.contains(&0) {
        return Err(LaunchError::BadCluster(format!(
            "grid {grid:?} and cluster {cluster:?} must have no zero dimension"
        )));
    }
    let blocks = c.iter().map(|&d| d as u64).product::<u64>();
    let limit = if non_portable { NON_PORTABLE_CLUSTER } else { PORTABLE_CLUSTER };
    if blocks > limit as u64 {
        return Err(LaunchError::BadCluster(format!(
            "{blocks} blocks per cluster; at most {limit}{}",
            if non_portable { "" } else { " without the non-portable opt-in" }
        )));
    }
    for (axis, (&gd, &cd)) in ["x", "y", "z"].iter().zip(g.iter().zip(&c)) {
        if !gd.is_multiple_of(cd) {
            return Err(LaunchError::BadCluster(format!(
                "the grid's {axis} dimension ({gd}) is not a multiple of the \
                 cluster's ({cd})"
            )));
        }
    }
    Ok(())
}
// ANCHOR_END: check_cluster

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

// ---------------------------------------------------------------- tensor maps

/// An element type the TMA moves, with its size in bytes.
pub trait TmaElement: DeviceRepr {
    const TYPE: CUtensorMapDataType;
}

impl TmaElement for f32 {
    const TYPE: CUtensorMapDataType =
        CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}
impl TmaElement for u32 {
    const TYPE: CUtensorMapDataType =
        CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32;
}
impl TmaElement for f64 {
    const TYPE: CUtensorMapDataType =
        CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
}

/// What `cuTensorMapEncodeTiled` is asked for, innermost dimension first (for a
/// row-major matrix: `dims = [columns, rows]`, `strides = [row pitch in bytes]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorMapSpec {
    pub elem_bytes: u64,
    /// The base address of the tensor.
    pub base: u64,
    /// Bytes of the buffer from `base`: every element the map can reach must lie
    /// inside.
    pub buffer_bytes: u64,
    pub dims: Vec<u64>,
    /// Bytes between consecutive indices of dimensions 1.. (rank - 1 values).
    pub strides: Vec<u64>,
    /// The box one copy moves, innermost first (rank values).
    pub box_dims: Vec<u32>,
    pub swizzle: Swizzle,
}

/// How the TMA lays a box out in shared memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swizzle {
    /// Row after row, as in global memory.
    None,
    /// Each 128-byte row's eight 16-byte chunks permuted by XOR with the row index
    /// modulo 8: a column of 4-byte elements spreads over 8 banks instead of 1. The box's
    /// inner size must be at most 128 bytes (and the shared buffer 1024-byte aligned).
    B128,
}

impl TensorMapSpec {
    /// See [`check_tensor_map`].
    pub fn check(&self) -> Result<(), LaunchError> {
        check_tensor_map(self)
    }
}

// ANCHOR: tensor_map_check
/// The TMA's rules (CUDA driver API, `cuTensorMapEncodeTiled`, without interleave),
/// checked on the CPU so that a bad map is a sentence, not an error code.
pub fn check_tensor_map(spec: &TensorMapSpec) -> Result<(), LaunchError> {
    let bad = |why: String| Err(LaunchError::BadTensorMap(why));
    let rank = spec.dims.len();
    if !(1..=5).contains(&rank) {
        return bad(format!("rank {rank}; the TMA takes 1 to 5 dimensions"));
    }
    if spec.strides.len() != rank - 1 || spec.box_dims.len() != rank {
        return bad(format!(
            "rank {rank} needs {} strides and {rank} box sizes, not {} and {}",
            rank - 1,
            spec.strides.len(),
            spec.box_dims.len()
        ));
    }
    if ![1, 2, 4, 8].contains(&spec.elem_bytes) {
        return bad(format!("elements of {} bytes", spec.elem_bytes));
    }
    if !spec.base.is_multiple_of(16) {
        return bad(format!("base address {:#x} is not 16-byte aligned", spec.base));
    }
    if let Some(d) = spec.dims.iter().find(|&&d| d == 0 || d > 1 << 32) {
        return bad(format!("a dimension of {d}; each must be 1 to 2^32"));
    }
    let mut extent = spec.dims[0] * spec.elem_bytes;
    for (i, &s) in spec.strides.iter().enumerate() {
        if !s.is_multiple_of(16) || s >= 1 << 40 {
            return bad(format!(
                "stride {s} bytes of dimension {}: strides must be multiples of 16 \
                 bytes below 2^40",
                i + 1
            ));
        }
        if s < extent {
            return bad(format!(
                "stride {s} bytes of dimension {} is shorter than the \
                 {extent} bytes one index of it spans: rows would overlap",
                i + 1
            ));
        }
        extent = s * spec.dims[i + 1];
    }
    let rows: u64 =
        spec.strides.iter().zip(&spec.dims[1..]).map(|(s, d)| s * (d - 1)).sum();
    let last = spec.dims[0] * spec.elem_bytes + rows;
    if last > spec.buffer_bytes {
        return bad(format!(
            "the tensor reaches {last} bytes past its base; the buffer has {}",
            spec.buffer_bytes
        ));
    }
    if let Some(b) = spec.box_dims.iter().find(|&&b| b == 0 || b > 256) {
        return bad(format!("a box size of {b}; each must be 1 to 256"));
    }
    if !(spec.box_dims[0] as u64 * spec.elem_bytes).is_multiple_of(16) {
        return bad(format!(
            "the box's inner size ({} elements of {} bytes) is not a \
             multiple of 16 bytes",
            spec.box_dims[0], spec.elem_bytes
        ));
    }
    let inner = spec.box_dims[0] as u64 * spec.elem_bytes;
    if spec.swizzle == Swizzle::B128 && inner > 128 {
        return bad(format!(
            "the 128-byte swizzle takes boxes of at most 128 bytes a row, \
             not {inner}"
        ));
    }
    Ok(())
}
// ANCHOR_END: tensor_map_check

/// An encoded tensor map, ready to pass to a kernel with [`Args::tensor_map`].
#[derive(Debug, Clone, Copy)]
pub struct TensorMap {
    raw: TensorMapBytes,
    pub spec_box: (u32, u32),
}

impl TensorMap {
    /// A 2-D tiled map over the row-major `rows x cols` matrix in `buf` whose rows
    /// start `pitch` elements apart, moved in boxes of `box_rows x box_cols` elements
    /// laid out in shared memory as `swizzle` says. Elements of a box outside the
    /// matrix read as zero and are not written.
    pub fn tiled<T: TmaElement>(
        gpu: &Gpu,
        buf: &CudaSlice<T>,
        (rows, cols, pitch): (usize, usize, usize),
        (box_rows, box_cols): (u32, u32),
        swizzle: Swizzle,
    ) -> anyhow::Result<Self> {
        let elem = std::mem::size_of::<T>() as u64;
        let (base, _sync) = buf.device_ptr(&gpu.stream);
        let spec = TensorMapSpec {
            elem_bytes: elem,
            base,
            buffer_bytes: buf.len() as u64 * elem,
            dims: vec![cols as u64, rows as u64],
            strides: vec![pitch as u64 * elem],
            box_dims: vec![box_cols, box_rows],
            swizzle,
        };
        spec.check()?;
        let element_strides = [1u32, 1];
        // SAFETY: an all-zero map is overwritten by the encode call.
        let mut raw: CUtensorMap = unsafe { std::mem::zeroed() };
        // SAFETY: every array has the rank's length; the spec passed the TMA's rules.
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut raw,
                T::TYPE,
                2,
                base as *mut c_void,
                spec.dims.as_ptr(),
                spec.strides.as_ptr(),
                spec.box_dims.as_ptr(),
                element_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                match swizzle {
                    Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
                    Swizzle::B128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
                },
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
            .result()?
        };
        Ok(Self { raw: TensorMapBytes(raw.opaque), spec_box: (box_rows, box_cols) })
    }

    /// The map as a kernel parameter for cudarc's launch builder (`.arg(map.param())`).
    pub fn param(&self) -> &TensorMapBytes {
        &self.raw
    }
}

// ---------------------------------------------------------------- L2 access policy

/// What L2 does with the lines of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Access {
    /// Kept in the persisting part of L2, evicted last.
    Persisting,
    /// Evicted first.
    Streaming,
    /// As without a window.
    Normal,
}

impl L2Access {
    fn raw(self) -> CUaccessProperty {
        match self {
            L2Access::Persisting => CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
            L2Access::Streaming => CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
            L2Access::Normal => CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
        }
    }
}

/// The device's limits on access-policy windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2Limits {
    /// `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE`, bytes.
    pub max_window: usize,
    /// `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE`, bytes.
    pub max_persisting: usize,
}

impl L2Limits {
    pub fn query(gpu: &Gpu) -> anyhow::Result<Self> {
        let a = |x| gpu.ctx.attribute(x).map(|v| v.max(0) as usize);
        Ok(Self {
            max_window: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?,
            max_persisting: a(Attr::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?,
        })
    }
}

/// A window of `bytes` bytes, `hit_ratio` of it given the hit property, and an L2
/// carve-out of `persisting` bytes for persisting lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2Window {
    pub bytes: usize,
    pub hit_ratio: f32,
    pub hit: L2Access,
    pub persisting: usize,
}

impl L2Window {
    /// See [`check_window`].
    pub fn check(&self, limits: L2Limits) -> Result<(), LaunchError> {
        check_window(self, limits)
    }
}

// ANCHOR: window_check
/// Checks an access-policy window against the device's limits.
pub fn check_window(w: &L2Window, limits: L2Limits) -> Result<(), LaunchError> {
    let bad = |why: String| Err(LaunchError::BadWindow(why));
    if limits.max_window == 0 || limits.max_persisting == 0 {
        return bad("the device has no access-policy windows".into());
    }
    if w.bytes == 0 || w.bytes > limits.max_window {
        return bad(format!(
            "a window of {} bytes; this device takes 1 to {} bytes",
            w.bytes, limits.max_window
        ));
    }
    if !(0.0..=1.0).contains(&w.hit_ratio) {
        return bad(format!("hit ratio {}; it must lie in [0, 1]", w.hit_ratio));
    }
    if w.persisting > limits.max_persisting {
        return bad(format!(
            "a persisting carve-out of {} bytes; this device allows at most {}",
            w.persisting, limits.max_persisting
        ));
    }
    if w.hit == L2Access::Persisting && w.persisting == 0 {
        return bad("persisting lines need a carve-out larger than 0 bytes".into());
    }
    Ok(())
}
// ANCHOR_END: window_check

/// An access-policy window set on a [`Gpu`]'s timing stream; [`WindowGuard::reset`] (or
/// dropping the guard) removes it, releases the persisting lines and returns the
/// carve-out.
pub struct WindowGuard<'g> {
    gpu: &'g Gpu,
    done: bool,
}

fn set_stream_window(
    gpu: &Gpu,
    base: u64,
    bytes: usize,
    ratio: f32,
    hit: L2Access,
) -> anyhow::Result<()> {
    // SAFETY: a zeroed value is a valid union; the window is set below.
    let mut v: sys::CUstreamAttrValue = unsafe { std::mem::zeroed() };
    v.accessPolicyWindow = sys::CUaccessPolicyWindow {
        base_ptr: base as *mut c_void,
        num_bytes: bytes,
        hitRatio: ratio,
        hitProp: hit.raw(),
        missProp: CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
    };
    gpu.ctx.bind_to_thread()?;
    // SAFETY: the stream is valid; v lives for the call.
    unsafe {
        sys::cuStreamSetAttribute(
            gpu.stream.cu_stream(),
            CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
            &v,
        )
        .result()?
    };
    Ok(())
}

impl Gpu {
    /// Sets an access-policy window over the first `w.bytes` bytes of `buf` on the
    /// timing stream, after [`L2Window::check`]: kernels launched on the stream from
    /// now on mark those lines with `w.hit` (a share `w.hit_ratio` of them) and the
    /// rest as streaming.
    pub fn l2_window<T>(
        &self,
        buf: &CudaSlice<T>,
        w: L2Window,
    ) -> anyhow::Result<WindowGuard<'_>> {
        w.check(L2Limits::query(self)?)?;
        let have = buf.len() * std::mem::size_of::<T>();
        if w.bytes > have {
            return Err(LaunchError::BadWindow(format!(
                "a window of {} bytes over a buffer of {have}",
                w.bytes
            ))
            .into());
        }
        self.ctx.bind_to_thread()?;
        // SAFETY: sets a context limit within the device's maximum (checked above).
        unsafe {
            sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, w.persisting)
                .result()?
        };
        let (base, _sync) = buf.device_ptr(&self.stream);
        set_stream_window(self, base, w.bytes, w.hit_ratio, w.hit)?;
        Ok(WindowGuard { gpu: self, done: false })
    }
}

impl WindowGuard<'_> {
    /// Removes the window, turns persisting lines back into normal ones and sets the
    /// carve-out to 0, so later work sees the L2 it saw before.
    pub fn reset(mut self) -> anyhow::Result<()> {
        self.done = true;
        reset_window(self.gpu)
    }
}

fn reset_window(gpu: &Gpu) -> anyhow::Result<()> {
    gpu.stream.synchronize()?;
    set_stream_window(gpu, 0, 0, 0.0, L2Access::Normal)?;
    // SAFETY: context-wide calls on the bound context.
    unsafe {
        sys::cuCtxResetPersistingL2Cache().result()?;
        sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0).result()?;
    }
    Ok(())
}

impl Drop for WindowGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Best effort on an early return: the error that caused it is the one to
            // report.
            let _ = reset_window(self.gpu);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_keep_each_value_in_its_own_aligned_cell() {
        let mut a =
            Args::new().value(7u32).value(2.5f64).value(TensorMapBytes([9; 16]));
        let p = a.pointers();
        assert_eq!(p.len(), 3);
        for ptr in &p {
            assert_eq!(*ptr as usize % 128, 0);
        }
        // SAFETY: the cells hold what was pushed, in order.
        unsafe {
            assert_eq!(*(p[0] as *const u32), 7);
            assert_eq!(*(p[1] as *const f64), 2.5);
            assert_eq!(*(p[2] as *const [u64; 16]), [9; 16]);
        }
    }
}
