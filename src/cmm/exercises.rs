//! Solutions to the exercises of the chapter on chained matrix multiplication (shown collapsed
//! in the book; the tests below and the book's snippets check them), and the check of its
//! kernel exercise.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::dp::{self, DpTable};
use super::gpu::check_table;
use super::layout::{Layout, MAX_N_FOR_I32_INDEX};
use crate::exercises::{Passed, Version};
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::{Gpu, UsageError};

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

crate::kernel_names! {
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
    let table = KernelTable::<CellPerThread>::load(gpu)?;
    let kernel = version.pick(CellPerThread::Exercise, CellPerThread::Solution);
    let f = table.get(kernel);
    let mut passed = Passed::default();
    for dims in cell_per_thread_chains() {
        let cpu = dp::solve_serial(&dims)?;
        let n = cpu.n();
        let mut tables = DeviceTables::new(gpu, Layout::DiagonalMajor, &dims)?;
        let n32 = n as i32;
        let verified = gpu.verify_then_time(
            &mut tables,
            |gpu, t| t.poison(gpu),
            |s, t| {
                for d in 1..n {
                    let cells = (n - d) as u32;
                    let cfg = LaunchConfig {
                        grid_dim: (cells.div_ceil(128), 1, 1),
                        block_dim: (128, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    let d32 = d as i32;
                    // SAFETY: (const u32* dims, u64* cost, u32* split, int n, int d) with
                    // n + 1 dimensions and n (n + 1) / 2 cells; the bound was proved above.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&t.dims)
                            .arg(&mut t.cost)
                            .arg(&mut t.split)
                            .arg(&n32)
                            .arg(&d32)
                            .launch(cfg)?
                    };
                }
                Ok(())
            },
            |gpu, t| t.check(gpu, &kernel.function(), &cpu),
            &[],
        )?;
        passed.add(format!("n = {n}"), verified.check);
    }
    Ok(passed)
}

/// A chain's tables on the device, in one layout, for the kernel exercises of the two CMM
/// chapters.
pub(crate) struct DeviceTables {
    pub layout: Layout,
    pub n: usize,
    pub dims: CudaSlice<u32>,
    pub cost: CudaSlice<u64>,
    pub split: CudaSlice<u32>,
}

impl DeviceTables {
    /// Uploads `dims` and allocates the tables, after proving that no sum a kernel computes
    /// can wrap 64 bits and that the cells can be indexed with `int`.
    pub fn new(gpu: &Gpu, layout: Layout, dims: &[u32]) -> anyhow::Result<Self> {
        let n = dp::validate_dims(dims)?;
        dp::gpu_safe_bound(dims)?;
        if n > MAX_N_FOR_I32_INDEX {
            return Err(UsageError(format!(
                "n = {n} is past the kernels' int indices"
            ))
            .into());
        }
        let cells = layout.dp_len(n);
        Ok(Self {
            layout,
            n,
            dims: gpu.stream.clone_htod(dims)?,
            cost: gpu.stream.alloc_zeros(cells)?,
            split: gpu.stream.alloc_zeros(cells)?,
        })
    }

    /// Every cell poisoned (all bits set) but the main diagonal, which the kernels read and
    /// never write: cost 0, split 0, as in the chapter.
    pub fn poison(&mut self, gpu: &Gpu) -> anyhow::Result<()> {
        let cells = self.layout.dp_len(self.n);
        let (mut cost, mut split) = (vec![u64::MAX; cells], vec![u32::MAX; cells]);
        for i in 1..=self.n {
            let at = self.layout.dp_index(self.n, i, i);
            (cost[at], split[at]) = (0, 0);
        }
        gpu.stream.memcpy_htod(&cost, &mut self.cost)?;
        gpu.stream.memcpy_htod(&split, &mut self.split)?;
        Ok(())
    }

    /// Compares every cell, cost and split, with `cpu`: the first difference is a
    /// [`crate::harness::Mismatch`] naming `kernel`. Returns the cells compared.
    pub fn check(
        &self,
        gpu: &Gpu,
        kernel: &str,
        cpu: &DpTable,
    ) -> anyhow::Result<usize> {
        let cost = gpu.stream.clone_dtoh(&self.cost)?;
        let split = gpu.stream.clone_dtoh(&self.split)?;
        let got = DpTable::from_layout(self.layout, self.n, &cost, &split)?;
        check_table(kernel, self.n, cpu, &got, |i, j| {
            self.layout.dp_index(self.n, i, j)
        })?;
        Ok(super::layout::triangle_len(self.n))
    }
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
