//! The TMA kernels as any chapter launches them: the tensor maps of a float matrix with
//! pitched (or packed) rows, and the launch of `tma_copy` or `tma_transpose` over them. The coalescing chapter times the TMA transpose beside its
//! own with these.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::HopperKernel as K;
use crate::harness::kernels::KernelTable;
use crate::harness::launch::{Swizzle, TensorMap};
use crate::harness::Gpu;

/// The maps of `input`, `rows` × `cols` floats whose rows start `in_pitch` floats apart,
/// and of `out`, the same shape for `tma_copy` or its transpose for `tma_transpose`
/// (whose tiles are swizzled), with rows `out_pitch` floats apart. Fails, before the
/// driver is asked, where the TMA cannot address the rows (a pitch that is not a
/// multiple of 16 bytes).
pub fn maps(
    gpu: &Gpu,
    kernel: K,
    input: &CudaSlice<f32>,
    out: &CudaSlice<f32>,
    (rows, cols): (usize, usize),
    (in_pitch, out_pitch): (usize, usize),
) -> anyhow::Result<(TensorMap, TensorMap)> {
    let transposes = kernel == K::TmaTranspose;
    let swizzle = if transposes { Swizzle::B128 } else { Swizzle::None };
    let src = TensorMap::tiled(gpu, input, (rows, cols, in_pitch), (32, 32), swizzle)?;
    let out_shape = if transposes { (cols, rows) } else { (rows, cols) };
    let dst = TensorMap::tiled(
        gpu,
        out,
        (out_shape.0, out_shape.1, out_pitch),
        (32, 32),
        swizzle,
    )?;
    Ok((src, dst))
}

/// Enqueues `kernel` (`tma_copy` or `tma_transpose`) over the maps of a `rows` × `cols`
/// input: one block per 32 × 32 tile. The output buffer is written through the map
/// `dst`, which was encoded over it.
pub fn launch(
    stream: &Arc<CudaStream>,
    table: &KernelTable<K>,
    kernel: K,
    (src, dst): &(TensorMap, TensorMap),
    (rows, cols): (usize, usize),
) -> anyhow::Result<()> {
    assert!(matches!(kernel, K::TmaCopy | K::TmaTranspose), "not a TMA kernel");
    let tiles = |n: usize| u32::try_from(n.div_ceil(32)).expect("grid too large");
    let block = if kernel == K::TmaCopy { (32, 1, 1) } else { (32, 8, 1) };
    let cfg = LaunchConfig {
        grid_dim: (tiles(cols), tiles(rows), 1),
        block_dim: block,
        shared_mem_bytes: 0,
    };
    // SAFETY: tma_copy / tma_transpose(TensorMap src, TensorMap dst), passed by value;
    // the maps were checked against their buffers when they were encoded.
    unsafe {
        stream
            .launch_builder(table.get(kernel))
            .arg(src.param())
            .arg(dst.param())
            .launch(cfg)?
    };
    Ok(())
}
