//! Every figure and table of the chapter "CMM beyond the paper", drawn from [`Results`], and
//! the console summary.

use crate::cmm::chain;
use crate::harness::format::ms;
use crate::harness::plot::{Point, Spec};
use crate::harness::skipped::Skipped;
use crate::harness::Run;

use crate::cmm::launches::{Separation, SeparationRow, SEPARATION_SHOWN};
use crate::harness::format::ratio;

use super::batch::{BatchResults, BATCH_TARGET_MS};
use super::instructions::{self, Counts};
use super::measure::{ChainResults, DpResults, Results, Variant, DP_DIM_MAX};

/// The goals for the whole DP on the H100, in ms (the chapter explains where each comes from).
pub const TARGETS_MS: [(usize, f64); 4] =
    [(1024, 1.0), (4096, 20.0), (8192, 120.0), (16384, 250.0)];
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
    first_tiled_ms: String,
    best_ms: String,
    best: String,
    met: &'static str,
    vs_first_tiled: String,
    vs_paper_kernel: String,
    vs_cpu_all_threads: String,
    candidates_per_ns: String,
    dependent_steps: usize,
    ns_per_step: String,
}

#[derive(serde::Serialize)]
struct VersionRow {
    n: usize,
    version: String,
    sync: &'static str,
    ms: String,
    candidates_per_ns: String,
    vs_first: String,
    minplus_instructions_per_candidate: String,
    sweep_step_instructions: String,
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
    if let Some(batch) = &r.batch {
        report_batch(run, batch)?;
    }
    // Written by every run that measures a section of the plan, so that a folder's table
    // is its last such run's.
    if r.dp.is_some() || r.batch.is_some() || !r.skipped.is_empty() {
        let rows: Vec<Skipped> = r.skipped.iter().map(Skipped::section).collect();
        crate::harness::skipped::record(run, super::SKIPPED_STEM, &rows)?;
    }
    Ok(())
}

/// How `cmm-beyond-targets` is shown (see `harness::table`).
const TARGETS_SHOWN: [(&str, &str); 2] = [
    (
        "columns",
        "n | target_ms | first_tiled_ms | best_ms | met | vs_first_tiled | \
         vs_paper_kernel | vs_cpu_all_threads | candidates_per_ns | \
         {dependent_steps} × {ns_per_step} = dependent steps × ns per step",
    ),
    (
        "headers",
        "target_ms = target (ms) | first_tiled_ms = first tiled (ms) | \
         best_ms = fastest tiled (ms) | best = fastest tiled version | \
         vs_first_tiled = first tiled over fastest | \
         vs_paper_kernel = paper's kernel over fastest | \
         vs_cpu_all_threads = CPU, all threads, over fastest | \
         candidates_per_ns = candidates per ns | dependent_steps = dependent steps | \
         ns_per_step = ns per step",
    ),
];

/// The tiled variant with the smallest median at this n; `None` on a GPU that runs none of
/// them (the chapter said which sections it skipped).
fn fastest_tiled(size: &super::measure::SizeResult) -> Option<(Variant, f64)> {
    Variant::TILED
        .iter()
        .filter_map(|&v| size.median_ms(v).map(|ms| (v, ms)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The console line of one n: every program's median.
fn print_size(size: &super::measure::SizeResult, threads: usize) {
    let all: Vec<String> = size
        .measured
        .iter()
        .map(|(v, s)| format!("{} {} ms", v.label(threads), fmt_ms(s.median_ms)))
        .collect();
    println!(
        "n = {:>5} (every GPU table equals the CPU's): {}",
        size.n,
        all.join(", ")
    );
}

/// The programs Figure 6.1 draws, each under the name of its rung of the chapter: the CPU
/// reference, the paper's kernel, and the rungs that move the time most. The other versions
/// stay in the record; Tables 6.3 and 6.6 show them.
const TIME_VS_N_SHOWN: [(Variant, &str); 6] = [
    (Variant::CpuAllThreads, "CPU, all threads"),
    (Variant::OneBlockRowMajor, "the paper's kernel (one block)"),
    (Variant::WarpPerCell, "Step 1: a launch per diagonal"),
    (Variant::WarpPerCellGraph, "Step 2: the launches as a CUDA graph"),
    (Variant::Tiled, "Step 3: the first tiled program"),
    (Variant::TiledQuadrantsGraph, "Step 6: the sweep in quadrants, graph"),
];

/// How Figure 6.1 is drawn; `threads` names the multi-threaded CPU's series.
fn time_vs_n_spec(threads: usize) -> Spec {
    TIME_VS_N_SHOWN.iter().fold(
        Spec::line(
            "Whole CMM table vs chain length (median, min-max bars; L2 warm)",
            "n matrices",
            "ms",
        )
        .log_x()
        .log_y(),
        |spec, (variant, name)| {
            let series = variant.label(threads);
            spec.show(&series).series_label(&series, name)
        },
    )
}

fn report_dp(run: &Run, r: &DpResults) -> anyhow::Result<()> {
    let threads = r.threads;
    let mut points = Vec::new();
    let mut targets = Vec::new();
    let mut versions = Vec::new();
    let sm = run.gpu().info.arch().replace("compute_", "sm_");
    let arch = run.gpu().info.arch();
    let capability = crate::harness::sections::Caps::of(&run.gpu().info, 0).capability;
    let ptx = crate::cmm::tiled::TILED_FILES
        .iter()
        .filter(|f| crate::harness::kernels::check_capability(f, capability).is_ok())
        .map(|f| Ok(crate::harness::kernels::compile(f, &arch)?.ptx))
        .collect::<anyhow::Result<Vec<String>>>()?;
    let counts: Option<Counts> = instructions::count(&ptx, &sm)?;
    for size in &r.sizes {
        let n = size.n;
        for (variant, s) in &size.measured {
            points.push(Point::ms(&variant.label(threads), n, s));
        }
        // The first tiled version runs wherever any does (its needs are the least).
        let (Some(first_ms), Some((best, best_ms))) =
            (size.median_ms(Variant::Tiled), fastest_tiled(size))
        else {
            print_size(size, threads);
            continue;
        };
        let vs = |v: Variant| {
            size.median_ms(v)
                .map(|ms| format!("{:.1}x", ms / best_ms))
                .unwrap_or_else(|| "–".into())
        };
        let target = TARGETS_MS.iter().find(|(t, _)| *t == n).map(|(_, ms)| *ms);
        let best_steps = best.config().expect("a tiled variant").dependent_steps(n);
        let candidates = ((n as f64).powi(3) - n as f64) / 6.0; // sum over d of (n - d) d
        targets.push(TargetRow {
            n,
            target_ms: target.map(fmt_ms).unwrap_or_else(|| "–".into()),
            first_tiled_ms: fmt_ms(first_ms),
            best_ms: fmt_ms(best_ms),
            best: best.label(threads),
            met: match target {
                Some(t) if best_ms <= t => "yes",
                Some(_) => "no",
                None => "–",
            },
            vs_first_tiled: format!("{:.2}x", first_ms / best_ms),
            vs_paper_kernel: vs(Variant::OneBlockRowMajor),
            vs_cpu_all_threads: vs(Variant::CpuAllThreads),
            candidates_per_ns: format!("{:.2}", candidates / (best_ms * 1e6)),
            dependent_steps: best_steps,
            ns_per_step: format!("{:.0}", best_ms * 1e6 / best_steps as f64),
        });
        for v in Variant::TILED {
            let Some(ms) = size.median_ms(v) else { continue };
            let config = v.config().expect("tiled");
            let (minplus, sweep) = config.kernels();
            let sass = |f: &dyn Fn(&Counts) -> Option<String>| {
                counts.as_ref().and_then(f).unwrap_or_else(|| "–".into())
            };
            versions.push(VersionRow {
                n,
                version: config.label(),
                sync: v.sync(),
                ms: fmt_ms(ms),
                candidates_per_ns: format!("{:.2}", candidates / (ms * 1e6)),
                vs_first: format!("{:.2}", first_ms / ms),
                minplus_instructions_per_candidate: sass(&|c| {
                    c.per_candidate(minplus).map(|v| format!("{v:.2}"))
                }),
                sweep_step_instructions: sass(&|c| {
                    c.step(sweep).map(|v| v.to_string())
                }),
            });
        }
        print_size(size, threads);
    }
    let spec = time_vs_n_spec(threads);
    let dims = format!("random 1..={DP_DIM_MAX}, seed {} + n", run.seed);
    run.figure("cmm-beyond-time-vs-n", &[("dims", &dims)], &spec, &points)?;
    let title = "The tiled kernels against the targets: whole table, median ms; ratios are \
                 the other program's median over the fastest tiled version's in the same run";
    run.table("cmm-beyond-targets", title, &TARGETS_SHOWN, &targets)?;
    let tools = counts
        .as_ref()
        .map(|c| c.tools.clone())
        .unwrap_or_else(|| "ptxas/nvdisasm not found: no SASS counts".into());
    let title = "Every version of the tiled program: whole table, median ms, candidates per \
                 ns, and the instructions its SASS spends per min-plus candidate and per \
                 sweep step (every branch of the step loop)";
    run.table(
        "cmm-beyond-versions",
        title,
        &[
            ("dims", dims.as_str()),
            ("sass", tools.as_str()),
            (
                "headers",
                "ms = whole table (ms) | candidates_per_ns = candidates per ns | \
                 vs_first = first tiled over this | \
                 minplus_instructions_per_candidate = min-plus instr. per candidate | \
                 sweep_step_instructions = sweep step instr.",
            ),
        ],
        &versions,
    )?;
    report_cpu(run, r)
}

#[derive(serde::Serialize)]
struct BatchRowOut {
    approach: String,
    chains: usize,
    n: usize,
    launches: String,
    total_ms: String,
    ms_per_chain: String,
    target_ms: String,
    met: &'static str,
}

#[derive(serde::Serialize)]
struct OverlapRowOut {
    n: usize,
    table_mib: String,
    solve_ms: String,
    solve_then_copy_ms: String,
    copy_overlapped_ms: String,
    copy_cost_after_ms: String,
    copy_cost_overlapped_ms: String,
}

#[derive(serde::Serialize)]
struct ClaimRow {
    claim: String,
    on_our_gpu: String,
    holds: &'static str,
}

/// The batch, the overlap, and the paper's section 7.2 claims against them.
fn report_batch(run: &Run, r: &BatchResults) -> anyhow::Result<()> {
    let mut rows: Vec<BatchRowOut> = r
        .rows
        .iter()
        .map(|b| BatchRowOut {
            approach: b.approach.clone(),
            chains: r.chains,
            n: r.n,
            launches: b.launches.clone(),
            total_ms: fmt_ms(b.stats.median_ms),
            ms_per_chain: fmt_ms(b.stats.median_ms / r.chains as f64),
            target_ms: fmt_ms(BATCH_TARGET_MS),
            met: if b.stats.median_ms <= BATCH_TARGET_MS { "yes" } else { "no" },
        })
        .collect();
    rows.push(BatchRowOut {
        approach:
            "tiled, one chain alone (measured) times the chains, one after another"
                .into(),
        chains: r.chains,
        n: r.n,
        launches: "–".into(),
        total_ms: fmt_ms(r.one_chain.median_ms * r.chains as f64),
        ms_per_chain: fmt_ms(r.one_chain.median_ms),
        target_ms: fmt_ms(BATCH_TARGET_MS),
        met: if r.one_chain.median_ms * r.chains as f64 <= BATCH_TARGET_MS {
            "yes"
        } else {
            "no"
        },
    });
    for row in &rows {
        println!(
            "batch: {} — {} ms ({} ms per chain)",
            row.approach, row.total_ms, row.ms_per_chain
        );
    }
    run.table(
        "cmm-beyond-batch",
        "Many independent chains: the whole batch, median ms, L2 warm; every chain's \
         table checked against the CPU's",
        &[(
            "headers",
            "total_ms = all chains (ms) | ms_per_chain = per chain (ms) | \
             target_ms = target (ms)",
        )],
        &rows,
    )?;
    let overlap: Vec<OverlapRowOut> = r
        .overlap
        .iter()
        .map(|o| OverlapRowOut {
            n: o.n,
            table_mib: format!("{:.1}", o.table_bytes as f64 / (1 << 20) as f64),
            solve_ms: fmt_ms(o.solve.median_ms),
            solve_then_copy_ms: fmt_ms(o.then_copy.median_ms),
            copy_overlapped_ms: fmt_ms(o.overlapped.median_ms),
            copy_cost_after_ms: fmt_ms(o.then_copy.median_ms - o.solve.median_ms),
            copy_cost_overlapped_ms: fmt_ms(o.overlapped.median_ms - o.solve.median_ms),
        })
        .collect();
    run.table(
        "cmm-beyond-overlap",
        "One chain solved and its key table copied to pinned host memory: after the \
         solve, or strip by strip on a second stream as each becomes final (the paper's \
         Listing 4); median ms, both copies checked against the CPU's table",
        &[(
            "headers",
            "table_mib = key table (MiB) | solve_ms = solve only (ms) | \
             solve_then_copy_ms = solve, then copy (ms) | \
             copy_overlapped_ms = copy during the solve (ms) | \
             copy_cost_after_ms = time the copy adds, after (ms) | \
             copy_cost_overlapped_ms = time the copy adds, overlapped (ms)",
        )],
        &overlap,
    )?;
    // The claims of the paper's section 7.2, each against the rows above; streams and
    // the batch compared on the same chains (dimensions to 1000).
    let streams = &r.rows[2];
    let batched = &r.rows[1];
    let mut claims = Vec::new();
    claims.push(ClaimRow {
        claim: "streams of one-block instances are the way to solve many instances".into(),
        on_our_gpu: format!(
            "{} chains of n = {}: {} ms on streams, {} ms with every chain in every launch \
             of the tiled kernels ({:.1}x)",
            r.chains,
            r.n,
            fmt_ms(streams.stats.median_ms),
            fmt_ms(batched.stats.median_ms),
            streams.stats.median_ms / batched.stats.median_ms
        ),
        holds: if streams.stats.median_ms <= batched.stats.median_ms { "yes" } else { "no" },
    });
    for o in &r.overlap {
        let saved = o.then_copy.median_ms - o.overlapped.median_ms;
        claims.push(ClaimRow {
            claim: format!(
                "overlapping the transfers with the computation (Listing 4) shortens the \
                 end-to-end time (n = {})",
                o.n
            ),
            on_our_gpu: format!(
                "solve then copy {} ms, copy during the solve {} ms, solve alone {} ms",
                fmt_ms(o.then_copy.median_ms),
                fmt_ms(o.overlapped.median_ms),
                fmt_ms(o.solve.median_ms)
            ),
            holds: if saved > 0.0 { "yes" } else { "no" },
        });
    }
    run.table(
        "cmm-beyond-paper72",
        "The paper's section 7.2 on our H100",
        &[("headers", "on_our_gpu = on our H100")],
        &claims,
    )
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Figure 6.1 was drawn with the series this module shows, under the names it gives
    /// them (the committed run had 16 CPU threads): a change to either changes the record.
    #[test]
    fn figure_6_1_carries_the_series_and_names_the_report_writes() {
        let record = crate::harness::record::book_record("cmm-beyond-time-vs-n");
        let spec = time_vs_n_spec(16);
        assert_eq!(
            record.meta.get("series_shown"),
            Some(spec.shown.join(" | ").as_str())
        );
        let labels: Vec<String> = spec
            .series_labels
            .iter()
            .map(|(from, to)| format!("{from} = {to}"))
            .collect();
        assert_eq!(record.meta.get("series_labels"), Some(labels.join(" | ").as_str()));
        let series = record.column("series").unwrap();
        for shown in &spec.shown {
            assert!(record.rows.iter().any(|r| &r[series] == shown), "{shown}");
        }
    }
}
