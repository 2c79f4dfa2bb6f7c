//! One chain measured: predicted, verified in both orders, then timed.

use cudarc::cublas::CudaBlas;

use super::chains::NamedChain;
use super::device::{ChainEvaluation, ChainInputs};
use super::plan::{device_bytes, gflop, predict, Prediction};
use super::reference::ChainReference;
use super::verify::verify_then_time_orders;
use crate::harness::blas::open_blas;
use crate::harness::timing::Plan;
use crate::harness::{Gpu, Stats, UsageError};

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
/// evaluated, each checked and only then timed under `plan` ([`verify_then_time_orders`]),
/// every buffer allocated before any timing. Prints nothing.
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
        return Err(refuse(format!(
            "both orders need {bytes} bytes of device memory, more than 3/4 of this device's"
        ))
        .into());
    }
    let inputs = ChainInputs::upload(gpu, dims, seed)?;
    let reference = ChainReference::sampled(&inputs.host, dims, seed);
    let mut left_to_right =
        ChainEvaluation::new(&gpu.stream, dims, &prediction.left_to_right)?;
    let mut optimal = ChainEvaluation::new(&gpu.stream, dims, &prediction.optimal)?;
    let verified = verify_then_time_orders(
        gpu,
        blas,
        &inputs,
        &chain.name,
        &mut left_to_right,
        &mut optimal,
        &reference,
        &[plan],
    )?;
    Ok(ChainRow::new(
        chain,
        &prediction,
        &verified.left_to_right[0],
        &verified.optimal[0],
    ))
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
