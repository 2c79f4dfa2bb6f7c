//! The affine read `dst[i] = src[offset + i stride]`: strided and misaligned loads, measured
//! over one source array per sweep.

use std::fmt::Debug;
use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, DeviceRepr, PushKernelArg, ValidAsZeroBits,
};

use crate::coalescing::counted;
use crate::coalescing::reference;
use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu};

use super::kernels::{GridStrideKernel, Kernels, Measurement, StreamKernel};

/// `LOADS_IN_FLIGHT` of `affine_read`: elements per thread per round.
const AFFINE_PER_THREAD: usize = 8;

/// The element types of the affine read.
pub trait Element:
    DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Debug + Send + Sync + 'static
{
    /// The `affine_read_*` kernel for this type.
    const AFFINE: StreamKernel;
    /// `n` seeded random elements.
    fn random(n: usize, seed: u64) -> Vec<Self>;
}

impl Element for f32 {
    const AFFINE: StreamKernel = StreamKernel::AffineF32;
    fn random(n: usize, seed: u64) -> Vec<Self> {
        inputs::random_f32(n, seed)
    }
}

impl Element for f64 {
    const AFFINE: StreamKernel = StreamKernel::AffineF64;
    fn random(n: usize, seed: u64) -> Vec<Self> {
        inputs::random_f64(n, seed)
    }
}

/// Enqueues `dst[i] = src[offset + i stride]` for `i < n`.
pub fn launch_affine_read<T: Element>(
    stream: &Arc<CudaStream>,
    kernel: &GridStrideKernel,
    src: &CudaSlice<T>,
    dst: &mut CudaSlice<T>,
    (n, stride, offset): (usize, usize, usize),
) -> anyhow::Result<()> {
    assert!(dst.len() >= n, "dst holds {} elements, {n} needed", dst.len());
    assert!(
        n == 0 || offset + (n - 1) * stride < src.len(),
        "the last load would leave src"
    );
    let cfg = kernel.config(n, AFFINE_PER_THREAD);
    let (n, stride, offset) = (n as u64, stride as u64, offset as u64);
    // SAFETY: matches affine_read_*(const T* src, T* dst, u64 n, u64 stride, u64 offset); the
    // asserts keep every access inside the buffers.
    unsafe {
        stream
            .launch_builder(kernel.f)
            .arg(src)
            .arg(dst)
            .arg(&n)
            .arg(&stride)
            .arg(&offset)
            .launch(cfg)?
    };
    Ok(())
}

// ANCHOR: measure_affine_read
/// Verifies the affine read at `stride` and `offset` over the whole of `src` (which
/// holds `src_host`), then times it. `dst` and `got` must hold the `n` elements it
/// writes.
pub fn measure_affine_read<T: Element>(
    gpu: &Gpu,
    kernels: &Kernels,
    (src, src_host): (&CudaSlice<T>, &[T]),
    (dst, got): (&mut CudaSlice<T>, &mut [T]),
    (stride, offset): (usize, usize),
    plan: Plan,
) -> anyhow::Result<Measurement> {
    let kernel = kernels.stream(T::AFFINE);
    let n = reference::affine_read_len(src_host.len(), stride, offset);
    let what = (n, stride, offset);
    let want = reference::affine_read(src_host, n, stride, offset);
    let size = format!("n={n} stride={stride} offset={offset}");

    let elem_bytes = std::mem::size_of::<T>() as u64;
    gpu.count_next(counted::affine_case(elem_bytes, stride as u64, offset as u64));
    // Correct before fast: poison, run once, compare every element with the CPU (only
    // the n elements written travel back), then time.
    let verified = gpu.verify_then_time(
        &mut (dst, got),
        |gpu, (dst, _)| gpu.poison(&mut **dst),
        |s, (dst, _)| launch_affine_read(s, &kernel, src, dst, what),
        |gpu, (dst, got)| {
            gpu.stream.memcpy_dtoh(&dst.slice(..n), &mut got[..n])?;
            gpu.stream.synchronize()?;
            Ok(verify::check_exact(&T::AFFINE.function(), &size, &got[..n], &want)?)
        },
        &[plan],
    )?;
    let useful_bytes = 2 * (n * std::mem::size_of::<T>()) as u64; // read + written
    Ok(Measurement { stats: verified.time().clone(), useful_bytes })
}
// ANCHOR_END: measure_affine_read

/// The buffers of an affine-read sweep over one source array: allocated, filled and checked
/// for room once, then measured at every stride and offset.
pub struct AffineSweep<T: Element> {
    pub src_host: Vec<T>,
    pub src: CudaSlice<T>,
    pub dst: CudaSlice<T>,
    pub got: Vec<T>,
}

impl<T: Element> AffineSweep<T> {
    /// A source of `len` random elements and room for a unit-stride read of all of them.
    pub fn new(gpu: &Gpu, len: usize, seed: u64) -> anyhow::Result<Self> {
        let bytes = len * std::mem::size_of::<T>();
        let what = format!("an affine-read sweep over {bytes} bytes");
        gpu.ensure_fits(2 * bytes, &what)?;
        let src_host = T::random(len, seed);
        let src = gpu.stream.clone_htod(&src_host)?;
        let dst = gpu.stream.alloc_zeros::<T>(len)?;
        Ok(Self { src_host, src, dst, got: vec![zeroed_element::<T>(); len] })
    }

    /// [`measure_affine_read`] on these buffers.
    pub fn measure(
        &mut self,
        gpu: &Gpu,
        kernels: &Kernels,
        stride: usize,
        offset: usize,
        plan: Plan,
    ) -> anyhow::Result<Measurement> {
        measure_affine_read(
            gpu,
            kernels,
            (&self.src, &self.src_host),
            (&mut self.dst, &mut self.got),
            (stride, offset),
            plan,
        )
    }
}

/// An all-zero element: what the host buffer holds before the first download.
fn zeroed_element<T: Element>() -> T {
    // SAFETY: `ValidAsZeroBits` says all-zero bytes are a valid T.
    unsafe { std::mem::zeroed() }
}
