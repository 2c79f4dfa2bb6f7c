//! The chapter's figures: end-to-end speedups, where the time goes, and the fraction of
//! the read ceiling each kernel reaches.

use crate::harness::ceiling;
use crate::harness::plot::{Axis, PanelBy, Point, Spec, Ticks};
use crate::harness::Run;

use super::super::measure::{KernelVariant, Results, Strategy};
use super::{key, AFTER_COPY};

/// `atax-speedup`: end-to-end speedup per strategy and dataset.
pub(super) fn speedup_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
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
pub(super) fn breakdown_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
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

/// `atax-bandwidth`: the fraction of the read ceiling each variant reaches, L2 cold (its
/// bytes are nearly all reads); the record says all three ceilings.
pub(super) fn bandwidth_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut fractions = Vec::new();
    for k in &r.kernels {
        let Some((_, c, _)) = &k.times else { continue };
        if k.d.matrix_bytes(if k.elem == "float" { 4 } else { 8 }) < (8 << 20) {
            continue; // below 8 MB the launch, not the bandwidth, sets the time
        }
        let floor = r.floor_ms(k.bytes);
        fractions.push(Point::over(k.variant.name(), key(&k.d, k.elem), floor, c));
    }
    let spec = per_precision(
        "Bytes the variant must move / read ceiling, per kernel time (L2 cold)",
        "fraction of the read ceiling",
        "read ceiling",
    );
    if fractions.is_empty() {
        return Ok(());
    }
    let ceilings = r.ceilings.meta();
    let meta = ceiling::with_meta(&[("l2", "cold")], &ceilings);
    run.figure("atax-bandwidth", &meta, &spec, &fractions)
}

/// A bar chart of ratios by dataset, one panel per precision, with a line at 1 named
/// `at_one`.
pub(super) fn per_precision(title: &str, y_label: &str, at_one: &str) -> Spec {
    Spec::bar(title, "dataset", y_label).panels(PanelBy::XLastWord, 1).ref_line(
        Axis::Y,
        "1",
        at_one,
    )
}

/// Writes figure `stem` (measured with L2 `l2`) where the run measured any of its points.
pub(super) fn figure_if_any(
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
