//! The tables of the measurements themselves: the ceilings, every kernel, every host
//! strategy end to end, the slides' claims beside ours, and what could not run.

use crate::harness::ceiling;
use crate::harness::format::{ratio, us};
use crate::harness::skipped::Skipped;
use crate::harness::{Run, Stats};

use super::super::datasets::Dataset;
use super::super::measure::{KernelVariant, Results, Strategy};
use super::super::reference::SLIDES_CLAIMS;
use super::{dataset_table, host, key, AFTER_COPY, SLIDES_TO_OURS};

/// How `atax-kernels` is shown (see `harness::table`): plain headers with units, the
/// spread of the repetitions beside the median, the fraction of the read ceiling, and of the
/// copy too where `copy_apart` (the two ceilings differ by more than 2%).
pub(super) fn kernels_shown(copy_apart: bool) -> [(&'static str, String); 2] {
    let copy = if copy_apart { " | cold_fraction_of_copy" } else { "" };
    [
        (
            "headers",
            "mb_moved = MB moved | floor_us = floor at the read ceiling (µs) | \
             warm_median_us = warm, median (µs) | warm_min_us = warm, fastest (µs) | \
             warm_max_us = warm, slowest (µs) | cold_median_us = cold, median (µs) | \
             slides_mean_us = slides' method (µs) | \
             cold_fraction_of_read = of read ceiling, cold | \
             cold_fraction_of_copy = of copy, cold | \
             worst_rel_err = worst relative error"
                .into(),
        ),
        (
            "columns",
            format!(
                "{{dataset}}, {{type}} = dataset | variant | floor_us | warm_median_us | \
                 {{warm_min_us}}–{{warm_max_us}} = warm, fastest–slowest (µs) | \
                 cold_median_us | slides_mean_us | cold_fraction_of_read{copy}"
            ),
        ),
    ]
}

/// How `atax-end-to-end` is shown (see `harness::table`).
pub(super) const END_TO_END_SHOWN: [(&str, &str); 2] = [
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
pub(super) const SLIDES_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "technique = technique (slides) | our_strategy = our strategy | \
         slides_claim = slides' speedup | ours_median = our speedup, median | \
         ours_slides_method = our speedup, slides' method | \
         ours_kernels_only = our speedup, kernels only",
    ),
    ("fold", "dataset = EXTRALARGE double"),
];

#[derive(serde::Serialize)]
pub(super) struct CeilingRow {
    quantity: String,
    value: String,
}

/// `atax-ceilings`: the device-memory ceilings and the copies of A, measured in the same
/// run.
pub(super) fn ceilings_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let c = &r.ceilings;
    let mib = c.bytes >> 20;
    let device = |quantity: String, gbps: f64| CeilingRow {
        quantity,
        value: format!("{gbps:.0} GB/s"),
    };
    let mut ceilings = vec![
        device(
            format!("device copy ({}), {mib} MiB, L2 cold (read + write)", c.copy_by),
            c.copy,
        ),
        device(format!("device read-only kernel, {mib} MiB, L2 cold"), c.read),
        device(format!("device write-only kernel, {mib} MiB, L2 cold"), c.write),
    ];
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
    let l2 = [("l2", "cold for the device-memory ceilings")];
    run.table("atax-ceilings", title, &l2, &ceilings)
}

#[derive(serde::Serialize)]
pub(super) struct KernelRow {
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
    cold_fraction_of_read: String,
    cold_fraction_of_copy: String,
    worst_rel_err: String,
}

/// `atax-kernels`: every kernel variant, A on the device, L2 warm and cold.
pub(super) fn kernels_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let kernel_rows: Vec<KernelRow> = r
        .kernels
        .iter()
        .filter_map(|k| {
            let (w, c, s) = k.times.as_ref()?;
            let floor = r.floor_ms(k.bytes);
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
                cold_fraction_of_read: r.of_read(k.bytes, c.median_ms),
                cold_fraction_of_copy: r.of_copy(k.bytes, c.median_ms),
                worst_rel_err: format!("{:.1e}", k.check.max_rel_err),
            })
        })
        .collect();
    let title = "Kernel times, A already on the device (L2 warm and cold)";
    let (view, ceilings) =
        (kernels_shown(r.ceilings.read_apart_from_copy()), r.ceilings.meta());
    let shown = ceiling::with_meta(&[], &view);
    let shown = [shown, ceiling::with_meta(&[], &ceilings)].concat();
    let datasets = r.kernels.iter().map(|k| &k.d);
    let shown = ("warm and cold (both columns)", &shown[..]);
    dataset_table(run, "atax-kernels", title, shown, datasets, true, &kernel_rows)
}

#[derive(serde::Serialize)]
pub(super) struct EndToEndRow {
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

/// `atax-end-to-end`: every host strategy with its transfers.
pub(super) fn end_to_end_table(run: &Run, r: &Results) -> anyhow::Result<()> {
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

#[derive(serde::Serialize)]
pub(super) struct SlidesRow {
    technique: &'static str,
    our_strategy: &'static str,
    dataset: String,
    slides_claim: String,
    ours_median: String,
    ours_slides_method: String,
    ours_kernels_only: String,
}

/// `atax-slides`: the slides' claims next to our speedups.
pub(super) fn slides_table(run: &Run, r: &Results) -> anyhow::Result<()> {
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

/// `atax-skipped`: what could not run at a size, and why (the harness's table of skips,
/// which the comparison page reads back). The cluster pass on a GPU without clusters is a
/// row at every size it would have run.
pub(super) fn skipped_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let skipped: Vec<Skipped> = r
        .skipped
        .iter()
        .map(|s| Skipped {
            section: s.what.into(),
            at: format!("{}, {}", s.d.label(), s.elem),
            why: s.why.clone(),
        })
        .collect();
    crate::harness::skipped::record(run, crate::atax::SKIPPED_STEM, &skipped)
}
