//! Checking the products both orders computed: against sampled rows of the exact product,
//! within [`tolerance`] (derived in the module documentation of [`super`]), and against each
//! other; on the GPU through [`Gpu::verify_then_time`], each order verified before it is timed.

use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::CudaStream;

use super::device::{ChainEvaluation, ChainInputs};
use super::reference::ChainReference;
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Mismatch, Report, Tolerance};
use crate::harness::{Gpu, Stats};

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

/// What the verification of both orders saw.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReports {
    pub left_to_right: Report,
    pub optimal: Report,
    /// The two products against each other, every entry.
    pub agreement: Report,
}

/// What [`verify_then_time_orders`] found and measured.
#[derive(Debug, Clone)]
pub struct VerifiedOrders {
    pub reports: ChainReports,
    /// One summary per plan, for each order.
    pub left_to_right: Vec<Stats>,
    pub optimal: Vec<Stats>,
}

/// Correct before fast, for both orders, each through [`Gpu::verify_then_time`]: left to right
/// is poisoned, run once and checked against `reference`, then timed under each of `plans`;
/// then the optimal order the same way, its check also comparing its product with left to
/// right's, entry by entry. `blas` must run on `gpu.stream`
/// ([`crate::harness::blas::open_blas`]).
#[allow(clippy::too_many_arguments)]
pub fn verify_then_time_orders(
    gpu: &Gpu,
    blas: &CudaBlas,
    inputs: &ChainInputs,
    name: &str,
    left_to_right: &mut ChainEvaluation,
    optimal: &mut ChainEvaluation,
    reference: &ChainReference,
    plans: &[Plan],
) -> anyhow::Result<VerifiedOrders> {
    let dims = &inputs.dims;
    let label = |order: &str| format!("cuBLAS SGEMM chain `{name}`, {order}");
    let poison = |gpu: &Gpu, e: &mut ChainEvaluation| e.poison(gpu);
    let run =
        |_: &Arc<CudaStream>, e: &mut ChainEvaluation| e.run(blas, &inputs.device);
    // One order's product, copied back and checked against the reference.
    let checked = |gpu: &Gpu, e: &ChainEvaluation, order: &str| {
        let product = gpu.stream.clone_dtoh(e.result())?;
        let report = check_product(&label(order), dims, &product, reference)?;
        anyhow::Ok((report, product))
    };
    let ltr = gpu.verify_then_time(
        left_to_right,
        poison,
        run,
        |gpu, e| checked(gpu, e, "left to right"),
        plans,
    )?;
    let (ltr_report, ltr_product) = ltr.check;
    let opt = gpu.verify_then_time(
        optimal,
        poison,
        run,
        |gpu, e| {
            let (report, product) = checked(gpu, e, "optimal order")?;
            let agreement = check_agreement(
                &label("left to right vs optimal order"),
                dims,
                &ltr_product,
                &product,
                reference.scale,
            )?;
            Ok((report, agreement))
        },
        plans,
    )?;
    let (opt_report, agreement) = opt.check;
    Ok(VerifiedOrders {
        reports: ChainReports {
            left_to_right: ltr_report,
            optimal: opt_report,
            agreement,
        },
        left_to_right: ltr.times,
        optimal: opt.times,
    })
}

#[cfg(test)]
mod tests {
    use super::super::chains::realistic_chains_quick;
    use super::super::plan::{left_to_right, predict};
    use super::super::reference::chain_matrices;
    use super::*;
    use crate::cmm::paren::ParenTree;

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
}
