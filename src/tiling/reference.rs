//! The CPU reference of the matrix multiply: rows of `A B` accumulated in double precision.

use rayon::prelude::*;

use super::device::Operands;
use crate::harness::blas::sample_rows;

/// Rows `rows` of `A B`, accumulated in double precision on the CPU (`rows.len()` x N).
pub fn reference_rows(
    a: &[f32],
    b: &[f32],
    (n, k): (usize, usize),
    rows: &[usize],
) -> Vec<f64> {
    let mut out = vec![0f64; rows.len() * n];
    out.par_chunks_mut(n).zip(rows.par_iter()).for_each(|(acc, &i)| {
        for kk in 0..k {
            let aik = a[i * k + kk] as f64;
            let b_row = &b[kk * n..kk * n + n];
            for (c, &bv) in acc.iter_mut().zip(b_row) {
                *c += aik * bv as f64;
            }
        }
    });
    out
}

/// What verification compares against: every row, or a sample of rows.
pub struct Reference {
    pub rows: Vec<usize>,
    pub values: Vec<f64>,
}

impl Reference {
    /// All rows when the product is small enough (at most 2^31 multiply-adds), else the
    /// rows of [`sample_rows`].
    pub fn for_operands(ops: &Operands, seed: u64) -> Self {
        let all = (ops.m as u128 * ops.n as u128 * ops.k as u128) <= 1 << 31;
        let rows = if all { (0..ops.m).collect() } else { sample_rows(ops.m, seed) };
        let values = reference_rows(&ops.a_host, &ops.b_host, (ops.n, ops.k), &rows);
        Self { rows, values }
    }
}
