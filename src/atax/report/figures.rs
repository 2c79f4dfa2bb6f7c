//! The chapter's figures: end-to-end speedups, where the time goes, and the fraction of
//! the read ceiling each kernel reaches.

use crate::harness::ceiling;
use crate::harness::plot::{Axis, PanelBy, Point, Spec, Ticks};
use crate::harness::Run;

use super::super::measure::{KernelVariant, Results, Strategy};
use super::{key, AFTER_COPY};

/// The strategies Figure 7.5 draws: one of each way of getting A to the GPU, and the
/// kernels that change nothing next to the copy; the two streamed baselines are in
/// Table 7.9 and the record.
const SPEEDUP_SHOWN: [Strategy; 6] = [
    Strategy::PinnedBaseline,
    Strategy::Unified,
    Strategy::UnifiedPrefetch,
    Strategy::PageableTiled,
    Strategy::PinnedFused,
    Strategy::StreamsFused,
];

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
    let spec = SPEEDUP_SHOWN.iter().fold(
        per_precision(
            "End-to-end speedup over pageable + baseline",
            "speedup (×)",
            "1× (no speedup)",
        )
        .y_ticks(Ticks::Dense),
        |spec, s| spec.show(s.name()),
    );
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
    // One row per dataset on one logarithmic scale: the datasets span six decades of time,
    // and a panel of its own for each would show the smallest ones' noise as their story.
    let spec = Spec::bar("Copy of A versus kernels (kernels L2 warm)", "dataset", "ms")
        .log_y();
    figure_if_any(run, "atax-breakdown", "warm", &spec, &breakdown)
}

/// The variants Figure 7.2 draws: the baseline, where x lives, one of the slides' fixes with
/// and without the split kernel 2, the fused pass and cuBLAS. Table 7.2 and the record hold
/// every variant.
const BANDWIDTH_SHOWN: [KernelVariant; 6] = [
    KernelVariant::Baseline,
    KernelVariant::XConst,
    KernelVariant::WarpPerRow,
    KernelVariant::WarpPerRowSplitY,
    KernelVariant::Fused,
    KernelVariant::Cublas,
];

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
    let spec = BANDWIDTH_SHOWN.iter().fold(
        per_precision(
            "Bytes the variant must move / read ceiling, per kernel time (L2 cold)",
            "fraction of the read ceiling",
            "read ceiling",
        ),
        |spec, v| spec.show(v.name()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Figures 7.2 and 7.5 were drawn with the series this module shows, each of which the
    /// committed record holds: a change to the list changes the record.
    #[test]
    fn the_books_figures_show_the_series_the_report_writes() {
        let cases: [(&str, Vec<&str>); 2] = [
            ("atax-bandwidth", BANDWIDTH_SHOWN.iter().map(|v| v.name()).collect()),
            ("atax-speedup", SPEEDUP_SHOWN.iter().map(|s| s.name()).collect()),
        ];
        for (stem, shown) in cases {
            let record = crate::harness::record::book_record(stem);
            assert_eq!(
                record.meta.get("series_shown"),
                Some(shown.join(" | ").as_str())
            );
            let series = record.column("series").unwrap();
            for name in shown {
                assert!(
                    record.rows.iter().any(|r| r[series] == name),
                    "{stem}: {name}"
                );
            }
        }
    }
}
