//! Launches and memory controls that cudarc's safe layer does not offer, wrapped once:
//!
//! | wrapper | driver call | checked on the CPU before the driver is called |
//! |---------|-------------|------------------------------------------------|
//! | [`launch_cooperative`] | `cuLaunchCooperativeKernel`, through cudarc's launch builder | the grid fits on the GPU at once |
//! | [`launch_cluster`] | `cuLaunchKernelEx` + cluster dimension | cluster shape, grid divisible by it, then `cuOccupancyMaxActiveClusters` > 0 |
//! | [`plan_cluster`] + [`launch_planned_cluster`] | the same, on any stream | the checks of [`launch_cluster`], once, when the plan is made; each launch only that the plan is this kernel's |
//! | [`TensorMap::tiled`] | `cuTensorMapEncodeTiled` | rank, sizes, 16-byte strides and base, box ≤ 256, buffer length |
//! | [`Gpu::l2_window`] | `cuStreamSetAttribute` + `cuCtxSetLimit` | window ≤ the device's maximum, hit ratio in \[0, 1\], carve-out ≤ the persisting-L2 maximum |
//!
//! Every refusal is a [`LaunchError`] that says what was asked and what the limit is,
//! so a shape the device cannot run ends the program with a sentence, not a driver
//! error code (or worse, a kernel that reads past its buffer).
//!
//! The checks made on the CPU are here, beside the launch arguments and the error; each
//! wrapper that calls the driver is in a module of its own (`cooperative`, `cluster`,
//! `tensor_map`, `l2`), re-exported here.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr};

use super::gpu::Gpu;

mod cluster;
mod cooperative;
mod l2;
mod tensor_map;

pub use cluster::{
    launch_cluster, launch_planned_cluster, max_active_clusters, plan_cluster,
    ClusterPlan,
};
pub use cooperative::{cooperative_capacity, launch_cooperative};
pub use l2::{L2Access, L2Limits, L2Window, WindowGuard};
pub use tensor_map::{Swizzle, TensorMap, TensorMapSpec, TmaElement};

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
        let (ptr, _sync) = b.device_ptr_mut(&gpu.stream);
        self.value(ptr)
    }

    /// A tensor map, passed by value (`const __grid_constant__ CUtensorMap` in the
    /// kernel).
    pub fn tensor_map(self, m: &'a TensorMap) -> Self {
        self.value(*m.param())
    }

    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.cells.iter_mut().map(|c| c.0.as_mut_ptr().cast::<c_void>()).collect()
    }
}

// SAFETY: a cell is plain bytes; the driver reads from it the size of the parameter it
// stands for, which `Args::value` copied in.
unsafe impl DeviceRepr for Cell {}

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

// ---------------------------------------------------------------- tensor maps

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

// ---------------------------------------------------------------- L2 access policy

// ANCHOR: window_check
/// Checks an access-policy window against the device's limits.
pub fn check_window(w: &L2Window, limits: L2Limits) -> Result<(), LaunchError> {
    let bad = |why: String| Err(LaunchError::BadWindow(why));
    if limits.max_window == 0 || limits.max_persisting == 0 {
        // A GPU without them (a T4) skips what needs one; it is not an error.
        return Err(LaunchError::Unsupported(
            "access-policy window (no persisting L2)",
        ));
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
