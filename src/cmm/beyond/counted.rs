//! The chapter's cases for `--counters`: one launch of each tiled kernel on a table the
//! CPU has checked (a launch on a solved table changes nothing, and the table is checked
//! again after it), with the instructions its SASS predicts.

use crate::cmm::dp;
use crate::cmm::tiled::{
    Config, MinPlus, Sweep, TiledKernel, TiledKernels, TILE, TILED_FILES,
};
use crate::harness::counters::{Case, Quantity};
use crate::harness::kernels::KernelName;
use crate::harness::Run;

use super::instructions::{self, Counts};
use super::measure::{section_of, DP_DIM_MAX};
use crate::harness::sections::Plan;

/// `(n, block diagonal, kernels, whether the min-plus launch)` of each counted case: the
/// min-plus kernels where they carry the large sizes, the sweeps where they are the time
/// (n = 1024).
pub const CASES: [(usize, usize, Config, bool); 7] = [
    (4096, 32, Config { minplus: MinPlus::U64, sweep: Sweep::Pushed }, true),
    (4096, 32, Config { minplus: MinPlus::U32, sweep: Sweep::Pushed }, true),
    (1024, 8, Config { minplus: MinPlus::U64, sweep: Sweep::Pushed }, false),
    (1024, 8, Config { minplus: MinPlus::U64, sweep: Sweep::Lean }, false),
    (1024, 8, Config { minplus: MinPlus::U32, sweep: Sweep::U32 }, false),
    (1024, 8, Config { minplus: MinPlus::U32, sweep: Sweep::Ordered }, false),
    (1024, 8, Config { minplus: MinPlus::U32, sweep: Sweep::Quadrants }, false),
];

/// Candidates the min-plus launch of block diagonal `d` evaluates: every one of its
/// `tiles - d` blocks takes `d - 1` tiles of 64 values of c for each of its 64 x 64 cells
/// (cells past the chain included).
pub fn minplus_candidates(tiles: usize, d: usize) -> f64 {
    ((tiles - d) * (d - 1)) as f64 * (TILE * TILE * TILE) as f64
}

/// The case of one launch, with the warp instructions its SASS predicts: for a min-plus
/// launch, its candidates times the inner loop's instructions per candidate, over 32 lanes
/// (staging and the final atomics left out, so this is a floor); for the sweeps whose
/// warps all run every step, every instruction of the step loop at each of its 126 steps
/// in every warp (branches not taken included, so this is a ceiling). The ordered sweep
/// and the sweep in quadrants, whose warps stop as their cells finish, are counted without
/// a prediction.
pub fn case(
    kernels: (TiledKernel, TiledKernel),
    counts: Option<&Counts>,
    n: usize,
    d: usize,
    config: Config,
    minplus: bool,
) -> Case {
    let tiles = crate::cmm::tiled::tile_diagonals(n);
    let kernel = if minplus { kernels.0 } else { kernels.1 };
    let case = Case::new(format!("{} n={n} D={d}", kernel.function()));
    let Some(c) = counts else { return case };
    if minplus {
        let per = c.per_candidate(kernel).unwrap_or(0.0);
        case.predict(Quantity::Instructions, minplus_candidates(tiles, d) * per / 32.0)
    } else if matches!(config.sweep, Sweep::Ordered | Sweep::Quadrants) {
        case
    } else {
        let warps = (config.sweep_threads() / 32) as usize;
        let step = c.step(kernel).unwrap_or(0);
        let steps = 2 * TILE - 2;
        case.predict(
            Quantity::Instructions,
            ((tiles - d) * warps * steps * step) as f64,
        )
    }
}

/// Solves each case's chain, checks it, counts the one launch, checks again: the cases whose
/// section `plan` runs (the others were said skipped).
pub fn run_cases(run: &Run, plan: &Plan) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let tiled_kernels = TiledKernels::load(gpu)?;
    let sm = gpu.info.arch().replace("compute_", "sm_");
    let table = tiled_kernels.table();
    let ptx: Vec<&str> = TILED_FILES
        .iter()
        .filter_map(|f| table.try_module(f).map(|m| m.ptx.as_str()))
        .collect();
    let counts = instructions::count(&ptx, &sm)?;
    for (n, d, config, minplus) in CASES {
        if !plan.runs(section_of(config)) {
            continue;
        }
        let dims = dp::random_dims(n, DP_DIM_MAX, run.seed + n as u64);
        let cpu = dp::solve_contiguous_u32(&dims)?;
        let mut p = tiled_kernels.prepare_batch(&[dims], config)?;
        tiled_kernels.solve_verified(&mut p, &cpu)?;
        let kernels = config.kernels();
        let case = case(kernels, counts.as_ref(), n, d, config, minplus);
        gpu.count(case, || tiled_kernels.launch_step(&mut p, d, minplus))?;
        gpu.stream.synchronize()?;
        tiled_kernels.check_single(&p, &cpu)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_min_plus_launch_takes_d_minus_1_tiles_per_block() {
        // n = 4096: 65 tiles; D = 32: 33 blocks of 31 tiles K.
        assert_eq!(minplus_candidates(65, 32), (33 * 31 * 262_144) as f64);
    }
}
