//! GPU checks of the chapter "Memory across GPUs" against the CPU, at sizes that are multiples of
//! nothing. The single-GPU checks run on any GPU; those named `two_gpus_*` need two GPUs with
//! peer access and fail, saying so, on a machine with one. Run on a GPU machine with NCCL:
//! `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_multi_gpu::`, adding
//! `--skip two_gpus` where there is one GPU.

use std::sync::Once;

use cmbook::harness::timing::Plan;
use cmbook::harness::{inputs, verify, Gpu, L2};
use cmbook::multi_gpu::atax::{self, AtaxGpu, HostProblem};
use cmbook::multi_gpu::cmm;
use cmbook::multi_gpu::collectives;
use cmbook::multi_gpu::devices::{self, time_streams};
use cmbook::multi_gpu::nccl::{self, Collective, Comms};
use cmbook::multi_gpu::peer::{self, Pair, PairCopy, Path, PeerKernels};

use crate::common::gpu_ordinal;

/// NVLink multicast off before anything touches NCCL (every test calls this first).
fn setup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::env::set_var(nccl::NVLS_VARIABLE, "0"));
}

fn open(ordinal: usize) -> Gpu {
    setup();
    gpu_ordinal(ordinal, false)
}

/// GPUs 0 and 1 with peer access both ways. A one-GPU machine fails the check with that
/// reason rather than passing it unchecked (`--skip two_gpus` leaves these checks out there).
fn two() -> (Gpu, Gpu) {
    setup();
    let count = devices::device_count().unwrap_or_else(|e| panic!("{e:#}"));
    assert!(
        count >= 2,
        "this check needs two GPUs and this machine has {count} (run with --skip two_gpus)"
    );
    let (a, b) = (open(0), open(1));
    assert!(devices::enable_peer_access(&a, &b).unwrap(), "no peer access 0 -> 1");
    assert!(devices::enable_peer_access(&b, &a).unwrap(), "no peer access 1 -> 0");
    (a, b)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_copy_kernel_copies_every_byte_at_odd_sizes() {
    let gpu = open(0);
    let k = PeerKernels::load(&gpu).unwrap_or_else(|e| panic!("{e:#}"));
    for bytes in [1usize, 15, 16, 17, 4095, 65_537, 1_000_003, (8 << 20) + 13] {
        let host = inputs::random_bytes(bytes, bytes as u64);
        let src = gpu.stream.clone_htod(&host).unwrap();
        let mut dst = gpu.stream.alloc_zeros::<u8>(bytes).unwrap();
        gpu.poison(&mut dst).unwrap();
        use cudarc::driver::DevicePtr;
        let (s, d) = (src.device_ptr(&gpu.stream).0, dst.device_ptr(&gpu.stream).0);
        unsafe { k.copy(&gpu.stream, s, d, bytes).unwrap() };
        let got = gpu.stream.clone_dtoh(&dst).unwrap();
        verify::check_exact("peer_copy", &format!("{bytes} bytes"), &got, &host)
            .unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_chase_ends_where_the_cpu_says() {
    let gpu = open(0);
    let k = PeerKernels::load(&gpu).unwrap();
    let lat = peer::measure_latency(&gpu, &k, None, (1 << 20) + 4096, 777, 2, 5)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(lat.len(), 2, "own memory and host memory");
    for l in &lat {
        let (ns, _, _) = l.ns();
        assert!(ns > 10.0 && ns < 100_000.0, "{l:?}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn atax_on_one_gpu_matches_the_cpu() {
    let gpu = open(0);
    let k = [AtaxGpu::load(&gpu).unwrap()];
    let host = HostProblem::new(&gpu, &[5, 1003], 1003, 9).unwrap();
    let points = atax::measure(&[&gpu], &k, None, &host, &[5, 1003], 2, |_| {})
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(points.len(), 2);
    assert!(points.iter().all(|p| p.with_all_reduce.is_none()));
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_every_path_delivers_every_byte() {
    let (a, b) = two();
    let (ka, kb) = (PeerKernels::load(&a).unwrap(), PeerKernels::load(&b).unwrap());
    let pair = Pair { a: &a, b: &b, kernels_a: &ka, kernels_b: &kb, peer_access: true };
    let sizes = [4096 + 3, (1 << 20) + 100, 3 << 20];
    let (points, in_flight) = peer::measure_paths(&pair, &sizes, 2, 7, |_| {})
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(points.len(), sizes.len() * Path::ALL.len());
    assert!(points.iter().all(|p| p.gbps().median > 0.0));
    let blocks = peer::sweep_blocks(ka.full_grid()).len()
        + peer::sweep_blocks(kb.full_grid()).len();
    assert_eq!(in_flight.len(), blocks, "every grid of the sweep, both directions");
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_the_peer_chase_and_the_time() {
    let (a, b) = two();
    let kb = PeerKernels::load(&b).unwrap();
    let lat = peer::measure_latency(&b, &kb, Some(&a), 8 << 20, 1000, 2, 3)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(lat.len(), 3);
    // Work on both GPUs: the time spans the slower one.
    let streams = devices::streams_of(&[&a, &b]);
    let plan = Plan::new(1, 3, L2::Cold);
    let t = time_streams(&streams, &[&a, &b], plan, 2, || Ok(())).unwrap();
    assert!(t.median_ms >= 0.0);
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_every_collective_matches_the_cpu_at_odd_sizes() {
    let (a, b) = two();
    let gpus = [&a, &b];
    let comms = Comms::new(&gpus).unwrap_or_else(|e| panic!("{e:#}"));
    for c in Collective::ALL {
        let points = collectives::measure(
            &gpus,
            &comms,
            c,
            &[8, 12, 1000, 65_540, 3 << 20],
            2,
            11,
            |_| {},
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(points.len(), 5);
        assert!(points.iter().all(|p| p.bytes % 8 == 0 && p.time.median_ms > 0.0));
    }
    assert!(nccl::version().unwrap().starts_with("2."));
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_atax_split_matches_the_cpu_on_every_gpu() {
    let (a, b) = two();
    let gpus = [&a, &b];
    let k = [AtaxGpu::load(&a).unwrap(), AtaxGpu::load(&b).unwrap()];
    let comms = Comms::new(&gpus).unwrap();
    let rows = [4, 7, 1003];
    let host = HostProblem::new(&a, &rows, 333, 4).unwrap();
    let points = atax::measure(&gpus, &k, Some(&comms), &host, &rows, 2, |_| {})
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(points.len(), 2 * rows.len(), "one and two GPUs at every size");
    assert!(points.iter().filter(|p| p.gpus == 2).all(|p| p.with_all_reduce.is_some()));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_cmm_batch_on_one_gpu_matches_the_cpu() {
    let gpu = open(0);
    if let Some(why) = cmm::unmet_need(0, &gpu) {
        println!("skipped: the CMM batch: {why}");
        return;
    }
    // Five chains of 131 matrices: three tiles per side, every tiled kernel of the solve.
    let points =
        cmm::measure(&[&gpu], 5, 131, 2, 3, |_| {}).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(points.len(), 1);
    assert_eq!((points[0].gpus, points[0].most_per_gpu), (1, 5));
}

/// Every GPU of the machine, each with peer access to every other.
fn all_gpus() -> Vec<Gpu> {
    let (a, b) = two();
    let count = devices::device_count().unwrap();
    let mut gpus = vec![a, b];
    gpus.extend((2..count).map(open));
    for i in 0..count {
        for j in (0..count).filter(|&j| j != i) {
            assert!(devices::enable_peer_access(&gpus[i], &gpus[j]).unwrap());
        }
    }
    gpus
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_every_pair_and_fan_out_delivers_every_byte() {
    let gpus = all_gpus();
    let refs: Vec<&Gpu> = gpus.iter().collect();
    let bytes = (1 << 20) + 100;
    let points = peer::measure_pairs(&refs, bytes, 2, 9, |_| {})
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(points.len(), PairCopy::all(gpus.len()).len());
    assert!(points.iter().all(|p| p.bytes == bytes && p.gbps().median > 0.0));
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_the_cmm_batch_split_matches_the_cpu_on_every_count() {
    let gpus = all_gpus();
    let refs: Vec<&Gpu> = gpus.iter().collect();
    if let Some(why) = refs.iter().enumerate().find_map(|(i, g)| cmm::unmet_need(i, g))
    {
        println!("skipped: the CMM batch: {why}");
        return;
    }
    // Seven chains: split unevenly over two GPUs (3 and 4) and four (1, 2, 2, 2).
    let points =
        cmm::measure(&refs, 7, 131, 2, 5, |_| {}).unwrap_or_else(|e| panic!("{e:#}"));
    let counts: Vec<usize> = points.iter().map(|p| p.gpus).collect();
    assert_eq!(counts, cmm::counts(gpus.len(), 7));
    assert_eq!(points[1].most_per_gpu, 4);
}

#[test]
#[ignore = "needs a CUDA GPU, and a second one with peer access"]
fn two_gpus_collectives_over_every_count_match_the_cpu() {
    let gpus = all_gpus();
    let refs: Vec<&Gpu> = gpus.iter().collect();
    for k in atax::gpu_counts(gpus.len()).into_iter().filter(|&k| k >= 2) {
        let comms = Comms::new(&refs[..k]).unwrap_or_else(|e| panic!("{e:#}"));
        let points = collectives::measure(
            &refs[..k],
            &comms,
            Collective::ReduceScatter,
            &[8, 1000, 65_540],
            2,
            13,
            |_| {},
        )
        .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(points.iter().all(|p| p.ranks == k));
    }
}
