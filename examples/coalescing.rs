//! Chapter "Coalescing, alignment and the matrix transpose".
//!
//! `cargo run --release --example coalescing` measures, verifies and records
//! - strided loads (stride 1 to 64, float and double) and misaligned loads (offset 0 to 32
//!   floats), each next to what the sector arithmetic predicts;
//! - a particle drift on an array of structs and on a struct of arrays;
//! - the transpose of an 8192 × 8192 float matrix: naive, shared tile, padded tile, tuned;
//! - the read-only data path (`__ldg`, `const __restrict__`) on a copy and on a gather;
//!
//! all as fractions of the copy ceiling measured in the same run, L2 cold, and writes
//! `figures/coalescing-*.svg`, `figures/coalescing-*.md` and their CSVs.

use std::collections::HashMap;
use std::process::ExitCode;

use clap::Parser;
use cmbook::ceilings::{self, CopyKernel};
use cmbook::coalescing::measure::{
    self, AffineSweep, Element, Kernels, Measurement, MAX_TRANSPOSE_SIDE,
};
use cmbook::coalescing::patterns::{self, type_name, Pattern};
use cmbook::coalescing::readonly::ReadOnlyKernel;
use cmbook::coalescing::report::{self, Results};
use cmbook::coalescing::transpose::TransposeKernel;
use cmbook::coalescing::{ptx, reference};
use cmbook::harness::record::Meta;
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, L2};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(
    about = "Coalescing, alignment and the matrix transpose: sectors predicted and measured"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Side of the square float matrix the transposes are timed on [default: 8192; 513 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_TRANSPOSE_SIDE as u64))]
    transpose_n: Option<u64>,
    /// MiB of source array the stride sweep reads, per element type [default: 1024; 4 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    sweep_mib: Option<u64>,
    /// MiB of source array the offset sweep reads [default: 512; 4 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    offset_mib: Option<u64>,
    /// MiB copied by the copy kernel that sets the ceiling [default: 1024; 16 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    ceiling_mib: Option<u64>,
    /// Particles of the drift [default: 16000003; 100003 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    particles: Option<u64>,
    /// Elements of the read-only section's copy and gathers [default: 64000003; 1000003 with --quick].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=2_000_000_000))]
    readonly_n: Option<u64>,
    /// Floats in the gathers' table: each is read about readonly_n / table_len times.
    #[arg(long, default_value_t = 16_384, value_parser = clap::value_parser!(u32).range(1..=1 << 28))]
    table_len: u32,
}

const MIB: usize = 1 << 20;

/// Sizes that are not multiples of a tile, on which every transpose is verified (not timed).
const ODD_TRANSPOSE_SIZES: [(usize, usize); 5] =
    [(1, 7), (7, 1), (33, 65), (1000, 1003), (31, 1025)];

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let quick = args.common.quick;
    let size = |given: Option<u64>, full: u64, small: u64| {
        given.unwrap_or(if quick { small } else { full }) as usize
    };
    let ceiling_bytes = size(args.ceiling_mib, 1024, 16) * MIB;
    let sweep_bytes = size(args.sweep_mib, 1024, 4) * MIB;
    let offset_bytes = size(args.offset_mib, 512, 4) * MIB;
    let n = size(args.transpose_n, 8192, 513);
    // Not multiples of anything: the last round of every grid-stride loop is partial.
    let particles = size(args.particles, 16_000_003, 100_003);
    let readonly_n = size(args.readonly_n, 64_000_003, 1_000_003);
    let seed = args.common.seed;
    let plan =
        Plan::new(if quick { 1 } else { 3 }, args.common.reps_or(20, 3), L2::Cold);

    let gpu = Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("coalescing"));
    let kernels = Kernels::load(&gpu)?;
    let copy = CopyKernel::load(&gpu)?;

    let strides = patterns::sweep_strides(quick);
    let offsets = patterns::sweep_offsets(quick);
    let bar = ProgressBar::new(
        (2 * strides.len() + offsets.len() + ODD_TRANSPOSE_SIZES.len() + 4) as u64,
    );
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());

    // The ceiling every fraction below is taken of.
    bar.set_message(format!("copy ceiling, {} MiB", ceiling_bytes / MIB));
    let ceiling =
        ceilings::measure_copy(&gpu, &copy, ceiling_bytes, plan, seed)?.kernel_gbps();
    bar.inc(1);

    // Strided loads of 4- and 8-byte elements, then misaligned loads of floats.
    let stride_points: Vec<(u64, u64)> = strides.iter().map(|&s| (s, 0)).collect();
    let offset_points: Vec<(u64, u64)> = offsets.iter().map(|&k| (1, k)).collect();
    let mut strided = HashMap::new();
    sweep::<f32>(
        &gpu,
        &kernels,
        (sweep_bytes, seed + 1),
        &stride_points,
        plan,
        &bar,
        &mut strided,
    )?;
    sweep::<f64>(
        &gpu,
        &kernels,
        (sweep_bytes, seed + 2),
        &stride_points,
        plan,
        &bar,
        &mut strided,
    )?;
    let mut misaligned = HashMap::new();
    sweep::<f32>(
        &gpu,
        &kernels,
        (offset_bytes, seed + 3),
        &offset_points,
        plan,
        &bar,
        &mut misaligned,
    )?;

    // Particles in both layouts.
    bar.set_message(format!("drift of {particles} particles"));
    let (drift_aos, drift_soa) = measure::measure_drifts(
        &gpu,
        &kernels,
        &reference::random_particles(particles, seed + 4),
        plan,
    )?;
    bar.inc(1);

    // Transposes: verified at odd sizes, then verified and timed at n x n next to a copy of
    // the same bytes.
    for (rows, cols) in ODD_TRANSPOSE_SIZES {
        bar.set_message(format!("transposes verified at {rows} x {cols}"));
        measure::measure_transposes(
            &gpu,
            &kernels,
            &TransposeKernel::ALL,
            (rows, cols),
            None,
            seed + (rows * cols) as u64,
        )?;
        bar.inc(1);
    }
    bar.set_message(format!("transposes at {n} x {n}"));
    let transpose_copy =
        ceilings::measure_copy(&gpu, &copy, n * n * 4, plan, seed + 5)?.kernel_gbps();
    let transposes = measure::measure_transposes(
        &gpu,
        &kernels,
        &TransposeKernel::ALL,
        (n, n),
        Some(plan),
        seed + 6,
    )?
    .into_iter()
    .map(|(k, m)| (k, m.expect("timed: a plan was given")))
    .collect();
    bar.inc(1);

    // The read-only data path.
    bar.set_message("read-only data path");
    let readonly = measure::measure_readonly(
        &gpu,
        &kernels,
        readonly_n,
        args.table_len,
        plan,
        seed + 7,
    )?;
    let mut census = Vec::new();
    for kernel in ReadOnlyKernel::ALL {
        let c = ptx::census(&kernels.ptx, kernel.function()).ok_or_else(|| {
            anyhow::anyhow!("no entry `{}` in the PTX", kernel.function())
        })?;
        census.push((kernel, c));
    }
    bar.inc(1);
    bar.finish_and_clear();

    let results = Results {
        ceiling_bytes,
        ceiling,
        strides,
        offsets,
        sweep_bytes,
        offset_bytes,
        particles,
        strided,
        misaligned,
        drift_aos,
        drift_soa,
        transpose_n: n,
        transpose_copy,
        transposes,
        readonly_n,
        table_len: args.table_len,
        readonly,
        ptx: census,
        compiled_by: format!(
            "NVRTC {}.{} for {}",
            gpu.info.nvrtc.0,
            gpu.info.nvrtc.1,
            gpu.info.arch()
        ),
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

/// Measures the affine read of `T` at every `(stride, offset)` over one random source of
/// `source_bytes`, recording each measurement under its pattern.
fn sweep<T: Element>(
    gpu: &Gpu,
    kernels: &Kernels,
    (source_bytes, seed): (usize, u64),
    points: &[(u64, u64)],
    plan: Plan,
    bar: &ProgressBar,
    measured: &mut HashMap<Pattern, Measurement>,
) -> anyhow::Result<()> {
    let elem_bytes = std::mem::size_of::<T>() as u64;
    let mut buffers =
        AffineSweep::<T>::new(gpu, source_bytes / elem_bytes as usize, seed)?;
    for &(stride, offset) in points {
        bar.set_message(format!(
            "{}, stride {stride}, offset {offset}",
            type_name(elem_bytes)
        ));
        let m =
            buffers.measure(gpu, kernels, stride as usize, offset as usize, plan)?;
        measured.insert(Pattern::Affine { elem_bytes, stride, offset }, m);
        bar.inc(1);
    }
    Ok(())
}
