//! What the chapter "CMM beyond the paper" measures: the whole table from n = 128 to 16384 by
//! every program (the paper's one-block kernel, a warp per cell launched per diagonal and as a
//! CUDA graph, the tiled kernels, the CPU on one thread and on all, untiled and blocked as the
//! tiled kernels are), each GPU table checked cell by cell against the CPU's before it is
//! timed; what the launches of the warp-per-cell program cost and why a graph saves less than
//! they cost alone; then chains of real matrices multiplied with cuBLAS in both orders, both
//! products verified before either is timed.

use std::time::Instant;

use crate::cmm::blocked;
use crate::cmm::chain::{self, ChainRow, NamedChain};
use crate::cmm::diagonal::DIM_MAX;
use crate::cmm::dp::{self, DpTable};
use crate::cmm::gpu::{CmmKernels, Kernel};
use crate::cmm::launches::{self, Separation};
use crate::cmm::layout::Layout;
use crate::cmm::tiled::{self, TiledKernels};
use crate::cmm::tiled::{Config, MinPlus, Sweep};
use crate::harness::blas::open_blas;
use crate::harness::sections::{self, Caps, Skip};
use crate::harness::timing::{time_host, Plan};
use crate::harness::{FullQuick, Run, Stats, UsageError, L2};

/// A list of chain lengths, as `--help` prints it: `100,257,700`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lengths(pub &'static [usize]);

impl std::fmt::Display for Lengths {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text: Vec<String> = self.0.iter().map(usize::to_string).collect();
        f.write_str(&text.join(","))
    }
}

/// Chain lengths n of the DP measurement: powers of two from 128 to 16384, and beside the
/// targets at 1024, 4096 and 16384 lengths that are not: 1021 and 4093 (primes; their
/// n + 1 points end in a partial tile) and 1023 and 16383 (2^k - 1: n + 1 points fill
/// whole tiles, where a power of two needs one more tile for its last point).
pub const MATRICES: FullQuick<Lengths> = FullQuick::new(
    Lengths(&[128, 256, 512, 1021, 1023, 1024, 2048, 4093, 4096, 8192, 16383, 16384]),
    Lengths(&[100, 257, 700]),
);
/// The largest n measured: past it the CPU reference every run is checked against needs
/// 20 (n + 1)^2 bytes of host memory and, on 16 cores, many minutes (it grows as n^3).
pub const MAX_MATRICES: usize = 16384;
/// Timed repetitions of each chain multiplication, unless `--reps` says otherwise (the DP's
/// repetitions are the chapter's, and capped by [`TIME_BUDGET_S`]).
pub const CHAIN_REPS: FullQuick<u32> = FullQuick::new(20, 3);
/// The largest n each slow variant is run at (beyond, one solve takes seconds: the whole
/// measurement must fit a few minutes of the GPU machine). The tiled kernels and the
/// multi-threaded CPU run at every n.
pub const ONE_BLOCK_MAX_N: usize = 2048;
pub const WARP_PER_CELL_MAX_N: usize = 4096;
pub const CPU_SERIAL_MAX_N: usize = 2048;
pub const CPU_BLOCKED_MAX_N: usize = 2048;
pub const TILED_EXTRA_MAX_N: usize = 4096;
/// The largest dimension of the DP's random chains: the largest p for which the host proves
/// 32-bit costs exact at n = 16384 (`(n - 1) p^3 < 2^32`), so that the 32-bit min-plus kernel
/// applies at every n measured and every version of the tiled program solves the same
/// chains, checked against one CPU table. Chains with dimensions to 1000, which only the
/// 64-bit path solves, are measured in the batch and the tests.
pub const DP_DIM_MAX: u32 = 64;
/// Chain lengths of the launch-cost experiment (a warp per cell, launched per diagonal).
pub const LAUNCH_N: FullQuick<Lengths> =
    FullQuick::new(Lengths(&[1024, 4096]), Lengths(&[257]));
/// Threads per cell in the warp-per-cell program.
pub const WARP: u32 = 32;
/// Seconds of repetitions each (variant, n) may take after its verified first solve.
pub const TIME_BUDGET_S: f64 = 3.0;

/// Which half of the chapter to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// The whole table against n.
    Dp,
    /// Chains multiplied in both orders.
    Chains,
    /// What the launches of the warp-per-cell program cost.
    Launches,
    /// Many independent chains at once (the paper's section 7.2), and copies overlapped
    /// with the solve.
    Batch,
    /// Single launches of each tiled kernel, marked for `--counters`.
    Counted,
    /// The DP and the batch (every tiled kernel, nothing else: the sanitizer's run).
    DpBatch,
    /// Everything but the counted launches.
    All,
}

/// The sizes of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Chain lengths of the DP measurement.
    pub matrices: Vec<usize>,
    pub part: Part,
    /// Most timed repetitions of each (variant, n) of the DP.
    pub max_reps: usize,
    /// Timed repetitions of each chain multiplication.
    pub chain_reps: usize,
}

/// Refuses a chain length this example does not measure, before a GPU is opened.
pub fn check_matrices(n: usize) -> Result<(), UsageError> {
    if n == 0 || n > MAX_MATRICES {
        return Err(UsageError(format!(
            "--matrices {n}: this example measures chains of 1 to {MAX_MATRICES} matrices \
             (its CPU reference grows as n^3)"
        )));
    }
    tiled::check(&vec![DIM_MAX.max(DP_DIM_MAX); n + 1]).map(|_| ())
}

/// The programs of the time-vs-n figure, in legend order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    OneBlockRowMajor,
    OneBlockDiagonal,
    WarpPerCell,
    WarpPerCellGraph,
    WarpPerCellCooperative,
    /// The chapter's first tiled program: 64-bit keys, 1024-thread sweep, launches.
    Tiled,
    /// 64-bit keys, the lean sweep.
    TiledLean,
    /// 32-bit costs with DPX, the first sweep.
    TiledU32,
    /// 32-bit costs with DPX in the min-plus kernel and in the sweep: the fastest kernels.
    TiledU32Sweep,
    /// The 32-bit kernels, their launches replayed as one CUDA graph.
    TiledU32Graph,
    /// 32-bit costs with DPX, the sweep whose warps retire as their cells finish.
    TiledOrdered,
    /// The same, replayed as one CUDA graph.
    TiledOrderedGraph,
    /// 32-bit costs with DPX, the sweep in quadrants.
    TiledQuadrants,
    /// The same, replayed as one CUDA graph.
    TiledQuadrantsGraph,
    CpuOneThread,
    CpuAllThreads,
    CpuBlocked,
}

impl Variant {
    /// Every version: the GPU programs before tiling, the tiled versions, the CPU.
    pub const ALL: [Variant; 17] = {
        const BEFORE: [Variant; 5] = [
            Variant::OneBlockRowMajor,
            Variant::OneBlockDiagonal,
            Variant::WarpPerCell,
            Variant::WarpPerCellGraph,
            Variant::WarpPerCellCooperative,
        ];
        const CPU: [Variant; 3] =
            [Variant::CpuOneThread, Variant::CpuAllThreads, Variant::CpuBlocked];
        let mut all = [Variant::CpuBlocked; 17];
        assert!(BEFORE.len() + Self::TILED.len() + CPU.len() == all.len());
        let mut i = 0;
        while i < all.len() {
            all[i] = if i < BEFORE.len() {
                BEFORE[i]
            } else if i < BEFORE.len() + Self::TILED.len() {
                Self::TILED[i - BEFORE.len()]
            } else {
                CPU[i - BEFORE.len() - Self::TILED.len()]
            };
            i += 1;
        }
        all
    };

    /// The tiled versions, in the order of the versions table.
    pub const TILED: [Variant; 9] = [
        Variant::Tiled,
        Variant::TiledLean,
        Variant::TiledU32,
        Variant::TiledU32Sweep,
        Variant::TiledU32Graph,
        Variant::TiledOrdered,
        Variant::TiledOrderedGraph,
        Variant::TiledQuadrants,
        Variant::TiledQuadrantsGraph,
    ];

    /// The figure's series name; `threads` is the multi-threaded CPU's.
    pub fn label(self, threads: usize) -> String {
        match self {
            Variant::OneBlockRowMajor => "GPU paper: one block, row-major".into(),
            Variant::OneBlockDiagonal => "GPU one block, diagonal-major".into(),
            Variant::WarpPerCell => "GPU warp per cell, launch per diagonal".into(),
            Variant::WarpPerCellGraph => "GPU warp per cell, CUDA graph".into(),
            Variant::WarpPerCellCooperative => {
                "GPU warp per cell, one cooperative launch, grid barrier".into()
            }
            Variant::Tiled => "GPU tiled 64x64: min-plus + wavefront".into(),
            Variant::TiledLean => "GPU tiled, lean sweep".into(),
            Variant::TiledU32 => "GPU tiled, 32-bit DPX min-plus".into(),
            Variant::TiledU32Sweep => {
                "GPU tiled, 32-bit DPX min-plus + 32-bit sweep".into()
            }
            Variant::TiledU32Graph => {
                "GPU tiled, 32-bit min-plus + 32-bit sweep, CUDA graph".into()
            }
            Variant::TiledOrdered => {
                "GPU tiled, 32-bit min-plus + ordered sweep".into()
            }
            Variant::TiledOrderedGraph => {
                "GPU tiled, 32-bit min-plus + ordered sweep, CUDA graph".into()
            }
            Variant::TiledQuadrants => {
                "GPU tiled, 32-bit min-plus + sweep in quadrants".into()
            }
            Variant::TiledQuadrantsGraph => {
                "GPU tiled, 32-bit min-plus + sweep in quadrants, CUDA graph".into()
            }
            Variant::CpuOneThread => "CPU 1 thread, 32-bit AVX2".into(),
            Variant::CpuAllThreads => {
                format!("CPU {threads} threads, 32-bit AVX2 (rayon)")
            }
            Variant::CpuBlocked => {
                format!("CPU {threads} threads, 64x64 min-plus blocks (rayon)")
            }
        }
    }

    /// The section of the chapter's plan ([`super::SECTIONS`]) a tiled variant belongs to.
    pub fn section(self) -> Option<&'static str> {
        self.config().map(section_of)
    }

    /// The tiled kernels of a tiled variant.
    pub fn config(self) -> Option<Config> {
        let c = |minplus, sweep| Some(Config { minplus, sweep });
        match self {
            Variant::Tiled => c(MinPlus::U64, Sweep::Pushed),
            Variant::TiledLean => c(MinPlus::U64, Sweep::Lean),
            Variant::TiledU32 => c(MinPlus::U32, Sweep::Pushed),
            Variant::TiledU32Sweep | Variant::TiledU32Graph => {
                c(MinPlus::U32, Sweep::U32)
            }
            Variant::TiledOrdered | Variant::TiledOrderedGraph => {
                c(MinPlus::U32, Sweep::Ordered)
            }
            Variant::TiledQuadrants | Variant::TiledQuadrantsGraph => {
                c(MinPlus::U32, Sweep::Quadrants)
            }
            _ => None,
        }
    }

    /// How a tiled variant keeps its steps in order.
    pub fn sync(self) -> &'static str {
        match self {
            Variant::TiledU32Graph
            | Variant::TiledOrderedGraph
            | Variant::TiledQuadrantsGraph
            | Variant::WarpPerCellGraph => "CUDA graph",
            Variant::WarpPerCellCooperative => "grid barrier",
            _ => "launches",
        }
    }

    /// The largest n it runs at.
    pub fn max_n(self) -> usize {
        match self {
            Variant::OneBlockRowMajor | Variant::OneBlockDiagonal => ONE_BLOCK_MAX_N,
            Variant::WarpPerCell
            | Variant::WarpPerCellGraph
            | Variant::WarpPerCellCooperative => WARP_PER_CELL_MAX_N,
            Variant::CpuOneThread => CPU_SERIAL_MAX_N,
            Variant::CpuBlocked => CPU_BLOCKED_MAX_N,
            // Slower than the first sweep at every n up to 4096, and not needed beyond to
            // tell the story: the GPU machine's minutes go to the CPU reference there.
            Variant::TiledLean | Variant::TiledU32Graph => TILED_EXTRA_MAX_N,
            _ => usize::MAX,
        }
    }
}

/// The section of the chapter's plan that runs the tiled program configured as `config`.
pub fn section_of(config: Config) -> &'static str {
    match config.minplus {
        MinPlus::U64 => super::TILED_U64,
        MinPlus::U32 => super::TILED_U32,
    }
}

/// The sections of the chapter's plan that `part` measures.
pub fn sections_of(part: Part) -> &'static [&'static str] {
    use super::{BATCH, TILED_U32, TILED_U64};
    match part {
        Part::Dp | Part::Counted => &[TILED_U64, TILED_U32],
        Part::Batch => &[BATCH],
        Part::DpBatch | Part::All => &[TILED_U64, TILED_U32, BATCH],
        Part::Chains | Part::Launches => &[],
    }
}

/// Every program measured at one n, the multi-threaded CPU (the reference) first.
#[derive(Debug, Clone)]
pub struct SizeResult {
    pub n: usize,
    pub measured: Vec<(Variant, Stats)>,
}

impl SizeResult {
    /// The median time of `v`, if it ran at this n.
    pub fn median_ms(&self, v: Variant) -> Option<f64> {
        self.measured.iter().find(|(m, _)| *m == v).map(|(_, s)| s.median_ms)
    }
}

/// The DP half.
#[derive(Debug, Clone)]
pub struct DpResults {
    /// Threads of the multi-threaded CPU program.
    pub threads: usize,
    pub sizes: Vec<SizeResult>,
}

/// The chains half: each chain and its measurement.
#[derive(Debug, Clone)]
pub struct ChainResults {
    pub chains: Vec<NamedChain>,
    pub rows: Vec<ChainRow>,
}

/// Everything the chapter's figures and tables are drawn from; a part not measured is `None`.
pub struct Results {
    pub dp: Option<DpResults>,
    pub batch: Option<super::batch::BatchResults>,
    pub chains: Option<ChainResults>,
    /// Per n of [`LAUNCH_N`]: the warp-per-cell program's launches, graph and grid barrier.
    pub launches: Option<Vec<Separation>>,
    /// The sections of the measured parts this GPU could not run, each said once.
    pub skipped: Vec<Skip>,
}

/// Measures the parts `settings.part` names, leaving out (and saying, once each) the
/// sections of them this GPU cannot run.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let part = settings.part;
    let plan = sections::plan(super::SECTIONS, &Caps::of(&run.gpu().info, 0));
    let skipped: Vec<Skip> = plan
        .skipped
        .iter()
        .filter(|s| sections_of(part).contains(&s.section))
        .cloned()
        .collect();
    for skip in &skipped {
        println!("{skip}");
    }
    let dp = match part {
        Part::Dp | Part::DpBatch | Part::All => Some(measure_dp(run, settings, &plan)?),
        _ => None,
    };
    let launches = match part {
        Part::Launches | Part::All => Some(measure_launches(run)?),
        _ => None,
    };
    let chains = match part {
        Part::Chains | Part::All => Some(measure_chains(run, settings)?),
        _ => None,
    };
    let batch = match part {
        Part::Batch | Part::DpBatch | Part::All if plan.runs(super::BATCH) => {
            Some(super::batch::measure(run)?)
        }
        _ => None,
    };
    if part == Part::Counted {
        super::counted::run_cases(run, &plan)?;
    }
    Ok(Results { dp, batch, chains, launches, skipped })
}

/// The warp-per-cell program kept in order three ways (a launch per diagonal, a graph, one
/// cooperative launch), with its cells and without, and the host's enqueue time.
fn measure_launches(run: &Run) -> anyhow::Result<Vec<Separation>> {
    let gpu = run.gpu();
    let cmm = CmmKernels::load(gpu)?;
    let plan = Plan::new(1, run.reps(), L2::Warm);
    let sizes = run.pick(None, LAUNCH_N).0;
    let bar = run.progress(sizes.len());
    let mut out = Vec::new();
    for &n in sizes {
        bar.set_message(format!("launches, n = {n}"));
        let dims = dp::random_dims(n, DIM_MAX, run.seed + n as u64);
        let cpu = dp::solve_contiguous(&dims)?;
        out.push(launches::measure(
            gpu,
            &cmm,
            Layout::RowMajor,
            WARP,
            &dims,
            &cpu,
            plan,
        )?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(out)
}

/// Repetitions that fit the time budget, given one solve took `first_ms`.
fn reps_for(first_ms: f64, max_reps: usize) -> usize {
    ((TIME_BUDGET_S * 1e3 / first_ms.max(1e-3)) as usize).clamp(1, max_reps)
}

/// Times `solve` on the host clock (CPU variants); the first run also returns the table and
/// counts as a sample. How long it took decides how many more follow, which is why this is not
/// [`time_host`] (whose count is fixed beforehand).
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
    let stats = Stats::from_samples(&samples).expect("at least one sample");
    Ok((stats, table))
}

/// Verifies one solve of `problem` against the CPU (`verify`: poison, solve, compare every
/// cell, through the kernels' `verify_then_time` with no plan), on the host clock; then times
/// as many more solves as the budget allows, the verified one having been the warm-up.
fn verify_then_time_budgeted<P>(
    problem: &mut P,
    max_reps: usize,
    mut verify: impl FnMut(&mut P) -> anyhow::Result<DpTable>,
    time: impl FnOnce(&mut P, Plan) -> anyhow::Result<Stats>,
) -> anyhow::Result<Stats> {
    let first = time_host(0, 1, || verify(problem))?;
    time(problem, Plan::new(0, reps_for(first.median_ms, max_reps), L2::Warm))
}

fn measure_dp(
    run: &Run,
    settings: &Settings,
    plan: &sections::Plan,
) -> anyhow::Result<DpResults> {
    let gpu = run.gpu();
    let cmm = CmmKernels::load(gpu)?;
    let tiled_kernels = TiledKernels::load(gpu)?;
    let threads = rayon::current_num_threads();
    let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
    let max_reps = settings.max_reps;
    let bar = run.progress(settings.matrices.len() * Variant::ALL.len());
    let mut sizes = Vec::new();
    for &n in &settings.matrices {
        let dims = dp::random_dims(n, DP_DIM_MAX, run.seed + n as u64);
        // The reference: the multi-threaded CPU program, timed too. Every GPU table below is
        // compared with it cell by cell (costs and splits) before anything is timed.
        bar.set_message(format!("n = {n}: CPU, {threads} threads"));
        let (cpu_all, cpu) =
            time_cpu(max_reps, || Ok(dp::solve_contiguous_u32(&dims)?))?;
        let mut measured = vec![(Variant::CpuAllThreads, cpu_all)];
        for variant in Variant::ALL {
            bar.inc(1);
            if variant == Variant::CpuAllThreads || n > variant.max_n() {
                continue;
            }
            if variant.section().is_some_and(|s| !plan.runs(s)) {
                continue;
            }
            bar.set_message(format!("n = {n}: {}", variant.label(threads)));
            let one_block = |layout| -> anyhow::Result<Stats> {
                let mut p = cmm.prepare(Kernel::one_block(layout), &dims)?;
                verify_then_time_budgeted(
                    &mut p,
                    max_reps,
                    |p| cmm.solve_verified(p, &cpu),
                    |p, plan| cmm.time(p, plan),
                )
            };
            let warp_per_cell =
                Kernel::BlockPerCell { layout: Layout::RowMajor, block: WARP };
            let stats = match variant {
                Variant::CpuOneThread => {
                    let (stats, table) = one_thread.install(|| {
                        time_cpu(max_reps, || Ok(dp::solve_contiguous_u32(&dims)?))
                    })?;
                    anyhow::ensure!(
                        table == cpu,
                        "the one-thread CPU table differs from the multi-threaded one at \
                         n = {n}"
                    );
                    stats
                }
                Variant::CpuBlocked => {
                    let (stats, table) =
                        time_cpu(max_reps, || Ok(blocked::solve_blocked(&dims)?))?;
                    anyhow::ensure!(
                        table == cpu,
                        "the blocked CPU table differs from the untiled one at n = {n}"
                    );
                    stats
                }
                Variant::OneBlockRowMajor => one_block(Layout::RowMajor)?,
                Variant::OneBlockDiagonal => one_block(Layout::DiagonalMajor)?,
                Variant::WarpPerCell => {
                    let mut p = cmm.prepare(warp_per_cell, &dims)?;
                    verify_then_time_budgeted(
                        &mut p,
                        max_reps,
                        |p| cmm.solve_verified(p, &cpu),
                        |p, plan| cmm.time(p, plan),
                    )?
                }
                Variant::WarpPerCellGraph => {
                    let mut p = cmm.prepare(warp_per_cell, &dims)?;
                    let graph = cmm.capture(&mut p)?;
                    verify_then_time_budgeted(
                        &mut p,
                        max_reps,
                        |p| cmm.solve_verified_graph(p, &graph, &cpu),
                        |_, plan| gpu.time(plan, |_| Ok(graph.launch()?)),
                    )?
                }
                Variant::WarpPerCellCooperative => {
                    let kernel =
                        Kernel::Persistent { layout: Layout::RowMajor, block: WARP };
                    let mut p = cmm.prepare(kernel, &dims)?;
                    verify_then_time_budgeted(
                        &mut p,
                        max_reps,
                        |p| cmm.solve_verified(p, &cpu),
                        |p, plan| cmm.time(p, plan),
                    )?
                }
                Variant::TiledU32Graph
                | Variant::TiledOrderedGraph
                | Variant::TiledQuadrantsGraph => {
                    let config = variant.config().expect("a tiled variant");
                    let chains = [dims.clone()];
                    let mut p = tiled_kernels.prepare_batch(&chains, config)?;
                    let graph = tiled_kernels.capture(&mut p)?;
                    verify_then_time_budgeted(
                        &mut p,
                        max_reps,
                        |p| tiled_kernels.solve_verified_graph(p, &graph, &cpu),
                        |_, plan| gpu.time(plan, |_| Ok(graph.launch()?)),
                    )?
                }
                Variant::Tiled
                | Variant::TiledLean
                | Variant::TiledU32
                | Variant::TiledU32Sweep
                | Variant::TiledOrdered
                | Variant::TiledQuadrants => {
                    let config = variant.config().expect("a tiled variant");
                    let chains = [dims.clone()];
                    let mut p = tiled_kernels.prepare_batch(&chains, config)?;
                    verify_then_time_budgeted(
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
        sizes.push(SizeResult { n, measured });
    }
    bar.finish_and_clear();
    Ok(DpResults { threads, sizes })
}

fn measure_chains(run: &Run, settings: &Settings) -> anyhow::Result<ChainResults> {
    let gpu = run.gpu();
    let chains = if run.quick {
        chain::realistic_chains_quick(run.seed)
    } else {
        chain::realistic_chains(run.seed)
    };
    let blas = open_blas(gpu)?;
    let plan = Plan::new(2, settings.chain_reps, L2::Warm);
    let bar = run.progress(chains.len());
    let mut rows = Vec::new();
    for (c, named) in chains.iter().enumerate() {
        bar.set_message(named.name.clone());
        // Both orders multiply the same fresh inputs; each product is checked against exact
        // CPU rows, and the two against each other, before it is timed.
        let seed = run.seed.wrapping_add(c as u64);
        rows.push(chain::measure_chain(gpu, &blas, named, plan, seed)?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(ChainResults { chains, rows })
}
