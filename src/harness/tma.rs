//! The Tensor Memory Accelerator's kernels as any chapter launches them (`kernels/hopper_tma.cu`,
//! compute capability 9.0): the tensor maps of a float matrix with pitched (or packed) rows,
//! and the launch of `tma_copy` or `tma_transpose` over them. The chapter "Asynchronous memory
//! on Hopper" explains and times them; the coalescing chapter times the TMA transpose beside
//! its own transposes, loading only this file.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use super::launch::{Swizzle, TensorMap};
use super::Gpu;

crate::kernel_names! {
    /// The kernels of `kernels/hopper_tma.cu` (compute capability 9.0) and their baselines,
    /// which any GPU runs (`kernels/hopper_pitched.cu`).
    pub enum TmaKernel {
        in "hopper_tma.cu" {
            /// A 32 x 32 tile copy by the TMA.
            TmaCopy => "tma_copy",
            /// A transpose whose tiles the TMA loads and stores.
            TmaTranspose => "tma_transpose",
        }
        in "hopper_pitched.cu" {
            /// The padded-tile transpose, with row pitches.
            TransposePadded => "transpose_padded",
            /// A pitched copy with the transpose's access pattern.
            CopyPitched => "copy_pitched",
        }
    }
}

/// What a TMA kernel does with its tiles: the maps and the launch shape follow from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TmaOp {
    /// `tma_copy`: each tile stored where it was loaded from.
    Copy,
    /// `tma_transpose`: each tile stored transposed, through swizzled shared memory.
    Transpose,
}

/// The box one TMA copy moves, rows × columns of floats: the kernels' `TILE` × `TILE` tile,
/// whose bytes their mbarrier is told to expect.
pub const BOX: (u32, u32) = (32, 32);

/// The threads of a `tma_copy` block: one warp, of which thread 0 alone talks to the TMA.
pub const COPY_THREADS: u32 = 32;

/// The maps of `input`, `rows` × `cols` floats whose rows start `in_pitch` floats apart,
/// and of `out`, the same shape for a copy or its transpose for a transpose (whose tiles are
/// swizzled), with rows `out_pitch` floats apart. Fails, before the driver is asked, where
/// the TMA cannot address the rows (a pitch that is not a multiple of 16 bytes).
pub fn maps(
    gpu: &Gpu,
    op: TmaOp,
    input: &CudaSlice<f32>,
    out: &CudaSlice<f32>,
    (rows, cols): (usize, usize),
    (in_pitch, out_pitch): (usize, usize),
) -> anyhow::Result<(TensorMap, TensorMap)> {
    let transposes = op == TmaOp::Transpose;
    let swizzle = if transposes { Swizzle::B128 } else { Swizzle::None };
    let src = TensorMap::tiled(gpu, input, (rows, cols, in_pitch), BOX, swizzle)?;
    let out_shape = if transposes { (cols, rows) } else { (rows, cols) };
    let dst = TensorMap::tiled(
        gpu,
        out,
        (out_shape.0, out_shape.1, out_pitch),
        BOX,
        swizzle,
    )?;
    Ok((src, dst))
}

/// Enqueues `function` (`tma_copy` for [`TmaOp::Copy`], `tma_transpose` for
/// [`TmaOp::Transpose`]) over the maps of a `rows` × `cols` input: one block per 32 × 32
/// tile. The output buffer is written through the map `dst`, which was encoded over it.
pub fn launch(
    stream: &Arc<CudaStream>,
    function: &CudaFunction,
    op: TmaOp,
    (src, dst): &(TensorMap, TensorMap),
    (rows, cols): (usize, usize),
) -> anyhow::Result<()> {
    let tiles = |n: usize| u32::try_from(n.div_ceil(32)).expect("grid too large");
    let block = match op {
        TmaOp::Copy => (COPY_THREADS, 1, 1),
        TmaOp::Transpose => (32, 8, 1),
    };
    let cfg = LaunchConfig {
        grid_dim: (tiles(cols), tiles(rows), 1),
        block_dim: block,
        shared_mem_bytes: 0,
    };
    // SAFETY: tma_copy / tma_transpose(TensorMap src, TensorMap dst), passed by value;
    // the maps were checked against their buffers when they were encoded.
    unsafe {
        stream.launch_builder(function).arg(src.param()).arg(dst.param()).launch(cfg)?
    };
    Ok(())
}
