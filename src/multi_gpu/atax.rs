//! ATAX, y = Aᵀ(A·x), on several GPUs. y = Σᵢ aᵢ (aᵢ · x) over the rows aᵢ of A, so the rows
//! can be split: GPU k holds its block of rows, computes its partial y with the ATAX chapter's
//! fused kernel (one pass over its rows) and NCCL's all-reduce adds the partial ys, leaving the
//! whole y on every GPU. Measured against one GPU doing all the rows, for the kernels alone,
//! with the all-reduce, and end to end with the host transfers.

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use rayon::prelude::*;

use super::devices::{self, memcpy_dtoh, memcpy_htod, streams_of, time_streams};
use super::nccl::{Collective, Comms};
use crate::atax::device::{fused_shape, AtaxFunction, AtaxKernel};
use crate::atax::element::Element;
use crate::atax::reference::{self, Reference};
use crate::harness::kernels::KernelTable;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Stats, L2};

/// The ATAX chapter's float kernels on one GPU.
pub struct AtaxGpu {
    table: KernelTable<AtaxKernel<f32>>,
    sms: u32,
}

impl AtaxGpu {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        Ok(Self { table: KernelTable::load(gpu)?, sms: gpu.info.sms as u32 })
    }

    /// Blocks of the fused kernel for `m` × `n` rows, by the ATAX chapter's rule: every SM
    /// filled as far as its registers allow, never more blocks than row pairs, and beyond one
    /// block per SM no more than one block per 8 rows.
    pub fn blocks(&self, m: usize, n: usize) -> anyhow::Result<u32> {
        self.table.fused_blocks(self.sms, m, n)
    }

    // ANCHOR: launch
    /// Enqueues this GPU's part: the fused pass over its `m` rows at `a` (`blocks`
    /// partial ys into `partials`), then their sum in block order into `y`.
    ///
    /// # Safety
    /// `a` must hold m·n floats, `x` and `y` n, `partials` blocks·n, all on this GPU.
    pub unsafe fn launch(
        &self,
        s: &Arc<CudaStream>,
        (a, x, partials, y): (CUdeviceptr, CUdeviceptr, CUdeviceptr, CUdeviceptr),
        (m, n): (usize, usize),
        blocks: u32,
    ) -> anyhow::Result<()> {
        let shape = fused_shape(n, f32::FUSED_COLUMNS_PER_THREAD)
            .ok_or_else(|| anyhow::anyhow!("no fused instance covers n = {n}"))?;
        let (m32, n32) = (u32::try_from(m)?, u32::try_from(n)?);
        let fused = self
            .table
            .get(AtaxKernel::new(AtaxFunction::FusedRows(shape.columns_per_thread)));
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (shape.threads, 1, 1),
            shared_mem_bytes: 0,
        };
        s.launch_builder(fused)
            .arg(&a)
            .arg(&x)
            .arg(&partials)
            .arg(&m32)
            .arg(&n32)
            .launch(cfg)?;
        self.table.launch_reduce_partials(s, partials, y, blocks, n)
    }
    // ANCHOR_END: launch
}

/// Rows of GPU `k` of `parts` for `m` rows: as even a split as the rows allow.
pub fn split_rows(m: usize, parts: usize) -> Vec<Range<usize>> {
    (0..parts).map(|k| m * k / parts..m * (k + 1) / parts).collect()
}

/// 1, 2, 4, ... GPUs up to `count`, and `count` itself.
pub fn gpu_counts(count: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |g| Some(g * 2))
        .take_while(|g| *g <= count)
        .collect();
    if counts.last() != Some(&count) {
        counts.push(count);
    }
    counts
}

/// The rows of the sweep: `rows`/64, /16, /4 and `rows` (at least 2 per GPU), deduplicated.
pub fn row_sizes(rows: usize, gpus: usize) -> Vec<usize> {
    let mut sizes: Vec<usize> =
        [64, 16, 4, 1].iter().map(|d| (rows / d).max(2 * gpus)).collect();
    sizes.dedup();
    sizes
}

/// One matrix on `gpus` GPUs.
#[derive(Debug, Clone)]
pub struct AtaxPoint {
    pub gpus: usize,
    pub rows: usize,
    pub cols: usize,
    /// Every GPU's kernels, A on the device, L2 cold: until the slowest is done.
    pub kernels: Stats,
    /// The kernels and the all-reduce of the partial ys (several GPUs only).
    pub with_all_reduce: Option<Stats>,
    /// The all-reduce of y (n floats) alone.
    pub all_reduce: Option<Stats>,
    /// A and x from page-locked host memory to the GPUs, the kernels, the all-reduce, y back
    /// to the host.
    pub end_to_end: Stats,
}

impl AtaxPoint {
    pub fn matrix_bytes(&self) -> usize {
        self.rows * self.cols * 4
    }
}

/// The host's inputs: A (page-locked, so every GPU uploads at full speed) and x, and the
/// CPU's answer for each number of rows of the sweep (the first `rows` rows of A).
pub struct HostProblem {
    // The page-locked buffers, kept alive here; the copies use the pointers below.
    _a: cudarc::driver::PinnedHostSlice<f32>,
    a_ptr: *mut f32,
    _x: cudarc::driver::PinnedHostSlice<f32>,
    x_ptr: *mut f32,
    y: cudarc::driver::PinnedHostSlice<f32>,
    y_ptr: *mut f32,
    pub cols: usize,
    pub references: Vec<(usize, Reference)>,
}

impl HostProblem {
    /// Random A (`rows_max` × `cols`) and x, and the reference for every size of `rows`.
    pub fn new(
        gpu: &Gpu,
        rows: &[usize],
        cols: usize,
        seed: u64,
    ) -> anyhow::Result<Self> {
        let rows_max = *rows.iter().max().expect("one size");
        let portable = sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: filled right below, before anything reads them.
        let (mut a, mut x, mut y) = unsafe {
            (
                gpu.ctx.alloc_pinned_with_flags::<f32>(rows_max * cols, portable)?,
                gpu.ctx.alloc_pinned_with_flags::<f32>(cols, portable)?,
                gpu.ctx.alloc_pinned_with_flags::<f32>(cols, portable)?,
            )
        };
        // Row blocks drawn independently, in parallel, without a second copy of A.
        a.as_mut_slice()?.par_chunks_mut(cols << 6).enumerate().for_each(
            |(i, chunk)| {
                chunk.copy_from_slice(&inputs::random_f32(
                    chunk.len(),
                    seed ^ (i as u64) << 20,
                ))
            },
        );
        x.as_mut_slice()?.copy_from_slice(&inputs::random_f32(cols, seed ^ 0x5EED));
        let references = {
            let (a, x) = (a.as_slice()?, x.as_slice()?);
            rows.iter()
                .map(|&m| (m, reference::atax(&a[..m * cols], x, m, cols)))
                .collect()
        };
        let (a_ptr, x_ptr, y_ptr) = (a.as_mut_ptr()?, x.as_mut_ptr()?, y.as_mut_ptr()?);
        Ok(Self { _a: a, a_ptr, _x: x, x_ptr, y, y_ptr, cols, references })
    }

    fn reference(&self, m: usize) -> &Reference {
        &self.references.iter().find(|(r, _)| *r == m).expect("a reference per size").1
    }

    /// The host's y after an end-to-end run.
    fn y(&self) -> anyhow::Result<&[f32]> {
        Ok(self.y.as_slice()?)
    }
}

/// One GPU's share: its rows of A, x, the fused kernel's partial ys, its partial y and the
/// all-reduced y.
struct Share {
    a: CudaSlice<f32>,
    x: CudaSlice<f32>,
    partials: CudaSlice<f32>,
    y: CudaSlice<f32>,
    sum: CudaSlice<f32>,
}

fn address(s: &CudaSlice<f32>, stream: &CudaStream) -> CUdeviceptr {
    s.device_ptr(stream).0
}

/// Verifies, then times, ATAX on 1, 2, 4, ... of `gpus` at every size of `rows`.
pub fn measure(
    gpus: &[&Gpu],
    kernels: &[AtaxGpu],
    comms_all: Option<&Comms>,
    host: &HostProblem,
    rows: &[usize],
    reps: usize,
    mut progress: impl FnMut(&str),
) -> anyhow::Result<Vec<AtaxPoint>> {
    let n = host.cols;
    let rows_max = *rows.iter().max().expect("one size");
    let mut points = Vec::new();
    for g in gpu_counts(gpus.len()) {
        let used = &gpus[..g];
        let streams = streams_of(used);
        let owned_comms;
        let comms = match (g, comms_all) {
            (1, _) => None,
            (g, Some(c)) if c.ranks() == g => Some(c),
            _ => {
                owned_comms = Comms::new(used)?;
                Some(&owned_comms)
            }
        };
        // Buffers for the largest size; smaller sizes use their first rows.
        let split_max = split_rows(rows_max, g);
        let mut shares = Vec::with_capacity(g);
        for (k, gpu) in used.iter().enumerate() {
            let m_k = split_max[k].len();
            let blocks = kernels[k].blocks(m_k, n)? as usize;
            gpu.ensure_fits(4 * (m_k * n + (blocks + 3) * n), "ATAX's buffers")?;
            // SAFETY: every buffer is written (uploaded or computed) before it is read.
            shares.push(unsafe {
                Share {
                    a: gpu.stream.alloc::<f32>(m_k * n)?,
                    x: gpu.stream.alloc::<f32>(n)?,
                    partials: gpu.stream.alloc::<f32>(blocks * n)?,
                    y: gpu.stream.alloc::<f32>(n)?,
                    sum: gpu.stream.alloc::<f32>(n)?,
                }
            });
        }
        for &m in rows {
            progress(&format!("ATAX {m}×{n} on {g} GPU(s)"));
            let split = split_rows(m, g);
            let blocks: Vec<u32> = split
                .iter()
                .zip(kernels)
                .map(|(r, k)| k.blocks(r.len(), n))
                .collect::<Result<_, _>>()?;
            let reference = host.reference(m);
            let tol = reference.tolerance(f32::EPSILON as f64, m, n);
            let size = format!("{m}×{n} on {g} GPU(s)");
            // A's rows and x onto every GPU, from the page-locked host buffers.
            let upload = |shares: &[Share]| -> anyhow::Result<()> {
                for (k, (gpu, share)) in used.iter().zip(shares).enumerate() {
                    let r = &split[k];
                    // SAFETY: the host buffers hold rows_max × n and n floats; the device
                    // buffers at least this GPU's rows and n.
                    unsafe {
                        memcpy_htod(
                            &gpu.stream,
                            address(&share.a, &gpu.stream),
                            host.a_ptr.add(r.start * n).cast(),
                            r.len() * n * 4,
                        )?;
                        memcpy_htod(
                            &gpu.stream,
                            address(&share.x, &gpu.stream),
                            host.x_ptr.cast(),
                            n * 4,
                        )?;
                    }
                }
                Ok(())
            };
            let launch_all = |shares: &[Share]| -> anyhow::Result<()> {
                for (k, (gpu, share)) in used.iter().zip(shares).enumerate() {
                    let s = &gpu.stream;
                    let ptrs = (
                        address(&share.a, s),
                        address(&share.x, s),
                        address(&share.partials, s),
                        address(&share.y, s),
                    );
                    // SAFETY: the share holds this GPU's rows, x, its partials and y.
                    unsafe {
                        kernels[k].launch(s, ptrs, (split[k].len(), n), blocks[k])?
                    };
                }
                Ok(())
            };
            let all_reduce = |shares: &mut [Share]| -> anyhow::Result<()> {
                let comms = comms.expect("several GPUs have communicators");
                let (ys, mut sums): (Vec<_>, Vec<_>) = shares
                    .iter_mut()
                    .map(|s| (s.y.slice(..), s.sum.slice_mut(..)))
                    .unzip();
                comms.enqueue(Collective::AllReduce, &ys, &mut sums)
            };
            let poison = |shares: &mut [Share]| -> anyhow::Result<()> {
                for (gpu, share) in used.iter().zip(shares.iter_mut()) {
                    gpu.ctx.bind_to_thread()?; // NCCL may have left another GPU current
                    gpu.poison(&mut share.partials)?;
                    gpu.poison(&mut share.y)?;
                    gpu.poison(&mut share.sum)?;
                }
                devices::synchronize(&streams)
            };

            upload(&shares)?;
            devices::synchronize(&streams)?;

            // The kernels: every GPU's partial y, added on the CPU, is the reference's y.
            poison(&mut shares)?;
            launch_all(&shares)?;
            devices::synchronize(&streams)?;
            let mut total = vec![0f64; n];
            for (gpu, share) in used.iter().zip(&shares) {
                let part = gpu.stream.clone_dtoh(&share.y)?;
                total.iter_mut().zip(&part).for_each(|(t, &p)| *t += p as f64);
            }
            verify::check_close(
                "fused_rows + reduce_partials",
                &size,
                &total,
                &reference.y,
                tol,
            )?;
            let cold = Plan::new(2, reps, L2::Cold);
            let kernel_time =
                time_streams(&streams, used, cold, 1, || launch_all(&shares))?;

            let (mut with_all_reduce, mut all_reduce_time) = (None, None);
            if g > 1 {
                // The kernels and the all-reduce: every GPU ends with the whole y.
                poison(&mut shares)?;
                launch_all(&shares)?;
                all_reduce(&mut shares)?;
                devices::synchronize(&streams)?;
                for (k, (gpu, share)) in used.iter().zip(&shares).enumerate() {
                    let got = gpu.stream.clone_dtoh(&share.sum)?;
                    let what = format!("fused ATAX + NCCL all-reduce (GPU {k})");
                    verify::check_close(&what, &size, &got, &reference.y, tol)?;
                }
                with_all_reduce = Some(time_streams(&streams, used, cold, 1, || {
                    launch_all(&shares)?;
                    all_reduce(&mut shares)
                })?);
                // Alone, 20 back to back (as in the collectives' sweep): the all-reduce's own
                // cost, without the skew of starting two GPUs at once that one call would see.
                let warm = Plan::new(2, reps, L2::Warm);
                let batch = super::collectives::ITERS;
                all_reduce_time =
                    Some(time_streams(&streams, &[], warm, batch, || {
                        all_reduce(&mut shares)
                    })?);
            }

            // End to end: A and x up, the kernels, the all-reduce, y down from GPU 0.
            let run_end_to_end = |shares: &mut [Share]| -> anyhow::Result<()> {
                upload(shares)?;
                launch_all(shares)?;
                if g > 1 {
                    all_reduce(shares)?;
                }
                let s0 = &used[0].stream;
                let result = if g > 1 { &shares[0].sum } else { &shares[0].y };
                // SAFETY: the host y holds n floats; so does the device result.
                unsafe {
                    memcpy_dtoh(s0, host.y_ptr.cast(), address(result, s0), n * 4)
                }
            };
            poison(&mut shares)?;
            // SAFETY: no copy into the host y is in flight (every stream was synchronised).
            unsafe { std::slice::from_raw_parts_mut(host.y_ptr, n).fill(f32::NAN) };
            run_end_to_end(&mut shares)?;
            devices::synchronize(&streams)?;
            verify::check_close(
                "ATAX end to end",
                &size,
                host.y()?,
                &reference.y,
                tol,
            )?;
            let warm = Plan::new(1, reps.min(10), L2::Warm);
            let end_to_end =
                time_streams(&streams, &[], warm, 1, || run_end_to_end(&mut shares))?;

            points.push(AtaxPoint {
                gpus: g,
                rows: m,
                cols: n,
                kernels: kernel_time,
                with_all_reduce,
                all_reduce: all_reduce_time,
                end_to_end,
            });
        }
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_split_without_gaps() {
        let parts = split_rows(7, 3);
        assert_eq!(parts, [0..2, 2..4, 4..7]);
        assert_eq!(split_rows(8, 1), vec![0..8usize]);
        assert_eq!(split_rows(65536, 2), [0..32768, 32768..65536]);
    }

    #[test]
    fn gpu_counts_and_row_sizes() {
        assert_eq!(gpu_counts(1), [1]);
        assert_eq!(gpu_counts(2), [1, 2]);
        assert_eq!(gpu_counts(6), [1, 2, 4, 6]);
        assert_eq!(row_sizes(65536, 2), [1024, 4096, 16384, 65536]);
        assert_eq!(row_sizes(8, 2), [4, 8]);
    }

    #[test]
    fn partial_ys_of_row_blocks_add_up_to_y() {
        let (m, n) = (9, 5);
        let a = inputs::random_f32(m * n, 1);
        let x = inputs::random_f32(n, 2);
        let whole = reference::atax(&a, &x, m, n);
        let mut total = vec![0f64; n];
        for r in split_rows(m, 4) {
            let part = reference::atax(&a[r.start * n..r.end * n], &x, r.len(), n);
            total.iter_mut().zip(&part.y).for_each(|(t, p)| *t += p);
        }
        for (t, w) in total.iter().zip(&whole.y) {
            assert!((t - w).abs() < 1e-12, "{t} vs {w}");
        }
    }
}
