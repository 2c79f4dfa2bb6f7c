//! Every figure and table of the chapter "CMM beyond the paper", drawn from [`Results`], and
//! the console summary.

use crate::cmm::chain;
use crate::cmm::diagonal::DIM_MAX;
use crate::cmm::tiled;
use crate::harness::format::ms;
use crate::harness::plot::{Point, Spec};
use crate::harness::Run;

use crate::cmm::launches::{Separation, SeparationRow, SEPARATION_SHOWN};
use crate::harness::format::ratio;

use super::measure::{ChainResults, DpResults, Results, Variant};

/// The targets for the whole DP on the H100, in ms.
pub const TARGETS_MS: [(usize, f64); 4] =
    [(1024, 1.0), (4096, 20.0), (8192, 120.0), (16384, 1000.0)];
/// Up to this many characters, the chain table shows the optimal order itself.
const SHOWN_ORDER_MAX_CHARS: usize = 60;

/// Milliseconds as the chapter's tables write them: three decimals below 1 ms.
fn fmt_ms(v: f64) -> String {
    ms(v, 3)
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
    vs_cpu_blocked: String,
    candidates_per_ns: String,
    tile_diagonals: usize,
    us_per_tile_diagonal: String,
    dependent_steps: usize,
    ns_per_step: String,
}

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

/// Writes the figures and tables of the halves measured and prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    if let Some(dp) = &r.dp {
        report_dp(run, dp)?;
    }
    if let Some(launches) = &r.launches {
        report_launches(run, launches)?;
    }
    if let Some(chains) = &r.chains {
        report_chains(run, chains)?;
    }
    Ok(())
}

/// How `cmm-beyond-targets` is shown (see `harness::table`).
const TARGETS_SHOWN: [(&str, &str); 2] = [
    (
        "columns",
        "n | target_ms | tiled_ms | met | vs_paper_kernel | vs_cpu_1_thread | \
         vs_cpu_all_threads | vs_cpu_blocked | candidates_per_ns | us_per_tile_diagonal | \
         {dependent_steps} × {ns_per_step} = dependent steps × ns per step",
    ),
    (
        "headers",
        "target_ms = target (ms) | tiled_ms = tiled (ms) | \
         vs_paper_kernel = vs the paper's kernel | \
         vs_cpu_1_thread = vs CPU, 1 thread | \
         vs_cpu_all_threads = vs CPU, all threads | \
         vs_cpu_blocked = vs CPU, all threads, blocked | \
         candidates_per_ns = candidates per ns | tile_diagonals = block diagonals | \
         us_per_tile_diagonal = µs per block diagonal | \
         dependent_steps = dependent steps | ns_per_step = ns per step",
    ),
];

fn report_dp(run: &Run, r: &DpResults) -> anyhow::Result<()> {
    let threads = r.threads;
    let mut points = Vec::new();
    let mut targets = Vec::new();
    for size in &r.sizes {
        let n = size.n;
        for (variant, s) in &size.measured {
            points.push(Point::ms(&variant.label(threads), n, s));
        }
        let tiled_ms =
            size.median_ms(Variant::Tiled).expect("the tiled kernels run at every n");
        let vs = |v: Variant| {
            size.median_ms(v)
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
            vs_cpu_blocked: vs(Variant::CpuBlocked),
            candidates_per_ns: format!("{:.2}", candidates / (tiled_ms * 1e6)),
            // The sweeps of successive block diagonals cannot overlap: at small n this is the
            // time.
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
        let others: Vec<String> = size
            .measured
            .iter()
            .filter(|(v, _)| *v != Variant::Tiled)
            .map(|(v, s)| format!("{} {} ms", v.label(threads), fmt_ms(s.median_ms)))
            .collect();
        println!(
            "n = {n:>5}: tiled {} ms (every cell equals the CPU's); {}",
            fmt_ms(tiled_ms),
            others.join(", ")
        );
    }
    let spec = Spec::line(
        "Whole CMM table vs chain length (median, min-max bars; L2 warm)",
        "n matrices",
        "ms",
    )
    .log_x()
    .log_y();
    let dims = format!("random 1..={DIM_MAX}, seed {} + n", run.seed);
    run.figure("cmm-beyond-time-vs-n", &[("dims", &dims)], &spec, &points)?;
    let title =
        "The tiled kernels: whole table, median ms; ratios are the other program's \
                 median over the tiled kernels' in the same run";
    run.table("cmm-beyond-targets", title, &TARGETS_SHOWN, &targets)?;
    report_cpu(run, r)
}

#[derive(serde::Serialize)]
struct CpuRow {
    n: usize,
    one_thread_ms: String,
    untiled_ms: String,
    blocked_ms: String,
    blocked_speedup: String,
    gpu_tiled_ms: String,
    gpu_vs_blocked: String,
}

/// How `cmm-beyond-cpu` is shown (see `harness::table`).
const CPU_HEADERS: (&str, &str) = (
    "headers",
    "one_thread_ms = 1 thread, untiled (ms) | untiled_ms = all threads, untiled (ms) | \
     blocked_ms = all threads, 64x64 blocks (ms) | \
     blocked_speedup = untiled over blocked | gpu_tiled_ms = GPU tiled (ms) | \
     gpu_vs_blocked = blocked CPU over GPU tiled",
);

/// The CPU programs side by side: untiled on one thread and on all, and blocked as the GPU's
/// tiled kernels are.
fn report_cpu(run: &Run, r: &DpResults) -> anyhow::Result<()> {
    let dash = || "–".to_string();
    let rows: Vec<CpuRow> = r
        .sizes
        .iter()
        .map(|size| {
            let get = |v| size.median_ms(v);
            let pair = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => ratio(a, b),
                _ => dash(),
            };
            CpuRow {
                n: size.n,
                one_thread_ms: get(Variant::CpuOneThread)
                    .map(fmt_ms)
                    .unwrap_or_else(dash),
                untiled_ms: get(Variant::CpuAllThreads)
                    .map(fmt_ms)
                    .unwrap_or_else(dash),
                blocked_ms: get(Variant::CpuBlocked).map(fmt_ms).unwrap_or_else(dash),
                blocked_speedup: pair(
                    get(Variant::CpuAllThreads),
                    get(Variant::CpuBlocked),
                ),
                gpu_tiled_ms: get(Variant::Tiled).map(fmt_ms).unwrap_or_else(dash),
                gpu_vs_blocked: pair(get(Variant::CpuBlocked), get(Variant::Tiled)),
            }
        })
        .collect();
    let threads = format!("{} (rayon), on the GPU machine's host", r.threads);
    let title =
        "The CPU programs against the GPU's tiled kernels: whole table, median ms";
    run.table(
        "cmm-beyond-cpu",
        title,
        &[("cpu_threads", threads.as_str()), CPU_HEADERS],
        &rows,
    )
}

/// The warp-per-cell program's launches, its graph and one cooperative launch, with its cells
/// and without: why a graph saves less than the launches cost alone.
fn report_launches(run: &Run, r: &[Separation]) -> anyhow::Result<()> {
    let rows: Vec<SeparationRow> =
        r.iter().map(|s| SeparationRow::new(s, fmt_ms)).collect();
    for s in r {
        println!(
            "n = {}: launch per diagonal {} ms (host enqueue {} ms), graph {} ms, \
             cooperative {} ms; empty: launches {} ms, graph {} ms, barriers {} ms",
            s.n,
            fmt_ms(s.launches.median_ms),
            fmt_ms(s.enqueue.median_ms),
            fmt_ms(s.graph.median_ms),
            fmt_ms(s.cooperative.median_ms),
            fmt_ms(s.empty_launches.median_ms),
            fmt_ms(s.empty_graph.median_ms),
            fmt_ms(s.barriers_only.median_ms)
        );
    }
    let title = "A warp per cell, row-major: a launch per diagonal, the same launches as a \
                 CUDA graph, one cooperative launch; whole DP (ms, median) and per diagonal \
                 with no work (µs)";
    run.table(
        "cmm-beyond-launches",
        title,
        &[
            &[("l2", "warm (the table stays on the GPU between repetitions)")][..],
            &SEPARATION_SHOWN,
        ]
        .concat(),
        &rows,
    )
}

/// How `cmm-beyond-chain-table` is shown (see `harness::table`).
const CHAINS_SHOWN: [(&str, &str); 2] = [
    (
        "columns",
        "chain | matrices | left_to_right_gflop | optimal_gflop | predicted_ratio | \
         left_to_right_ms | optimal_ms | measured_ratio",
    ),
    (
        "headers",
        "left_to_right_gflop = left to right (GFLOP) | \
         optimal_gflop = optimal order (GFLOP) | predicted_ratio = predicted ratio | \
         left_to_right_ms = left to right (ms) | optimal_ms = optimal order (ms) | \
         measured_ratio = measured ratio | optimal_order = optimal order",
    ),
];

fn report_chains(run: &Run, r: &ChainResults) -> anyhow::Result<()> {
    let table: Vec<ChainTableRow> = r
        .rows
        .iter()
        .zip(&r.chains)
        .map(|(row, named)| {
            let order = chain::predict(&named.dims)
                .map(|p| p.optimal.to_string())
                .unwrap_or_default();
            ChainTableRow {
                chain: row.chain.clone(),
                matrices: row.matrices,
                left_to_right_gflop: format!("{:.1}", row.left_to_right_gflop),
                optimal_gflop: format!("{:.1}", row.optimal_gflop),
                predicted_ratio: format!("{:.2}", row.predicted_ratio),
                left_to_right_ms: fmt_ms(row.left_to_right_ms_median),
                optimal_ms: fmt_ms(row.optimal_ms_median),
                measured_ratio: format!("{:.2}", row.measured_ratio),
                optimal_order: if order.len() <= SHOWN_ORDER_MAX_CHARS {
                    order
                } else {
                    format!("{} characters", order.len())
                },
            }
        })
        .collect();
    for t in &table {
        println!(
            "{}: predicted {}x, measured {}x ({} ms -> {} ms)",
            t.chain,
            t.predicted_ratio,
            t.measured_ratio,
            t.left_to_right_ms,
            t.optimal_ms
        );
    }
    let blas = (
        "blas",
        "cuBLAS SGEMM, default math mode (no TF32), row-major via C^T = B^T A^T",
    );
    run.figure(
        "cmm-beyond-chains",
        &[blas],
        &chain::figure_spec(&r.rows),
        &chain::figure_points(&r.rows),
    )?;
    let title = "Chains multiplied with cuBLAS SGEMM in both orders (median of the \
                 repetitions, L2 warm); both products verified";
    run.table(
        "cmm-beyond-chain-table",
        title,
        &[&[blas][..], &CHAINS_SHOWN].concat(),
        &table,
    )
}
