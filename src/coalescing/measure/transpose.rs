//! The transposes (and the tile-shaped copy): verified at any size, timed at one, and
//! timed again at sides that are not multiples of 32, with packed and with pitched rows.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::coalescing::counted;
use crate::coalescing::reference;
use crate::coalescing::transpose::TransposeKernel;
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::timing::Plan;
use crate::harness::tma::{self, TmaKernel, TmaOp};
use crate::harness::{inputs, verify, Gpu, UsageError};

use super::kernels::{Kernels, Measurement};

/// The largest side the transposes accept: the grid's y dimension holds at most 65535 tiles.
pub const MAX_TRANSPOSE_SIDE: usize = 65_535 * 32;

// ANCHOR: layout
/// How the rows of a matrix lie in device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Each row right after the one before: a row of `len` floats starts `len` floats
    /// after the previous one, so at most sides its start is not sector-aligned.
    Packed,
    /// Each row starts on a multiple of this many floats (what `cudaMallocPitch` does):
    /// the padding at the end of each row is allocated, never read or written.
    Pitched(usize),
}

impl Layout {
    /// Floats from the start of one row to the start of the next, for rows of `len`.
    pub fn pitch(self, len: usize) -> usize {
        match self {
            Layout::Packed => len,
            Layout::Pitched(align) => len.div_ceil(align) * align,
        }
    }
}
// ANCHOR_END: layout

/// The alignment the chapter pitches rows to: 32 floats, 128 bytes, one warp's row of
/// a tile in whole sectors.
pub const PITCH_FLOATS: usize = 32;

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Layout::Packed => write!(f, "packed"),
            Layout::Pitched(a) => write!(f, "pitched to {} B", a * 4),
        }
    }
}

/// Enqueues one transpose kernel (or the tile-shaped copy) on a `rows` × `cols` input
/// whose rows are `in_pitch` floats apart, into an output whose rows are `out_pitch`
/// apart.
pub fn launch_transpose(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    kernel: TransposeKernel,
    input: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    (rows, cols): (usize, usize),
    (in_pitch, out_pitch): (usize, usize),
) -> anyhow::Result<()> {
    let out_rows = if kernel.transposes() { cols } else { rows };
    let out_len = if kernel.transposes() { rows } else { cols };
    assert!(in_pitch >= cols && input.len() >= rows * in_pitch);
    assert!(out_pitch >= out_len && out.len() >= out_rows * out_pitch);
    let (gx, gy) = kernel.grid(rows as u64, cols as u64);
    let cfg = LaunchConfig {
        grid_dim: (gx, gy, 1),
        block_dim: (32, kernel.block_rows() as u32, 1),
        shared_mem_bytes: 0,
    };
    let [rows, cols, in_pitch, out_pitch] =
        [rows, cols, in_pitch, out_pitch].map(|v| v as u64);
    // SAFETY: matches (const float* in, float* out, u64 rows, u64 cols, u64 in_pitch,
    // u64 out_pitch); every access checks its row and column against rows and cols, and
    // the asserts above size both buffers for their pitches.
    unsafe {
        stream
            .launch_builder(kernels.transpose(kernel))
            .arg(input)
            .arg(out)
            .arg(&rows)
            .arg(&cols)
            .arg(&in_pitch)
            .arg(&out_pitch)
            .launch(cfg)?
    };
    Ok(())
}

// ANCHOR: measure_transposes
/// Verifies each kernel of `which` on a random `rows` × `cols` matrix laid out as
/// `layout` (input and output) against the CPU (output poisoned first), and times it
/// right after when `plan` is given.
pub fn measure_transposes(
    gpu: &Gpu,
    kernels: &Kernels,
    which: &[TransposeKernel],
    (rows, cols): (usize, usize),
    layout: Layout,
    plan: Option<Plan>,
    seed: u64,
) -> anyhow::Result<Vec<(TransposeKernel, Option<Measurement>)>> {
    let fits = |side| (1..=MAX_TRANSPOSE_SIDE).contains(&side);
    if !fits(rows) || !fits(cols) {
        let why =
            format!("a transpose needs 1 to {MAX_TRANSPOSE_SIDE} rows and columns");
        return Err(UsageError(format!("{why}, not {rows} x {cols}")).into());
    }
    // Input rows are cols long; the transpose's rows are rows long (the copy's, cols).
    let (in_pitch, t_pitch, c_pitch) =
        (layout.pitch(cols), layout.pitch(rows), layout.pitch(cols));
    let out_len = (cols * t_pitch).max(rows * c_pitch);
    let bytes = (rows * in_pitch + out_len) * 4;
    gpu.ensure_fits(bytes, &format!("a {rows} x {cols} transpose"))?;
    // The padding of each row holds random floats too: no kernel may copy them.
    let input_host = inputs::random_f32(rows * in_pitch, seed);
    let packed: Vec<f32> =
        input_host.chunks(in_pitch).flat_map(|row| &row[..cols]).copied().collect();
    let transposed = reference::transpose(&packed, rows, cols);
    let input = gpu.stream.clone_htod(&input_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(out_len)?;
    let size = format!("{rows} x {cols}, {layout}");
    let mut results = Vec::new();
    for &kernel in which {
        let (want, len, out_pitch) = if kernel.transposes() {
            (&transposed, rows, t_pitch)
        } else {
            (&packed, cols, c_pitch)
        };
        if plan.is_some() {
            gpu.count_next(counted::transpose_case(kernel, rows, cols, layout));
        }
        let verified = gpu.verify_then_time_output(
            &mut out,
            |s, out| {
                let pitches = (in_pitch, out_pitch);
                launch_transpose(s, kernels, kernel, &input, out, (rows, cols), pitches)
            },
            // The rows without their padding.
            |got| {
                let got: Vec<f32> = got
                    .chunks(out_pitch)
                    .take(want.len() / len)
                    .flat_map(|row| &row[..len])
                    .copied()
                    .collect();
                verify::check_exact(&kernel.function(), &size, &got, want)
            },
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

/// The TMA transpose (the chapter "Asynchronous memory on Hopper" explains it) on a random
/// `rows` × `cols` matrix laid out as `layout`: verified against the CPU (output poisoned
/// first), then timed when `plan` is given. `Ok(Err(why))` where the TMA cannot address
/// the rows (a pitch that is not a multiple of 16 bytes), or where the GPU has no TMA (its
/// kernel file needs compute capability 9.0): nothing is launched then.
pub fn measure_tma_transpose(
    gpu: &Gpu,
    table: &KernelTable<TmaKernel>,
    (rows, cols): (usize, usize),
    layout: Layout,
    plan: Option<Plan>,
    seed: u64,
) -> anyhow::Result<Result<Option<Measurement>, String>> {
    let k = TmaKernel::TmaTranspose;
    let f = match table.try_get(k) {
        Ok(f) => f,
        Err(unavailable) => return Ok(Err(unavailable.why.to_string())),
    };
    let (in_pitch, out_pitch) = (layout.pitch(cols), layout.pitch(rows));
    let input_host = inputs::random_f32(rows * in_pitch, seed);
    let packed: Vec<f32> =
        input_host.chunks(in_pitch).flat_map(|row| &row[..cols]).copied().collect();
    let want = reference::transpose(&packed, rows, cols);
    let input = gpu.stream.clone_htod(&input_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(cols * out_pitch)?;
    let shape = (rows, cols);
    let maps = match tma::maps(
        gpu,
        TmaOp::Transpose,
        &input,
        &out,
        shape,
        (in_pitch, out_pitch),
    ) {
        Ok(maps) => maps,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let size = format!("{rows} x {cols}, {layout}");
    let verified = gpu.verify_then_time_output(
        &mut out,
        // `out` is written through the map encoded over it.
        |s, _out| tma::launch(s, f, TmaOp::Transpose, &maps, shape),
        |got| {
            let got: Vec<f32> =
                got.chunks(out_pitch).flat_map(|row| &row[..rows]).copied().collect();
            verify::check_exact(&k.function(), &size, &got, &want)
        },
        plan.as_slice(),
    )?;
    Ok(Ok(verified.times.first().map(|stats| Measurement {
        stats: stats.clone(),
        useful_bytes: 2 * (rows * cols * 4) as u64, // each element read, written
    })))
}
