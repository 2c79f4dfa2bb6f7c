//! The kernel variants: every way of computing y with A already in device memory, verified
//! against the CPU reference, then timed with L2 warm and cold and by the slides' method.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream};

use super::{Plans, Skipped, STREAMS};
use crate::atax::datasets::{bytes_moved, partial_bytes, Dataset};
use crate::atax::device::{
    fused_form, fused_shape, FusedClusterLaunch, FusedLaunch, Kernels, OneLaunch,
    TmpKernel, YKernel,
};
use crate::atax::element::{address, Element};
use crate::atax::reference::{self, Reference};
use crate::harness::counters::{Case, Quantity};
use crate::harness::verify::{self, Report};
use crate::harness::{Gpu, Stats};

/// One way of computing y on data already in device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelVariant {
    /// The slides' two kernels: thread per row (uncoalesced), thread per column.
    Baseline,
    /// The baseline with x in `__constant__` memory.
    XConst,
    /// Transpose A, then a coalesced kernel 1 on Aᵀ and the baseline kernel 2.
    TransposeThenTwoKernels,
    /// The same with Aᵀ already made: the two kernels alone.
    PreTransposed,
    /// Warp per row for kernel 1, thread per column for kernel 2.
    WarpPerRow,
    /// Warp per row for kernel 1, kernel 2 with 8 warps per 32 columns over row slices.
    WarpPerRowSplitY,
    /// Aᵀ already made, both products by the split-rows kernel (many warps per column).
    PreTransposedSplit,
    /// Both kernels with shared-memory tiles.
    Tiled,
    /// One pass over A, then the reduction of the blocks' partial y.
    Fused,
    /// The same pass, a grid barrier and the reduction in one cooperative launch.
    FusedOnce,
    /// The same pass, its y added with atomics, in one ordinary launch.
    FusedAtomic,
    /// The same pass in thread-block clusters: the blocks of a cluster add their y
    /// through distributed shared memory, then one atomic per column and cluster.
    FusedCluster,
    /// cuBLAS, two gemv calls.
    Cublas,
}

impl KernelVariant {
    pub const ALL: [KernelVariant; 13] = [
        Self::Baseline,
        Self::XConst,
        Self::TransposeThenTwoKernels,
        Self::PreTransposed,
        Self::PreTransposedSplit,
        Self::WarpPerRow,
        Self::WarpPerRowSplitY,
        Self::Tiled,
        Self::Fused,
        Self::FusedOnce,
        Self::FusedAtomic,
        Self::FusedCluster,
        Self::Cublas,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::XConst => "x in constant",
            Self::TransposeThenTwoKernels => "transpose + kernels",
            Self::PreTransposed => "pre-transposed",
            Self::WarpPerRow => "warp per row",
            Self::WarpPerRowSplitY => "warp per row, split y",
            Self::PreTransposedSplit => "pre-transposed, split",
            Self::Tiled => "tiled",
            Self::Fused => "fused",
            Self::FusedOnce => "fused, grid barrier",
            Self::FusedAtomic => "fused, atomics",
            Self::FusedCluster => "fused, cluster + atomics",
            Self::Cublas => "cuBLAS gemv ×2",
        }
    }

    /// Times the variant must move A between device memory and the SMs: the transpose reads
    /// and writes it once more.
    pub fn passes_over_a(self) -> u64 {
        match self {
            Self::Fused | Self::FusedOnce | Self::FusedAtomic | Self::FusedCluster => 1,
            Self::TransposeThenTwoKernels => 4,
            _ => 2,
        }
    }

    /// Least bytes the variant moves for `dev`'s problem: A `passes_over_a` times and the
    /// vectors (see [`bytes_moved`]), plus the partial sums it writes and reads back (the
    /// fused pass: one row of n per block; the split kernels: one row per slice).
    pub fn bytes<T: Element>(
        self,
        k: &Kernels<T>,
        d: Dataset,
        dev: &DeviceProblem<T>,
    ) -> anyhow::Result<u64> {
        let (m, n, e) = (d.m, d.n, T::BYTES);
        let split = |rows, cols| -> anyhow::Result<u64> {
            Ok(partial_bytes(k.split_shape(rows, cols)?.slices as u64, cols, e))
        };
        let partials = match self {
            Self::Fused => partial_bytes(dev.fused_blocks as u64, n, e),
            Self::FusedOnce => {
                partial_bytes(dev.once.map_or(0, |l| l.blocks) as u64, n, e)
            }
            // Each block adds a row of n with atomics (half of partial_bytes); the last
            // block reads the accumulator and zeroes it (n and n).
            Self::FusedAtomic => {
                let blocks = dev.atomic.map_or(0, |l| l.blocks) as u64;
                partial_bytes(blocks, n, e) / 2 + 2 * (n * e) as u64
            }
            // The same with one row of atomics per cluster: the blocks of a cluster add
            // their rows in shared memory, which device memory never sees.
            Self::FusedCluster => {
                let clusters = dev.cluster.map_or(0, |l| l.grid.clusters) as u64;
                partial_bytes(clusters, n, e) / 2 + 2 * (n * e) as u64
            }
            Self::WarpPerRowSplitY => split(m, n)?,
            Self::PreTransposedSplit => split(m, n)? + split(n, m)?,
            _ => 0,
        };
        Ok(bytes_moved(d, e, self.passes_over_a()) + partials)
    }

    /// Why this variant cannot run at `n` columns of `T`, if it cannot.
    pub fn unsupported<T: Element>(self, n: usize) -> Option<String> {
        match self {
            Self::XConst if n > T::X_CONST_CAPACITY => Some(format!(
                "x needs {} bytes; __constant__ memory holds 64 KB ({} {}s)",
                n * T::BYTES,
                T::X_CONST_CAPACITY,
                T::C_NAME
            )),
            Self::Fused | Self::FusedCluster
                if fused_shape(n, T::FUSED_COLUMNS_PER_THREAD).is_none() =>
            {
                let most = 1024
                    * T::FUSED_COLUMNS_PER_THREAD.last().copied().unwrap_or(1) as usize;
                Some(format!(
                    "the fused kernel keeps a row in registers: at most {most} {} columns",
                    T::C_NAME
                ))
            }
            Self::FusedOnce | Self::FusedAtomic if fused_form::<T>(n).is_none() => {
                let most = 1024
                    * T::WIDE_COLUMNS_PER_THREAD.last().copied().unwrap_or(1) as usize;
                Some(format!(
                    "the wide fused kernel keeps E = {} columns a thread: at most {most} {} \
                     columns",
                    most / 1024,
                    T::C_NAME
                ))
            }
            _ => None,
        }
    }
}

// ANCHOR: pitched
/// Rows of `n` elements (`a`, back to back) stored `pitch` elements apart, the padding
/// zero: with `pitch` a multiple of a line's elements, every row starts on a line.
pub fn pitched_rows<T: Copy + Default>(a: &[T], n: usize, pitch: usize) -> Vec<T> {
    assert!(n > 0 && pitch >= n, "a pitch of {pitch} elements cannot hold rows of {n}");
    let mut padded = vec![T::default(); a.len() / n * pitch];
    for (to, row) in padded.chunks_exact_mut(pitch).zip(a.chunks_exact(n)) {
        to[..n].copy_from_slice(row);
    }
    padded
}
// ANCHOR_END: pitched

/// A problem on the host: inputs and the reference result.
pub struct HostProblem<T: Element> {
    /// The matrix as stored: `d.n` is the row pitch, which [`HostProblem::pitched`] makes
    /// larger than the problem's columns.
    pub d: Dataset,
    pub a: Vec<T>,
    pub x: Vec<T>,
    /// Columns of the problem (the reference's length); `d.n` minus the padding.
    pub cols: usize,
    pub reference: Reference,
}

impl<T: Element> HostProblem<T> {
    pub fn new(d: Dataset, seed: u64) -> Self {
        let a = T::random(d.m * d.n, seed);
        let x = T::random(d.n, seed ^ 0x5EED);
        let reference = reference::atax(&a, &x, d.m, d.n);
        Self { d, a, x, cols: d.n, reference }
    }

    /// The problem of [`HostProblem::new`]`(d, seed)`, the same numbers, with every row of
    /// A stored in `pitch` elements ([`pitched_rows`]) and x padded with zeros to match:
    /// every kernel runs unchanged on an m × pitch matrix, tmp = A·x is the same, and y gets
    /// `pitch − n` trailing entries that are exactly zero. Stored as the dataset `name`.
    pub fn pitched(name: &'static str, d: Dataset, pitch: usize, seed: u64) -> Self {
        let plain = Self::new(d, seed);
        let a = pitched_rows(&plain.a, d.n, pitch);
        let mut x = plain.x;
        x.resize(pitch, T::default());
        let d = Dataset::new(name, d.m, pitch);
        Self { d, a, x, cols: plain.cols, reference: plain.reference }
    }

    /// Compares a downloaded y with the reference (and a pitched problem's padding of y with
    /// zero, exactly).
    pub fn check(&self, what: &str, y: &[T]) -> anyhow::Result<Report> {
        let tol = self.reference.tolerance(T::EPS, self.d.m, self.cols);
        let name = format!("{what} ({})", T::C_NAME);
        let (y, padding) = y.split_at(self.cols.min(y.len()));
        let padding: Vec<f64> = padding.iter().map(|&v| v.into()).collect();
        let zeros = vec![0.0; self.d.n - self.cols];
        verify::check_exact(
            &format!("{name}, padding"),
            &self.d.label(),
            &padding,
            &zeros,
        )?;
        Ok(verify::check_close(&name, &self.d.label(), y, &self.reference.y, tol)?)
    }
}

/// The device buffers of one problem.
pub struct DeviceProblem<T: Element> {
    pub a: CudaSlice<T>,
    pub at: CudaSlice<T>,
    pub x: CudaSlice<T>,
    pub tmp: CudaSlice<T>,
    pub y: CudaSlice<T>,
    pub partials: CudaSlice<T>,
    /// Blocks of the fused kernel (rows of `partials`); 0 when no instance covers n.
    pub fused_blocks: u32,
    /// The one-launch fused kernels' launches; `None` when no instance covers n.
    pub once: Option<FusedLaunch>,
    pub atomic: Option<FusedLaunch>,
    /// The cluster pass's launch, checked once here; `None` when no register instance
    /// covers n.
    pub cluster: Option<FusedClusterLaunch>,
    /// The grid barrier's two words, zero between launches.
    pub barrier: CudaSlice<u32>,
    /// The atomic kernels' accumulator (n, zero between launches) and their count of
    /// finished blocks or clusters (zero between launches).
    pub acc: CudaSlice<T>,
    pub count: CudaSlice<u32>,
}

impl<T: Element> DeviceProblem<T> {
    pub fn upload(
        gpu: &Gpu,
        k: &Kernels<T>,
        p: &HostProblem<T>,
    ) -> anyhow::Result<Self> {
        let (m, n) = (p.d.m, p.d.n);
        let fused_blocks =
            if k.fused_shape(n).is_some() { k.fused_blocks(m, n)? } else { 0 };
        let (once, atomic) = match fused_form::<T>(n) {
            Some(_) => (
                Some(k.fused_once_launch(OneLaunch::GridBarrier, m, n)?),
                Some(k.fused_once_launch(OneLaunch::Atomics, m, n)?),
            ),
            None => (None, None),
        };
        let cluster = match k.fused_shape(n) {
            Some(_) if k.cluster_unavailable().is_none() => {
                Some(k.fused_cluster_launch(gpu, m, n)?)
            }
            _ => None,
        };
        // The streamed fused pipeline gives each of its STREAMS chunks at least one row;
        // the split kernels need one row per slice, of n (y) or of m (tmp from Aᵀ).
        let once_blocks = once.map_or(0, |l| l.blocks as usize);
        let partial_rows = (fused_blocks as usize).max(STREAMS).max(once_blocks);
        let partial_len = (partial_rows * n)
            .max(k.split_shape(m, n)?.slices as usize * n)
            .max(k.split_shape(n, m)?.slices as usize * m);
        let bytes = (2 * m * n + 2 * n + m + partial_len) * T::BYTES;
        gpu.ensure_fits(bytes, &format!("ATAX at {} ({})", p.d.label(), T::C_NAME))?;
        Ok(Self {
            a: gpu.stream.clone_htod(&p.a)?,
            at: gpu.stream.alloc_zeros(m * n)?,
            x: gpu.stream.clone_htod(&p.x)?,
            tmp: gpu.stream.alloc_zeros(m.max(1))?,
            y: gpu.stream.alloc_zeros(n)?,
            partials: gpu.stream.alloc_zeros(partial_len.max(1))?,
            fused_blocks,
            once,
            atomic,
            cluster,
            barrier: gpu.stream.alloc_zeros(2)?,
            acc: gpu.stream.alloc_zeros(n.max(1))?,
            count: gpu.stream.alloc_zeros(2)?,
        })
    }
}

// ANCHOR: enqueue_variant
/// Enqueues one kernel variant on `s`: y = Aᵀ(A·x) from the buffers of `dev`.
pub fn enqueue_variant<T: Element>(
    k: &Kernels<T>,
    s: &Arc<CudaStream>,
    v: KernelVariant,
    dev: &DeviceProblem<T>,
    (m, n): (usize, usize),
) -> anyhow::Result<()> {
    let [a, at, x, tmp, y, partials] =
        [&dev.a, &dev.at, &dev.x, &dev.tmp, &dev.y, &dev.partials]
            .map(|b| address(b, s));
    let [barrier, count] = [&dev.barrier, &dev.count].map(|b| address(b, s));
    let acc = address(&dev.acc, s);
    // SAFETY: DeviceProblem::upload sized every buffer for (m, n), fused_blocks and
    // the split kernels' slices.
    unsafe {
        // All but the fused pass and cuBLAS: two kernels, tmp = A·x then y = Aᵀ·tmp.
        let (tmp_kernel, y_kernel) = match v {
            KernelVariant::Baseline => (TmpKernel::ThreadPerRow, YKernel::ThreadPerCol),
            KernelVariant::XConst => {
                (TmpKernel::ThreadPerRowXConst, YKernel::ThreadPerCol)
            }
            KernelVariant::TransposeThenTwoKernels | KernelVariant::PreTransposed => {
                if v == KernelVariant::TransposeThenTwoKernels {
                    k.launch_transpose(s, a, at, (m, n))?;
                }
                (TmpKernel::FromTransposed, YKernel::ThreadPerCol)
            }
            KernelVariant::WarpPerRow => (TmpKernel::WarpPerRow, YKernel::ThreadPerCol),
            KernelVariant::Tiled => (TmpKernel::TileShared, YKernel::TileShared),
            KernelVariant::Fused => {
                k.launch_fused(s, a, x, partials, (m, n), dev.fused_blocks)?;
                return k.table.launch_reduce_partials(
                    s,
                    partials,
                    y,
                    dev.fused_blocks,
                    n,
                );
            }
            KernelVariant::FusedOnce => {
                let l = dev
                    .once
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("no fused form"))?;
                return k.launch_fused_once(s, a, x, partials, y, barrier, (m, n), l);
            }
            KernelVariant::FusedAtomic => {
                let l = dev
                    .atomic
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("no fused form"))?;
                return k.launch_fused_once(s, a, x, acc, y, count, (m, n), l);
            }
            KernelVariant::FusedCluster => {
                let l = dev
                    .cluster
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("no register instance covers n"))?;
                return k.launch_fused_cluster(s, a, x, acc, y, count, (m, n), l);
            }
            KernelVariant::Cublas => return k.launch_cublas(s, a, x, tmp, y, (m, n)),
            KernelVariant::WarpPerRowSplitY => {
                k.launch_tmp(s, TmpKernel::WarpPerRow, a, x, tmp, (m, n))?;
                return k.launch_split(s, a, tmp, partials, y, (m, n));
            }
            KernelVariant::PreTransposedSplit => {
                // tmp = A·x is Aᵀ's columns weighted by x: Aᵀ is n × m.
                k.launch_split(s, at, x, partials, tmp, (n, m))?;
                return k.launch_split(s, a, tmp, partials, y, (m, n));
            }
        };
        // The transposed kernel reads Aᵀ; y = Aᵀ·tmp reads A either way.
        let tmp_reads = if tmp_kernel == TmpKernel::FromTransposed { at } else { a };
        k.launch_tmp(s, tmp_kernel, tmp_reads, x, tmp, (m, n))?;
        k.launch_y(s, y_kernel, a, tmp, y, (m, n))
    }
}
// ANCHOR_END: enqueue_variant

/// One kernel variant, verified and (when plans were given) timed.
#[derive(Debug, Clone)]
pub struct KernelResult {
    pub d: Dataset,
    pub elem: &'static str,
    pub variant: KernelVariant,
    pub check: Report,
    /// `(warm, cold, slides' method)`.
    pub times: Option<(Stats, Stats, Stats)>,
    /// Least bytes moved (see [`bytes_moved`]).
    pub bytes: u64,
}

/// Verifies every kernel variant on `p` and times it under `plans` if given.
pub fn measure_kernels<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    p: &HostProblem<T>,
    plans: Option<Plans>,
) -> anyhow::Result<(Vec<KernelResult>, Vec<Skipped>)> {
    measure_variants(gpu, k, p, plans, &KernelVariant::ALL)
}

/// Verifies each of `variants` on `p` and times it under `plans` if given.
pub fn measure_variants<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    p: &HostProblem<T>,
    plans: Option<Plans>,
    variants: &[KernelVariant],
) -> anyhow::Result<(Vec<KernelResult>, Vec<Skipped>)> {
    let mut dev = DeviceProblem::upload(gpu, k, p)?;
    let mn = (p.d.m, p.d.n);
    let plans: Vec<_> =
        plans.map(|p| vec![p.warm, p.cold, p.slides]).unwrap_or_default();
    let (mut results, mut skipped) = (Vec::new(), Vec::new());
    for &v in variants {
        let unavailable = match v {
            // Recorded in the skipped table at every size; the line is printed once, by
            // the chapter's plan.
            KernelVariant::FusedCluster => {
                k.cluster_unavailable().map(|u| u.why.to_string())
            }
            _ => None,
        };
        if let Some(why) = v.unsupported::<T>(p.d.n).or(unavailable) {
            skipped.push(Skipped { d: p.d, elem: T::C_NAME, what: v.name(), why });
            continue;
        }
        if v == KernelVariant::XConst {
            k.upload_x_const(&gpu.stream, &p.x)?;
        }
        if !plans.is_empty() {
            // Under --counters: the least bytes (one or two passes over A, the vectors).
            let least = bytes_moved(p.d, T::BYTES, v.passes_over_a()) as f64;
            let label = format!("{} {} {}", v.name(), p.d.label(), T::C_NAME);
            gpu.count_next(Case::new(label).predict(Quantity::DramBytes, least));
        }
        let verified = gpu.verify_then_time(
            &mut dev,
            // Correct before fast: poison every output (Aᵀ too, for the variant that makes it).
            |gpu, dev| {
                gpu.poison(&mut dev.y)?;
                gpu.poison(&mut dev.tmp)?;
                gpu.poison(&mut dev.partials)?;
                if v == KernelVariant::TransposeThenTwoKernels {
                    gpu.poison(&mut dev.at)?;
                }
                Ok(())
            },
            |s, dev| enqueue_variant(k, s, v, dev, mn),
            |gpu, dev| p.check(v.name(), &gpu.stream.clone_dtoh(&dev.y)?),
            &plans,
        )?;
        let times = match verified.times.as_slice() {
            [warm, cold, slides] => Some((warm.clone(), cold.clone(), slides.clone())),
            _ => None,
        };
        results.push(KernelResult {
            d: p.d,
            elem: T::C_NAME,
            variant: v,
            check: verified.check,
            times,
            bytes: v.bytes(k, p.d, &dev)?,
        });
    }
    Ok((results, skipped))
}
