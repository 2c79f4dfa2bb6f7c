//! CPU checks of the ATAX chapter: the reference, the tolerance, the byte counts and
//! predictions, the fused kernel's shapes, and the exercises' answers. No GPU needed.

use cmbook::atax::datasets::{
    bytes_moved, floor_ms, Dataset, LARGE_SQUARE, ODD_SIZES, POLYBENCH,
};
use cmbook::atax::device::{
    cluster_grid, cluster_shared_bytes, fused_form, fused_shape, one_launch_blocks,
    AtaxFunction, AtaxKernel, ClusterGrid, FusedForm, CLUSTER_SIZES,
};
use cmbook::atax::element::Element;
use cmbook::atax::exercises;
use cmbook::atax::measure::{
    HostProblem, KernelVariant, PITCHED_SHAPES, QUICK_PITCHED_SHAPES,
    ROW_ALIGN_ELEMENTS,
};
use cmbook::atax::reference::{self, SLIDES_CLAIMS};
use cmbook::atax::report::SLIDES_TO_OURS;
use cmbook::harness::inputs;
use cmbook::harness::kernels::{self, KernelName};

/// y = Aᵀ(A x) the plain way, in f64.
fn naive(a: &[f64], x: &[f64], m: usize, n: usize) -> Vec<f64> {
    let tmp: Vec<f64> =
        (0..m).map(|i| (0..n).map(|j| a[i * n + j] * x[j]).sum()).collect();
    (0..n).map(|j| (0..m).map(|i| a[i * n + j] * tmp[i]).sum()).collect()
}

#[test]
fn reference_matches_the_plain_loops_at_odd_sizes() {
    for d in ODD_SIZES.iter().chain(&POLYBENCH[..3]) {
        let a = inputs::random_f64(d.m * d.n, 1);
        let x = inputs::random_f64(d.n, 2);
        let r = reference::atax(&a, &x, d.m, d.n);
        let want = naive(&a, &x, d.m, d.n);
        for (j, (g, w)) in r.y.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-9 * (1.0 + r.y_magnitude[j]),
                "{} j={j}: {g} vs {w}",
                d.label()
            );
        }
        assert!(r.y_magnitude.iter().zip(&r.y).all(|(m, y)| *m >= y.abs()));
    }
}

#[test]
fn a_float_result_in_another_order_passes_and_a_wrong_one_fails() {
    let (m, n) = (1000, 1003);
    let a = inputs::random_f32(m * n, 3);
    let x = inputs::random_f32(n, 4);
    let r = reference::atax(&a, &x, m, n);
    let tol = r.tolerance(f32::EPS, m, n);
    // Sequential float accumulation, the worst order a kernel could use.
    let tmp: Vec<f32> =
        (0..m).map(|i| (0..n).fold(0f32, |s, j| s + a[i * n + j] * x[j])).collect();
    let y: Vec<f32> =
        (0..n).map(|j| (0..m).fold(0f32, |s, i| s + a[i * n + j] * tmp[i])).collect();
    cmbook::harness::verify::check_close("sequential f32", "1000×1003", &y, &r.y, tol)
        .unwrap();
    // One row missing from y: caught.
    let short: Vec<f32> = (0..n)
        .map(|j| (0..m - 1).fold(0f32, |s, i| s + a[i * n + j] * tmp[i]))
        .collect();
    assert!(cmbook::harness::verify::check_close(
        "missing row",
        "1000×1003",
        &short,
        &r.y,
        tol
    )
    .is_err());
    // NaN (the poison) never passes.
    let mut poisoned = y.clone();
    poisoned[17] = f32::from_bits(u32::MAX);
    assert_eq!(
        cmbook::harness::verify::check_close(
            "poison",
            "1000×1003",
            &poisoned,
            &r.y,
            tol
        )
        .unwrap_err()
        .index,
        17
    );
}

/// A pitched problem holds the plain problem's numbers row by row with zero padding, keeps
/// its reference, accepts y with an exactly zero padding and refuses any other.
#[test]
fn a_pitched_problem_is_the_same_problem_with_zero_padding() {
    let d = Dataset::new("37×45", 37, 45);
    let plain = HostProblem::<f32>::new(d, 11);
    let p = HostProblem::<f32>::pitched("37×45 pitched", d, 64, 11);
    assert_eq!((p.d.m, p.d.n, p.cols, p.a.len(), p.x.len()), (37, 64, 45, 37 * 64, 64));
    for (i, row) in p.a.chunks_exact(64).enumerate() {
        assert_eq!(&row[..45], &plain.a[i * 45..(i + 1) * 45]);
        assert!(row[45..].iter().all(|&v| v == 0.0));
    }
    assert_eq!(&p.x[..45], &plain.x[..]);
    assert!(p.x[45..].iter().all(|&v| v == 0.0));
    assert_eq!(p.reference.y, plain.reference.y);
    // The kernels' y on the padded matrix: the reference, then zeros.
    let y_of = |pad: f32| {
        let mut y: Vec<f32> = plain.reference.y.iter().map(|&v| v as f32).collect();
        y.resize(64, pad);
        y
    };
    p.check("pitched", &y_of(0.0)).unwrap();
    p.check("pitched", &y_of(-0.0)).unwrap();
    assert!(p.check("pitched", &y_of(1e-30)).is_err(), "padding must be exactly zero");
    assert!(p.check("pitched", &y_of(f32::NAN)).is_err(), "NaN never passes");
    assert!(p.check("pitched", &y_of(0.0)[..45]).is_err(), "y without its padding");
    let mut wrong = y_of(0.0);
    wrong[44] += 1.0;
    assert!(p.check("pitched", &wrong).is_err());
}

/// The shapes measured pitched are odd, so their pitch adds padding and starts every row on
/// a 128-byte line (in float).
#[test]
fn the_pitched_shapes_are_odd_and_their_pitch_is_whole_lines() {
    for (d, name) in PITCHED_SHAPES.iter().chain(&QUICK_PITCHED_SHAPES) {
        let pitch = d.n.next_multiple_of(ROW_ALIGN_ELEMENTS);
        assert!(d.n % 2 == 1 && pitch > d.n && (pitch * 4) % 128 == 0, "{}", d.label());
        assert!(name.starts_with(d.name) && name.ends_with("pitched"), "{name}");
    }
}

#[test]
#[should_panic(expected = "cannot hold rows")]
fn a_pitch_shorter_than_a_row_is_refused() {
    HostProblem::<f32>::pitched("short", Dataset::new("3×40", 3, 40), 32, 1);
}

#[test]
fn bytes_and_floor_times() {
    let d = Dataset::new("t", 10, 20);
    assert_eq!(bytes_moved(d, 4, 1), 200 * 4 + 40 * 4);
    assert_eq!(bytes_moved(d, 4, 2), 2 * 200 * 4 + (40 + 20) * 4);
    assert!((floor_ms(1_000_000_000, 1000.0) - 1.0).abs() < 1e-12);
    assert_eq!(LARGE_SQUARE.matrix_bytes(4), 1 << 30);
    assert_eq!(KernelVariant::Fused.passes_over_a(), 1);
    assert_eq!(KernelVariant::Cublas.passes_over_a(), 2);
    assert_eq!(KernelVariant::TransposeThenTwoKernels.passes_over_a(), 4);
    // LARGE and EXTRALARGE in double fit in a 50 MiB L2; 16384² float does not.
    for d in &POLYBENCH[3..] {
        assert!(d.matrix_bytes(8) < 50 << 20, "{}", d.label());
    }
}

#[test]
fn fused_shapes_cover_n_with_whole_warps() {
    for n in [1usize, 42, 1003, 2200, 8192, 16384] {
        let s = fused_shape(n, f32::FUSED_COLUMNS_PER_THREAD).unwrap();
        assert!(
            s.threads.is_multiple_of(32)
                && s.threads <= 1024
                && (s.threads * s.columns_per_thread) as usize >= n,
            "n={n}: {s:?}"
        );
    }
    assert!(fused_shape(16385, f32::FUSED_COLUMNS_PER_THREAD).is_none());
    assert!(fused_shape(8193, f64::FUSED_COLUMNS_PER_THREAD).is_none());
    assert_eq!(
        fused_shape(2200, f64::FUSED_COLUMNS_PER_THREAD).unwrap().columns_per_thread,
        4
    );
    // Beyond the registers the one-launch pass keeps y in shared memory, to 32768 floats.
    assert_eq!(fused_form::<f32>(16384).unwrap().0, FusedForm::Registers);
    let (form, shape) = fused_form::<f32>(16385).unwrap();
    assert_eq!(
        (form, shape.columns_per_thread, shape.threads),
        (FusedForm::Wide, 32, 544)
    );
    assert_eq!(fused_form::<f64>(8193).unwrap().0, FusedForm::Wide);
    assert!(fused_form::<f32>(32769).is_none() && fused_form::<f64>(16385).is_none());
    assert!(KernelVariant::FusedOnce.unsupported::<f32>(32768).is_none());
    assert!(KernelVariant::FusedOnce.unsupported::<f32>(32769).is_some());
    assert!(KernelVariant::FusedAtomic.unsupported::<f64>(16385).is_some());
    assert!(KernelVariant::Fused.unsupported::<f32>(16385).is_some());
    // The cluster pass has the register form only: no wide form beyond it.
    assert!(KernelVariant::FusedCluster.unsupported::<f32>(16384).is_none());
    assert!(KernelVariant::FusedCluster.unsupported::<f32>(16385).is_some());
    assert!(KernelVariant::FusedCluster.unsupported::<f64>(8192).is_none());
    assert!(KernelVariant::FusedCluster.unsupported::<f64>(8193).is_some());
    assert!(KernelVariant::XConst.unsupported::<f32>(16384).is_none());
    assert!(KernelVariant::XConst.unsupported::<f32>(16385).is_some());
    assert!(KernelVariant::XConst.unsupported::<f64>(8193).is_some());
}

#[test]
fn every_slides_claim_has_a_strategy_of_ours() {
    for c in SLIDES_CLAIMS {
        assert!(
            SLIDES_TO_OURS.iter().any(|(name, _)| *name == c.slides_name),
            "{}",
            c.slides_name
        );
    }
}

#[test]
fn exercise_answers() {
    // 1: reading A once halves the bytes, so the floor speedup tends to 2.
    let (two, one, speedup) = exercises::fused_floor(LARGE_SQUARE, 4, 3000.0);
    assert!(two > one && speedup > 1.99 && speedup <= 2.0, "{speedup}");
    // 2: 64 KB of constant memory.
    assert_eq!(exercises::widest_constant_x(4, 0), 16384);
    assert_eq!(exercises::widest_constant_x(8, 0), 8192);
    assert_eq!(exercises::widest_constant_x(8, 1024), 8064);
    // 3: a kernel much faster than the copy hides behind it except for its last chunk.
    let copy = floor_ms(1 << 30, 50.0);
    let t = exercises::pipelined_ms(1 << 30, 50.0, 0.4, 4);
    assert!((t - (copy + 0.1)).abs() < 1e-9, "{t} vs {copy}");
    // A kernel slower than the copy is the one that sets the time.
    let slow = exercises::pipelined_ms(1 << 30, 50.0, 100.0, 4);
    assert!((slow - (copy / 4.0 + 100.0)).abs() < 1e-9, "{slow}");
}

/// Every typed kernel name is an entry point `kernels/atax.cu` defines for its element type
/// (through the file's macros), and every fused instance the file defines is named.
fn kernel_names_match_the_file<T: Element>() {
    let source = kernels::source(cmbook::atax::KERNEL_FILE).unwrap().source;
    let names = AtaxKernel::<T>::all();
    let instances = format!("ATAX_ENTRY_POINTS({}, {})", T::C_NAME, T::SUFFIX);
    assert!(source.contains(&instances), "{instances}");
    for k in &names {
        assert_eq!(k.file(), "atax.cu");
        // Only the cluster kernels need more than the file: they exist from 9.0.
        let cluster = matches!(k.function, AtaxFunction::FusedCluster(_));
        assert_eq!(k.needs().map(|n| n.0), cluster.then_some((9, 0)), "{k:?}");
        let function = k.function();
        assert!(
            function.starts_with("atax_") && function.ends_with(T::SUFFIX),
            "{function}"
        );
        match k.function {
            AtaxFunction::FusedRows(e) => {
                let fused = format!(
                    "ATAX_FUSED_ENTRY_POINT({}, {}, {e})",
                    T::C_NAME,
                    T::SUFFIX
                );
                assert!(source.contains(&fused), "{fused}");
            }
            AtaxFunction::FusedOnce(e)
            | AtaxFunction::FusedAtomic(e)
            | AtaxFunction::FusedCluster(e) => {
                let (c, s) = (T::C_NAME, T::SUFFIX);
                let once = format!("ATAX_FUSED_ONCE_ENTRY_POINTS({c}, {s}, {e})");
                assert!(source.contains(&once), "{once}");
            }
            AtaxFunction::FusedOnceWide(e) | AtaxFunction::FusedAtomicWide(e) => {
                let wide = format!(
                    "ATAX_WIDE_ENTRY_POINTS({}, {}, {e})",
                    T::C_NAME,
                    T::SUFFIX
                );
                assert!(source.contains(&wide), "{wide}");
            }
            f => {
                // Written out, or by one of the macros that write an entry point per
                // signature (`ATAX_THREE_ARRAYS(atax_<stem>, <function>, T, S)`).
                let entry = format!("void atax_{}_##S(", f.stem());
                let by_macro =
                    format!("_ARRAYS(atax_{}, {}, T, S)", f.stem(), f.stem());
                assert!(
                    source.contains(&entry) || source.contains(&by_macro),
                    "{entry}"
                );
            }
        }
    }
    let fused_in_file = source
        .matches(&format!("ATAX_FUSED_ENTRY_POINT({}, {},", T::C_NAME, T::SUFFIX))
        .count();
    assert_eq!(fused_in_file, T::FUSED_COLUMNS_PER_THREAD.len());
    let wide_in_file = source
        .matches(&format!("ATAX_WIDE_ENTRY_POINTS({}, {},", T::C_NAME, T::SUFFIX))
        .count();
    assert_eq!(wide_in_file, T::WIDE_COLUMNS_PER_THREAD.len());
    assert_eq!(
        names.len(),
        10 + 4 * T::FUSED_COLUMNS_PER_THREAD.len()
            + 2 * T::WIDE_COLUMNS_PER_THREAD.len()
    );
}

#[test]
fn typed_kernel_names_are_the_files_entry_points() {
    kernel_names_match_the_file::<f32>();
    kernel_names_match_the_file::<f64>();
    assert_eq!(
        AtaxKernel::<f64>::new(AtaxFunction::FusedRows(8)).function(),
        "atax_fused_rows_e8_f64"
    );
    assert_eq!(
        AtaxKernel::<f32>::new(AtaxFunction::TmpThreadPerRowXConst).function(),
        "atax_tmp_thread_per_row_x_const_f32"
    );
}

/// The split-rows kernel's slices cover every row once, none empty; the grid asks for 8
/// blocks per SM unless that would take more than one slice per 64 rows; the partial rows
/// are counted written and read.
#[test]
fn split_slices_cover_every_row_and_fill_the_gpu() {
    use cmbook::atax::datasets::partial_bytes;
    use cmbook::atax::device::split_shape;
    for d in POLYBENCH.iter().chain(&ODD_SIZES).chain([&LARGE_SQUARE]) {
        for (rows, cols) in [(d.m, d.n), (d.n, d.m)] {
            let s = split_shape(rows, cols, 132).unwrap();
            let (slices, per) = (s.slices as usize, s.rows_per_slice as usize);
            assert!(slices * per >= rows, "{}: rows left out", d.label());
            assert!((slices - 1) * per < rows, "{}: an empty slice", d.label());
            assert_eq!(s.column_blocks as usize, cols.div_ceil(32));
            let blocks = s.column_blocks as usize * slices;
            let capped = slices == rows.div_ceil(64).max(1);
            assert!(blocks >= 8 * 132 || capped, "{}", d.label());
        }
    }
    let xl = split_shape(1800, 2200, 132).unwrap();
    assert_eq!((xl.column_blocks, xl.slices), (69, 16));
    assert_eq!(partial_bytes(3, 10, 4), 2 * 3 * 10 * 4);
}

/// The one-launch grid: no more blocks than fit at once, than row steps, or (beyond one
/// block per SM) than one per 8 rows; never none.
#[test]
fn one_launch_blocks_follow_their_three_caps() {
    // EXTRALARGE double, two 576-thread blocks per SM on 132 SMs: 1800 / 8 rows.
    assert_eq!(one_launch_blocks(264, 1800, 2, 132), 225);
    // 16384² float, one 1024-thread block per SM: every SM once.
    assert_eq!(one_launch_blocks(132, 16384, 2, 132), 132);
    // Few rows: one block per row pair, at least one block.
    assert_eq!(one_launch_blocks(264, 37, 2, 132), 19);
    assert_eq!(one_launch_blocks(264, 1, 2, 132), 1);
    assert_eq!(one_launch_blocks(264, 0, 2, 132), 1);
    assert_eq!(one_launch_blocks(264, 37, 1, 132), 37);
}

/// A device that holds `fit(size)` clusters of each size at once (`None`: refused with an
/// error).
fn device(fit: impl Fn(u32) -> Option<u32>) -> impl FnMut(u32) -> anyhow::Result<u32> {
    move |c| fit(c).ok_or_else(|| anyhow::anyhow!("refused {c}"))
}

#[test]
fn the_cluster_grid_is_whole_clusters_of_the_largest_accepted_size() {
    assert_eq!(CLUSTER_SIZES, [8, 4, 2, 1]);
    // An H100-like device: 16 clusters of 8 at once.
    let h100 = |c: u32| Some(128 / c);
    let g = cluster_grid(225, device(h100)).unwrap();
    assert_eq!(g, ClusterGrid { cluster: 8, clusters: 16 });
    assert_eq!(g.blocks(), 128);
    // Fewer blocks wanted than fit: whole clusters, rounded down, at least one.
    assert_eq!(
        cluster_grid(100, device(h100)).unwrap(),
        ClusterGrid { cluster: 8, clusters: 12 }
    );
    assert_eq!(cluster_grid(19, device(h100)).unwrap().blocks(), 16);
    // Fewer blocks wanted than 8: the largest size that does not exceed them.
    assert_eq!(
        cluster_grid(5, device(h100)).unwrap(),
        ClusterGrid { cluster: 4, clusters: 1 }
    );
    assert_eq!(
        cluster_grid(1, device(h100)).unwrap(),
        ClusterGrid { cluster: 1, clusters: 1 }
    );
    assert_eq!(
        cluster_grid(0, device(h100)).unwrap(),
        ClusterGrid { cluster: 1, clusters: 1 }
    );
    // 8 refused (an error or no cluster at once): 4 is tried next, then 2.
    let no_eight = |c: u32| (c < 8).then_some(64 / c);
    assert_eq!(
        cluster_grid(225, device(no_eight)).unwrap(),
        ClusterGrid { cluster: 4, clusters: 16 }
    );
    let none_of_eight_or_four = |c: u32| Some(if c >= 4 { 0 } else { 40 });
    assert_eq!(
        cluster_grid(225, device(none_of_eight_or_four)).unwrap(),
        ClusterGrid { cluster: 2, clusters: 40 }
    );
    // Every grid is a whole number of clusters of a size the device accepted.
    for wanted in 0..300 {
        let g = cluster_grid(wanted, device(h100)).unwrap();
        assert!(
            g.cluster <= wanted.max(1)
                && g.clusters >= 1
                && g.clusters <= 128 / g.cluster
        );
        assert!(g.blocks() <= wanted.max(1), "{wanted}: {g:?}");
    }
}

#[test]
fn a_device_that_refuses_every_cluster_size_is_an_error_naming_each() {
    let mut asked = Vec::new();
    let err = cluster_grid(225, |c| {
        asked.push(c);
        if c == 2 {
            Ok(0)
        } else {
            Err(anyhow::anyhow!("no clusters here"))
        }
    })
    .unwrap_err()
    .to_string();
    assert_eq!(asked, [8, 4, 2, 1]);
    assert!(err.contains("8 blocks: no clusters here"), "{err}");
    assert!(err.contains("2 blocks: none fits at once"), "{err}");
}

#[test]
fn the_cluster_pass_shares_one_partial_y_per_block() {
    // EXTRALARGE double: 2200 doubles, 17.6 kB; the largest instances 64 KiB, the
    // 48 KiB beyond which a kernel must opt in.
    assert_eq!(cluster_shared_bytes::<f64>(2200).unwrap(), 17_600);
    assert_eq!(cluster_shared_bytes::<f32>(16384).unwrap(), 64 << 10);
    assert_eq!(cluster_shared_bytes::<f64>(8192).unwrap(), 64 << 10);
}
