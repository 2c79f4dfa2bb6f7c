//! The chapter's figures and tables, each written from its own CSV.

use std::path::Path;

use super::gemm::Occupancy;
use super::model::{self, Step};
use super::strip::{self, StripSweep};
use super::traversal::TraversalPoint;
use crate::harness::plot::{self, Point, Spec};
use crate::harness::record::{self, Meta};
use crate::harness::Stats;

/// The `l2` key of the CPU figures: these measure CPU caches, not a GPU's L2.
pub const CPU_L2: &str =
    "n/a (CPU measurement; array sizes span the CPU's L1, L2, L3 and memory)";
/// The `l2` key of the GPU figure.
pub const GPU_L2: &str = "cold (L2 flushed before every repetition)";

/// `tiling-traversal`: nanoseconds per element against array size, both orders.
pub fn write_traversal(
    dir: &Path,
    meta: &Meta,
    points: &[TraversalPoint],
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
        "a[i][j] = 0.5 a[i][j] + 1 on an n x n float array",
        "array size (KiB)",
        "ns per element (median)",
    )
    .log_x()
    .log_y();
    plot::write_figure(
        dir,
        "tiling-traversal",
        &meta.clone().with("l2", CPU_L2),
        &spec,
        &out,
    )
}

/// `tiling-strip`: milliseconds of `D[i] += B[j][i]` against strip size, three forms.
pub fn write_strip(dir: &Path, meta: &Meta, sweep: &StripSweep) -> anyhow::Result<()> {
    let mut out = Vec::new();
    let pt = |series: &str, s: usize, st: &Stats| {
        Point::new(series, s, st.median_ms, st.min_ms, st.max_ms)
    };
    for (s, mined, tiled) in &sweep.points {
        out.push(pt("original (no strips)", *s, &sweep.original));
        out.push(pt("strip-mined", *s, mined));
        out.push(pt("strip-mined + permuted (tiled)", *s, tiled));
    }
    let (m, n) = (sweep.problem.m, sweep.problem.n);
    let (untiled, tiled) = strip::predicted_bytes(m, n);
    let meta = meta
        .clone()
        .with("l2", CPU_L2)
        .with(
            "problem",
            &format!("m = {m} rows, n = {n} floats (D is {} MiB)", (n * 4) >> 20),
        )
        .with(
            "predicted_bytes",
            &format!("no reuse of D: {untiled}; full reuse of D: {tiled}"),
        );
    let spec = Spec::line(
        &format!("D[i] += B[j][i], {m} x {n}: time against strip size"),
        "strip size s (floats)",
        "ms (median)",
    )
    .log_x();
    plot::write_figure(dir, "tiling-strip", &meta, &spec, &out)
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

/// `tiling-predictions`: the model's numbers for every step, computed by [`model`].
pub fn write_predictions(dir: &Path, meta: &Meta) -> anyhow::Result<()> {
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
    record::write_table(
        dir,
        "tiling-predictions",
        &meta.clone().with(
            "title",
            "What each step asks of memory, per FLOP (model, before measuring)",
        ),
        &rows,
    )
}

/// One step's measurement at the timed size.
#[derive(Debug, Clone)]
pub struct StepResult {
    pub step: Step,
    pub occupancy: Option<Occupancy>,
    pub stats: Stats,
}

/// One verification: which step, at which size, how close.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifiedRow {
    pub step: &'static str,
    pub size: String,
    pub elements_compared: usize,
    pub worst_abs_err: String,
    pub tolerance_abs: String,
}

/// Everything `tiled_matmul` measured.
pub struct MatmulResults {
    pub size: (usize, usize, usize),
    pub steps: Vec<StepResult>,
    pub verified: Vec<VerifiedRow>,
}

impl MatmulResults {
    fn gflops(&self, s: &Stats) -> (f64, f64, f64) {
        let f = model::flops(self.size.0, self.size.1, self.size.2) / 1e9;
        (f / (s.median_ms * 1e-3), f / (s.max_ms * 1e-3), f / (s.min_ms * 1e-3))
    }

    fn cublas_gflops(&self) -> anyhow::Result<f64> {
        let r = self
            .steps
            .iter()
            .find(|r| r.step == Step::Cublas)
            .ok_or_else(|| anyhow::anyhow!("cuBLAS was not measured"))?;
        Ok(self.gflops(&r.stats).0)
    }

    /// The fastest hand-written step and its fraction of cuBLAS.
    pub fn best(&self) -> anyhow::Result<(Step, f64)> {
        let cublas = self.cublas_gflops()?;
        self.steps
            .iter()
            .filter(|r| r.step != Step::Cublas)
            .map(|r| (r.step, self.gflops(&r.stats).0 / cublas))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .ok_or_else(|| anyhow::anyhow!("no hand-written step was measured"))
    }

    /// The line that says whether the chapter's target (80 % of cuBLAS) was met.
    pub fn target_line(&self) -> anyhow::Result<String> {
        let (step, frac) = self.best()?;
        let verdict = if frac >= 0.8 { "target met" } else { "target NOT met" };
        Ok(format!(
            "best hand-written step at {} x {} x {}: `{}` at {:.1} % of cuBLAS SGEMM ({:.0} GFLOP/s); {verdict} (80 %)",
            self.size.0,
            self.size.1,
            self.size.2,
            step.label(),
            100.0 * frac,
            self.cublas_gflops()? * frac
        ))
    }
}

/// One row of `tiling-kernels`: occupancy next to speed.
#[derive(Debug, serde::Serialize)]
struct KernelRow {
    step: &'static str,
    threads_per_block: String,
    shared_bytes_per_block: String,
    registers_per_thread: String,
    spill_bytes: String,
    blocks_per_sm: String,
    warps_per_sm: String,
    gflops_median: String,
    percent_of_cublas: String,
}

/// Writes `tiling-matmul` (figure), `tiling-kernels` and `tiling-verification` (tables).
pub fn write_matmul(
    dir: &Path,
    meta: &Meta,
    results: &MatmulResults,
) -> anyhow::Result<Vec<String>> {
    let cublas = results.cublas_gflops()?;
    let (m, n, k) = results.size;
    let meta = meta
        .clone()
        .with("l2", GPU_L2)
        .with("size", &format!("M = {m}, N = {n}, K = {k}"));
    let mut points = Vec::new();
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for r in &results.steps {
        let (g, g_lo, g_hi) = results.gflops(&r.stats);
        let pct = |x: f64| 100.0 * x / cublas;
        points.push(Point::new(
            &format!("{m} x {n} x {k}"),
            r.step.label(),
            pct(g),
            pct(g_lo),
            pct(g_hi),
        ));
        let o = r.occupancy.as_ref();
        let field =
            |f: &dyn Fn(&Occupancy) -> String| o.map_or("(cuBLAS)".to_string(), f);
        rows.push(KernelRow {
            step: r.step.label(),
            threads_per_block: field(&|o| o.threads_per_block.to_string()),
            shared_bytes_per_block: field(&|o| o.shared_bytes_per_block.to_string()),
            registers_per_thread: field(&|o| o.registers_per_thread.to_string()),
            spill_bytes: field(&|o| o.spill_bytes_per_thread.to_string()),
            blocks_per_sm: field(&|o| o.blocks_per_sm.to_string()),
            warps_per_sm: field(&|o| o.warps_per_sm.to_string()),
            gflops_median: format!("{g:.0}"),
            percent_of_cublas: format!("{:.1}", pct(g)),
        });
        lines.push(format!(
            "{:<30} {:>9.0} GFLOP/s  {:>6.1} % of cuBLAS",
            r.step.label(),
            g,
            pct(g)
        ));
    }
    let spec = Spec::bar(
        &format!(
            "Tiled matrix multiply, float, {m} x {n} x {k}: speed as % of cuBLAS SGEMM"
        ),
        "step",
        "% of cuBLAS SGEMM (median; bars: min-max)",
    );
    plot::write_figure(dir, "tiling-matmul", &meta, &spec, &points)?;
    record::write_table(
        dir,
        "tiling-kernels",
        &meta.clone().with(
            "title",
            &format!("Occupancy and speed of every step at {m} x {n} x {k}, L2 cold"),
        ),
        &rows,
    )?;
    record::write_table(
        dir,
        "tiling-verification",
        &meta.with("title", "Every step against the double-precision CPU reference"),
        &results.verified,
    )?;
    lines.push(results.target_line()?);
    Ok(lines)
}
