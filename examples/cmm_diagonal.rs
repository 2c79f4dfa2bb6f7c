//! Chapter "Chained matrix multiplication and the diagonal data layout": the paper's systems,
//! reproduced and measured (Seifi & Al-Mamun 2024, sections 4-8).
//!
//! - no arguments: the chapter's measurements (Table 1, the layout speedup, the breakeven
//!   sweep, section 7's variants and streams, the experiments that explain the layout's gain),
//!   printed and written as CSV + SVG + Markdown tables into `--out` (default `figures/`);
//! - `--dims 20,2,30,12,8`: solves one chain on the GPU, checked against the CPU;
//! - `--n 500 --seed 7`: the same for a random chain of n matrices;
//! - `--cpu-only`: answers `--dims`/`--n` without a GPU.

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use cmbook::cmm::dp::{self, DpTable};
use cmbook::cmm::gpu::{CmmKernels, CostWidth, Kernel};
use cmbook::cmm::layout::{self, Layout};
use cmbook::cmm::traffic::{self, WarpMapping};
use cmbook::cmm::{paper, paren};
use cmbook::harness::plot::{self, Point, Spec};
use cmbook::harness::record::{self, Meta};
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, Stats, UsageError, L2};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(
    about = "Chained matrix multiplication: the DP on the GPU, row-major vs diagonal-major"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Solve this chain: dimensions p0,p1,...,pn (matrix i is p(i-1) x p(i)).
    #[arg(long, value_delimiter = ',', conflicts_with = "n")]
    dims: Option<Vec<u32>>,
    /// Solve a random chain of this many matrices (dimensions 1..=1000, from --seed).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    n: Option<u64>,
    /// Answer --dims / --n on the CPU only (no GPU needed).
    #[arg(long)]
    cpu_only: bool,
}

const DIM_MAX: u32 = 1000;

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let dims = match (&args.dims, args.n) {
        (Some(d), _) => Some(d.clone()),
        (None, Some(n)) => {
            let n = usize::try_from(n).ok().filter(|n| *n <= layout::MAX_N_FOR_I32_INDEX).ok_or_else(|| {
                UsageError(format!("--n {n} is too large: the kernels index the table with 32-bit ints, so n <= {}", layout::MAX_N_FOR_I32_INDEX))
            })?;
            Some(dp::random_dims(n, DIM_MAX, args.common.seed))
        }
        (None, None) => None,
    };
    match dims {
        Some(dims) => solve_one(&dims, args.cpu_only),
        None if args.cpu_only => Err(UsageError(
            "--cpu-only answers --dims or --n; the measurements need a GPU".into(),
        )
        .into()),
        None => measure(&args.common),
    }
}

/// `--dims` / `--n`: the optimal cost and order, from the CPU and (unless --cpu-only) the GPU.
fn solve_one(dims: &[u32], cpu_only: bool) -> anyhow::Result<()> {
    let n = dp::validate_dims(dims).map_err(|e| UsageError(e.to_string()))?;
    let t = Instant::now();
    let cpu = if n > 2000 { dp::solve_parallel(dims) } else { dp::solve_serial(dims) }
        .map_err(|e| UsageError(e.to_string()))?;
    let cpu_ms = t.elapsed().as_secs_f64() * 1e3;
    let order = if n <= 60 {
        paren::parenthesization(&cpu)
    } else {
        format!("{} characters, not shown", paren::parenthesization(&cpu).len())
    };
    if cpu_only {
        println!("n = {n} matrices (CPU only)");
        println!("optimal cost: {} scalar multiplications", cpu.optimal_cost());
        println!("optimal order: {order}");
        println!("CPU serial DP: {cpu_ms:.3} ms");
        return Ok(());
    }
    let kernel = Kernel::one_block(Layout::DiagonalMajor);
    kernel.check(dims)?; // before opening the GPU: a chain the kernel cannot represent is a usage error
    let gpu = Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let kernels = CmmKernels::load(&gpu)?;
    let mut p = kernels.prepare(kernel, dims)?;
    let table = kernels.solve_verified(&mut p, &cpu)?;
    let stats = kernels.time(&mut p, Plan::new(1, 5, L2::Warm))?;
    println!("n = {n} matrices");
    println!("optimal cost: {} scalar multiplications", table.optimal_cost());
    println!("optimal order: {order}");
    println!(
        "GPU ({}): every cell equals the CPU's; {:.3} ms (median of 5)",
        kernel.label(),
        stats.median_ms
    );
    println!("CPU serial DP: {cpu_ms:.3} ms");
    Ok(())
}

/// Sizes and repetitions of the default measurement (`--quick` shrinks them).
struct Plan3 {
    table1: Vec<usize>,
    breakeven: Vec<usize>,
    ratio_sweep: Vec<usize>,
    stride_sweep: Vec<usize>,
    variants_n: usize,
    streams_n: usize,
    streams_k: Vec<usize>,
    reps: usize,
    cpu_reps: usize,
}

fn plan_for(common: &CommonArgs) -> Plan3 {
    if common.quick {
        Plan3 {
            table1: (120..=124).collect(),
            breakeven: (10..=100).step_by(30).collect(),
            ratio_sweep: vec![64, 130, 256],
            stride_sweep: (120..=123).collect(),
            variants_n: 200,
            streams_n: 128,
            streams_k: vec![1, 2, 4],
            reps: common.reps_or(3, 3),
            cpu_reps: 1,
        }
    } else {
        Plan3 {
            table1: (1016..=1024).collect(),
            breakeven: (10..=400).step_by(10).collect(),
            ratio_sweep: vec![128, 256, 384, 512, 768, 1024, 1536, 2048, 3072],
            stride_sweep: (1000..=1030).collect(),
            variants_n: 1024,
            streams_n: 1024,
            streams_k: vec![1, 2, 4, 8, 16],
            reps: common.reps_or(10, 3),
            cpu_reps: 5,
        }
    }
}

fn cpu_serial_ms(dims: &[u32], reps: usize) -> anyhow::Result<(Stats, DpTable)> {
    let mut samples = Vec::new();
    let mut table = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        table = Some(dp::solve_serial(dims)?);
        samples.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok((Stats::from_samples(&samples).unwrap(), table.unwrap()))
}

fn fmt_ms(v: f64) -> String {
    cmbook::harness::format::ms(v, 4)
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}", a / b)
}

/// A verified, timed kernel on one chain.
fn measure_kernel(
    kernels: &CmmKernels,
    kernel: Kernel,
    dims: &[u32],
    cpu: &DpTable,
    plan: Plan,
) -> anyhow::Result<Stats> {
    let mut p = kernels.prepare(kernel, dims)?;
    kernels.solve_verified(&mut p, cpu)?;
    kernels.time(&mut p, plan)
}

#[derive(serde::Serialize)]
struct OrderRow {
    order: String,
    scalar_multiplications: String,
    optimal: &'static str,
}

#[derive(serde::Serialize)]
struct Table1Row {
    n: usize,
    paper_serial_ms: String,
    paper_cuda_ms: String,
    paper_layout_ms: String,
    paper_layout_speedup: String,
    our_serial_ms: String,
    our_rowmajor_ms: String,
    our_diagonal_ms: String,
    our_layout_speedup: String,
}

#[derive(serde::Serialize)]
struct MemoryRow {
    address: usize,
    row_major_holds: String,
    diagonal_major_holds: String,
}

#[derive(serde::Serialize)]
struct MatrixRow {
    row: usize,
    #[serde(rename = "col 0")]
    c0: String,
    #[serde(rename = "col 1")]
    c1: String,
    #[serde(rename = "col 2")]
    c2: String,
    #[serde(rename = "col 3")]
    c3: String,
    #[serde(rename = "col 4")]
    c4: String,
    #[serde(rename = "col 5")]
    c5: String,
}

#[derive(serde::Serialize)]
struct TrafficRow {
    threads: &'static str,
    layout: &'static str,
    cost_bytes: u32,
    sectors_per_warp_load: String,
    lines_per_warp_load: String,
    sector_efficiency: String,
    total_sectors_millions: String,
    fresh_sectors_millions: String,
}

#[derive(serde::Serialize)]
struct ExperimentRow {
    experiment: String,
    n: usize,
    rowmajor_ms: String,
    diagonal_ms: String,
    diagonal_speedup: String,
}

#[derive(serde::Serialize)]
struct BreakevenRow {
    source: &'static str,
    first_n_gpu_faster: String,
    gpu_faster_from_n_on: String,
    counted: &'static str,
}

fn measure(common: &CommonArgs) -> anyhow::Result<()> {
    let gpu = Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let sizes = plan_for(common);
    let kernels = CmmKernels::load(&gpu)?;
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("cmm_diagonal"));
    let out = &common.out;
    let seed = common.seed;
    let reps = sizes.reps;
    let warm = |r: usize| Plan::new(1, r, L2::Warm);
    let steps = sizes.table1.len()
        + sizes.breakeven.len()
        + sizes.ratio_sweep.len()
        + sizes.stride_sweep.len()
        + 4
        + sizes.streams_k.len()
        + 4;
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());

    // 1. The worked example: every order of A1..A4, costed by the crate, and the GPU's answer.
    let worked = paper::WORKED_EXAMPLE_DIMS;
    let cpu = dp::solve_serial(&worked)?;
    let optimum = cpu.optimal_cost();
    let rows: Vec<OrderRow> = paren::enumerate_orders(&worked)?
        .into_iter()
        .map(|o| OrderRow {
            order: o.tree.to_string(),
            scalar_multiplications: o.cost.to_string(),
            optimal: if o.cost == optimum as u128 { "yes" } else { "" },
        })
        .collect();
    for layout in Layout::ALL {
        let mut p = kernels.prepare(Kernel::one_block(layout), &worked)?;
        kernels.solve_verified(&mut p, &cpu)?;
    }
    record::write_table(out, "cmm-worked-example", &meta.clone().with("title", &format!("The five orders of A1(20x2) A2(2x30) A3(30x12) A4(12x8); the DP (CPU and both GPU layouts) finds {} = {}", optimum, paren::parenthesization(&cpu))), &rows)?;

    // 2. The paper's figures 2-4: the 6x6 upper triangle in both memory orders.
    let n6 = 6;
    let label = |r: usize, c: usize| {
        if c >= r {
            layout::upper_cell_label(n6, r, c)
        } else {
            String::new()
        }
    };
    let matrix: Vec<MatrixRow> = (0..n6)
        .map(|r| MatrixRow {
            row: r,
            c0: label(r, 0),
            c1: label(r, 1),
            c2: label(r, 2),
            c3: label(r, 3),
            c4: label(r, 4),
            c5: label(r, 5),
        })
        .collect();
    record::write_table(out, "cmm-layout-matrix", &meta.clone().with("title", "The upper triangle of a 6x6 table, cells lettered in row order (the paper's Figure 2), from cmm::layout"), &matrix)?;
    let rm = layout::row_major_memory(n6);
    let dm = layout::diagonal_major_memory(n6);
    let memory: Vec<MemoryRow> = (0..rm.len().max(dm.len()))
        .map(|a| MemoryRow {
            address: a,
            row_major_holds: rm.get(a).cloned().flatten().unwrap_or_else(|| "·".into()),
            diagonal_major_holds: dm
                .get(a)
                .cloned()
                .flatten()
                .unwrap_or_else(|| "".into()),
        })
        .collect();
    record::write_table(out, "cmm-layout-memory", &meta.clone().with("title", "Memory order of the 6x6 triangle: row-major with the lower half unused (Figure 3) and diagonal-major, packed (Figure 4), from cmm::layout"), &memory)?;

    // 3. Traffic computed from the index functions: sectors per warp load.
    bar.set_message("traffic tables");
    let traffic_n = if common.quick { 256 } else { 1024 };
    let mut traffic_rows = Vec::new();
    for (mapping, threads) in [
        (WarpMapping::CellPerThread, "thread per cell"),
        (WarpMapping::SplitKPerCell, "warp splits k"),
    ] {
        for layout in Layout::ALL {
            for bytes in [8u32, 4] {
                if mapping == WarpMapping::SplitKPerCell && bytes == 4 {
                    continue;
                }
                let t = traffic::dp_traffic(mapping, layout, bytes, traffic_n);
                traffic_rows.push(TrafficRow {
                    threads,
                    layout: layout.name(),
                    cost_bytes: bytes,
                    sectors_per_warp_load: format!("{:.2}", t.sectors_per_warp_load),
                    lines_per_warp_load: format!("{:.2}", t.lines_per_warp_load),
                    sector_efficiency: format!("{:.0}%", 100.0 * t.sector_efficiency),
                    total_sectors_millions: format!("{:.1}", t.sectors as f64 / 1e6),
                    fresh_sectors_millions: format!(
                        "{:.1}",
                        t.fresh_sectors as f64 / 1e6
                    ),
                });
            }
        }
    }
    record::write_table(out, "cmm-traffic", &meta.clone().with("title", &format!("Table loads of the whole DP at n = {traffic_n}, computed from the index functions (not measured): 32-byte sectors and 128-byte lines per warp-wide load")), &traffic_rows)?;
    bar.inc(1);

    // 4. Table 1: n = 1016..1024, serial CPU and both one-block kernels, beside the paper's V100.
    let mut t1_rows = Vec::new();
    let mut t1_points = Vec::new();
    let mut speedup_points = Vec::new();
    for (idx, &n) in sizes.table1.iter().enumerate() {
        bar.set_message(format!("Table 1, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed + n as u64);
        let (serial, cpu) = cpu_serial_ms(&dims, sizes.cpu_reps)?;
        let row = measure_kernel(
            &kernels,
            Kernel::one_block(Layout::RowMajor),
            &dims,
            &cpu,
            warm(reps),
        )?;
        let diag = measure_kernel(
            &kernels,
            Kernel::one_block(Layout::DiagonalMajor),
            &dims,
            &cpu,
            warm(reps),
        )?;
        let paper_row = paper::TABLE_1.get(idx).filter(|r| r.n as usize == n);
        let p = |f: fn(&paper::Table1Row) -> f64| {
            paper_row.map(|r| format!("{:.1}", f(r))).unwrap_or_else(|| "–".into())
        };
        t1_rows.push(Table1Row {
            n,
            paper_serial_ms: p(|r| r.serial_ms),
            paper_cuda_ms: p(|r| r.cuda_ms),
            paper_layout_ms: p(|r| r.data_layout_ms),
            paper_layout_speedup: paper_row
                .map(|r| ratio(r.cuda_ms, r.data_layout_ms))
                .unwrap_or_else(|| "–".into()),
            our_serial_ms: fmt_ms(serial.median_ms),
            our_rowmajor_ms: fmt_ms(row.median_ms),
            our_diagonal_ms: fmt_ms(diag.median_ms),
            our_layout_speedup: ratio(row.median_ms, diag.median_ms),
        });
        for (name, s) in [
            ("serial CPU (this host)", &serial),
            ("GPU, row-major (the paper's CUDA version)", &row),
            ("GPU, diagonal-major (the paper's layout)", &diag),
        ] {
            t1_points.push(Point::new(name, n, s.median_ms, s.min_ms, s.max_ms));
        }
        speedup_points.push(Point::new(
            &format!("ours, {}", gpu.info.name),
            n,
            row.median_ms / diag.median_ms,
            row.min_ms / diag.max_ms,
            row.max_ms / diag.min_ms,
        ));
        if let Some(r) = paper_row {
            for (name, v) in [
                ("serial CPU, paper (V100 host)", r.serial_ms),
                ("V100 row-major, paper", r.cuda_ms),
                ("V100 diagonal-major, paper", r.data_layout_ms),
            ] {
                t1_points.push(Point::new(name, n, v, v, v));
            }
            speedup_points.push(Point::new(
                "paper, V100 (Table 1)",
                n,
                r.cuda_ms / r.data_layout_ms,
                r.cuda_ms / r.data_layout_ms,
                r.cuda_ms / r.data_layout_ms,
            ));
        }
        bar.inc(1);
    }
    let kernel_meta = meta.clone().with("l2", "warm (the table stays on the GPU between repetitions; it is rewritten by every solve)");
    record::write_table(out, "cmm-table1-compare", &kernel_meta.clone().with("title", "Table 1 of the paper (V100) beside ours: milliseconds per complete DP; GPU times are kernel time with the table on the GPU, CPU times one core"), &t1_rows)?;
    plot::write_figure(
        out,
        "cmm-table1-times",
        &kernel_meta,
        &Spec::line(
            "CMM, n = 1016..1024: serial CPU and the one-block kernels",
            "n (matrices)",
            "milliseconds",
        )
        .log_y(),
        &t1_points,
    )?;
    plot::write_figure(
        out,
        "cmm-layout-speedup",
        &kernel_meta,
        &Spec::line(
            "Speedup of the diagonal-major layout over row-major (one-block kernels)",
            "n (matrices)",
            "row-major time / diagonal-major time",
        ),
        &speedup_points,
    )?;

    // 5. Breakeven (the paper's Figure 6): end to end, transfers and launch included.
    let mut be_points = Vec::new();
    let mut ahead: Vec<(usize, bool)> = Vec::new(); // (n, GPU row-major faster than the CPU)
    for &n in &sizes.breakeven {
        bar.set_message(format!("breakeven, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed ^ n as u64);
        // Small n take microseconds on the CPU: many repetitions, so the median is stable.
        let (serial, cpu) = cpu_serial_ms(&dims, 15)?;
        for layout in Layout::ALL {
            let kernel = Kernel::one_block(layout);
            let mut check = kernels.prepare(kernel, &dims)?;
            kernels.solve_verified(&mut check, &cpu)?;
            let e2e: Vec<f64> = (0..reps.max(15))
                .map(|_| kernels.end_to_end_ms(kernel, &dims))
                .collect::<anyhow::Result<_>>()?;
            let s = Stats::from_samples(&e2e).unwrap();
            be_points.push(Point::new(
                &format!("GPU {}, end to end", layout.name()),
                n,
                s.median_ms,
                s.min_ms,
                s.max_ms,
            ));
            if layout == Layout::RowMajor {
                ahead.push((n, s.median_ms < serial.median_ms));
            }
        }
        be_points.push(Point::new(
            "serial CPU",
            n,
            serial.median_ms,
            serial.min_ms,
            serial.max_ms,
        ));
        bar.inc(1);
    }
    let e2e_meta = meta.clone().with("l2", "not controlled: each end-to-end run allocates, copies in, solves and copies out");
    plot::write_figure(
        out,
        "cmm-breakeven",
        &e2e_meta,
        &Spec::line(
            "Small chains: serial CPU vs GPU end to end (allocation, copies, launch)",
            "n (matrices)",
            "milliseconds",
        )
        .log_y(),
        &be_points,
    )?;
    let first_ahead = ahead
        .iter()
        .find(|(_, a)| *a)
        .map(|(n, _)| n.to_string())
        .unwrap_or_else(|| "none".into());
    // The smallest n from which the GPU is ahead at every larger n of the sweep.
    let stays_ahead =
        ahead.iter().rposition(|(_, a)| !*a).map_or(Some(0), |last_behind| {
            (last_behind + 1 < ahead.len()).then_some(last_behind + 1)
        });
    let stays = stays_ahead
        .map(|i| ahead[i].0.to_string())
        .unwrap_or_else(|| format!("above {}", sizes.breakeven.last().unwrap()));
    record::write_table(
        out,
        "cmm-breakeven-n",
        &e2e_meta.clone().with("title", "Where the GPU (row-major, end to end) overtakes the serial CPU"),
        &[
            BreakevenRow { source: "paper, V100", first_n_gpu_faster: format!("about {}", paper::BREAKEVEN_N), gpu_faster_from_n_on: "not stated".into(), counted: "as stated in the text (Figure 6)" },
            BreakevenRow { source: "ours", first_n_gpu_faster: first_ahead, gpu_faster_from_n_on: stays, counted: "allocation + dims in + kernel + both tables out, host clock, median of 15" },
        ],
    )?;

    // 6. Why the layout helps: the speedup against n (the table in and out of L2), 4-byte costs,
    //    and the same layout with its index recomputed for every load.
    let mut experiments = Vec::new();
    let mut sweep_points = Vec::new();
    for &n in &sizes.ratio_sweep {
        bar.set_message(format!("layout against n, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed + 7 * n as u64);
        let cpu = dp::solve_parallel(&dims)?;
        let r = if n > 1024 { 2 } else { reps.min(5) };
        let row = measure_kernel(
            &kernels,
            Kernel::one_block(Layout::RowMajor),
            &dims,
            &cpu,
            Plan::new(0, r, L2::Warm),
        )?;
        let diag = measure_kernel(
            &kernels,
            Kernel::one_block(Layout::DiagonalMajor),
            &dims,
            &cpu,
            Plan::new(0, r, L2::Warm),
        )?;
        let mib = |l: Layout| (l.dp_len(n) * 8) as f64 / (1 << 20) as f64;
        experiments.push(ExperimentRow {
            experiment: format!(
                "8-byte costs; table {:.1} MiB row-major, {:.1} MiB diagonal",
                mib(Layout::RowMajor),
                mib(Layout::DiagonalMajor)
            ),
            n,
            rowmajor_ms: fmt_ms(row.median_ms),
            diagonal_ms: fmt_ms(diag.median_ms),
            diagonal_speedup: ratio(row.median_ms, diag.median_ms),
        });
        sweep_points.push(Point::new(
            "row-major",
            n,
            row.median_ms,
            row.min_ms,
            row.max_ms,
        ));
        sweep_points.push(Point::new(
            "diagonal-major",
            n,
            diag.median_ms,
            diag.min_ms,
            diag.max_ms,
        ));
        bar.inc(1);
    }
    plot::write_figure(out, "cmm-time-vs-n", &kernel_meta.clone().with("note", "one block of min(n, 1024) threads; above 1024 each thread takes several rows"), &Spec::line("One-block kernels: time of the whole DP against n", "n (matrices)", "milliseconds").log_x().log_y(), &sweep_points)?;

    // Row-major's time against n one matrix at a time: the row stride (n + 1) * 8 bytes decides
    // which addresses a warp's left loads hit together.
    let mut stride_points = Vec::new();
    for &n in &sizes.stride_sweep {
        bar.set_message(format!("one n at a time, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed + 3 * n as u64);
        let cpu = dp::solve_parallel(&dims)?;
        for layout in Layout::ALL {
            let s = measure_kernel(
                &kernels,
                Kernel::one_block(layout),
                &dims,
                &cpu,
                Plan::new(1, 3, L2::Warm),
            )?;
            stride_points.push(Point::new(
                layout.name(),
                n,
                s.median_ms,
                s.min_ms,
                s.max_ms,
            ));
        }
        bar.inc(1);
    }
    plot::write_figure(out, "cmm-stride", &kernel_meta, &Spec::line("One-block kernels, n one at a time: the row-major table's row stride matters", "n (matrices); row-major row stride = (n + 1) x 8 bytes", "milliseconds"), &stride_points)?;

    let n = sizes.variants_n;
    let dims = dp::random_dims(n, DIM_MAX, seed + 99);
    let cpu = dp::solve_parallel(&dims)?;
    bar.set_message("4-byte costs and indexed loads");
    // 4-byte costs need small dimensions: (n - 1) * max^3 must stay below 2^32, so max <= 160
    // at n = 1024. Both widths are measured on that chain, so only the width differs.
    let small_max = ((u32::MAX as f64 / (n - 1).max(1) as f64).cbrt().floor() as u32)
        .clamp(1, DIM_MAX);
    let small = dp::random_dims(n, small_max, seed + 98);
    dp::gpu_safe_bound_u32(&small)?;
    let small_cpu = dp::solve_parallel(&small)?;
    let u32_row = measure_kernel(
        &kernels,
        Kernel::OneBlock {
            layout: Layout::RowMajor,
            cost: CostWidth::U32,
            indexed: false,
        },
        &small,
        &small_cpu,
        warm(reps),
    )?;
    let u32_diag = measure_kernel(
        &kernels,
        Kernel::OneBlock {
            layout: Layout::DiagonalMajor,
            cost: CostWidth::U32,
            indexed: false,
        },
        &small,
        &small_cpu,
        warm(reps),
    )?;
    let small_row = measure_kernel(
        &kernels,
        Kernel::one_block(Layout::RowMajor),
        &small,
        &small_cpu,
        warm(reps),
    )?;
    let small_diag = measure_kernel(
        &kernels,
        Kernel::one_block(Layout::DiagonalMajor),
        &small,
        &small_cpu,
        warm(reps),
    )?;
    let u64_row = measure_kernel(
        &kernels,
        Kernel::one_block(Layout::RowMajor),
        &dims,
        &cpu,
        warm(reps),
    )?;
    let u64_diag = measure_kernel(
        &kernels,
        Kernel::one_block(Layout::DiagonalMajor),
        &dims,
        &cpu,
        warm(reps),
    )?;
    let indexed = measure_kernel(
        &kernels,
        Kernel::OneBlock {
            layout: Layout::DiagonalMajor,
            cost: CostWidth::U64,
            indexed: true,
        },
        &dims,
        &cpu,
        warm(reps),
    )?;
    bar.inc(1);
    experiments.push(ExperimentRow {
        experiment: format!("8-byte costs, dimensions <= {small_max}"),
        n,
        rowmajor_ms: fmt_ms(small_row.median_ms),
        diagonal_ms: fmt_ms(small_diag.median_ms),
        diagonal_speedup: ratio(small_row.median_ms, small_diag.median_ms),
    });
    experiments.push(ExperimentRow {
        experiment: format!("4-byte costs, the same chain (dimensions <= {small_max})"),
        n,
        rowmajor_ms: fmt_ms(u32_row.median_ms),
        diagonal_ms: fmt_ms(u32_diag.median_ms),
        diagonal_speedup: ratio(u32_row.median_ms, u32_diag.median_ms),
    });
    experiments.push(ExperimentRow {
        experiment: "8-byte costs, diagonal index recomputed for every load".into(),
        n,
        rowmajor_ms: fmt_ms(u64_row.median_ms),
        diagonal_ms: fmt_ms(indexed.median_ms),
        diagonal_speedup: ratio(u64_row.median_ms, indexed.median_ms),
    });
    experiments.push(ExperimentRow {
        experiment: "8-byte costs, diagonal pointers stepped (the kernel above)".into(),
        n,
        rowmajor_ms: fmt_ms(u64_row.median_ms),
        diagonal_ms: fmt_ms(u64_diag.median_ms),
        diagonal_speedup: ratio(u64_row.median_ms, u64_diag.median_ms),
    });
    record::write_table(out, "cmm-experiments", &kernel_meta.clone().with("title", "What the layout's speedup depends on: one-block kernels, milliseconds per complete DP"), &experiments)?;

    // 7. Section 7.1: more threads per diagonal, one launch per diagonal.
    let mut variant_points = Vec::new();
    let mut push = |k: Kernel, s: &Stats| {
        let group = match k {
            Kernel::OneBlock { .. } => "one block (the paper's kernel)",
            Kernel::CellPerThread { .. } => "launch per diagonal, thread per cell",
            Kernel::BlockPerCell { .. } => "launch per diagonal, block of 256 per cell",
        };
        variant_points.push(Point::new(
            k.layout().name(),
            group,
            s.median_ms,
            s.min_ms,
            s.max_ms,
        ));
    };
    push(Kernel::one_block(Layout::RowMajor), &u64_row);
    push(Kernel::one_block(Layout::DiagonalMajor), &u64_diag);
    for layout in Layout::ALL {
        for k in [
            Kernel::CellPerThread { layout, block: 128 },
            Kernel::BlockPerCell { layout, block: 256 },
        ] {
            bar.set_message(k.label());
            let s = measure_kernel(&kernels, k, &dims, &cpu, warm(reps))?;
            push(k, &s);
            bar.inc(1);
        }
    }
    plot::write_figure(
        out,
        "cmm-variants",
        &kernel_meta.clone().with("n", &n.to_string()),
        &Spec::bar(
            &format!("Section 7.1's variants at n = {n}: milliseconds per complete DP"),
            "kernel",
            "milliseconds",
        )
        .log_y(),
        &variant_points,
    )?;

    // 8. Section 7.2: k independent chains, one after another vs one stream each.
    let mut stream_points = Vec::new();
    let sn = sizes.streams_n;
    let kmax = *sizes.streams_k.iter().max().unwrap();
    let chains: Vec<Vec<u32>> = (0..kmax)
        .map(|c| dp::random_dims(sn, DIM_MAX, seed + 1000 + c as u64))
        .collect();
    let cpus: Vec<DpTable> =
        chains.iter().map(|d| dp::solve_parallel(d)).collect::<Result<_, _>>()?;
    let streams: Vec<_> =
        (0..kmax).map(|_| gpu.ctx.new_stream()).collect::<Result<_, _>>()?;
    let kernel = Kernel::one_block(Layout::DiagonalMajor);
    for &k in &sizes.streams_k {
        bar.set_message(format!("streams, {k} chains"));
        let mut problems = Vec::new();
        for (d, c) in chains.iter().zip(&cpus).take(k) {
            let mut p = kernels.prepare(kernel, d)?;
            kernels.solve_verified(&mut p, c)?;
            problems.push(p);
        }
        let r = reps.min(5);
        let one = kernels.time_many(&mut problems, None, Plan::new(1, r, L2::Warm))?;
        let many = kernels.time_many(
            &mut problems,
            Some(&streams[..k]),
            Plan::new(1, r, L2::Warm),
        )?;
        // The results written under concurrency must still be right.
        for (p, c) in problems.iter().zip(&cpus) {
            if let Some(diff) = c.difference_from(&kernels.read_back(p)?) {
                anyhow::bail!(
                    "kernel {} on its own stream, n={sn}: {diff}",
                    kernel.function().1
                );
            }
        }
        stream_points.push(Point::new(
            "one stream, chains one after another",
            k,
            one.median_ms,
            one.min_ms,
            one.max_ms,
        ));
        stream_points.push(Point::new(
            "one stream per chain",
            k,
            many.median_ms,
            many.min_ms,
            many.max_ms,
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    plot::write_figure(out, "cmm-streams", &kernel_meta.clone().with("n", &sn.to_string()), &Spec::line(&format!("Section 7.2: k independent chains of n = {sn}, diagonal-major one-block kernel"), "k (chains)", "milliseconds for all k").log_x().log_y(), &stream_points)?;

    println!(
        "{:>6} {:>12} {:>12} {:>12} {:>9} | paper V100: {:>9} {:>9} {:>7}",
        "n",
        "serial ms",
        "row-major",
        "diagonal",
        "speedup",
        "CUDA",
        "layout",
        "speedup"
    );
    for r in &t1_rows {
        println!(
            "{:>6} {:>12} {:>12} {:>12} {:>9} | {:>21} {:>9} {:>7}",
            r.n,
            r.our_serial_ms,
            r.our_rowmajor_ms,
            r.our_diagonal_ms,
            r.our_layout_speedup,
            r.paper_cuda_ms,
            r.paper_layout_ms,
            r.paper_layout_speedup
        );
    }
    for e in &experiments {
        println!(
            "{:>6}  {:<70} {:>10} {:>10} {:>6}",
            e.n, e.experiment, e.rowmajor_ms, e.diagonal_ms, e.diagonal_speedup
        );
    }
    println!("every GPU table verified cell by cell against the CPU; figures and data written to {}", out.display());
    Ok(())
}
