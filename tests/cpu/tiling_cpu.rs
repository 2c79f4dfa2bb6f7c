//! CPU checks of the tiling chapter: traversal orders, loop-permutation legality against
//! brute-force execution, the three forms of `D[i] += B[j][i]`, the matrix-multiply model,
//! the CPU reference, the exercises, and the report writers. No GPU needed.

use cmbook::chapters;
use cmbook::harness::blas::sample_rows;
use cmbook::harness::record;
use cmbook::harness::run::{self, CommonArgs, Needs};
use cmbook::harness::{inputs, Stats};
use cmbook::tiling::exercises::{legal_orders, smallest_square_tile};
use cmbook::tiling::generic::{ptx_evidence, window_reference, BLOCK};
use cmbook::tiling::legality::{
    all_orders, carried_by_strip_loop, check_order, check_tiling, fully_permutable,
    lecture_nest_1, lecture_nest_2, legal_strip_sizes, lex_sign, run_nest,
    run_tiled_nest, strip_mined_distances, BadNest, Verdict,
};
use cmbook::tiling::loop_permutation::{self, Settings};
use cmbook::tiling::model::{self, Step};
use cmbook::tiling::reference::reference_rows;
use cmbook::tiling::tiled_matmul::{self, measure::StepResult};
use cmbook::tiling::{strip, traversal};
use std::cmp::Ordering;

#[test]
fn both_traversal_orders_give_the_same_array() {
    for n in [1, 3, 17, 64] {
        let init = inputs::random_f32(n * n, 5);
        let (mut a, mut b) = (init.clone(), init);
        traversal::update_row_order(&mut a, n);
        traversal::update_column_order(&mut b, n);
        assert_eq!(a, b);
    }
    let p = traversal::measure(32, 2, 4096).unwrap();
    assert!(p.row.median_ms > 0.0 && p.column.median_ms > 0.0 && p.bytes() == 4096);
}

#[test]
fn the_lectures_two_nests() {
    // A[i][j+1] = A[i][j] + B[j]: distance (0, 1), the loops may be interchanged.
    let d1 = vec![vec![0, 1]];
    assert_eq!(check_order(&d1, &[1, 0]).unwrap(), Verdict::Legal);
    assert!(fully_permutable(&d1, 2, 0, 1).unwrap());
    assert_eq!(lecture_nest_1(true), lecture_nest_1(false));
    // A[i+1][j-1] = A[i][j] + B[j]: distance (1, -1), interchange reverses it.
    let d2 = vec![vec![1, -1]];
    assert_eq!(
        check_order(&d2, &[1, 0]).unwrap(),
        Verdict::Illegal { dependence: vec![1, -1], permuted: vec![-1, 1] }
    );
    assert!(!fully_permutable(&d2, 2, 0, 1).unwrap());
    // The inner loop alone is a band of one: always permutable (the outer loop carries d).
    assert!(fully_permutable(&d2, 2, 1, 1).unwrap());
    assert_ne!(lecture_nest_2(true), lecture_nest_2(false));
    let verdict = check_order(&d2, &[1, 0]).unwrap().to_string();
    assert!(verdict.contains("[1, -1]") && verdict.contains("[-1, 1]"), "{verdict}");
}

#[test]
fn bad_input_is_rejected() {
    assert_eq!(
        check_order(&[vec![0, 1]], &[0, 0]),
        Err(BadNest::NotAPermutation(vec![0, 0]))
    );
    assert_eq!(
        check_order(&[vec![0, 1]], &[0, 2]),
        Err(BadNest::NotAPermutation(vec![0, 2]))
    );
    assert_eq!(
        check_order(&[vec![0, 1, 1]], &[0, 1]),
        Err(BadNest::WrongLength { distance: vec![0, 1, 1], depth: 2 })
    );
    assert_eq!(
        check_order(&[vec![0, -1]], &[0, 1]),
        Err(BadNest::NotPositive(vec![0, -1]))
    );
    assert_eq!(
        check_order(&[vec![0, 0]], &[0, 1]),
        Err(BadNest::NotPositive(vec![0, 0]))
    );
    assert_eq!(lex_sign(&[0, 0, -3, 5]), Ordering::Less);
}

/// All lexicographically positive vectors of `depth` components in `-r..=r`.
fn positive_vectors(depth: usize, r: i64) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for _ in 0..depth {
        out = out
            .into_iter()
            .flat_map(|v| (-r..=r).map(move |x| [v.clone(), vec![x]].concat()))
            .collect();
    }
    out.into_iter().filter(|v| lex_sign(v) == Ordering::Greater).collect()
}

#[test]
fn legality_agrees_with_brute_force_on_two_deep_nests() {
    let singles = positive_vectors(2, 2);
    let mut cases: Vec<Vec<Vec<i64>>> =
        singles.iter().map(|d| vec![d.clone()]).collect();
    for (i, a) in singles.iter().enumerate() {
        for b in &singles[i + 1..] {
            cases.push(vec![a.clone(), b.clone()]);
        }
    }
    let (mut legal, mut illegal) = (0, 0);
    for deps in &cases {
        let original = run_nest(6, deps, &[0, 1]);
        let verdict = check_order(deps, &[1, 0]).unwrap();
        let same = run_nest(6, deps, &[1, 0]) == original;
        assert_eq!(verdict == Verdict::Legal, same, "{deps:?}: {verdict}");
        assert_eq!(fully_permutable(deps, 2, 0, 1).unwrap(), same, "{deps:?}");
        if same {
            legal += 1
        } else {
            illegal += 1
        }
    }
    assert!(legal > 10 && illegal > 10, "{legal} legal, {illegal} illegal");
}

#[test]
fn legality_agrees_with_brute_force_on_three_deep_nests() {
    let singles = positive_vectors(3, 1);
    let pairs: Vec<Vec<Vec<i64>>> = singles
        .iter()
        .step_by(3)
        .flat_map(|a| {
            singles.iter().step_by(4).map(move |b| vec![a.clone(), b.clone()])
        })
        .collect();
    for deps in singles.iter().map(|d| vec![d.clone()]).chain(pairs) {
        let original = run_nest(4, &deps, &[0, 1, 2]);
        for order in all_orders(3) {
            let verdict = check_order(&deps, &order).unwrap();
            assert_eq!(
                verdict == Verdict::Legal,
                run_nest(4, &deps, &order) == original,
                "{deps:?} in order {order:?}: {verdict}"
            );
        }
        // A fully permutable nest has all six orders legal.
        if fully_permutable(&deps, 3, 0, 2).unwrap() {
            assert_eq!(legal_orders(&deps, 3).unwrap().len(), 6, "{deps:?}");
        }
    }
}

#[test]
fn strip_mining_splits_a_distance_into_strips_and_remainder() {
    // d_k = 5, s = 2: producer and consumer are 2 or 3 strips apart.
    assert_eq!(
        strip_mined_distances(&[0, 5], 1, 2),
        vec![vec![0, 2, 1], vec![0, 3, -1]]
    );
    // s divides d_k: always exactly d_k / s strips apart.
    assert_eq!(strip_mined_distances(&[4, 1], 0, 2), vec![vec![2, 0, 1]]);
    // A negative component (carried outside): 0 or -1 strips.
    assert_eq!(
        strip_mined_distances(&[1, -1], 1, 4),
        vec![vec![1, -1, 3], vec![1, 0, -1]]
    );
    assert_eq!(
        check_tiling(&[vec![0, 1]], 0, 2, &[]),
        Err(BadNest::NotAPermutation(vec![]))
    );
    assert!(check_tiling(&[vec![0, 1]], 1, 2, &[0, 1, 0]).is_err());
}

#[test]
fn tiling_legality_agrees_with_brute_force() {
    let singles = positive_vectors(2, 2);
    let mut cases: Vec<Vec<Vec<i64>>> =
        singles.iter().map(|d| vec![d.clone()]).collect();
    for (i, a) in singles.iter().enumerate().step_by(2) {
        for b in singles[i + 1..].iter().step_by(3) {
            cases.push(vec![a.clone(), b.clone()]);
        }
    }
    let (mut legal, mut illegal, mut only_by_strips) = (0, 0, 0);
    for deps in &cases {
        let original = run_nest(7, deps, &[0, 1]);
        for k in 0..2 {
            for s in 1..=3usize {
                for order in all_orders(3) {
                    let verdict = check_tiling(deps, k, s as i64, &order).unwrap();
                    let same = run_tiled_nest(7, deps, k, s, &order) == original;
                    assert_eq!(
                        verdict == Verdict::Legal,
                        same,
                        "{deps:?}, loop {k} by {s}, order {order:?}: {verdict}"
                    );
                    // The loops inside the strip loop of loop 0, swapped: legal
                    // although swapping the original loops is not.
                    let swap = check_order(deps, &[1, 0]).unwrap() != Verdict::Legal;
                    if k == 0 && order == [0, 2, 1] && swap && same {
                        only_by_strips += 1;
                    }
                    if same {
                        legal += 1
                    } else {
                        illegal += 1
                    }
                }
            }
        }
    }
    assert!(legal > 100 && illegal > 100, "{legal} legal, {illegal} illegal");
    assert!(only_by_strips > 3, "{only_by_strips}");
}

#[test]
fn the_strip_loop_carries_distances_at_least_the_strip() {
    // The lecture's shortcut: every dependence with d_k >= s (and nothing outside
    // loop k) is carried by the strip loop, so any order of the loops inside it is legal.
    for deps in positive_vectors(3, 2).into_iter().map(|d| vec![d]) {
        for k in 0..3 {
            for s in 1..=3 {
                if !deps.iter().all(|d| carried_by_strip_loop(d, k, s)) {
                    continue;
                }
                for order in all_orders(4)
                    .into_iter()
                    .filter(|o| o[..=k] == (0..=k).collect::<Vec<_>>())
                {
                    assert_eq!(
                        check_tiling(&deps, k, s, &order).unwrap(),
                        Verdict::Legal,
                        "{deps:?}, loop {k} by {s}, order {order:?}"
                    );
                }
            }
        }
    }
    // The chapter's example: A[i][j] = A[i-2][j+1] + .., distance (2, -1). Swapping i
    // and j is illegal; strips of i of 1 or 2 rows, with j outside i inside a strip,
    // are legal; strips of 3 or more are not.
    let d = vec![vec![2, -1]];
    assert_ne!(check_order(&d, &[1, 0]).unwrap(), Verdict::Legal);
    assert_eq!(legal_strip_sizes(&d, 0, &[0, 2, 1], 6).unwrap(), vec![1, 2]);
    let original = run_nest(9, &d, &[0, 1]);
    for s in 1..=6 {
        let same = run_tiled_nest(9, &d, 0, s, &[0, 2, 1]) == original;
        assert_eq!(same, s <= 2, "strip {s}");
    }
}

#[test]
fn the_three_forms_of_the_tiling_example_agree() {
    let (m, n) = (5, 1001);
    let b = inputs::random_f32(m * n, 1);
    let d0 = inputs::random_f32(n, 2);
    let mut want = d0.clone();
    strip::original(&mut want, &b, m, n);
    for s in [1, 7, 64, 1000, 1001, 5000] {
        let (mut mined, mut tiled) = (d0.clone(), d0.clone());
        strip::strip_mined(&mut mined, &b, m, n, s);
        strip::tiled(&mut tiled, &b, m, n, s);
        assert_eq!(mined, want, "strip {s}");
        assert_eq!(tiled, want, "strip {s}");
    }
    let sweep =
        strip::measure(strip::Problem { m: 3, n: 4096, strips: vec![64, 4096] }, 2, 3)
            .unwrap();
    assert_eq!(sweep.points.len(), 2);
    assert_eq!(strip::predicted_bytes(16, 1 << 20), ((4 * 48) << 20, 4 * (18 << 20)));
}

#[test]
fn model_predictions() {
    assert_eq!(Step::Naive.global_bytes_per_flop(), Some(4.0));
    assert_eq!(Step::Tiled16.global_bytes_per_flop(), Some(0.25));
    assert_eq!(Step::Tiled32.global_bytes_per_flop(), Some(0.125));
    assert_eq!(Step::Regs8x8.global_bytes_per_flop(), Some(1.0 / 32.0));
    assert_eq!(Step::Regs8x8.shared_bytes_per_flop(), Some(0.5));
    assert_eq!(Step::Tiled16.shared_bytes_per_flop(), Some(4.0));
    // Contiguous 8-float blocks per thread: two lanes of each quarter-warp share banks.
    assert_eq!(Step::Regs8x8.b_tile_wavefronts(), Some(8));
    assert_eq!(Step::QuadDoubleBuffer.b_tile_wavefronts(), Some(4));
    assert_eq!(Step::Naive.b_tile_wavefronts(), None);
    assert_eq!(Step::Tiled32.grid(1000, 1003), (32, 32));
    assert_eq!(Step::Regs8x8.grid(127, 129), (2, 1));
    for s in Step::ALL {
        assert_eq!(s.kernel().is_none(), s == Step::Cublas);
    }
    assert_eq!(model::flops(2, 3, 4), 48.0);
    assert!(model::tolerance(4096).abs > model::tolerance(131).abs);
    // Step 2b is step 2 in another block order: the same launch, the same bytes.
    let (grouped, plain) = (Step::Tiled16Grouped, Step::Tiled16);
    assert_eq!(grouped.grid(1000, 1003), plain.grid(1000, 1003));
    assert_eq!(grouped.global_bytes_per_flop(), plain.global_bytes_per_flop());
    assert_eq!(grouped.shared_bytes_per_flop(), plain.shared_bytes_per_flop());
}

#[test]
fn the_grouped_order_gives_every_tile_to_one_block() {
    // Grids of the odd sizes' 16 x 16 tiles, and one whose last group is short.
    for (across, down) in [(1, 1), (9, 8), (63, 63), (5, 17)] {
        let mut seen = vec![false; (across * down) as usize];
        for id in 0..across * down {
            let (row, col) = model::grouped_tile(id, across, down, 8);
            assert!(row < down && col < across, "{id}: ({row}, {col})");
            let tile = (row * across + col) as usize;
            assert!(!seen[tile], "tile ({row}, {col}) given twice");
            seen[tile] = true;
        }
    }
    // Blocks started one after another go down a group's 8 rows, then across.
    let first: Vec<_> = (0..10).map(|id| model::grouped_tile(id, 63, 63, 8)).collect();
    assert_eq!(first[..3], [(0, 0), (1, 0), (2, 0)]);
    assert_eq!(first[7..], [(7, 0), (0, 1), (1, 1)]);
    // The last group of 63 rows has 7: its blocks go down 7 rows before moving across.
    let last_group = 56 * 63;
    assert_eq!(model::grouped_tile(last_group + 7, 63, 63, 8), (56, 1));
}

#[test]
fn cpu_reference_matches_the_lectures_host_loop() {
    let (m, n, k) = (9, 7, 13);
    let a = inputs::random_f32(m * k, 1);
    let b = inputs::random_f32(k * n, 2);
    let rows: Vec<usize> = (0..m).collect();
    let got = reference_rows(&a, &b, (n, k), &rows);
    for i in 0..m {
        for j in 0..n {
            let want: f64 =
                (0..k).map(|kk| a[i * k + kk] as f64 * b[kk * n + j] as f64).sum();
            assert!((got[i * n + j] - want).abs() < 1e-12);
        }
    }
    let sample = sample_rows(4096, 3);
    assert!(sample.contains(&0) && sample.contains(&4095) && sample.contains(&128));
    assert!(sample.windows(2).all(|w| w[0] < w[1]) && *sample.last().unwrap() < 4096);
    assert_eq!(sample_rows(1, 3), vec![0]);
}

#[test]
fn exercise_solutions() {
    // Exercise 1: distances (1, 0, -1) and (0, 1, 1).
    let deps = vec![vec![1, 0, -1], vec![0, 1, 1]];
    assert_eq!(
        legal_orders(&deps, 3).unwrap(),
        vec![vec![0, 1, 2], vec![0, 2, 1], vec![1, 0, 2]]
    );
    assert!(fully_permutable(&deps, 3, 1, 2).unwrap());
    assert!(!fully_permutable(&deps, 3, 0, 2).unwrap());
    let original = run_nest(4, &deps, &[0, 1, 2]);
    for order in all_orders(3) {
        let legal = legal_orders(&deps, 3).unwrap().contains(&order);
        assert_eq!(legal, run_nest(4, &deps, &order) == original, "{order:?}");
    }
    // Exercise 2: 3000 GB/s and 50 000 GFLOP/s allow 0.06 bytes per FLOP: T >= 66.7.
    assert_eq!(smallest_square_tile(3000.0, 50_000.0), 67);
    assert_eq!(smallest_square_tile(4.0, 1.0), 1);
}

fn stats(ms: f64) -> Stats {
    Stats { median_ms: ms, min_ms: ms * 0.9, max_ms: ms * 1.1, mean_ms: ms, reps: 3 }
}

/// A run of `chapter` on the CPU alone, writing into `dir`: what the reports need.
fn cpu_run(chapter: &'static chapters::Chapter, dir: &std::path::Path) -> run::Run {
    let common = CommonArgs {
        out: Some(dir.to_path_buf()),
        quick: true,
        reps: Some(1),
        seed: 1,
        counters: false,
    };
    run::start(chapter, Needs::Cpu, &common).unwrap()
}

#[test]
fn reports_are_written_with_provenance() {
    let dir =
        std::env::temp_dir().join(format!("tiling-report-{}", std::process::id()));
    let cpu = cpu_run(&cmbook::tiling::loop_permutation::CHAPTER, &dir);
    let settings = Settings {
        sides: vec![16],
        min_elements: 256,
        strip: strip::Problem { m: 2, n: 256, strips: vec![16, 256] },
    };
    let measured = loop_permutation::measure(&cpu, &settings).unwrap();
    assert_eq!((measured.traversal.len(), measured.strip.points.len()), (1, 2));
    loop_permutation::report(&cpu, &measured).unwrap();
    let steps = Step::ALL
        .iter()
        .enumerate()
        .map(|(i, &step)| StepResult {
            step,
            occupancy: None,
            stats: stats(10.0 - i as f64),
        })
        .collect();
    let results = tiled_matmul::measure::Results {
        size: (64, 64, 64),
        steps,
        verified: vec![],
        out_of_core: None,
        generic: None,
    };
    tiled_matmul::report(
        &cpu_run(&cmbook::tiling::tiled_matmul::CHAPTER, &dir),
        &results,
    )
    .unwrap();
    let lines = tiled_matmul::report::summary_lines(&results).unwrap();
    assert!(lines.last().unwrap().contains("target"), "{lines:?}");
    for stem in ["tiling-traversal", "tiling-strip", "tiling-matmul"] {
        let rec =
            record::read_csv(&dir.join("data").join(format!("{stem}.csv"))).unwrap();
        assert!(rec.meta.missing_provenance().is_empty(), "{stem}");
        assert!(rec.meta.get("l2").is_some(), "{stem}");
        assert!(dir.join(format!("{stem}.svg")).exists());
    }
    for stem in [
        "tiling-predictions",
        "tiling-strip-ranges",
        "tiling-kernels",
        "tiling-verification",
        "tiling-lecture",
    ] {
        assert!(dir.join(format!("{stem}.md")).exists(), "{stem}");
    }
    // Each step 1 ms faster than the one before it: the last hand-written step is the
    // best, at cuBLAS's milliseconds over its own.
    let (best, frac) = results.best().unwrap();
    assert_eq!(best, Step::QuadDoubleBuffer);
    let last = Step::ALL.len() as f64 - 1.0;
    assert!((frac - (10.0 - last) / (10.0 - (last - 1.0))).abs() < 1e-9);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_window_reference_stays_inside_each_chunk() {
    let input: Vec<f32> = (0..BLOCK + 3).map(|i| i as f32).collect();
    let out = window_reference(&input);
    assert_eq!(out.len(), input.len());
    assert_eq!(out[0], 1.0); // 0 + 1, no left neighbour
    assert_eq!(out[5], 4.0 + 5.0 + 6.0);
    assert_eq!(out[BLOCK - 1], (BLOCK - 2 + BLOCK - 1) as f32); // no right neighbour
    assert_eq!(out[BLOCK], (BLOCK + BLOCK + 1) as f32); // a new chunk: no left neighbour
    assert_eq!(out[BLOCK + 2], (BLOCK + 1 + BLOCK + 2) as f32);
}

#[test]
#[cfg_attr(
    cmbook_no_nvrtc,
    ignore = "needs libnvrtc.so.13 on the loader path (see README)"
)]
fn the_ptx_shows_generic_addressing() {
    let ptx = cmbook::harness::kernels::compile("tiling.cu", "compute_90").unwrap();
    let evidence = ptx_evidence(&ptx.ptx).unwrap();
    let found: Vec<&str> = evidence.iter().map(|e| e.instruction).collect();
    assert_eq!(
        found,
        [
            "cvta.to.global.u64",
            "cvta.shared.u64",
            "isspacep.global",
            "isspacep.shared",
            "ld.f32"
        ]
    );
    // Both calls go to the one function: its loads carry no state space.
    assert!(evidence.iter().all(|e| e.count >= 1));
    assert!(evidence[4].function.contains("window_sum"), "{:?}", evidence[4]);
    assert!(evidence[4].first_line.starts_with("ld.f32 "), "{:?}", evidence[4]);
    assert!(ptx_evidence("no functions here").is_err());
}
