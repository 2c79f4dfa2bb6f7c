//! The chapter's figures and tables, computed from the measurements alone, and the console
//! summary. Here: what the tables share and [`report()`], which writes them all; the tables
//! of the measurements are in `tables`, the shapes in `shapes`, the targets and the
//! playbook in `targets`, the figures in `figures`, the host side in `host` and the
//! occupancy in `occupancy`.

use crate::harness::format::ratio;
use crate::harness::{Run, Stats};

use super::datasets::{floor_ms, Dataset, POLYBENCH};
use super::measure::{
    EndToEndResult, HostCosts, KernelResult, KernelVariant, Part, Results, Strategy,
    Transfer,
};

mod figures;
mod host;
mod occupancy;
mod shapes;
mod tables;
mod targets;

/// The `l2` key of what ran after the copies of A.
const AFTER_COPY: &str =
    "warm (the copies of A just wrote it; the part that fits stays in L2)";

fn key(d: &Dataset, elem: &str) -> String {
    format!("{} {}", d.name, elem)
}

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
    /// The least time to move `bytes` at the read ceiling: the floor of an ATAX kernel,
    /// whose bytes are nearly all reads.
    fn floor_ms(&self, bytes: u64) -> f64 {
        floor_ms(bytes, self.ceilings.read)
    }
    /// The fraction of the read ceiling a kernel moving `bytes` in `ms` reaches.
    fn of_read(&self, bytes: u64, ms: f64) -> String {
        ratio(self.floor_ms(bytes), ms)
    }
    /// The fraction of the copy ceiling the same kernel reaches.
    fn of_copy(&self, bytes: u64, ms: f64) -> String {
        ratio(floor_ms(bytes, self.ceilings.copy), ms)
    }
    /// `of_read`, and `of_copy` beside it where the two ceilings are apart.
    fn of_ceilings(&self, bytes: u64, ms: f64) -> String {
        let read = self.of_read(bytes, ms);
        if self.ceilings.read_apart_from_copy() {
            format!("{read} of read bandwidth, {} of copy", self.of_copy(bytes, ms))
        } else {
            format!("{read} of read bandwidth")
        }
    }
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
    let pitched = shapes::pitched_table(run, r)?;
    if r.part == Part::Pitched {
        println!("{pitched}");
        return Ok(());
    }
    tables::ceilings_table(run, r)?;
    tables::kernels_table(run, r)?;
    tables::end_to_end_table(run, r)?;
    tables::slides_table(run, r)?;
    shapes::shapes_table(run, r)?;
    let targets = targets::targets_table(run, r)?;
    targets::playbook_table(run, r)?;
    tables::skipped_table(run, r)?;
    occupancy::occupancy_table(run, r)?;
    host::one_time_table(run, r)?;
    host::unified_table(run, r)?;
    figures::speedup_figure(run, r)?;
    figures::breakdown_figure(run, r)?;
    figures::bandwidth_figure(run, r)?;
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
