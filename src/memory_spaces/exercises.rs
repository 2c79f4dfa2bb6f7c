//! Solutions of the chapter's exercises; `tests/cpu/memory_spaces_cpu.rs` checks their answers.
//! The check of the kernel exercise is here too.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::reference::{self, cycle_length};
use crate::harness::exercise::{
    check_in_out, check_sizes, grid_stride_config, Passed, Version,
};
use crate::harness::{inputs, Gpu};

// ANCHOR: stencil_words
/// Exercise 1: for a stencil of `radius` (2 radius + 1 points) on blocks of `block`
/// threads, the global words per output that the untiled kernel asks for, and that the
/// tiled kernel loads into its tile (its elements plus a halo of
/// `radius` on each side).
pub fn stencil_words_per_output(radius: u32, block: u32) -> (f64, f64) {
    let untiled = (2 * radius + 1) as f64;
    let tiled = (block + 2 * radius) as f64 / block as f64;
    (untiled, tiled)
}
// ANCHOR_END: stencil_words

// ANCHOR: constant_serialization
/// Exercise 2: a warp-wide load from constant memory is served one distinct word at a
/// time. Lane `l` reads `signal_const[l % k]`: how many words does one such load
/// cost, for each `k`?
pub fn constant_words_per_load(ks: &[u32]) -> Vec<(u32, usize)> {
    ks.iter()
        .map(|&k| {
            let mut words: Vec<u32> = (0..32).map(|lane| lane % k).collect();
            words.sort_unstable();
            words.dedup();
            (k, words.len())
        })
        .collect()
}
// ANCHOR_END: constant_serialization

// ANCHOR: shuffle_coverage
/// Exercise 3: build the chase's chain from an ordinary Fisher-Yates shuffle instead of
/// a single cycle, and follow it from element 0. What fraction of the elements does the
/// walk visit before it repeats itself?
pub fn shuffled_chain_coverage(len: usize, seed: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut next: Vec<u32> = (0..len as u32).collect();
    for i in (1..len).rev() {
        // j may be i: the shuffle can make any permutation.
        let j = rng.gen_range(0..=i);
        next.swap(i, j);
    }
    cycle_length(&next, 0) as f64 / len as f64
}
// ANCHOR_END: shuffle_coverage

crate::exercise_kernels! {
    /// The kernels of exercise 2.4 (`kernels/exercises_memory_spaces.cu`).
    pub enum StencilTile in "exercises_memory_spaces.cu" {
        /// The tiled stencil the reader starts from.
        Exercise => "stencil3_tile_exercise",
        /// The book's solution.
        Solution => "stencil3_tile_solution",
    }
}

/// The sizes exercise 2.4 is checked at: one partial tile, one whole tile, a tile and one
/// element, and sizes of many tiles that are multiples of nothing.
pub const STENCIL_TILE_SIZES: [usize; 6] = [1, 255, 256, 257, 1000, 100_003];

/// Threads per block of exercise 2.4's kernels (any size works; the tile follows it).
const STENCIL_TILE_BLOCK: u32 = 256;

/// Exercise 2.4: runs one version of the tiled stencil through the chapter's check at every
/// size of [`STENCIL_TILE_SIZES`]: the output poisoned, one launch, every element compared
/// exactly with [`reference::stencil3`], which adds in the kernels' order.
pub fn check_stencil_tile(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    check_sizes::<StencilTile, _>(gpu, version, STENCIL_TILE_SIZES, |f, name, n| {
        let a = inputs::random_f32(n, n as u64);
        let want = reference::stencil3(&a);
        // At most two blocks per SM, so that the larger sizes walk over several tiles; the
        // tile (blockDim.x + 2 floats) in dynamic shared memory.
        let blocks = n.div_ceil(STENCIL_TILE_BLOCK as usize);
        let shared = (STENCIL_TILE_BLOCK + 2) * 4;
        let cfg = grid_stride_config(gpu, blocks, 2, STENCIL_TILE_BLOCK, shared);
        check_in_out(gpu, f, name, &a, &want, cfg)
    })
}
