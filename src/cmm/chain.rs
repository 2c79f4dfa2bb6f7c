//! Does the optimal order pay? The dynamic program promises fewer scalar multiplications; here
//! real matrix chains are multiplied with cuBLAS SGEMM in two orders, left to right
//! (`((A1A2)A3)...An`) and the program's optimum, both products are verified, and both are timed.
//!
//! * the chains: [`realistic_chains`] for the measurement, [`realistic_chains_quick`] for tests
//!   and sanitizers; [`footprint`] and [`Footprint::within_budget`] keep each one's device memory
//!   under [`DEVICE_BYTES_LIMIT`] and its costlier order under [`MAX_SECONDS_PER_RUN`];
//! * the prediction: [`predict`], the optimum from [`dp::solve_serial`] and both orders' costs from
//!   [`ParenTree::cost`];
//! * the inputs: [`chain_matrices`], scaled so that every partial product keeps the size of a
//!   single factor;
//! * the GPU: [`ChainEvaluation`] turns an order into a list of SGEMMs, with one buffer per
//!   product allocated before any timing; [`multiply_chain`] is the one-shot form;
//! * the checks: [`ChainReference`] (sampled rows of the exact product, in `f64` on the CPU),
//!   [`tolerance`], [`check_product`], [`check_agreement`];
//! * the measurement: [`measure_chain`], [`measure_chains`], and the figure ([`figure_points`],
//!   [`figure_spec`]).
//!
//! **Tolerance.** Every order performs one product per interior dimension: the product that joins
//! `A_i..A_k` to `A_(k+1)..A_j` has inner dimension `p_k`, and each `k = 1..n-1` is the split of
//! exactly one product. A product of inner dimension `q` rounds each output, a sum of `q` terms,
//! with an error whose standard deviation is about `u sqrt(q/2)` times the output's size
//! (`u = 2^-24`, errors of a random walk); the worst case grows as `q u`. Because every factor is
//! scaled to keep sizes (see [`chain_matrices`]), an error made in one product reaches the final
//! product with its relative size unchanged, so the errors of the `n - 1` products add. The check
//! allows `2 q eps` (`eps = f32::EPSILON = 2u`) per product, the bound the tiling chapter uses
//! for one multiply, summed over the products, times the size of the exact product's entries:
//! `abs = 2 eps (p_1 + ... + p_(n-1)) scale`: at least `4 sqrt(2 sum p)` standard deviations of
//! the expected error (56 for the smallest sum the quick chains have, hundreds for the long
//! chains), and above the worst case of the products whose `q` is small. `scale` is the root mean
//! square of the sizes the exact entries would have without cancellation ([`exact_rows`]), so an
//! entry that happens to be near zero is not held to a tighter bound than its neighbours. The two
//! orders are each within that of the exact product, so they may differ from each other by twice it.
//! A wrong factor, a transposed operand, a skipped or unwritten product is off by the size of the
//! entries themselves and fails by orders of magnitude; NaN never passes.
//!
//! **TF32** stays off as in the tiling chapter: the cuBLAS handle keeps its default math mode, and
//! [`open_blas`] reads the mode back and refuses a handle set to TF32 (or to BF16x9 emulation).

use std::sync::Arc;

use cudarc::cublas::sys::cublasMath_t;
use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaSlice, CudaStream};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::dp::{self, validate_dims};
use super::error::CmmError;
use super::paren::{self, ParenTree};
use crate::harness::plot::{Point, Spec};
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Mismatch, Report, Tolerance};
use crate::harness::{inputs, Gpu, Stats, UsageError};
use crate::tiling::gemm::{sample_rows, sgemm_row_major};

/// The most device memory one chain's measurement may hold: its inputs and one buffer per product
/// of both orders ([`device_bytes`]).
pub const DEVICE_BYTES_LIMIT: u128 = 4 << 30;

/// The FP32 rate the time budget assumes: about what cuBLAS SGEMM reaches on an H100 at
/// 4096 x 4096 x 4096 with TF32 off. Thin products run slower, which the budget's slack absorbs.
pub const BUDGET_FLOP_PER_S: f64 = 50e12;

/// The longest one run of a chain's costlier order may take at [`BUDGET_FLOP_PER_S`], so that a
/// measurement of every chain, with warm-up and repetitions, stays well under a minute.
pub const MAX_SECONDS_PER_RUN: f64 = 1.0;

/// How many random chains [`realistic_chains`] adds to its hand-picked ones.
pub const RANDOM_CHAINS: usize = 12;

/// A chain with a name for tables and figures: matrix `i` (1-based) is `dims[i-1] x dims[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedChain {
    pub name: String,
    pub dims: Vec<u32>,
}

impl NamedChain {
    pub fn new(name: &str, dims: Vec<u32>) -> Self {
        Self { name: name.to_string(), dims }
    }

    /// Matrices in the chain.
    pub fn matrices(&self) -> usize {
        self.dims.len().saturating_sub(1)
    }
}

/// `count` chains of `n` matrices (`n` uniform in `lengths`) with dimensions uniform in `dims`,
/// named `random 1`, `random 2`, ..., reproducible from `seed` (ChaCha8).
fn random_chains(
    count: usize,
    lengths: std::ops::RangeInclusive<usize>,
    dims: std::ops::RangeInclusive<u32>,
    seed: u64,
) -> Vec<NamedChain> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (1..=count)
        .map(|c| {
            let n = rng.gen_range(lengths.clone());
            NamedChain::new(
                &format!("random {c}"),
                (0..=n).map(|_| rng.gen_range(dims.clone())).collect(),
            )
        })
        .collect()
}

/// The chains the measurement multiplies, hand-picked ones first:
///
/// * `worked example x50`: Seifi & Al-Mamun's `20, 2, 30, 12, 8` scaled by 50, whose optimum
///   `(A1((A2A3)A4))` needs 8.4 times fewer multiplications than left to right;
/// * `tall-skinny then wide`: `U V^T W X`, a rank-64 operator `U V^T` (4096 x 64 times
///   64 x 4096) after a dense 4096 x 4096 `W`, applied to 256 vectors `X`: left to right forms
///   the 4096 x 4096 outer product `U V^T` and multiplies it by `W` (4096^3 multiplications), the
///   trap the program avoids with `U((V^T W) X)`, 61 times fewer;
/// * `MLP-like, 8 layers`: a batch of 4096 inputs of 784 features through eight linear layers
///   (784 -> 2048 -> 2048 -> 1024 -> 1024 -> 512 -> 512 -> 256 -> 10): left to right is the
///   forward pass; the optimum, right to left, first collapses the layers into one 784 x 10
///   matrix (309 times fewer multiplications);
/// * [`RANDOM_CHAINS`] random chains of 8 to 30 matrices with dimensions uniform in 100..=3000,
///   from `seed`.
///
/// Every chain holds at most about 3.2 GB on the device (30 inputs of at most 3000 x 3000 floats,
/// and at most as many intermediates per order) and its left-to-right order needs at most
/// 29 x 3000^3 multiplications, about 31 ms at [`BUDGET_FLOP_PER_S`]: see [`footprint`].
pub fn realistic_chains(seed: u64) -> Vec<NamedChain> {
    let mut chains = vec![
        NamedChain::new("worked example x50", vec![1000, 100, 1500, 600, 400]),
        NamedChain::new("tall-skinny then wide", vec![4096, 64, 4096, 4096, 256]),
        NamedChain::new(
            "MLP-like, 8 layers",
            vec![4096, 784, 2048, 2048, 1024, 1024, 512, 512, 256, 10],
        ),
    ];
    chains.extend(random_chains(RANDOM_CHAINS, 8..=30, 100..=3000, seed));
    chains
}

/// Small chains (every dimension at most 300) for tests and sanitizers: the three hand-picked
/// shapes of [`realistic_chains`] shrunk, mostly to odd sizes, and six random chains of 2 to 12
/// matrices with dimensions uniform in 1..=300, so that sizes are rarely multiples of a tile and
/// a chain of a single product, or a dimension of 1, can occur.
pub fn realistic_chains_quick(seed: u64) -> Vec<NamedChain> {
    let mut chains = vec![
        NamedChain::new("worked example x5", vec![100, 10, 150, 60, 40]),
        NamedChain::new("tall-skinny then wide", vec![255, 7, 257, 253, 17]),
        NamedChain::new(
            "MLP-like, 8 layers",
            vec![300, 97, 255, 255, 129, 129, 65, 65, 33, 10],
        ),
    ];
    chains.extend(random_chains(6, 2..=12, 1..=300, seed));
    chains
}

/// The order `((A1A2)A3)...An`.
pub fn left_to_right(n: usize) -> ParenTree {
    assert!(n >= 1, "a chain has at least one matrix");
    (2..=n).fold(ParenTree::matrix(1), |product, i| {
        ParenTree::product(product, ParenTree::matrix(i))
            .expect("A1..A(i-1) ends just before Ai")
    })
}

/// What the dynamic program predicts for one chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    pub left_to_right: ParenTree,
    pub optimal: ParenTree,
    /// Scalar multiplications of each order.
    pub left_to_right_mults: u128,
    pub optimal_mults: u128,
}

impl Prediction {
    /// How many times more multiplications left to right needs.
    pub fn ratio(&self) -> f64 {
        self.left_to_right_mults as f64 / self.optimal_mults as f64
    }
}

/// Both orders of `dims` and their costs: the optimum read back from [`dp::solve_serial`]'s table.
pub fn predict(dims: &[u32]) -> Result<Prediction, CmmError> {
    let n = validate_dims(dims)?;
    let table = dp::solve_serial(dims)?;
    let optimal = paren::optimal_tree(&table);
    let left_to_right = left_to_right(n);
    Ok(Prediction {
        left_to_right_mults: left_to_right.cost(dims)?,
        optimal_mults: optimal.cost(dims)?,
        left_to_right,
        optimal,
    })
}

/// Floating-point operations of `mults` multiply-adds, in GFLOP.
pub fn gflop(mults: u128) -> f64 {
    2.0 * mults as f64 / 1e9
}

/// Where an operand of a product comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// Input matrix `A(i+1)`.
    Input(usize),
    /// The result of an earlier product of the schedule.
    Product(usize),
}

/// One product of a schedule: row-major `out (m x n) = left (m x k) right (k x n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Step {
    left: Operand,
    right: Operand,
    m: usize,
    k: usize,
    n: usize,
}

/// The products of an order, each after the products it reads (post-order), so product `s`
/// reads only inputs and products `< s`, and the last product is the chain's.
fn schedule(dims: &[u32], order: &ParenTree) -> Result<Vec<Step>, CmmError> {
    fn visit(tree: &ParenTree, dims: &[u32], steps: &mut Vec<Step>) -> Operand {
        match tree.factors() {
            None => Operand::Input(tree.first() - 1),
            Some((left_tree, right_tree)) => {
                let left = visit(left_tree, dims, steps);
                let right = visit(right_tree, dims, steps);
                let dim = |x: usize| dims[x] as usize;
                steps.push(Step {
                    left,
                    right,
                    m: dim(tree.first() - 1),
                    k: dim(left_tree.last()),
                    n: dim(tree.last()),
                });
                Operand::Product(steps.len() - 1)
            }
        }
    }
    // The cost check also proves that the tree covers exactly A1..An.
    order.cost(dims)?;
    let mut steps = Vec::new();
    visit(order, dims, &mut steps);
    Ok(steps)
}

/// Bytes of the inputs of `dims` in `f32`.
fn input_bytes(dims: &[u32]) -> u128 {
    dims.windows(2).map(|w| 4 * u128::from(w[0]) * u128::from(w[1])).sum()
}

/// Device memory the evaluation of `orders` holds at once: the inputs, plus one buffer per
/// product of every order (what [`ChainEvaluation`] allocates), in bytes.
pub fn device_bytes(dims: &[u32], orders: &[&ParenTree]) -> Result<u128, CmmError> {
    let mut bytes = input_bytes(dims);
    for order in orders {
        bytes += schedule(dims, order)?
            .iter()
            .map(|s| 4 * (s.m * s.n) as u128)
            .sum::<u128>();
    }
    Ok(bytes)
}

/// What a chain's measurement costs, before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Footprint {
    /// [`device_bytes`] of both orders.
    pub device_bytes: u128,
    /// The largest product either order forms, in bytes.
    pub largest_product_bytes: u128,
    /// FLOP of the costlier order (left to right, since the optimum is never costlier).
    pub worst_order_flop: f64,
}

impl Footprint {
    /// Seconds the costlier order takes at [`BUDGET_FLOP_PER_S`].
    pub fn seconds_at_budget_rate(&self) -> f64 {
        self.worst_order_flop / BUDGET_FLOP_PER_S
    }

    /// Within [`DEVICE_BYTES_LIMIT`] and [`MAX_SECONDS_PER_RUN`].
    pub fn within_budget(&self) -> bool {
        self.device_bytes <= DEVICE_BYTES_LIMIT
            && self.seconds_at_budget_rate() <= MAX_SECONDS_PER_RUN
    }
}

/// The footprint of measuring both orders of `dims`.
pub fn footprint(dims: &[u32]) -> Result<Footprint, CmmError> {
    let p = predict(dims)?;
    let mut largest = 0u128;
    for order in [&p.left_to_right, &p.optimal] {
        largest = schedule(dims, order)?
            .iter()
            .map(|s| 4 * (s.m * s.n) as u128)
            .fold(largest, u128::max);
    }
    Ok(Footprint {
        device_bytes: device_bytes(dims, &[&p.left_to_right, &p.optimal])?,
        largest_product_bytes: largest,
        worst_order_flop: 2.0 * p.left_to_right_mults.max(p.optimal_mults) as f64,
    })
}

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
    /// [`tolerance`].
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

/// How far a product of the chain computed in FP32 may be from the exact one, for entries of
/// size `scale`: `2 eps (p_1 + ... + p_(n-1)) scale`, absolute. The derivation is in the module's
/// documentation; it does not depend on the order.
pub fn tolerance(dims: &[u32], scale: f64) -> Tolerance {
    let inner: f64 =
        dims[1..dims.len().saturating_sub(1)].iter().map(|&p| f64::from(p)).sum();
    Tolerance::new(2.0 * f64::from(f32::EPSILON) * inner * scale, 0.0)
}

fn size_label(dims: &[u32]) -> String {
    format!(
        "{} matrices, {} x {} product",
        dims.len() - 1,
        dims[0],
        dims[dims.len() - 1]
    )
}

/// Checks a product read back from the GPU (`p_0 x p_n`, row-major): every entry finite (an
/// unwritten one is poison, NaN), and the reference's rows within [`tolerance`] of the exact ones.
pub fn check_product(
    label: &str,
    dims: &[u32],
    got: &[f32],
    reference: &ChainReference,
) -> Result<Report, Mismatch> {
    let width = dims[dims.len() - 1] as usize;
    let size = size_label(dims);
    let expected = dims[0] as usize * width;
    if got.len() != expected {
        let got_len = got.len();
        return Err(Mismatch {
            kernel: label.into(),
            size,
            index: got_len.min(expected),
            got: format!("a buffer of {got_len} elements"),
            want: format!("{expected} elements"),
            wrong: got_len.abs_diff(expected),
            total: expected,
        });
    }
    if let Some(i) = got.iter().position(|x| !x.is_finite()) {
        let wrong = got.iter().filter(|x| !x.is_finite()).count();
        return Err(Mismatch {
            kernel: label.into(),
            size,
            index: i,
            got: format!("{:e}", got[i]),
            want: "a finite value".into(),
            wrong,
            total: got.len(),
        });
    }
    let picked: Vec<f32> = reference
        .rows
        .iter()
        .flat_map(|&r| got[r * width..(r + 1) * width].iter().copied())
        .collect();
    verify::check_close(
        label,
        &size,
        &picked,
        &reference.values,
        tolerance(dims, reference.scale),
    )
}

/// Checks two orders' products against each other, entry by entry: each is within
/// [`tolerance`] of the exact product, so they may differ by twice that.
pub fn check_agreement(
    label: &str,
    dims: &[u32],
    got: &[f32],
    other: &[f32],
    scale: f64,
) -> Result<Report, Mismatch> {
    let single = tolerance(dims, scale);
    verify::check_close(
        label,
        &size_label(dims),
        got,
        other,
        Tolerance::new(2.0 * single.abs, 2.0 * single.rel),
    )
}

/// A cuBLAS handle on `gpu`'s stream, the stream every function here enqueues on, in the
/// default math mode: FP32 SGEMM with TF32 off, as the tiling chapter uses it. Fails if the mode
/// read back allows TF32 or BF16x9 emulation (a changed library default, say).
pub fn open_blas(gpu: &Gpu) -> anyhow::Result<CudaBlas> {
    let blas = CudaBlas::new(gpu.stream.clone())?;
    let mut mode = 0u32;
    // SAFETY: cublasGetMathMode writes one C enum (an unsigned int) through the pointer; reading
    // it as u32 accepts any combination of flags, which no Rust enum value could hold.
    unsafe {
        cudarc::cublas::sys::cublasGetMathMode(
            *blas.handle(),
            (&mut mode as *mut u32).cast::<cublasMath_t>(),
        )
        .result()?
    };
    // The low bits name the mode; CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION is a flag above.
    let base = mode & 0xF;
    let reduced = [
        cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH as u32,
        cublasMath_t::CUBLAS_FP32_EMULATED_BF16X9_MATH as u32,
    ];
    if reduced.contains(&base) {
        anyhow::bail!("the cuBLAS handle's math mode is {mode}, which lets SGEMM round its inputs below FP32");
    }
    Ok(blas)
}

/// One order of one chain, ready to run: its products in dependency order, each with its own
/// device buffer, allocated here, before any timing, and reused by every run.
pub struct ChainEvaluation {
    dims: Vec<u32>,
    steps: Vec<Step>,
    buffers: Vec<CudaSlice<f32>>,
}

impl ChainEvaluation {
    /// Plans `order` on `dims` and allocates one buffer per product on `stream`. Chains of one
    /// matrix have no product to evaluate and are refused, as are dimensions cuBLAS's 32-bit
    /// ints cannot describe.
    pub fn new(
        stream: &Arc<CudaStream>,
        dims: &[u32],
        order: &ParenTree,
    ) -> anyhow::Result<Self> {
        let n = validate_dims(dims)?;
        if n < 2 {
            return Err(UsageError(
                "a chain of one matrix has no product to evaluate".into(),
            )
            .into());
        }
        if let Some(p) = dims.iter().find(|&&p| i32::try_from(p).is_err()) {
            return Err(UsageError(format!(
                "dimension {p} exceeds cuBLAS's 32-bit int"
            ))
            .into());
        }
        let steps = schedule(dims, order)?;
        let buffers = steps
            .iter()
            .map(|s| stream.alloc_zeros::<f32>(s.m * s.n))
            .collect::<Result<_, _>>()?;
        Ok(Self { dims: dims.to_vec(), steps, buffers })
    }

    /// Products per run (`n - 1`).
    pub fn products(&self) -> usize {
        self.steps.len()
    }

    /// Enqueues every product on `blas`'s stream; the chain's product ends in [`Self::result`].
    /// `matrices[i]` must hold `A(i+1)`, `dims[i] x dims[i+1]` floats, row-major.
    pub fn run(
        &mut self,
        blas: &CudaBlas,
        matrices: &[CudaSlice<f32>],
    ) -> anyhow::Result<()> {
        let n = self.dims.len() - 1;
        if matrices.len() != n {
            anyhow::bail!("{} matrices given for a chain of {n}", matrices.len());
        }
        for (i, (m, w)) in matrices.iter().zip(self.dims.windows(2)).enumerate() {
            if m.len() != w[0] as usize * w[1] as usize {
                anyhow::bail!(
                    "A{} holds {} floats, not {} x {}",
                    i + 1,
                    m.len(),
                    w[0],
                    w[1]
                );
            }
        }
        for (s, step) in self.steps.iter().enumerate() {
            // Post-order: product s reads only products before it, so split the buffers there.
            let (done, rest) = self.buffers.split_at_mut(s);
            let operand = |o: Operand| match o {
                Operand::Input(i) => &matrices[i],
                Operand::Product(j) => &done[j],
            };
            sgemm_row_major(
                blas,
                (step.m, step.k, step.n),
                operand(step.left),
                operand(step.right),
                &mut rest[0],
            )?;
        }
        Ok(())
    }

    /// The chain's product, `p_0 x p_n` row-major (valid after [`Self::run`]).
    pub fn result(&self) -> &CudaSlice<f32> {
        self.buffers.last().expect("a chain of two or more matrices has a product")
    }

    /// Takes the chain's product out, dropping the intermediates.
    pub fn into_result(mut self) -> CudaSlice<f32> {
        self.buffers.pop().expect("a chain of two or more matrices has a product")
    }

    /// Poisons every product buffer (NaN), so a product never written cannot pass a check.
    pub fn poison(&mut self, gpu: &Gpu) -> anyhow::Result<()> {
        for b in &mut self.buffers {
            gpu.poison(b)?;
        }
        Ok(())
    }
}

/// Multiplies the chain in `order` once and returns its product (`p_0 x p_n`, row-major). For
/// repeated runs, build a [`ChainEvaluation`] once instead: this allocates every intermediate.
pub fn multiply_chain(
    blas: &CudaBlas,
    stream: &Arc<CudaStream>,
    matrices: &[CudaSlice<f32>],
    dims: &[u32],
    order: &ParenTree,
) -> anyhow::Result<CudaSlice<f32>> {
    let mut evaluation = ChainEvaluation::new(stream, dims, order)?;
    evaluation.run(blas, matrices)?;
    Ok(evaluation.into_result())
}

/// A chain's matrices from [`chain_matrices`], on the host (for the CPU reference) and the device.
pub struct ChainInputs {
    pub dims: Vec<u32>,
    pub host: Vec<Vec<f32>>,
    pub device: Vec<CudaSlice<f32>>,
}

impl ChainInputs {
    pub fn upload(gpu: &Gpu, dims: &[u32], seed: u64) -> anyhow::Result<Self> {
        let host = chain_matrices(dims, seed);
        let device =
            host.iter().map(|m| gpu.stream.clone_htod(m)).collect::<Result<_, _>>()?;
        Ok(Self { dims: dims.to_vec(), host, device })
    }
}

/// What the verification of both orders saw.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReports {
    pub left_to_right: Report,
    pub optimal: Report,
    /// The two products against each other, every entry.
    pub agreement: Report,
}

/// Poisons both orders' buffers, runs each once, and checks each against `reference` and the two
/// against each other. `blas` must run on `gpu.stream` ([`open_blas`]).
pub fn verify_orders(
    gpu: &Gpu,
    blas: &CudaBlas,
    inputs: &ChainInputs,
    name: &str,
    left_to_right: &mut ChainEvaluation,
    optimal: &mut ChainEvaluation,
    reference: &ChainReference,
) -> anyhow::Result<ChainReports> {
    let dims = &inputs.dims;
    let mut products = Vec::with_capacity(2);
    for evaluation in [&mut *left_to_right, &mut *optimal] {
        evaluation.poison(gpu)?;
        evaluation.run(blas, &inputs.device)?;
        products.push(gpu.stream.clone_dtoh(evaluation.result())?);
    }
    let label = |order: &str| format!("cuBLAS SGEMM chain `{name}`, {order}");
    Ok(ChainReports {
        left_to_right: check_product(
            &label("left to right"),
            dims,
            &products[0],
            reference,
        )?,
        optimal: check_product(&label("optimal order"), dims, &products[1], reference)?,
        agreement: check_agreement(
            &label("left to right vs optimal order"),
            dims,
            &products[0],
            &products[1],
            reference.scale,
        )?,
    })
}

/// One chain's line of the table: prediction, measurement, and what the two say together.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChainRow {
    pub chain: String,
    pub matrices: usize,
    /// `2 x` scalar multiplications, in GFLOP.
    pub left_to_right_gflop: f64,
    pub optimal_gflop: f64,
    /// Left to right's multiplications over the optimum's.
    pub predicted_ratio: f64,
    pub left_to_right_ms_median: f64,
    pub left_to_right_ms_min: f64,
    pub left_to_right_ms_max: f64,
    pub optimal_ms_median: f64,
    pub optimal_ms_min: f64,
    pub optimal_ms_max: f64,
    /// Left to right's median time over the optimum's.
    pub measured_ratio: f64,
    /// Achieved rates at the median times.
    pub left_to_right_gflop_per_s: f64,
    pub optimal_gflop_per_s: f64,
}

impl ChainRow {
    pub fn new(
        chain: &NamedChain,
        prediction: &Prediction,
        left_to_right: &Stats,
        optimal: &Stats,
    ) -> Self {
        let (ltr_gflop, opt_gflop) =
            (gflop(prediction.left_to_right_mults), gflop(prediction.optimal_mults));
        Self {
            chain: chain.name.clone(),
            matrices: chain.matrices(),
            left_to_right_gflop: ltr_gflop,
            optimal_gflop: opt_gflop,
            predicted_ratio: prediction.ratio(),
            left_to_right_ms_median: left_to_right.median_ms,
            left_to_right_ms_min: left_to_right.min_ms,
            left_to_right_ms_max: left_to_right.max_ms,
            optimal_ms_median: optimal.median_ms,
            optimal_ms_min: optimal.min_ms,
            optimal_ms_max: optimal.max_ms,
            measured_ratio: left_to_right.median_ms / optimal.median_ms,
            left_to_right_gflop_per_s: ltr_gflop / (left_to_right.median_ms * 1e-3),
            optimal_gflop_per_s: opt_gflop / (optimal.median_ms * 1e-3),
        }
    }

    /// The smallest and largest time ratio the repetitions allow: left to right's fastest over
    /// the optimum's slowest, and the other way round.
    pub fn measured_ratio_range(&self) -> (f64, f64) {
        (
            self.left_to_right_ms_min / self.optimal_ms_max,
            self.left_to_right_ms_max / self.optimal_ms_min,
        )
    }
}

/// Predicts, verifies and times one chain on `gpu`: fresh inputs from `seed`, both orders
/// evaluated, checked ([`verify_orders`]) and then timed under `plan`, each order's buffers
/// allocated before its timing. Prints nothing.
///
/// With `L2::Warm`, a repetition starts with whatever the previous one left in L2: the last
/// products of a small chain may still be there, but the inputs of all but the smallest chains
/// (tens of MB to a GB) exceed the H100's 50 MB of L2, so the state matters little either way.
pub fn measure_chain(
    gpu: &Gpu,
    blas: &CudaBlas,
    chain: &NamedChain,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<ChainRow> {
    let refuse = |why: String| UsageError(format!("chain `{}`: {why}", chain.name));
    let dims = &chain.dims;
    let prediction = predict(dims).map_err(|e| refuse(e.to_string()))?;
    let bytes = device_bytes(dims, &[&prediction.left_to_right, &prediction.optimal])
        .map_err(|e| refuse(e.to_string()))?;
    let room = gpu.info.total_mem_bytes as u128 * 3 / 4;
    if bytes > room {
        return Err(
            refuse(format!("both orders need {bytes} bytes of device memory, more than 3/4 of this device's")).into()
        );
    }
    let inputs = ChainInputs::upload(gpu, dims, seed)?;
    let reference = ChainReference::sampled(&inputs.host, dims, seed);
    let mut left_to_right =
        ChainEvaluation::new(&gpu.stream, dims, &prediction.left_to_right)?;
    let mut optimal = ChainEvaluation::new(&gpu.stream, dims, &prediction.optimal)?;
    verify_orders(
        gpu,
        blas,
        &inputs,
        &chain.name,
        &mut left_to_right,
        &mut optimal,
        &reference,
    )?;
    let ltr_stats = gpu.time(plan, |_| left_to_right.run(blas, &inputs.device))?;
    let opt_stats = gpu.time(plan, |_| optimal.run(blas, &inputs.device))?;
    Ok(ChainRow::new(chain, &prediction, &ltr_stats, &opt_stats))
}

/// [`measure_chain`] for every chain, chain `c` (0-based) with inputs from `seed + c`, on one
/// cuBLAS handle from [`open_blas`]. Prints nothing; the first failed check ends it.
pub fn measure_chains(
    gpu: &Gpu,
    chains: &[NamedChain],
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<ChainRow>> {
    let blas = open_blas(gpu)?;
    chains
        .iter()
        .enumerate()
        .map(|(c, chain)| {
            measure_chain(gpu, &blas, chain, plan, seed.wrapping_add(c as u64))
        })
        .collect()
}

/// The figure's series of chains.
pub const MEASURED_SERIES: &str = "measured time ratio";
/// The figure's reference line.
pub const PREDICTED_SERIES: &str = "predicted = measured";

/// The figure's points: one per chain at (predicted FLOP ratio, measured time ratio), with the
/// ratio's range over the repetitions as error bar, sorted by predicted ratio; and the line
/// `y = x` across the predicted ratios, where a chain would lie if time followed FLOPs.
pub fn figure_points(rows: &[ChainRow]) -> Vec<Point> {
    let mut sorted: Vec<&ChainRow> = rows.iter().collect();
    sorted.sort_by(|a, b| a.predicted_ratio.total_cmp(&b.predicted_ratio));
    let mut points: Vec<Point> = sorted
        .iter()
        .map(|r| {
            let (lo, hi) = r.measured_ratio_range();
            Point::new(MEASURED_SERIES, r.predicted_ratio, r.measured_ratio, lo, hi)
        })
        .collect();
    if let (Some(first), Some(last)) = (sorted.first(), sorted.last()) {
        for x in [first.predicted_ratio, last.predicted_ratio] {
            points.push(Point::new(PREDICTED_SERIES, x, x, x, x));
        }
    }
    points
}

/// How to draw [`figure_points`]: log-log, the chains as unjoined markers.
pub fn figure_spec() -> Spec {
    Spec::line(
        "Does the optimal order pay? Predicted FLOP ratio vs measured time ratio",
        "predicted FLOP ratio, left to right / optimal order",
        "measured time ratio, left to right / optimal order",
    )
    .log_x()
    .log_y()
    .markers_only(MEASURED_SERIES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::exercises::left_to_right_cost;

    fn every_chain() -> Vec<NamedChain> {
        let mut chains = realistic_chains(2024);
        chains.extend(realistic_chains_quick(2024));
        chains
    }

    #[test]
    fn chains_are_valid_reproducible_and_in_range() {
        let full = realistic_chains(2024);
        assert_eq!(full, realistic_chains(2024));
        assert_ne!(full, realistic_chains(2025));
        assert_eq!(full.len(), 3 + RANDOM_CHAINS);
        assert_eq!(full[0].dims, [20u32, 2, 30, 12, 8].map(|p| p * 50));
        for c in &full[3..] {
            assert!((8..=30).contains(&c.matrices()), "{c:?}");
            assert!(c.dims.iter().all(|p| (100..=3000).contains(p)), "{c:?}");
        }
        let quick = realistic_chains_quick(2024);
        assert!(quick.iter().all(|c| c.dims.iter().all(|&p| (1..=300).contains(&p))));
        for set in [&full, &quick] {
            let mut names: Vec<&str> = set.iter().map(|c| c.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), set.len(), "names are unique");
            assert!(set
                .iter()
                .all(|c| validate_dims(&c.dims).is_ok() && c.matrices() >= 2));
        }
    }

    #[test]
    fn the_optimum_never_costs_more_and_matches_the_table() {
        for c in every_chain() {
            let p = predict(&c.dims).unwrap();
            assert!(p.optimal_mults <= p.left_to_right_mults, "{}", c.name);
            assert_eq!(
                p.left_to_right_mults,
                left_to_right_cost(&c.dims),
                "{}",
                c.name
            );
            assert_eq!(
                p.optimal_mults,
                u128::from(dp::solve_serial(&c.dims).unwrap().optimal_cost())
            );
            assert!(p.ratio() >= 1.0);
        }
        let worked = predict(&[1000, 100, 1500, 600, 400]).unwrap();
        assert_eq!(worked.optimal.to_string(), "(A1((A2A3)A4))");
        assert_eq!(worked.optimal_mults, 1232 * 50u128.pow(3));
        assert_eq!(worked.left_to_right.to_string(), "(((A1A2)A3)A4)");
    }

    #[test]
    fn every_chain_fits_the_memory_and_time_budget() {
        let mut table = String::from("chain | n | device GiB | largest product MiB | left-to-right GFLOP | optimal GFLOP | predicted ratio | ms at budget rate\n");
        for c in every_chain() {
            let f = footprint(&c.dims).unwrap();
            let p = predict(&c.dims).unwrap();
            table.push_str(&format!(
                "{} | {} | {:.2} | {:.0} | {:.1} | {:.2} | {:.2} | {:.1}\n",
                c.name,
                c.matrices(),
                f.device_bytes as f64 / (1u64 << 30) as f64,
                f.largest_product_bytes as f64 / (1u64 << 20) as f64,
                gflop(p.left_to_right_mults),
                gflop(p.optimal_mults),
                p.ratio(),
                1e3 * f.seconds_at_budget_rate()
            ));
            assert!(f.within_budget(), "{} is over budget: {f:?}", c.name);
        }
        // Shown with `cargo test -- --nocapture`: the chain list the chapter measures.
        println!("{table}");
    }

    #[test]
    fn device_bytes_counts_inputs_and_one_buffer_per_product() {
        let dims = [20u32, 2, 30, 12, 8];
        let p = predict(&dims).unwrap();
        let inputs = 4 * (20 * 2 + 2 * 30 + 30 * 12 + 12 * 8) as u128;
        // Left to right forms 20x30, 20x12, 20x8; (A1((A2A3)A4)) forms 2x12, 2x8, 20x8.
        assert_eq!(
            device_bytes(&dims, &[&p.left_to_right]).unwrap(),
            inputs + 4 * (600 + 240 + 160)
        );
        assert_eq!(
            device_bytes(&dims, &[&p.optimal]).unwrap(),
            inputs + 4 * (24 + 16 + 160)
        );
        assert_eq!(footprint(&dims).unwrap().largest_product_bytes, 4 * 600);
    }

    #[test]
    fn a_schedule_reads_only_what_it_has_computed() {
        let dims = [7u32, 3, 9, 4, 6, 5];
        for tree in paren::all_parenthesizations(1, 5) {
            let steps = schedule(&dims, &tree).unwrap();
            assert_eq!(steps.len(), 4);
            for (s, step) in steps.iter().enumerate() {
                for o in [step.left, step.right] {
                    if let Operand::Product(j) = o {
                        assert!(j < s, "{tree}: product {s} reads product {j}");
                    }
                }
            }
            let last = steps.last().unwrap();
            assert_eq!((last.m, last.n), (7, 5), "{tree}");
        }
        assert!(
            schedule(&dims, &left_to_right(4)).is_err(),
            "a tree of 4 matrices does not fit 5"
        );
    }

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

    /// The chain evaluated in `order` on the CPU in f32, each sum accumulated in sequence: more
    /// rounding than cuBLAS's blocked sums, so a fair test of the tolerance.
    fn cpu_f32_product(
        matrices: &[Vec<f32>],
        dims: &[u32],
        order: &ParenTree,
    ) -> Vec<f32> {
        match order.factors() {
            None => matrices[order.first() - 1].clone(),
            Some((l, r)) => {
                let (a, b) = (
                    cpu_f32_product(matrices, dims, l),
                    cpu_f32_product(matrices, dims, r),
                );
                let (m, k, n) = (
                    dims[order.first() - 1] as usize,
                    dims[l.last()] as usize,
                    dims[order.last()] as usize,
                );
                let mut c = vec![0f32; m * n];
                for i in 0..m {
                    for j in 0..n {
                        c[i * n + j] = (0..k)
                            .fold(0f32, |s, kk| s + a[i * k + kk] * b[kk * n + j]);
                    }
                }
                c
            }
        }
    }

    #[test]
    fn fp32_products_in_both_orders_pass_and_a_wrong_factor_fails() {
        for c in realistic_chains_quick(11) {
            let m = chain_matrices(&c.dims, 5);
            let p = predict(&c.dims).unwrap();
            let reference = ChainReference::sampled(&m, &c.dims, 5);
            let ltr = cpu_f32_product(&m, &c.dims, &p.left_to_right);
            let opt = cpu_f32_product(&m, &c.dims, &p.optimal);
            check_product("cpu ltr", &c.dims, &ltr, &reference)
                .unwrap_or_else(|e| panic!("{}: {e}", c.name));
            check_product("cpu opt", &c.dims, &opt, &reference)
                .unwrap_or_else(|e| panic!("{}: {e}", c.name));
            check_agreement("cpu", &c.dims, &ltr, &opt, reference.scale).unwrap();
        }
        // A2 and A3 have the same shape; swapping them is a product of the wrong chain.
        let dims = [37u32, 53, 53, 53, 29];
        let m = chain_matrices(&dims, 8);
        let reference = ChainReference::sampled(&m, &dims, 1);
        let mut swapped = m.clone();
        swapped.swap(1, 2);
        let wrong = cpu_f32_product(&swapped, &dims, &left_to_right(4));
        let err = check_product("swapped", &dims, &wrong, &reference).unwrap_err();
        assert!(err.wrong > err.total / 2, "{err}");
        let mut poisoned = cpu_f32_product(&m, &dims, &left_to_right(4));
        poisoned[dims[4] as usize * 36 + 3] = f32::from_bits(u32::MAX);
        assert!(check_product("unwritten", &dims, &poisoned, &reference)
            .unwrap_err()
            .to_string()
            .contains("finite"));
        let short = &poisoned[1..];
        assert!(check_product("short", &dims, short, &reference).is_err());
    }

    #[test]
    fn tolerance_sums_the_interior_dimensions() {
        let t = tolerance(&[5, 10, 20, 30, 7], 2.0);
        assert_eq!(t.rel, 0.0);
        assert!((t.abs - 2.0 * f64::from(f32::EPSILON) * 60.0 * 2.0).abs() < 1e-18);
    }

    fn row(name: &str, predicted: f64, ltr_ms: f64, opt_ms: f64) -> ChainRow {
        let chain = NamedChain::new(name, vec![2, 2, 2]);
        let prediction = Prediction {
            left_to_right: left_to_right(2),
            optimal: left_to_right(2),
            left_to_right_mults: (predicted * 1e6) as u128,
            optimal_mults: 1_000_000,
        };
        let stats = |ms: f64| Stats {
            median_ms: ms,
            min_ms: ms * 0.9,
            max_ms: ms * 1.2,
            mean_ms: ms,
            reps: 3,
        };
        ChainRow::new(&chain, &prediction, &stats(ltr_ms), &stats(opt_ms))
    }

    #[test]
    fn figure_points_are_sorted_with_a_diagonal_across_them() {
        let rows = [
            row("b", 8.0, 4.0, 1.0),
            row("a", 1.5, 1.0, 1.0),
            row("c", 30.0, 3.0, 1.0),
        ];
        let pts = figure_points(&rows);
        let measured: Vec<&Point> =
            pts.iter().filter(|p| p.series == MEASURED_SERIES).collect();
        assert_eq!(
            measured.iter().map(|p| p.x.as_str()).collect::<Vec<_>>(),
            ["1.5", "8", "30"]
        );
        assert_eq!(measured[1].y, 4.0);
        assert!(measured[1].y_min < 4.0 && measured[1].y_max > 4.0);
        let diagonal: Vec<&Point> =
            pts.iter().filter(|p| p.series == PREDICTED_SERIES).collect();
        assert_eq!(diagonal.len(), 2);
        assert!(diagonal.iter().all(|p| p.x.parse::<f64>().unwrap() == p.y));
        assert_eq!(rows[0].left_to_right_gflop_per_s, gflop(8_000_000) / 4e-3);
        assert!(figure_points(&[]).is_empty());
        let spec = figure_spec();
        assert!(spec.x_log && spec.y_log && spec.markers_only == [MEASURED_SERIES]);
    }
}
