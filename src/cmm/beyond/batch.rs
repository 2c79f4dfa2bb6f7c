//! Many chains at once (the paper's section 7.2) and copies overlapped with the solve (its
//! Listing 4), measured with the tiled kernels against the paper's approach.
//!
//! - **The batch.** `chains` independent chains of one length in one solve of the tiled
//!   program: every launch takes all chains at once (`gridDim.z`), so the dependent steps
//!   are those of one chain while the work of all of them fills the GPU. Against it, the
//!   paper's way: one one-block kernel per chain, the chains spread over streams.
//! - **The overlap.** One chain solved and its whole key table copied to pinned host
//!   memory, either after the solve or strip by strip: row strip `I` (64 rows) is final
//!   once block diagonal `tiles - 1 - I` is, so a second stream copies it while the GPU
//!   goes on with the next block diagonals.
//!
//! Every table is checked cell by cell against the CPU's before anything is timed; the
//! tables written under concurrency and the copied ones are checked again after.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, PinnedHostSlice};
use rayon::prelude::*;

use crate::cmm::diagonal::DIM_MAX;
use crate::cmm::dp::{self, DpTable};
use crate::cmm::gpu::{CmmKernels, Kernel};
use crate::cmm::layout::Layout;
use crate::cmm::tiled::{self, Config, TiledKernels, TiledProblem, TILE};
use crate::harness::timing::Plan;
use crate::harness::{FullQuick, Gpu, Run, Stats, L2};

use super::measure::{Lengths, DP_DIM_MAX};

/// Chains in the batch (1024, far beyond the paper's largest batch of 4).
pub const BATCH_CHAINS: FullQuick<usize> = FullQuick::new(1024, 8);
/// Matrices per chain of the batch (the paper's one-block limit).
pub const BATCH_N: FullQuick<usize> = FullQuick::new(1024, 131);
/// Streams the one-block kernels are spread over: one per multiprocessor.
pub const STREAMS: usize = 132;
/// Chain lengths of the overlap experiment.
pub const OVERLAP_N: FullQuick<Lengths> =
    FullQuick::new(Lengths(&[1024, 4096]), Lengths(&[131]));
/// The goal for the batch, in ms.
pub const BATCH_TARGET_MS: f64 = 200.0;

/// One way of solving the whole batch.
#[derive(Debug, Clone)]
pub struct BatchRow {
    pub approach: String,
    pub launches: String,
    pub stats: Stats,
}

/// One chain solved with its table copied out, three ways.
#[derive(Debug, Clone)]
pub struct OverlapRow {
    pub n: usize,
    pub table_bytes: usize,
    /// The solve alone, table left on the GPU.
    pub solve: Stats,
    /// The solve, then the whole table copied.
    pub then_copy: Stats,
    /// Strips copied on a second stream as they become final.
    pub overlapped: Stats,
}

/// What the batch part measured.
#[derive(Debug, Clone)]
pub struct BatchResults {
    pub chains: usize,
    pub n: usize,
    /// One chain of the 32-bit batch solved alone by the same kernels, for the serial
    /// comparison.
    pub one_chain: Stats,
    pub rows: Vec<BatchRow>,
    pub overlap: Vec<OverlapRow>,
}

/// The batch's chains: dimensions 1 to `dim_max`. With the DP measurement's 64 every
/// chain's bound is below 2^32 and the 32-bit kernels answer it; with the previous
/// chapter's 1000 the bound passes 32 bits and only the 64-bit path does.
pub fn batch_chains(chains: usize, n: usize, dim_max: u32, seed: u64) -> Vec<Vec<u32>> {
    (0..chains)
        .map(|z| dp::random_dims(n, dim_max, seed.wrapping_add(1000 + z as u64)))
        .collect()
}

pub fn measure(run: &Run) -> anyhow::Result<BatchResults> {
    let gpu = run.gpu();
    let chains = run.pick(None, BATCH_CHAINS);
    let n = run.pick(None, BATCH_N);
    let bar = run.progress(7);
    let tiled_kernels = TiledKernels::load(gpu)?;
    let plan = Plan::new(1, run.reps(), L2::Warm);
    let mut rows = Vec::new();
    let mut one_chain = None;
    let mut wide = Vec::new();
    for dim_max in [DP_DIM_MAX, DIM_MAX] {
        bar.set_message(format!(
            "batch: CPU tables of {chains} chains, p <= {dim_max}"
        ));
        let dims = batch_chains(chains, n, dim_max, run.seed);
        let cpu: Vec<DpTable> = dims
            .par_iter()
            .map(|d| {
                if tiled::fits_u32(d) {
                    dp::solve_contiguous_u32(d)
                } else {
                    dp::solve_contiguous(d)
                }
            })
            .collect::<Result<_, _>>()?;
        bar.inc(1);
        // Every chain in every launch: poison, solve, check every chain, then time.
        let config = Config::best_for(&dims[0]);
        bar.set_message(format!("batch: tiled, {}", config.label()));
        let mut p = tiled_kernels.prepare_batch(&dims, config)?;
        let verified = gpu.verify_then_time(
            &mut p,
            |gpu, p| gpu.poison(&mut p.keys),
            |s, p| tiled_kernels.enqueue(s, p),
            |_, p| tiled_kernels.check_batch(p, |z| Ok(cpu[z].clone())),
            &[plan],
        )?;
        rows.push(BatchRow {
            approach: format!(
                "tiled, every chain in every launch, p <= {dim_max} ({})",
                config.label()
            ),
            launches: TiledKernels::launches(p.tiles).to_string(),
            stats: verified.time().clone(),
        });
        drop(p);
        bar.inc(1);
        if dim_max == DP_DIM_MAX {
            // The same kernels on one chain, for the serial comparison.
            let mut one = tiled_kernels.prepare_batch(&dims[..1], config)?;
            one_chain = Some(
                tiled_kernels
                    .verify_then_time(&mut one, &cpu[0], &[plan])?
                    .time()
                    .clone(),
            );
        } else {
            wide = vec![(dims, cpu)];
        }
        bar.inc(1);
    }
    // The paper's approach on the chains of its own range of dimensions: one one-block
    // kernel per chain, spread over streams.
    let (dims, cpu) = wide.pop().expect("both ranges measured");
    bar.set_message(format!("batch: one block per chain on {STREAMS} streams"));
    rows.push(one_block_streams(gpu, &dims, &cpu, plan)?);
    drop((dims, cpu));
    bar.inc(1);

    bar.set_message("overlap: copies during the solve");
    let mut overlap = Vec::new();
    for &on in run.pick(None, OVERLAP_N).0 {
        let chain = dp::random_dims(on, DP_DIM_MAX, run.seed.wrapping_add(on as u64));
        let reference = dp::solve_contiguous(&chain)?;
        overlap.push(measure_overlap(gpu, &tiled_kernels, &chain, &reference, plan)?);
    }
    bar.inc(1);
    bar.finish_and_clear();
    let one_chain = one_chain.expect("measured with the 32-bit chains");
    Ok(BatchResults { chains, n, one_chain, rows, overlap })
}

/// The paper's section 7.2 at this scale: every chain its own one-block problem
/// (diagonal-major, the faster layout at n = 1024), the chains dealt round-robin over
/// [`STREAMS`] streams. One untimed concurrent run from poisoned tables is checked chain by
/// chain first, then the timed runs.
fn one_block_streams(
    gpu: &Gpu,
    dims: &[Vec<u32>],
    cpu: &[DpTable],
    plan: Plan,
) -> anyhow::Result<BatchRow> {
    let kernels = CmmKernels::load(gpu)?;
    let kernel = Kernel::one_block(Layout::DiagonalMajor);
    let mut problems = dims
        .iter()
        .map(|d| kernels.prepare(kernel, d))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let streams = (0..STREAMS.min(dims.len()))
        .map(|_| gpu.ctx.new_stream())
        .collect::<Result<Vec<Arc<CudaStream>>, _>>()?;
    // Read back a few tables at a time, compare them in parallel.
    let check = |problems: &[crate::cmm::gpu::Problem]| -> anyhow::Result<()> {
        for first in (0..problems.len()).step_by(32) {
            let last = (first + 32).min(problems.len());
            let got = problems[first..last]
                .iter()
                .map(|p| kernels.read_back(p))
                .collect::<anyhow::Result<Vec<_>>>()?;
            (first..last).into_par_iter().zip(got.par_iter()).try_for_each(
                |(z, table)| match cpu[z].difference_from(table) {
                    Some(diff) => anyhow::bail!(
                        "one-block kernel, chain {z} of the batch on its stream: {diff}"
                    ),
                    None => Ok(()),
                },
            )?;
        }
        Ok(())
    };
    for p in problems.iter_mut() {
        kernels.poison(p)?;
    }
    kernels.time_many(&mut problems, Some(&streams), Plan::new(0, 1, L2::Warm))?;
    check(&problems)?;
    let plan = Plan::new(0, plan.reps.min(3), L2::Warm);
    let stats = kernels.time_many(&mut problems, Some(&streams), plan)?;
    Ok(BatchRow {
        approach: format!(
            "the paper's: one block per chain (diagonal-major), {} streams",
            streams.len()
        ),
        launches: dims.len().to_string(),
        stats,
    })
}

/// Row strip `strip` of a key table: its 64 rows from the diagonal on, one contiguous
/// range of keys (`T[a][b]` for `a` in the strip and `b >= 64 strip`, plus the cells of
/// the next rows' lower part, which the decoding ignores).
pub fn strip_range(strip: usize, stride: usize) -> std::ops::Range<usize> {
    let a0 = strip * TILE;
    a0 * stride + a0..(a0 + TILE) * stride
}

/// Copies `range` of `keys` into the same range of `host`, on `stream`.
fn copy_range(
    stream: &Arc<CudaStream>,
    keys: &CudaSlice<u64>,
    host: &mut [u64],
    range: std::ops::Range<usize>,
) -> anyhow::Result<()> {
    let view = keys.slice(range.clone());
    let (ptr, _sync) = view.device_ptr(stream);
    // SAFETY: `host[range]` is pinned host memory as long as the device range; the
    // caller synchronises the copy's stream before it reads `host` or frees either.
    unsafe {
        cudarc::driver::result::memcpy_dtoh_async(
            &mut host[range],
            ptr,
            stream.cu_stream(),
        )?
    };
    Ok(())
}

/// How the table leaves the GPU in the overlap experiment.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Copy {
    /// Every strip after the solve, on the solve's stream.
    After,
    /// Each strip on a second stream once its last block diagonal is enqueued.
    Overlapped,
}

fn measure_overlap(
    gpu: &Gpu,
    kernels: &TiledKernels,
    dims: &[u32],
    cpu: &DpTable,
    plan: Plan,
) -> anyhow::Result<OverlapRow> {
    let config = Config::best_for(dims);
    let mut p: TiledProblem = kernels.prepare_batch(&[dims.to_vec()], config)?;
    let solve = kernels.verify_then_time(&mut p, cpu, &[plan])?.time().clone();
    let (n, len, stride, tiles) = (p.n, p.keys.len(), p.stride(), p.tiles);
    // SAFETY: every key is written by a copy before it is read.
    let mut host: PinnedHostSlice<u64> =
        unsafe { gpu.ctx.alloc_pinned_with_flags(len, 0)? };
    let copier = gpu.ctx.new_stream()?;
    let solve_and_copy = |how: Copy,
                          plan: Plan,
                          host: &mut PinnedHostSlice<u64>,
                          p: &mut TiledProblem|
     -> anyhow::Result<Stats> {
        let slice = host.as_mut_slice()?;
        gpu.time(plan, |s| {
            match how {
                Copy::After => {
                    kernels.enqueue(s, p)?;
                    for strip in 0..tiles {
                        copy_range(s, &p.keys, slice, strip_range(strip, stride))?;
                    }
                }
                Copy::Overlapped => {
                    kernels.enqueue_with(s, p, |d, keys| {
                        let ready = gpu.timing_event()?;
                        ready.record(s)?;
                        copier.wait(&ready)?;
                        let strip = strip_range(tiles - 1 - d, stride);
                        copy_range(&copier, keys, slice, strip)
                    })?;
                    // The stop event waits for the last copy.
                    s.join(&copier)?;
                }
            }
            Ok(())
        })
    };
    let check = |host: &mut PinnedHostSlice<u64>, what: &str| -> anyhow::Result<()> {
        gpu.stream.synchronize()?;
        copier.synchronize()?;
        let table = tiled::table_from_keys(n, stride, host.as_slice()?)?;
        match cpu.difference_from(&table) {
            Some(diff) => {
                anyhow::bail!("the table copied {what} differs from the CPU's: {diff}")
            }
            None => Ok(()),
        }
    };
    // Each way once untimed from a poisoned table and a poisoned host copy, checked; then
    // the timed runs, their last copy checked too.
    let once = Plan::new(0, 1, L2::Warm);
    let mut stats = Vec::new();
    for (how, what) in
        [(Copy::After, "after the solve"), (Copy::Overlapped, "during it")]
    {
        gpu.poison(&mut p.keys)?;
        host.as_mut_slice()?.fill(u64::MAX);
        solve_and_copy(how, once, &mut host, &mut p)?;
        check(&mut host, what)?;
        host.as_mut_slice()?.fill(u64::MAX);
        stats.push(solve_and_copy(how, plan, &mut host, &mut p)?);
        check(&mut host, what)?;
    }
    let overlapped = stats.pop().expect("two ways");
    let then_copy = stats.pop().expect("two ways");
    Ok(OverlapRow { n, table_bytes: len * 8, solve, then_copy, overlapped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strips_cover_every_cell_of_the_upper_triangle() {
        let n = 200;
        let stride = tiled::tile_diagonals(n) * TILE;
        let mut covered = vec![false; stride * stride];
        for strip in 0..tiled::tile_diagonals(n) {
            for k in strip_range(strip, stride) {
                covered[k] = true;
            }
        }
        for a in 0..=n {
            for b in a + 1..=n {
                assert!(covered[a * stride + b], "T[{a}][{b}]");
            }
        }
    }

    #[test]
    fn the_wide_batch_chains_need_the_64_bit_path() {
        let wide = batch_chains(4, 1024, DIM_MAX, 1);
        assert!(wide.iter().all(|c| !tiled::fits_u32(c)));
        assert!(wide.iter().all(|c| tiled::check(c).is_ok()));
        assert_ne!(wide[0], wide[1]);
        let narrow = batch_chains(4, 1024, DP_DIM_MAX, 1);
        assert!(narrow.iter().all(|c| tiled::fits_u32(c)));
    }
}
