//! Row order against column order: the same work on a row-major array, two traversal orders.
//!
//! The loop body `a[i][j] = 0.5 * a[i][j] + 1` has no dependence between iterations, so the two
//! orders are both legal and give bit-identical arrays; only the order of memory accesses
//! differs. In row order consecutive iterations touch consecutive floats (one cache line
//! serves 16 of them); in column order they are `n` floats apart.

use crate::harness::Stats;
use crate::tiling::strip::time_round_robin;

// ANCHOR: orders
/// `i` outer, `j` inner: walks each row from left to right (the layout's own order).
pub fn update_row_order(a: &mut [f32], n: usize) {
    assert_eq!(a.len(), n * n);
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = 0.5 * a[i * n + j] + 1.0;
        }
    }
}

/// The permuted nest: `j` outer, `i` inner: walks each column from top to bottom.
pub fn update_column_order(a: &mut [f32], n: usize) {
    assert_eq!(a.len(), n * n);
    for j in 0..n {
        for i in 0..n {
            a[i * n + j] = 0.5 * a[i * n + j] + 1.0;
        }
    }
}
// ANCHOR_END: orders

/// The sides swept: the arrays go from 4 KiB (L1) through L2 and L3 to 256 MiB (memory).
pub fn sweep_sides(quick: bool) -> Vec<usize> {
    if quick {
        vec![32, 128, 512]
    } else {
        vec![32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    }
}

/// One side measured in both orders.
#[derive(Debug, Clone)]
pub struct TraversalPoint {
    pub n: usize,
    pub row: Stats,
    pub column: Stats,
}

impl TraversalPoint {
    /// Array size in bytes.
    pub fn bytes(&self) -> usize {
        self.n * self.n * 4
    }
    /// Nanoseconds per element (median) of row and column order.
    pub fn ns_per_element(&self) -> (f64, f64) {
        let per = |s: &Stats| s.median_ms * 1e6 / (self.n * self.n) as f64;
        (per(&self.row), per(&self.column))
    }
}

/// Times both orders at side `n`, after checking that they leave identical arrays.
/// Each repetition sweeps the array enough times to touch at least `min_elements` elements.
pub fn measure(
    n: usize,
    reps: usize,
    min_elements: usize,
) -> anyhow::Result<TraversalPoint> {
    let init: Vec<f32> = crate::harness::inputs::random_f32(n * n, n as u64);
    let (mut by_row, mut by_column) = (init.clone(), init);
    update_row_order(&mut by_row, n);
    update_column_order(&mut by_column, n);
    if by_row != by_column {
        anyhow::bail!("row and column order gave different arrays at n = {n}");
    }
    let sweeps = min_elements.div_ceil(n * n).max(1);
    // Row and column order take turns, so that a drift of the machine falls on both.
    let mut row = || {
        (0..sweeps).for_each(|_| update_row_order(std::hint::black_box(&mut by_row), n))
    };
    let mut column = || {
        (0..sweeps)
            .for_each(|_| update_column_order(std::hint::black_box(&mut by_column), n))
    };
    let stats = time_round_robin(1, reps, &mut [&mut row, &mut column])?;
    let (row, column) = (stats[0].per(sweeps), stats[1].per(sweeps));
    Ok(TraversalPoint { n, row, column })
}
