//! Tensor maps for the TMA: what `cuTensorMapEncodeTiled` is asked for, checked by
//! [`check_tensor_map`] before the driver sees it, and the encoded map a kernel receives.

use std::ffi::c_void;

use cudarc::driver::sys::{
    self, CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill,
    CUtensorMapInterleave, CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};

use super::{check_tensor_map, LaunchError, TensorMapBytes};
use crate::harness::gpu::Gpu;

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

/// An encoded tensor map, ready to pass to a kernel with [`Args::tensor_map`](super::Args::tensor_map).
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
