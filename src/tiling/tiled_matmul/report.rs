//! Every figure and table of `tiled_matmul`, drawn from [`Results`]: `tiling-matmul`,
//! `tiling-kernels` and `tiling-verification`.

use super::measure::Results;
use crate::harness::plot::{Axis, Point, Spec};
use crate::harness::{Run, Stats};
use crate::tiling::device::Occupancy;
use crate::tiling::model::{self, Step};

/// The `l2` key of the GPU figure and tables.
pub const GPU_L2: &str = "cold (L2 flushed before every repetition)";

impl Results {
    /// GFLOP/s at the median, slowest and fastest repetition.
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
            "best hand-written step at {} x {} x {}: `{}` at {:.1} % of cuBLAS SGEMM ({:.0} \
             GFLOP/s); {verdict} (80 %)",
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

/// The console summary: every step's speed, then the target line.
pub fn summary_lines(r: &Results) -> anyhow::Result<Vec<String>> {
    let cublas = r.cublas_gflops()?;
    let mut lines: Vec<String> = r
        .steps
        .iter()
        .map(|s| {
            let g = r.gflops(&s.stats).0;
            format!(
                "{:<30} {:>9.0} GFLOP/s  {:>6.1} % of cuBLAS",
                s.step.label(),
                g,
                100.0 * g / cublas
            )
        })
        .collect();
    lines.push(r.target_line()?);
    Ok(lines)
}

/// How `tiling-kernels` is shown (see `harness::table`).
const KERNELS_HEADERS: [(&str, &str); 1] = [(
    "headers",
    "threads_per_block = threads per block | \
     shared_bytes_per_block = shared bytes per block | \
     registers_per_thread = registers per thread | \
     spill_bytes = spill bytes per thread | blocks_per_sm = blocks per SM | \
     warps_per_sm = warps per SM | gflops_median = GFLOP/s, median | \
     percent_of_cublas = % of cuBLAS",
)];

/// How `tiling-verification` is shown (see `harness::table`).
const VERIFICATION_HEADERS: [(&str, &str); 1] = [(
    "headers",
    "elements_compared = elements compared | worst_abs_err = worst absolute error | \
     tolerance_abs = tolerance (absolute)",
)];

/// Writes `tiling-matmul` (figure), `tiling-kernels` and `tiling-verification` (tables), and
/// prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let cublas = r.cublas_gflops()?;
    let (m, n, k) = r.size;
    let size = format!("M = {m}, N = {n}, K = {k}");
    let extra = [("l2", GPU_L2), ("size", size.as_str())];
    let mut points = Vec::new();
    let mut rows = Vec::new();
    for s in &r.steps {
        let (g, g_lo, g_hi) = r.gflops(&s.stats);
        let pct = |x: f64| 100.0 * x / cublas;
        points.push(Point::new(
            &format!("{m} x {n} x {k}"),
            s.step.label(),
            pct(g),
            pct(g_lo),
            pct(g_hi),
        ));
        let o = s.occupancy.as_ref();
        let field =
            |f: &dyn Fn(&Occupancy) -> String| o.map_or("(cuBLAS)".to_string(), f);
        rows.push(KernelRow {
            step: s.step.label(),
            threads_per_block: field(&|o| o.threads_per_block.to_string()),
            shared_bytes_per_block: field(&|o| o.shared_bytes_per_block.to_string()),
            registers_per_thread: field(&|o| o.registers_per_thread.to_string()),
            spill_bytes: field(&|o| o.spill_bytes_per_thread.to_string()),
            blocks_per_sm: field(&|o| o.blocks_per_sm.to_string()),
            warps_per_sm: field(&|o| o.warps_per_sm.to_string()),
            gflops_median: format!("{g:.0}"),
            percent_of_cublas: format!("{:.1}", pct(g)),
        });
    }
    let spec = Spec::bar(
        &format!(
            "Tiled matrix multiply, float, {m} x {n} x {k}: speed as % of cuBLAS SGEMM"
        ),
        "step",
        "% of cuBLAS SGEMM (median; bars: min-max)",
    )
    .ref_line(Axis::Y, "80", "target: 80% of cuBLAS")
    // Absolute speed on the right: % × (cuBLAS GFLOP/s, as the table rounds it) / 100.
    .y2("GFLOP/s", cublas.round() / 100.0);
    run.figure("tiling-matmul", &extra, &spec, &points)?;
    let title =
        format!("Occupancy and speed of every step at {m} x {n} x {k}, L2 cold");
    run.table(
        "tiling-kernels",
        &title,
        &[&extra[..], &KERNELS_HEADERS].concat(),
        &rows,
    )?;
    let title = "Every step against the double-precision CPU reference";
    // Every step at the size timed in view, the smaller sizes folded.
    let fold = format!("size = {m} x {n} x {k}");
    let shown = [&extra[..], &VERIFICATION_HEADERS, &[("fold", &fold)]].concat();
    run.table("tiling-verification", title, &shown, &r.verified)?;

    for line in summary_lines(r)? {
        println!("{line}");
    }
    Ok(())
}
