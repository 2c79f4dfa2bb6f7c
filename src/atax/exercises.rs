//! Solutions of the chapter's exercises; `tests/cpu/atax_cpu.rs` checks their answers. The check
//! of the kernel exercise is here too.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use super::datasets::{bytes_moved, floor_ms, Dataset, ODD_SIZES};
use super::device::{AtaxFunction, AtaxKernel, BLOCK};
use super::measure::kernels::HostProblem;
use crate::harness::exercise::{check_sizes, Passed, Version};
use crate::harness::kernels::KernelTable;
use crate::harness::Gpu;

// ANCHOR: fused_floor
/// Exercise 1: the floor times (ms) of a two-pass and of a one-pass ATAX on `d` with
/// `elem_bytes`-byte elements at a device bandwidth of `gb_per_s`, and the largest
/// speedup reading A once can give.
pub fn fused_floor(d: Dataset, elem_bytes: usize, gb_per_s: f64) -> (f64, f64, f64) {
    let two = floor_ms(bytes_moved(d, elem_bytes, 2), gb_per_s);
    let one = floor_ms(bytes_moved(d, elem_bytes, 1), gb_per_s);
    (two, one, two / one)
}
// ANCHOR_END: fused_floor

// ANCHOR: constant_limit
/// Exercise 2: the widest x (in elements) that `__constant__` memory can hold for
/// elements of `elem_bytes` bytes, when `reserved_bytes` of the 64 KB are already taken
/// by other constants of the module.
pub fn widest_constant_x(elem_bytes: usize, reserved_bytes: usize) -> usize {
    (64 * 1024usize).saturating_sub(reserved_bytes) / elem_bytes
}
// ANCHOR_END: constant_limit

// ANCHOR: overlap_bound
/// Exercise 3: the end-to-end time (ms) of a pipeline that copies A in `chunks` equal
/// chunks at `h2d_gb_per_s` while a kernel that takes `kernel_ms` for all of A works on
/// the chunks already copied: every chunk's kernel waits for its copy, so the last
/// kernel starts after the whole copy (or after the previous kernels, if they are
/// slower than the copies).
pub fn pipelined_ms(
    a_bytes: u64,
    h2d_gb_per_s: f64,
    kernel_ms: f64,
    chunks: u32,
) -> f64 {
    let copy_chunk = floor_ms(a_bytes, h2d_gb_per_s) / chunks as f64;
    let kernel_chunk = kernel_ms / chunks as f64;
    let mut copy_done = 0.0f64;
    let mut kernel_done = 0.0f64;
    for _ in 0..chunks {
        copy_done += copy_chunk;
        kernel_done = kernel_done.max(copy_done) + kernel_chunk;
    }
    kernel_done
}
// ANCHOR_END: overlap_bound

crate::exercise_kernels! {
    /// The kernels of exercise 7.4 (`kernels/exercises_atax.cu`).
    pub enum TmpWarp in "exercises_atax.cu" {
        /// The warp-per-row kernel 1 the reader starts from.
        Exercise => "atax_tmp_warp_exercise",
        /// The book's solution.
        Solution => "atax_tmp_warp_solution",
    }
}

/// The buffers of one float problem on the device.
struct Buffers {
    a: CudaSlice<f32>,
    x: CudaSlice<f32>,
    tmp: CudaSlice<f32>,
    y: CudaSlice<f32>,
}

/// Exercise 7.4: runs one version of kernel 1, followed by the chapter's kernel 2 (one thread
/// per column), through the chapter's check at every size of [`ODD_SIZES`], in float: `tmp`
/// and `y` poisoned, the two kernels once, then `y` compared with the double-precision
/// reference within the chapter's tolerance.
pub fn check_tmp_warp(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    let chapter = KernelTable::<AtaxKernel<f32>>::load(gpu)?;
    let y_kernel = chapter.get(AtaxKernel::new(AtaxFunction::YThreadPerCol));
    check_sizes::<TmpWarp, _>(gpu, version, ODD_SIZES, |tmp_kernel, name, d| {
        let problem = HostProblem::<f32>::new(d, (d.m * d.n) as u64);
        let (m, n) = (u32::try_from(d.m)?, u32::try_from(d.n)?);
        let mut buffers = Buffers {
            a: gpu.stream.clone_htod(&problem.a)?,
            x: gpu.stream.clone_htod(&problem.x)?,
            tmp: gpu.stream.alloc_zeros(d.m)?,
            y: gpu.stream.alloc_zeros(d.n)?,
        };
        // Kernel 1: a warp per row; kernel 2: a thread per column.
        let blocks =
            |threads: usize| (threads.div_ceil(BLOCK as usize).max(1) as u32, 1, 1);
        let tmp_cfg = LaunchConfig {
            grid_dim: blocks(32 * d.m),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let y_cfg = LaunchConfig { grid_dim: blocks(d.n), ..tmp_cfg };
        let verified = gpu.verify_then_time(
            &mut buffers,
            |gpu, b| {
                gpu.poison(&mut b.tmp)?;
                gpu.poison(&mut b.y)
            },
            |s, b| {
                // SAFETY: a is m x n, tmp m and x, y n floats long.
                unsafe {
                    launch_mv(
                        s,
                        tmp_kernel,
                        (&b.a, &b.x, &mut b.tmp),
                        (m, n),
                        tmp_cfg,
                    )?;
                    launch_mv(s, y_kernel, (&b.a, &b.tmp, &mut b.y), (m, n), y_cfg)
                }
            },
            |gpu, b| problem.check(name, &gpu.stream.clone_dtoh(&b.y)?),
            &[],
        )?;
        Ok((format!("{} x {}", d.m, d.n), verified.check.checked))
    })
}

/// Enqueues `f`, a kernel of the chapter's `(const float* a, const float* v, float* out,
/// unsigned m, unsigned n)` form, on `s`.
///
/// # Safety
/// The buffers must be as long as `f` reads and writes for an `m` × `n` matrix.
unsafe fn launch_mv(
    s: &Arc<CudaStream>,
    f: &CudaFunction,
    (a, v, out): (&CudaSlice<f32>, &CudaSlice<f32>, &mut CudaSlice<f32>),
    (m, n): (u32, u32),
    cfg: LaunchConfig,
) -> anyhow::Result<()> {
    s.launch_builder(f).arg(a).arg(v).arg(out).arg(&m).arg(&n).launch(cfg)?;
    Ok(())
}
