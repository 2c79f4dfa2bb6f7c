//! The TMA kernels as this chapter's kernel table names them: the maps and the launch are the
//! harness's ([`crate::harness::tma`]), shared with the coalescing chapter's transposes.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::HopperKernel as K;
use crate::harness::kernels::KernelTable;
use crate::harness::launch::TensorMap;
use crate::harness::tma::{self, TmaOp};
use crate::harness::Gpu;

/// What `kernel` (`tma_copy` or `tma_transpose`) does with its tiles.
fn op(kernel: K) -> TmaOp {
    match kernel {
        K::TmaCopy => TmaOp::Copy,
        K::TmaTranspose => TmaOp::Transpose,
        other => panic!("{other:?} is not a TMA kernel"),
    }
}

/// The maps of `input` and `out` for `kernel`: see [`tma::maps`].
pub fn maps(
    gpu: &Gpu,
    kernel: K,
    input: &CudaSlice<f32>,
    out: &CudaSlice<f32>,
    shape: (usize, usize),
    pitches: (usize, usize),
) -> anyhow::Result<(TensorMap, TensorMap)> {
    tma::maps(gpu, op(kernel), input, out, shape, pitches)
}

/// Enqueues `kernel` over `maps`: see [`tma::launch`].
pub fn launch(
    stream: &Arc<CudaStream>,
    table: &KernelTable<K>,
    kernel: K,
    maps: &(TensorMap, TensorMap),
    shape: (usize, usize),
) -> anyhow::Result<()> {
    tma::launch(stream, table.get(kernel), op(kernel), maps, shape)
}
