//! The CPU program with the blocking of the GPU's tiled kernels (`cmm::tiled`), so that the
//! CPU the chapter compares against is tiled as the GPU is.
//!
//! Points 0..=n sit between the matrices, `T[a][b]` is the cheapest cost of the matrices
//! a+1..=b (`M[i][j] = T[i-1][j]`, split `k = c`), and the points are cut into tiles of
//! `tile`. Block (I, J) of the table needs, for every tile K strictly between I and J, the
//! final blocks (I, K) and (K, J): a min-plus product of a row strip and a column strip, taken
//! one tile K at a time so that both strips stay in the core's cache, and read from
//! contiguous slices (the costs are kept twice, by rows and by columns). The candidates c in
//! tiles I and J themselves are then swept cell by cell, rows bottom-up and columns left to
//! right, so every cell a candidate reads is final. The blocks of one block diagonal are
//! independent and run on rayon's threads. Pairs are compared as (cost, c), so the answer is
//! the serial program's (smallest tied split) whatever order the candidates come in.

use rayon::prelude::*;

use super::dp::{gpu_safe_bound, validate_dims, DpTable};
use super::error::CmmError;
use super::layout::Layout;

/// The CPU's tile: 64 points, as on the GPU. A block's two strips of one tile K are
/// 2 × 64 × 64 × 8 bytes = 64 KiB.
pub const CPU_TILE: usize = 64;

/// No candidate yet: worse than every real (cost, split) pair.
const NONE: (u64, u32) = (u64::MAX, u32::MAX);

/// (cost, c) comes before `best`: a smaller cost, or the same cost at a smaller split.
#[inline]
fn better(cost: u64, c: u32, best: (u64, u32)) -> bool {
    cost < best.0 || (cost == best.0 && c < best.1)
}

/// The points of tile `t`.
fn tile_range(t: usize, tile: usize, points: usize) -> std::ops::Range<usize> {
    t * tile..((t + 1) * tile).min(points)
}

/// Block (bi, bj) of T, `tile × tile` pairs indexed `r * tile + s` for the cell
/// (a0 + r, b0 + s); the cells on or below the main diagonal are left as `NONE`.
/// `by_row[a * points + b]` and `by_col[b * points + a]` hold T[a][b] for the blocks of
/// lower block diagonals.
fn solve_block(
    by_row: &[u64],
    by_col: &[u64],
    p: &[u64],
    tile: usize,
    (bi, bj): (usize, usize),
) -> Vec<(u64, u32)> {
    let points = p.len();
    let (rows, cols) = (tile_range(bi, tile, points), tile_range(bj, tile, points));
    let (a0, b0) = (rows.start, cols.start);
    let mut best = vec![NONE; tile * tile];

    // The min-plus part: c in the tiles strictly between bi and bj, one tile at a time.
    for bk in bi + 1..bj {
        let ks = tile_range(bk, tile, points);
        for a in rows.clone() {
            let left = &by_row[a * points + ks.start..a * points + ks.end]; // T[a][c]
            for b in cols.clone() {
                let right = &by_col[b * points + ks.start..b * points + ks.end]; // T[c][b]
                let outer = p[a] * p[b];
                let cell = &mut best[(a - a0) * tile + (b - b0)];
                for (offset, ((&l, &r), &p_c)) in
                    left.iter().zip(right).zip(&p[ks.clone()]).enumerate()
                {
                    let candidate = l + r + outer * p_c;
                    if better(candidate, (ks.start + offset) as u32, *cell) {
                        *cell = (candidate, (ks.start + offset) as u32);
                    }
                }
            }
        }
    }

    // The sweep: c in tile bi (c > a) or tile bj (c < b). A cell of this block is read only
    // after it is final: rows run bottom-up and columns left to right.
    for a in rows.clone().rev() {
        for b in cols.clone() {
            if b <= a {
                continue;
            }
            let t = |x: usize, y: usize, best: &[(u64, u32)]| -> u64 {
                if rows.contains(&x) && cols.contains(&y) {
                    best[(x - a0) * tile + (y - b0)].0
                } else {
                    by_row[x * points + y]
                }
            };
            let outer = p[a] * p[b];
            let mut cell = best[(a - a0) * tile + (b - b0)];
            let own = (a + 1..b).filter(|&c| rows.contains(&c) || cols.contains(&c));
            for c in own {
                let candidate = t(a, c, &best) + t(c, b, &best) + outer * p[c];
                if better(candidate, c as u32, cell) {
                    cell = (candidate, c as u32);
                }
            }
            // A single matrix (b = a + 1) has no split: cost 0, split 0.
            best[(a - a0) * tile + (b - b0)] = if cell == NONE { (0, 0) } else { cell };
        }
    }
    best
}

/// The whole table with the blocking of the GPU's tiled kernels and tiles of `tile` points,
/// the blocks of each block diagonal on rayon's threads. Equals [`super::dp::solve_serial`]
/// cell for cell. Needs [`gpu_safe_bound`] (plain `u64` arithmetic), as the kernels do.
pub fn solve_blocked_with(dims: &[u32], tile: usize) -> Result<DpTable, CmmError> {
    let n = validate_dims(dims)?;
    gpu_safe_bound(dims)?;
    let tile = tile.max(1);
    let p: Vec<u64> = dims.iter().map(|&x| u64::from(x)).collect();
    let points = n + 1;
    let tiles = points.div_ceil(tile);
    let mut by_row = vec![0u64; points * points];
    let mut by_col = vec![0u64; points * points];
    let mut split_t = vec![0u32; points * points];
    for dd in 0..tiles {
        let (row_now, col_now) = (&by_row, &by_col);
        let blocks: Vec<(usize, Vec<(u64, u32)>)> = (0..tiles - dd)
            .into_par_iter()
            .map(|bi| (bi, solve_block(row_now, col_now, &p, tile, (bi, bi + dd))))
            .collect();
        for (bi, block) in blocks {
            let (rows, cols) =
                (tile_range(bi, tile, points), tile_range(bi + dd, tile, points));
            for a in rows.clone() {
                for b in cols.clone().filter(|&b| b > a) {
                    let (c, k) = block[(a - rows.start) * tile + (b - cols.start)];
                    by_row[a * points + b] = c;
                    by_col[b * points + a] = c;
                    split_t[a * points + b] = k;
                }
            }
        }
    }
    // M[i][j] = T[i - 1][j], in the paper's row-major layout.
    let cells = Layout::RowMajor.dp_len(n);
    let (mut cost, mut split) = (vec![0u64; cells], vec![0u32; cells]);
    for i in 1..=n {
        for j in i + 1..=n {
            let at = Layout::RowMajor.dp_index(n, i, j);
            cost[at] = by_row[(i - 1) * points + j];
            split[at] = split_t[(i - 1) * points + j];
        }
    }
    DpTable::from_layout(Layout::RowMajor, n, &cost, &split)
}

/// [`solve_blocked_with`] with tiles of [`CPU_TILE`] points.
pub fn solve_blocked(dims: &[u32]) -> Result<DpTable, CmmError> {
    solve_blocked_with(dims, CPU_TILE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::dp::{random_dims, solve_serial};

    #[test]
    fn blocked_equals_serial_on_odd_n_ties_and_every_tile_size() {
        for (n, max_dim, seed) in
            [(1, 9, 1), (2, 9, 2), (5, 1, 3), (63, 40, 4), (130, 1000, 5)]
        {
            let dims = random_dims(n, max_dim, seed);
            let serial = solve_serial(&dims).unwrap();
            for tile in [1, 3, 7, 64] {
                let got = solve_blocked_with(&dims, tile).unwrap();
                assert_eq!(
                    serial.difference_from(&got),
                    None,
                    "n = {n}, tile = {tile}"
                );
            }
        }
    }
}
