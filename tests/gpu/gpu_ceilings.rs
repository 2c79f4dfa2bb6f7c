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

#[test]
#[ignore = "needs a CUDA GPU"]
fn read_and_write_kernels_match_the_cpu_at_odd_sizes() {
    let gpu = gpu();
    let copy = CopyKernel::load(&gpu).unwrap();
    // Sizes in floats: a tail of 1 to 3 floats past the last 16-byte word is never touched.
    for n in [4usize, 7, 1022, 4099, 65_541, 1_000_003] {
        let bytes = n * 4;
        let r = ceiling::measure_copy(
            &gpu,
            &copy,
            bytes,
            Plan::new(0, 2, L2::Warm),
            n as u64,
        )
        .unwrap();
        assert_eq!(r.read_bytes(), n / 4 * 16);
        assert!(r.read.median_ms > 0.0 && r.write.median_ms > 0.0);
    }
}

/// The L2-cold protocol leaves no dirty line: a read timed after dirty work, then the
/// harness's flush, takes no longer than after the same flush and one more full read sweep
/// (which would write back anything the first left dirty). The same read after a memset of
/// twice the L2 alone, the dirty flush the book used before, is printed to show the test's
/// sensitivity.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_l2_flush_leaves_no_dirty_line_for_the_timed_kernel() {
    use cmbook::harness::toolchain::event_elapsed_ms;
    let gpu = gpu();
    let copy = CopyKernel::load(&gpu).unwrap();
    let l2 = gpu.info.l2_bytes.max(1 << 20);
    // Half the L2, at least 4 MiB: short enough that a write-back of L2's worth of dirty
    // lines would show.
    let n_vec = (l2 / 2).max(4 << 20) / 16;
    let src = gpu.stream.clone_htod(&inputs::random_f32(4 * n_vec, 11)).unwrap();
    let blocks = CopyKernel::read_write_config(n_vec).unwrap().grid_dim.0 as usize;
    let mut block_xor = gpu.stream.alloc_zeros::<u32>(blocks).unwrap();
    let mut dirty = gpu.stream.alloc_zeros::<u8>(2 * l2).unwrap();
    let mut time = |flushes: usize| -> f64 {
        let mut samples = Vec::new();
        for _ in 0..15 {
            // Dirty work before the flush: L2 full of written lines.
            gpu.poison(&mut dirty).unwrap();
            for _ in 0..flushes {
                gpu.flush_l2().unwrap();
            }
            let (start, stop) =
                (gpu.timing_event().unwrap(), gpu.timing_event().unwrap());
            start.record(&gpu.stream).unwrap();
            copy.launch_read(&gpu.stream, &src, n_vec, &mut block_xor).unwrap();
            stop.record(&gpu.stream).unwrap();
            gpu.stream.synchronize().unwrap();
            samples.push(event_elapsed_ms(&start, &stop).unwrap() as f64);
        }
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2]
    };
    let (dirty_only, flushed, flushed_twice) = (time(0), time(1), time(2));
    println!(
        "read of {} MiB after dirty work: no flush {dirty_only:.4} ms, the flush \
         {flushed:.4} ms, the flush and one more sweep {flushed_twice:.4} ms \
         (dirty/clean {:.2}, flush/clean {:.2})",
        (n_vec * 16) >> 20,
        dirty_only / flushed_twice,
        flushed / flushed_twice
    );
    assert!(
        flushed <= 1.05 * flushed_twice,
        "the read after the flush took {flushed:.4} ms, {:.2} times the {flushed_twice:.4} \
         ms after a second sweep: the flush left dirty lines",
        flushed / flushed_twice
    );
}
