//! The other ceilings a roofline needs: how many floating-point operations per second
//! the GPU does (FP32 and FP64 multiply-adds in registers) and how many bytes per
//! second its L2 cache delivers when a launch is long enough to measure the cache and
//! not the launch.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::harness::ceiling::CeilingKernel;
use crate::harness::counters::{Case, Quantity};
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Tolerance};
use crate::harness::{inputs, FullQuick, Gpu, Stats};

/// Threads per block of both kernels.
const BLOCK: u32 = 256;
/// Multiply-add steps per chain and thread.
pub const FMA_ITERS: FullQuick<u32> = FullQuick::new(8192, 256);
/// Passes over the L2-resident buffer inside one launch.
pub const L2_PASSES: FullQuick<u32> = FullQuick::new(64, 4);

/// A verified, timed arithmetic or bandwidth ceiling.
#[derive(Debug, Clone)]
pub struct Peak {
    /// Operations (FLOPs) or bytes of one launch.
    pub work: f64,
    pub stats: Stats,
}

impl Peak {
    /// Work per second, at the median, best and worst repetition.
    pub fn rate(&self) -> crate::harness::stats::Rate {
        self.stats.rate(self.work)
    }
}

/// The multiply-add chains' starting values, multiplier and addend: they converge to
/// `c / (1 - m)`, far from overflow and from denormals.
fn chain_seed<T: From<f32>>() -> Vec<T> {
    let mut seed: Vec<T> = (0..8).map(|k| T::from(0.5 + 0.125 * k as f32)).collect();
    seed.push(T::from(0.999_75));
    seed.push(T::from(0.000_5));
    seed
}

/// The sum one thread of `fma_peak_*` writes, computed the way the kernel computes it.
pub fn fma_chains_reference<T>(seed: &[T], iters: u32, fma: impl Fn(T, T, T) -> T) -> T
where
    T: Copy + std::ops::Add<Output = T>,
{
    let (m, c) = (seed[8], seed[9]);
    let mut a: Vec<T> = seed[..8].to_vec();
    for _ in 0..iters {
        for x in a.iter_mut() {
            *x = fma(*x, m, c);
        }
    }
    a[1..].iter().fold(a[0], |sum, &x| sum + x)
}

fn full_grid(
    gpu: &Gpu,
    table: &KernelTable<CeilingKernel>,
    k: CeilingKernel,
) -> anyhow::Result<LaunchConfig> {
    let per_sm =
        table.get(k).occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)?;
    Ok(LaunchConfig {
        grid_dim: (gpu.info.sms as u32 * per_sm.max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

// ANCHOR: measure_fma
/// Verifies, then times, `fma_peak_f32` (`double = false`) or `fma_peak_f64` on a grid
/// that fills every SM: 16 FLOPs per thread and step.
pub fn measure_fma(
    gpu: &Gpu,
    table: &KernelTable<CeilingKernel>,
    double: bool,
    iters: u32,
    plan: Plan,
) -> anyhow::Result<Peak> {
    if double {
        fma_peak::<f64>(gpu, table, CeilingKernel::FmaF64, f64::mul_add, iters, plan)
    } else {
        fma_peak::<f32>(gpu, table, CeilingKernel::FmaF32, f32::mul_add, iters, plan)
    }
}

fn fma_peak<T>(
    gpu: &Gpu,
    table: &KernelTable<CeilingKernel>,
    kernel: CeilingKernel,
    fma: fn(T, T, T) -> T,
    iters: u32,
    plan: Plan,
) -> anyhow::Result<Peak>
where
    T: From<f32> + Copy + std::ops::Add<Output = T> + PartialEq + std::fmt::Debug,
    T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Default + Unpin,
{
    let cfg = full_grid(gpu, table, kernel)?;
    let threads = cfg.grid_dim.0 as usize * BLOCK as usize;
    let seed: Vec<T> = chain_seed();
    // Every thread computes the same chains: the CPU's fused multiply-add rounds the
    // same way.
    let want = vec![fma_chains_reference(&seed, iters, fma); threads];
    let seed = gpu.stream.clone_htod(&seed)?;
    let mut out = gpu.stream.alloc_zeros::<T>(threads)?;
    let (f, iters_arg) = (table.get(kernel), iters as i32);
    let size = format!("{threads} threads x {iters} steps");
    // Each step of each thread is 8 FMAs in a loop unrolled 16 times: about one warp
    // instruction per FMA (the loop's own instructions are 1 in 128).
    let warps = (threads / 32) as f64;
    gpu.count_next(
        Case::new(format!("{} multiply-add, {iters} steps", kernel.function()))
            .predict(Quantity::Instructions, warps * 8.0 * iters as f64),
    );
    let verified = gpu.verify_then_time_output(
        &mut out,
        |s, out| {
            // SAFETY: (seed: 10 elements, out: one per thread, iters) as the kernel
            // takes.
            unsafe {
                s.launch_builder(f).arg(&seed).arg(out).arg(&iters_arg).launch(cfg)?
            };
            Ok(())
        },
        |got| verify::check_exact(&kernel.function(), &size, got, &want),
        &[plan],
    )?;
    let work = threads as f64 * f64::from(iters) * 16.0;
    Ok(Peak { work, stats: verified.times[0].clone() })
}
// ANCHOR_END: measure_fma

/// The sums `l2_read` writes, per thread, in double precision: thread `t` reads the
/// float4s `t, t + threads, ...` in every pass.
pub fn l2_read_reference(src: &[f32], threads: usize, passes: u32) -> Vec<f64> {
    let n4 = src.len() / 4;
    (0..threads)
        .map(|t| {
            let one_pass: f64 = (t..n4)
                .step_by(threads)
                .map(|i| {
                    src[4 * i..4 * i + 4].iter().map(|&x| f64::from(x)).sum::<f64>()
                })
                .sum();
            one_pass * f64::from(passes)
        })
        .collect()
}

/// Verifies, then times, `passes` reads of a buffer of `bytes` bytes (a multiple of 16
/// that fits in L2) inside one launch, L2 warm.
pub fn measure_l2_read(
    gpu: &Gpu,
    table: &KernelTable<CeilingKernel>,
    bytes: usize,
    passes: u32,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Peak> {
    anyhow::ensure!(
        bytes.is_multiple_of(16) && bytes > 0,
        "the L2 buffer is whole float4s"
    );
    let cfg = full_grid(gpu, table, CeilingKernel::L2Read)?;
    let threads = cfg.grid_dim.0 as usize * BLOCK as usize;
    let host = inputs::random_f32(bytes / 4, seed);
    let want = l2_read_reference(&host, threads, passes);
    let src = gpu.stream.clone_htod(&host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(threads)?;
    let (n4, passes_arg) = ((bytes / 16) as u64, passes as i32);
    let f = table.get(CeilingKernel::L2Read);
    let size = format!("{bytes} bytes x {passes} passes");
    // Cold L2 under the counters: the first pass misses, every later one hits.
    gpu.count_next(
        Case::new(format!("L2 read, {} MiB x {passes} passes", bytes >> 20))
            .predict(Quantity::DramBytes, bytes as f64)
            .predict(
                Quantity::L2HitPercent,
                100.0 * (passes as f64 - 1.0) / passes as f64,
            ),
    );
    // Float sums of a few hundred terms in [-4, 4): far inside this tolerance; NaN
    // never is.
    let tol = Tolerance::new(1e-3, 1e-4);
    let verified = gpu.verify_then_time_output(
        &mut out,
        |s, out| {
            // SAFETY: (src as float4s, n4, passes, out: one per thread) as the kernel
            // takes.
            unsafe {
                s.launch_builder(f)
                    .arg(&src)
                    .arg(&n4)
                    .arg(&passes_arg)
                    .arg(out)
                    .launch(cfg)?
            };
            Ok(())
        },
        |got| verify::check_close("l2_read", &size, got, &want, tol),
        &[plan],
    )?;
    Ok(Peak {
        work: bytes as f64 * f64::from(passes),
        stats: verified.times[0].clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chains_converge_without_overflow_or_denormals() {
        // Each chain tends to c / (1 - m), about 2; eight of them to about 16.
        let seed: Vec<f32> = chain_seed();
        let sum = fma_chains_reference(&seed, 100_000, f32::mul_add);
        assert!((sum - 16.0).abs() < 0.01, "{sum}");
        let seed: Vec<f64> = chain_seed();
        let limit = 8.0 * seed[9] / (1.0 - seed[8]);
        let sum = fma_chains_reference(&seed, 100_000, f64::mul_add);
        assert!((sum - limit).abs() < 1e-9 * limit, "{sum} against {limit}");
    }

    #[test]
    fn each_thread_sums_its_own_float4s_in_every_pass() {
        let src: Vec<f32> = (0..24).map(|i| i as f32).collect(); // six float4s
        let sums = l2_read_reference(&src, 4, 2);
        // Thread 0 reads float4s 0 and 4: (0+1+2+3) + (16+17+18+19) = 76, twice.
        assert_eq!(sums[0], 152.0);
        assert_eq!(sums[3], 2.0 * (12.0 + 13.0 + 14.0 + 15.0));
        assert_eq!(sums.len(), 4);
    }
}
