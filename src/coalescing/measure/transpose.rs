//! The transposes (and the tile-shaped copy): verified at any size, timed at one.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::coalescing::counted;
use crate::coalescing::reference;
use crate::coalescing::transpose::TransposeKernel;
use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, UsageError};

use super::kernels::{Kernels, Measurement};

/// The largest side the transposes accept: the grid's y dimension holds at most 65535 tiles.
pub const MAX_TRANSPOSE_SIDE: usize = 65_535 * 32;

/// Enqueues one transpose kernel (or the tile-shaped copy) on a `rows` × `cols` input.
pub fn launch_transpose(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    kernel: TransposeKernel,
    input: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    (rows, cols): (usize, usize),
) -> anyhow::Result<()> {
    assert!(input.len() >= rows * cols && out.len() >= rows * cols);
    let (gx, gy) = kernel.grid(rows as u64, cols as u64);
    let cfg = LaunchConfig {
        grid_dim: (gx, gy, 1),
        block_dim: (32, kernel.block_rows() as u32, 1),
        shared_mem_bytes: 0,
    };
    let (rows, cols) = (rows as u64, cols as u64);
    // SAFETY: matches (const float* in, float* out, u64 rows, u64 cols); every access checks
    // its row and column against rows and cols.
    unsafe {
        stream
            .launch_builder(kernels.transpose(kernel))
            .arg(input)
            .arg(out)
            .arg(&rows)
            .arg(&cols)
            .launch(cfg)?
    };
    Ok(())
}

// ANCHOR: measure_transposes
/// Verifies each kernel of `which` on a random `rows` × `cols` matrix against the
/// CPU (output poisoned first), and times it right after when `plan` is given.
pub fn measure_transposes(
    gpu: &Gpu,
    kernels: &Kernels,
    which: &[TransposeKernel],
    (rows, cols): (usize, usize),
    plan: Option<Plan>,
    seed: u64,
) -> anyhow::Result<Vec<(TransposeKernel, Option<Measurement>)>> {
    let fits = |side| (1..=MAX_TRANSPOSE_SIDE).contains(&side);
    if !fits(rows) || !fits(cols) {
        let why =
            format!("a transpose needs 1 to {MAX_TRANSPOSE_SIDE} rows and columns");
        return Err(UsageError(format!("{why}, not {rows} x {cols}")).into());
    }
    gpu.ensure_fits(2 * rows * cols * 4, &format!("a {rows} x {cols} transpose"))?;
    let input_host = inputs::random_f32(rows * cols, seed);
    let transposed = reference::transpose(&input_host, rows, cols);
    let input = gpu.stream.clone_htod(&input_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(rows * cols)?;
    let size = format!("{rows} x {cols}");
    let mut results = Vec::new();
    for &kernel in which {
        let want = if kernel.transposes() { &transposed } else { &input_host };
        if plan.is_some() {
            gpu.count_next(counted::transpose_case(kernel, rows, cols));
        }
        let verified = gpu.verify_then_time_output(
            &mut out,
            |s, out| launch_transpose(s, kernels, kernel, &input, out, (rows, cols)),
            |got| verify::check_exact(&kernel.function(), &size, got, want),
            plan.as_slice(),
        )?;
        let measurement = verified.times.first().map(|stats| Measurement {
            stats: stats.clone(),
            useful_bytes: 2 * (rows * cols * 4) as u64, // each element read, written
        });
        results.push((kernel, measurement));
    }
    Ok(results)
}
// ANCHOR_END: measure_transposes
