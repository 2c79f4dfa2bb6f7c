//! Every figure and table of `tiled_matmul`, drawn from [`Results`]: `tiling-matmul`,
//! `tiling-kernels`, `tiling-verification`, `tiling-lecture`, `tiling-out-of-core` and
//! `tiling-out-of-core-runs`, and `tiling-generic`.

use super::measure::Results;
use crate::harness::plot::{Axis, Point, Spec};
use crate::harness::{Run, Stats};
use crate::tiling::device::Occupancy;
use crate::tiling::generic::GenericCheck;
use crate::tiling::lecture;
use crate::tiling::model::{self, Step};
use crate::tiling::out_of_core::{OutOfCoreResults, Variant};

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

    lecture_table(run, r)?;
    if let Some(ooc) = &r.out_of_core {
        out_of_core_report(run, ooc)?;
    }
    if let Some(g) = &r.generic {
        generic_table(run, g)?;
    }

    for line in summary_lines(r)? {
        println!("{line}");
    }
    Ok(())
}

/// One row of `tiling-lecture`: a tiled multiply's speed as a fraction of its GPU's peak.
#[derive(Debug, serde::Serialize)]
struct LectureRow {
    kernel: String,
    gpu: String,
    gflops: String,
    datasheet_peak_gflops: String,
    percent_of_datasheet_peak: String,
    measured_peak_gflops: String,
    percent_of_measured_peak: String,
}

/// How `tiling-lecture` is shown (see `harness::table`).
const LECTURE_HEADERS: (&str, &str) = (
    "headers",
    "gflops = GFLOP/s | datasheet_peak_gflops = FP32 peak, datasheet (GFLOP/s) | \
     percent_of_datasheet_peak = % of it | \
     measured_peak_gflops = FP32 multiply-add peak, measured (GFLOP/s) | \
     percent_of_measured_peak = % of it",
);

/// The FP32 multiply-add peak the ceilings chapter measured on this GPU, with the record
/// it came from: this run's folder first, then the book's data. `None` where neither was
/// measured on a GPU of this name.
fn measured_fp32_peak(run: &Run) -> Option<(f64, String)> {
    let gpu = run.meta.get("gpu")?;
    [Some(run.out.clone()), crate::harness::compare::book_figures()]
        .into_iter()
        .flatten()
        .filter_map(|dir| crate::harness::roof::read_roof(&dir).ok())
        .find(|roof| roof.meta.get("gpu") == Some(gpu))
        .map(|roof| {
            let from = format!(
                "ceilings-peaks.csv, commit {}, {}",
                roof.meta.get("commit").unwrap_or("?"),
                roof.meta.get("date_utc").unwrap_or("?")
            );
            (roof.fp32_gflops, from)
        })
}

/// `tiling-lecture`: the lecture's "about 45 GFLOPS" for its 16 x 16 tiled multiply beside
/// ours (the same kernel, step 2, and the best step), each as a fraction of its own GPU's
/// FP32 multiply-add peak.
fn lecture_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let gpu = run.meta.get("gpu").unwrap_or("this GPU").to_string();
    let sheet = crate::harness::roof::datasheet(&gpu);
    let measured = measured_fp32_peak(run);
    let pct = |g: f64, peak: f64| format!("{:.1}", 100.0 * g / peak);
    let g80 = lecture::gpu_peak_gflops();
    let mut rows = vec![LectureRow {
        kernel: format!("the lecture's {0} x {0} tiles (its slide)", lecture::TILE),
        gpu: lecture::GPU.into(),
        gflops: format!("{:.0}", lecture::TILED_GFLOPS),
        datasheet_peak_gflops: format!("{g80:.1}"),
        percent_of_datasheet_peak: pct(lecture::TILED_GFLOPS, g80),
        measured_peak_gflops: "-".into(),
        percent_of_measured_peak: "-".into(),
    }];
    let (m, n, k) = r.size;
    for step in [Step::Tiled16, Step::QuadDoubleBuffer, Step::Cublas] {
        let Some(s) = r.steps.iter().find(|s| s.step == step) else { continue };
        let g = r.gflops(&s.stats).0;
        let sheet_peak = sheet.map(|(fp32, ..)| fp32 * 1e3);
        rows.push(LectureRow {
            kernel: format!("{} ({m} x {n} x {k})", step.label()),
            gpu: gpu.clone(),
            gflops: format!("{g:.0}"),
            datasheet_peak_gflops: sheet_peak.map_or("-".into(), |p| format!("{p:.0}")),
            percent_of_datasheet_peak: sheet_peak.map_or("-".into(), |p| pct(g, p)),
            measured_peak_gflops: measured
                .as_ref()
                .map_or("not measured".into(), |(p, _)| format!("{p:.0}")),
            percent_of_measured_peak: measured
                .as_ref()
                .map_or("-".into(), |(p, _)| pct(g, *p)),
        });
    }
    let sheet_source =
        sheet.map_or("no datasheet figure for this GPU", |(.., src)| src);
    let measured_source = measured
        .as_ref()
        .map_or("not measured on this GPU".to_string(), |m| m.1.clone());
    let shown = [
        ("l2", GPU_L2),
        ("lecture_peak", lecture::PEAK_SOURCE),
        ("datasheet", sheet_source),
        ("measured_peak", measured_source.as_str()),
        LECTURE_HEADERS,
    ];
    let title =
        "The lecture's tiled multiply and ours, each against its own GPU's FP32 peak";
    run.table("tiling-lecture", title, &shown, &rows)
}

/// One row of `tiling-out-of-core-runs`.
#[derive(Debug, serde::Serialize)]
struct OutOfCoreRow {
    variant: String,
    device_mib: String,
    ms_median: String,
    ms_min: String,
    ms_max: String,
    gflops_median: String,
}

/// How `tiling-out-of-core-runs` is shown (see `harness::table`).
const OUT_OF_CORE_HEADERS: (&str, &str) = (
    "headers",
    "device_mib = device memory used (MiB) | ms_median = ms, median | ms_min = ms, min | \
     ms_max = ms, max | gflops_median = GFLOP/s, median",
);

/// `tiling-out-of-core` (figure) and `tiling-out-of-core-runs` (table): every variant's
/// time, and what no overlap (the sum of the parts) and perfect overlap (the largest
/// part) would give.
fn out_of_core_report(run: &Run, o: &OutOfCoreResults) -> anyhow::Result<()> {
    let (m, n, k) = o.size;
    let mib = |b: usize| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let flops = model::flops(m, n, k);
    let part = |v: Variant| o.variants.iter().find(|r| r.variant == v);
    let parts: Vec<f64> =
        [Variant::KernelsOnly, Variant::CopiesInOnly, Variant::CopiesOutOnly]
            .iter()
            .filter_map(|&v| part(v).map(|r| r.stats.median_ms))
            .collect();
    let sum: f64 = parts.iter().sum();
    let largest = parts.iter().copied().fold(0.0, f64::max);
    let mut rows = Vec::new();
    let mut points = Vec::new();
    let series = format!("{m} x {n} x {k}");
    for r in &o.variants {
        let label = r.variant.label();
        points.push(Point::ms(&series, &label, &r.stats));
        rows.push(OutOfCoreRow {
            variant: label,
            device_mib: mib(r.device_bytes),
            ms_median: format!("{:.2}", r.stats.median_ms),
            ms_min: format!("{:.2}", r.stats.min_ms),
            ms_max: format!("{:.2}", r.stats.max_ms),
            // The copies alone multiply nothing: no GFLOP/s for them.
            gflops_median: match r.variant {
                Variant::CopiesInOnly | Variant::CopiesOutOnly => "-".into(),
                _ => format!("{:.0}", flops / (r.stats.median_ms * 1e6)),
            },
        });
    }
    for (what, ms) in [
        ("computed: sum of the parts (no overlap)", sum),
        ("computed: largest part (perfect overlap)", largest),
    ] {
        rows.push(OutOfCoreRow {
            variant: what.into(),
            device_mib: "-".into(),
            ms_median: format!("{ms:.2}"),
            ms_min: "-".into(),
            ms_max: "-".into(),
            gflops_median: format!("{:.0}", flops / (ms * 1e6)),
        });
    }
    let problem = format!(
        "C = A B, {m} x {n} x {k}: A, B and C {} MiB together; device budget {} MiB; \
         panels of {} rows ({} panels); A and C in pinned host memory",
        mib(o.data_bytes),
        mib(o.budget_bytes),
        o.panel_rows,
        o.panels
    );
    let l2 = "n/a (every repetition copies A in from the host and C out)";
    let extra = [("l2", l2), ("problem", problem.as_str())];
    let spec = Spec::bar(
        &format!("Out of core: {m} x {n} x {k} in panels from the host, by streams"),
        "variant",
        "ms (median; bars: min-max)",
    )
    .ref_line(Axis::Y, &format!("{sum:.2}"), "sum of the parts (no overlap)")
    .ref_line(Axis::Y, &format!("{largest:.2}"), "largest part (perfect overlap)");
    run.figure("tiling-out-of-core", &extra, &spec, &points)?;
    let title = "Out of core: every variant, and the two bounds its parts give";
    run.table(
        "tiling-out-of-core-runs",
        title,
        &[&extra[..], &[OUT_OF_CORE_HEADERS]].concat(),
        &rows,
    )?;
    for c in &o.checks {
        println!(
            "out of core {} with {} stream(s), panels of {} rows: verified ({} elements, \
             worst abs error {:.2e})",
            c.size, c.streams, c.panel_rows, c.report.checked, c.report.max_abs_err
        );
    }
    Ok(())
}

/// One row of `tiling-generic`.
#[derive(Debug, serde::Serialize)]
struct GenericRow {
    function: String,
    instruction: String,
    count: usize,
    first_line: String,
    meaning: String,
}

/// `tiling-generic`: what the generic-addressing kernel showed, and the PTX lines behind it.
fn generic_table(run: &Run, g: &GenericCheck) -> anyhow::Result<()> {
    let rows: Vec<GenericRow> = g
        .ptx
        .iter()
        .map(|e| GenericRow {
            function: e.function.clone(),
            instruction: e.instruction.into(),
            count: e.count,
            first_line: format!("`{}`", e.first_line),
            meaning: e.meaning.into(),
        })
        .collect();
    let flags =
        |global: i32, shared: i32| format!("__isGlobal {global}, __isShared {shared}");
    let result = format!(
        "{} elements, both calls equal to the CPU bit for bit; global pointer: {}; shared \
         pointer: {}",
        g.compared,
        flags(g.spaces[0], g.spaces[1]),
        flags(g.spaces[2], g.spaces[3])
    );
    let shown = [
        ("l2", "n/a (a check, not timed)"),
        ("checked", result.as_str()),
        ("headers", "first_line = first such line of the PTX"),
    ];
    let title =
        "One function, two memory spaces: the PTX of generic_window and window_sum";
    println!("generic addressing: {result}");
    run.table("tiling-generic", title, &shown, &rows)
}
