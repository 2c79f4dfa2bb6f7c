//! Chapter "CMM beyond the paper": the same dynamic program from n = 128 to n = 16384, and
//! matrix chains multiplied in the order it finds.
//!
//! - no arguments: every variant (the paper's one-block kernel, warp per cell launched per
//!   diagonal and as a CUDA graph, the tiled kernels, the CPU on one thread and on all) at
//!   every size, each GPU table checked cell by cell against the CPU's; then chains of real
//!   matrices multiplied with cuBLAS in both orders. CSV + SVG + Markdown into `--out`.
//! - `--sizes 1000,3001`: only these n (the variants that are practical at that size);
//! - `--part dp` / `--part chains`: only one half.

use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use cmbook::cmm::chain;
use cmbook::cmm::dp::{self, DpTable};
use cmbook::cmm::gpu::{CmmKernels, Kernel};
use cmbook::cmm::layout::Layout;
use cmbook::cmm::tiled::{self, TiledKernels};
use cmbook::harness::plot::{self, Point, Spec};
use cmbook::harness::record::{self, Meta};
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, Stats, UsageError, L2};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(
    about = "Chained matrix multiplication past one block: the DP to n = 16384, and chains multiplied in its order"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Chain lengths n to measure (default 128 .. 16384 in powers of two; --quick: 100,257,700).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
    sizes: Option<Vec<u64>>,
    /// Which half to measure.
    #[arg(long, value_enum, default_value_t = Part::All)]
    part: Part,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Part {
    Dp,
    Chains,
    All,
}

/// Dimensions of the random chains: 1..=1000, as in the CMM chapter.
const DIM_MAX: u32 = 1000;
/// The largest n each slow variant is run at (beyond, one solve takes many seconds: see the
/// chapter). The tiled kernels and the multi-threaded CPU run at every n.
const ONE_BLOCK_MAX_N: usize = 4096;
const WARP_PER_CELL_MAX_N: usize = 8192;
const CPU_SERIAL_MAX_N: usize = 4096;
/// Seconds of repetitions each (variant, n) may take after its verified first solve.
const TIME_BUDGET_S: f64 = 3.0;
/// The largest n measured.
const MAX_SIZE: usize = 16384;

/// The targets for the whole DP on the H100, in ms.
const TARGETS_MS: [(usize, f64); 4] =
    [(1024, 1.0), (4096, 20.0), (8192, 120.0), (16384, 1000.0)];

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let sizes: Vec<usize> = match &args.sizes {
        Some(s) => {
            s.iter().map(|&n| usize::try_from(n).unwrap_or(usize::MAX)).collect()
        }
        None if args.common.quick => vec![100, 257, 700],
        None => (7..=14).map(|e| 1usize << e).collect(),
    };
    for &n in &sizes {
        // Refuse before opening the GPU. Past MAX_SIZE the CPU reference every run is checked
        // against needs 20 (n + 1)^2 bytes of host memory and, on 16 cores, many minutes.
        if n > MAX_SIZE {
            return Err(UsageError(format!("--sizes {n}: the largest n this example measures is {MAX_SIZE} (its CPU reference grows as n^3)")).into());
        }
        tiled::check(&vec![DIM_MAX; n + 1])?;
    }
    let gpu = Gpu::open(true)?;
    println!("{}", gpu.info.line());
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("cmm_beyond"));
    if args.part != Part::Chains {
        measure_dp(&gpu, &args.common, &sizes, &meta)?;
    }
    if args.part != Part::Dp {
        measure_chains(&gpu, &args.common, &meta)?;
    }
    Ok(())
}

/// The variants of the time-vs-n figure, in legend order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    OneBlockRowMajor,
    OneBlockDiagonal,
    WarpPerCell,
    WarpPerCellGraph,
    Tiled,
    CpuOneThread,
    CpuAllThreads,
}

impl Variant {
    const ALL: [Variant; 7] = [
        Variant::OneBlockRowMajor,
        Variant::OneBlockDiagonal,
        Variant::WarpPerCell,
        Variant::WarpPerCellGraph,
        Variant::Tiled,
        Variant::CpuOneThread,
        Variant::CpuAllThreads,
    ];

    fn label(self, threads: usize) -> String {
        match self {
            Variant::OneBlockRowMajor => "GPU paper: one block, row-major".into(),
            Variant::OneBlockDiagonal => "GPU one block, diagonal-major".into(),
            Variant::WarpPerCell => "GPU warp per cell, launch per diagonal".into(),
            Variant::WarpPerCellGraph => "GPU warp per cell, CUDA graph".into(),
            Variant::Tiled => "GPU tiled 64x64: min-plus + wavefront".into(),
            Variant::CpuOneThread => "CPU 1 thread".into(),
            Variant::CpuAllThreads => format!("CPU {threads} threads (rayon)"),
        }
    }

    fn max_n(self) -> usize {
        match self {
            Variant::OneBlockRowMajor | Variant::OneBlockDiagonal => ONE_BLOCK_MAX_N,
            Variant::WarpPerCell | Variant::WarpPerCellGraph => WARP_PER_CELL_MAX_N,
            Variant::CpuOneThread => CPU_SERIAL_MAX_N,
            Variant::Tiled | Variant::CpuAllThreads => usize::MAX,
        }
    }
}

/// Repetitions that fit the time budget, given one solve took `first_ms`.
fn reps_for(first_ms: f64, max_reps: usize) -> usize {
    ((TIME_BUDGET_S * 1e3 / first_ms.max(1e-3)) as usize).clamp(1, max_reps)
}

/// Times `solve` on the host clock (CPU variants): the first run also returns the table.
fn time_cpu(
    max_reps: usize,
    mut solve: impl FnMut() -> anyhow::Result<DpTable>,
) -> anyhow::Result<(Stats, DpTable)> {
    let t = Instant::now();
    let table = solve()?;
    let mut samples = vec![t.elapsed().as_secs_f64() * 1e3];
    for _ in 1..reps_for(samples[0], max_reps) {
        let t = Instant::now();
        solve()?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok((Stats::from_samples(&samples).expect("at least one sample"), table))
}

/// Verifies one solve of `problem` against the CPU, then times as many more as the budget allows.
fn time_gpu<P>(
    problem: &mut P,
    max_reps: usize,
    verified_solve: impl FnOnce(&mut P) -> anyhow::Result<DpTable>,
    time: impl FnOnce(&mut P, Plan) -> anyhow::Result<Stats>,
) -> anyhow::Result<Stats> {
    let t = Instant::now();
    verified_solve(problem)?; // also the warm-up
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    time(problem, Plan::new(0, reps_for(first_ms, max_reps), L2::Warm))
}

#[derive(serde::Serialize)]
struct TargetRow {
    n: usize,
    target_ms: String,
    tiled_ms: String,
    met: &'static str,
    vs_paper_kernel: String,
    vs_cpu_1_thread: String,
    vs_cpu_all_threads: String,
    candidates_per_ns: String,
    tile_diagonals: usize,
    us_per_tile_diagonal: String,
    dependent_steps: usize,
    ns_per_step: String,
}

fn fmt_ms(v: f64) -> String {
    cmbook::harness::format::ms(v, 3)
}

// ANCHOR: measure_dp
fn measure_dp(
    gpu: &Gpu,
    common: &CommonArgs,
    sizes: &[usize],
    meta: &Meta,
) -> anyhow::Result<()> {
    let cmm = CmmKernels::load(gpu)?;
    let tiled_kernels = TiledKernels::load(gpu)?;
    let threads = rayon::current_num_threads();
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let max_reps = common.reps_or(10, 3);
    let bar = ProgressBar::new((sizes.len() * Variant::ALL.len()) as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());
    let mut points = Vec::new();
    let mut targets = Vec::new();
    for &n in sizes {
        let dims = dp::random_dims(n, DIM_MAX, common.seed + n as u64);
        // The reference: the multi-threaded CPU program, timed too. Every GPU table below is
        // compared with it cell by cell (costs and splits) before anything is timed.
        bar.set_message(format!("n = {n}: CPU, {threads} threads"));
        let (cpu_all, cpu) = time_cpu(max_reps, || Ok(dp::solve_contiguous(&dims)?))?;
        let mut measured: Vec<(Variant, Stats)> =
            vec![(Variant::CpuAllThreads, cpu_all)];
        for variant in Variant::ALL {
            bar.inc(1);
            if variant == Variant::CpuAllThreads || n > variant.max_n() {
                continue;
            }
            bar.set_message(format!("n = {n}: {}", variant.label(threads)));
            let stats = match variant {
                Variant::CpuOneThread => {
                    let (stats, table) = one_thread.install(|| {
                        time_cpu(max_reps, || Ok(dp::solve_contiguous(&dims)?))
                    })?;
                    anyhow::ensure!(table == cpu, "the one-thread CPU table differs from the multi-threaded one at n = {n}");
                    stats
                }
                Variant::OneBlockRowMajor | Variant::OneBlockDiagonal => {
                    let layout = if variant == Variant::OneBlockRowMajor {
                        Layout::RowMajor
                    } else {
                        Layout::DiagonalMajor
                    };
                    let mut p = cmm.prepare(Kernel::one_block(layout), &dims)?;
                    time_gpu(
                        &mut p,
                        max_reps,
                        |p| cmm.solve_verified(p, &cpu),
                        |p, plan| cmm.time(p, plan),
                    )?
                }
                Variant::WarpPerCell => {
                    let mut p = cmm.prepare(
                        Kernel::BlockPerCell { layout: Layout::RowMajor, block: 32 },
                        &dims,
                    )?;
                    time_gpu(
                        &mut p,
                        max_reps,
                        |p| cmm.solve_verified(p, &cpu),
                        |p, plan| cmm.time(p, plan),
                    )?
                }
                Variant::WarpPerCellGraph => {
                    let mut p = cmm.prepare(
                        Kernel::BlockPerCell { layout: Layout::RowMajor, block: 32 },
                        &dims,
                    )?;
                    let graph = cmm.capture(&mut p)?;
                    time_gpu(
                        &mut p,
                        max_reps,
                        |p| cmm.solve_verified_graph(p, &graph, &cpu),
                        |_, plan| gpu.time(plan, |_| Ok(graph.launch()?)),
                    )?
                }
                Variant::Tiled => {
                    let mut p = tiled_kernels.prepare(&dims)?;
                    time_gpu(
                        &mut p,
                        max_reps,
                        |p| tiled_kernels.solve_verified(p, &cpu),
                        |p, plan| tiled_kernels.time(p, plan),
                    )?
                }
                Variant::CpuAllThreads => unreachable!("measured above"),
            };
            measured.push((variant, stats));
        }
        for (variant, s) in &measured {
            points.push(Point::new(
                &variant.label(threads),
                n,
                s.median_ms,
                s.min_ms,
                s.max_ms,
            ));
        }
        let get = |v: Variant| {
            measured.iter().find(|(m, _)| *m == v).map(|(_, s)| s.median_ms)
        };
        let tiled_ms = get(Variant::Tiled).expect("the tiled kernels run at every n");
        let vs = |v: Variant| {
            get(v)
                .map(|ms| format!("{:.1}x", ms / tiled_ms))
                .unwrap_or_else(|| "–".into())
        };
        let target = TARGETS_MS.iter().find(|(t, _)| *t == n).map(|(_, ms)| *ms);
        let candidates = ((n as f64).powi(3) - n as f64) / 6.0; // sum over d of (n - d) d
        targets.push(TargetRow {
            n,
            target_ms: target.map(fmt_ms).unwrap_or_else(|| "–".into()),
            tiled_ms: fmt_ms(tiled_ms),
            met: match target {
                Some(t) if tiled_ms <= t => "yes",
                Some(_) => "no",
                None => "–",
            },
            vs_paper_kernel: vs(Variant::OneBlockRowMajor),
            vs_cpu_1_thread: vs(Variant::CpuOneThread),
            vs_cpu_all_threads: vs(Variant::CpuAllThreads),
            candidates_per_ns: format!("{:.2}", candidates / (tiled_ms * 1e6)),
            // The sweeps of successive block diagonals cannot overlap: at small n this is the time.
            tile_diagonals: tiled::tile_diagonals(n),
            us_per_tile_diagonal: format!(
                "{:.0}",
                tiled_ms * 1e3 / tiled::tile_diagonals(n) as f64
            ),
            dependent_steps: tiled::dependent_steps(n),
            ns_per_step: format!(
                "{:.0}",
                tiled_ms * 1e6 / tiled::dependent_steps(n) as f64
            ),
        });
        println!(
            "n = {n:>5}: tiled {} ms (every cell equals the CPU's); {}",
            fmt_ms(tiled_ms),
            measured
                .iter()
                .filter(|(v, _)| *v != Variant::Tiled)
                .map(|(v, s)| format!(
                    "{} {} ms",
                    v.label(threads),
                    fmt_ms(s.median_ms)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    bar.finish_and_clear();
    let spec = Spec::line(
        "Whole CMM table vs chain length (median, min-max bars; L2 warm)",
        "n matrices",
        "ms",
    )
    .log_x()
    .log_y();
    plot::write_figure(
        &common.out,
        "cmm-beyond-time-vs-n",
        &meta
            .clone()
            .with("dims", &format!("random 1..={DIM_MAX}, seed {} + n", common.seed)),
        &spec,
        &points,
    )?;
    let title = "The tiled kernels: whole table, median ms; ratios are the other program's median over the tiled kernels' in the same run";
    record::write_table(
        &common.out,
        "cmm-beyond-targets",
        &meta.clone().with("title", title),
        &targets,
    )?;
    Ok(())
}
// ANCHOR_END: measure_dp

#[derive(serde::Serialize)]
struct ChainTableRow {
    chain: String,
    matrices: usize,
    left_to_right_gflop: String,
    optimal_gflop: String,
    predicted_ratio: String,
    left_to_right_ms: String,
    optimal_ms: String,
    measured_ratio: String,
    optimal_order: String,
}

// ANCHOR: measure_chains
fn measure_chains(gpu: &Gpu, common: &CommonArgs, meta: &Meta) -> anyhow::Result<()> {
    let chains = if common.quick {
        chain::realistic_chains_quick(common.seed)
    } else {
        chain::realistic_chains(common.seed)
    };
    let blas = chain::open_blas(gpu)?;
    let plan = Plan::new(2, common.reps_or(20, 3), L2::Warm);
    let bar = ProgressBar::new(chains.len() as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());
    let mut rows = Vec::new();
    for (c, named) in chains.iter().enumerate() {
        bar.set_message(named.name.clone());
        // Both orders multiply the same fresh inputs; both products are checked against exact
        // CPU rows and against each other before either is timed.
        rows.push(chain::measure_chain(
            gpu,
            &blas,
            named,
            plan,
            common.seed + c as u64,
        )?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let table: Vec<ChainTableRow> = rows
        .iter()
        .zip(&chains)
        .map(|(r, named)| {
            let order = chain::predict(&named.dims)
                .map(|p| p.optimal.to_string())
                .unwrap_or_default();
            ChainTableRow {
                chain: r.chain.clone(),
                matrices: r.matrices,
                left_to_right_gflop: format!("{:.1}", r.left_to_right_gflop),
                optimal_gflop: format!("{:.1}", r.optimal_gflop),
                predicted_ratio: format!("{:.2}", r.predicted_ratio),
                left_to_right_ms: fmt_ms(r.left_to_right_ms_median),
                optimal_ms: fmt_ms(r.optimal_ms_median),
                measured_ratio: format!("{:.2}", r.measured_ratio),
                optimal_order: if order.len() <= 60 {
                    order
                } else {
                    format!("{} characters", order.len())
                },
            }
        })
        .collect();
    for r in &table {
        println!(
            "{}: predicted {}x, measured {}x ({} ms -> {} ms)",
            r.chain,
            r.predicted_ratio,
            r.measured_ratio,
            r.left_to_right_ms,
            r.optimal_ms
        );
    }
    let meta = meta.clone().with(
        "blas",
        "cuBLAS SGEMM, default math mode (no TF32), row-major via C^T = B^T A^T",
    );
    plot::write_figure(
        &common.out,
        "cmm-beyond-chains",
        &meta,
        &chain::figure_spec(),
        &chain::figure_points(&rows),
    )?;
    let title = "Chains multiplied with cuBLAS SGEMM in both orders (median of the repetitions, L2 warm); both products verified";
    record::write_table(
        &common.out,
        "cmm-beyond-chain-table",
        &meta.with("title", title),
        &table,
    )?;
    Ok(())
}
// ANCHOR_END: measure_chains
