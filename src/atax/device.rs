//! The element types, the kernels of `kernels/atax.cu` and cuBLAS, and how each is launched.
//!
//! Launches take device addresses (`CUdeviceptr`) rather than slices, because the same kernels
//! run on device buffers, on row chunks of them (the streamed versions) and on managed memory;
//! every launch function states the lengths its addresses must hold.

use std::sync::Arc;

use cudarc::cublas::{sys::cublasOperation_t, CudaBlas, Gemv, GemvConfig};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaStream, DevicePtr, DeviceRepr, LaunchConfig,
    PushKernelArg, ValidAsZeroBits,
};

use crate::harness::kernels::Module;
use crate::harness::{inputs, Gpu};

use super::KERNEL_FILE;

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

/// The kernels of `kernels/atax.cu` for one element type, and cuBLAS.
pub struct Kernels<T: Element> {
    pub module: Arc<CudaModule>,
    tmp_thread_per_row: CudaFunction,
    y_thread_per_col: CudaFunction,
    tmp_x_const: CudaFunction,
    transpose: CudaFunction,
    tmp_from_transposed: CudaFunction,
    tmp_warp_per_row: CudaFunction,
    tmp_tile: CudaFunction,
    y_tile: CudaFunction,
    reduce_partials: CudaFunction,
    fused: Vec<(u32, CudaFunction)>,
    pub blas: CudaBlas,
    pub sms: u32,
    marker: std::marker::PhantomData<T>,
}

impl<T: Element> Kernels<T> {
    /// Compiles (once per call) and loads the file, and makes a cuBLAS handle on the timing stream.
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let module: Module = gpu.load(KERNEL_FILE)?;
        let f = |name: &str| module.function(&format!("atax_{name}_{}", T::SUFFIX));
        let fused = T::FUSED_COLUMNS_PER_THREAD
            .iter()
            .map(|&e| Ok((e, f(&format!("fused_rows_e{e}"))?)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            tmp_thread_per_row: f("tmp_thread_per_row")?,
            y_thread_per_col: f("y_thread_per_col")?,
            tmp_x_const: f("tmp_thread_per_row_x_const")?,
            transpose: f("transpose_tile_shared")?,
            tmp_from_transposed: f("tmp_from_transposed")?,
            tmp_warp_per_row: f("tmp_warp_per_row")?,
            tmp_tile: f("tmp_tile_shared")?,
            y_tile: f("y_tile_shared")?,
            reduce_partials: f("reduce_partials")?,
            fused,
            blas: CudaBlas::new(gpu.stream.clone())?,
            sms: gpu.info.sms as u32,
            module: module.module,
            marker: std::marker::PhantomData,
        })
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
        &self
            .fused
            .iter()
            .find(|(e, _)| *e == shape.columns_per_thread)
            .expect("every instance is loaded")
            .1
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
        let mut symbol = self.module.get_global("x_const", stream)?;
        // SAFETY: the symbol is 64 KB, X_CONST_CAPACITY elements of T; x is no longer.
        let mut view = unsafe { symbol.transmute_mut::<T>(x.len()) }
            .ok_or_else(|| anyhow::anyhow!("x_const is too small"))?;
        stream.memcpy_htod(x, &mut view)?;
        Ok(())
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

fn dims(m: usize, n: usize) -> anyhow::Result<(u32, u32)> {
    Ok((u32::try_from(m)?, u32::try_from(n)?))
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
        let (m32, n32) = dims(m, n)?;
        match kernel {
            TmpKernel::ThreadPerRow => s
                .launch_builder(&self.tmp_thread_per_row)
                .arg(&a)
                .arg(&x)
                .arg(&tmp)
                .arg(&m32)
                .arg(&n32)
                .launch(grid_1d(m, BLOCK)?)?,
            TmpKernel::ThreadPerRowXConst => s
                .launch_builder(&self.tmp_x_const)
                .arg(&a)
                .arg(&tmp)
                .arg(&m32)
                .arg(&n32)
                .launch(grid_1d(m, BLOCK)?)?,
            TmpKernel::FromTransposed => s
                .launch_builder(&self.tmp_from_transposed)
                .arg(&a)
                .arg(&x)
                .arg(&tmp)
                .arg(&m32)
                .arg(&n32)
                .launch(grid_1d(m, BLOCK)?)?,
            TmpKernel::WarpPerRow => s
                .launch_builder(&self.tmp_warp_per_row)
                .arg(&a)
                .arg(&x)
                .arg(&tmp)
                .arg(&m32)
                .arg(&n32)
                .launch(grid_1d(m * 32, BLOCK)?)?,
            TmpKernel::TileShared => {
                let cfg = LaunchConfig {
                    grid_dim: (u32::try_from(m.div_ceil(32))?, 1, 1),
                    block_dim: (32, 8, 1),
                    shared_mem_bytes: 0,
                };
                s.launch_builder(&self.tmp_tile)
                    .arg(&a)
                    .arg(&x)
                    .arg(&tmp)
                    .arg(&m32)
                    .arg(&n32)
                    .launch(cfg)?
            }
        };
        Ok(())
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
        let (m32, n32) = dims(m, n)?;
        match kernel {
            YKernel::ThreadPerCol => s
                .launch_builder(&self.y_thread_per_col)
                .arg(&a)
                .arg(&tmp)
                .arg(&y)
                .arg(&m32)
                .arg(&n32)
                .launch(grid_1d(n, BLOCK)?)?,
            YKernel::TileShared => {
                let cfg = LaunchConfig {
                    grid_dim: (u32::try_from(n.div_ceil(32))?, 1, 1),
                    block_dim: (32, 8, 1),
                    shared_mem_bytes: 0,
                };
                s.launch_builder(&self.y_tile)
                    .arg(&a)
                    .arg(&tmp)
                    .arg(&y)
                    .arg(&m32)
                    .arg(&n32)
                    .launch(cfg)?
            }
        };
        Ok(())
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
        let (m32, n32) = dims(m, n)?;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(n.div_ceil(32))?,
                u32::try_from(m.div_ceil(32))?,
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        s.launch_builder(&self.transpose)
            .arg(&a)
            .arg(&at)
            .arg(&m32)
            .arg(&n32)
            .launch(cfg)?;
        Ok(())
    }

    // ANCHOR: launch_fused
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
        let (m32, n32) = dims(m, n)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        s.launch_builder(self.fused_function(shape))
            .arg(&a)
            .arg(&x)
            .arg(&partials)
            .arg(&m32)
            .arg(&n32)
            .launch(cfg)?;
        Ok(())
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
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(n.div_ceil(32))?, 1, 1),
            block_dim: (32, 32, 1),
            shared_mem_bytes: 0,
        };
        s.launch_builder(&self.reduce_partials)
            .arg(&partials)
            .arg(&y)
            .arg(&blocks)
            .arg(&n32)
            .launch(cfg)?;
        Ok(())
    }
    // ANCHOR_END: launch_fused

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
