//! The fused pass against cuBLAS at large float shapes beyond the book's square: sides
//! that are not powers of two, a tall and a wide matrix (A always beyond L2).

use super::kernels::{measure_variants, HostProblem, KernelResult, KernelVariant};
use super::{Plans, Skipped};
use crate::atax::datasets::Dataset;
use crate::atax::device::Kernels;
use crate::harness::Gpu;

/// The shapes: 1 GiB or near it in float, as the book's 16384² square.
pub const LARGE_SHAPES: [Dataset; 4] = [
    Dataset::new("12289²", 12289, 12289),
    Dataset::new("16383²", 16383, 16383),
    Dataset::new("tall", 32768, 8192),
    Dataset::new("wide", 8192, 32768),
];

/// The same kinds of shape, small, for `--quick` (and the sanitizers): the wide one is
/// just beyond the register instances, so the wide form runs.
pub const QUICK_SHAPES: [Dataset; 4] = [
    Dataset::new("1537²", 1537, 1537),
    Dataset::new("2047²", 2047, 2047),
    Dataset::new("tall", 4096, 1024),
    Dataset::new("wide", 67, 16411),
];

/// What is timed at each shape: the fused passes and cuBLAS.
pub const SHAPE_VARIANTS: [KernelVariant; 5] = [
    KernelVariant::Fused,
    KernelVariant::FusedOnce,
    KernelVariant::FusedAtomic,
    KernelVariant::FusedCluster,
    KernelVariant::Cublas,
];

/// Verifies, then times, [`SHAPE_VARIANTS`] in float at each of `shapes`.
pub fn measure_shapes(
    gpu: &Gpu,
    k: &Kernels<f32>,
    shapes: &[Dataset],
    plans: Plans,
    seed: u64,
) -> anyhow::Result<(Vec<KernelResult>, Vec<Skipped>)> {
    let (mut results, mut skipped) = (Vec::new(), Vec::new());
    for (i, d) in shapes.iter().enumerate() {
        let p = HostProblem::<f32>::new(*d, seed + i as u64);
        let (r, s) = measure_variants(gpu, k, &p, Some(plans), &SHAPE_VARIANTS)?;
        results.extend(r);
        skipped.extend(s);
    }
    Ok((results, skipped))
}
