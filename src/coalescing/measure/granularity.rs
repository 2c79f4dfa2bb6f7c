//! The stride sweep again, under each setting of the L2 fetch granularity: the driver's limit
//! `CU_LIMIT_MAX_L2_FETCH_GRANULARITY` (`cudaLimitMaxL2FetchGranularity`), the most bytes L2
//! may fetch from device memory for one miss (a hint: 0, 32, 64 or 128 bytes). The limit is
//! set on the chapter's context, read back, and the value found before the sweep is put back
//! afterwards, also when a measurement fails.

use cudarc::driver::sys;

use crate::harness::timing::Plan;
use crate::harness::Gpu;

use super::affine::AffineSweep;
use super::kernels::{Kernels, Measurement};

/// The fetch granularities the sweep is measured at, in bytes.
pub const GRANULARITIES: [usize; 3] = [32, 64, 128];

const LIMIT: sys::CUlimit = sys::CUlimit::CU_LIMIT_MAX_L2_FETCH_GRANULARITY;

// ANCHOR: set_limit
/// The L2 fetch granularity in force on `gpu`'s context, in bytes.
pub fn fetch_granularity(gpu: &Gpu) -> anyhow::Result<usize> {
    gpu.ctx.bind_to_thread()?;
    let mut value = 0usize;
    // SAFETY: writes one usize; the context is current on this thread.
    unsafe { sys::cuCtxGetLimit(&mut value, LIMIT) }.result()?;
    Ok(value)
}

/// Asks for an L2 fetch granularity of `bytes` on `gpu`'s context.
pub fn set_fetch_granularity(gpu: &Gpu, bytes: usize) -> anyhow::Result<()> {
    gpu.ctx.bind_to_thread()?;
    // No kernel of an earlier setting may still be running.
    gpu.stream.synchronize()?;
    // SAFETY: sets a limit of the current context; no pointer involved.
    unsafe { sys::cuCtxSetLimit(LIMIT, bytes) }.result()?;
    Ok(())
}
// ANCHOR_END: set_limit

/// Puts the granularity found at creation back when dropped.
struct Restore<'a> {
    gpu: &'a Gpu,
    bytes: usize,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        if let Err(e) = set_fetch_granularity(self.gpu, self.bytes) {
            eprintln!(
                "could not restore the L2 fetch granularity to {}: {e}",
                self.bytes
            );
        }
    }
}

/// The float stride sweep under one setting.
#[derive(Debug, Clone)]
pub struct GranularityRun {
    /// Bytes asked for with `cuCtxSetLimit`.
    pub requested: usize,
    /// Bytes `cuCtxGetLimit` returned afterwards.
    pub in_force: usize,
    /// Stride → the verified, timed affine read of floats at that stride.
    pub points: Vec<(u64, Measurement)>,
}

/// The sweep at every granularity, and the setting found before it (and restored after).
#[derive(Debug, Clone)]
pub struct GranularitySweep {
    pub default: usize,
    pub runs: Vec<GranularityRun>,
}

/// Verifies and times `dst[i] = src[i * stride]` (floats, `bytes` of source) at every stride
/// of `strides`, once per granularity of [`GRANULARITIES`].
pub fn measure_granularities(
    gpu: &Gpu,
    kernels: &Kernels,
    bytes: usize,
    strides: &[u64],
    plan: Plan,
    seed: u64,
) -> anyhow::Result<GranularitySweep> {
    let default = fetch_granularity(gpu)?;
    let _restore = Restore { gpu, bytes: default };
    let mut buffers = AffineSweep::<f32>::new(gpu, bytes / 4, seed)?;
    let mut runs = Vec::new();
    for requested in GRANULARITIES {
        set_fetch_granularity(gpu, requested)?;
        let in_force = fetch_granularity(gpu)?;
        let mut points = Vec::new();
        for &stride in strides {
            let m = buffers.measure(gpu, kernels, stride as usize, 0, plan)?;
            points.push((stride, m));
        }
        runs.push(GranularityRun { requested, in_force, points });
    }
    Ok(GranularitySweep { default, runs })
}

/// The fraction of the copy ceiling `dst[i] = src[i * stride]` reaches when device memory
/// moves whole aligned blocks of `fetch_bytes` (at least a 32-byte sector): per element the
/// kernel writes `e` bytes and reads `min(stride × e, fetch)` bytes, and needs `2e`. With a
/// 32-byte fetch this is the sector model of Listing 3.2.
pub fn fetch_model_fraction(elem_bytes: u64, stride: u64, fetch_bytes: u64) -> f64 {
    let fetch = fetch_bytes.max(32);
    let read = (stride * elem_bytes).min(fetch);
    2.0 * elem_bytes as f64 / (elem_bytes + read) as f64
}
