//! The dynamic program for chained matrix multiplication, on the CPU, serial and with rayon.
//!
//! A chain of `n` matrices is given by `n + 1` dimensions `p[0..=n]`: matrix `A_i` (1-based,
//! `i = 1..=n`) is `p[i-1] x p[i]`. Multiplying a `p x q` by a `q x r` matrix takes `p q r`
//! scalar multiplications. `M[i][j]`, the fewest multiplications that compute `A_i .. A_j`, obeys
//!
//! ```text
//! M[i][i] = 0
//! M[i][j] = min over k = i..j-1 of  M[i][k] + M[k+1][j] + p[i-1] p[k] p[j]
//! ```
//!
//! and `split[i][j]` is the `k` that attains the minimum. Cell `(i, j)` needs only cells on
//! lower diagonals (`j - i` smaller), so the table is filled diagonal by diagonal, the order of
//! Seifi & Al-Mamun 2024, Listing 1, and every cell of one diagonal can be computed in parallel.
//!
//! **Ties.** When several `k` give the minimum, every implementation in this book (CPU and GPU)
//! keeps the *smallest* such `k`: it scans `k` upwards and replaces the best only on a strictly
//! smaller cost. Split tables therefore compare exactly, cell by cell.
//!
//! **Overflow.** Costs are exact `u64`. [`cost_upper_bound`] bounds every value the program
//! computes; when it fits, plain `u64` arithmetic cannot wrap. When it does not, the CPU falls
//! back to 128-bit candidates and reports [`CmmError::CostOverflow`] only if a cell's optimum
//! itself does not fit. Kernels add without checks, so the host must call [`gpu_safe_bound`]
//! (or [`gpu_safe_bound_u32`]) before launching them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::error::CmmError;
use super::layout::Layout;

/// Checks that `dims` describes a chain (at least two dimensions, none zero) and returns the
/// number of matrices `n = dims.len() - 1`.
pub fn validate_dims(dims: &[u32]) -> Result<usize, CmmError> {
    if dims.len() < 2 {
        return Err(CmmError::TooFewDims { len: dims.len() });
    }
    if let Some(index) = dims.iter().position(|&p| p == 0) {
        return Err(CmmError::ZeroDim { index });
    }
    Ok(dims.len() - 1)
}

/// `cells` zeros, allocated fallibly: a table too large for this machine is an error the
/// caller reports, never an abort of the process.
fn zeroed_cells<T: Copy + Default>(
    cells: usize,
) -> Result<Vec<T>, std::collections::TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(cells)?;
    v.resize(cells, T::default());
    Ok(v)
}

/// An upper bound on every value the dynamic program computes: `(n - 1) * max(dims)^3`.
///
/// Why it holds: any parenthesization of `A_i .. A_j` performs `j - i` products, each costing
/// at most `max^3`, so `M[i][j] <= (j - i) max^3`. A candidate for cell `(i, j)` is
/// `M[i][k] + M[k+1][j] + p[i-1] p[k] p[j] <= ((k - i) + (j - k - 1) + 1) max^3 = (j - i) max^3
/// <= (n - 1) max^3`. Partial sums and the partial product `p[i-1] p[k]` are smaller still.
/// A chain of one matrix computes nothing, and its bound is 0.
pub fn cost_upper_bound(dims: &[u32]) -> Result<u128, CmmError> {
    let n = validate_dims(dims)?;
    let max_dim =
        u128::from(*dims.iter().max().expect("validated: at least two dimensions"));
    // max^3 < 2^96 always fits; the factor n - 1 could push a chain of more than 2^32 matrices
    // past u128, and saturating there still refuses it, as it must.
    Ok((n as u128 - 1).saturating_mul(max_dim * max_dim * max_dim))
}

fn check_bound_fits(dims: &[u32], bits: u32, limit: u128) -> Result<(), CmmError> {
    let bound = cost_upper_bound(dims)?;
    if bound <= limit {
        Ok(())
    } else {
        Err(CmmError::KernelBoundExceeded { bits, bound, limit })
    }
}

/// Proves that a kernel computing with plain `unsigned long long` adds and multiplies cannot
/// wrap on this chain: every cost, candidate sum and partial product is at most
/// [`cost_upper_bound`]`(dims) <= u64::MAX`. Launch the 64-bit kernels only after this is `Ok`.
pub fn gpu_safe_bound(dims: &[u32]) -> Result<(), CmmError> {
    check_bound_fits(dims, 64, u128::from(u64::MAX))
}

/// The same proof for the 32-bit cost kernels: every value is at most `u32::MAX`.
pub fn gpu_safe_bound_u32(dims: &[u32]) -> Result<(), CmmError> {
    check_bound_fits(dims, 32, u128::from(u32::MAX))
}

/// The proof for the tiled kernels (`kernels/cmm_tiled.cu`), which keep a cost in the upper 48
/// bits of a 64-bit key (the split takes the lower 16): every value is below `2^48`.
pub fn gpu_safe_bound_key48(dims: &[u32]) -> Result<(), CmmError> {
    check_bound_fits(dims, 48, (1u128 << 48) - 1)
}

/// A random chain of `n` matrices with dimensions drawn uniformly from `1..=max_dim`,
/// reproducible from `seed` (ChaCha8).
pub fn random_dims(n: usize, max_dim: u32, seed: u64) -> Vec<u32> {
    assert!(max_dim >= 1, "dimensions are at least 1");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..=n).map(|_| rng.gen_range(1..=max_dim)).collect()
}

/// The filled table: costs `M[i][j]` and splits for `1 <= i <= j <= n`.
///
/// Stored as the paper indexes it (Seifi & Al-Mamun 2024, Section 5.2): cell `(i, j)` at
/// `(n + 1) * i + j` in a buffer of `(n + 1)^2` cells. Row 0, column 0 and the cells below the
/// diagonal are unused and hold 0, which is also what a zero-initialised GPU buffer holds
/// there, so a row-major GPU table can be compared with [`DpTable::cost_row_major`] as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DpTable {
    n: usize,
    cost: Vec<u64>,
    split: Vec<u32>,
}

/// The first cell where two tables disagree, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellDifference {
    /// First matrix of the sub-chain (1-based).
    pub i: usize,
    /// Last matrix of the sub-chain (1-based).
    pub j: usize,
    /// Cost in the table `difference_from` was called on.
    pub expected_cost: u64,
    /// Cost in the other table.
    pub got_cost: u64,
    /// Split in the table `difference_from` was called on.
    pub expected_split: u32,
    /// Split in the other table.
    pub got_split: u32,
}

impl std::fmt::Display for CellDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cell M[{}][{}]: expected cost {} split {}, got cost {} split {}",
            self.i,
            self.j,
            self.expected_cost,
            self.expected_split,
            self.got_cost,
            self.got_split
        )
    }
}

impl DpTable {
    /// Bytes the table of `n` matrices takes: a cost (8 bytes) and a split (4 bytes) for each
    /// of the `(n + 1)^2` cells of the paper's buffer (`u128::MAX` where even that overflows).
    pub fn bytes(n: usize) -> u128 {
        let side = n as u128 + 1;
        let per_cell = std::mem::size_of::<u64>() + std::mem::size_of::<u32>();
        side.saturating_mul(side).saturating_mul(per_cell as u128)
    }

    /// A table for `n` matrices with every cell 0 (the main diagonal is then already right),
    /// or [`CmmError::TableTooLarge`] where this machine cannot allocate it.
    fn zeroed(n: usize) -> Result<DpTable, CmmError> {
        let too_large = CmmError::TableTooLarge { n, bytes: DpTable::bytes(n) };
        let side = n.checked_add(1).ok_or_else(|| too_large.clone())?;
        let cells = side.checked_mul(side).ok_or_else(|| too_large.clone())?;
        match (zeroed_cells(cells), zeroed_cells(cells)) {
            (Ok(cost), Ok(split)) => Ok(DpTable { n, cost, split }),
            _ => Err(too_large),
        }
    }

    /// Number of matrices in the chain.
    pub fn n(&self) -> usize {
        self.n
    }

    /// `M[i][j]`, the fewest scalar multiplications for `A_i .. A_j` (1-based, `i <= j`).
    pub fn cost(&self, i: usize, j: usize) -> u64 {
        self.cost[Layout::RowMajor.dp_index(self.n, i, j)]
    }

    /// The `k` of the best last product `(A_i..A_k)(A_{k+1}..A_j)`; 0 on the main diagonal.
    pub fn split(&self, i: usize, j: usize) -> u32 {
        self.split[Layout::RowMajor.dp_index(self.n, i, j)]
    }

    /// `M[1][n]`, the answer.
    pub fn optimal_cost(&self) -> u64 {
        self.cost(1, self.n)
    }

    /// The costs in the paper's row-major buffer, `(n + 1)^2` cells, unused cells 0.
    pub fn cost_row_major(&self) -> &[u64] {
        &self.cost
    }

    /// The splits in the paper's row-major buffer, `(n + 1)^2` cells, unused cells 0.
    pub fn split_row_major(&self) -> &[u32] {
        &self.split
    }

    /// The costs as a kernel using `layout` leaves them in its buffer (unused cells 0).
    pub fn cost_in(&self, layout: Layout) -> Vec<u64> {
        self.convert_to(layout, &self.cost)
    }

    /// The splits as a kernel using `layout` leaves them in its buffer (unused cells 0).
    pub fn split_in(&self, layout: Layout) -> Vec<u32> {
        self.convert_to(layout, &self.split)
    }

    fn convert_to<T: Copy + Default>(&self, layout: Layout, row_major: &[T]) -> Vec<T> {
        let n = self.n;
        let mut out = vec![T::default(); layout.dp_len(n)];
        for i in 1..=n {
            for j in i..=n {
                out[layout.dp_index(n, i, j)] =
                    row_major[Layout::RowMajor.dp_index(n, i, j)];
            }
        }
        out
    }

    /// Reads a table of `n` matrices back from buffers in `layout` (for instance copied from a
    /// GPU). Only the cells `1 <= i <= j <= n` are read; whatever the unused cells of a
    /// row-major buffer hold is ignored, so compare whole buffers when that matters too.
    pub fn from_layout(
        layout: Layout,
        n: usize,
        cost: &[u64],
        split: &[u32],
    ) -> Result<DpTable, CmmError> {
        let expected = layout.dp_len(n);
        for got in [cost.len(), split.len()] {
            if got != expected {
                return Err(CmmError::TableSize { expected, got });
            }
        }
        let mut table = DpTable::zeroed(n)?;
        for i in 1..=n {
            for j in i..=n {
                let from = layout.dp_index(n, i, j);
                let to = Layout::RowMajor.dp_index(n, i, j);
                table.cost[to] = cost[from];
                table.split[to] = split[from];
            }
        }
        Ok(table)
    }

    /// The first cell, in diagonal order (the order the program fills them), where `other`
    /// differs from `self` in cost or split; `None` when the tables agree everywhere.
    /// Panics when the tables are for chains of different lengths.
    pub fn difference_from(&self, other: &DpTable) -> Option<CellDifference> {
        assert_eq!(self.n, other.n, "tables of different chains");
        let n = self.n;
        (0..n).flat_map(|d| (1..=n - d).map(move |i| (i, i + d))).find_map(|(i, j)| {
            let (expected_cost, got_cost) = (self.cost(i, j), other.cost(i, j));
            let (expected_split, got_split) = (self.split(i, j), other.split(i, j));
            (expected_cost != got_cost || expected_split != got_split).then_some(
                CellDifference {
                    i,
                    j,
                    expected_cost,
                    got_cost,
                    expected_split,
                    got_split,
                },
            )
        })
    }
}

/// Fills the table serially in the order of Seifi & Al-Mamun 2024, Listing 1.
///
/// Uses plain `u64` arithmetic when [`cost_upper_bound`] fits in `u64`, which proves that
/// nothing wraps; otherwise computes candidates in `u128` and fails with
/// [`CmmError::CostOverflow`] at the first cell whose optimum does not fit.
pub fn solve_serial(dims: &[u32]) -> Result<DpTable, CmmError> {
    let n = validate_dims(dims)?;
    let mut table = DpTable::zeroed(n)?;
    if cost_upper_bound(dims)? <= u128::from(u64::MAX) {
        fill_serial(dims, &mut table.cost, &mut table.split);
    } else {
        fill_serial_checked(dims, &mut table)?;
    }
    Ok(table)
}

// ANCHOR: serial_dp
/// The serial program (the paper's Listing 1). `cost` and `split` hold the `(n + 1)^2`
/// cells of the paper's indexing `(n + 1) * i + j`, zeroed; `dims` has `n + 1` entries.
/// The caller has proved that no sum or product below exceeds `u64::MAX`.
pub fn fill_serial(dims: &[u32], cost: &mut [u64], split: &mut [u32]) {
    let n = dims.len() - 1;
    let row = n + 1; // row stride of the (n + 1) x (n + 1) buffer
    let p = |x: usize| u64::from(dims[x]);
    // Diagonal 0 (a single matrix, no multiplication) is already 0 in the zeroed table.
    for d in 1..n {
        for i in 1..=n - d {
            let j = i + d;
            let mut best_cost = u64::MAX;
            let mut best_k = i;
            for k in i..j {
                let candidate = cost[row * i + k]
                    + cost[row * (k + 1) + j]
                    + p(i - 1) * p(k) * p(j);
                // Strictly smaller: on a tie the smaller k, met first, stays.
                if candidate < best_cost {
                    best_cost = candidate;
                    best_k = k;
                }
            }
            cost[row * i + j] = best_cost;
            split[row * i + j] = best_k as u32;
        }
    }
}
// ANCHOR_END: serial_dp

/// The serial program with 128-bit candidates, for chains whose bound does not fit in `u64`.
fn fill_serial_checked(dims: &[u32], table: &mut DpTable) -> Result<(), CmmError> {
    let n = table.n;
    for d in 1..n {
        for i in 1..=n - d {
            let (cost, k) = best_split_checked(&table.cost, dims, n, i, i + d)?;
            let cell = Layout::RowMajor.dp_index(n, i, i + d);
            table.cost[cell] = cost;
            table.split[cell] = k;
        }
    }
    Ok(())
}

/// One cell, plain `u64` (the caller has proved the bound). Same scan and tie rule as
/// [`fill_serial`].
fn best_split(cost: &[u64], dims: &[u32], n: usize, i: usize, j: usize) -> (u64, u32) {
    let row = n + 1;
    let p = |x: usize| u64::from(dims[x]);
    let mut best_cost = u64::MAX;
    let mut best_k = i;
    for k in i..j {
        let candidate =
            cost[row * i + k] + cost[row * (k + 1) + j] + p(i - 1) * p(k) * p(j);
        if candidate < best_cost {
            best_cost = candidate;
            best_k = k;
        }
    }
    (best_cost, best_k as u32)
}

/// One cell with 128-bit candidates. A candidate is below `2 * 2^64 + 2^96`, so `u128` holds
/// it exactly; only the minimum has to fit in `u64`.
fn best_split_checked(
    cost: &[u64],
    dims: &[u32],
    n: usize,
    i: usize,
    j: usize,
) -> Result<(u64, u32), CmmError> {
    let row = n + 1;
    let p = |x: usize| u128::from(dims[x]);
    let mut best_cost = u128::MAX;
    let mut best_k = i;
    for k in i..j {
        let candidate = u128::from(cost[row * i + k])
            + u128::from(cost[row * (k + 1) + j])
            + p(i - 1) * p(k) * p(j);
        if candidate < best_cost {
            best_cost = candidate;
            best_k = k;
        }
    }
    let best_cost =
        u64::try_from(best_cost).map_err(|_| CmmError::CostOverflow { i, j })?;
    Ok((best_cost, best_k as u32))
}

/// The same program with the cells of each diagonal spread over rayon's threads: the CPU
/// counterpart of one GPU thread per cell. Each diagonal is computed from the finished lower
/// diagonals into a fresh vector, then written back, so no cell is read while it is written.
/// Results equal [`solve_serial`]'s exactly (same scan order and tie rule per cell).
pub fn solve_parallel(dims: &[u32]) -> Result<DpTable, CmmError> {
    solve_parallel_reporting(dims, |_| {})
}

/// The candidate splits the program weighs for a chain of `n` matrices: diagonal `d` has
/// `n - d` cells of `d` candidates each, `(n^3 - n) / 6` in all (what its time grows with).
pub fn candidates(n: usize) -> u128 {
    let n = n as u128;
    (n * n * n - n) / 6
}

/// [`solve_parallel`], calling `done` after each diagonal with the fraction of
/// [`candidates`] weighed so far: a long solve can show its progress.
pub fn solve_parallel_reporting(
    dims: &[u32],
    mut done: impl FnMut(f64),
) -> Result<DpTable, CmmError> {
    let n = validate_dims(dims)?;
    let plain_u64_is_safe = cost_upper_bound(dims)? <= u128::from(u64::MAX);
    let mut table = DpTable::zeroed(n)?;
    let total = candidates(n) as f64;
    let mut weighed = 0u128;
    for d in 1..n {
        let diagonal: Vec<(u64, u32)> = (1..=n - d)
            .into_par_iter()
            .map(|i| {
                if plain_u64_is_safe {
                    Ok(best_split(&table.cost, dims, n, i, i + d))
                } else {
                    best_split_checked(&table.cost, dims, n, i, i + d)
                }
            })
            .collect::<Result<_, _>>()?;
        for (offset, (cost, k)) in diagonal.into_iter().enumerate() {
            let i = offset + 1;
            let cell = Layout::RowMajor.dp_index(n, i, i + d);
            table.cost[cell] = cost;
            table.split[cell] = k;
        }
        weighed += ((n - d) * d) as u128;
        done(weighed as f64 / total);
    }
    Ok(table)
}

// ANCHOR: contiguous_dp
/// The program as a fair CPU runs it: cells of a diagonal spread over rayon's threads
/// (run it inside a one-thread pool for a serial time), and a second, column-major copy
/// of the costs so that both operands of the k loop, `M[i][i..j]` and `M[i+1..=j][j]`,
/// are contiguous slices. [`solve_parallel`] walks the second operand down a column,
/// `n + 1` costs apart, which misses the cache on every `k` once a column no longer
/// fits it. Results equal [`solve_serial`]'s exactly (same scan order and tie rule per
/// cell). Needs [`gpu_safe_bound`] (plain `u64` arithmetic), as the kernels do.
pub fn solve_contiguous(dims: &[u32]) -> Result<DpTable, CmmError> {
    let n = validate_dims(dims)?;
    gpu_safe_bound(dims)?;
    let row = n + 1;
    let p: Vec<u64> = dims.iter().map(|&x| u64::from(x)).collect();
    let mut table = DpTable::zeroed(n)?;
    let mut by_column = vec![0u64; row * row]; // by_column[row * j + k] = M[k][j]
    for d in 1..n {
        let (cost, by_column_now) = (&table.cost, &by_column);
        let diagonal: Vec<(u64, u32)> = (1..n - d + 1)
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let j = i + d;
                let left = &cost[row * i + i..row * i + j]; // M[i][k], k = i .. j-1
                let right = &by_column_now[row * j + i + 1..=row * j + j]; // M[k+1][j]
                let outer = p[i - 1] * p[j];
                let mut best_cost = u64::MAX;
                let mut best_k = i;
                for (offset, ((&l, &r), &p_k)) in
                    left.iter().zip(right).zip(&p[i..j]).enumerate()
                {
                    let candidate = l + r + outer * p_k;
                    if candidate < best_cost {
                        best_cost = candidate;
                        best_k = i + offset;
                    }
                }
                (best_cost, best_k as u32)
            })
            .collect();
        for (offset, (c, k)) in diagonal.into_iter().enumerate() {
            let (i, j) = (offset + 1, offset + 1 + d);
            table.cost[row * i + j] = c;
            table.split[row * i + j] = k;
            by_column[row * j + i] = c;
        }
    }
    Ok(table)
}
// ANCHOR_END: contiguous_dp

/// [`solve_contiguous`] with 32-bit costs, the candidates of a cell taken eight at a time
/// with AVX2 where the CPU has it (one lane each: an eight-wide minimum, and per lane the
/// first `k` that reached it, merged at the end by cost and then by `k`), one at a time
/// otherwise. Only for a chain whose bound the host proves below `2^32 - 1` (every
/// candidate is the cost of one parenthesisation, so none wraps); the table equals
/// [`solve_serial`]'s to the last split.
pub fn solve_contiguous_u32(dims: &[u32]) -> Result<DpTable, CmmError> {
    let n = validate_dims(dims)?;
    let bound = cost_upper_bound(dims)?;
    if bound >= u128::from(u32::MAX) {
        return Err(CmmError::KernelBoundExceeded {
            bits: 32,
            bound,
            limit: u128::from(u32::MAX) - 1,
        });
    }
    let row = n + 1;
    let mut by_row = vec![0u32; row * row]; // by_row[row * i + k] = M[i][k]
    let mut by_column = vec![0u32; row * row]; // by_column[row * j + k] = M[k][j]
    let mut table = DpTable::zeroed(n)?;
    for d in 1..n {
        let (by_row_now, by_column_now) = (&by_row, &by_column);
        let diagonal: Vec<(u32, u32)> = (1..n - d + 1)
            .into_par_iter()
            .with_min_len(64)
            .map(|i| {
                let j = i + d;
                let left = &by_row_now[row * i + i..row * i + j]; // M[i][k], k = i .. j-1
                let right = &by_column_now[row * j + i + 1..=row * j + j]; // M[k+1][j]
                let outer = dims[i - 1] * dims[j];
                let (cost, offset) = best_split_u32(left, right, &dims[i..j], outer);
                (cost, (i + offset) as u32)
            })
            .collect();
        for (offset, (c, k)) in diagonal.into_iter().enumerate() {
            let (i, j) = (offset + 1, offset + 1 + d);
            table.cost[row * i + j] = u64::from(c);
            table.split[row * i + j] = k;
            by_row[row * i + j] = c;
            by_column[row * j + i] = c;
        }
    }
    Ok(table)
}

/// The smallest `left[o] + right[o] + outer p[o]` and the first `o` that gives it.
fn best_split_u32(left: &[u32], right: &[u32], p: &[u32], outer: u32) -> (u32, usize) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { best_split_u32_avx2(left, right, p, outer) };
    }
    best_split_u32_scalar(left, right, p, outer, 0, (u32::MAX, usize::MAX))
}

/// The candidates `from..` one at a time, continuing from `(best, arg)`.
fn best_split_u32_scalar(
    left: &[u32],
    right: &[u32],
    p: &[u32],
    outer: u32,
    from: usize,
    (mut best, mut arg): (u32, usize),
) -> (u32, usize) {
    for o in from..left.len() {
        let candidate = left[o] + right[o] + outer * p[o];
        if candidate < best || (candidate == best && o < arg) {
            best = candidate;
            arg = o;
        }
    }
    (best, arg)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn best_split_u32_avx2(
    left: &[u32],
    right: &[u32],
    p: &[u32],
    outer: u32,
) -> (u32, usize) {
    use std::arch::x86_64::*;
    let whole = left.len() / 8 * 8;
    let mut best = _mm256_set1_epi32(-1); // u32::MAX in every lane
    let mut arg = _mm256_set1_epi32(0);
    let mut index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let eight = _mm256_set1_epi32(8);
    let outer_v = _mm256_set1_epi32(outer as i32);
    for q in (0..whole).step_by(8) {
        // SAFETY: q + 8 <= whole <= the length of all three slices.
        let (l, r, pk) = unsafe {
            (
                _mm256_loadu_si256(left.as_ptr().add(q) as *const __m256i),
                _mm256_loadu_si256(right.as_ptr().add(q) as *const __m256i),
                _mm256_loadu_si256(p.as_ptr().add(q) as *const __m256i),
            )
        };
        let candidate =
            _mm256_add_epi32(_mm256_add_epi32(l, r), _mm256_mullo_epi32(outer_v, pk));
        let smaller = _mm256_min_epu32(best, candidate);
        // Lanes where the old best stays (best <= candidate) keep their index: the first.
        let stays = _mm256_cmpeq_epi32(smaller, best);
        arg = _mm256_blendv_epi8(index, arg, stays);
        best = smaller;
        index = _mm256_add_epi32(index, eight);
    }
    let (mut bests, mut args) = ([0u32; 8], [0u32; 8]);
    // SAFETY: two 32-byte stores into 32-byte arrays.
    unsafe {
        _mm256_storeu_si256(bests.as_mut_ptr() as *mut __m256i, best);
        _mm256_storeu_si256(args.as_mut_ptr() as *mut __m256i, arg);
    }
    let mut merged = (u32::MAX, usize::MAX);
    for lane in 0..8 {
        let (b, a) = (bests[lane], args[lane] as usize);
        // A lane that never took a candidate still holds u32::MAX, which no cost reaches.
        if b != u32::MAX && (b < merged.0 || (b == merged.0 && a < merged.1)) {
            merged = (b, a);
        }
    }
    best_split_u32_scalar(left, right, p, outer, whole, merged)
}

#[cfg(test)]
mod u32_tests {
    use super::*;

    #[test]
    fn the_32_bit_program_gives_the_serial_table() {
        for (n, max_dim, seed) in
            [(1, 9, 1), (2, 9, 2), (7, 3, 3), (8, 64, 9), (130, 64, 5), (517, 64, 6)]
        {
            let dims = random_dims(n, max_dim, seed);
            assert_eq!(
                solve_contiguous_u32(&dims).unwrap(),
                solve_serial(&dims).unwrap()
            );
        }
        // Every split a tie: the smallest k must win across the lanes.
        for n in [9, 50, 131] {
            let ties = vec![5; n + 1];
            assert_eq!(
                solve_contiguous_u32(&ties).unwrap(),
                solve_serial(&ties).unwrap()
            );
        }
    }

    #[test]
    fn the_scalar_path_gives_the_serial_split() {
        let dims = random_dims(77, 64, 8);
        let t = solve_serial(&dims).unwrap();
        for (i, j) in [(1, 77), (3, 40), (10, 11)] {
            let left: Vec<u32> = (i..j).map(|k| t.cost(i, k) as u32).collect();
            let right: Vec<u32> = (i..j).map(|k| t.cost(k + 1, j) as u32).collect();
            let outer = dims[i - 1] * dims[j];
            let start = (u32::MAX, usize::MAX);
            let (c, o) =
                best_split_u32_scalar(&left, &right, &dims[i..j], outer, 0, start);
            assert_eq!((u64::from(c), (i + o) as u32), (t.cost(i, j), t.split(i, j)));
        }
    }

    #[test]
    fn a_chain_past_the_32_bit_bound_is_refused() {
        assert!(solve_contiguous_u32(&vec![1000; 101]).is_err());
        assert!(solve_contiguous_u32(&[64; 4]).is_ok());
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn a_table_too_large_to_allocate_is_an_error_not_an_abort() {
        assert_eq!(DpTable::bytes(46_339), 12 * 46_340 * 46_340);
        // 2^62 cells of 8 bytes: more than any allocator can give.
        let n = 1usize << 31;
        assert_eq!(
            DpTable::zeroed(n).unwrap_err(),
            CmmError::TableTooLarge { n, bytes: DpTable::bytes(n) }
        );
        // (n + 1)^2 past usize itself.
        assert!(matches!(
            DpTable::zeroed(usize::MAX),
            Err(CmmError::TableTooLarge { .. })
        ));
        let message = DpTable::zeroed(n).unwrap_err().to_string();
        assert!(message.contains("could not allocate"), "{message}");
    }

    #[test]
    fn a_reported_solve_counts_every_candidate_and_gives_the_serial_table() {
        assert_eq!(candidates(1), 0);
        assert_eq!(candidates(4), 10); // diagonals 1, 2, 3: 3 * 1 + 2 * 2 + 1 * 3
        let dims = random_dims(300, 64, 11);
        let mut fractions = Vec::new();
        let table = solve_parallel_reporting(&dims, |f| fractions.push(f)).unwrap();
        assert_eq!(table, solve_serial(&dims).unwrap());
        assert_eq!(fractions.len(), 299);
        assert!(fractions.windows(2).all(|w| w[0] < w[1]), "{fractions:?}");
        assert!((fractions[298] - 1.0).abs() < 1e-12, "{}", fractions[298]);
    }
}
