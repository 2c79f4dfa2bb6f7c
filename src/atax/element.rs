//! The element types the chapter measures (`float` and `double`), and device addresses as
//! cuBLAS wants them.
//!
//! Launches take device addresses (`CUdeviceptr`) rather than slices, because the same kernels
//! run on device buffers, on row chunks of them (the streamed versions) and on managed memory.

use std::sync::Arc;

use cudarc::cublas::{CudaBlas, Gemv, GemvConfig};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};

use crate::harness::inputs;

/// `float` or `double`.
pub trait Element:
    DeviceRepr
    + ValidAsZeroBits
    + Copy
    + Default
    + Into<f64>
    + Send
    + Sync
    + std::fmt::Debug
    + 'static
{
    /// The suffix of the kernels' names, `f32` or `f64`.
    const SUFFIX: &'static str;
    /// The C name, for tables.
    const C_NAME: &'static str;
    const BYTES: usize;
    /// Machine epsilon.
    const EPS: f64;
    /// The columns-per-thread instances of the fused kernel (see `kernels/atax.cu`).
    const FUSED_COLUMNS_PER_THREAD: &'static [u32];
    /// Bytes of `__constant__` x the kernel file declares room for, in elements.
    const X_CONST_CAPACITY: usize;
    fn random(n: usize, seed: u64) -> Vec<Self>;
    fn one() -> Self;
    /// `y = op(A) x` with cuBLAS.
    ///
    /// # Safety
    /// The addresses must hold what `cfg` describes.
    unsafe fn gemv(
        blas: &CudaBlas,
        cfg: GemvConfig<Self>,
        a: &RawView<Self>,
        x: &RawView<Self>,
        y: &mut RawView<Self>,
    ) -> anyhow::Result<()>;
}

impl Element for f32 {
    const SUFFIX: &'static str = "f32";
    const C_NAME: &'static str = "float";
    const BYTES: usize = 4;
    const EPS: f64 = f32::EPSILON as f64;
    const FUSED_COLUMNS_PER_THREAD: &'static [u32] = &[1, 2, 4, 8, 16];
    const X_CONST_CAPACITY: usize = 16384;
    fn random(n: usize, seed: u64) -> Vec<Self> {
        inputs::random_f32(n, seed)
    }
    fn one() -> Self {
        1.0
    }
    unsafe fn gemv(
        blas: &CudaBlas,
        cfg: GemvConfig<Self>,
        a: &RawView<Self>,
        x: &RawView<Self>,
        y: &mut RawView<Self>,
    ) -> anyhow::Result<()> {
        Ok(blas.gemv(cfg, a, x, y)?)
    }
}

impl Element for f64 {
    const SUFFIX: &'static str = "f64";
    const C_NAME: &'static str = "double";
    const BYTES: usize = 8;
    const EPS: f64 = f64::EPSILON;
    const FUSED_COLUMNS_PER_THREAD: &'static [u32] = &[1, 2, 4, 8];
    const X_CONST_CAPACITY: usize = 8192;
    fn random(n: usize, seed: u64) -> Vec<Self> {
        inputs::random_f64(n, seed)
    }
    fn one() -> Self {
        1.0
    }
    unsafe fn gemv(
        blas: &CudaBlas,
        cfg: GemvConfig<Self>,
        a: &RawView<Self>,
        x: &RawView<Self>,
        y: &mut RawView<Self>,
    ) -> anyhow::Result<()> {
        Ok(blas.gemv(cfg, a, x, y)?)
    }
}

/// A device address and a length, for cuBLAS (which wants something that is `DevicePtr`).
pub struct RawView<T> {
    pub ptr: CUdeviceptr,
    pub len: usize,
    pub stream: Arc<CudaStream>,
    marker: std::marker::PhantomData<T>,
}

impl<T> RawView<T> {
    pub fn new(ptr: CUdeviceptr, len: usize, stream: &Arc<CudaStream>) -> Self {
        Self { ptr, len, stream: stream.clone(), marker: std::marker::PhantomData }
    }
}

impl<T> cudarc::driver::DeviceSlice<T> for RawView<T> {
    fn len(&self) -> usize {
        self.len
    }
    fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }
}

impl<T> DevicePtr<T> for RawView<T> {
    fn device_ptr<'a>(
        &'a self,
        _stream: &'a CudaStream,
    ) -> (CUdeviceptr, cudarc::driver::SyncOnDrop<'a>) {
        (self.ptr, cudarc::driver::SyncOnDrop::Sync(None))
    }
}

impl<T> cudarc::driver::DevicePtrMut<T> for RawView<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        _stream: &'a CudaStream,
    ) -> (CUdeviceptr, cudarc::driver::SyncOnDrop<'a>) {
        (self.ptr, cudarc::driver::SyncOnDrop::Sync(None))
    }
}

/// The device address of `buf` (a `CudaSlice`, a view or managed memory).
pub fn address<T, B: DevicePtr<T>>(buf: &B, stream: &CudaStream) -> CUdeviceptr {
    buf.device_ptr(stream).0
}
