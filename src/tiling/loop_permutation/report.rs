//! Every figure and table of `loop_permutation`, drawn from [`Results`]: `tiling-traversal`,
//! `tiling-strip`, `tiling-strip-ranges` (which differences the min-max ranges support)
//! and the model's `tiling-predictions`.

use super::measure::Results;
use crate::harness::plot::{Point, Spec};
use crate::harness::Run;
use crate::harness::Stats;
use crate::tiling::model::Step;
use crate::tiling::strip::{self, Separation, StripSweep};
use crate::tiling::traversal::TraversalPoint;

/// The `l2` key of the CPU figures: these measure CPU caches, not a GPU's L2.
pub const CPU_L2: &str =
    "n/a (CPU measurement; array sizes span the CPU's L1, L2, L3 and memory)";

/// Writes the figures and the table, and prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let cpu = cpu_line(run);
    traversal_figure(run, &r.traversal, &cpu)?;
    strip_figure(run, &r.strip, &cpu)?;
    ranges_table(run, &r.strip, &cpu)?;
    predictions_table(run)?;

    println!("CPU: {cpu} (timed with std::time::Instant, median of {})", r.reps);
    for p in &r.traversal {
        let (row, column) = p.ns_per_element();
        println!(
            "traversal n = {:>5} ({:>9} KiB): row order {row:7.3} ns/element, column \
             order {column:7.3} ns/element",
            p.n,
            p.bytes() / 1024
        );
    }
    let sweep = &r.strip;
    println!(
        "D[i] += B[j][i], {} x {}: original {:.2} ms",
        sweep.problem.m, sweep.problem.n, sweep.original.median_ms
    );
    for (s, mined, tiled) in &sweep.points {
        println!(
            "  strip {s:>8}: strip-mined {:8.2} ms, tiled {:8.2} ms (tiled against the \
             original: {})",
            mined.median_ms,
            tiled.median_ms,
            Separation::of(tiled, &sweep.original).label()
        );
    }
    Ok(())
}

/// The CPU the run was timed on, as the figures name it: its model and how many
/// hardware threads the machine offers.
fn cpu_line(run: &Run) -> String {
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{} ({threads} hardware threads)",
        run.meta.get("cpu").unwrap_or("unknown CPU")
    )
}

/// `tiling-traversal`: nanoseconds per element against array size, both orders.
fn traversal_figure(
    run: &Run,
    points: &[TraversalPoint],
    cpu: &str,
) -> anyhow::Result<()> {
    let mut out = Vec::new();
    for p in points {
        let kib = p.bytes() as f64 / 1024.0;
        let per = |ms: f64| ms * 1e6 / (p.n * p.n) as f64;
        for (series, s) in
            [("row order (i outer)", &p.row), ("column order (j outer)", &p.column)]
        {
            out.push(Point::new(
                series,
                kib,
                per(s.median_ms),
                per(s.min_ms),
                per(s.max_ms),
            ));
        }
    }
    let spec = Spec::line(
        &format!("a[i][j] = 0.5 a[i][j] + 1 on an n x n float array, on {cpu}"),
        "array size (KiB)",
        "ns per element (median; bars: min-max)",
    )
    .log_x()
    .log_y();
    run.figure("tiling-traversal", &[("l2", CPU_L2), ("host", cpu)], &spec, &out)
}

/// `tiling-strip`: milliseconds of `D[i] += B[j][i]` against strip size, three forms.
fn strip_figure(run: &Run, sweep: &StripSweep, cpu: &str) -> anyhow::Result<()> {
    let mut out = Vec::new();
    for (s, mined, tiled) in &sweep.points {
        out.push(Point::ms("original (no strips)", s, &sweep.original));
        out.push(Point::ms("strip-mined", s, mined));
        out.push(Point::ms("strip-mined + permuted (tiled)", s, tiled));
    }
    let (m, n) = (sweep.problem.m, sweep.problem.n);
    let (untiled, tiled) = strip::predicted_bytes(m, n);
    let problem = format!("m = {m} rows, n = {n} floats (D is {} MiB)", (n * 4) >> 20);
    let predicted = format!("no reuse of D: {untiled}; full reuse of D: {tiled}");
    let spec = Spec::line(
        &format!("D[i] += B[j][i], {m} x {n}: time against strip size, on {cpu}"),
        "strip size s (floats)",
        "ms (median; bars: min-max)",
    )
    .log_x();
    let extra = [
        ("l2", CPU_L2),
        ("host", cpu),
        ("problem", &problem),
        ("predicted_bytes", &predicted),
    ];
    run.figure("tiling-strip", &extra, &spec, &out)
}

/// One row of `tiling-strip-ranges`: one form at one strip size against the original.
#[derive(Debug, serde::Serialize)]
struct RangeRow {
    strip: usize,
    form: &'static str,
    median_ms: String,
    min_ms: String,
    max_ms: String,
    original_over_form: String,
    verdict: &'static str,
}

/// How `tiling-strip-ranges` is shown (see `harness::table`).
const RANGES_HEADERS: (&str, &str) = (
    "headers",
    "strip = strip s (floats) | median_ms = ms, median | min_ms = ms, min | \
     max_ms = ms, max | original_over_form = original / form (medians) | \
     verdict = against the original",
);

/// `tiling-strip-ranges`: every form at every strip size against the original, and
/// whether their min-max ranges are apart (a difference the measurement supports) or
/// overlap (within its noise).
fn ranges_table(run: &Run, sweep: &StripSweep, cpu: &str) -> anyhow::Result<()> {
    let o = &sweep.original;
    let row = |strip, form, s: &Stats| RangeRow {
        strip,
        form,
        median_ms: format!("{:.3}", s.median_ms),
        min_ms: format!("{:.3}", s.min_ms),
        max_ms: format!("{:.3}", s.max_ms),
        original_over_form: format!("{:.2}", o.median_ms / s.median_ms),
        verdict: Separation::of(s, o).label(),
    };
    let mut rows = vec![RangeRow {
        verdict: "(the reference)",
        ..row(sweep.problem.n, "original (no strips)", o)
    }];
    for (s, mined, tiled) in &sweep.points {
        rows.push(row(*s, "strip-mined", mined));
        rows.push(row(*s, "tiled", tiled));
    }
    let reps = o.reps.to_string();
    let title =
        "D[i] += B[j][i]: each form against the original, with the range of every \
                 series";
    let shown = [("l2", CPU_L2), ("host", cpu), ("reps", &reps), RANGES_HEADERS];
    run.table("tiling-strip-ranges", title, &shown, &rows)
}

/// One row of `tiling-predictions`: what the model says about each step (no GPU needed).
#[derive(Debug, serde::Serialize)]
struct PredictionRow {
    step: &'static str,
    block_tile: String,
    threads_per_block: String,
    global_bytes_per_flop: String,
    shared_bytes_per_flop: String,
    b_tile_wavefronts_per_float4_read: String,
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.4}"))
}

/// How `tiling-predictions` is shown (see `harness::table`).
const PREDICTIONS_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "block_tile = block tile | threads_per_block = threads per block | \
         global_bytes_per_flop = global bytes per FLOP | \
         shared_bytes_per_flop = shared bytes per FLOP | \
         b_tile_wavefronts_per_float4_read = B-tile wavefronts per float4 read",
    ),
    ("computed", "`tiling::model`"),
];

/// `tiling-predictions`: the model's numbers for every step, computed by
/// [`crate::tiling::model`].
fn predictions_table(run: &Run) -> anyhow::Result<()> {
    let rows: Vec<PredictionRow> = Step::ALL
        .iter()
        .filter(|s| **s != Step::Cublas)
        .map(|&s| {
            let (bm, bn) = s.block_tile();
            let (bx, by) = s.block();
            PredictionRow {
                step: s.label(),
                block_tile: format!("{bm} x {bn}"),
                threads_per_block: (bx * by).to_string(),
                global_bytes_per_flop: opt(s.global_bytes_per_flop()),
                shared_bytes_per_flop: opt(s.shared_bytes_per_flop()),
                b_tile_wavefronts_per_float4_read: s
                    .b_tile_wavefronts()
                    .map_or("-".into(), |w| format!("{w} (ideal 4)")),
            }
        })
        .collect();
    let title = "What each step asks of memory, per FLOP (model, before measuring)";
    run.table("tiling-predictions", title, &PREDICTIONS_SHOWN, &rows)
}
