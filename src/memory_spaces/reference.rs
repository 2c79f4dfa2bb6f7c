//! CPU references for every kernel of `kernels/memory_spaces.cu`, the inputs they are checked
//! on, and the random cyclic permutations the pointer chases follow.
//!
//! Where a kernel adds floats in a fixed order (the walks, the stencil, the bandwidth sums),
//! the reference adds them in the same order in `f32`, so the GPU must match it bit for bit.
//! The signal kernels multiply and add (contracted to FMA by the compiler); their reference
//! sums in `f64` and is compared within a tolerance.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::{HIST_BINS, SIGNAL_MAX, TILE_ROWS};
use crate::harness::inputs;

/// `n` random `u32` (from seeded random bytes).
pub fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    inputs::random_bytes(4 * n, seed)
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The signal example: `result[b * rows + r] = Σ_j matrices[b][j][r] · signal[j]`, matrix `b`
/// stored column by column (element `j` of row `r` at `b·m·rows + j·rows + r`).
pub fn apply_signal(
    matrices: &[f32],
    signal: &[f32],
    rows: usize,
    m: usize,
) -> Vec<f64> {
    assert!(signal.len() >= m && rows > 0 && matrices.len().is_multiple_of(rows * m));
    let n_mat = matrices.len() / (rows * m);
    (0..n_mat * rows)
        .into_par_iter()
        .map(|out| {
            let (b, r) = (out / rows, out % rows);
            let matrix = &matrices[b * m * rows..(b + 1) * m * rows];
            (0..m).map(|j| matrix[j * rows + r] as f64 * signal[j] as f64).sum()
        })
        .collect()
}

/// Where thread `thread` starts its walk when a warp's lanes fall into `distinct` groups
/// (`walk_start` of the kernel file).
pub fn walk_start(thread: u64, distinct: u32) -> u32 {
    walk_start_spaced(thread, distinct, 129, 97)
}

/// Where thread `thread` starts when the groups of a warp are `group_words` apart and the
/// warps `warp_words` apart (`walk_start_spaced` of the kernel file).
pub fn walk_start_spaced(
    thread: u64,
    distinct: u32,
    group_words: u32,
    warp_words: u32,
) -> u32 {
    let warp = (thread / 32) as u32;
    let group = (thread % 32) as u32 % distinct;
    (warp.wrapping_mul(warp_words).wrapping_add(group.wrapping_mul(group_words)))
        & (SIGNAL_MAX as u32 - 1)
}

/// The walks (`walk_const`, `walk_global`, `walk_readonly`): thread `i < n` adds `steps`
/// consecutive table elements (wrapping) from its start, in order.
pub fn walk(table: &[f32], n: usize, distinct: u32, steps: u32) -> Vec<f32> {
    walk_spaced(table, n, distinct, steps, (129, 97))
}

/// `walk_const_spaced`: [`walk`] with groups `spacing.0` words apart and warps `spacing.1`.
pub fn walk_spaced(
    table: &[f32],
    n: usize,
    distinct: u32,
    steps: u32,
    (group_words, warp_words): (u32, u32),
) -> Vec<f32> {
    assert_eq!(table.len(), SIGNAL_MAX);
    assert!((1..=32).contains(&distinct));
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let start = walk_start_spaced(i, distinct, group_words, warp_words);
            let mut acc = 0.0f32;
            for k in 0..steps {
                acc +=
                    table[(start.wrapping_add(k) & (SIGNAL_MAX as u32 - 1)) as usize];
            }
            acc
        })
        .collect()
}

/// Distinct addresses one warp-wide load of the walk asks for: the groups of its lanes.
pub fn walk_addresses_per_warp(distinct: u32, steps_from_start: u32) -> usize {
    let mut words: Vec<u32> = (0..32u64)
        .map(|lane| {
            (walk_start(lane, distinct) + steps_from_start) & (SIGNAL_MAX as u32 - 1)
        })
        .collect();
    words.sort_unstable();
    words.dedup();
    words.len()
}

/// `b[j] = a[j-1] + a[j] + a[j+1]` with zeros outside, added left to right like the kernels.
pub fn stencil3(a: &[f32]) -> Vec<f32> {
    let n = a.len();
    (0..n)
        .into_par_iter()
        .map(|j| {
            let left = if j > 0 { a[j - 1] } else { 0.0 };
            let right = if j + 1 < n { a[j + 1] } else { 0.0 };
            left + a[j] + right
        })
        .collect()
}

/// The per-thread histograms: thread `t` of `threads` counts `values[i] & 15` for
/// `i = t, t + threads, ...`; count `bin` of thread `t` is at `bin * threads + t`.
pub fn histograms(values: &[u32], threads: usize) -> Vec<u32> {
    let mut per_thread: Vec<[u32; HIST_BINS]> = vec![[0; HIST_BINS]; threads];
    per_thread.par_iter_mut().enumerate().for_each(|(t, counts)| {
        for v in values.iter().skip(t).step_by(threads) {
            counts[(*v as usize) & (HIST_BINS - 1)] += 1;
        }
    });
    let mut out = vec![0u32; HIST_BINS * threads];
    for (t, counts) in per_thread.iter().enumerate() {
        for (bin, c) in counts.iter().enumerate() {
            out[bin * threads + t] = *c;
        }
    }
    out
}

/// `tile_value` of the kernel file: word `i` of block `block`'s tile.
pub fn tile_value(block: u32, i: u32) -> f32 {
    let h = block.wrapping_mul(1024).wrapping_add(i).wrapping_mul(2_654_435_761);
    (h >> 24) as f32 * (1.0 / 256.0) - 0.5
}

/// `bandwidth_shared` on `blocks` blocks of `block_threads`: lane `l` adds column
/// `(l + pass) % 32` of its block's tile, rows in order, every pass.
pub fn bandwidth_shared(blocks: u32, block_threads: u32, passes: u32) -> Vec<f32> {
    (0..blocks * block_threads)
        .into_par_iter()
        .map(|i| {
            let (block, lane) = (i / block_threads, (i % block_threads) % 32);
            let mut acc = 0.0f32;
            for pass in 0..passes {
                let column = (lane + pass) % 32;
                for row in 0..TILE_ROWS as u32 {
                    acc += tile_value(block, row * 32 + column);
                }
            }
            acc
        })
        .collect()
}

/// `bandwidth_registers`: lane `l` adds column `l` of its block's tile, every pass.
pub fn bandwidth_registers(blocks: u32, block_threads: u32, passes: u32) -> Vec<f32> {
    (0..blocks * block_threads)
        .into_par_iter()
        .map(|i| {
            let (block, lane) = (i / block_threads, (i % block_threads) % 32);
            let column: Vec<f32> = (0..TILE_ROWS as u32)
                .map(|row| tile_value(block, row * 32 + lane))
                .collect();
            let mut acc = 0.0f32;
            for _ in 0..passes {
                for v in &column {
                    acc += v;
                }
            }
            acc
        })
        .collect()
}

// ANCHOR: single_cycle
/// A random cyclic permutation of `0..len` (Sattolo's algorithm): following `next` from
/// any element visits every element once before it returns. A plain shuffle would leave
/// several cycles, and a chase that started in a short one would measure a
/// smaller footprint.
pub fn single_cycle(len: usize, seed: u64) -> Vec<u32> {
    assert!(len >= 1 && len <= u32::MAX as usize);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut next: Vec<u32> = (0..len as u32).collect();
    for i in (1..len).rev() {
        // j < i, never i itself: this is what makes one cycle.
        let j = rng.gen_range(0..i);
        next.swap(i, j);
    }
    next
}
// ANCHOR_END: single_cycle

/// A chain the chase kernels follow: `slots` elements `stride` apart in a buffer of
/// `slots * stride` `u32`; slot `s` (at index `s * stride`) holds the index of the next
/// slot's element, in a single random cycle. The elements between slots are zero and unused.
pub fn chain(slots: usize, stride: usize, seed: u64) -> Vec<u32> {
    assert!(stride >= 1 && slots * stride <= u32::MAX as usize);
    let cycle = single_cycle(slots, seed);
    let mut next = vec![0u32; slots * stride];
    for (s, &to) in cycle.iter().enumerate() {
        next[s * stride] = to * stride as u32;
    }
    next
}

/// Where a walk of `steps` loads along `next` from `start` ends.
pub fn follow(next: &[u32], start: u32, steps: u64) -> u32 {
    let mut p = start;
    for _ in 0..steps {
        p = next[p as usize];
    }
    p
}

/// How many elements the walk from `start` visits before it is back at `start`.
pub fn cycle_length(next: &[u32], start: u32) -> usize {
    let mut p = next[start as usize];
    let mut len = 1;
    while p != start {
        p = next[p as usize];
        len += 1;
    }
    len
}
