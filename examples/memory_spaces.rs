//! Chapter "Memory spaces — where data lives, and what each place costs".
//!
//! `cargo run --release --example memory_spaces` reads this GPU's capacities, then measures,
//! verifies and records
//! - the lecture's signal example with the vector in constant memory, in global memory and on
//!   the read-only path, next to the copy ceiling of the same run;
//! - a walk over a 32 KiB table with 1 to 32 distinct addresses per warp-wide load, from each
//!   of those three homes;
//! - the three-point stencil from global memory and from a shared tile (static and dynamic),
//!   on an array far larger than L2 (cold) and on one that fits in it (warm);
//! - a per-thread histogram in local memory and in registers, with the compiler's numbers;
//! - pointer chases through global, shared and constant memory at growing footprints, and the
//!   bytes per second each space delivers;
//!
//! and writes `figures/memory_spaces-*.svg`, `figures/memory_spaces-*.md` and their CSVs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::ceilings::{self, CopyKernel};
use cmbook::harness::record::Meta;
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, L2};
use cmbook::memory_spaces::map::space_rows;
use cmbook::memory_spaces::measure::{self, ChaseSpace, Kernels, SignalSize};
use cmbook::memory_spaces::report::{self, Results};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(about = "Memory spaces: where data lives, and what each place costs")]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Matrices the signal vector is applied to, 3001 x 2500 floats each [default: 32; 3 of 301 x 257 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    signal_matrices: Option<u64>,
    /// Floats of the L2-cold stencil [default: 100000007; 100003 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=4_000_000_000))]
    stencil_n: Option<u64>,
    /// Dependent loads per timed repetition of each pointer chase [default: 100000; 1000 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    chase_steps: Option<u64>,
}

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Footprints of the chases: from well inside L1 to well past L2, and what shared and
/// constant memory can hold.
fn chase_footprints(space: ChaseSpace, quick: bool) -> Vec<usize> {
    match (space, quick) {
        (ChaseSpace::Global, false) => vec![
            8 * KIB,
            32 * KIB,
            128 * KIB,
            512 * KIB,
            2 * MIB,
            8 * MIB,
            16 * MIB,
            32 * MIB,
            64 * MIB,
            128 * MIB,
            512 * MIB,
        ],
        (ChaseSpace::Global, true) => vec![4 * KIB, 64 * KIB, MIB],
        (ChaseSpace::Shared, false) => vec![KIB, 4 * KIB, 16 * KIB, 32 * KIB],
        (ChaseSpace::Constant, false) => vec![KIB, 4 * KIB, 16 * KIB],
        (ChaseSpace::Shared | ChaseSpace::Constant, true) => vec![4 * KIB],
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let quick = args.common.quick;
    let seed = args.common.seed;
    let pick = |full: usize, small: usize| if quick { small } else { full };
    let cold = Plan::new(pick(2, 1), args.common.reps_or(20, 2), L2::Cold);
    let warm = Plan::new(pick(2, 1), args.common.reps_or(20, 2), L2::Warm);
    let chase_plan = Plan::new(1, args.common.reps_or(5, 1), L2::Warm);

    let gpu = Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("memory_spaces"));
    let kernels = Kernels::load(&gpu)?;
    let copy = CopyKernel::load(&gpu)?;

    // Sizes that are multiples of nothing: every kernel has a partial last block.
    let signal_size = SignalSize {
        rows: pick(3001, 301),
        m: pick(2500, 257),
        matrices: args.signal_matrices.map(|v| v as usize).unwrap_or(pick(32, 3)),
    };
    let walk_threads = pick(gpu.info.sms as usize * 2048 - 13, 1000);
    let walk_steps = pick(4096, 64) as u32;
    let distincts: Vec<u32> =
        if quick { vec![1, 32] } else { vec![1, 2, 4, 8, 16, 32] };
    let stencil_cold_n =
        args.stencil_n.map(|v| v as usize).unwrap_or(pick(100_000_007, 100_003));
    // Input and output together fill half of L2.
    let stencil_warm_n = pick(gpu.info.l2_bytes / 16 + 3, 10_007);
    let copy_cold_bytes = pick(512 * MIB, 16 * MIB);
    let copy_warm_bytes = pick(gpu.info.l2_bytes / 4, MIB);
    let histogram_n = pick(50_000_017, 100_003);
    let chase_steps = args.chase_steps.unwrap_or(pick(100_000, 1000) as u64);
    let onchip_passes = pick(256, 4) as u32;

    let chase_points: usize =
        ChaseSpace::ALL.iter().map(|&s| chase_footprints(s, quick).len()).sum();
    let bar = ProgressBar::new((8 + chase_points) as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());

    bar.set_message("copy ceilings");
    // Bytes per second (read + write), like every other rate the report turns into GB/s.
    let copy_cold = ceilings::measure_copy(&gpu, &copy, copy_cold_bytes, cold, seed)?
        .kernel
        .rate(2.0 * copy_cold_bytes as f64);
    bar.inc(1);
    let copy_warm =
        ceilings::measure_copy(&gpu, &copy, copy_warm_bytes, warm, seed + 1)?
            .kernel
            .rate(2.0 * copy_warm_bytes as f64);
    bar.inc(1);

    bar.set_message("signal example");
    let signal = measure::measure_signal(&gpu, &kernels, signal_size, cold, seed + 2)?;
    bar.inc(1);

    bar.set_message("divergent walks");
    let walks = measure::measure_walks(
        &gpu,
        &kernels,
        walk_threads,
        walk_steps,
        &distincts,
        warm,
        seed + 3,
    )?;
    bar.inc(1);

    bar.set_message("stencils");
    let stencil_cold =
        measure::measure_stencils(&gpu, &kernels, stencil_cold_n, cold, seed + 4)?;
    bar.inc(1);
    let stencil_warm =
        measure::measure_stencils(&gpu, &kernels, stencil_warm_n, warm, seed + 5)?;
    bar.inc(1);

    bar.set_message("histograms");
    let histograms =
        measure::measure_histograms(&gpu, &kernels, histogram_n, cold, seed + 6)?;
    bar.inc(1);

    let mut chases = Vec::new();
    for space in ChaseSpace::ALL {
        for footprint in chase_footprints(space, quick) {
            bar.set_message(format!("chase, {}, {footprint} bytes", space.label()));
            chases.push(measure::measure_chase(
                &gpu,
                &kernels,
                space,
                footprint,
                chase_steps,
                chase_plan,
                seed + 7 + footprint as u64,
            )?);
            bar.inc(1);
        }
    }

    bar.set_message("on-chip bandwidth");
    let onchip = measure::measure_onchip(&gpu, &kernels, onchip_passes, warm)?;
    bar.inc(1);
    bar.finish_and_clear();

    let results = Results {
        map: space_rows(&gpu.info),
        copy_cold: (copy_cold_bytes, copy_cold),
        copy_warm: (copy_warm_bytes, copy_warm),
        signal_size,
        signal,
        walk_threads,
        walk_steps,
        walks,
        stencil_cold_n,
        stencil_cold,
        stencil_warm_n,
        stencil_warm,
        histogram_n,
        histograms,
        chases,
        onchip,
    };
    for line in report::write_all(&args.common.out, &meta, &results)? {
        println!("{line}");
    }
    println!(
        "all results verified; figures and data written to {}",
        args.common.out.display()
    );
    Ok(())
}
