//! The CMM beyond chapter's batch of chains split over the GPUs. The chains are independent, so
//! GPU k takes its block of them and solves them with that chapter's tiled program, every chain
//! of its block in every launch (`gridDim.z`); nothing crosses between GPUs. The chains, the
//! kernels and the check are the CMM chapter's own ([`crate::cmm::beyond::batch`],
//! [`crate::cmm::tiled`]); this module only deals them out and times the GPUs together.

use std::ops::Range;

use super::atax::{gpu_counts, split_rows};
use super::devices::{self, streams_of, time_streams};
use crate::cmm::beyond::batch::{batch_chains, BATCH_N};
use crate::cmm::beyond::measure::DP_DIM_MAX;
use crate::cmm::beyond::{BATCH, SECTIONS};
use crate::cmm::dp;
use crate::cmm::tiled::{Config, TiledKernels, TiledProblem};
use crate::harness::sections::{self, Caps};
use crate::harness::timing::Plan;
use crate::harness::{FullQuick, Gpu, Stats, L2};

/// Matrices per chain: the CMM beyond chapter's batch length (1024; 131 with `--quick`).
pub const CHAIN_N: FullQuick<usize> = BATCH_N;

/// The batch on `gpus` GPUs: the time until the slowest GPU has solved its block.
#[derive(Debug, Clone)]
pub struct CmmPoint {
    pub gpus: usize,
    pub chains: usize,
    /// Matrices per chain.
    pub n: usize,
    /// Chains of the GPU with the most.
    pub most_per_gpu: usize,
    /// The kernels of the solve, in the CMM chapter's words (`u32 costs + DPX, ...`).
    pub config: String,
    pub time: Stats,
}

/// Why the batch cannot run on GPU `ordinal` (the CMM beyond chapter's own need for it), as
/// the rest of a skip line; `None` where it can.
pub fn unmet_need(ordinal: usize, gpu: &Gpu) -> Option<String> {
    let plan = sections::plan(SECTIONS, &Caps::of(&gpu.info, 0));
    plan.skip(BATCH).map(|s| format!("GPU {ordinal} {}", s.why))
}

/// The GPU counts the batch runs on: 1, 2, 4, ... and all of `gpus`, none with more GPUs than
/// chains.
pub fn counts(gpus: usize, chains: usize) -> Vec<usize> {
    gpu_counts(gpus).into_iter().filter(|&g| g <= chains).collect()
}

/// Chains of GPU `k` of `parts`: as even a split as the chains allow.
pub fn split_chains(chains: usize, parts: usize) -> Vec<Range<usize>> {
    split_rows(chains, parts)
}

// ANCHOR: split
/// Verifies, then times, `chains` chains of `n` matrices (dimensions 1 to the DP
/// measurement's 64, so that the 32-bit kernels solve them exactly) on the first 1,
/// 2, 4, ... of `gpus`. Each solve starts from poisoned tables and every cell of every
/// chain is compared with the CPU's table before the GPUs are timed together.
pub fn measure(
    gpus: &[&Gpu],
    chains: usize,
    n: usize,
    reps: usize,
    seed: u64,
    mut progress: impl FnMut(&str),
) -> anyhow::Result<Vec<CmmPoint>> {
    let dims = batch_chains(chains, n, DP_DIM_MAX, seed);
    let config = Config::best_for(&dims[0]);
    let kernels: Vec<TiledKernels> =
        gpus.iter().map(|g| TiledKernels::load(g)).collect::<Result<_, _>>()?;
    let mut points = Vec::new();
    for g in counts(gpus.len(), chains) {
        progress(&format!("CMM batch of {chains} chains on {g} GPU(s)"));
        let used = &gpus[..g];
        let blocks = split_chains(chains, g);
        let mut problems: Vec<TiledProblem> = blocks
            .iter()
            .zip(&kernels)
            .map(|(r, k)| k.prepare_batch(&dims[r.clone()], config))
            .collect::<Result<_, _>>()?;
        let streams = streams_of(used);
        let solve_all = |problems: &mut [TiledProblem]| -> anyhow::Result<()> {
            for ((gpu, k), p) in used.iter().zip(&kernels).zip(problems.iter_mut()) {
                gpu.ctx.bind_to_thread()?; // each GPU's memset runs in its own context
                k.enqueue(&gpu.stream, p)?;
            }
            Ok(())
        };
        for (gpu, p) in used.iter().zip(problems.iter_mut()) {
            gpu.ctx.bind_to_thread()?;
            gpu.poison(&mut p.keys)?;
        }
        devices::synchronize(&streams)?;
        solve_all(&mut problems)?;
        devices::synchronize(&streams)?;
        for ((k, p), r) in kernels.iter().zip(&problems).zip(&blocks) {
            k.check_batch(p, |z| Ok(dp::solve_contiguous_u32(&dims[r.start + z])?))?;
        }
        let plan = Plan::new(1, reps, L2::Warm);
        let time = time_streams(&streams, &[], plan, 1, || solve_all(&mut problems))?;
        points.push(CmmPoint {
            gpus: g,
            chains,
            n,
            most_per_gpu: blocks.iter().map(|r| r.len()).max().unwrap_or(0),
            config: config.label(),
            time,
        });
    }
    Ok(points)
}
// ANCHOR_END: split

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chain_goes_to_one_gpu() {
        let blocks = split_chains(10, 4);
        assert_eq!(blocks, [0..2, 2..5, 5..7, 7..10]);
        assert_eq!(counts(4, 256), [1, 2, 4]);
        assert_eq!(counts(4, 3), [1, 2], "no GPU without a chain");
        assert_eq!(counts(1, 8), [1]);
    }

    #[test]
    fn the_batch_is_the_cmm_chapters_and_fits_the_32_bit_kernels() {
        for quick in [false, true] {
            let n = CHAIN_N.pick(quick);
            let dims = batch_chains(4, n, DP_DIM_MAX, 7);
            assert!(dims.iter().all(|d| d.len() == n + 1));
            assert_eq!(Config::best_for(&dims[0]), Config::best_for(&dims[3]));
            assert!(dims.iter().all(|d| crate::cmm::tiled::fits_u32(d)));
        }
    }
}
