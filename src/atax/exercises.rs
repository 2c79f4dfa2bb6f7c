//! Solutions of the chapter's exercises; `tests/atax_cpu.rs` checks their answers.

use super::datasets::{bytes_moved, floor_ms, Dataset};

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
