//! GPU checks of the "Measuring a GPU" kernels against CPU references, at sizes that are not
//! multiples of anything. Run on a machine with a GPU: `cargo test --release -- --ignored`.

use cmbook::ceilings::measure::measure_launch;
use cmbook::harness::ceiling::{self, CopyKernel, Direction, HostMemory};
use cmbook::harness::timing::Plan;
use cmbook::harness::{inputs, verify, L2};

use crate::common::gpu;

#[test]
#[ignore = "needs a CUDA GPU"]
fn copy_kernel_matches_the_cpu_at_odd_sizes() {
    let gpu = gpu();
    let copy = CopyKernel::load(&gpu).unwrap();
    for n in [1usize, 2, 3, 5, 31, 1023, 4097, 65_537, 1_000_003] {
        let src_host = inputs::random_f32(n, n as u64);
        let src = gpu.stream.clone_htod(&src_host).unwrap();
        let mut dst = gpu.stream.alloc_zeros::<f32>(n).unwrap();
        gpu.poison(&mut dst).unwrap();
        copy.launch(&gpu.stream, &src, &mut dst, n).unwrap();
        let got = gpu.stream.clone_dtoh(&dst).unwrap();
        verify::check_exact("copy_f32", &format!("n={n}"), &got, &src_host).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn poison_is_nan_and_an_unwritten_element_is_caught() {
    let gpu = gpu();
    let copy = CopyKernel::load(&gpu).unwrap();
    let n = 1001;
    let src_host = inputs::random_f32(n, 1);
    let src = gpu.stream.clone_htod(&src_host).unwrap();
    let mut dst = gpu.stream.alloc_zeros::<f32>(n).unwrap();
    gpu.poison(&mut dst).unwrap();
    assert!(gpu.stream.clone_dtoh(&dst).unwrap().iter().all(|x| x.is_nan()));
    // Copy one element too few: the last one keeps its poison and must be reported.
    copy.launch(&gpu.stream, &src, &mut dst, n - 1).unwrap();
    let got = gpu.stream.clone_dtoh(&dst).unwrap();
    let err = verify::check_exact("copy_f32", "n=1001", &got, &src_host).unwrap_err();
    assert_eq!((err.index, err.wrong), (n - 1, 1));
    assert!(err.to_string().contains("NaN"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn verify_then_time_stops_before_timing_when_the_check_fails() {
    let gpu = gpu();
    let copy = CopyKernel::load(&gpu).unwrap();
    let n = 4099;
    let src_host = inputs::random_f32(n, 3);
    let src = gpu.stream.clone_htod(&src_host).unwrap();
    let mut dst = gpu.stream.alloc_zeros::<f32>(n).unwrap();
    let mut launches = 0;
    let plan = Plan::new(1, 3, L2::Warm);
    let err = gpu
        .verify_then_time_output(
            &mut dst,
            |s, dst| {
                launches += 1;
                copy.launch(s, &src, dst, n - 2) // two elements short: they stay poisoned
            },
            |got| verify::check_exact("copy_f32", "n=4099", got, &src_host),
            &[plan],
        )
        .unwrap_err();
    assert!(err.to_string().contains("2 of 4099 elements wrong"), "{err}");
    assert_eq!(launches, 1, "nothing may be timed after a failed check");
    let ok = gpu
        .verify_then_time_output(
            &mut dst,
            |s, dst| copy.launch(s, &src, dst, n),
            |got| verify::check_exact("copy_f32", "n=4099", got, &src_host),
            &[plan, plan],
        )
        .unwrap();
    assert_eq!((ok.check.checked, ok.times.len()), (n, 2));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn copy_measurement_verifies_and_reports_positive_bandwidth() {
    let gpu = gpu();
    let copy = CopyKernel::load(&gpu).unwrap();
    for l2 in [L2::Warm, L2::Cold] {
        let r =
            ceiling::measure_copy(&gpu, &copy, (3 << 20) + 12, Plan::new(1, 5, l2), 9)
                .unwrap();
        assert!(r.kernel.min_ms > 0.0 && r.kernel_gbps().median > 1.0, "{r:?}");
        assert!(r.memcpy.min_ms > 0.0);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn transfers_round_trip_exactly() {
    let gpu = gpu();
    for host in [HostMemory::Pageable, HostMemory::Pinned] {
        for dir in [Direction::HostToDevice, Direction::DeviceToHost] {
            let s = ceiling::measure_transfer(
                &gpu,
                1_000_003,
                dir,
                host,
                Plan::new(1, 3, L2::Warm),
                5,
            )
            .unwrap();
            assert!(s.median_ms > 0.0);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn launch_costs_are_positive_and_a_graph_node_is_cheaper_than_a_round_trip() {
    let gpu = gpu();
    let c = measure_launch(&gpu, Plan::new(2, 5, L2::Warm), 50).unwrap();
    for s in [&c.back_to_back, &c.host_call, &c.round_trip, &c.graph_node] {
        assert!(s.min_ms > 0.0, "{s:?}");
    }
    assert!(c.graph_node.median_ms < c.round_trip.median_ms);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_request_larger_than_device_memory_is_refused_before_allocating() {
    let gpu = gpu();
    let too_much = 2 * gpu.info.total_mem_bytes;
    let err = gpu.ensure_fits(too_much, "a test buffer").unwrap_err();
    let usage = err
        .downcast_ref::<cmbook::harness::UsageError>()
        .expect("a usage error, exit code 2");
    assert!(usage.0.contains("needs") && usage.0.contains("free"), "{usage}");
    assert!(gpu.ensure_fits(1 << 20, "a small buffer").is_ok());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_arithmetic_and_l2_ceilings_verify_and_are_positive() {
    use cmbook::ceilings::peaks::{measure_fma, measure_l2_read};
    use cmbook::harness::ceiling::CeilingKernel;
    use cmbook::harness::kernels::KernelTable;
    let gpu = gpu();
    let table = KernelTable::<CeilingKernel>::load(&gpu).unwrap();
    let plan = Plan::new(1, 3, L2::Warm);
    for double in [false, true] {
        // 37 steps: the unrolled loop's remainder runs too.
        let p = measure_fma(&gpu, &table, double, 37, plan).unwrap();
        assert!(p.rate().median > 1e9, "{p:?}");
    }
    // A buffer that is not a multiple of the grid: every thread's share differs.
    let p = measure_l2_read(&gpu, &table, (1 << 20) + 48, 3, plan, 5).unwrap();
    assert!(p.rate().median > 1e9, "{p:?}");
}
