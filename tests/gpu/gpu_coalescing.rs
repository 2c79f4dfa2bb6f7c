//! GPU checks of the coalescing chapter's kernels against their CPU references, at sizes that
//! are not multiples of anything. Run on a machine with a GPU:
//! `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_coalescing::`.

use cmbook::coalescing::measure::{
    self, AffineSweep, Kernels, Layout, StreamKernel, PITCH_FLOATS,
};
use cmbook::coalescing::readonly::ReadOnlyKernel;
use cmbook::coalescing::reference;
use cmbook::coalescing::transpose::TransposeKernel;
use cmbook::harness::kernels::KernelName;
use cmbook::harness::timing::Plan;
use cmbook::harness::{inputs, verify, Gpu, L2};

use crate::common::gpu;

fn open() -> (Gpu, Kernels) {
    let gpu = gpu();
    let kernels = Kernels::load(&gpu).unwrap_or_else(|e| panic!("{e:#}"));
    (gpu, kernels)
}

const QUICK: Plan = Plan { warmup: 1, reps: 2, l2: L2::Cold };

#[test]
#[ignore = "needs a CUDA GPU"]
fn affine_reads_match_the_cpu_at_every_stride_and_offset() {
    let (gpu, kernels) = open();
    let mut floats = AffineSweep::<f32>::new(&gpu, 100_003, 1).unwrap();
    let mut doubles = AffineSweep::<f64>::new(&gpu, 50_021, 2).unwrap();
    for (stride, offset) in [
        (1, 0),
        (2, 0),
        (3, 0),
        (7, 0),
        (8, 0),
        (33, 0),
        (64, 0),
        (1, 1),
        (1, 5),
        (1, 31),
        (1, 32),
        (5, 3),
    ] {
        let m = floats.measure(&gpu, &kernels, stride, offset, QUICK).unwrap();
        assert!(m.stats.min_ms > 0.0 && m.useful_bytes > 0);
        doubles.measure(&gpu, &kernels, stride, offset, QUICK).unwrap();
    }
    // A source shorter than one round of the grid: only the tail loop runs.
    let mut tiny = AffineSweep::<f32>::new(&gpu, 7, 3).unwrap();
    tiny.measure(&gpu, &kernels, 2, 1, QUICK).unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_element_left_unwritten_is_caught() {
    let (gpu, kernels) = open();
    let len = 1001;
    let src_host = inputs::random_f32(len, 4);
    let src = gpu.stream.clone_htod(&src_host).unwrap();
    let mut dst = gpu.stream.alloc_zeros::<f32>(len).unwrap();
    gpu.poison(&mut dst).unwrap();
    // One element too few: the last keeps its poison (NaN) and must be reported.
    measure::launch_affine_read(
        &gpu.stream,
        &kernels.stream(StreamKernel::AffineF32),
        &src,
        &mut dst,
        (len - 1, 1, 0),
    )
    .unwrap();
    let got = gpu.stream.clone_dtoh(&dst).unwrap();
    let err =
        verify::check_exact("affine_read_f32", "n=1001", &got, &src_host).unwrap_err();
    assert_eq!((err.index, err.wrong), (len - 1, 1));
    assert!(err.to_string().contains("NaN"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn both_drifts_match_the_cpu() {
    let (gpu, kernels) = open();
    for n in [1usize, 5, 1023, 100_003] {
        let particles = reference::random_particles(n, n as u64);
        let (aos, soa) =
            measure::measure_drifts(&gpu, &kernels, &particles, QUICK).unwrap();
        assert_eq!(aos.useful_bytes, 36 * n as u64);
        assert!(aos.stats.min_ms > 0.0 && soa.stats.min_ms > 0.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_transpose_matches_the_cpu_at_odd_sizes() {
    let (gpu, kernels) = open();
    for (rows, cols) in [
        (1, 1),
        (1, 7),
        (7, 1),
        (33, 65),
        (65, 33),
        (1000, 1003),
        (31, 1025),
        (129, 64),
    ] {
        // Packed rows, rows pitched to a sector and to 128 bytes: the same results.
        for layout in
            [Layout::Packed, Layout::Pitched(8), Layout::Pitched(PITCH_FLOATS)]
        {
            let results = measure::measure_transposes(
                &gpu,
                &kernels,
                &TransposeKernel::all(),
                (rows, cols),
                layout,
                None,
                (rows * cols) as u64,
            )
            .unwrap();
            assert_eq!(results.len(), TransposeKernel::all().len());
        }
    }
    let timed = measure::measure_transposes(
        &gpu,
        &kernels,
        &[TransposeKernel::TilePadded32x8],
        (513, 517),
        Layout::Pitched(PITCH_FLOATS),
        Some(QUICK),
        5,
    )
    .unwrap();
    assert!(timed[0].1.as_ref().unwrap().stats.min_ms > 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_side_measurement_times_every_kernel_in_both_layouts() {
    let (gpu, kernels) = open();
    let copy = cmbook::harness::ceiling::CopyKernel::load(&gpu).unwrap();
    let side = measure::measure_side(&gpu, &kernels, &copy, 515, QUICK, 3).unwrap();
    assert_eq!(side.runs.len(), 2 * measure::SIDE_KERNELS.len());
    assert!(side.copy.median > 0.0);
    assert!(side.runs.iter().all(|(_, _, m)| m.stats.min_ms > 0.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_transpose_size_the_grid_cannot_hold_is_a_usage_error() {
    let (gpu, kernels) = open();
    let err = measure::measure_transposes(
        &gpu,
        &kernels,
        &TransposeKernel::all(),
        (0, 5),
        Layout::Packed,
        None,
        1,
    )
    .unwrap_err();
    assert!(err.downcast_ref::<cmbook::harness::UsageError>().is_some(), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_read_only_kernels_match_the_cpu() {
    let (gpu, kernels) = open();
    for (n, table) in [(1usize, 1u32), (1027, 17), (100_003, 16_384)] {
        let results =
            measure::measure_readonly(&gpu, &kernels, n, table, QUICK, n as u64)
                .unwrap();
        assert_eq!(results.len(), ReadOnlyKernel::all().len());
        assert!(results.iter().all(|(_, m)| m.stats.min_ms > 0.0));
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_granularity_sweep_verifies_every_point_and_restores_the_limit() {
    let (gpu, kernels) = open();
    let before = measure::granularity::fetch_granularity(&gpu).unwrap();
    let sweep = measure::measure_granularities(
        &gpu,
        &kernels,
        (3 << 20) + 12,
        &[1, 3, 64],
        QUICK,
        5,
    )
    .unwrap();
    assert_eq!(sweep.default, before);
    assert_eq!(sweep.runs.len(), measure::GRANULARITIES.len());
    assert!(sweep.runs.iter().all(|r| r.points.len() == 3));
    assert_eq!(measure::granularity::fetch_granularity(&gpu).unwrap(), before);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_whole_chapter_measures_and_reports_at_quick_sizes() {
    use cmbook::coalescing::{self, Settings};
    use cmbook::harness::run;
    let dir = tempfile::tempdir().unwrap();
    let run = run::quick_on_gpu(&cmbook::coalescing::CHAPTER, dir.path(), 7).unwrap();
    let settings = Settings {
        ceiling_mib: 8,
        sweep_mib: 3,
        offset_mib: 2,
        // Not a multiple of any tile: the timed transposes have partial tiles too.
        transpose_side: 333,
        particles: 10_007,
        ..Settings::with_defaults(true)
    };
    let results = coalescing::measure(&run, &settings).unwrap();
    assert_eq!((results.transpose_n, results.ceiling_bytes), (333, 8 << 20));
    assert_eq!(results.ptx.len(), ReadOnlyKernel::all().len());
    coalescing::report(&run, &results).unwrap();
    for stem in cmbook::coalescing::CHAPTER.writes {
        assert!(dir.path().join(format!("data/{stem}.csv")).exists(), "{stem}");
    }
    assert!(cmbook::harness::plot::audit_figures(dir.path()).unwrap().is_empty());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_tma_transpose_is_exact_where_it_can_map_the_rows_and_refused_elsewhere() {
    let (gpu, _) = open();
    let tma =
        cmbook::harness::kernels::KernelTable::<cmbook::harness::tma::TmaKernel>::load(
            &gpu,
        )
        .unwrap();
    if let Err(unavailable) = tma.try_get(cmbook::harness::tma::TmaKernel::TmaTranspose)
    {
        println!("skipped: {}", unavailable.why);
        return;
    }
    // Packed rows of 36 and 64 floats are multiples of 16 bytes: the TMA maps them.
    let packed =
        measure::measure_tma_transpose(&gpu, &tma, (64, 36), Layout::Packed, None, 1)
            .unwrap();
    assert!(matches!(packed, Ok(None)), "{packed:?}");
    for shape in [(1, 7), (33, 65), (1000, 1003)] {
        let pitched = Layout::Pitched(PITCH_FLOATS);
        let timed =
            measure::measure_tma_transpose(&gpu, &tma, shape, pitched, Some(QUICK), 2)
                .unwrap()
                .unwrap();
        assert!(timed.unwrap().stats.min_ms > 0.0);
        let refused =
            measure::measure_tma_transpose(&gpu, &tma, shape, Layout::Packed, None, 2)
                .unwrap();
        assert!(refused.unwrap_err().contains("multiples of 16 bytes"));
    }
}
