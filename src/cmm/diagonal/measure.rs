//! What the chapter "Chained matrix multiplication and the diagonal layout" measures: the
//! worked example, the traffic both layouts cause (computed), Table 1 of the paper beside ours,
//! the breakeven against the serial CPU end to end, the layout's speedup against n and one n at
//! a time, what the speedup depends on (cost width, index arithmetic), section 7.1's variants
//! and section 7.2's streams; the row stride one n at a time; and what keeping the diagonals in
//! order costs (a launch per diagonal, a CUDA graph, one cooperative launch with grid barriers).
//! Every GPU table is checked cell by cell against the CPU's before it is timed.

use crate::cmm::dp::{self, DpTable};
use crate::cmm::gpu::{CmmKernels, CostWidth, Kernel};
use crate::cmm::launches::{self, Separation};
use crate::cmm::layout::Layout;
use crate::cmm::paper;
use crate::cmm::paren::{self, Order};
use crate::cmm::traffic::{self, TrafficSummary, WarpMapping};
use crate::harness::counters::{Case, Quantity};
use crate::harness::timing::{time_host, Plan};
use crate::harness::{FullQuick, Run, Stats, L2};

/// Dimensions of the random chains: 1..=1000.
pub const DIM_MAX: u32 = 1000;
/// n of the section 7.1 variants and of the cost-width experiments.
pub const VARIANTS_N: FullQuick<usize> = FullQuick::new(1024, 200);
/// n of each chain of the section 7.2 streams.
pub const STREAMS_N: FullQuick<usize> = FullQuick::new(1024, 128);
/// n of the traffic table (computed from the index functions, not measured).
pub const TRAFFIC_N: FullQuick<usize> = FullQuick::new(1024, 256);
/// n whose row-major lanes' stride, (n + 2) * 8 bytes, is a multiple of 128 (1006 and 1022,
/// the stride sweep's slowest), of 64 (1014), of 32 (1018) and an odd multiple of 8 (1023):
/// with 1024 (16), the rungs of the sweep's ladder whose L1 counts `--counters` compares.
pub const STRIDE_LADDER_N: [usize; 5] = [1006, 1022, 1014, 1018, 1023];
/// Serial CPU solves per size of Table 1.
pub const TABLE1_CPU_REPS: FullQuick<usize> = FullQuick::new(5, 1);
/// Serial CPU solves and GPU end-to-end runs per size of the breakeven sweep (at least; more
/// GPU runs with `--reps` above it): small n take microseconds, so many repetitions keep the
/// median stable.
pub const BREAKEVEN_REPS: usize = 15;
/// Block sizes of the grid-barrier comparison: a warp per cell, and the paper's 256.
pub const SEPARATION_BLOCKS: [u32; 2] = [32, 256];

/// Which part of the chapter to measure (the worked example and the computed tables are
/// always written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The paper's systems: Table 1, breakeven, the layout's speedup, section 7.
    Paper,
    /// The one-block kernels one n at a time: the row stride.
    Stride,
    /// Launch per diagonal, CUDA graph and cooperative launch with grid barriers.
    Barrier,
    /// Everything.
    All,
}

impl Part {
    /// Whether this part includes `other`.
    pub fn has(self, other: Part) -> bool {
        self == Part::All || self == other
    }
}

/// The sizes of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// n of Table 1 (the paper's are 1016..=1024).
    pub table1: Vec<usize>,
    /// n of the breakeven sweep (the paper's Figure 6 spans 10..=400).
    pub breakeven: Vec<usize>,
    /// n of the layout's speedup against n.
    pub ratio_sweep: Vec<usize>,
    /// n of the sweep one matrix at a time (the row stride).
    pub stride_sweep: Vec<usize>,
    pub variants_n: usize,
    pub streams_n: usize,
    /// Numbers of independent chains.
    pub streams_k: Vec<usize>,
    pub table1_cpu_reps: usize,
    pub traffic_n: usize,
    /// n of the grid-barrier comparison (odd ones included).
    pub separation_n: Vec<usize>,
    pub part: Part,
}

impl Settings {
    /// The sizes of a full run (`quick = false`) or of `--quick`, for `part`.
    pub fn new(quick: bool, part: Part) -> Self {
        let separation_n =
            if quick { vec![100, 129] } else { vec![255, 1000, 1024, 2047, 4096] };
        let (table1, breakeven, ratio_sweep, stride_sweep, streams_k) = if quick {
            (
                (120..=124).collect(),
                (10..=100).step_by(30).collect(),
                vec![64, 130, 256],
                (120..=123).collect(),
                vec![1, 2, 4],
            )
        } else {
            (
                (1016..=1024).collect(),
                (10..=400).step_by(10).collect(),
                vec![128, 256, 384, 512, 768, 1024, 1536, 2048, 3072],
                (1000..=1030).collect(),
                vec![1, 2, 4, 8, 16],
            )
        };
        Self {
            table1,
            breakeven,
            ratio_sweep,
            stride_sweep,
            variants_n: VARIANTS_N.pick(quick),
            streams_n: STREAMS_N.pick(quick),
            streams_k,
            table1_cpu_reps: TABLE1_CPU_REPS.pick(quick),
            traffic_n: TRAFFIC_N.pick(quick),
            separation_n,
            part,
        }
    }
}

/// The two one-block kernels (or two tables) on one chain: row-major and diagonal-major.
#[derive(Debug, Clone)]
pub struct LayoutPair {
    pub n: usize,
    pub row_major: Stats,
    pub diagonal: Stats,
}

impl LayoutPair {
    pub fn get(&self, layout: Layout) -> &Stats {
        match layout {
            Layout::RowMajor => &self.row_major,
            Layout::DiagonalMajor => &self.diagonal,
        }
    }
}

/// One size of Table 1: the serial CPU and both one-block kernels.
#[derive(Debug, Clone)]
pub struct Table1Size {
    pub serial: Stats,
    pub kernels: LayoutPair,
}

/// One size of the breakeven sweep: the serial CPU, and each layout end to end (allocation,
/// copies, launch) on the host clock.
#[derive(Debug, Clone)]
pub struct BreakevenSize {
    pub serial: Stats,
    pub end_to_end: LayoutPair,
}

/// The breakeven sweep: every size, and how many end-to-end runs each GPU median is of.
#[derive(Debug, Clone)]
pub struct Breakeven {
    pub sizes: Vec<BreakevenSize>,
    pub end_to_end_reps: usize,
}

/// What the layout's speedup depends on, at `n` = [`Settings::variants_n`].
#[derive(Debug, Clone)]
pub struct Widths {
    pub n: usize,
    /// The largest dimension for which 4-byte costs cannot wrap at this n.
    pub small_max: u32,
    /// 4-byte costs on the chain with dimensions up to `small_max`.
    pub u32_small: LayoutPair,
    /// 8-byte costs on the same chain.
    pub u64_small: LayoutPair,
    /// 8-byte costs on the chain with dimensions up to [`DIM_MAX`].
    pub u64: LayoutPair,
    /// The diagonal-major kernel recomputing its index for every load, on that chain.
    pub indexed: Stats,
}

/// `k` independent chains, one after another on one stream and each on its own stream.
#[derive(Debug, Clone)]
pub struct StreamsPoint {
    pub k: usize,
    pub one_stream: Stats,
    pub stream_per_chain: Stats,
}

/// Everything the chapter's figures and tables are drawn from.
pub struct Results {
    pub settings: Settings,
    /// The GPU's name, as the driver reports it.
    pub device: String,
    /// Every order of the worked example, costed by brute force.
    pub worked_orders: Vec<Order>,
    /// The worked example's CPU table, which both one-block kernels reproduced.
    pub worked: DpTable,
    /// Per (mapping, layout, cost width), in the table's row order.
    pub traffic: Vec<(WarpMapping, TrafficSummary)>,
    /// Per n of [`Settings::table1`].
    pub table1: Vec<Table1Size>,
    /// Per n of [`Settings::breakeven`].
    pub breakeven: Breakeven,
    /// Per n of [`Settings::ratio_sweep`].
    pub layout_vs_n: Vec<LayoutPair>,
    /// Per n of [`Settings::stride_sweep`].
    pub stride: Vec<LayoutPair>,
    /// `None` unless the paper's part was measured.
    pub widths: Option<Widths>,
    /// Section 7.1: the one-block kernels, then each per-diagonal kernel in both layouts.
    pub variants: Vec<(Kernel, Stats)>,
    /// Section 7.2, per k of [`Settings::streams_k`].
    pub streams: Vec<StreamsPoint>,
    /// Per n of [`Settings::separation_n`] and block of [`SEPARATION_BLOCKS`].
    pub separation: Vec<Separation>,
    /// The GPU's L2 cache in bytes (for the footprint table).
    pub l2_bytes: usize,
}

/// `reps` serial CPU solves of `dims` on the host clock, and the table.
fn cpu_serial(dims: &[u32], reps: usize) -> anyhow::Result<(Stats, DpTable)> {
    let mut table = None;
    let stats = time_host(0, reps.max(1), || {
        table = Some(dp::solve_serial(dims)?);
        Ok(())
    })?;
    Ok((stats, table.expect("at least one solve")))
}

/// A kernel's table checked against the CPU's, then timed under `plan`.
fn measure_kernel(
    kernels: &CmmKernels,
    kernel: Kernel,
    dims: &[u32],
    cpu: &DpTable,
    plan: Plan,
) -> anyhow::Result<Stats> {
    let mut p = kernels.prepare(kernel, dims)?;
    Ok(kernels.verify_then_time(&mut p, cpu, &[plan])?.time().clone())
}

/// Both one-block kernels (8-byte costs), each checked, then timed under `plan`.
fn measure_layouts(
    kernels: &CmmKernels,
    dims: &[u32],
    cpu: &DpTable,
    plan: Plan,
) -> anyhow::Result<LayoutPair> {
    Ok(LayoutPair {
        n: dims.len() - 1,
        row_major: measure_kernel(
            kernels,
            Kernel::one_block(Layout::RowMajor),
            dims,
            cpu,
            plan,
        )?,
        diagonal: measure_kernel(
            kernels,
            Kernel::one_block(Layout::DiagonalMajor),
            dims,
            cpu,
            plan,
        )?,
    })
}

/// Under `--counters`: both one-block kernels at `traffic_n` (sectors per load as the
/// traffic table computes them) and at n = 2048, where the chapter's footprint table puts
/// both layouts inside L2 (a hit rate near 100% if they stay there); in a full run also the
/// row-major kernel at one n of each rung of the stride sweep's ladder, each with its
/// modelled sectors: [`STRIDE_LADDER_N`] with 1024 (a multiple of 16 bytes), counted above.
fn count_layouts(
    gpu: &crate::harness::Gpu,
    kernels: &CmmKernels,
    traffic: &[(WarpMapping, TrafficSummary)],
    traffic_n: usize,
    seed: u64,
) -> anyhow::Result<()> {
    let mut cases: Vec<(usize, Layout)> = [traffic_n, 2048]
        .into_iter()
        .flat_map(|n| Layout::ALL.map(|l| (n, l)))
        .collect();
    if traffic_n >= TRAFFIC_N.full {
        cases.extend(STRIDE_LADDER_N.map(|n| (n, Layout::RowMajor)));
    }
    for (n, layout) in cases {
        let dims = dp::random_dims(n, DIM_MAX, seed + 7 * n as u64);
        let cpu = dp::solve_serial(&dims)?;
        let mut case = Case::new(format!("one block, {}, n = {n}", layout.name()))
            .predict(Quantity::L2HitPercent, 100.0);
        let modelled = traffic
            .iter()
            .find(|(m, t)| {
                *m == WarpMapping::CellPerThread
                    && t.layout == layout
                    && t.elem_bytes == 8
                    && t.n == n
            })
            .map(|(_, t)| *t)
            .unwrap_or_else(|| {
                traffic::dp_traffic(WarpMapping::CellPerThread, layout, 8, n)
            });
        let per_request = modelled.sectors as f64 / modelled.warp_loads as f64;
        case = case.predict(Quantity::LoadSectorsPerRequest, per_request);
        gpu.count_next(case);
        measure_kernel(
            kernels,
            Kernel::one_block(layout),
            &dims,
            &cpu,
            Plan::new(0, 1, L2::Warm),
        )?;
    }
    Ok(())
}

/// The paper's part of the chapter.
struct Paper {
    table1: Vec<Table1Size>,
    breakeven: Breakeven,
    layout_vs_n: Vec<LayoutPair>,
    widths: Widths,
    variants: Vec<(Kernel, Stats)>,
    streams: Vec<StreamsPoint>,
}

/// Measures the parts `settings.part` names, each GPU table verified before it is timed.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let kernels = CmmKernels::load(gpu)?;
    let s = settings;
    let mut steps = 1;
    if s.part.has(Part::Paper) {
        steps += s.table1.len() + s.breakeven.len() + s.ratio_sweep.len() + 5;
        steps += s.streams_k.len();
    }
    if s.part.has(Part::Stride) {
        steps += s.stride_sweep.len();
    }
    if s.part.has(Part::Barrier) {
        steps += s.separation_n.len();
    }
    let bar = run.progress(steps);

    // The worked example: every order of A1..A4, costed by the crate, and the GPU's answer.
    let worked_dims = paper::WORKED_EXAMPLE_DIMS;
    let worked = dp::solve_serial(&worked_dims)?;
    let worked_orders = paren::enumerate_orders(&worked_dims)?;
    for layout in Layout::ALL {
        let mut p = kernels.prepare(Kernel::one_block(layout), &worked_dims)?;
        kernels.solve_verified(&mut p, &worked)?;
    }

    // Traffic computed from the index functions: sectors per warp load.
    bar.set_message("traffic tables");
    let mut traffic = Vec::new();
    for mapping in [WarpMapping::CellPerThread, WarpMapping::SplitKPerCell] {
        for layout in Layout::ALL {
            for bytes in [8u32, 4] {
                if mapping == WarpMapping::SplitKPerCell && bytes == 4 {
                    continue;
                }
                let t = traffic::dp_traffic(mapping, layout, bytes, s.traffic_n);
                traffic.push((mapping, t));
            }
        }
    }
    bar.inc(1);
    if gpu.counting() {
        count_layouts(gpu, &kernels, &traffic, s.traffic_n, run.seed)?;
    }

    let paper = if s.part.has(Part::Paper) {
        Some(measure_paper(run, &kernels, s, &bar)?)
    } else {
        None
    };
    let stride = if s.part.has(Part::Stride) {
        measure_stride(run, &kernels, s, &bar)?
    } else {
        Vec::new()
    };
    let separation = if s.part.has(Part::Barrier) {
        measure_separation(run, &kernels, s, &bar)?
    } else {
        Vec::new()
    };
    bar.finish_and_clear();

    let (table1, breakeven, layout_vs_n, widths, variants, streams) = match paper {
        Some(p) => (
            p.table1,
            p.breakeven,
            p.layout_vs_n,
            Some(p.widths),
            p.variants,
            p.streams,
        ),
        None => (
            Vec::new(),
            Breakeven { sizes: Vec::new(), end_to_end_reps: 0 },
            Vec::new(),
            None,
            Vec::new(),
            Vec::new(),
        ),
    };
    Ok(Results {
        settings: settings.clone(),
        device: gpu.info.name.clone(),
        worked_orders,
        worked,
        traffic,
        table1,
        breakeven,
        layout_vs_n,
        stride,
        widths,
        variants,
        streams,
        separation,
        l2_bytes: gpu.info.l2_bytes,
    })
}

/// Table 1, the breakeven, the layout against n, the cost widths, section 7.1 and 7.2.
fn measure_paper(
    run: &Run,
    kernels: &CmmKernels,
    s: &Settings,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Paper> {
    let gpu = run.gpu();
    let (seed, reps) = (run.seed, run.reps());
    let warm = |r: usize| Plan::new(1, r, L2::Warm);
    // Table 1: serial CPU and both one-block kernels, beside the paper's V100.
    let mut table1 = Vec::new();
    for &n in &s.table1 {
        bar.set_message(format!("Table 1, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed + n as u64);
        let (serial, cpu) = cpu_serial(&dims, s.table1_cpu_reps)?;
        let kernels = measure_layouts(kernels, &dims, &cpu, warm(reps))?;
        table1.push(Table1Size { serial, kernels });
        bar.inc(1);
    }

    // Breakeven (the paper's Figure 6): end to end, transfers and launch included.
    let end_to_end_reps = reps.max(BREAKEVEN_REPS);
    let mut breakeven = Breakeven { sizes: Vec::new(), end_to_end_reps };
    for &n in &s.breakeven {
        bar.set_message(format!("breakeven, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed ^ n as u64);
        let (serial, cpu) = cpu_serial(&dims, BREAKEVEN_REPS)?;
        let mut end_to_end = Vec::new();
        for layout in Layout::ALL {
            let kernel = Kernel::one_block(layout);
            let mut check = kernels.prepare(kernel, &dims)?;
            kernels.solve_verified(&mut check, &cpu)?;
            let samples: Vec<f64> = (0..end_to_end_reps)
                .map(|_| kernels.end_to_end_ms(kernel, &dims))
                .collect::<anyhow::Result<_>>()?;
            end_to_end.push(
                Stats::from_samples(&samples).ok_or_else(|| {
                    anyhow::anyhow!("no end-to-end samples at n = {n}")
                })?,
            );
        }
        let [row_major, diagonal] = <[Stats; 2]>::try_from(end_to_end)
            .map_err(|_| anyhow::anyhow!("one timing per layout"))?;
        let end_to_end = LayoutPair { n, row_major, diagonal };
        breakeven.sizes.push(BreakevenSize { serial, end_to_end });
        bar.inc(1);
    }

    // Why the layout helps: the speedup against n (the table in and out of L2).
    let mut layout_vs_n = Vec::new();
    for &n in &s.ratio_sweep {
        bar.set_message(format!("layout against n, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed + 7 * n as u64);
        let cpu = dp::solve_parallel(&dims)?;
        let r = if n > 1024 { 2 } else { reps.min(5) };
        layout_vs_n.push(measure_layouts(
            kernels,
            &dims,
            &cpu,
            Plan::new(0, r, L2::Warm),
        )?);
        bar.inc(1);
    }

    // 4-byte costs and the index recomputed for every load.
    let n = s.variants_n;
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
    let u32_kernel =
        |layout| Kernel::OneBlock { layout, cost: CostWidth::U32, indexed: false };
    let u32_small = LayoutPair {
        n,
        row_major: measure_kernel(
            kernels,
            u32_kernel(Layout::RowMajor),
            &small,
            &small_cpu,
            warm(reps),
        )?,
        diagonal: measure_kernel(
            kernels,
            u32_kernel(Layout::DiagonalMajor),
            &small,
            &small_cpu,
            warm(reps),
        )?,
    };
    let u64_small = measure_layouts(kernels, &small, &small_cpu, warm(reps))?;
    let u64 = measure_layouts(kernels, &dims, &cpu, warm(reps))?;
    let indexed = measure_kernel(
        kernels,
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

    // Section 7.1: more threads per diagonal, one launch per diagonal.
    let mut variants = vec![
        (Kernel::one_block(Layout::RowMajor), u64.row_major.clone()),
        (Kernel::one_block(Layout::DiagonalMajor), u64.diagonal.clone()),
    ];
    for layout in Layout::ALL {
        for k in [
            Kernel::CellPerThread { layout, block: 128 },
            Kernel::BlockPerCell { layout, block: 256 },
        ] {
            bar.set_message(k.label());
            variants.push((k, measure_kernel(kernels, k, &dims, &cpu, warm(reps))?));
            bar.inc(1);
        }
    }
    let widths = Widths { n, small_max, u32_small, u64_small, u64, indexed };

    // Section 7.2: k independent chains, one after another vs one stream each.
    let sn = s.streams_n;
    let kmax = *s.streams_k.iter().max().expect("at least one number of chains");
    let chains: Vec<Vec<u32>> = (0..kmax)
        .map(|c| dp::random_dims(sn, DIM_MAX, seed + 1000 + c as u64))
        .collect();
    let cpus: Vec<DpTable> =
        chains.iter().map(|d| dp::solve_parallel(d)).collect::<Result<_, _>>()?;
    let streams: Vec<_> =
        (0..kmax).map(|_| gpu.ctx.new_stream()).collect::<Result<_, _>>()?;
    let kernel = Kernel::one_block(Layout::DiagonalMajor);
    let mut streams_points = Vec::new();
    for &k in &s.streams_k {
        bar.set_message(format!("streams, {k} chains"));
        let mut problems = Vec::new();
        for (d, c) in chains.iter().zip(&cpus).take(k) {
            let mut p = kernels.prepare(kernel, d)?;
            kernels.solve_verified(&mut p, c)?;
            problems.push(p);
        }
        let plan = Plan::new(1, reps.min(5), L2::Warm);
        let one_stream = kernels.time_many(&mut problems, None, plan)?;
        let stream_per_chain =
            kernels.time_many(&mut problems, Some(&streams[..k]), plan)?;
        // The results written under concurrency must still be right.
        for (p, c) in problems.iter().zip(&cpus) {
            if let Some(diff) = c.difference_from(&kernels.read_back(p)?) {
                anyhow::bail!(
                    "kernel {} on its own stream, n={sn}: {diff}",
                    crate::harness::kernels::KernelName::function(kernel.function())
                );
            }
        }
        streams_points.push(StreamsPoint { k, one_stream, stream_per_chain });
        bar.inc(1);
    }
    Ok(Paper {
        table1,
        breakeven,
        layout_vs_n,
        widths,
        variants,
        streams: streams_points,
    })
}

/// Both one-block kernels one n at a time: the lanes' stride is (n + 2) * 8 bytes.
fn measure_stride(
    run: &Run,
    kernels: &CmmKernels,
    s: &Settings,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Vec<LayoutPair>> {
    let seed = run.seed;
    // Row-major's time against n one matrix at a time: lane i of a warp starts its k loop at
    // k = i, so both of its loads sit (n + 2) * 8 bytes from its neighbour's.
    let mut stride = Vec::new();
    for &n in &s.stride_sweep {
        bar.set_message(format!("one n at a time, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, seed + 3 * n as u64);
        let cpu = dp::solve_parallel(&dims)?;
        stride.push(measure_layouts(kernels, &dims, &cpu, Plan::new(1, 3, L2::Warm))?);
        bar.inc(1);
    }
    Ok(stride)
}

/// A launch per diagonal, a CUDA graph and one cooperative launch, with and without cells.
fn measure_separation(
    run: &Run,
    kernels: &CmmKernels,
    s: &Settings,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Vec<Separation>> {
    let plan = Plan::new(1, run.reps(), L2::Warm);
    let mut out = Vec::new();
    for &n in &s.separation_n {
        bar.set_message(format!("grid barrier, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, run.seed + 5 * n as u64);
        let cpu = dp::solve_contiguous(&dims)?;
        for block in SEPARATION_BLOCKS {
            let m = launches::measure(
                run.gpu(),
                kernels,
                Layout::RowMajor,
                block,
                &dims,
                &cpu,
                plan,
            )?;
            out.push(m);
        }
        bar.inc(1);
    }
    Ok(out)
}
