//! GPU checks of every version of the tiled CMM program (`kernels/cmm_tiled.cu`,
//! `kernels/cmm_tiled_async.cu`) against the
//! CPU DP, cell by cell: both min-plus kernels, both sweeps, a CUDA graph of the launches,
//! and batches of chains in one launch sequence, at odd n, on tie-heavy chains, with
//! dimensions at the 32-bit bound and chains whose costs need 64 bits.
//! On a GPU that cannot run a version (the chapter's plan, `cmm::beyond::SECTIONS`), a test
//! says so in one line and checks the others.
//! Run on a machine with a GPU: `cargo test --release -- --ignored`.

use cmbook::cmm::beyond::measure::section_of;
use cmbook::cmm::beyond::{SECTIONS, TILED_U32, TILED_U64};
use cmbook::cmm::dp;
use cmbook::cmm::tiled::{self, Config, MinPlus, Sweep, TiledKernels};
use cmbook::harness::sections::{plan, Caps, Plan};
use cmbook::harness::Gpu;

use crate::common::gpu;

/// The chapter's plan on `gpu`, each of the sections a test `uses` that it skips said in one
/// line; `None` where it skips the 64-bit versions, which every test of the tiled program
/// needs (nothing of it runs there).
pub(crate) fn tiled_plan(gpu: &Gpu, uses: &[&str]) -> Option<Plan> {
    let plan = plan(SECTIONS, &Caps::of(&gpu.info, 0));
    for &section in uses {
        if let Some(skip) = plan.skip(section) {
            println!("{skip}");
            if section == TILED_U64 {
                return None;
            }
        }
    }
    Some(plan)
}

/// `best` where this GPU runs it, else the same sweep after the 64-bit min-plus kernel.
fn runnable(best: Config, plan: &Plan) -> Config {
    if plan.runs(section_of(best)) {
        best
    } else {
        Config { minplus: MinPlus::U64, ..best }
    }
}

const CONFIGS: [Config; 10] = [
    Config { minplus: MinPlus::U64, sweep: Sweep::Pushed },
    Config { minplus: MinPlus::U64, sweep: Sweep::Lean },
    Config { minplus: MinPlus::U32, sweep: Sweep::Pushed },
    Config { minplus: MinPlus::U32, sweep: Sweep::Lean },
    Config { minplus: MinPlus::U32, sweep: Sweep::U32 },
    Config { minplus: MinPlus::U64, sweep: Sweep::U32 },
    Config { minplus: MinPlus::U32, sweep: Sweep::Ordered },
    Config { minplus: MinPlus::U64, sweep: Sweep::Ordered },
    Config { minplus: MinPlus::U32, sweep: Sweep::Quadrants },
    Config { minplus: MinPlus::U64, sweep: Sweep::Quadrants },
];

/// The largest dimension for which the 32-bit bound holds at `n`.
fn largest_u32_dim(n: usize) -> u32 {
    (1..=65535u32).take_while(|&p| tiled::fits_u32(&vec![p; n + 1])).last().unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_version_matches_the_cpu_at_odd_n() {
    let gpu = gpu();
    let Some(plan) = tiled_plan(&gpu, &[TILED_U64, TILED_U32]) else { return };
    let k = TiledKernels::load(&gpu).unwrap();
    let mut checked = 0;
    for n in [1, 2, 3, 63, 64, 127, 129, 191, 333, 517, 1023] {
        let at_bound = largest_u32_dim(n);
        let chains = [
            dp::random_dims(n, 64, 11 + n as u64),
            vec![7; n + 1],        // every split a tie
            vec![at_bound; n + 1], // at the 32-bit bound
            dp::random_dims(n, at_bound, 13 + n as u64), // random up to it
            dp::random_dims(n, 1000, 17 + n as u64), // 64 bits (n > 4)
        ];
        for dims in &chains {
            let cpu = dp::solve_serial(dims).unwrap();
            for config in CONFIGS {
                if config.needs_u32() && !tiled::fits_u32(dims) {
                    let refused = k.prepare_batch(std::slice::from_ref(dims), config);
                    let e = refused.err().expect("a chain past the bound is refused");
                    assert!(e.to_string().contains("32-bit"), "{e}");
                    continue;
                }
                if !plan.runs(section_of(config)) {
                    continue;
                }
                let mut p =
                    k.prepare_batch(std::slice::from_ref(dims), config).unwrap();
                k.solve_verified(&mut p, &cpu)
                    .unwrap_or_else(|e| panic!("n = {n}, {}: {e}", config.label()));
                checked += 1;
            }
            // The chain's own best kernels answer every chain, 64-bit ones too.
            let best = runnable(Config::best_for(dims), &plan);
            let mut p = k.prepare_batch(std::slice::from_ref(dims), best).unwrap();
            let graph = k.capture(&mut p).unwrap();
            k.solve_verified_graph(&mut p, &graph, &cpu)
                .unwrap_or_else(|e| panic!("n = {n}, graph: {e}"));
        }
    }
    // 11 n x 5 chains x the 5 versions with 64-bit min-plus, and more with the 32-bit one.
    assert!(checked > 200, "{checked}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_batch_in_one_launch_sequence_matches_the_cpu_chain_by_chain() {
    let gpu = gpu();
    let Some(plan) = tiled_plan(&gpu, &[TILED_U64, TILED_U32]) else { return };
    let k = TiledKernels::load(&gpu).unwrap();
    for (n, chains, max_dim) in [(131, 5, 1000), (257, 3, 64), (1, 4, 1000)] {
        let dims: Vec<Vec<u32>> =
            (0..chains).map(|z| dp::random_dims(n, max_dim, 100 + z as u64)).collect();
        let cpu: Vec<_> = dims.iter().map(|d| dp::solve_serial(d).unwrap()).collect();
        for config in [Config::FIRST, runnable(Config::best_for(&dims[0]), &plan)] {
            let mut p = k.prepare_batch(&dims, config).unwrap();
            gpu.poison(&mut p.keys).unwrap();
            k.enqueue(&gpu.stream, &mut p).unwrap();
            gpu.stream.synchronize().unwrap();
            k.check_batch(&p, |z| Ok(cpu[z].clone()))
                .unwrap_or_else(|e| panic!("n = {n}, {}: {e}", config.label()));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_wrong_cell_in_one_chain_of_a_batch_is_caught() {
    let gpu = gpu();
    if tiled_plan(&gpu, &[TILED_U64]).is_none() {
        return;
    }
    let k = TiledKernels::load(&gpu).unwrap();
    let dims: Vec<Vec<u32>> = (0..3).map(|z| dp::random_dims(70, 50, z)).collect();
    let cpu: Vec<_> = dims.iter().map(|d| dp::solve_serial(d).unwrap()).collect();
    let mut p = k.prepare_batch(&dims, Config::FIRST).unwrap();
    k.enqueue(&gpu.stream, &mut p).unwrap();
    // Chain 2's M[1][70] (T[0][70]) gets a different split.
    let at = 2 * p.keys_per_chain() + 70;
    let mut keys = gpu.stream.clone_dtoh(&p.keys).unwrap();
    keys[at] ^= 1;
    gpu.stream.memcpy_htod(&keys, &mut p.keys).unwrap();
    let e = k.check_batch(&p, |z| Ok(cpu[z].clone())).unwrap_err().to_string();
    assert!(e.contains("chain 2"), "{e}");
}
