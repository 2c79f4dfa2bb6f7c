//! Solutions of the chapter's exercises; `tests/cpu/launch_cpu.rs` checks their answers.
//! The check of the kernel exercise (8.4) is here too, and the readers of the two records
//! the book's solutions take their numbers from (Table 8.1 and Figure 8.3).

use std::path::Path;

use anyhow::Context;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::reference;
use crate::harness::exercise::{check_sizes, Passed, Version};
use crate::harness::inputs::random_f32;
use crate::harness::Gpu;

// ANCHOR: barriers_per_boundary
/// Exercise 8.1: how many barriers of `barrier_ns` cost as much as one boundary (a
/// launch or a graph node) of `boundary_ns`, rounded down.
pub fn barriers_per_boundary(barrier_ns: f64, boundary_ns: f64) -> u64 {
    (boundary_ns / barrier_ns).floor() as u64
}
// ANCHOR_END: barriers_per_boundary

// ANCHOR: stages_needed
/// Exercise 8.2, by Little's law: the bytes of loads each of `sms` SMs must have
/// requested and not yet received to read `read_gbps` GB/s from a memory whose loads
/// take `latency_ns`. Only loads count: a store does not keep its thread waiting.
pub fn load_bytes_in_flight_per_sm(latency_ns: f64, read_gbps: f64, sms: u32) -> f64 {
    latency_ns * read_gbps / sms as f64 // ns × GB/s = bytes
}

/// The fewest cp.async stages of `copy_bytes` per thread that keep `need_bytes` in
/// flight on an SM holding `threads` threads.
pub fn stages_needed(need_bytes: f64, threads: u32, copy_bytes: u32) -> u32 {
    (need_bytes / (threads as f64 * copy_bytes as f64)).ceil().max(1.0) as u32
}
// ANCHOR_END: stages_needed

/// The median, in ns, of the rung of `hopper_memory-ladder` (Table 8.1) in the folder
/// `dir` (the book's `figures/`, or a run's `--out`) whose barrier, what is timed and
/// who waits are `barrier`, `what` and `who`.
pub fn ladder_ns(
    dir: &Path,
    barrier: &str,
    what: &str,
    who: &str,
) -> anyhow::Result<f64> {
    use crate::harness::roof::{cell, number, read};
    let rec = read(dir, "hopper_memory-ladder")?;
    let is = |row: &[String], column, value| -> anyhow::Result<bool> {
        Ok(cell(&rec, row, column)? == value)
    };
    for row in &rec.rows {
        if is(row, "barrier", barrier)?
            && is(row, "what", what)?
            && is(row, "who", who)?
        {
            return number(&rec, row, "median_ns");
        }
    }
    anyhow::bail!("hopper_memory-ladder has no rung `{barrier}`, `{what}`, `{who}`")
}

/// The best read rate of the stream of `hopper_memory-stages` (Figure 8.3) in the folder
/// `dir`, in GB/s, and the SMs of the GPU that measured it.
pub fn best_read_gbps(dir: &Path) -> anyhow::Result<(f64, u32)> {
    use crate::harness::roof::{number, read};
    let rec = read(dir, "hopper_memory-stages")?;
    let mut best = f64::NAN;
    for row in &rec.rows {
        best = best.max(number(&rec, row, "y")?);
    }
    anyhow::ensure!(best.is_finite(), "hopper_memory-stages has no rate");
    let sms = rec.meta.get("sms").context("hopper_memory-stages names no SM count")?;
    Ok((best, sms.parse().context("the SM count of hopper_memory-stages")?))
}

// ANCHOR: pitch_for
/// Exercise 8.3: the row pitch, in elements, of a matrix with `cols` elements of
/// `elem_bytes` bytes a row whose every row starts on an `align`-byte boundary.
pub fn pitch_for(cols: usize, elem_bytes: usize, align: usize) -> usize {
    let per = align / elem_bytes.min(align);
    cols.div_ceil(per) * per
}
// ANCHOR_END: pitch_for

crate::exercise_kernels! {
    /// The kernels of exercise 8.4 (`kernels/exercises_hopper.cu`).
    pub enum TransposePitched in "exercises_hopper.cu" {
        /// The pitched transpose the reader starts from.
        Exercise => "transpose_pitched_exercise",
        /// The book's solution.
        Solution => "transpose_pitched_solution",
    }
}

/// Sides exercise 8.4 is checked at: one element, a side past one tile, sides whose
/// 128-byte pitch adds 3 and 24 padding floats.
pub const PITCHED_SIDES: [usize; 4] = [1, 33, 253, 1000];

/// Exercise 8.4: runs one version of the pitched transpose at every side of
/// [`PITCHED_SIDES`], rows pitched to 128 bytes: the output poisoned, the kernel once,
/// then every element of the transpose (the padding left out) compared exactly.
pub fn check_transpose_pitched(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    check_sizes::<TransposePitched, _>(gpu, version, PITCHED_SIDES, |f, name, side| {
        let pitch = pitch_for(side, 4, 128);
        let dense = random_f32(side * side, side as u64);
        let host = reference::pitch(&dense, side, side, pitch);
        let input = gpu.stream.clone_htod(&host)?;
        let want_dense = reference::transpose(&dense, side, side);
        let grid = side.div_ceil(32) as u32;
        let cfg = LaunchConfig {
            grid_dim: (grid, grid, 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let (s32, p32) = (side as i32, pitch as i32);
        let size = format!("side {side}, pitch {pitch}");
        let mut out = gpu.stream.alloc_zeros::<f32>(side * pitch)?;
        let verified = gpu.verify_then_time_output(
            &mut out,
            |s, o| {
                // SAFETY: (in, out, side, pitch), both side x pitch floats.
                unsafe {
                    s.launch_builder(f)
                        .arg(&input)
                        .arg(o)
                        .arg(&s32)
                        .arg(&p32)
                        .launch(cfg)?
                };
                Ok(())
            },
            |got| {
                // The elements only: the padding is never written.
                let got = reference::unpitch(got, side, side, pitch);
                crate::harness::verify::check_exact(name, &size, &got, &want_dense)
            },
            &[],
        )?;
        Ok((size, verified.check.checked))
    })
}
