//! What it costs to keep the diagonals of the DP in order on a GPU: one launch per diagonal,
//! the same launches replayed as a CUDA graph, or one cooperative launch whose blocks meet at
//! a grid barrier between diagonals. Each is timed with its cells (verified against the CPU
//! first) and with no work at all, which prices a launch, a graph node and a grid barrier on
//! their own; the host's time to enqueue the launches says whether it keeps ahead of the GPU.

use crate::cmm::dp::DpTable;
use crate::cmm::gpu::{CmmKernels, Kernel, Problem};
use crate::cmm::layout::Layout;
use crate::harness::timing::Plan;
use crate::harness::{Gpu, Stats};

/// One chain and one block size, the diagonals kept in order three ways.
#[derive(Debug, Clone)]
pub struct Separation {
    pub n: usize,
    pub layout: Layout,
    /// Threads per block (a block computes one cell at a time).
    pub block: u32,
    /// Blocks of the cooperative grid, all resident at once.
    pub grid: u32,
    /// The verified solves: one launch per diagonal, the launches as a graph, and one
    /// cooperative launch with a grid barrier between diagonals.
    pub launches: Stats,
    pub graph: Stats,
    pub cooperative: Stats,
    /// The same three with no cell computed: what the separation alone costs.
    pub empty_launches: Stats,
    pub empty_graph: Stats,
    pub barriers_only: Stats,
    /// Host milliseconds to enqueue the `n - 1` launches, with the cells and without.
    pub enqueue: Stats,
    pub enqueue_empty: Stats,
}

impl Separation {
    /// The number of diagonals a solve separates (at least 1, so that ratios stay finite).
    pub fn diagonals(&self) -> usize {
        self.n.saturating_sub(1).max(1)
    }

    /// A median time spread over the diagonals, in microseconds per diagonal.
    pub fn per_diagonal_us(&self, s: &Stats) -> f64 {
        s.median_ms * 1e3 / self.diagonals() as f64
    }
}

/// `reps` host timings of enqueueing one solve of `p`, each from an idle GPU.
fn enqueue_stats(
    kernels: &CmmKernels,
    p: &mut Problem,
    reps: usize,
) -> anyhow::Result<Stats> {
    let samples: Vec<f64> = (0..reps.max(1))
        .map(|_| kernels.enqueue_ms(p))
        .collect::<anyhow::Result<_>>()?;
    Stats::from_samples(&samples).ok_or_else(|| anyhow::anyhow!("no enqueue timings"))
}

/// Measures the three separations for the block-per-cell kernel of `block` threads in
/// `layout` on `dims`: each solve's table is checked against `cpu` before it is timed under
/// `plan`; the empty variants compute nothing and are only timed.
pub fn measure(
    gpu: &Gpu,
    kernels: &CmmKernels,
    layout: Layout,
    block: u32,
    dims: &[u32],
    cpu: &DpTable,
    plan: Plan,
) -> anyhow::Result<Separation> {
    let n = dims.len() - 1;
    let mut p = kernels.prepare(Kernel::BlockPerCell { layout, block }, dims)?;
    let launches = kernels.verify_then_time(&mut p, cpu, &[plan])?.time().clone();
    let enqueue = enqueue_stats(kernels, &mut p, plan.reps)?;
    let graph = kernels.capture(&mut p)?;
    let graph_time =
        kernels.verify_then_time_graph(&mut p, &graph, cpu, &[plan])?.time().clone();
    drop(p);

    let mut c = kernels.prepare(Kernel::Persistent { layout, block }, dims)?;
    let cooperative = kernels.verify_then_time(&mut c, cpu, &[plan])?.time().clone();
    drop(c);

    let mut e = kernels.prepare(Kernel::LaunchOnly { block }, dims)?;
    let empty_launches = kernels.time(&mut e, plan)?;
    let enqueue_empty = enqueue_stats(kernels, &mut e, plan.reps)?;
    let empty = kernels.capture(&mut e)?;
    let empty_graph = gpu.time(plan, |_| Ok(empty.launch()?))?;
    let mut b = kernels.prepare(Kernel::BarriersOnly { block }, dims)?;
    let barriers_only = kernels.time(&mut b, plan)?;

    Ok(Separation {
        n,
        layout,
        block,
        grid: kernels.cooperative_grid(block, n)?,
        launches,
        graph: graph_time,
        cooperative,
        empty_launches,
        empty_graph,
        barriers_only,
        enqueue,
        enqueue_empty,
    })
}

/// One row of a chapter's table: a separation's times and what one diagonal costs.
#[derive(serde::Serialize)]
pub struct SeparationRow {
    pub n: usize,
    pub block: u32,
    pub cooperative_blocks: u32,
    pub launches_ms: String,
    pub graph_ms: String,
    pub cooperative_ms: String,
    pub fastest: &'static str,
    pub empty_launch_us: String,
    pub empty_node_us: String,
    pub barrier_us: String,
    pub enqueue_us: String,
    pub enqueue_empty_us: String,
}

impl SeparationRow {
    pub fn new(s: &Separation, fmt_ms: impl Fn(f64) -> String) -> Self {
        let us = |x: &Stats| format!("{:.2}", s.per_diagonal_us(x));
        let named = [
            ("launch per diagonal", s.launches.median_ms),
            ("CUDA graph", s.graph.median_ms),
            ("cooperative", s.cooperative.median_ms),
        ];
        let fastest = named
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(name, _)| *name)
            .expect("three ways");
        Self {
            n: s.n,
            block: s.block,
            cooperative_blocks: s.grid,
            launches_ms: fmt_ms(s.launches.median_ms),
            graph_ms: fmt_ms(s.graph.median_ms),
            cooperative_ms: fmt_ms(s.cooperative.median_ms),
            fastest,
            empty_launch_us: us(&s.empty_launches),
            empty_node_us: us(&s.empty_graph),
            barrier_us: us(&s.barriers_only),
            enqueue_us: us(&s.enqueue),
            enqueue_empty_us: us(&s.enqueue_empty),
        }
    }
}

/// How a table of [`SeparationRow`]s is shown (see `harness::table`): the columns that fit the
/// page; the host's enqueue time for the empty kernel stays in the CSV.
pub const SEPARATION_SHOWN: [(&str, &str); 2] = [
    (
        "columns",
        "n | block | cooperative_blocks | \
         {launches_ms} / {graph_ms} / {cooperative_ms} = whole DP (ms): launches / graph / \
         cooperative | fastest | \
         {empty_launch_us} / {empty_node_us} / {barrier_us} = no work (µs per diagonal): \
         launch / node / barrier | enqueue_us",
    ),
    (
        "headers",
        "block = B | cooperative_blocks = cooperative grid (blocks) | \
         enqueue_us = host enqueue (µs per launch)",
    ),
];
