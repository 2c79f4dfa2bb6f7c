//! GPU checks of every CMM kernel against the CPU DP, cell by cell (costs and splits), on
//! random chains whose lengths are not multiples of a warp or a block.
//! Run on a machine with a GPU: `cargo test --release -- --ignored`.

use cmbook::cmm::dp;
use cmbook::cmm::gpu::{CmmKernels, CostWidth, Kernel};
use cmbook::cmm::layout::Layout;
use cmbook::harness::timing::Plan;
use cmbook::harness::L2;

use crate::common::gpu;

fn all_kernels() -> Vec<Kernel> {
    let mut ks = Vec::new();
    for layout in Layout::ALL {
        for cost in [CostWidth::U64, CostWidth::U32] {
            ks.push(Kernel::OneBlock { layout, cost, indexed: false });
        }
        ks.push(Kernel::CellPerThread { layout, block: 128 });
        ks.push(Kernel::CellPerThread { layout, block: 96 });
        ks.push(Kernel::BlockPerCell { layout, block: 256 });
        ks.push(Kernel::BlockPerCell { layout, block: 32 });
    }
    ks.push(Kernel::OneBlock {
        layout: Layout::DiagonalMajor,
        cost: CostWidth::U64,
        indexed: true,
    });
    ks
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_kernel_matches_the_cpu_on_random_chains() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    let mut checked = 0;
    for (n, max_dim) in [
        (1usize, 50u32),
        (2, 50),
        (3, 1),
        (4, 7),
        (33, 100),
        (100, 1000),
        (257, 3),
        (1000, 1000),
    ] {
        // 4-byte kernels need (n - 1) * max^3 < 2^32: their own chain, with small dimensions.
        let small_max =
            ((u32::MAX as f64 / (n.max(2) - 1) as f64).cbrt() as u32).clamp(1, max_dim);
        let wide = dp::random_dims(n, max_dim, 17 + n as u64);
        let narrow = dp::random_dims(n, small_max, 18 + n as u64);
        let (wide_cpu, narrow_cpu) =
            (dp::solve_serial(&wide).unwrap(), dp::solve_serial(&narrow).unwrap());
        for k in all_kernels() {
            let (dims, cpu) = if k.cost_width() == CostWidth::U32 {
                (&narrow, &narrow_cpu)
            } else {
                (&wide, &wide_cpu)
            };
            if n < 2 && !matches!(k, Kernel::OneBlock { .. }) {
                continue; // the per-diagonal kernels have no diagonal to launch for one matrix
            }
            let mut p = kernels.prepare(k, dims).unwrap();
            let table = kernels
                .solve_verified(&mut p, cpu)
                .unwrap_or_else(|e| panic!("{} at n={n}: {e}", k.label()));
            assert_eq!(table.optimal_cost(), cpu.optimal_cost());
            checked += 1;
        }
    }
    assert!(checked > 50);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_block_kernels_past_1024_threads_loop_over_rows() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    let dims = dp::random_dims(1300, 1000, 5);
    let cpu = dp::solve_parallel(&dims).unwrap();
    for layout in Layout::ALL {
        let mut p = kernels.prepare(Kernel::one_block(layout), &dims).unwrap();
        kernels.solve_verified(&mut p, &cpu).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_worked_example_is_1232_on_the_gpu() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    let dims = [20, 2, 30, 12, 8];
    let cpu = dp::solve_serial(&dims).unwrap();
    for layout in Layout::ALL {
        let mut p = kernels.prepare(Kernel::one_block(layout), &dims).unwrap();
        let t = kernels.solve_verified(&mut p, &cpu).unwrap();
        assert_eq!(t.optimal_cost(), 1232);
        assert_eq!(cmbook::cmm::paren::parenthesization(&t), "(A1((A2A3)A4))");
        // Verified, then timed once per plan.
        let plans = [Plan::new(0, 2, L2::Warm), Plan::new(1, 3, L2::Cold)];
        let v = kernels.verify_then_time(&mut p, &cpu, &plans).unwrap();
        assert_eq!(v.check, t);
        assert_eq!(v.times.iter().map(|s| s.reps).collect::<Vec<_>>(), [2, 3]);
    }
}

#[test]
fn a_chain_the_kernel_cannot_represent_is_refused_before_launch() {
    let dims = [100_000u32, 100_000, 100_000, 100_000];
    let k = Kernel::OneBlock {
        layout: Layout::RowMajor,
        cost: CostWidth::U32,
        indexed: false,
    };
    assert!(k.check(&dims).is_err(), "4-byte costs cannot hold 1e15");
    assert!(Kernel::one_block(Layout::RowMajor).check(&dims).is_ok());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chains_on_their_own_streams_stay_correct() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    let chains: Vec<Vec<u32>> =
        (0..4).map(|c| dp::random_dims(150 + c, 500, c as u64)).collect();
    let cpus: Vec<_> = chains.iter().map(|d| dp::solve_serial(d).unwrap()).collect();
    let streams: Vec<_> = (0..4).map(|_| gpu.ctx.new_stream().unwrap()).collect();
    let mut problems: Vec<_> = chains
        .iter()
        .map(|d| kernels.prepare(Kernel::one_block(Layout::DiagonalMajor), d).unwrap())
        .collect();
    kernels
        .time_many(&mut problems, Some(&streams), Plan::new(1, 2, L2::Warm))
        .unwrap();
    for (p, c) in problems.iter().zip(&cpus) {
        assert!(c.difference_from(&kernels.read_back(p).unwrap()).is_none());
    }
}

// ---- Beyond the paper: the tiled kernels and the graph-launched warp-per-cell kernel ----

#[test]
#[ignore = "needs a CUDA GPU"]
fn tiled_kernels_match_the_cpu_on_odd_n_and_random_chains() {
    use cmbook::cmm::tiled::TiledKernels;
    let gpu = gpu();
    // The first version (64-bit keys): what a GPU with too little shared memory skips.
    if crate::gpu_cmm_tiled::tiled_plan(&gpu, &[cmbook::cmm::beyond::TILED_U64])
        .is_none()
    {
        return;
    }
    let tiled = TiledKernels::load(&gpu).unwrap();
    let mut checked = 0;
    // n + 1 points: 2, 3, 63, 64, 65, 66, 128, 129, 130, ... — one tile, exact tiles, one point
    // over, and chains with 2..20 tiles per side; small max dims make ties (the split rule).
    let cases = [
        (1usize, 9u32),
        (2, 9),
        (62, 1000),
        (63, 1000),
        (64, 1000),
        (65, 2),
        (127, 1000),
        (128, 1),
        (129, 1000),
        (200, 3),
        (511, 1000),
        (777, 65),
        (1279, 1000),
    ];
    for (case, &(n, max_dim)) in cases.iter().enumerate() {
        let dims = dp::random_dims(n, max_dim, 4242 + case as u64);
        let cpu = dp::solve_serial(&dims).unwrap();
        let mut p = tiled.prepare(&dims).unwrap();
        let table = tiled
            .solve_verified(&mut p, &cpu)
            .unwrap_or_else(|e| panic!("tiled at n={n}, max dim {max_dim}: {e}"));
        assert_eq!(table.optimal_cost(), cpu.optimal_cost());
        // A second solve in the same buffers (the solve resets its own keys) agrees as well.
        let again = tiled.solve_verified(&mut p, &cpu).unwrap();
        assert_eq!(again, table);
        checked += 1;
    }
    // Every cost equal along k (all dimensions 1): the smallest k must win every tie.
    let ones = vec![1u32; 300];
    let cpu = dp::solve_serial(&ones).unwrap();
    tiled.solve_verified(&mut tiled.prepare(&ones).unwrap(), &cpu).unwrap();
    // Dimensions at the kernels' limit (p < 2^16, bound < 2^48).
    for big in [dp::random_dims(15, 25_000, 99), vec![65_535, 65_535, 65_535]] {
        assert!(cmbook::cmm::tiled::check(&big).is_ok());
        tiled
            .solve_verified(
                &mut tiled.prepare(&big).unwrap(),
                &dp::solve_serial(&big).unwrap(),
            )
            .unwrap();
    }
    assert_eq!(checked, cases.len());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_wrong_tiled_table_is_caught() {
    use cmbook::cmm::tiled::TiledKernels;
    let gpu = gpu();
    if crate::gpu_cmm_tiled::tiled_plan(&gpu, &[cmbook::cmm::beyond::TILED_U64])
        .is_none()
    {
        return;
    }
    let tiled = TiledKernels::load(&gpu).unwrap();
    let dims = dp::random_dims(150, 1000, 5);
    let other = dp::random_dims(150, 1000, 6);
    let err = tiled
        .solve_verified(
            &mut tiled.prepare(&dims).unwrap(),
            &dp::solve_serial(&other).unwrap(),
        )
        .unwrap_err();
    let text = format!("{err}");
    assert!(text.contains("cmm_tiled") && text.contains("n=150"), "{text}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_per_cell_as_a_graph_matches_the_cpu() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    for n in [2usize, 3, 97, 600] {
        let dims = dp::random_dims(n, 1000, 31 + n as u64);
        let cpu = dp::solve_serial(&dims).unwrap();
        let mut p = kernels
            .prepare(
                Kernel::BlockPerCell { layout: Layout::RowMajor, block: 32 },
                &dims,
            )
            .unwrap();
        let graph = kernels.capture(&mut p).unwrap();
        for _ in 0..2 {
            kernels
                .solve_verified_graph(&mut p, &graph, &cpu)
                .unwrap_or_else(|e| panic!("graph at n={n}: {e}"));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_cooperative_launch_with_grid_barriers_matches_the_cpu_at_odd_n() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    // 1100 with B = 256 and 4500 with B = 32: diagonals longer than the co-resident grid, so
    // blocks take several cells of one diagonal in turn.
    for (n, max_dim) in
        [(1usize, 9u32), (2, 9), (3, 1), (97, 1000), (255, 1000), (1100, 1000)]
            .into_iter()
            .chain([(2047, 1000), (4500, 200)])
    {
        let dims = dp::random_dims(n, max_dim, 41 + n as u64);
        let cpu = dp::solve_contiguous(&dims).unwrap();
        for layout in Layout::ALL {
            for block in [32u32, 96, 256] {
                if n > 1100 && (block != 32 || layout == Layout::DiagonalMajor) {
                    continue; // the large n once, where the grid is smallest against n
                }
                let grid = kernels.cooperative_grid(block, n).unwrap();
                assert!(
                    grid >= 1 && (grid as usize) < n.max(2),
                    "grid {grid} at n={n}"
                );
                let k = Kernel::Persistent { layout, block };
                let mut p = kernels.prepare(k, &dims).unwrap();
                // Twice on the same buffers: the barrier's state is reusable across launches.
                for _ in 0..2 {
                    kernels
                        .solve_verified(&mut p, &cpu)
                        .unwrap_or_else(|e| panic!("{} at n={n}: {e}", k.label()));
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_empty_launches_and_barriers_run_and_refuse_to_be_verified() {
    let gpu = gpu();
    let kernels = CmmKernels::load(&gpu).unwrap();
    let dims = dp::random_dims(301, 1000, 7);
    let cpu = dp::solve_serial(&dims).unwrap();
    for k in [Kernel::LaunchOnly { block: 32 }, Kernel::BarriersOnly { block: 256 }] {
        let mut p = kernels.prepare(k, &dims).unwrap();
        let t = kernels.time(&mut p, Plan::new(1, 3, L2::Warm)).unwrap();
        assert!(t.median_ms > 0.0, "{}", k.label());
        assert!(kernels.solve_verified(&mut p, &cpu).is_err(), "{}", k.label());
    }
}
