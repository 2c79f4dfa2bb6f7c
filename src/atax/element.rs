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
    /// The columns-per-thread instances of the wide fused kernel (each row read twice):
    /// one, past the largest register instance.
    const WIDE_COLUMNS_PER_THREAD: &'static [u32];
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

/// Implements [`Element`] for a float type: its C name, epsilon, fused instances, `__constant__`
/// capacity and random inputs; the suffix is the type's name and the size its own.
macro_rules! element {
    (
        $t:ident, $c_name:literal, $eps:expr, $fused:expr, $wide:expr,
        $x_const:literal, $random:path
    ) => {
        impl Element for $t {
            const SUFFIX: &'static str = stringify!($t);
            const C_NAME: &'static str = $c_name;
            const BYTES: usize = std::mem::size_of::<$t>();
            const EPS: f64 = $eps;
            const FUSED_COLUMNS_PER_THREAD: &'static [u32] = $fused;
            const WIDE_COLUMNS_PER_THREAD: &'static [u32] = $wide;
            const X_CONST_CAPACITY: usize = $x_const;
            fn random(n: usize, seed: u64) -> Vec<Self> {
                $random(n, seed)
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
    };
}

element!(
    f32,
    "float",
    f32::EPSILON as f64,
    &[1, 2, 4, 8, 16],
    &[32],
    16384,
    inputs::random_f32
);
element!(f64, "double", f64::EPSILON, &[1, 2, 4, 8], &[16], 8192, inputs::random_f64);

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

#[cfg(test)]
mod tests {
    use super::Element;

    #[test]
    fn each_type_carries_its_names_and_sizes() {
        assert_eq!((f32::SUFFIX, f32::C_NAME, f32::BYTES), ("f32", "float", 4));
        assert_eq!((f64::SUFFIX, f64::C_NAME, f64::BYTES), ("f64", "double", 8));
        assert_eq!((f32::EPS, f64::EPS), (f32::EPSILON as f64, f64::EPSILON));
        assert_eq!(f32::FUSED_COLUMNS_PER_THREAD, &[1, 2, 4, 8, 16]);
        assert_eq!(f64::FUSED_COLUMNS_PER_THREAD, &[1, 2, 4, 8]);
        assert_eq!((f32::X_CONST_CAPACITY, f64::X_CONST_CAPACITY), (16384, 8192));
    }
}
