//! Solutions to the exercises of the chapter "Memory across GPUs" (shown collapsed in the book;
//! the tests below and the book's snippets check them), and the check of kernel exercise
//! 9.5.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::harness::exercise::{check_sizes, Passed, Version};
use crate::harness::{inputs, verify, Gpu};

// ANCHOR: bus_bandwidth
/// nccl-tests' bus bandwidth of an all-reduce of `bytes` bytes over `ranks` GPUs that
/// took `seconds`: the algorithm bandwidth (bytes / seconds) times 2(n − 1)/n, in GB/s.
pub fn all_reduce_bus_gbps(bytes: f64, seconds: f64, ranks: usize) -> f64 {
    let n = ranks as f64;
    bytes / seconds / 1e9 * 2.0 * (n - 1.0) / n
}
// ANCHOR_END: bus_bandwidth

// ANCHOR: in_flight
/// Little's law: the bytes that must be in flight to move `gbps` GB/s over a path whose
/// loads take `latency_ns` nanoseconds each.
pub fn bytes_in_flight(gbps: f64, latency_ns: f64) -> f64 {
    gbps * latency_ns // (1e9 bytes/s) × (1e-9 s) = bytes
}

/// Bytes a copy kernel keeps in flight: `threads` resident threads, each with `loads`
/// loads of `bytes_per_load` bytes outstanding.
pub fn kernel_in_flight(threads: usize, loads: usize, bytes_per_load: usize) -> f64 {
    (threads * loads * bytes_per_load) as f64
}

/// How many SMs, each with `threads_per_sm` resident threads of `loads` loads of
/// `bytes_per_load` bytes, keep enough bytes in flight for `gbps` GB/s at `latency_ns`.
pub fn sms_to_cover(
    gbps: f64,
    latency_ns: f64,
    threads_per_sm: usize,
    loads: usize,
    bytes_per_load: usize,
) -> f64 {
    bytes_in_flight(gbps, latency_ns)
        / kernel_in_flight(threads_per_sm, loads, bytes_per_load)
}
// ANCHOR_END: in_flight

// ANCHOR: latency_bound
/// A collective that costs `latency_us` microseconds whatever its size plus its size
/// over `gbps` GB/s: the size, in bytes, at which the two halves are equal. Below it
/// the time is mostly latency, above it mostly bandwidth.
pub fn half_latency_bytes(latency_us: f64, gbps: f64) -> f64 {
    latency_us * 1e-6 * gbps * 1e9
}
// ANCHOR_END: latency_bound

// ANCHOR: speedup
/// The speedup of splitting work that takes `one_gpu_ms` on one GPU over `gpus` GPUs,
/// when each GPU does an equal share and the partial results then cost `combine_ms` to
/// add up.
pub fn split_speedup(one_gpu_ms: f64, gpus: usize, combine_ms: f64) -> f64 {
    one_gpu_ms / (one_gpu_ms / gpus as f64 + combine_ms)
}

/// The shortest one-GPU time for which the split reaches `target` (below `gpus`).
pub fn smallest_worthwhile_ms(gpus: usize, combine_ms: f64, target: f64) -> f64 {
    assert!(target < gpus as f64, "the speedup stays below the number of GPUs");
    // t / (t/g + c) >= s  <=>  t (1 - s/g) >= s c
    target * combine_ms / (1.0 - target / gpus as f64)
}
// ANCHOR_END: speedup

crate::exercise_kernels! {
    /// Exercise 9.5's kernels: the peer copy as a reader might write it, and as it must be.
    pub enum PeerCopyExercise in "exercises_multi_gpu.cu" {
        Exercise => "peer_copy_exercise",
        Solution => "peer_copy_solution",
    }
}

/// Byte counts exercise 9.5 is checked at: below one float4, around it, a partial last
/// round of loads in flight (of a grid of 8 blocks), and two rounds and a few bytes.
pub const PEER_COPY_SIZES: [usize; 7] =
    [1, 15, 16, 17, 4096 + 3, (1 << 20) + 48, (2 << 20) + 8 * 8 * 256 * 16 + 5];

/// Runs one version of exercise 9.5 at every size of [`PEER_COPY_SIZES`] on one GPU (the
/// source and the destination on the same device: the kernel is the one a peer copy runs):
/// the destination poisoned, one launch of 8 blocks of 256 threads, every byte compared.
pub fn check_peer_copy(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    // A small grid, so that every size leaves a partial round of loads in flight.
    let cfg = LaunchConfig {
        grid_dim: (8, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    check_sizes::<PeerCopyExercise, _>(
        gpu,
        version,
        PEER_COPY_SIZES,
        |f, name, bytes| {
            let src_host = inputs::random_bytes(bytes, bytes as u64);
            let src = gpu.stream.clone_htod(&src_host)?;
            let mut dst = gpu.stream.alloc_zeros::<u8>(bytes)?;
            let (bytes64, size) = (bytes as u64, format!("{bytes} bytes"));
            let verified = gpu.verify_then_time_output(
                &mut dst,
                |s, dst| {
                    // SAFETY: (const void*, void*, u64 bytes) with both buffers `bytes` long.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&src)
                            .arg(dst)
                            .arg(&bytes64)
                            .launch(cfg)?
                    };
                    Ok(())
                },
                |got: &[u8]| verify::check_exact(name, &size, got, &src_host),
                &[],
            )?;
            Ok((size, verified.check.checked))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_bandwidth_of_two_and_eight_gpus() {
        let gib = (1u64 << 30) as f64;
        assert!((all_reduce_bus_gbps(gib, 3.3e-3, 2) - 325.4).abs() < 0.1);
        assert!(
            (all_reduce_bus_gbps(gib, 3.3e-3, 8) / all_reduce_bus_gbps(gib, 3.3e-3, 2)
                - 1.75)
                .abs()
                < 1e-12
        );
    }

    #[test]
    fn a_few_sms_cover_the_link_with_eight_loads_in_flight() {
        let need = bytes_in_flight(450.0, 1500.0);
        assert!((need - 675_000.0).abs() < 1e-6);
        assert!(
            kernel_in_flight(132 * 2048, 1, 16) > need,
            "a full GPU, even one load each"
        );
        let eight = sms_to_cover(450.0, 1500.0, 2048, 8, 16);
        assert!((eight - 675_000.0 / 262_144.0).abs() < 1e-9);
        assert!((sms_to_cover(450.0, 1500.0, 2048, 1, 16) / eight - 8.0).abs() < 1e-9);
    }

    #[test]
    fn latency_and_bandwidth_halves_meet() {
        let b = half_latency_bytes(20.0, 300.0);
        assert!((b - 6e6).abs() < 1e-3);
    }

    #[test]
    fn speedups_of_a_split() {
        assert_eq!(split_speedup(10.0, 2, 0.0), 2.0);
        assert!((split_speedup(1.0, 2, 0.05) - 1.0 / 0.55).abs() < 1e-12);
        let t = smallest_worthwhile_ms(2, 0.02, 1.8);
        assert!((split_speedup(t, 2, 0.02) - 1.8).abs() < 1e-9);
        assert!((t - 0.36).abs() < 1e-9);
    }
}
