//! `atax-occupancy`: kernel 2 alone, with the warps its launch puts on each SM and the
//! bytes those warps can request at once, next to what device memory needs in flight:
//! the latency of one load (measured by the memory-spaces chapter on the same GPU) times
//! the read ceiling of this run (only loads wait for their data).

use std::path::PathBuf;

use crate::harness::ceiling;
use crate::harness::format::us;
use crate::harness::record;
use crate::harness::Run;

use super::super::measure::{Results, YAloneKernel};
use super::dataset_table;

/// The stem of the memory-spaces chapter's pointer chase.
const LATENCY_STEM: &str = "memory_spaces-latency";

/// The latency of one load from device memory: the memory-spaces chapter's chase over its
/// largest global footprint, read from its CSV in this run's folder, else in the book's
/// `figures/data/`, and only if it was measured on a GPU of the same name. Returns the
/// nanoseconds and where they came from.
fn device_latency_ns(run: &Run) -> Option<(f64, String)> {
    let gpu = run.meta.get("gpu")?;
    let candidates = [run.out.join("data"), PathBuf::from("figures").join("data")];
    for dir in candidates {
        let path = dir.join(format!("{LATENCY_STEM}.csv"));
        let Ok(rec) = record::read_csv(&path) else { continue };
        if rec.meta.get("gpu") != Some(gpu) {
            continue;
        }
        let (series, x, y) =
            (rec.column("series").ok()?, rec.column("x").ok()?, rec.column("y").ok()?);
        let deepest = rec
            .rows
            .iter()
            .filter(|row| row[series].starts_with("global"))
            .filter_map(|row| {
                Some((row[x].parse::<f64>().ok()?, row[y].parse::<f64>().ok()?))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        let commit = rec.meta.get("commit").unwrap_or("?");
        let source = format!(
            "{LATENCY_STEM} (global, footprint {:.0} MiB, commit {commit}): {:.0} ns",
            deepest.0 / f64::from(1u32 << 20),
            deepest.1
        );
        return Some((deepest.1, source));
    }
    None
}

#[derive(serde::Serialize)]
struct OccupancyRow {
    dataset: String,
    r#type: &'static str,
    kernel: &'static str,
    blocks: u64,
    warps: u64,
    busy_sms: u64,
    warps_per_busy_sm: u64,
    kb_per_load_round: String,
    kb_needed_in_flight: String,
    loads_per_thread_needed: String,
    mb_moved: String,
    warm_median_us: String,
    cold_median_us: String,
    cold_fraction_of_read: String,
    cold_fraction_of_copy: String,
}

/// How `atax-occupancy` is shown (see `harness::table`): the fraction of the read ceiling,
/// and of the copy too where `copy_apart` (the two differ by more than 2%).
fn shown(copy_apart: bool) -> [(&'static str, String); 2] {
    let copy = if copy_apart { " | cold_fraction_of_copy" } else { "" };
    [
        (
            "headers",
            "blocks = blocks | warps = warps | busy_sms = SMs with a block | \
             warps_per_busy_sm = warps per busy SM | \
             kb_per_load_round = KB per load round | \
             kb_needed_in_flight = KB in flight needed (latency × read ceiling) | \
             loads_per_thread_needed = loads needed per thread | \
             mb_moved = MB moved | warm_median_us = warm (µs) | \
             cold_median_us = cold (µs) | \
             cold_fraction_of_read = of read ceiling, cold | \
             cold_fraction_of_copy = of copy, cold"
                .into(),
        ),
        (
            "columns",
            format!(
                "{{dataset}}, {{type}} = dataset | kernel | warps | \
                 {{warps_per_busy_sm}} on {{busy_sms}} = warps per SM, on SMs | \
                 kb_per_load_round | loads_per_thread_needed | warm_median_us | \
                 cold_median_us | cold_fraction_of_read{copy}"
            ),
        ),
    ]
}

pub(super) fn occupancy_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let latency = device_latency_ns(run);
    // Little's law: bytes in flight = latency × bandwidth (ns × GB/s = bytes), at the read
    // ceiling: kernel 2's traffic is loads, and only loads wait for their data.
    let needed = latency.as_ref().map(|(ns, _)| ns * r.ceilings.read);
    let rows: Vec<OccupancyRow> = r
        .y_alone
        .iter()
        .filter_map(|y| {
            let (w, c) = y.times.as_ref()?;
            let round = y.launch.bytes_per_load_round(r.sms, y.elem_bytes);
            Some(OccupancyRow {
                dataset: y.d.label(),
                r#type: y.elem,
                kernel: y.kernel.name(),
                blocks: y.launch.blocks,
                warps: y.launch.warps(),
                busy_sms: y.launch.busy_sms(r.sms),
                warps_per_busy_sm: y.launch.warps_per_busy_sm(r.sms),
                kb_per_load_round: format!("{:.1}", round as f64 / 1e3),
                kb_needed_in_flight: needed
                    .map(|b| format!("{:.0}", b / 1e3))
                    .unwrap_or_else(|| "—".into()),
                loads_per_thread_needed: needed
                    .map(|b| format!("{:.1}", b / round.max(1) as f64))
                    .unwrap_or_else(|| "—".into()),
                mb_moved: format!("{:.2}", y.bytes as f64 / 1e6),
                warm_median_us: us(w.median_ms),
                cold_median_us: us(c.median_ms),
                cold_fraction_of_read: r.of_read(y.bytes, c.median_ms),
                cold_fraction_of_copy: r.of_copy(y.bytes, c.median_ms),
            })
        })
        .collect();
    let latency_key = latency
        .map(|(_, source)| source)
        .unwrap_or_else(|| format!("not found: no {LATENCY_STEM}.csv of this GPU"));
    let (sms, kernels) =
        (r.sms.to_string(), YAloneKernel::ALL.map(|k| k.name()).join(" | "));
    let keys = [
        ("latency", latency_key.as_str()),
        ("sms", sms.as_str()),
        ("kernels", kernels.as_str()),
    ];
    let (view, ceilings) =
        (shown(r.ceilings.read_apart_from_copy()), r.ceilings.meta());
    let title = "Kernel 2 alone: warps per SM, bytes per load round and time";
    let shown =
        [ceiling::with_meta(&keys, &ceilings), ceiling::with_meta(&[], &view)].concat();
    let datasets = r.y_alone.iter().map(|y| &y.d);
    let l2 = ("warm and cold (both columns)", &shown[..]);
    dataset_table(run, "atax-occupancy", title, l2, datasets, true, &rows)
}
