//! The fused pass against cuBLAS at large float shapes beyond the book's square: sides
//! that are not powers of two, a tall and a wide matrix (A always beyond L2); and the odd
//! sides again with their rows pitched to whole cache lines.

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

/// Elements a pitched row is rounded up to: 32 floats are the 128 bytes of a cache line, so
/// every row of a pitched float matrix starts on a line.
pub const ROW_ALIGN_ELEMENTS: usize = 32;

/// The odd square shapes measured both as allocated and pitched, with the pitched
/// problem's name.
pub const PITCHED_SHAPES: [(Dataset, &str); 2] =
    [(LARGE_SHAPES[0], "12289² pitched"), (LARGE_SHAPES[1], "16383² pitched")];
/// Two small odd squares for `--quick`, small enough that the sanitizers' quick run stays
/// short (racecheck replays every shared-memory access of the cluster pass).
pub const QUICK_PITCHED_SHAPES: [(Dataset, &str); 2] = [
    (Dataset::new("257²", 257, 257), "257² pitched"),
    (Dataset::new("1025²", 1025, 1025), "1025² pitched"),
];

/// Verifies, then times, [`SHAPE_VARIANTS`] in float at each of `shapes` as allocated
/// (rows of n elements, back to back) and pitched (the same numbers, each row in
/// n rounded up to [`ROW_ALIGN_ELEMENTS`]), one right after the other.
pub fn measure_pitched(
    gpu: &Gpu,
    k: &Kernels<f32>,
    shapes: &[(Dataset, &'static str)],
    plans: Plans,
    seed: u64,
) -> anyhow::Result<(Vec<KernelResult>, Vec<Skipped>)> {
    let (mut results, mut skipped) = (Vec::new(), Vec::new());
    for (i, &(d, name)) in shapes.iter().enumerate() {
        let at = seed + i as u64;
        let pitch = d.n.next_multiple_of(ROW_ALIGN_ELEMENTS);
        for p in
            [HostProblem::<f32>::new(d, at), HostProblem::pitched(name, d, pitch, at)]
        {
            let (r, s) = measure_variants(gpu, k, &p, Some(plans), &SHAPE_VARIANTS)?;
            results.extend(r);
            skipped.extend(s);
        }
    }
    Ok((results, skipped))
}
