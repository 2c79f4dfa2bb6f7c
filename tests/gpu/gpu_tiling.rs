//! GPU checks of the tiling chapter: every step of the matrix multiply (and cuBLAS) against
//! the double-precision CPU reference, at sizes that are not tile multiples. Run on a machine
//! with a GPU: `cargo test --release --test gpu -- --ignored --test-threads=1 gpu_tiling::`.

use cmbook::harness::timing::Plan;
use cmbook::harness::{Gpu, L2};
use cmbook::tiling::device::{self, Kernels, Operands};
use cmbook::tiling::model::Step;
use cmbook::tiling::reference::Reference;

use crate::common::gpu_with_cublas;

fn open() -> (Gpu, Kernels) {
    let gpu = gpu_with_cublas();
    let kernels = Kernels::load(&gpu).unwrap_or_else(|e| panic!("{e:#}"));
    (gpu, kernels)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_step_matches_the_cpu_at_odd_sizes() {
    let (gpu, kernels) = open();
    // Tile remainders in every dimension; K and N multiples of 4 exercise the float4 path.
    for dims in [
        (1, 1, 1),
        (7, 5, 3),
        (16, 16, 16),
        (127, 129, 131),
        (129, 132, 36),
        (300, 260, 1000),
        (1000, 1003, 517),
    ] {
        let mut ops = Operands::new(&gpu, dims, 7).unwrap();
        let reference = Reference::for_operands(&ops, 1);
        assert_eq!(
            reference.rows.len(),
            dims.0,
            "small sizes are checked on every row"
        );
        for step in Step::ALL {
            device::verify_then_time(&gpu, &kernels, step, &mut ops, &reference, &[])
                .unwrap_or_else(|e| panic!("{e:#}"));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_result_never_written_is_caught() {
    let (gpu, kernels) = open();
    let mut ops = Operands::new(&gpu, (33, 17, 9), 3).unwrap();
    let reference = Reference::for_operands(&ops, 1);
    // A 1 x 1 multiply writes only C[0][0]; the rest stays poisoned.
    gpu.poison(&mut ops.c).unwrap();
    let full_n = ops.n;
    ops.n = 1;
    ops.m = 1;
    device::launch(&kernels, Step::Naive, &gpu.stream, &mut ops).unwrap();
    ops.n = full_n;
    ops.m = 33;
    let got = gpu.stream.clone_dtoh(&ops.c).unwrap();
    assert!(got[1..].iter().all(|x| x.is_nan()), "poison is NaN");
    // And verify_then_time() itself poisons before it launches: a correct kernel passes
    // right after.
    device::verify_then_time(&gpu, &kernels, Step::Tiled16, &mut ops, &reference, &[])
        .unwrap();
    let wrong = Reference {
        rows: reference.rows.clone(),
        values: reference.values.iter().map(|v| v + 1.0).collect(),
    };
    // A failed check is an error, and nothing is timed after it.
    let plan = Plan::new(1, 2, L2::Warm);
    let err = device::verify_then_time(
        &gpu,
        &kernels,
        Step::Tiled16,
        &mut ops,
        &wrong,
        &[plan],
    )
    .unwrap_err();
    assert!(format!("{err}").contains("verification FAILED"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn occupancy_and_timing_are_sane() {
    let (gpu, kernels) = open();
    let mut ops = Operands::new(&gpu, (512, 512, 512), 5).unwrap();
    let reference = Reference::for_operands(&ops, 1);
    for step in Step::ALL {
        let plan = Plan::new(1, 2, L2::Cold);
        let verified = device::verify_then_time(
            &gpu,
            &kernels,
            step,
            &mut ops,
            &reference,
            &[plan],
        )
        .unwrap();
        assert!(verified.time().min_ms > 0.0);
        match device::occupancy(&kernels, step).unwrap() {
            None => assert_eq!(step, Step::Cublas),
            Some(o) => {
                assert!(o.blocks_per_sm >= 1, "{step:?}: {o:?}");
                assert_eq!(o.spill_bytes_per_thread, 0, "{step:?} spills: {o:?}");
                let (bx, by) = step.block();
                assert_eq!(o.threads_per_block, bx * by);
            }
        }
    }
    // A sampled reference for a product too large to check on every row.
    let mut big = Operands::new(&gpu, (2048, 2048, 1024), 9).unwrap();
    let sampled = Reference::for_operands(&big, 2);
    assert!(sampled.rows.len() < 2048);
    device::verify_then_time(
        &gpu,
        &kernels,
        Step::QuadDoubleBuffer,
        &mut big,
        &sampled,
        &[],
    )
    .unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_out_of_core_pipelines_match_the_cpu() {
    use cmbook::tiling::out_of_core::{self, OutOfCore};
    let (gpu, kernels) = open();
    // Two quick sizes as the example runs them (partial last panels, K and N multiples of
    // 4 and not), and a budget too small for one panel, which is refused.
    let plan = Plan::new(1, 2, L2::Warm);
    let r = out_of_core::measure(
        &gpu,
        &kernels,
        (out_of_core::odd_size(true), (700, 36, 20)),
        out_of_core::smallest_budget((700, 36, 20)),
        plan,
        3,
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(r.checks.len(), 6, "three pipelines at two sizes");
    assert_eq!((r.panel_rows, r.panels), (128, 6));
    assert!(r.variants.iter().all(|v| v.stats.min_ms > 0.0));
    let err = OutOfCore::new(&gpu, (1000, 64, 64), 1 << 10, 1).err().expect("refused");
    assert!(format!("{err}").contains("does not hold"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn one_function_reads_global_and_shared_memory() {
    let (gpu, kernels) = open();
    for n in [1, 255, 256, 1000] {
        let g = cmbook::tiling::generic::check(&gpu, &kernels, n, 5)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(g.spaces, [1, 0, 0, 1]);
        assert_eq!(g.ptx.len(), 5);
    }
}
