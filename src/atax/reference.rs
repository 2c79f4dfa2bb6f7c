//! The CPU reference, the tolerance a GPU result must meet, and the slides' claims.
//!
//! Source of the claims: M. Testoni and A. Chiarabini, *The Race Against Memory Latency:
//! Benchmarking CUDA Optimizations for the ATAX Kernel* (slides). Their speedups are for the
//! EXTRALARGE dataset, relative to their unoptimised two-kernel version.

use rayon::prelude::*;

use crate::harness::Tolerance;

/// What the reference computed: y in double, and for every y_j the sum of the magnitudes of
/// its terms, Σ_i |a_ij · tmp_i|: the scale a rounding error of y_j is proportional to.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub tmp: Vec<f64>,
    pub y: Vec<f64>,
    pub y_magnitude: Vec<f64>,
}

// ANCHOR: reference
/// y = Aᵀ(A·x) for a row-major `m` × `n` matrix, every sum accumulated in `f64`.
pub fn atax<T: Copy + Into<f64> + Sync>(
    a: &[T],
    x: &[T],
    m: usize,
    n: usize,
) -> Reference {
    assert_eq!(a.len(), m * n, "A must hold m × n elements");
    assert_eq!(x.len(), n, "x must hold n elements");
    let tmp: Vec<f64> = a
        .par_chunks(n.max(1))
        .take(m)
        .map(|row| row.iter().zip(x).map(|(&a, &x)| a.into() * x.into()).sum())
        .collect();
    // y by blocks of rows, each block's partial sums added in block
    // order: deterministic.
    let rows_per_block = m.div_ceil(rayon::current_num_threads().max(1) * 4).max(1);
    let zero = || (vec![0f64; n], vec![0f64; n]);
    let partials: Vec<(Vec<f64>, Vec<f64>)> = (0..m.div_ceil(rows_per_block))
        .into_par_iter()
        .map(|b| {
            let (mut y, mut mag) = zero();
            for i in b * rows_per_block..((b + 1) * rows_per_block).min(m) {
                for (j, &a) in a[i * n..(i + 1) * n].iter().enumerate() {
                    let term = a.into() * tmp[i];
                    y[j] += term;
                    mag[j] += term.abs();
                }
            }
            (y, mag)
        })
        .collect();
    let (mut y, mut y_magnitude) = zero();
    for (py, pm) in &partials {
        y.iter_mut().zip(py).for_each(|(s, v)| *s += v);
        y_magnitude.iter_mut().zip(pm).for_each(|(s, v)| *s += v);
    }
    Reference { tmp, y, y_magnitude }
}
// ANCHOR_END: reference

// ANCHOR: tolerance
/// The tolerance for a GPU y computed in a type with machine epsilon `eps`, reductions
/// of length `m` (y) and `n` (tmp). Rounding errors of a sum of k terms grow like
/// √k · eps times the sum of the terms' magnitudes when they do not all point the same
/// way; the factor 4 is headroom for the orders the kernels add in (tree, blocked,
/// sequential). A wrong index or a missing row changes y_j by about its own size,
/// far beyond this.
pub fn tolerance(eps: f64, m: usize, n: usize, max_magnitude: f64) -> Tolerance {
    let growth = 4.0 * eps * ((m + n) as f64).sqrt();
    Tolerance::new(growth * max_magnitude.max(f64::MIN_POSITIVE), growth)
}
// ANCHOR_END: tolerance

impl Reference {
    /// [`tolerance`] for this result.
    pub fn tolerance(&self, eps: f64, m: usize, n: usize) -> Tolerance {
        tolerance(eps, m, n, self.y_magnitude.iter().copied().fold(0.0, f64::max))
    }
}

/// One of the slides' speedups (EXTRALARGE, over their first version).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlidesClaim {
    /// The slides' name for the technique.
    pub slides_name: &'static str,
    pub speedup: f64,
}

/// The five speedups the slides report for EXTRALARGE.
pub const SLIDES_CLAIMS: [SlidesClaim; 5] = [
    SlidesClaim { slides_name: "Pinned Memory", speedup: 2.54 },
    SlidesClaim { slides_name: "CUDA Streams", speedup: 2.18 },
    SlidesClaim { slides_name: "Tiling - Global", speedup: 1.89 },
    SlidesClaim { slides_name: "UVM (no OPT)", speedup: 0.30 },
    SlidesClaim { slides_name: "CUDA Streams (no OPT)", speedup: 0.72 },
];

/// The time the slides give for their pinned version at EXTRALARGE ("pinned finishes in
/// 55.17 ms"), the one absolute time they report.
pub const SLIDES_PINNED_MS: f64 = 55.17;
