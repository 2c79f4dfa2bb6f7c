//! A per-thread histogram in local memory and in registers, with what the compiler gave each.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{verify, Gpu, UsageError};
use crate::memory_spaces::{reference, BLOCK, HIST_BINS};

use super::kernels::{resident_blocks, Kernels, MemoryKernel, Timed};

/// The histogram kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HistogramKernel {
    /// `counts_local[value & 15] += 1`: an index known only at run time.
    Local,
    /// Sixteen compare-and-adds with constant indices.
    Registers,
}

impl HistogramKernel {
    pub const ALL: [HistogramKernel; 2] =
        [HistogramKernel::Local, HistogramKernel::Registers];
}

/// A histogram kernel: what the compiler gave it, and its time. The amount is values counted.
#[derive(Debug, Clone)]
pub struct HistogramResult {
    pub kernel: HistogramKernel,
    pub registers_per_thread: i32,
    pub local_bytes_per_thread: i32,
    pub threads: usize,
    pub timed: Timed,
}

/// Verifies, then times, both histograms on `n` random values, with the same number of
/// threads (enough blocks to fill every SM for the hungrier of the two).
pub fn measure_histograms(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<HistogramResult>> {
    if n == 0 {
        return Err(UsageError("the histograms need at least one value".into()).into());
    }
    let mut blocks = u32::MAX;
    for kernel in HistogramKernel::ALL {
        let f = kernels.get(MemoryKernel::Histogram(kernel));
        blocks = blocks.min(resident_blocks(gpu, f, 0)?);
    }
    let threads = (blocks * BLOCK) as usize;
    let what = format!("histograms of {n} values");
    gpu.ensure_fits(n * 4 + HIST_BINS * threads * 4, &what)?;
    let values_host = reference::random_u32(n, seed);
    let want = reference::histograms(&values_host, threads);
    let values = gpu.stream.clone_htod(&values_host)?;
    let mut counts = gpu.stream.alloc_zeros::<u32>(HIST_BINS * threads)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let n64 = n as u64;
    let mut results = Vec::new();
    for kernel in HistogramKernel::ALL {
        let name = MemoryKernel::Histogram(kernel);
        let f = kernels.get(name);
        let verified = gpu.verify_then_time_output(
            &mut counts,
            |s, counts| {
                // SAFETY: matches histogram_*(const unsigned* values, unsigned* counts,
                // u64 n); counts holds HIST_BINS entries for each of the grid's threads.
                unsafe {
                    s.launch_builder(f)
                        .arg(&values)
                        .arg(counts)
                        .arg(&n64)
                        .launch(cfg)?
                };
                Ok(())
            },
            |got| {
                let size = format!("n={n} threads={threads}");
                verify::check_exact(&name.function(), &size, got, &want)
            },
            &[plan],
        )?;
        results.push(HistogramResult {
            kernel,
            registers_per_thread: f.num_regs()?,
            local_bytes_per_thread: f.local_size_bytes()?,
            threads,
            timed: Timed { stats: verified.time().clone(), amount: n as f64 },
        });
    }
    Ok(results)
}
