//! Pointer chases through global, shared and constant memory: the latency of one dependent
//! load against the footprint it walks.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{verify, Gpu, Stats, UsageError};
use crate::memory_spaces::counted;
use crate::memory_spaces::{
    reference, BLOCK, CHASE_CONST_MAX, KERNEL_FILE, LINE_ELEMENTS,
};

use super::kernels::{Kernels, MemoryKernel};

/// Where a pointer chase keeps its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChaseSpace {
    /// A global buffer, one chain element per 128-byte line.
    Global,
    /// Copied into dynamic shared memory by the block, then followed by thread 0.
    Shared,
    /// `chase_const_next`, set from the host.
    Constant,
}

impl ChaseSpace {
    pub const ALL: [ChaseSpace; 3] =
        [ChaseSpace::Global, ChaseSpace::Shared, ChaseSpace::Constant];

    pub fn label(self) -> &'static str {
        match self {
            ChaseSpace::Global => "global (one element per 128-byte line)",
            ChaseSpace::Shared => "shared",
            ChaseSpace::Constant => "constant",
        }
    }

    /// `u32` elements between consecutive chain elements.
    pub fn stride(self) -> usize {
        match self {
            ChaseSpace::Global => LINE_ELEMENTS,
            ChaseSpace::Shared | ChaseSpace::Constant => 1,
        }
    }

    /// The largest footprint this space can hold: shared memory without the opt-in (48 KiB),
    /// the constant array's size; global memory is bounded by the device only.
    pub fn max_footprint(self) -> usize {
        match self {
            ChaseSpace::Global => usize::MAX,
            ChaseSpace::Shared => 48 * 1024,
            ChaseSpace::Constant => CHASE_CONST_MAX * 4,
        }
    }
}

/// One pointer chase: where, over how many bytes, how many loads per repetition, and the
/// time of a repetition.
#[derive(Debug, Clone)]
pub struct ChaseResult {
    pub space: ChaseSpace,
    pub footprint_bytes: usize,
    pub steps: u64,
    pub stats: Stats,
}

impl ChaseResult {
    /// Nanoseconds per load at the median, fastest and slowest repetition.
    pub fn ns_per_load(&self) -> (f64, f64, f64) {
        let ns = |ms: f64| ms * 1e6 / self.steps as f64;
        (ns(self.stats.median_ms), ns(self.stats.min_ms), ns(self.stats.max_ms))
    }
}

fn launch_chase(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    space: ChaseSpace,
    next: &CudaSlice<u32>,
    position: &mut CudaSlice<u32>,
    steps: u64,
) -> anyhow::Result<()> {
    let f = kernels.get(MemoryKernel::Chase(space));
    let one =
        LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: each matches its kernel's parameters; every value in the chain is an index of an
    // element of the chain (see reference::chain), so no load leaves it.
    unsafe {
        match space {
            ChaseSpace::Global => stream
                .launch_builder(f)
                .arg(next)
                .arg(position)
                .arg(&steps)
                .launch(one)?,
            ChaseSpace::Shared => {
                let len = next.len() as u32;
                let cfg = LaunchConfig {
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: len * 4,
                    ..one
                };
                stream
                    .launch_builder(f)
                    .arg(next)
                    .arg(&len)
                    .arg(position)
                    .arg(&steps)
                    .launch(cfg)?
            }
            ChaseSpace::Constant => {
                stream.launch_builder(f).arg(position).arg(&steps).launch(one)?
            }
        }
    };
    Ok(())
}

/// Verifies, then times, a chase over `footprint_bytes` in `space`: `steps` dependent loads
/// per repetition. A first walk passes through the whole footprint (or enough of it to fill
/// L2 twice), so what fits in a cache is in it; each launch continues where the last stopped.
pub fn measure_chase(
    gpu: &Gpu,
    kernels: &Kernels,
    space: ChaseSpace,
    footprint_bytes: usize,
    steps: u64,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<ChaseResult> {
    let stride = space.stride();
    let slots = footprint_bytes / (4 * stride);
    if slots < 2
        || footprint_bytes > space.max_footprint()
        || slots * stride > u32::MAX as usize
        || steps == 0
    {
        let why = format!(
            "a {} chase needs 2 to {} elements",
            space.label(),
            space.max_footprint() / (4 * stride)
        );
        return Err(UsageError(format!(
            "{why} and at least one step, not {footprint_bytes} bytes and {steps} steps"
        ))
        .into());
    }
    let what = format!("a chase over {footprint_bytes} bytes");
    gpu.ensure_fits(slots * stride * 4, &what)?;
    let next_host = reference::chain(slots, stride, seed);
    let next = gpu.stream.clone_htod(&next_host)?;
    if space == ChaseSpace::Constant {
        let mut padded = next_host.clone();
        padded.resize(CHASE_CONST_MAX, 0);
        kernels.module(KERNEL_FILE).set_constant(
            &gpu.stream,
            "chase_const_next",
            &padded,
        )?;
    }
    let start = 0u32;
    let mut position = gpu.stream.clone_htod(&[start])?;
    let size = format!("{footprint_bytes} bytes, {slots} elements");
    let name = MemoryKernel::Chase(space).function();

    // Correct before fast. The position is the walk's input as well as its output, so it
    // holds the start, not poison; instead, the checked walk's length is not a multiple of
    // the cycle's, so its end differs from its start and a kernel that never wrote its
    // position fails too.
    let check_steps = if steps.min(10_000).is_multiple_of(slots as u64) {
        steps.min(10_000) + 1
    } else {
        steps.min(10_000)
    };
    let want = [reference::follow(&next_host, start, check_steps)];
    gpu.verify_then_time(
        &mut position,
        |_, _| Ok(()),
        |s, position| launch_chase(s, kernels, space, &next, position, check_steps),
        |gpu, position| {
            let got = gpu.stream.clone_dtoh(position)?;
            Ok(verify::check_exact(&name, &size, &got, &want)?)
        },
        &[],
    )?;

    let first_pass = slots.min(2 * gpu.info.l2_bytes / 128).max(1) as u64;
    launch_chase(&gpu.stream, kernels, space, &next, &mut position, first_pass)?;
    let counted_steps = counted::chase_steps(footprint_bytes, steps);
    if space == ChaseSpace::Global && gpu.counting() {
        // Under --counters: one more chase, from a flushed L2, long enough to come back
        // to every line several times.
        let case =
            counted::chase_case(footprint_bytes, counted_steps, gpu.info.l2_bytes);
        gpu.count(case, || {
            launch_chase(
                &gpu.stream,
                kernels,
                space,
                &next,
                &mut position,
                counted_steps,
            )
        })?;
    }
    let stats = gpu
        .time(plan, |s| launch_chase(s, kernels, space, &next, &mut position, steps))?;

    // Every launch continued the same walk: its end is known.
    let counted =
        if gpu.counting() && space == ChaseSpace::Global { counted_steps } else { 0 };
    let total =
        check_steps + first_pass + counted + (plan.warmup + plan.reps) as u64 * steps;
    let end = gpu.stream.clone_dtoh(&position)?;
    verify::check_exact(
        &name,
        &format!("{size}, after {total} steps"),
        &end,
        &[reference::follow(&next_host, start, total)],
    )?;
    Ok(ChaseResult { space, footprint_bytes, steps, stats })
}
