//! The GPU's own ceilings: device copy bandwidth, host↔device bandwidth, launch cost.
//!
//! Every later chapter states its results as a fraction of these numbers, measured in the same
//! run with the same functions ([`measure_copy`] in particular).

pub mod exercises;

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Stats, UsageError};

/// Threads per block of the copy kernel.
const COPY_BLOCK: u32 = 256;

/// The copy kernel of `kernels/ceilings.cu`, ready to launch.
pub struct CopyKernel {
    f: CudaFunction,
    grid: u32,
}

impl CopyKernel {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let f = gpu.load("ceilings.cu")?.function("copy_f32")?;
        // Enough resident blocks to keep every SM's memory pipeline full; the kernel strides.
        let per_sm =
            f.occupancy_max_active_blocks_per_multiprocessor(COPY_BLOCK, 0, None)?;
        Ok(Self { f, grid: (gpu.info.sms as u32) * (per_sm.max(1) as u32) })
    }

    // ANCHOR: launch_copy
    /// Enqueues `dst[..n] = src[..n]` on `stream`.
    pub fn launch(
        &self,
        stream: &Arc<CudaStream>,
        src: &CudaSlice<f32>,
        dst: &mut CudaSlice<f32>,
        n: usize,
    ) -> anyhow::Result<()> {
        assert!(src.len() >= n && dst.len() >= n);
        let n64 = n as u64;
        let blocks_needed = n.div_ceil(4).div_ceil(COPY_BLOCK as usize).max(1) as u32;
        let cfg = LaunchConfig {
            grid_dim: (self.grid.min(blocks_needed), 1, 1),
            block_dim: (COPY_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the argument list matches copy_f32(const float*, float*, unsigned long long).
        unsafe {
            stream.launch_builder(&self.f).arg(src).arg(dst).arg(&n64).launch(cfg)?
        };
        Ok(())
    }
    // ANCHOR_END: launch_copy
}

/// Refuses a request for more device memory than is free, before allocating anything.
pub fn ensure_fits(gpu: &Gpu, bytes_needed: usize, what: &str) -> anyhow::Result<()> {
    let (free, _total) = gpu.ctx.mem_get_info()?;
    // Leave room for the context, modules and the L2 flush buffer.
    let usable = free.saturating_sub(512 << 20);
    if bytes_needed > usable {
        return Err(UsageError(format!(
            "{what} needs {:.2} GiB of device memory but only {:.2} GiB is free on {}",
            bytes_needed as f64 / (1u64 << 30) as f64,
            usable as f64 / (1u64 << 30) as f64,
            gpu.info.name
        ))
        .into());
    }
    Ok(())
}

/// What [`measure_copy`] found for one size.
#[derive(Debug, Clone)]
pub struct CopyResult {
    pub bytes: usize,
    pub kernel: Stats,
    pub memcpy: Stats,
}

impl CopyResult {
    /// Bandwidth in GB/s counting bytes read plus bytes written (2 × size), at the median,
    /// best and worst repetition, for the copy kernel.
    pub fn kernel_gbps(&self) -> crate::harness::stats::Rate {
        self.kernel.rate(2.0 * self.bytes as f64 / 1e9)
    }
    pub fn memcpy_gbps(&self) -> crate::harness::stats::Rate {
        self.memcpy.rate(2.0 * self.bytes as f64 / 1e9)
    }
}

// ANCHOR: measure_copy
/// Verifies, then times, a device-to-device copy of `bytes` bytes: our copy kernel and the
/// driver's `cuMemcpyDtoD`, under the same plan.
pub fn measure_copy(
    gpu: &Gpu,
    copy: &CopyKernel,
    bytes: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<CopyResult> {
    let n = bytes / 4;
    ensure_fits(gpu, 2 * n * 4, &format!("a copy of {bytes} bytes"))?;
    let host_src = inputs::random_f32(n, seed);
    let src = gpu.stream.clone_htod(&host_src)?;
    let mut dst = gpu.stream.alloc_zeros::<f32>(n)?;

    // Correct before fast: poison, copy once, compare every element.
    gpu.poison(&mut dst)?;
    copy.launch(&gpu.stream, &src, &mut dst, n)?;
    let got = gpu.stream.clone_dtoh(&dst)?;
    verify::check_exact("copy_f32", &format!("{bytes} bytes"), &got, &host_src)?;
    gpu.poison(&mut dst)?;
    gpu.stream.memcpy_dtod(&src, &mut dst)?;
    verify::check_exact(
        "cuMemcpyDtoD",
        &format!("{bytes} bytes"),
        &gpu.stream.clone_dtoh(&dst)?,
        &host_src,
    )?;
    drop(got);

    let kernel = gpu.time(plan, |s| copy.launch(s, &src, &mut dst, n))?;
    let memcpy = gpu.time(plan, |s| Ok(s.memcpy_dtod(&src, &mut dst)?))?;
    Ok(CopyResult { bytes, kernel, memcpy })
}
// ANCHOR_END: measure_copy

/// Direction of a host↔device transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
}

/// Where the host side of a transfer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMemory {
    /// Ordinary `Vec` memory: the driver copies it through a pinned staging buffer.
    Pageable,
    /// Page-locked (`cuMemHostAlloc` with flags 0 — *not* write-combined, so the CPU can also
    /// read it at full speed): the copy engine reads it directly.
    Pinned,
}

/// Times host↔device copies of `bytes` bytes, after checking a round trip is exact.
pub fn measure_transfer(
    gpu: &Gpu,
    bytes: usize,
    dir: Direction,
    host: HostMemory,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Stats> {
    ensure_fits(gpu, bytes, &format!("a transfer of {bytes} bytes"))?;
    let data = inputs::random_bytes(bytes, seed);
    let mut dev = gpu.stream.alloc_zeros::<u8>(bytes)?;
    let what = format!("{dir:?} {host:?}");
    match host {
        HostMemory::Pageable => {
            let mut back = vec![0u8; bytes];
            gpu.stream.memcpy_htod(&data, &mut dev)?;
            gpu.stream.memcpy_dtoh(&dev, &mut back)?;
            gpu.stream.synchronize()?;
            verify::check_exact(&what, &format!("{bytes} bytes"), &back, &data)?;
            match dir {
                Direction::HostToDevice => {
                    gpu.time(plan, |s| Ok(s.memcpy_htod(&data, &mut dev)?))
                }
                Direction::DeviceToHost => {
                    gpu.time(plan, |s| Ok(s.memcpy_dtoh(&dev, &mut back)?))
                }
            }
        }
        HostMemory::Pinned => {
            // SAFETY: the buffers are written below before anything reads them.
            let mut pinned =
                unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, 0)? };
            pinned.as_mut_slice()?.copy_from_slice(&data);
            let mut back = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, 0)? };
            back.as_mut_slice()?.fill(0);
            gpu.stream.memcpy_htod(&pinned, &mut dev)?;
            gpu.stream.memcpy_dtoh(&dev, &mut back)?;
            gpu.stream.synchronize()?;
            verify::check_exact(
                &what,
                &format!("{bytes} bytes"),
                back.as_slice()?,
                &data,
            )?;
            match dir {
                Direction::HostToDevice => {
                    gpu.time(plan, |s| Ok(s.memcpy_htod(&pinned, &mut dev)?))
                }
                Direction::DeviceToHost => {
                    gpu.time(plan, |s| Ok(s.memcpy_dtoh(&dev, &mut back)?))
                }
            }
        }
    }
}

/// What one empty kernel costs, measured four ways (all in milliseconds per launch).
#[derive(Debug, Clone)]
pub struct LaunchCosts {
    /// GPU time per launch when launches are queued back to back (events around a batch).
    pub back_to_back: Stats,
    /// CPU time of the launch call itself (host clock around a batch, no synchronisation).
    pub host_call: Stats,
    /// One launch followed by a stream synchronisation, on the host clock: the round trip.
    pub round_trip: Stats,
    /// GPU time per node of a CUDA graph holding `batch` empty kernels.
    pub graph_node: Stats,
}

// ANCHOR: measure_launch
/// Measures launch costs with `batch` empty kernels per repetition.
pub fn measure_launch(
    gpu: &Gpu,
    plan: Plan,
    batch: usize,
) -> anyhow::Result<LaunchCosts> {
    let empty = gpu.load("ceilings.cu")?.function("empty")?;
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch = |s: &Arc<CudaStream>| -> anyhow::Result<()> {
        // SAFETY: empty() takes no parameters.
        unsafe { s.launch_builder(&empty).launch(one)? };
        Ok(())
    };
    let back_to_back = gpu.time_batched(plan, batch, launch)?;

    let mut host_call = Vec::with_capacity(plan.reps);
    let mut round_trip = Vec::with_capacity(plan.reps);
    for _ in 0..plan.warmup {
        launch(&gpu.stream)?;
    }
    gpu.stream.synchronize()?;
    for _ in 0..plan.reps {
        let t = Instant::now();
        for _ in 0..batch {
            launch(&gpu.stream)?;
        }
        host_call.push(t.elapsed().as_secs_f64() * 1e3 / batch as f64);
        gpu.stream.synchronize()?;
        let t = Instant::now();
        launch(&gpu.stream)?;
        gpu.stream.synchronize()?;
        round_trip.push(t.elapsed().as_secs_f64() * 1e3);
    }

    // The same batch captured once into a graph, then replayed: one launch call for `batch` nodes.
    gpu.stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    for _ in 0..batch {
        launch(&gpu.stream)?;
    }
    let graph = gpu
        .stream
        .end_capture(CUgraphInstantiate_flags(0))?
        .ok_or_else(|| anyhow::anyhow!("stream capture produced no graph"))?;
    let whole = gpu.time(plan, |_| Ok(graph.launch()?))?;
    let per = |ms: f64| ms / batch as f64;
    let graph_node = Stats {
        median_ms: per(whole.median_ms),
        min_ms: per(whole.min_ms),
        max_ms: per(whole.max_ms),
        mean_ms: per(whole.mean_ms),
        reps: whole.reps,
    };

    let summary =
        |v: &[f64]| Stats::from_samples(v).ok_or_else(|| anyhow::anyhow!("no samples"));
    Ok(LaunchCosts {
        back_to_back,
        host_call: summary(&host_call)?,
        round_trip: summary(&round_trip)?,
        graph_node,
    })
}
// ANCHOR_END: measure_launch
