//! Solutions of the chapter's exercises; `tests/cpu/coalescing_cpu.rs` checks their answers.
//! The check of the kernel exercise is here too.

use std::ops::RangeInclusive;

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::banks::{column_read_words, conflict_degree};
use super::patterns::Pattern;
use super::reference::{self, PARTICLE_BYTES};
use super::sectors::{footprint, Footprint};
use crate::harness::exercise::{check_exact_output, check_sizes, Passed, Version};
use crate::harness::{inputs, Gpu};

// ANCHOR: float3_x
/// Exercise 1: a warp reads only the `x` component of 32 consecutive `float3`
/// (12-byte) positions. Lane `l` reads the 4 bytes at `12 l`.
pub fn float3_x_request() -> Footprint {
    let addresses: Vec<u64> = (0..32).map(|lane| 12 * lane).collect();
    footprint(&addresses, 4)
}
// ANCHOR_END: float3_x

// ANCHOR: conflict_by_width
/// Exercise 2: the conflict degree of a column read from a tile whose rows are
/// `width` words long, for every width in `widths`.
pub fn conflict_by_row_width(widths: RangeInclusive<u64>) -> Vec<(u64, u64)> {
    let degree = |width| conflict_degree(&column_read_words(width, 0));
    widths.map(|width| (width, degree(width))).collect()
}
// ANCHOR_END: conflict_by_width

// ANCHOR: padded_record
/// Exercise 3: the predicted fraction of the copy ceiling for the drift on the
/// 28-byte record and on a record padded to 32 bytes (an unused float appended).
pub fn padded_record_fractions() -> (f64, f64) {
    let drift = |record_bytes| Pattern::DriftAos { record_bytes }.predicted_fraction();
    (drift(PARTICLE_BYTES), drift(32))
}
// ANCHOR_END: padded_record

crate::exercise_kernels! {
    /// The kernels of exercise 3.4 (`kernels/exercises_coalescing.cu`).
    pub enum TransposeTile in "exercises_coalescing.cu" {
        /// The tiled transpose the reader starts from.
        Exercise => "transpose_tile_exercise",
        /// The book's solution.
        Solution => "transpose_tile_solution",
    }
}

/// The matrices (rows x columns) exercise 3.4 is checked at: the chapter's sizes that are
/// multiples of no tile.
pub const TRANSPOSE_TILE_SIZES: [(usize, usize); 5] =
    [(1, 7), (7, 1), (33, 65), (1000, 1003), (31, 1025)];

/// Exercise 3.4: runs one version of the tiled transpose through the chapter's check at every
/// size of [`TRANSPOSE_TILE_SIZES`]: the output poisoned, one launch, every element compared
/// exactly with [`reference::transpose`].
pub fn check_transpose_tile(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    const TILE: usize = 32;
    const ROWS: u32 = 8;
    check_sizes::<TransposeTile, _>(
        gpu,
        version,
        TRANSPOSE_TILE_SIZES,
        |f, name, (rows, cols)| {
            let input_host = inputs::random_f32(rows * cols, (rows * cols) as u64);
            let want = reference::transpose(&input_host, rows, cols);
            let input = gpu.stream.clone_htod(&input_host)?;
            let cfg = LaunchConfig {
                grid_dim: (cols.div_ceil(TILE) as u32, rows.div_ceil(TILE) as u32, 1),
                block_dim: (TILE as u32, ROWS, 1),
                shared_mem_bytes: 0,
            };
            let (rows64, cols64) = (rows as u64, cols as u64);
            let size = format!("{rows} x {cols}");
            let checked = check_exact_output(gpu, name, &size, &want, |s, out| {
                // SAFETY: (const float* in, float* out, u64 rows, u64 cols), both buffers
                // rows x cols floats; the kernels bound-check every index.
                unsafe {
                    s.launch_builder(f)
                        .arg(&input)
                        .arg(out)
                        .arg(&rows64)
                        .arg(&cols64)
                        .launch(cfg)?
                };
                Ok(())
            })?;
            Ok((size, checked))
        },
    )
}
