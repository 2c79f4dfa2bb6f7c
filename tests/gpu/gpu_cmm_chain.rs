//! GPU checks of the matrix chains multiplied with cuBLAS: both orders of every quick chain
//! (odd sizes, dimensions down to 1) against sampled rows of the exact product and against each
//! other, every order of a short chain, and products that are wrong on purpose.
//! Run on a machine with a GPU: `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_cmm_chain::`.

use cmbook::cmm::chain::{self, ChainEvaluation, ChainInputs, ChainReference};
use cmbook::cmm::paren;
use cmbook::harness::blas::open_blas;
use cmbook::harness::timing::Plan;
use cmbook::harness::{Gpu, L2};
use cudarc::cublas::CudaBlas;

use crate::common::gpu_with_cublas;

fn open() -> (Gpu, CudaBlas) {
    let gpu = gpu_with_cublas();
    let blas = open_blas(&gpu).unwrap_or_else(|e| panic!("{e:#}"));
    (gpu, blas)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn quick_chains_verify_in_both_orders_and_time() {
    let (gpu, blas) = open();
    let chains = chain::realistic_chains_quick(7);
    for (c, named) in chains.iter().enumerate() {
        let l2 = if c % 2 == 0 { L2::Warm } else { L2::Cold };
        let row = chain::measure_chain(
            &gpu,
            &blas,
            named,
            Plan::new(1, 3, l2),
            100 + c as u64,
        )
        .unwrap_or_else(|e| panic!("{}: {e:#}", named.name));
        assert_eq!(row.matrices, named.matrices());
        assert!(row.predicted_ratio >= 1.0, "{row:?}");
        assert!(row.left_to_right_ms_min > 0.0 && row.optimal_ms_min > 0.0, "{row:?}");
        assert!(
            row.left_to_right_ms_min <= row.left_to_right_ms_median
                && row.left_to_right_ms_median <= row.left_to_right_ms_max
        );
        assert!(row.measured_ratio.is_finite() && row.measured_ratio > 0.0);
    }
    let rows = chain::measure_chains(&gpu, &chains[..3], Plan::new(0, 1, L2::Warm), 5)
        .unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(chain::figure_points(&rows).len(), 3 + 2);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_order_of_a_short_chain_gives_the_same_product() {
    let (gpu, blas) = open();
    let dims = [33u32, 17, 65, 9, 129, 31];
    let inputs = ChainInputs::upload(&gpu, &dims, 3).unwrap();
    let reference = ChainReference::for_rows(&inputs.host, &dims, (0..33).collect());
    let mut first: Option<Vec<f32>> = None;
    let orders = paren::all_parenthesizations(1, 5);
    assert_eq!(orders.len(), 14);
    for order in &orders {
        let product =
            chain::multiply_chain(&blas, &gpu.stream, &inputs.device, &dims, order)
                .unwrap();
        let got = gpu.stream.clone_dtoh(&product).unwrap();
        chain::check_product(&order.to_string(), &dims, &got, &reference)
            .unwrap_or_else(|e| panic!("{e}"));
        match &first {
            None => first = Some(got),
            Some(f) => {
                chain::check_agreement(
                    &order.to_string(),
                    &dims,
                    &got,
                    f,
                    reference.scale,
                )
                .unwrap_or_else(|e| panic!("{e}"));
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn wrong_products_are_caught() {
    let (gpu, blas) = open();
    // A2, A3 and A4 share a shape, so swapping two of them multiplies a different chain.
    let dims = [37u32, 53, 53, 53, 29];
    let mut inputs = ChainInputs::upload(&gpu, &dims, 8).unwrap();
    let reference = ChainReference::sampled(&inputs.host, &dims, 1);
    let p = chain::predict(&dims).unwrap();
    let mut ltr = ChainEvaluation::new(&gpu.stream, &dims, &p.left_to_right).unwrap();
    let mut opt = ChainEvaluation::new(&gpu.stream, &dims, &p.optimal).unwrap();
    // No plans: both orders verified, nothing timed.
    let verify = |inputs: &ChainInputs, name, ltr: &mut _, opt: &mut _| {
        chain::verify_then_time_orders(
            &gpu,
            &blas,
            inputs,
            name,
            ltr,
            opt,
            &reference,
            &[],
        )
    };
    verify(&inputs, "right", &mut ltr, &mut opt).unwrap();

    inputs.device.swap(1, 2);
    let err = verify(&inputs, "swapped factors", &mut ltr, &mut opt).unwrap_err();
    assert!(format!("{err}").contains("verification FAILED"), "{err}");
    inputs.device.swap(1, 2);

    // Never run: the product is still poison.
    ltr.poison(&gpu).unwrap();
    let unwritten = gpu.stream.clone_dtoh(ltr.result()).unwrap();
    let err =
        chain::check_product("unwritten", &dims, &unwritten, &reference).unwrap_err();
    assert!(err.to_string().contains("finite"), "{err}");

    // One order right, the other off by a little more than the tolerance in one entry.
    ltr.run(&blas, &inputs.device).unwrap();
    let right = gpu.stream.clone_dtoh(ltr.result()).unwrap();
    let mut nudged = right.clone();
    nudged[7] += 3.0 * chain::tolerance(&dims, reference.scale).abs as f32;
    let err = chain::check_agreement("nudged", &dims, &nudged, &right, reference.scale)
        .unwrap_err();
    assert_eq!((err.index, err.wrong), (7, 1), "{err}");

    // Inputs of another chain are refused before cuBLAS sees them.
    let other = ChainInputs::upload(&gpu, &[37, 53, 52, 53, 29], 8).unwrap();
    assert!(ltr.run(&blas, &other.device).is_err());
    assert!(ltr.run(&blas, &inputs.device[..3]).is_err());
}
