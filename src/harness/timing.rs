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
use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtrMut};

use super::gpu::Gpu;
use super::stats::Stats;
use super::toolchain;

/// What the L2 cache holds when a timed repetition starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum L2 {
    /// Whatever the previous repetition left: inputs smaller than L2 are served from it.
    Warm,
    /// A buffer twice the size of L2 is written between repetitions (outside the timed
    /// region), so every input starts in device memory.
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

    /// Writes a buffer twice the L2 size on the timing stream, evicting everything else.
    pub fn flush_l2(&self) -> anyhow::Result<()> {
        let bytes = 2 * self.info.l2_bytes.max(1 << 20);
        let mut guard = self.l2_flush.borrow_mut();
        if guard.is_none() {
            *guard = Some(self.stream.alloc_zeros::<u8>(bytes)?);
        }
        let buf: &mut CudaSlice<u8> = guard.as_mut().unwrap();
        let value = self.flush_count.get().wrapping_add(1);
        self.flush_count.set(value);
        let (ptr, _sync) = buf.device_ptr_mut(&self.stream);
        // SAFETY: ptr and bytes describe the allocation above; the memset is ordered on our stream.
        unsafe {
            cudarc::driver::result::memset_d8_async(
                ptr,
                value,
                bytes,
                self.stream.cu_stream(),
            )?
        };
        Ok(())
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
