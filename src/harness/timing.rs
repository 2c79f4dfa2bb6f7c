//! Timing with CUDA events.
//!
//! Work on the GPU is asynchronous: a host clock read right after a launch measures the launch,
//! not the kernel. An *event* is a timestamp the GPU writes when the stream reaches it, so two
//! events around the work measure the work. Every measurement here:
//!
//! 1. runs `warmup` untimed repetitions (module load, first-touch page mapping, clock ramp-up);
//! 2. runs `reps` timed repetitions, each between its own pair of events (timing enabled —
//!    cudarc's default events have timing *disabled*);
//! 3. states what the L2 cache holds when each repetition starts ([`L2::Warm`] or [`L2::Cold`]).

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::ceiling::CeilingKernel;
use super::gpu::Gpu;
use super::kernels::KernelTable;
use super::stats::Stats;
use super::toolchain;

/// What the L2 cache holds when a timed repetition starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum L2 {
    /// Whatever the previous repetition left: inputs smaller than L2 are served from it.
    Warm,
    /// A buffer twice the size of L2 is read between repetitions (outside the timed
    /// region), so every input starts in device memory and L2 holds no dirty line.
    Cold,
}

impl std::fmt::Display for L2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            L2::Warm => "warm",
            L2::Cold => "cold",
        })
    }
}

/// How many repetitions, and in which cache state.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub warmup: usize,
    pub reps: usize,
    pub l2: L2,
}

impl Plan {
    pub fn new(warmup: usize, reps: usize, l2: L2) -> Self {
        assert!(reps > 0, "a measurement needs at least one repetition");
        Self { warmup, reps, l2 }
    }
}

impl Gpu {
    /// An event that records a timestamp (cudarc's default event does not).
    pub fn timing_event(&self) -> anyhow::Result<CudaEvent> {
        Ok(self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?)
    }

    /// Makes L2 cold on the timing stream: reads a buffer twice the L2 size that nothing
    /// writes after its allocation (`flush_read` in `kernels/ceilings.cu`). Whatever an
    /// earlier repetition left in L2 is evicted, and its dirty lines written back, before the
    /// timed work starts; what the flush leaves in L2 is clean, so the timed work pays for no
    /// write-back but its own. (A memset of the same buffer evicts as well, but leaves L2 full
    /// of dirty lines that the next kernel's misses must write back: a short kernel timed
    /// after it looks slower than it is.)
    pub fn flush_l2(&self) -> anyhow::Result<()> {
        let mut guard = self.l2_flush.borrow_mut();
        if guard.is_none() {
            *guard = Some(L2Flush::new(self)?);
        }
        guard.as_ref().unwrap().launch(&self.stream)
    }

    /// Times `work` under `plan`; see [`time`].
    pub fn time<F>(&self, plan: Plan, work: F) -> anyhow::Result<Stats>
    where
        F: FnMut(&Arc<CudaStream>) -> anyhow::Result<()>,
    {
        time(self, plan, work)
    }

    /// Like [`Gpu::time`], but each repetition runs `work` `batch` times back to back and the
    /// sample is the per-call average: for work too short for one event pair to resolve
    /// (an event timestamp has a resolution of about half a microsecond).
    pub fn time_batched<F>(
        &self,
        plan: Plan,
        batch: usize,
        mut work: F,
    ) -> anyhow::Result<Stats>
    where
        F: FnMut(&Arc<CudaStream>) -> anyhow::Result<()>,
    {
        assert!(batch > 0);
        let stats = self.time(plan, |s| {
            for _ in 0..batch {
                work(s)?;
            }
            Ok(())
        })?;
        Ok(stats.per(batch))
    }
}

// ANCHOR: time
/// Times `work` (which enqueues GPU work on the stream it is given) under `plan`.
/// Each sample is the event-to-event time of one repetition, in milliseconds.
pub fn time<F>(gpu: &Gpu, plan: Plan, mut work: F) -> anyhow::Result<Stats>
where
    F: FnMut(&Arc<CudaStream>) -> anyhow::Result<()>,
{
    for _ in 0..plan.warmup {
        work(&gpu.stream)?;
    }
    let mut pairs = Vec::with_capacity(plan.reps);
    for _ in 0..plan.reps {
        if plan.l2 == L2::Cold {
            // Before the first event: the flush is not part of the work.
            gpu.flush_l2()?;
        }
        let (start, stop) = (gpu.timing_event()?, gpu.timing_event()?);
        start.record(&gpu.stream)?;
        work(&gpu.stream)?;
        stop.record(&gpu.stream)?;
        pairs.push((start, stop));
    }
    // One synchronisation at the end: repetitions run back to back, as they
    // would in real use.
    gpu.stream.synchronize()?;
    let mut samples = Vec::with_capacity(pairs.len());
    for (start, stop) in &pairs {
        // The driver's time between the events (the entry point this driver has).
        let ms =
            toolchain::event_elapsed_ms(start, stop).map_err(anyhow::Error::msg)?;
        samples.push(ms as f64);
    }
    Stats::from_samples(&samples)
        .ok_or_else(|| anyhow::anyhow!("timing produced no valid samples"))
}
// ANCHOR_END: time

/// Times `work` on the host clock: `warmup` untimed runs, then `reps` timed ones, each sample
/// in milliseconds. For CPU programs, and for GPU work whose cost includes the host (a
/// transfer from pageable memory, a launch call) — `work` must synchronise what it starts.
pub fn time_host<R>(
    warmup: usize,
    reps: usize,
    mut work: impl FnMut() -> anyhow::Result<R>,
) -> anyhow::Result<Stats> {
    assert!(reps > 0, "a measurement needs at least one repetition");
    for _ in 0..warmup {
        work()?;
    }
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = std::time::Instant::now();
        work()?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Stats::from_samples(&samples)
        .ok_or_else(|| anyhow::anyhow!("no valid host timings"))
}

/// The state of [`Gpu::flush_l2`]: its buffer, read by its kernel.
pub(crate) struct L2Flush {
    kernels: KernelTable<CeilingKernel>,
    /// Twice the L2 (at least 2 MiB), zeros, never written after [`L2Flush::new`].
    buffer: CudaSlice<u32>,
    /// The word `flush_read` would store to; it never does.
    sink: CudaSlice<u32>,
}

impl L2Flush {
    const BLOCK: u32 = 256;

    fn new(gpu: &Gpu) -> anyhow::Result<Self> {
        let bytes = 2 * gpu.info.l2_bytes.max(1 << 20);
        let flush = Self {
            kernels: KernelTable::load(gpu)?,
            buffer: gpu.stream.alloc_zeros::<u32>(bytes / 4)?,
            sink: gpu.stream.alloc_zeros::<u32>(1)?,
        };
        // Zeroing the buffer left its last lines dirty in L2, and the first sweep would only
        // hit them: a second sweep evicts them (its first half misses), so from now on every
        // flush leaves L2 clean.
        flush.launch(&gpu.stream)?;
        flush.launch(&gpu.stream)?;
        Ok(flush)
    }

    fn launch(&self, stream: &Arc<CudaStream>) -> anyhow::Result<()> {
        let n_vec = (self.buffer.len() / 4) as u64;
        let blocks = n_vec.div_ceil(Self::BLOCK as u64) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (Self::BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // The buffer holds zeros, whose XOR is 0: `never` = 1 keeps the store from happening.
        let never = 1u32;
        let f = self.kernels.get(CeilingKernel::FlushRead);
        // SAFETY: flush_read takes (const uint4*, unsigned long long, unsigned int,
        // unsigned int*); the grid covers n_vec uint4 of the buffer, and sink has one word.
        unsafe {
            stream
                .launch_builder(f)
                .arg(&self.buffer)
                .arg(&n_vec)
                .arg(&never)
                .arg(&self.sink)
                .launch(cfg)?
        };
        Ok(())
    }
}
