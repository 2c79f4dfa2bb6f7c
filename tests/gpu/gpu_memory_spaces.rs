//! GPU checks of the memory-spaces chapter's kernels against their CPU references, at sizes
//! that are not multiples of anything. Run on a machine with a GPU:
//! `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_memory_spaces::`.

use cmbook::harness::timing::Plan;
use cmbook::harness::{inputs, verify, Gpu, UsageError, L2};
use cmbook::memory_spaces::measure::WalkSizes;
use cmbook::memory_spaces::measure::{
    self, ChaseSpace, HistogramKernel, Kernels, SignalSize, StencilKernel, VectorHome,
};
use cmbook::memory_spaces::{reference, SIGNAL_MAX};

use crate::common::gpu;

fn open() -> (Gpu, Kernels) {
    let gpu = gpu();
    let kernels = Kernels::load(&gpu).unwrap_or_else(|e| panic!("{e:#}"));
    (gpu, kernels)
}

const QUICK: Plan = Plan { warmup: 1, reps: 2, l2: L2::Warm };

fn is_usage_error(err: &anyhow::Error) -> bool {
    err.downcast_ref::<UsageError>().is_some()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_signal_kernels_match_the_cpu_with_the_vector_in_each_home() {
    let (gpu, kernels) = open();
    for (rows, m, matrices) in
        [(1, 1, 1), (257, 3, 2), (1000, 513, 3), (31, SIGNAL_MAX, 2)]
    {
        let results = measure::measure_signal(
            &gpu,
            &kernels,
            SignalSize { rows, m, matrices },
            QUICK,
            rows as u64,
        )
        .unwrap();
        assert_eq!(results.len(), VectorHome::ALL.len());
    }
    let too_long = measure::measure_signal(
        &gpu,
        &kernels,
        SignalSize { rows: 5, m: SIGNAL_MAX + 1, matrices: 1 },
        QUICK,
        1,
    )
    .unwrap_err();
    assert!(is_usage_error(&too_long), "{too_long}");
}

/// The walks' sizes at `n` threads: 37 loads each, 1, 3 and 32 distinct addresses per warp.
fn walk_sizes(n: usize) -> WalkSizes<'static> {
    WalkSizes { n, steps: 37, distincts: &[1, 3, 32], plan: QUICK, seed: n as u64 }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_walks_match_the_cpu_for_every_number_of_distinct_addresses() {
    let (gpu, kernels) = open();
    for n in [1usize, 33, 1027] {
        assert_eq!(walk_sizes(n).walks(&gpu, &kernels).unwrap().len(), 9);
    }
    assert!(is_usage_error(
        &WalkSizes { n: 10, steps: 5, distincts: &[33], plan: QUICK, seed: 1 }
            .walks(&gpu, &kernels)
            .unwrap_err()
    ));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_spaced_constant_walks_match_the_cpu() {
    let (gpu, kernels) = open();
    for n in [1usize, 33, 1027] {
        assert_eq!(walk_sizes(n).spaced_walks(&gpu, &kernels).unwrap().len(), 9);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_stencils_match_the_cpu_at_odd_sizes() {
    let (gpu, kernels) = open();
    for n in [1usize, 2, 255, 256, 257, 1000, 100_003] {
        let results =
            measure::measure_stencils(&gpu, &kernels, n, QUICK, n as u64).unwrap();
        assert_eq!(
            results.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            StencilKernel::ALL
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_histograms_match_the_cpu_and_only_one_uses_local_memory() {
    let (gpu, kernels) = open();
    for n in [1usize, 1001, 1_000_003] {
        let results =
            measure::measure_histograms(&gpu, &kernels, n, QUICK, n as u64).unwrap();
        let local =
            results.iter().find(|r| r.kernel == HistogramKernel::Local).unwrap();
        let registers =
            results.iter().find(|r| r.kernel == HistogramKernel::Registers).unwrap();
        assert!(
            local.local_bytes_per_thread > 0,
            "the run-time-indexed array should live in local memory"
        );
        assert_eq!(registers.local_bytes_per_thread, 0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_chase_ends_where_the_cpu_says() {
    let (gpu, kernels) = open();
    for (space, footprint) in [
        (ChaseSpace::Global, 8 << 10),
        (ChaseSpace::Global, 3 << 20),
        (ChaseSpace::Shared, 1 << 10),
        (ChaseSpace::Shared, 48 << 10),
        (ChaseSpace::Constant, 12),
        (ChaseSpace::Constant, 16 << 10),
    ] {
        let c = measure::measure_chase(
            &gpu,
            &kernels,
            space,
            footprint,
            1001,
            QUICK,
            footprint as u64,
        )
        .unwrap();
        assert!(c.ns_per_load().0 > 0.0);
    }
    for (space, footprint) in [
        (ChaseSpace::Shared, 64 << 10),
        (ChaseSpace::Constant, 32 << 10),
        (ChaseSpace::Global, 4),
    ] {
        let err =
            measure::measure_chase(&gpu, &kernels, space, footprint, 10, QUICK, 1)
                .unwrap_err();
        assert!(is_usage_error(&err), "{err}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_on_chip_kernels_match_the_cpu() {
    let (gpu, kernels) = open();
    let onchip = measure::measure_onchip(&gpu, &kernels, 5, QUICK).unwrap();
    assert!(onchip.shared.stats.min_ms > 0.0 && onchip.registers.stats.min_ms > 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_stencil_element_left_unwritten_is_caught() {
    let (gpu, _kernels) = open();
    let n = 1001;
    let a_host = inputs::random_f32(n, 4);
    let want = reference::stencil3(&a_host);
    let mut b = gpu.stream.alloc_zeros::<f32>(n).unwrap();
    gpu.poison(&mut b).unwrap();
    // Nothing wrote b: every element is NaN and must be reported.
    let got = gpu.stream.clone_dtoh(&b).unwrap();
    let err =
        verify::check_exact("stencil3_global", "n=1001", &got, &want).unwrap_err();
    assert_eq!((err.index, err.wrong), (0, n));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_whole_chapter_measures_and_reports_at_quick_sizes() {
    use cmbook::harness::run;
    use cmbook::memory_spaces::{self, Settings};
    let dir = tempfile::tempdir().unwrap();
    let run =
        run::quick_on_gpu(&cmbook::memory_spaces::CHAPTER, dir.path(), 7).unwrap();
    let settings = Settings {
        // Smaller than L2: the cold stencil still verifies every element.
        stencil_n: 12_345,
        ..Settings::with_defaults(true)
    };
    let results = memory_spaces::measure(&run, &settings).unwrap();
    assert_eq!(results.stencil_cold_n, 12_345);
    assert_eq!(results.signal_size.matrices, 3);
    memory_spaces::report(&run, &results).unwrap();
    for stem in cmbook::memory_spaces::CHAPTER.writes {
        assert!(dir.path().join(format!("data/{stem}.csv")).exists(), "{stem}");
    }
    assert!(cmbook::harness::plot::audit_figures(dir.path()).unwrap().is_empty());
}
