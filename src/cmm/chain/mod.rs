//! Does the optimal order pay? The dynamic program promises fewer scalar multiplications; here
//! real matrix chains are multiplied with cuBLAS SGEMM in two orders, left to right
//! (`((A1A2)A3)...An`) and the program's optimum, both products are verified, and both are timed.
//!
//! * [`chains`]: [`realistic_chains`] for the measurement, [`realistic_chains_quick`] for tests
//!   and sanitizers;
//! * [`plan`]: the prediction, [`predict`] (the optimum from
//!   [`crate::cmm::dp::solve_serial`], both orders' costs from
//!   [`crate::cmm::paren::ParenTree::cost`]), and [`footprint`] with
//!   [`Footprint::within_budget`], which keep each chain's device memory under
//!   [`DEVICE_BYTES_LIMIT`] and its costlier order under [`MAX_SECONDS_PER_RUN`];
//! * [`reference`](mod@reference): the inputs, [`chain_matrices`], scaled so that every partial product keeps
//!   the size of a single factor, and [`ChainReference`] (sampled rows of the exact product, in
//!   `f64` on the CPU);
//! * [`device`]: [`ChainEvaluation`] turns an order into a list of SGEMMs, with one buffer per
//!   product allocated before any timing; [`multiply_chain`] is the one-shot form;
//! * [`verify`]: [`tolerance`], [`check_product`], [`check_agreement`], and both orders verified
//!   then timed on the GPU ([`verify_then_time_orders`]);
//! * [`measure`](mod@measure): one chain predicted, verified and timed ([`measure_chain`], [`measure_chains`]);
//! * [`figure`]: the chapter's figure ([`figure_points`], [`figure_spec`]).
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
//! **TF32** stays off as in the tiling chapter: the cuBLAS handle comes from
//! [`crate::harness::blas::open_blas`], which sets the default math mode, reads it back and
//! refuses a handle set to TF32 (or to BF16x9 emulation).

pub mod chains;
pub mod device;
pub mod figure;
pub mod measure;
pub mod plan;
pub mod reference;
pub mod verify;

pub use chains::{realistic_chains, realistic_chains_quick, NamedChain, RANDOM_CHAINS};
pub use device::{multiply_chain, ChainEvaluation, ChainInputs};
pub use figure::{figure_points, figure_spec, MEASURED_SERIES, PREDICTED_SERIES};
pub use measure::{measure_chain, measure_chains, ChainRow};
pub use plan::{
    device_bytes, footprint, gflop, left_to_right, predict, Footprint, Prediction,
    BUDGET_FLOP_PER_S, DEVICE_BYTES_LIMIT, MAX_SECONDS_PER_RUN,
};
pub use reference::{chain_matrices, exact_rows, ChainReference};
pub use verify::{
    check_agreement, check_product, tolerance, verify_then_time_orders, ChainReports,
    VerifiedOrders,
};
