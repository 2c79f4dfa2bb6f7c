//! Kernel 2 alone (y = Aᵀ·tmp, A on the device, tmp already computed), launched two ways
//! whose reads of A are coalesced alike: the slides' one thread per column, and the
//! split-rows kernel with 8 warps per 32 columns over row slices. Each is verified, then
//! timed, and its launch is recorded so that the report can derive the warps it puts on
//! each SM and the bytes it can have in flight.

use crate::atax::datasets::{partial_bytes, Dataset};
use crate::atax::device::{
    AtaxFunction, Kernels, TmpKernel, YKernel, BLOCK, SPLIT_WARPS_PER_BLOCK,
};
use crate::atax::element::{address, Element};
use crate::harness::{Gpu, Stats};

use super::kernels::{DeviceProblem, HostProblem};
use super::Plans;

/// The two launches of kernel 2 the chapter compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum YAloneKernel {
    /// The slides' kernel 2: one thread per column, blocks of [`BLOCK`] threads.
    ThreadPerCol,
    /// Blocks of (32, 8) threads, one per 32 columns and row slice, then the sum of the
    /// slices.
    SplitRows,
}

impl YAloneKernel {
    pub const ALL: [YAloneKernel; 2] = [Self::ThreadPerCol, Self::SplitRows];

    pub fn name(self) -> &'static str {
        match self {
            Self::ThreadPerCol => "thread per column (slides' kernel 2)",
            Self::SplitRows => "split rows, 8 warps per 32 columns",
        }
    }
}

/// How a kernel 2 was launched, as the report needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub blocks: u64,
    pub threads_per_block: u32,
    /// Row slices (1 for the thread-per-column kernel).
    pub slices: u32,
    /// Blocks the driver's occupancy calculator lets one SM hold at once.
    pub max_blocks_per_sm: u32,
}

impl Launch {
    /// Warps the grid launches.
    pub fn warps(&self) -> u64 {
        self.blocks * self.threads_per_block.div_ceil(32) as u64
    }
    /// SMs that get at least one block.
    pub fn busy_sms(&self, sms: u32) -> u64 {
        self.blocks.min(sms as u64)
    }
    /// Warps resident on a busy SM at the start: the blocks the grid gives each SM, as many
    /// as fit at once.
    pub fn warps_per_busy_sm(&self, sms: u32) -> u64 {
        let blocks_each = self.blocks.div_ceil(self.busy_sms(sms).max(1));
        blocks_each.min(self.max_blocks_per_sm as u64)
            * self.threads_per_block.div_ceil(32) as u64
    }
    /// Bytes of A the resident warps request when each of their threads has one load of
    /// `elem_bytes` outstanding (a warp's load: 32 neighbours of a row).
    pub fn bytes_per_load_round(&self, sms: u32, elem_bytes: usize) -> u64 {
        self.busy_sms(sms) * self.warps_per_busy_sm(sms) * 32 * elem_bytes as u64
    }
}

/// Kernel 2 alone at one size, verified and (when plans were given) timed.
#[derive(Debug, Clone)]
pub struct YAloneResult {
    pub d: Dataset,
    pub elem: &'static str,
    pub elem_bytes: usize,
    pub kernel: YAloneKernel,
    pub launch: Launch,
    /// Least bytes: A once, tmp read, y written, and the partial rows of the split kernel.
    pub bytes: u64,
    /// `(warm, cold)`.
    pub times: Option<(Stats, Stats)>,
}

/// Verifies kernel 2 both ways on `p` (tmp computed first, outside the timing, by the
/// warp-per-row kernel) and times each under `plans` if given.
pub fn measure_y_alone<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    p: &HostProblem<T>,
    plans: Option<Plans>,
) -> anyhow::Result<Vec<YAloneResult>> {
    let (m, n) = (p.d.m, p.d.n);
    let mut dev = DeviceProblem::upload(gpu, k, p)?;
    let plans: Vec<_> = plans.map(|p| vec![p.warm, p.cold]).unwrap_or_default();
    let mut results = Vec::new();
    for kernel in YAloneKernel::ALL {
        let launch = launch_of(k, kernel, m, n)?;
        let verified = gpu.verify_then_time(
            &mut dev,
            // Poison y and the partials; tmp = A·x is the input, made here, untimed.
            |gpu, dev| {
                gpu.poison(&mut dev.y)?;
                gpu.poison(&mut dev.partials)?;
                gpu.poison(&mut dev.tmp)?;
                let s = &gpu.stream;
                let [a, x, tmp] = [&dev.a, &dev.x, &dev.tmp].map(|b| address(b, s));
                // SAFETY: DeviceProblem::upload sized A, x and tmp for (m, n).
                unsafe { k.launch_tmp(s, TmpKernel::WarpPerRow, a, x, tmp, (m, n)) }
            },
            |s, dev| {
                let [a, tmp, y, partials] =
                    [&dev.a, &dev.tmp, &dev.y, &dev.partials].map(|b| address(b, s));
                // SAFETY: as above; partials holds a row of n per slice.
                unsafe {
                    match kernel {
                        YAloneKernel::ThreadPerCol => {
                            k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))
                        }
                        YAloneKernel::SplitRows => {
                            k.launch_split(s, a, tmp, partials, y, (m, n))
                        }
                    }
                }
            },
            |gpu, dev| p.check(kernel.name(), &gpu.stream.clone_dtoh(&dev.y)?),
            &plans,
        )?;
        let times = match verified.times.as_slice() {
            [warm, cold] => Some((warm.clone(), cold.clone())),
            _ => None,
        };
        let partials = partial_bytes(launch.slices as u64, n, T::BYTES);
        let vectors = ((m + n) * T::BYTES) as u64;
        results.push(YAloneResult {
            d: p.d,
            elem: T::C_NAME,
            elem_bytes: T::BYTES,
            kernel,
            launch,
            bytes: p.d.matrix_bytes(T::BYTES) + vectors + partials,
            times,
        });
    }
    Ok(results)
}

/// The launch `kernel` gets for an `m` × `n` matrix.
fn launch_of<T: Element>(
    k: &Kernels<T>,
    kernel: YAloneKernel,
    m: usize,
    n: usize,
) -> anyhow::Result<Launch> {
    let (function, blocks, threads, slices) = match kernel {
        YAloneKernel::ThreadPerCol => (
            AtaxFunction::YThreadPerCol,
            n.div_ceil(BLOCK as usize).max(1) as u64,
            BLOCK,
            1,
        ),
        YAloneKernel::SplitRows => {
            let shape = k.split_shape(m, n)?;
            (
                AtaxFunction::YSplitRows,
                shape.column_blocks as u64 * shape.slices as u64,
                32 * SPLIT_WARPS_PER_BLOCK,
                shape.slices,
            )
        }
    };
    let max_blocks_per_sm = k
        .function(function)
        .occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)?;
    Ok(Launch { blocks, threads_per_block: threads, slices, max_blocks_per_sm })
}
