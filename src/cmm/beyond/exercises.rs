//! Solutions to the exercises of the chapter "Beyond the paper" (shown collapsed in the
//! book; the tests below and the book's snippets check them), and the check of its
//! kernel exercise.

use crate::cmm::dp;
use crate::cmm::error::CmmError;
use crate::cmm::exercise_tables::check_chains;
use crate::cmm::gpu::Kernel;
use crate::cmm::layout::Layout;
use crate::harness::exercise::{Passed, Version};
use crate::harness::Gpu;

// ANCHOR: steps_for_tile
/// Exercise 6.1: the dependent steps of a tiled solve of `n` matrices (`n + 1` points)
/// with tiles of `tile` points: the sweep of the first block diagonal takes `tile - 1`
/// steps, the sweep of every later one `2 tile - 1`.
pub fn dependent_steps_with_tile(n: usize, tile: usize) -> usize {
    assert!(tile >= 1);
    let tiles = (n + 1).div_ceil(tile);
    (tile - 1) + (tiles - 1) * (2 * tile - 1)
}

/// The time one step may take, in nanoseconds, for the whole chain to fit in
/// `target_ms`.
pub fn step_budget_ns(n: usize, tile: usize, target_ms: f64) -> f64 {
    target_ms * 1e6 / dependent_steps_with_tile(n, tile) as f64
}
// ANCHOR_END: steps_for_tile

// ANCHOR: largest_dimension
/// Exercise 6.2: the largest dimension `p` such that a chain of `n` matrices, all
/// dimensions at most `p`, passes `proof` (one of the crate's bounds, such as
/// [`dp::gpu_safe_bound_key48`]); 0 if not even `p = 1` does. The bound grows with `p`,
/// so a binary search finds the edge.
pub fn largest_dimension(n: usize, proof: fn(&[u32]) -> Result<(), CmmError>) -> u32 {
    let fits = |p: u32| proof(&vec![p; n + 1]).is_ok();
    let (mut lo, mut hi) = (0u32, u32::MAX); // fits(lo) or lo == 0; !fits(hi)
    if fits(hi) {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}
// ANCHOR_END: largest_dimension

crate::exercise_kernels! {
    /// The kernels of exercise 6.3 (`kernels/exercises_cmm_beyond.cu`).
    pub enum WarpPerCell in "exercises_cmm_beyond.cu" {
        /// The kernel the reader starts from.
        Exercise => "cmm_warp_exercise",
        /// The book's solution.
        Solution => "cmm_warp_solution",
    }
}

/// The chains exercise 6.3 is checked at: 70 matrices of one size (every split a tie,
/// and more candidates per cell than a warp has lanes), and 300 random matrices with
/// dimensions 1 to 1000.
pub fn warp_per_cell_chains() -> Vec<Vec<u32>> {
    vec![vec![7; 71], dp::random_dims(300, 1000, 63)]
}

/// Exercise 6.3: runs one version of the warp-per-cell kernel through the chapter's
/// check on every chain of [`warp_per_cell_chains`]: the row-major table poisoned but
/// for its main diagonal, one launch per diagonal, then every cell's cost and split
/// compared with the serial program's. A chain whose costs could reach 2^48 is refused
/// first: the solution keeps a cost and a split in one 64-bit key.
pub fn check_warp_per_cell(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    // Launched as the chapter's block-per-cell kernels are, with a warp per cell.
    let like = Kernel::BlockPerCell { layout: Layout::RowMajor, block: 32 };
    check_chains::<WarpPerCell>(gpu, version, like, warp_per_cell_chains(), |dims| {
        dp::gpu_safe_bound_key48(dims)?;
        let n = dp::validate_dims(dims)?;
        anyhow::ensure!(
            n < 1 << 16,
            "a split of n = {n} matrices does not fit 16 bits"
        );
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::tiled;

    #[test]
    fn the_crates_tile_gives_the_crates_step_count() {
        for n in [2, 63, 64, 1024, 4096, 16384] {
            assert_eq!(
                dependent_steps_with_tile(n, tiled::TILE),
                tiled::dependent_steps(n)
            );
        }
        assert_eq!(dependent_steps_with_tile(1024, 64), 2095);
    }

    #[test]
    fn any_tile_leaves_about_two_steps_per_matrix() {
        for tile in [16, 32, 64, 128] {
            let steps = dependent_steps_with_tile(1024, tile);
            // 1999 to 2167
            assert!((1900..=2200).contains(&steps), "tile {tile}: {steps}");
        }
        let budget = step_budget_ns(1024, 64, 1.0);
        assert!((budget - 477.3).abs() < 0.1, "{budget}");
    }

    #[test]
    fn keys_allow_dimensions_up_to_2580_at_16384_matrices() {
        assert_eq!(largest_dimension(16384, dp::gpu_safe_bound_key48), 2580);
        assert_eq!(largest_dimension(16384, dp::gpu_safe_bound_u32), 64);
        assert_eq!(largest_dimension(16384, dp::gpu_safe_bound), 104_034);
        // Two matrices: one product, p^3 < 2^64.
        assert_eq!(largest_dimension(2, dp::gpu_safe_bound), 2_642_245);
        assert_eq!(largest_dimension(1 << 20, dp::gpu_safe_bound_key48), 645);
    }
}
