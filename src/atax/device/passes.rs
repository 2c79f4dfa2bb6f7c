//! The passes of two kernels (tmp = A·x, then y = Aᵀ·tmp) in each of their forms, the
//! transpose, the split-rows pass and cuBLAS's two gemv calls.

use std::sync::Arc;

use cudarc::cublas::{sys::cublasOperation_t, GemvConfig};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};

use super::{
    dims, grid_1d, grid_per_32, launch, split_shape, AtaxFunction, Kernels, SplitShape,
    BLOCK, SPLIT_WARPS_PER_BLOCK,
};
use crate::atax::element::{Element, RawView};
use crate::atax::KERNEL_FILE;

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
        self.table.module(KERNEL_FILE).set_constant(stream, "x_const", x)
    }

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
        let (f, cfg) = match kernel {
            TmpKernel::ThreadPerRow => {
                (AtaxFunction::TmpThreadPerRow, grid_1d(m, BLOCK)?)
            }
            TmpKernel::ThreadPerRowXConst => {
                // x is read from `__constant__` memory: no x argument.
                let f = self.function(AtaxFunction::TmpThreadPerRowXConst);
                return launch(s, f, &[a, tmp], (m, n), grid_1d(m, BLOCK)?);
            }
            TmpKernel::FromTransposed => {
                (AtaxFunction::TmpFromTransposed, grid_1d(m, BLOCK)?)
            }
            TmpKernel::WarpPerRow => {
                (AtaxFunction::TmpWarpPerRow, grid_1d(m * 32, BLOCK)?)
            }
            TmpKernel::TileShared => {
                (AtaxFunction::TmpTileShared, grid_per_32(m, (32, 8, 1))?)
            }
        };
        launch(s, self.function(f), &[a, x, tmp], (m, n), cfg)
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
        let (f, cfg) = match kernel {
            YKernel::ThreadPerCol => (AtaxFunction::YThreadPerCol, grid_1d(n, BLOCK)?),
            YKernel::TileShared => {
                (AtaxFunction::YTileShared, grid_per_32(n, (32, 8, 1))?)
            }
        };
        launch(s, self.function(f), &[a, tmp, y], (m, n), cfg)
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
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(n.div_ceil(32))?,
                u32::try_from(m.div_ceil(32))?,
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        launch(
            s,
            self.function(AtaxFunction::TransposeTileShared),
            &[a, at],
            (m, n),
            cfg,
        )
    }

    /// The split-rows kernel's shape for an `rows` × `cols` product on this GPU.
    pub fn split_shape(&self, rows: usize, cols: usize) -> anyhow::Result<SplitShape> {
        split_shape(rows, cols, self.sms)
    }

    /// Enqueues out[..cols] = Aᵀ·v for the `rows` × `cols` matrix at `a` with the
    /// split-rows kernel (one partial row of `cols` per slice) and the sum of the slices
    /// by `reduce_partials`. With `a` = A it computes y from tmp; with `a` = Aᵀ
    /// (`rows` = n, `cols` = m) it computes tmp from x.
    ///
    /// # Safety
    /// `a` must hold rows·cols elements, `v` rows, `out` cols and `partials`
    /// `split_shape(rows, cols).slices`·cols.
    pub unsafe fn launch_split(
        &self,
        s: &Arc<CudaStream>,
        a: CUdeviceptr,
        v: CUdeviceptr,
        partials: CUdeviceptr,
        out: CUdeviceptr,
        (rows, cols): (usize, usize),
    ) -> anyhow::Result<()> {
        let shape = self.split_shape(rows, cols)?;
        let (rows32, cols32) = dims(rows, cols)?;
        let cfg = LaunchConfig {
            grid_dim: (shape.column_blocks, shape.slices, 1),
            block_dim: (32, SPLIT_WARPS_PER_BLOCK, 1),
            shared_mem_bytes: 0,
        };
        s.launch_builder(self.function(AtaxFunction::YSplitRows))
            .arg(&a)
            .arg(&v)
            .arg(&partials)
            .arg(&rows32)
            .arg(&cols32)
            .arg(&shape.rows_per_slice)
            .launch(cfg)?;
        self.table.launch_reduce_partials(s, partials, out, shape.slices, cols)
    }

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
