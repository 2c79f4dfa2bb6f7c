//! Solutions to the exercises of the chapter on chained matrix multiplication (shown collapsed
//! in the book; the tests below and the book's snippets check them), and the check of its
//! kernel exercise.

use super::dp;
use super::exercise_tables::check_chains;
use super::gpu::Kernel;
use super::layout::Layout;
use crate::harness::exercise::{Passed, Version};
use crate::harness::Gpu;

// ANCHOR: left_to_right
/// Scalar multiplications of the naive order `((A1 A2) A3) ... An`: the running product
/// is always `p0 x pk`, and multiplying it by `A(k+1)` costs `p0 * pk * p(k+1)`.
pub fn left_to_right_cost(dims: &[u32]) -> u128 {
    dims.windows(2)
        .skip(1)
        .map(|w| u128::from(dims[0]) * u128::from(w[0]) * u128::from(w[1]))
        .sum()
}
// ANCHOR_END: left_to_right

// ANCHOR: wasted_cells
/// Cells of the paper's row-major table (`(n + 1)^2`) that never hold a cost, against
/// the diagonal-major layout, which stores exactly the `n (n + 1) / 2` cells `i <= j`.
pub fn wasted_cells(n: usize) -> usize {
    (n + 1) * (n + 1) - n * (n + 1) / 2
}
// ANCHOR_END: wasted_cells

// ANCHOR: cells_per_diagonal
/// How many cells (threads of the paper's kernel) are busy on each diagonal
/// d = 1 .. n-1, and the average share of a block of `n` threads that works: the
/// one-block kernel idles more and more threads as the diagonals shorten.
pub fn average_busy_share(n: usize) -> f64 {
    if n < 2 {
        return 0.0;
    }
    let busy: usize = (1..n).map(|d| n - d).sum();
    busy as f64 / ((n - 1) * n) as f64
}
// ANCHOR_END: cells_per_diagonal

crate::exercise_kernels! {
    /// The kernels of exercise 5.4 (`kernels/exercises_cmm_diagonal.cu`).
    pub enum CellPerThread in "exercises_cmm_diagonal.cu" {
        /// The kernel the reader starts from.
        Exercise => "cmm_cell_exercise",
        /// The book's solution.
        Solution => "cmm_cell_solution",
    }
}

/// The chains exercise 5.4 is checked at: 40 matrices of one size, where every bracketing of
/// every sub-chain costs the same (so every cell's split is a tie, settled by the tie rule),
/// and 300 random matrices with dimensions 1 to 1000, as in the chapter.
pub fn cell_per_thread_chains() -> Vec<Vec<u32>> {
    vec![vec![7; 41], dp::random_dims(300, 1000, 54)]
}

/// Exercise 5.4: runs one version of the diagonal-major kernel through the chapter's check on
/// every chain of [`cell_per_thread_chains`]: the table poisoned but for its main diagonal, one
/// launch per diagonal, then every cell's cost and split compared with the serial program's.
pub fn check_cell_per_thread(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    // Launched as the chapter's diagonal-major kernel: a thread per cell, 128 a block.
    let like = Kernel::CellPerThread { layout: Layout::DiagonalMajor, block: 128 };
    check_chains::<CellPerThread>(gpu, version, like, cell_per_thread_chains(), |_| {
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worked_examples_naive_order_costs_10320() {
        assert_eq!(left_to_right_cost(&[20, 2, 30, 12, 8]), 10320);
        assert_eq!(left_to_right_cost(&[5, 7]), 0);
    }

    #[test]
    fn the_row_major_table_wastes_more_than_half() {
        assert_eq!(wasted_cells(1), 3);
        assert_eq!(wasted_cells(1024), 1025 * 1025 - 1024 * 1025 / 2);
        assert!(wasted_cells(1024) as f64 / (1025.0 * 1025.0) > 0.5);
    }

    #[test]
    fn half_the_threads_idle_on_average() {
        assert!((average_busy_share(1024) - 0.5).abs() < 1e-12);
        assert_eq!(average_busy_share(1), 0.0);
    }
}
