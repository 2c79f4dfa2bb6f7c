//! The chapter's figures and tables, computed from the measurements alone, and the console
//! summary.

use crate::harness::format::{ratio, us};
use crate::harness::plot::{Axis, PanelBy, Point, Spec, Ticks};
use crate::harness::{Run, Stats};

use super::datasets::{floor_ms, Dataset, LARGE_SQUARE, POLYBENCH};
use super::measure::{
    EndToEndResult, HostCosts, KernelResult, KernelVariant, Part, Results, Strategy,
    Transfer, YAloneKernel,
};
use super::reference::SLIDES_CLAIMS;

mod host;
mod occupancy;

/// The `l2` key of what ran after the copies of A.
const AFTER_COPY: &str =
    "warm (the copies of A just wrote it; the part that fits stays in L2)";

fn key(d: &Dataset, elem: &str) -> String {
    format!("{} {}", d.name, elem)
}

/// How the tables are shown (see `harness::table`): plain headers with units, the spread of
/// the repetitions beside the median, the datasets the chapter discusses in view and the
/// others folded.
const KERNELS_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "mb_moved = MB moved | floor_us = floor (µs) | \
         warm_median_us = warm, median (µs) | warm_min_us = warm, fastest (µs) | \
         warm_max_us = warm, slowest (µs) | cold_median_us = cold, median (µs) | \
         slides_mean_us = slides' method (µs) | \
         cold_fraction_of_copy = of copy, cold | \
         worst_rel_err = worst relative error",
    ),
    (
        "columns",
        "{dataset}, {type} = dataset | variant | floor_us | warm_median_us | \
         {warm_min_us}–{warm_max_us} = warm, fastest–slowest (µs) | \
         cold_median_us | slides_mean_us | cold_fraction_of_copy",
    ),
];
/// How `atax-end-to-end` is shown (see `harness::table`).
const END_TO_END_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "median_ms = median (ms) | min_ms = fastest (ms) | max_ms = slowest (ms) | \
         slides_mean_ms = slides' method (ms) | speedup_median = speedup, median | \
         speedup_slides_method = speedup, slides' method | \
         speedup_registration_counted = speedup, registration counted | \
         speedup_allocations_counted = speedup, allocations counted | \
         over_pinned_copy_of_a = over the pinned copy of A",
    ),
    (
        "columns",
        "{dataset}, {type} = dataset | strategy | median_ms | speedup_median | \
         speedup_registration_counted | speedup_allocations_counted | \
         over_pinned_copy_of_a",
    ),
];
/// How `atax-slides` is shown (see `harness::table`).
const SLIDES_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "technique = technique (slides) | our_strategy = our strategy | \
         slides_claim = slides' speedup | ours_median = our speedup, median | \
         ours_slides_method = our speedup, slides' method | \
         ours_kernels_only = our speedup, kernels only",
    ),
    ("fold", "dataset = EXTRALARGE double"),
];

/// Writes a table with a `dataset` column: its `l2` key, how it is `shown`, and a `fold`
/// that keeps the largest dataset measured (the square beyond L2) in view, and EXTRALARGE
/// too where the chapter discusses it.
fn dataset_table<'a, T: serde::Serialize>(
    run: &Run,
    stem: &str,
    title: &str,
    (l2, shown): (&str, &[(&str, &str)]),
    datasets: impl Iterator<Item = &'a Dataset>,
    extralarge: bool,
    rows: &[T],
) -> anyhow::Result<()> {
    let largest = datasets.max_by_key(|d| d.m * d.n).map(Dataset::label);
    let xl = POLYBENCH.iter().find(|d| extralarge && d.name == "EXTRALARGE");
    let kept: Vec<String> = xl.map(Dataset::label).into_iter().chain(largest).collect();
    let fold = format!("dataset = {}", kept.join(" | "));
    let keys = [("l2", l2), ("fold", fold.as_str())];
    run.table(stem, title, &[&keys[..], shown].concat(), rows)
}

impl KernelResult {
    /// L2 warm times of a timed kernel (one [`Results::kernel`] found).
    fn warm(&self) -> &Stats {
        &self.times.as_ref().expect("a timed kernel").0
    }
    /// L2 cold times of a timed kernel.
    fn cold(&self) -> &Stats {
        &self.times.as_ref().expect("a timed kernel").1
    }
}

impl EndToEndResult {
    /// Median-of-many times of a timed strategy (one [`Results::e2e`] found).
    fn timing(&self) -> &Stats {
        &self.times.as_ref().expect("a timed strategy").0
    }
}

/// The fastest of `items` by the median of `stats`.
fn fastest<'r, R>(
    items: impl Iterator<Item = &'r R>,
    stats: impl Fn(&R) -> &Stats,
) -> Option<&'r R> {
    items.min_by(|a, b| stats(a).median_ms.total_cmp(&stats(b).median_ms))
}

impl Results {
    fn kernel(&self, d: &str, elem: &str, v: KernelVariant) -> Option<&KernelResult> {
        self.kernels.iter().find(|r| {
            r.d.name == d && r.elem == elem && r.variant == v && r.times.is_some()
        })
    }
    fn e2e(&self, d: &str, elem: &str, s: Strategy) -> Option<&EndToEndResult> {
        self.end_to_end.iter().find(|r| {
            r.d.name == d && r.elem == elem && r.strategy == s && r.times.is_some()
        })
    }
    fn transfer(&self, d: &str, elem: &str) -> Option<&Transfer> {
        self.transfers.iter().find(|t| t.d.name == d && t.elem == elem)
    }
    fn host_cost(&self, d: &str, elem: &str) -> Option<&HostCosts> {
        self.host_costs
            .iter()
            .find(|(cd, ce, _)| cd.name == d && *ce == elem)
            .map(|(_, _, c)| c)
    }
    /// End-to-end speedups of a pinned strategy over the pageable baseline with the cost
    /// of pinning A paid once (over one transfer): (with `cuMemHostRegister` +
    /// unregister added to the pinned run; with each run's allocation of A added, pinned
    /// `cuMemHostAlloc` against new pageable pages and their first touch).
    fn pinning_counted(&self, d: &str, elem: &str, s: Strategy) -> Option<(f64, f64)> {
        if !s.pins_host_memory() {
            return None;
        }
        let base = self.e2e(d, elem, Strategy::PageableBaseline)?.timing().median_ms;
        let me = self.e2e(d, elem, s)?.timing().median_ms;
        let c = self.host_cost(d, elem)?;
        Some((
            base / (me + c.register.median_ms),
            (base + c.pageable_alloc.median_ms) / (me + c.pinned_alloc.median_ms),
        ))
    }
    /// End-to-end speedup of `s` over the pageable baseline: (median, slides' method).
    fn e2e_speedup(&self, d: &str, elem: &str, s: Strategy) -> Option<(f64, f64)> {
        let base = self.e2e(d, elem, Strategy::PageableBaseline)?.times.as_ref()?;
        let me = self.e2e(d, elem, s)?.times.as_ref()?;
        Some((base.0.median_ms / me.0.median_ms, base.1.mean_ms / me.1.mean_ms))
    }
    fn datasets(&self) -> Vec<(Dataset, &'static str)> {
        let mut v: Vec<(Dataset, &'static str)> = Vec::new();
        for r in &self.end_to_end {
            if !v.iter().any(|(d, e)| *d == r.d && *e == r.elem) && r.times.is_some() {
                v.push((r.d, r.elem));
            }
        }
        v
    }
}

#[derive(serde::Serialize)]
struct KernelRow {
    dataset: String,
    r#type: &'static str,
    variant: &'static str,
    mb_moved: String,
    floor_us: String,
    warm_median_us: String,
    warm_min_us: String,
    warm_max_us: String,
    cold_median_us: String,
    slides_mean_us: String,
    cold_fraction_of_copy: String,
    worst_rel_err: String,
}

#[derive(serde::Serialize)]
struct EndToEndRow {
    dataset: String,
    r#type: &'static str,
    strategy: String,
    median_ms: String,
    min_ms: String,
    max_ms: String,
    slides_mean_ms: String,
    speedup_median: String,
    speedup_slides_method: String,
    speedup_registration_counted: String,
    speedup_allocations_counted: String,
    over_pinned_copy_of_a: String,
}

#[derive(serde::Serialize)]
struct SlidesRow {
    technique: &'static str,
    our_strategy: &'static str,
    dataset: String,
    slides_claim: String,
    ours_median: String,
    ours_slides_method: String,
    ours_kernels_only: String,
}

#[derive(serde::Serialize)]
struct ShapeRow {
    shape: String,
    fused_us: String,
    grid_barrier_us: String,
    atomics_us: String,
    cluster_us: String,
    cublas_us: String,
    best_fused: &'static str,
    speedup: String,
    best_of_copy: String,
}

#[derive(serde::Serialize)]
struct TargetRow {
    target: &'static str,
    required: &'static str,
    measured: String,
    met: &'static str,
}

#[derive(serde::Serialize)]
struct RuleRow {
    rule: &'static str,
    evidence: String,
}

#[derive(serde::Serialize)]
struct CeilingRow {
    quantity: String,
    value: String,
}

#[derive(serde::Serialize)]
struct SkippedRow {
    dataset: String,
    r#type: &'static str,
    what: &'static str,
    why: String,
}

/// The strategy of ours that each of the slides' techniques corresponds to.
pub const SLIDES_TO_OURS: [(&str, Strategy); 5] = [
    ("Pinned Memory", Strategy::PinnedBaseline),
    ("CUDA Streams", Strategy::StreamsWarpPerRow),
    ("Tiling - Global", Strategy::PageableTiled),
    ("UVM (no OPT)", Strategy::Unified),
    ("CUDA Streams (no OPT)", Strategy::StreamsThreadPerRow),
];

/// Writes every figure and table of the chapter and prints the summary: one line per target
/// and the number of checks behind them.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let pitched = pitched_table(run, r)?;
    if r.part == Part::Pitched {
        println!("{pitched}");
        return Ok(());
    }
    ceilings_table(run, r)?;
    kernels_table(run, r)?;
    end_to_end_table(run, r)?;
    slides_table(run, r)?;
    shapes_table(run, r)?;
    let targets = targets_table(run, r)?;
    playbook_table(run, r)?;
    skipped_table(run, r)?;
    occupancy::occupancy_table(run, r)?;
    host::one_time_table(run, r)?;
    host::unified_table(run, r)?;
    speedup_figure(run, r)?;
    breakdown_figure(run, r)?;
    bandwidth_figure(run, r)?;
    for t in &targets {
        println!(
            "target: {} — required {}, measured {}, met: {}",
            t.target, t.required, t.measured, t.met
        );
    }
    println!("{pitched}");
    println!(
        "{} checks at odd sizes, {} kernel and {} end-to-end measurements",
        r.odd_checks,
        r.kernels.len(),
        r.end_to_end.len()
    );
    Ok(())
}

/// `atax-ceilings`: the copy kernel and the copies of A, measured in the same run.
fn ceilings_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut ceilings = vec![CeilingRow {
        quantity: format!(
            "device copy kernel, {} MiB, L2 cold (read + write)",
            r.copy_bytes >> 20
        ),
        value: format!("{:.0} GB/s", r.copy_gbps),
    }];
    for t in &r.transfers {
        let gbps = |s: &Stats| t.bytes as f64 / (s.median_ms * 1e-3) / 1e9;
        ceilings.push(CeilingRow {
            quantity: format!(
                "H2D of A at {} ({}), pinned / pageable",
                t.d.label(),
                t.elem
            ),
            value: format!("{:.1} / {:.1} GB/s", gbps(&t.pinned), gbps(&t.pageable)),
        });
    }
    let title = "Ceilings measured in the same run";
    run.table("atax-ceilings", title, &[("l2", "cold for the copy kernel")], &ceilings)
}

/// `atax-kernels`: every kernel variant, A on the device, L2 warm and cold.
fn kernels_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let kernel_rows: Vec<KernelRow> = r
        .kernels
        .iter()
        .filter_map(|k| {
            let (w, c, s) = k.times.as_ref()?;
            let floor = floor_ms(k.bytes, r.copy_gbps);
            Some(KernelRow {
                dataset: k.d.label(),
                r#type: k.elem,
                variant: k.variant.name(),
                mb_moved: format!("{:.2}", k.bytes as f64 / 1e6),
                floor_us: us(floor),
                warm_median_us: us(w.median_ms),
                warm_min_us: us(w.min_ms),
                warm_max_us: us(w.max_ms),
                cold_median_us: us(c.median_ms),
                slides_mean_us: us(s.mean_ms),
                cold_fraction_of_copy: ratio(floor, c.median_ms),
                worst_rel_err: format!("{:.1e}", k.check.max_rel_err),
            })
        })
        .collect();
    let title = "Kernel times, A already on the device (L2 warm and cold)";
    let shown = ("warm and cold (both columns)", &KERNELS_SHOWN[..]);
    let datasets = r.kernels.iter().map(|k| &k.d);
    dataset_table(run, "atax-kernels", title, shown, datasets, true, &kernel_rows)
}

/// `atax-end-to-end`: every host strategy with its transfers.
fn end_to_end_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let over_copy = |d: &Dataset, elem: &str, ms: f64| {
        r.transfer(d.name, elem)
            .map(|t| ratio(ms, t.pinned.median_ms))
            .unwrap_or_else(|| "—".into())
    };
    let mut e2e_rows: Vec<EndToEndRow> = r
        .end_to_end
        .iter()
        .filter_map(|e| {
            let (m, s) = e.times.as_ref()?;
            let (sp, sp_slides) = r.e2e_speedup(e.d.name, e.elem, e.strategy)?;
            let counted = r.pinning_counted(e.d.name, e.elem, e.strategy);
            let show = |v: Option<f64>| v.map(|v| ratio(v, 1.0)).unwrap_or("—".into());
            Some(EndToEndRow {
                dataset: e.d.label(),
                r#type: e.elem,
                strategy: e.strategy.name().into(),
                median_ms: format!("{:.3}", m.median_ms),
                min_ms: format!("{:.3}", m.min_ms),
                max_ms: format!("{:.3}", m.max_ms),
                slides_mean_ms: format!("{:.3}", s.mean_ms),
                speedup_median: ratio(sp, 1.0),
                speedup_slides_method: ratio(sp_slides, 1.0),
                speedup_registration_counted: show(counted.map(|c| c.0)),
                speedup_allocations_counted: show(counted.map(|c| c.1)),
                over_pinned_copy_of_a: over_copy(&e.d, e.elem, m.median_ms),
            })
        })
        .collect();
    // The host buffer of A, priced as separate rows after each size's strategies.
    for (d, elem, c) in &r.host_costs {
        let at = e2e_rows
            .iter()
            .rposition(|row| row.dataset == d.label() && row.r#type == *elem)
            .map_or(e2e_rows.len(), |i| i + 1);
        let rows = host::COST_ROWS.map(|(what, pick)| {
            let st = pick(c);
            EndToEndRow {
                dataset: d.label(),
                r#type: elem,
                strategy: what.into(),
                median_ms: format!("{:.3}", st.median_ms),
                min_ms: format!("{:.3}", st.min_ms),
                max_ms: format!("{:.3}", st.max_ms),
                slides_mean_ms: "—".into(),
                speedup_median: "—".into(),
                speedup_slides_method: "—".into(),
                speedup_registration_counted: "—".into(),
                speedup_allocations_counted: "—".into(),
                over_pinned_copy_of_a: over_copy(d, elem, st.median_ms),
            }
        });
        e2e_rows.splice(at..at, rows);
    }
    let title =
        "End to end: copies in, kernels, y back; speedup over pageable + baseline";
    let shown = (AFTER_COPY, &END_TO_END_SHOWN[..]);
    let datasets = r.end_to_end.iter().map(|e| &e.d);
    dataset_table(run, "atax-end-to-end", title, shown, datasets, false, &e2e_rows)
}

/// `atax-slides`: the slides' claims next to our speedups.
fn slides_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut slides_rows = Vec::new();
    for (technique, ours) in SLIDES_TO_OURS {
        let claim = SLIDES_CLAIMS
            .iter()
            .find(|c| c.slides_name == technique)
            .map(|c| c.speedup);
        for (d, elem) in r.datasets() {
            let Some((sp, sp_slides)) = r.e2e_speedup(d.name, elem, ours) else {
                continue;
            };
            let kernels_only = match ours {
                Strategy::PageableTiled => r
                    .kernel(d.name, elem, KernelVariant::Baseline)
                    .zip(r.kernel(d.name, elem, KernelVariant::Tiled))
                    .map(|(b, t)| ratio(b.warm().median_ms, t.warm().median_ms))
                    .unwrap_or_else(|| "—".into()),
                _ => "—".into(),
            };
            slides_rows.push(SlidesRow {
                technique,
                our_strategy: ours.name(),
                dataset: key(&d, elem),
                slides_claim: if d.name == "EXTRALARGE" && elem == "double" {
                    claim.map(|c| ratio(c, 1.0)).unwrap_or_default()
                } else {
                    "—".into()
                },
                ours_median: ratio(sp, 1.0),
                ours_slides_method: ratio(sp_slides, 1.0),
                ours_kernels_only: kernels_only,
            });
        }
    }
    let title =
        "The slides' speedups (EXTRALARGE, double) next to ours, end to end over \
                 pageable + baseline";
    let shown = [&[("l2", AFTER_COPY)][..], &SLIDES_SHOWN].concat();
    run.table("atax-slides", title, &shown, &slides_rows)
}

/// The fused variants, in the order the chapter introduces them.
const FUSED_VARIANTS: [KernelVariant; 4] = [
    KernelVariant::Fused,
    KernelVariant::FusedOnce,
    KernelVariant::FusedAtomic,
    KernelVariant::FusedCluster,
];

/// One large float shape: the fastest fused variant (cold median) and cuBLAS, if both ran.
struct ShapeTimes<'r> {
    d: Dataset,
    by_variant: Vec<(KernelVariant, &'r KernelResult)>,
}

impl<'r> ShapeTimes<'r> {
    fn cold_ms(&self, v: KernelVariant) -> Option<f64> {
        let found = self.by_variant.iter().find(|(w, _)| *w == v);
        found.map(|(_, k)| k.cold().median_ms)
    }
    fn best_fused(&self) -> Option<&'r KernelResult> {
        let fused = self.by_variant.iter().filter(|(v, _)| FUSED_VARIANTS.contains(v));
        fastest(fused.map(|(_, k)| *k), KernelResult::cold)
    }
    /// cuBLAS's time over the fastest fused variant's, both L2 cold.
    fn speedup(&self) -> Option<f64> {
        Some(self.cold_ms(KernelVariant::Cublas)? / self.best_fused()?.cold().median_ms)
    }

    /// The cells every shape table shows: a variant's cold median (µs), the fastest fused
    /// variant's name, the speedup, and the fastest fused variant's fraction of the copy
    /// bandwidth; a dash for what did not run.
    fn cold_cell(&self, v: KernelVariant) -> String {
        self.cold_ms(v).map_or_else(|| "—".into(), us)
    }
    fn best_fused_cell(&self) -> &'static str {
        self.best_fused().map_or("—", |k| k.variant.name())
    }
    fn speedup_cell(&self) -> String {
        self.speedup().map_or_else(|| "—".into(), |x| format!("{x:.2}×"))
    }
    fn best_of_copy_cell(&self, copy_gbps: f64) -> String {
        self.best_fused().map_or_else(
            || "—".into(),
            |k| ratio(floor_ms(k.bytes, copy_gbps), k.cold().median_ms),
        )
    }
}

impl Results {
    /// The large float shapes: the book's square from the kernel measurements, then the
    /// tall, wide and odd ones.
    fn large_shapes(&self) -> Vec<ShapeTimes<'_>> {
        let big = LARGE_SQUARE.name;
        let square =
            self.kernels.iter().filter(|k| k.d.name == big && k.elem == "float");
        by_shape(square.chain(&self.shapes))
    }
}

/// The timed fused passes and cuBLAS of `results`, by dataset in order of appearance.
fn by_shape<'r>(
    results: impl Iterator<Item = &'r KernelResult>,
) -> Vec<ShapeTimes<'r>> {
    let mut shapes: Vec<ShapeTimes> = Vec::new();
    for k in results.filter(|k| k.times.is_some()) {
        let keep =
            FUSED_VARIANTS.contains(&k.variant) || k.variant == KernelVariant::Cublas;
        if !keep {
            continue;
        }
        match shapes.iter_mut().find(|s| s.d == k.d) {
            Some(s) => s.by_variant.push((k.variant, k)),
            None => {
                shapes.push(ShapeTimes { d: k.d, by_variant: vec![(k.variant, k)] })
            }
        }
    }
    shapes
}

/// `atax-shapes`: the fused variants and cuBLAS at every large float shape, L2 cold.
fn shapes_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let rows: Vec<ShapeRow> = r
        .large_shapes()
        .iter()
        .map(|s| ShapeRow {
            shape: s.d.label(),
            fused_us: s.cold_cell(KernelVariant::Fused),
            grid_barrier_us: s.cold_cell(KernelVariant::FusedOnce),
            atomics_us: s.cold_cell(KernelVariant::FusedAtomic),
            cluster_us: s.cold_cell(KernelVariant::FusedCluster),
            cublas_us: s.cold_cell(KernelVariant::Cublas),
            best_fused: s.best_fused_cell(),
            speedup: s.speedup_cell(),
            best_of_copy: s.best_of_copy_cell(r.copy_gbps),
        })
        .collect();
    let shown = [
        ("l2", "cold"),
        (
            "headers",
            "fused_us = fused, two launches (µs) | grid_barrier_us = fused, grid barrier (µs) \
             | atomics_us = fused, atomics (µs) | cluster_us = fused, cluster + atomics (µs) \
             | cublas_us = cuBLAS gemv ×2 (µs) | \
             best_fused = fastest fused | speedup = cuBLAS ÷ fastest fused | \
             best_of_copy = fastest fused, of copy",
        ),
    ];
    let title = "The fused passes and cuBLAS at large float shapes, L2 cold";
    run.table("atax-shapes", title, &shown, &rows)
}

#[derive(serde::Serialize)]
struct PitchedRow {
    shape: String,
    row_bytes: usize,
    fused_us: String,
    atomics_us: String,
    best_fused: &'static str,
    cublas_us: String,
    speedup: String,
    best_of_copy: String,
}

/// `atax-pitched`: the odd square shapes as allocated and pitched, the fastest fused pass
/// and cuBLAS, L2 cold; returns the console's summary line.
fn pitched_table(run: &Run, r: &Results) -> anyhow::Result<String> {
    let shapes = by_shape(r.pitched.iter());
    let rows: Vec<PitchedRow> = shapes
        .iter()
        .map(|s| PitchedRow {
            shape: s.d.label(),
            row_bytes: s.d.n * 4,
            fused_us: s.cold_cell(KernelVariant::Fused),
            atomics_us: s.cold_cell(KernelVariant::FusedAtomic),
            best_fused: s.best_fused_cell(),
            cublas_us: s.cold_cell(KernelVariant::Cublas),
            speedup: s.speedup_cell(),
            best_of_copy: s.best_of_copy_cell(r.copy_gbps),
        })
        .collect();
    let shown = [
        ("l2", "cold"),
        (
            "headers",
            "row_bytes = bytes per row | fused_us = fused, two launches (µs) | \
             atomics_us = fused, atomics (µs) | best_fused = fastest fused (every fused \
             variant) | cublas_us = cuBLAS gemv ×2 (µs) | speedup = cuBLAS ÷ fastest fused | \
             best_of_copy = fastest fused, of copy",
        ),
    ];
    let title =
        "Odd sides as allocated and with rows pitched to whole 128-byte lines, \
                 float, L2 cold";
    run.table("atax-pitched", title, &shown, &rows)?;
    let worst = |pitched: bool| {
        let of = shapes.iter().filter(|s| s.d.name.ends_with("pitched") == pitched);
        of.filter_map(|s| s.speedup()).min_by(f64::total_cmp)
    };
    Ok(match (worst(false), worst(true)) {
        (Some(plain), Some(pitched)) => format!(
            "odd sides: fastest fused vs cuBLAS gemv ×2 at worst {plain:.2}× as allocated, \
             {pitched:.2}× pitched ({} shapes)",
            shapes.len() / 2
        ),
        _ => "odd sides: no shape was timed both ways".to_string(),
    })
}

/// `atax-targets`: the chapter's targets, each computed from the results; returns them
/// for the console.
fn targets_table(run: &Run, r: &Results) -> anyhow::Result<Vec<TargetRow>> {
    let mut targets = Vec::new();
    let big = LARGE_SQUARE.name;
    let shapes = r.large_shapes();
    let ratios: Vec<(String, f64)> =
        shapes.iter().filter_map(|s| Some((s.d.label(), s.speedup()?))).collect();
    if let Some((worst, speedup)) =
        ratios.iter().min_by(|a, b| a.1.total_cmp(&b.1)).cloned()
    {
        targets.push(TargetRow {
            target: "fastest fused vs cuBLAS gemv ×2, every large float shape, L2 cold",
            required: "≥ 1.85×",
            measured: format!(
                "{speedup:.2}× at the worst shape ({worst}; {} shapes)",
                ratios.len()
            ),
            met: if speedup >= 1.85 { "yes" } else { "no" },
        });
    }
    let square = FUSED_VARIANTS.iter().filter_map(|&v| r.kernel(big, "float", v));
    if let Some(best) = fastest(square, KernelResult::warm) {
        let (w, c) = (best.warm(), best.cold());
        targets.push(TargetRow {
            target: "fused single pass, 16384² float",
            required: "≤ 361 µs",
            measured: format!(
                "{}: {} µs warm, {} µs cold ({} of copy bandwidth, cold)",
                best.variant.name(),
                us(w.median_ms),
                us(c.median_ms),
                ratio(floor_ms(best.bytes, r.copy_gbps), c.median_ms)
            ),
            met: if w.median_ms <= 0.361 { "yes (warm)" } else { "no" },
        });
    }
    let candidates = [
        KernelVariant::Fused,
        KernelVariant::FusedOnce,
        KernelVariant::FusedAtomic,
        KernelVariant::FusedCluster,
        KernelVariant::WarpPerRow,
        KernelVariant::Cublas,
        KernelVariant::Tiled,
    ];
    let timed = candidates.iter().filter_map(|&v| r.kernel("EXTRALARGE", "double", v));
    if let Some(best) = fastest(timed, KernelResult::warm) {
        let (w, c) = (best.warm(), best.cold());
        targets.push(TargetRow {
            target: "EXTRALARGE double, fastest kernel",
            required: "≤ 12 µs",
            measured: format!(
                "{}: {} µs warm, {} µs cold",
                best.variant.name(),
                us(w.median_ms),
                us(c.median_ms)
            ),
            met: if w.median_ms <= 0.012 { "yes (warm)" } else { "no" },
        });
    }
    if let Some(t) = r.transfer(big, "float") {
        let timed = r
            .end_to_end
            .iter()
            .filter(|e| e.d.name == big && e.elem == "float" && e.times.is_some());
        if let Some(best) = fastest(timed, EndToEndResult::timing) {
            let over = best.timing().median_ms / t.pinned.median_ms;
            targets.push(TargetRow {
                target: "end to end, 16384² float, best strategy",
                required: "≤ 1.10 × pinned H2D of A",
                measured: format!("{}: {over:.3} ×", best.strategy.name()),
                met: if over <= 1.10 { "yes" } else { "no" },
            });
        }
    }
    let l2 = [("l2", "as stated per row")];
    run.table("atax-targets", "The chapter's targets", &l2, &targets)?;
    Ok(targets)
}

/// `atax-playbook`: rules for memory-bound kernels, each with its evidence from this run.
fn playbook_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let dash = || "—".to_string();
    let big = LARGE_SQUARE.name;
    let big_e2e = |s| {
        r.e2e(big, "float", s)
            .map(|e| format!("{:.2} ms", e.timing().median_ms))
            .unwrap_or_else(dash)
    };
    let cold = |d: &str, elem: &str, v| {
        r.kernel(d, elem, v)
            .map(|k| format!("{} µs", us(k.cold().median_ms)))
            .unwrap_or_else(dash)
    };
    let fraction = |d: &str, elem: &str, v| {
        r.kernel(d, elem, v)
            .map(|k| ratio(floor_ms(k.bytes, r.copy_gbps), k.cold().median_ms))
            .unwrap_or_else(dash)
    };
    let pinned = |d: &str, elem: &str| {
        let plain = r.e2e_speedup(d, elem, Strategy::PinnedBaseline);
        let counted = r.pinning_counted(d, elem, Strategy::PinnedBaseline);
        match (plain, counted) {
            (Some((sp, _)), Some((reg, alloc))) => format!(
                "{d} {elem}: {sp:.2}× without the cost of pinning, {reg:.2}× with \
                 cuMemHostRegister counted, {alloc:.2}× with both allocations counted"
            ),
            _ => format!("{d} {elem}: —"),
        }
    };
    let y_alone = |d: &str, elem: &str| {
        let one = |k: YAloneKernel| {
            r.y_alone
                .iter()
                .find(|y| y.d.name == d && y.elem == elem && y.kernel == k)
                .and_then(|y| {
                    let (_, c) = y.times.as_ref()?;
                    Some(format!(
                        "{} warps on {} SMs, {} µs",
                        y.launch.warps(),
                        y.launch.busy_sms(r.sms),
                        us(c.median_ms)
                    ))
                })
                .unwrap_or_else(dash)
        };
        format!(
            "{d} {elem}, kernel 2 alone, L2 cold: thread per column {}; split rows {}",
            one(YAloneKernel::ThreadPerCol),
            one(YAloneKernel::SplitRows)
        )
    };
    let (xl, xe) = ("EXTRALARGE", "double");
    let unified: Vec<String> = r
        .datasets()
        .into_iter()
        .filter_map(|(d, elem)| {
            let p = r.e2e(d.name, elem, Strategy::PageableBaseline)?.timing();
            let u = r.e2e(d.name, elem, Strategy::Unified)?.timing();
            (u.max_ms < p.min_ms).then(|| key(&d, elem))
        })
        .collect();
    let unified_sizes = r.datasets().len();
    let rules = vec![
        RuleRow {
            rule: "1. Find out where the time goes first: for one ATAX the copy of A \
                   dwarfs the kernels.",
            evidence: format!(
                "16384² float: pinned copy of A {}; baseline kernels {} (cold)",
                r.transfer(big, "float")
                    .map(|t| format!("{:.2} ms", t.pinned.median_ms))
                    .unwrap_or_else(dash),
                cold(big, "float", KernelVariant::Baseline)
            ),
        },
        RuleRow {
            rule: "2. Pinned memory speeds up every copy from it, but pinning costs time \
                   of its own: count it once per buffer, and pin buffers that are copied \
                   more than once.",
            evidence: format!("{}; {}", pinned(xl, xe), pinned(big, "float")),
        },
        RuleRow {
            rule: "3. Launch enough warps before anything else: a kernel whose grid \
                   cannot keep enough loads in flight is slow however its warps read.",
            evidence: format!(
                "{}; two-pass, L2 cold: baseline {}, pre-transposed {}, \
                 pre-transposed, split {}, warp per row {}, warp per row, split y {}",
                y_alone(xl, xe),
                cold(xl, xe, KernelVariant::Baseline),
                cold(xl, xe, KernelVariant::PreTransposed),
                cold(xl, xe, KernelVariant::PreTransposedSplit),
                cold(xl, xe, KernelVariant::WarpPerRow),
                cold(xl, xe, KernelVariant::WarpPerRowSplitY)
            ),
        },
        RuleRow {
            rule: "4. Where x lives hardly matters: the bytes of A are what cost.",
            evidence: format!(
                "16384² float, cold: baseline {}, x in constant {}",
                cold(big, "float", KernelVariant::Baseline),
                cold(big, "float", KernelVariant::XConst)
            ),
        },
        RuleRow {
            rule: "5. Read A once, and count every byte the single pass adds (its \
                   partial sums).",
            evidence: format!(
                "16384² float, cold: fused {} ({} of copy bandwidth), cuBLAS gemv ×2 {}",
                cold(big, "float", KernelVariant::Fused),
                fraction(big, "float", KernelVariant::Fused),
                cold(big, "float", KernelVariant::Cublas)
            ),
        },
        RuleRow {
            rule: "6. Streams hide kernels behind copies only when the kernels are short \
                   next to the copies.",
            evidence: format!(
                "16384² float end to end: pinned + fused {}, streams + fused {}, \
                 streams + thread per row {}",
                big_e2e(Strategy::PinnedFused),
                big_e2e(Strategy::StreamsFused),
                big_e2e(Strategy::StreamsThreadPerRow)
            ),
        },
        RuleRow {
            rule: "7. Do not count on unified memory without a prefetch to beat pageable \
                   copies; a prefetch turns its page faults into one bulk copy.",
            evidence: format!(
                "unified without prefetch beats pageable in every repetition at {} of \
                 {unified_sizes} sizes ({}); EXTRALARGE double, speedup over pageable: \
                 unified + prefetch {}",
                unified.len(),
                if unified.is_empty() { "none".into() } else { unified.join(", ") },
                r.e2e_speedup(xl, xe, Strategy::UnifiedPrefetch)
                    .map(|(m, _)| ratio(m, 1.0))
                    .unwrap_or_else(dash)
            ),
        },
    ];
    run.table("atax-playbook", "The playbook, measured", &[("l2", AFTER_COPY)], &rules)
}

/// `atax-skipped`: what could not run at a size, and why.
fn skipped_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let skipped: Vec<SkippedRow> = r
        .skipped
        .iter()
        .map(|s| SkippedRow {
            dataset: s.d.label(),
            r#type: s.elem,
            what: s.what,
            why: s.why.clone(),
        })
        .collect();
    let title = "What could not run, and why";
    let empty =
        "Nothing was skipped: every variant and every strategy ran at every dataset.";
    run.table("atax-skipped", title, &[("l2", "n/a"), ("empty", empty)], &skipped)
}

/// `atax-speedup`: end-to-end speedup per strategy and dataset.
fn speedup_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut speedups = Vec::new();
    for (d, elem) in r.datasets() {
        for s in Strategy::ALL.into_iter().filter(|&s| s != Strategy::PageableBaseline)
        {
            if let (Some(base), Some(e)) = (
                r.e2e(d.name, elem, Strategy::PageableBaseline),
                r.e2e(d.name, elem, s),
            ) {
                let base = base.timing().median_ms;
                speedups.push(Point::over(s.name(), key(&d, elem), base, e.timing()));
            }
        }
    }
    // The line at 1 is the baseline the speedups are taken over.
    let spec = per_precision(
        "End-to-end speedup over pageable + baseline",
        "speedup (×)",
        "1× (no speedup)",
    )
    .y_ticks(Ticks::Dense);
    figure_if_any(run, "atax-speedup", AFTER_COPY, &spec, &speedups)
}

/// `atax-breakdown`: where the time goes, the copy of A next to the kernels.
fn breakdown_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut breakdown = Vec::new();
    for (d, elem) in r.datasets() {
        let x = key(&d, elem);
        if let Some(t) = r.transfer(d.name, elem) {
            breakdown.push(Point::ms("H2D of A, pageable", &x, &t.pageable));
            breakdown.push(Point::ms("H2D of A, pinned", &x, &t.pinned));
        }
        for v in [KernelVariant::Baseline, KernelVariant::Fused] {
            if let Some(k) = r.kernel(d.name, elem, v) {
                breakdown.push(Point::ms(
                    &format!("kernels: {}", v.name()),
                    &x,
                    k.warm(),
                ));
            }
        }
    }
    // One panel per dataset, each on its own scale: the datasets span six decades of time.
    let spec = Spec::bar(
        "Copy of A versus kernels (kernels L2 warm)",
        "precision (one panel per dataset)",
        "ms",
    )
    .panels(PanelBy::XFirstWord, 3)
    .independent_y();
    figure_if_any(run, "atax-breakdown", "warm", &spec, &breakdown)
}

/// `atax-bandwidth`: the fraction of the copy bandwidth each variant reaches, L2 cold.
fn bandwidth_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut fractions = Vec::new();
    for k in &r.kernels {
        let Some((_, c, _)) = &k.times else { continue };
        if k.d.matrix_bytes(if k.elem == "float" { 4 } else { 8 }) < (8 << 20) {
            continue; // below 8 MB the launch, not the bandwidth, sets the time
        }
        let floor = floor_ms(k.bytes, r.copy_gbps);
        fractions.push(Point::over(k.variant.name(), key(&k.d, k.elem), floor, c));
    }
    let spec = per_precision(
        "Bytes the variant must move / copy bandwidth, per kernel time (L2 cold)",
        "fraction of copy bandwidth",
        "copy bandwidth",
    );
    figure_if_any(run, "atax-bandwidth", "cold", &spec, &fractions)
}

/// A bar chart of ratios by dataset, one panel per precision, with a line at 1 named
/// `at_one`.
fn per_precision(title: &str, y_label: &str, at_one: &str) -> Spec {
    Spec::bar(title, "dataset", y_label).panels(PanelBy::XLastWord, 1).ref_line(
        Axis::Y,
        "1",
        at_one,
    )
}

/// Writes figure `stem` (measured with L2 `l2`) where the run measured any of its points.
fn figure_if_any(
    run: &Run,
    stem: &str,
    l2: &str,
    spec: &Spec,
    points: &[Point],
) -> anyhow::Result<()> {
    if points.is_empty() {
        return Ok(());
    }
    run.figure(stem, &[("l2", l2)], spec, points)
}
