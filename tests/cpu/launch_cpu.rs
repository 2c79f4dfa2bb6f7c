//! The argument checks of the harness's launch wrappers (cooperative and cluster launches,
//! tensor maps, L2 access-policy windows), and the Hopper chapter's CPU references: no GPU
//! needed. Every refusal must be an error that names the rule, never a driver call.

use cmbook::harness::launch::{
    check_cluster, check_cooperative, L2Access, L2Limits, L2Window, LaunchError,
    Swizzle, TensorMapSpec,
};
use cmbook::hopper_memory::reference;

/// A valid map: a 1000 x 1000 float matrix with rows pitched to 1024 floats, 32 x 32 boxes.
fn spec() -> TensorMapSpec {
    TensorMapSpec {
        elem_bytes: 4,
        base: 0x7f00_0000_0000,
        buffer_bytes: 1000 * 1024 * 4,
        dims: vec![1000, 1000],
        strides: vec![1024 * 4],
        box_dims: vec![32, 32],
        swizzle: Swizzle::None,
    }
}

fn tensor_map_refusal(s: TensorMapSpec, words: &str) {
    match s.check() {
        Err(LaunchError::BadTensorMap(why)) => {
            assert!(why.contains(words), "`{why}` should mention `{words}`")
        }
        other => panic!("expected a refusal mentioning `{words}`, got {other:?}"),
    }
}

#[test]
fn a_valid_tensor_map_passes() {
    assert_eq!(spec().check(), Ok(()));
    let swizzled = TensorMapSpec { swizzle: Swizzle::B128, ..spec() };
    assert_eq!(swizzled.check(), Ok(()));
}

#[test]
fn strides_must_be_multiples_of_16_bytes() {
    // A 1001-float row pitch is 4004 bytes: the unpitched layout of an odd side.
    tensor_map_refusal(
        TensorMapSpec { strides: vec![1001 * 4], ..spec() },
        "multiples of 16 bytes",
    );
    tensor_map_refusal(
        TensorMapSpec { strides: vec![1 << 40], ..spec() },
        "below 2^40",
    );
}

#[test]
fn rows_may_not_overlap_and_the_buffer_must_hold_the_tensor() {
    tensor_map_refusal(TensorMapSpec { strides: vec![992 * 4], ..spec() }, "overlap");
    // The padding after the last row is not part of the tensor.
    assert_eq!(
        TensorMapSpec { buffer_bytes: 999 * 4096 + 4000, ..spec() }.check(),
        Ok(())
    );
    tensor_map_refusal(
        // The last row ends 4000 bytes after the start of row 999.
        TensorMapSpec { buffer_bytes: 999 * 4096 + 4000 - 4, ..spec() },
        "the buffer has",
    );
}

#[test]
fn rank_shapes_and_element_sizes_are_checked() {
    tensor_map_refusal(
        TensorMapSpec {
            dims: vec![2; 6],
            strides: vec![16; 5],
            box_dims: vec![1; 6],
            ..spec()
        },
        "1 to 5 dimensions",
    );
    tensor_map_refusal(TensorMapSpec { dims: vec![], ..spec() }, "1 to 5 dimensions");
    tensor_map_refusal(TensorMapSpec { strides: vec![], ..spec() }, "needs 1 strides");
    tensor_map_refusal(TensorMapSpec { box_dims: vec![32], ..spec() }, "2 box sizes");
    tensor_map_refusal(
        TensorMapSpec { dims: vec![1000, 0], ..spec() },
        "a dimension of 0",
    );
    tensor_map_refusal(
        TensorMapSpec { elem_bytes: 3, ..spec() },
        "elements of 3 bytes",
    );
}

#[test]
fn boxes_are_at_most_256_and_their_rows_whole_16_byte_chunks() {
    tensor_map_refusal(TensorMapSpec { box_dims: vec![32, 257], ..spec() }, "1 to 256");
    tensor_map_refusal(TensorMapSpec { box_dims: vec![0, 32], ..spec() }, "1 to 256");
    tensor_map_refusal(
        TensorMapSpec { box_dims: vec![3, 32], ..spec() },
        "multiple of 16",
    );
    tensor_map_refusal(
        TensorMapSpec { box_dims: vec![64, 32], swizzle: Swizzle::B128, ..spec() },
        "at most 128 bytes",
    );
}

#[test]
fn the_base_address_must_be_16_byte_aligned() {
    tensor_map_refusal(
        TensorMapSpec { base: 0x7f00_0000_0004, ..spec() },
        "16-byte aligned",
    );
}

#[test]
fn cluster_shapes_are_checked_before_the_driver() {
    assert_eq!(check_cluster((128, 1, 1), (8, 1, 1), false), Ok(()));
    assert_eq!(check_cluster((128, 1, 1), (16, 1, 1), true), Ok(()));
    assert_eq!(check_cluster((8, 4, 1), (2, 2, 1), false), Ok(()));
    for (grid, cluster, non_portable, words) in [
        ((128, 1, 1), (16, 1, 1), false, "at most 8 without the non-portable"),
        ((128, 1, 1), (32, 1, 1), true, "at most 16"),
        ((132, 1, 1), (8, 1, 1), false, "not a multiple of the cluster's (8)"),
        ((8, 6, 1), (2, 4, 1), false, "y dimension (6)"),
        ((128, 1, 1), (0, 1, 1), true, "no zero dimension"),
        ((0, 1, 1), (1, 1, 1), true, "no zero dimension"),
    ] {
        match check_cluster(grid, cluster, non_portable) {
            Err(LaunchError::BadCluster(why)) => {
                assert!(why.contains(words), "{grid:?} {cluster:?}: `{why}`")
            }
            other => panic!("{grid:?} {cluster:?}: expected a refusal, got {other:?}"),
        }
    }
}

#[test]
fn a_cooperative_grid_must_fit_at_once() {
    assert_eq!(check_cooperative(132, 132), Ok(()));
    let err = check_cooperative(133, 132).unwrap_err();
    assert_eq!(err, LaunchError::CooperativeTooLarge { blocks: 133, capacity: 132 });
    assert!(err.to_string().contains("at most 132 blocks"), "{err}");
    assert!(check_cooperative(0, 132).is_err());
}

#[test]
fn windows_are_checked_against_the_device_limits() {
    let limits = L2Limits { max_window: 128 << 20, max_persisting: 30 << 20 };
    let ok = L2Window {
        bytes: 16 << 20,
        hit_ratio: 1.0,
        hit: L2Access::Persisting,
        persisting: 30 << 20,
    };
    assert_eq!(ok.check(limits), Ok(()));
    for (w, words) in [
        (L2Window { bytes: 0, ..ok }, "1 to"),
        (L2Window { bytes: (128 << 20) + 1, ..ok }, "1 to 134217728 bytes"),
        (L2Window { hit_ratio: 1.5, ..ok }, "hit ratio"),
        (L2Window { hit_ratio: f32::NAN, ..ok }, "hit ratio"),
        (L2Window { persisting: 31 << 20, ..ok }, "at most 31457280"),
        (L2Window { persisting: 0, ..ok }, "carve-out larger than 0"),
    ] {
        match w.check(limits) {
            Err(LaunchError::BadWindow(why)) => assert!(why.contains(words), "`{why}`"),
            other => {
                panic!("{w:?}: expected a refusal mentioning `{words}`, got {other:?}")
            }
        }
    }
    let none = L2Limits { max_window: 0, max_persisting: 0 };
    // A GPU without persisting L2 (a T4) is told apart from a bad window: it skips.
    assert_eq!(
        ok.check(none),
        Err(LaunchError::Unsupported("access-policy window (no persisting L2)"))
    );
}

#[test]
fn lookup_reference_scales_each_float4_by_its_entry() {
    let table = [2.0f32, 3.0, 5.0];
    let stream: Vec<f32> = (0..12).map(|i| i as f32).collect();
    let got = reference::lookup(&table, &stream);
    for i in 0..3u32 {
        let t = table[reference::lookup_index(i, 3) as usize];
        for j in 0..4 {
            let k = (4 * i + j) as usize;
            assert_eq!(got[k], stream[k] * t);
        }
    }
    // The hash spreads consecutive elements over the table.
    let hits: std::collections::BTreeSet<u32> =
        (0..1000).map(|i| reference::lookup_index(i, 97)).collect();
    assert!(hits.len() > 90, "{}", hits.len());
}

#[test]
fn exchange_reference_sums_each_cluster_per_round() {
    // Four blocks of two words, clusters of two: partials 3, 7, 11, 15.
    let words = [1u32, 2, 3, 4, 5, 6, 7, 8];
    let got = reference::exchange(&words, 2, 2, 3);
    // Cluster sums 10 and 26; rounds add 2 r: 3 * 10 + 2 * (0 + 1 + 2) = 36.
    assert_eq!(got, vec![36, 36, 3 * 26 + 6, 3 * 26 + 6]);
    // Wrapping, as the kernel's unsigned arithmetic.
    let big = reference::exchange(&[u32::MAX, 2], 1, 2, 1);
    assert_eq!(big, vec![1, 1]);
}

#[test]
fn pitched_layouts_and_transpose() {
    let pitched = [1, 2, 3, 0, 4, 5, 6, 0];
    assert_eq!(reference::unpitch(&pitched, 2, 3, 4), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(reference::transpose(&[1, 2, 3, 4, 5, 6], 2, 3), vec![1, 4, 2, 5, 3, 6]);
    let n = 67; // not a multiple of the 64-element blocks
    let m: Vec<u32> = (0..n * n).collect();
    let t = reference::transpose(&m, n as usize, n as usize);
    assert_eq!(reference::transpose(&t, n as usize, n as usize), m);
    assert_eq!(t[1], n);
    assert_eq!(reference::round_up(8191, 32), 8192);
    assert_eq!(reference::round_up(4100, 32), 4128);
}

#[test]
fn exercise_solutions() {
    use cmbook::hopper_memory::exercises::{
        barriers_per_boundary, load_bytes_in_flight_per_sm, pitch_for, stages_needed,
    };
    // 8.1: a 3668 ns boundary is worth 77 barriers of 47.4 ns, none of 1000 ns.
    assert_eq!(barriers_per_boundary(47.4, 3668.0), 77);
    assert_eq!(barriers_per_boundary(1000.0, 999.0), 0);
    // 8.2: 400 ns at 1320 GB/s over 132 SMs is 4000 bytes of loads per SM: 2 stages of
    // 16-byte copies with 128 threads (2048 bytes a stage), 1 with 512.
    let need = load_bytes_in_flight_per_sm(400.0, 1320.0, 132);
    assert!((need - 4000.0).abs() < 1e-9, "{need}");
    assert_eq!(stages_needed(need, 128, 16), 2);
    assert_eq!(stages_needed(need, 512, 16), 1);
    assert_eq!(stages_needed(4096.0, 128, 16), 2, "exactly two stages' bytes");
    assert_eq!(stages_needed(0.0, 512, 16), 1);
    // 8.3: 16-byte rows (the TMA's rule) and 128-byte rows (whole lines).
    assert_eq!(pitch_for(8191, 4, 16), 8192);
    assert_eq!(pitch_for(4100, 4, 16), 4100);
    assert_eq!(pitch_for(4100, 4, 128), 4128);
    assert_eq!(pitch_for(253, 4, 128), 256);
    assert_eq!(pitch_for(3, 8, 16), 4);
}

#[test]
fn reread_reference_sums_both_passes_per_block_after_the_stream() {
    // 3 uint4s of table over a grid of 2 blocks of 1 thread: block 0 takes quads 0 and
    // 2, block 1 quad 1; the second pass reads quad 2 - i where the first reads quad i.
    let table: Vec<u32> = (1..=12).collect();
    let quads = [1 + 2 + 3 + 4, 5 + 6 + 7 + 8, 9 + 10 + 11 + 12];
    let stream = vec![7u32, 8, 9, 10];
    let got = reference::reread(&table, &stream, (2, 1), true);
    let block0 = quads[0] + quads[2] + 2 * (quads[2] + quads[0]);
    let block1 = quads[1] + 2 * quads[1];
    assert_eq!(got, vec![7, 8, 9, 10, block0, block1]);
    // Wrapping arithmetic, as on the GPU.
    let big = vec![u32::MAX; 4];
    let wrapped = reference::reread(&big, &[], (1, 1), true);
    assert_eq!(wrapped, vec![u32::MAX.wrapping_mul(12)]);
    // One pass: the block's sum of the table alone.
    let once = reference::reread(&table, &[], (2, 1), false);
    assert_eq!(once, vec![quads[0] + quads[2], quads[1]]);
}

/// Made-up results of the ladder and of the stage sweep: a table with every rung in both
/// forms and a figure of read rates, each passing the audit, and the exercises' readers
/// finding their numbers in what was written.
#[test]
fn the_ladder_and_the_stage_sweep_are_drawn_from_made_up_results_and_pass_the_audit() {
    use cmbook::harness::{plot, record, run, Stats};
    use cmbook::hopper_memory::exercises::{best_read_gbps, ladder_ns};
    use cmbook::hopper_memory::measure::{Results, Rung, StageRun, Timed};

    let stats = |ms: f64| Stats {
        median_ms: ms,
        min_ms: 0.9 * ms,
        max_ms: 1.2 * ms,
        mean_ms: ms,
        reps: 5,
    };
    let rung = |barrier: &str, timed, who: &str, ns: f64| Rung {
        barrier: barrier.into(),
        timed,
        who: who.into(),
        per: stats(ns * 1e-6),
        how: "made up".into(),
    };
    let block = "256 threads (one block)";
    let pair = "2 blocks of 256 threads";
    let launch = "the whole GPU (next launch on one stream)";
    let stream_bytes = 512usize << 20;
    let mut results = Results {
        ladder: vec![
            rung("__syncthreads", Timed::Alone, block, 15.0),
            rung("__syncthreads", Timed::SharedRound, block, 48.0),
            rung("cluster barrier", Timed::Alone, pair, 450.0),
            rung("cluster barrier, relaxed arrive", Timed::Alone, pair, 50.0),
            rung("cluster barrier", Timed::DsmemRound, pair, 575.0),
            rung("grid barrier", Timed::Alone, "132 blocks (1 per SM)", 1900.0),
            rung("grid barrier", Timed::GlobalRound, "132 blocks (1 per SM)", 2000.0),
            rung("kernel boundary", Timed::EmptyKernels, launch, 3600.0),
        ],
        stream_bytes,
        ..Default::default()
    };
    // 1 and 2 stages of 1 and 2 blocks per SM; 4 KiB in flight twice, at the same time.
    for (stages, blocks_per_sm, ms) in
        [(1, 1, 1.0), (2, 1, 0.6), (1, 2, 0.6), (2, 2, 0.4)]
    {
        results.stages.push(StageRun { stages, blocks_per_sm, time: stats(ms) });
    }
    let dir = tempfile::tempdir().unwrap();
    let mut run = run::offline(&cmbook::hopper_memory::CHAPTER, dir.path()).unwrap();
    // A GPU run's provenance carries the device's SMs, which exercise 8.2 divides by.
    run.meta = run.meta.clone().with("sms", "132");
    cmbook::hopper_memory::report(&run, &results).unwrap();

    let problems = plot::audit_figures(dir.path()).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    let ladder =
        record::read_csv(&dir.path().join("data/hopper_memory-ladder.csv")).unwrap();
    let what = ladder.column("what").unwrap();
    let forms: Vec<&str> = ladder.rows.iter().map(|r| r[what].as_str()).collect();
    assert_eq!(forms.iter().filter(|w| **w == "barrier alone").count(), 4, "{forms:?}");
    assert!(dir.path().join("hopper_memory-ladder.md").exists());
    let table =
        std::fs::read_to_string(dir.path().join("hopper_memory-ladder.md")).unwrap();
    assert!(table.contains("| what is timed |"), "{table}");
    let ns = |barrier, what, who| ladder_ns(dir.path(), barrier, what, who).unwrap();
    assert_eq!(ns("__syncthreads", "barrier alone", block), 15.0);
    let round = Timed::DsmemRound.label();
    assert_eq!(ns("cluster barrier", round, pair), 575.0);
    assert_eq!(ns("kernel boundary", Timed::EmptyKernels.label(), launch), 3600.0);
    assert!(ladder_ns(dir.path(), "__syncthreads", "barrier alone", pair).is_err());

    // The figure counts bytes read: 512 MiB in 0.4 ms at best.
    let stages =
        record::read_csv(&dir.path().join("data/hopper_memory-stages.csv")).unwrap();
    assert_eq!(stages.meta.get("y_label"), Some("GB/s read"));
    assert!(stages
        .meta
        .get("x_label")
        .unwrap()
        .starts_with("load bytes in flight per SM"));
    let (gbps, sms) = best_read_gbps(dir.path()).unwrap();
    let want = stream_bytes as f64 / 0.4e-3 / 1e9;
    assert!((gbps - want).abs() < 1e-6 * want, "{gbps} against {want}");
    assert_eq!(sms, 132);
    assert!(dir.path().join("hopper_memory-stages.svg").exists());
}
