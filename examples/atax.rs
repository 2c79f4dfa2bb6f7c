//! Chapter "ATAX": y = Aᵀ(A·x), two memory-bound matrix-vector products.
//!
//! `cargo run --release --example atax` verifies every kernel variant and host strategy at odd
//! sizes, then at the PolyBench 4.2 datasets (double and float) and at a 16384² float matrix
//! verifies and times: kernels alone (L2 warm and cold, next to the copy bandwidth measured in
//! the same run), and end to end with the transfers (next to the pinned host-to-device copy of
//! A). It writes `figures/atax-*.svg`, `figures/atax-*.md` and their CSVs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::atax::datasets::{Dataset, LARGE_SQUARE, ODD_SIZES, POLYBENCH};
use cmbook::atax::device::{Element, Kernels};
use cmbook::atax::measure::{self, HostProblem, Plans};
use cmbook::atax::report::{self, Results, Transfer};
use cmbook::ceilings::{self, CopyKernel};
use cmbook::harness::record::Meta;
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, L2};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(about = "ATAX, y = A^T (A x): ten ways to move A, verified and timed")]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Side of the square float matrix beyond L2 [default: 16384; 1024 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=32_768))]
    large_side: Option<u64>,
    /// MiB copied by the copy kernel that sets the device ceiling [default: 1024; 16 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    ceiling_mib: Option<u64>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let quick = args.common.quick;
    let side = args.large_side.unwrap_or(if quick { 1024 } else { 16384 }) as usize;
    let large = Dataset {
        m: side,
        n: side,
        name: if side == LARGE_SQUARE.m { LARGE_SQUARE.name } else { "square" },
    };
    let ceiling_bytes =
        (args.ceiling_mib.unwrap_or(if quick { 16 } else { 1024 }) as usize) << 20;
    let reps = args.common.reps_or(30, 3);
    let plans = Plans::new(reps);
    // End to end at 1 GiB a repetition takes tens to hundreds of milliseconds: fewer of them.
    let large_plans = Plans::new(reps.min(8));
    let seed = args.common.seed;
    let polybench: Vec<Dataset> =
        if quick { POLYBENCH[..2].to_vec() } else { POLYBENCH.to_vec() };

    let gpu = Gpu::open(true)?;
    println!("{}", gpu.info.line());
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("atax"));
    let k32 = Kernels::<f32>::load(&gpu)?;
    let k64 = Kernels::<f64>::load(&gpu)?;

    let steps = 1 + 2 * ODD_SIZES.len() + 2 * polybench.len() + 1;
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());

    bar.set_message(format!("copy ceiling, {} MiB", ceiling_bytes >> 20));
    let copy = CopyKernel::load(&gpu)?;
    let copy_gbps = ceilings::measure_copy(
        &gpu,
        &copy,
        ceiling_bytes,
        Plan::new(3, reps, L2::Cold),
        seed,
    )?
    .kernel_gbps()
    .median;
    bar.inc(1);

    let mut results = Results {
        copy_gbps,
        copy_bytes: ceiling_bytes,
        transfers: Vec::new(),
        kernels: Vec::new(),
        end_to_end: Vec::new(),
        skipped: Vec::new(),
        odd_checks: 0,
    };

    // Correctness at sizes that are multiples of nothing, before any timing.
    for (i, d) in ODD_SIZES.iter().enumerate() {
        bar.set_message(format!("verifying at {}", d.label()));
        results.odd_checks += verify_only::<f32>(&gpu, &k32, *d, seed + i as u64)?;
        bar.inc(1);
        results.odd_checks +=
            verify_only::<f64>(&gpu, &k64, *d, seed + 100 + i as u64)?;
        bar.inc(1);
    }

    for (i, d) in polybench.iter().enumerate() {
        bar.set_message(format!("{} double", d.label()));
        measure_dataset::<f64>(
            &gpu,
            &k64,
            *d,
            plans,
            seed + 200 + i as u64,
            &mut results,
        )?;
        bar.inc(1);
        bar.set_message(format!("{} float", d.label()));
        measure_dataset::<f32>(
            &gpu,
            &k32,
            *d,
            plans,
            seed + 300 + i as u64,
            &mut results,
        )?;
        bar.inc(1);
    }
    bar.set_message(format!("{} float", large.label()));
    measure_dataset::<f32>(&gpu, &k32, large, large_plans, seed + 400, &mut results)?;
    bar.inc(1);
    bar.finish_and_clear();

    for line in report::write_all(&args.common.out, &meta, &results)? {
        println!("{line}");
    }
    println!(
        "all results verified ({} checks at odd sizes, {} kernel and {} end-to-end measurements); figures and data written to {}",
        results.odd_checks,
        results.kernels.len(),
        results.end_to_end.len(),
        args.common.out.display()
    );
    Ok(())
}

/// Verifies every kernel variant and host strategy at `d`; returns how many checks passed.
fn verify_only<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    d: Dataset,
    seed: u64,
) -> anyhow::Result<usize> {
    let p = HostProblem::<T>::new(d, seed);
    let (kernels, _) = measure::measure_kernels(gpu, k, &p, None)?;
    let (e2e, _) = measure::measure_end_to_end(gpu, k, &p, None)?;
    Ok(kernels.len() + e2e.len())
}

/// Verifies and times everything at `d`, and the copies of A alone.
fn measure_dataset<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    d: Dataset,
    plans: Plans,
    seed: u64,
    results: &mut Results,
) -> anyhow::Result<()> {
    let p = HostProblem::<T>::new(d, seed);
    let (kernels, skipped) = measure::measure_kernels(gpu, k, &p, Some(plans))?;
    results.kernels.extend(kernels);
    results.skipped.extend(skipped);
    let (e2e, skipped) = measure::measure_end_to_end(gpu, k, &p, Some(plans))?;
    results.end_to_end.extend(e2e);
    results.skipped.extend(skipped);
    let bytes = d.matrix_bytes(T::BYTES);
    let (pinned, pageable) =
        measure::a_transfer_ms(gpu, bytes as usize, plans.warm, seed + 7)?;
    results.transfers.push(Transfer { d, elem: T::C_NAME, bytes, pinned, pageable });
    Ok(())
}
