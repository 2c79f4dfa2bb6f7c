//! GPU checks of the ATAX chapter: every kernel variant and every host strategy against the CPU
//! reference at sizes that are multiples of nothing, in float and double. Run on a GPU machine:
//! `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_atax::`. On a GPU
//! without thread-block clusters (the chapter's plan, `atax::SECTIONS`), the checks of the
//! cluster pass say so in one line and every other kernel is still checked.

use cmbook::atax::datasets::{Dataset, ODD_SIZES};
use cmbook::atax::device::{AtaxFunction, Kernels, TmpKernel, CLUSTER_SIZES};
use cmbook::atax::element::{address, Element};
use cmbook::atax::measure::kernels::DeviceProblem;
use cmbook::atax::measure::{self, HostProblem, KernelVariant, Plans, Strategy};
use cmbook::harness::sections::{plan, Caps};
use cmbook::harness::Gpu;

use crate::common::gpu_with_cublas;

/// The skip line of the chapter's cluster pass on `gpu`; `None` where it runs.
fn cluster_pass_skipped(gpu: &Gpu) -> Option<String> {
    let plan = plan(cmbook::atax::SECTIONS, &Caps::of(&gpu.info, 0));
    plan.skip("cluster pass").map(ToString::to_string)
}

fn open() -> Gpu {
    gpu_with_cublas()
}

fn every_kernel_at_odd_sizes<T: Element>() {
    let gpu = open();
    let k = Kernels::<T>::load(&gpu).unwrap_or_else(|e| panic!("{e:#}"));
    // Where the cluster pass cannot run, it is the one variant skipped at every size.
    let cluster_skipped = cluster_pass_skipped(&gpu);
    if let Some(line) = &cluster_skipped {
        println!("{line}");
    }
    for (i, d) in ODD_SIZES
        .iter()
        .chain(&[
            Dataset::new("129×4097", 129, 4097),
            Dataset::new("2049×31", 2049, 31),
        ])
        .enumerate()
    {
        let p = HostProblem::<T>::new(*d, i as u64);
        let (results, skipped) = measure::measure_kernels(&gpu, &k, &p, None)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(
            results.len() + skipped.len(),
            KernelVariant::ALL.len(),
            "{}",
            d.label()
        );
        let names: Vec<&str> = skipped.iter().map(|s| s.what).collect();
        let expected: &[&str] = match cluster_skipped {
            Some(_) => &[KernelVariant::FusedCluster.name()],
            None => &[],
        };
        assert_eq!(names, expected, "skipped at {}: {skipped:?}", d.label());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_float_kernel_matches_the_cpu() {
    every_kernel_at_odd_sizes::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_double_kernel_matches_the_cpu() {
    every_kernel_at_odd_sizes::<f64>();
}

/// The fused passes and cuBLAS on pitched rows (zero padding in A, x and y) at odd sides,
/// square, tall and wide: y matches the CPU and its padding is exactly zero.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_fused_passes_and_cublas_match_the_cpu_on_pitched_rows() {
    let gpu = open();
    let k = Kernels::<f32>::load(&gpu).unwrap();
    for (i, d) in [
        Dataset::new("333×517", 333, 517),
        Dataset::new("1537²", 1537, 1537),
        Dataset::new("2049×31", 2049, 31),
        Dataset::new("67×16411", 67, 16411),
    ]
    .into_iter()
    .enumerate()
    {
        let pitch = d.n.next_multiple_of(measure::ROW_ALIGN_ELEMENTS);
        let p = HostProblem::<f32>::pitched("pitched", d, pitch, 20 + i as u64);
        let (results, skipped) = measure::kernels::measure_variants(
            &gpu,
            &k,
            &p,
            None,
            &measure::SHAPE_VARIANTS,
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(results.len() + skipped.len(), measure::SHAPE_VARIANTS.len());
        assert!(
            results.len() >= 3,
            "{}: only {} ran: {skipped:?}",
            d.label(),
            results.len()
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_host_strategy_matches_the_cpu_and_times() {
    let gpu = open();
    let k = Kernels::<f32>::load(&gpu).unwrap();
    for (i, d) in ODD_SIZES.iter().enumerate() {
        let p = HostProblem::<f32>::new(*d, 10 + i as u64);
        let (results, skipped) = measure::measure_end_to_end(&gpu, &k, &p, None)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(results.len(), Strategy::ALL.len(), "{}: {skipped:?}", d.label());
    }
    let p = HostProblem::<f32>::new(Dataset::new("333×517", 333, 517), 99);
    let (timed, _) =
        measure::measure_end_to_end(&gpu, &k, &p, Some(Plans::new(2))).unwrap();
    assert!(timed
        .iter()
        .all(|r| r.times.as_ref().is_some_and(|(m, s)| m.min_ms > 0.0 && s.reps == 5)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn beyond_constant_memory_the_variant_is_skipped_not_failed() {
    let gpu = open();
    let k = Kernels::<f64>::load(&gpu).unwrap();
    let p = HostProblem::<f64>::new(Dataset::new("3×9000", 3, 9000), 5);
    let (results, skipped) = measure::measure_kernels(&gpu, &k, &p, None).unwrap();
    let names: Vec<_> = skipped.iter().map(|s| s.what).collect();
    assert_eq!(names, ["x in constant", "fused", "fused, cluster + atomics"]);
    assert_eq!(results.len(), KernelVariant::ALL.len() - 3);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_unwritten_y_is_caught() {
    let gpu = open();
    let k = Kernels::<f32>::load(&gpu).unwrap();
    let p = HostProblem::<f32>::new(Dataset::new("33×65", 33, 65), 6);
    let mut dev = DeviceProblem::upload(&gpu, &k, &p).unwrap();
    gpu.poison(&mut dev.y).unwrap();
    // Kernel 1 only: y keeps its poison and must be reported.
    let s = gpu.stream.clone();
    let addr = |b: &cudarc::driver::CudaSlice<f32>| address(b, &s);
    unsafe {
        k.launch_tmp(
            &s,
            TmpKernel::WarpPerRow,
            addr(&dev.a),
            addr(&dev.x),
            addr(&dev.tmp),
            (33, 65),
        )
        .unwrap()
    };
    let err = p.check("kernel 1 only", &s.clone_dtoh(&dev.y).unwrap()).unwrap_err();
    assert!(err.to_string().contains("NaN"), "{err}");
}

/// The one-launch passes, in both forms (the wide one at odd sizes beyond the register
/// instances), launched again and again on the same words: each launch right, the
/// barrier back at zero arrivals with one generation per launch, the atomic kernel's
/// count and accumulator back at zero.
fn one_launch_pass<T: Element>(sizes: &[(usize, usize)]) {
    let gpu = open();
    let k = Kernels::<T>::load(&gpu).unwrap();
    for (i, &(m, n)) in sizes.iter().enumerate() {
        let d = Dataset::new("odd", m, n);
        let p = HostProblem::<T>::new(d, 40 + i as u64);
        let mut dev = DeviceProblem::upload(&gpu, &k, &p).unwrap();
        let launches = 4;
        for v in [KernelVariant::FusedOnce, KernelVariant::FusedAtomic] {
            for _ in 0..launches {
                gpu.poison(&mut dev.y).unwrap();
                measure::kernels::enqueue_variant(&k, &gpu.stream, v, &dev, (m, n))
                    .unwrap_or_else(|e| panic!("{e:#}"));
                let y = gpu.stream.clone_dtoh(&dev.y).unwrap();
                p.check(v.name(), &y).unwrap_or_else(|e| panic!("{e:#}"));
            }
        }
        let words = gpu.stream.clone_dtoh(&dev.barrier).unwrap();
        assert_eq!(words, [0, launches], "{}", d.label());
        assert_eq!(gpu.stream.clone_dtoh(&dev.count).unwrap(), [0, 0]);
        let acc = gpu.stream.clone_dtoh(&dev.acc).unwrap();
        assert!(acc.iter().all(|v| Into::<f64>::into(*v) == 0.0), "{}", d.label());
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_one_launch_pass_matches_the_cpu_in_both_forms() {
    // 16411 floats and 8203 doubles need the wide form; 4097 the registers.
    one_launch_pass::<f32>(&[(37, 16411), (3, 32768), (129, 4097), (1, 1)]);
    one_launch_pass::<f64>(&[(37, 8203), (2, 16384), (1003, 1)]);
}

/// The cluster pass at odd sizes, launched again and again on the same accumulator: each
/// launch right, the accumulator and the count back at zero after each. The sizes reach
/// a cluster of one block (one row), a grid smaller than 8 blocks (9 rows: 5 row pairs,
/// clusters of 4), the largest instances (64 KiB of shared memory a block, beyond the
/// 48 KiB default) and EXTRALARGE, where an H100 must take clusters of 8.
fn cluster_pass<T: Element>(sizes: &[(usize, usize)]) {
    let gpu = open();
    let k = Kernels::<T>::load(&gpu).unwrap();
    for (i, &(m, n)) in sizes.iter().enumerate() {
        let d = Dataset::new("odd", m, n);
        let p = HostProblem::<T>::new(d, 70 + i as u64);
        let mut dev = DeviceProblem::upload(&gpu, &k, &p).unwrap();
        let l =
            dev.cluster.unwrap_or_else(|| panic!("{}: no cluster launch", d.label()));
        let (cluster, blocks) = (l.grid.cluster, l.grid.blocks());
        assert!(CLUSTER_SIZES.contains(&cluster), "{}: {l:?}", d.label());
        assert_eq!(l.plan.cfg().grid_dim, (blocks, 1, 1), "{}", d.label());
        assert_eq!(l.plan.cluster(), (cluster, 1, 1), "{}", d.label());
        assert!(l.grid.clusters <= l.plan.active_clusters(), "{}: {l:?}", d.label());
        assert!(blocks as usize <= m.div_ceil(2).max(1), "{}: {l:?}", d.label());
        if m == 1800 && n == 2200 {
            assert_eq!(cluster, 8, "EXTRALARGE: {l:?}");
        }
        for launch in 0..4 {
            gpu.poison(&mut dev.y).unwrap();
            let v = KernelVariant::FusedCluster;
            measure::kernels::enqueue_variant(&k, &gpu.stream, v, &dev, (m, n))
                .unwrap_or_else(|e| panic!("{e:#}"));
            let y = gpu.stream.clone_dtoh(&dev.y).unwrap();
            p.check(v.name(), &y)
                .unwrap_or_else(|e| panic!("launch {launch}, {l:?}: {e:#}"));
            assert_eq!(gpu.stream.clone_dtoh(&dev.count).unwrap(), [0, 0]);
            let acc = gpu.stream.clone_dtoh(&dev.acc).unwrap();
            assert!(acc.iter().all(|v| Into::<f64>::into(*v) == 0.0), "{}", d.label());
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_cluster_pass_matches_the_cpu_launch_after_launch() {
    if let Some(line) = cluster_pass_skipped(&open()) {
        println!("{line}");
        return;
    }
    cluster_pass::<f32>(&[(1, 1), (9, 1003), (37, 16384), (1000, 4097), (2049, 31)]);
    cluster_pass::<f64>(&[(1003, 1), (17, 8192), (1800, 2200), (33, 65), (2, 8191)]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_cluster_plan_launches_only_the_kernel_it_was_checked_for() {
    let gpu = open();
    if let Some(line) = cluster_pass_skipped(&gpu) {
        println!("{line}");
        return;
    }
    let k = Kernels::<f32>::load(&gpu).unwrap();
    let p = HostProblem::<f32>::new(Dataset::new("33×65", 33, 65), 8);
    let dev = DeviceProblem::upload(&gpu, &k, &p).unwrap();
    let l = dev.cluster.unwrap();
    assert_eq!(l.shape.columns_per_thread, 1);
    let other = k.function(AtaxFunction::FusedCluster(2));
    let args = cmbook::harness::launch::Args::new();
    // SAFETY: refused before the driver is called.
    let err = unsafe {
        cmbook::harness::launch::launch_planned_cluster(
            &gpu.stream,
            other,
            &l.plan,
            args,
        )
    }
    .unwrap_err();
    assert!(err.to_string().contains("another kernel"), "{err}");
}
