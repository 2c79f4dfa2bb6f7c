//! Chapter "Reuse, loop permutation, tiling", the GPU half.
//!
//! `cargo run --release --example tiled_matmul` verifies every step of the tiled matrix
//! multiply (and cuBLAS SGEMM, TF32 off) against a double-precision CPU reference at sizes that
//! are not tile multiples, then times each at N x N x N (default 4096), L2 cold, and writes
//! `figures/tiling-matmul.svg`, `figures/tiling-kernels.md`, `figures/tiling-verification.md`
//! and their CSVs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::harness::record::Meta;
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, L2};
use cmbook::tiling::gemm::{self, Kernels, Operands, Reference};
use cmbook::tiling::model::{self, Step};
use cmbook::tiling::report::{self, MatmulResults, StepResult, VerifiedRow};

#[derive(Parser, Debug)]
#[command(about = "Tiled matrix multiply, step by step, against cuBLAS SGEMM")]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Side of the square multiply that is timed [default: 4096; 256 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=32_768))]
    n: Option<u64>,
}

/// Sizes that are not multiples of any tile, on which every step is verified (not timed).
const ODD_SIZES: [(usize, usize, usize); 4] =
    [(1, 1, 1), (7, 5, 3), (127, 129, 131), (1000, 1003, 517)];

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let quick = args.common.quick;
    let side = args.n.unwrap_or(if quick { 256 } else { 4096 }) as usize;
    let seed = args.common.seed;
    let plan =
        Plan::new(if quick { 1 } else { 2 }, args.common.reps_or(10, 2), L2::Cold);

    let gpu = Gpu::open(true)?;
    println!("{}", gpu.info.line());
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("tiled_matmul"));
    let kernels = Kernels::load(&gpu)?;

    let mut verified = Vec::new();
    let odd = if quick { &ODD_SIZES[..3] } else { &ODD_SIZES[..] };
    for (i, &dims) in odd.iter().enumerate() {
        let mut ops = Operands::new(&gpu, dims, seed + 10 * i as u64)?;
        let reference = Reference::for_operands(&ops, seed);
        for step in Step::ALL {
            let r = gemm::verify(&gpu, &kernels, step, &mut ops, &reference)?;
            verified.push(row(step, &ops, r.checked, r.max_abs_err));
        }
        println!("verified every step at {}", ops.size());
    }

    let mut ops = Operands::new(&gpu, (side, side, side), seed + 100)?;
    let reference = Reference::for_operands(&ops, seed + 101);
    let mut steps = Vec::new();
    for step in Step::ALL {
        let r = gemm::verify(&gpu, &kernels, step, &mut ops, &reference)?;
        verified.push(row(step, &ops, r.checked, r.max_abs_err));
        let stats = gemm::measure(&gpu, &kernels, step, &mut ops, plan)?;
        let gflops = model::flops(side, side, side) / (stats.median_ms * 1e6);
        println!(
            "{:<30} verified ({} rows of {}), {:>9.0} GFLOP/s",
            step.label(),
            reference.rows.len(),
            side,
            gflops
        );
        steps.push(StepResult {
            step,
            occupancy: gemm::occupancy(&kernels, step)?,
            stats,
        });
    }
    let results = MatmulResults { size: (side, side, side), steps, verified };
    for line in report::write_matmul(&args.common.out, &meta, &results)? {
        println!("{line}");
    }
    println!(
        "all results verified; figures and data written to {}",
        args.common.out.display()
    );
    Ok(())
}

fn row(step: Step, ops: &Operands, compared: usize, worst: f64) -> VerifiedRow {
    VerifiedRow {
        step: step.label(),
        size: ops.size(),
        elements_compared: compared,
        worst_abs_err: format!("{worst:.2e}"),
        tolerance_abs: format!("{:.2e}", model::tolerance(ops.k).abs),
    }
}
