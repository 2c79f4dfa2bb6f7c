//! The CPU's side of the check: the chain's matrices, reproducible from a seed, and sampled
//! rows of their exact product in `f64`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::harness::blas::sample_rows;
use crate::harness::inputs;

/// The chain's matrices on the host, row-major, reproducible from `seed`: `A_i` (`p x q`) has
/// entries uniform in `[-sqrt(3/q), sqrt(3/q))`, variance `1/q`. A product `A_i..A_j` then has
/// entries of variance `1/p_j` on average, the size of a single factor of its shape, whatever
/// the order: a chain of 30 products neither overflows nor underflows, and an error made in one
/// product keeps its relative size through the later ones.
pub fn chain_matrices(dims: &[u32], seed: u64) -> Vec<Vec<f32>> {
    let mut seeds = ChaCha8Rng::seed_from_u64(seed);
    dims.windows(2)
        .map(|w| {
            let (p, q) = (w[0] as usize, w[1] as usize);
            let half_width = (3.0 / q as f64).sqrt() as f32;
            let mut m = inputs::random_f32(p * q, seeds.gen());
            m.iter_mut().for_each(|x| *x *= half_width);
            m
        })
        .collect()
}

/// Rows `rows` of the exact product `A1 A2 ... An`, in `f64`, and the size of each entry.
///
/// Row `r` of the product is `((e_r A1) A2) ... An`: the row of `A1` pushed through the chain
/// one vector-matrix product at a time, `sum p_(i-1) p_i` multiply-adds per row instead of the
/// product's own cost. Alongside, `s' = sqrt((s^2) (A^2))` (squares taken entry by entry) follows
/// the size the entries would have without cancellation: what rounding errors scale with, even
/// where an entry happens to be near zero. Returns `(values, sizes)`, `rows.len() x p_n` each.
pub fn exact_rows(
    matrices: &[Vec<f32>],
    dims: &[u32],
    rows: &[usize],
) -> (Vec<f64>, Vec<f64>) {
    let n = dims.len() - 1;
    assert_eq!(matrices.len(), n, "one matrix per pair of dimensions");
    let width = dims[n] as usize;
    let per_row: Vec<(Vec<f64>, Vec<f64>)> = rows
        .par_iter()
        .map(|&r| {
            let p1 = dims[1] as usize;
            let first = &matrices[0][r * p1..(r + 1) * p1];
            let mut value: Vec<f64> = first.iter().map(|&x| f64::from(x)).collect();
            let mut size_sq: Vec<f64> = value.iter().map(|x| x * x).collect();
            for (a, w) in matrices[1..].iter().zip(dims[1..].windows(2)) {
                let (q, cols) = (w[0] as usize, w[1] as usize);
                let (mut next, mut next_sq) = (vec![0f64; cols], vec![0f64; cols]);
                for i in 0..q {
                    let (v, s) = (value[i], size_sq[i]);
                    for ((out, out_sq), &x) in next
                        .iter_mut()
                        .zip(next_sq.iter_mut())
                        .zip(&a[i * cols..(i + 1) * cols])
                    {
                        let x = f64::from(x);
                        *out += v * x;
                        *out_sq += s * x * x;
                    }
                }
                (value, size_sq) = (next, next_sq);
            }
            (value, size_sq.into_iter().map(f64::sqrt).collect())
        })
        .collect();
    let mut values = Vec::with_capacity(rows.len() * width);
    let mut sizes = Vec::with_capacity(rows.len() * width);
    for (v, s) in per_row {
        values.extend(v);
        sizes.extend(s);
    }
    (values, sizes)
}

/// Sampled rows of the exact product of a chain's matrices: what both GPU products are checked
/// against.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReference {
    pub rows: Vec<usize>,
    /// `rows.len() x p_n` exact entries.
    pub values: Vec<f64>,
    /// The root mean square of the entries' sizes (see [`exact_rows`]): the `scale` of
    /// [`tolerance`](super::verify::tolerance).
    pub scale: f64,
}

impl ChainReference {
    /// The rows of [`sample_rows`] (first and last, both sides of 16-, 32- and 128-row edges, the
    /// middle, and six chosen by `seed`).
    pub fn sampled(matrices: &[Vec<f32>], dims: &[u32], seed: u64) -> Self {
        Self::for_rows(matrices, dims, sample_rows(dims[0] as usize, seed))
    }

    /// Exactly the rows `rows`.
    pub fn for_rows(matrices: &[Vec<f32>], dims: &[u32], rows: Vec<usize>) -> Self {
        let (values, sizes) = exact_rows(matrices, dims, &rows);
        let scale = (sizes.iter().map(|s| s * s).sum::<f64>()
            / sizes.len().max(1) as f64)
            .sqrt();
        Self { rows, values, scale }
    }
}

#[cfg(test)]
mod tests {
    use super::super::chains::random_chains;
    use super::*;

    /// The whole product in f64, the naive way.
    fn brute_force_product(matrices: &[Vec<f32>], dims: &[u32]) -> Vec<f64> {
        let mut acc: Vec<f64> = matrices[0].iter().map(|&x| f64::from(x)).collect();
        for (a, w) in matrices[1..].iter().zip(dims[1..].windows(2)) {
            let (q, r) = (w[0] as usize, w[1] as usize);
            let rows = acc.len() / q;
            let mut next = vec![0f64; rows * r];
            for i in 0..rows {
                for k in 0..q {
                    for j in 0..r {
                        next[i * r + j] += acc[i * q + k] * f64::from(a[k * r + j]);
                    }
                }
            }
            acc = next;
        }
        acc
    }

    #[test]
    fn row_propagation_matches_the_brute_force_product() {
        let dims = [9u32, 4, 11, 1, 7, 6];
        let m = chain_matrices(&dims, 3);
        let full = brute_force_product(&m, &dims);
        let rows: Vec<usize> = (0..9).collect();
        let (values, sizes) = exact_rows(&m, &dims, &rows);
        assert_eq!(values.len(), 9 * 6);
        for (got, want) in values.iter().zip(&full) {
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
        // The sizes are the square roots of the product of the entry-wise squared factors.
        let squared: Vec<Vec<f32>> =
            m.iter().map(|a| a.iter().map(|x| x * x).collect()).collect();
        for (got, want) in sizes.iter().zip(brute_force_product(&squared, &dims)) {
            assert!(
                (got - want.sqrt()).abs() <= 1e-6 * want.sqrt(),
                "{got} vs {}",
                want.sqrt()
            );
        }
        // A product of inner dimension 1 has no cancellation: there the size is the magnitude.
        let (v, s) = exact_rows(&m[2..4], &dims[2..5], &[5]);
        assert!(v.iter().zip(&s).all(|(v, s)| (v.abs() - s).abs() <= 1e-12 * s));
        let some = exact_rows(&m, &dims, &[8, 0]).0;
        assert_eq!(&some[..6], &full[8 * 6..9 * 6]);
    }

    #[test]
    fn inputs_keep_every_partial_product_near_unit_scale() {
        // 30 random factors: the exact product's entries stay of the size of a single factor's.
        let dims = random_chains(1, 30..=30, 100..=400, 9).remove(0).dims;
        let m = chain_matrices(&dims, 1);
        let reference = ChainReference::for_rows(&m, &dims, vec![0, 5]);
        let single = 1.0 / f64::from(dims[30]).sqrt();
        assert!(
            reference.scale > single / 3.0 && reference.scale < single * 3.0,
            "{} vs {single}",
            reference.scale
        );
        let rms = (reference.values.iter().map(|v| v * v).sum::<f64>()
            / reference.values.len() as f64)
            .sqrt();
        assert!(rms > single / 3.0 && rms < single * 3.0);
    }
}
