//! The access patterns: strides, granularity, misaligned starts and particle layouts,
//! measured beside what the sector model predicts, and one warp's first load of each.

use crate::harness::ceiling::with_meta;
use crate::harness::plot::{Point, Spec};
use crate::harness::Run;

use super::super::measure::{fetch_model_fraction, Results};
use super::super::patterns::{type_name, Pattern};
use super::super::reference::PARTICLE_BYTES;
use super::{whole_percent, L2_COLD};

#[derive(serde::Serialize)]
pub(super) struct PatternRow {
    pub(super) pattern: String,
    #[serde(rename = "bytes asked")]
    pub(super) requested: u64,
    #[serde(rename = "sectors (lines)")]
    pub(super) sectors: String,
    #[serde(rename = "bytes moved")]
    pub(super) moved: u64,
    pub(super) efficiency: String,
    pub(super) predicted: String,
    pub(super) measured: String,
}

/// The per-pattern table: one warp's first load computed, the whole kernel predicted and
/// measured.
pub(super) fn pattern_rows(r: &Results) -> anyhow::Result<Vec<PatternRow>> {
    let mut rows = Vec::new();
    for pattern in Pattern::table() {
        let request = pattern.first_load();
        rows.push(PatternRow {
            pattern: pattern.label(),
            requested: request.requested_bytes,
            sectors: format!("{} ({})", request.sectors, request.lines),
            moved: request.moved_bytes(),
            efficiency: whole_percent(request.efficiency()),
            predicted: whole_percent(pattern.predicted_fraction()),
            measured: whole_percent(
                r.measured(&pattern)?.gbps().median / r.ceiling.median,
            ),
        });
    }
    Ok(rows)
}

pub(super) fn predicted_point(series: &str, x: impl ToString, fraction: f64) -> Point {
    Point::new(series, x, fraction, fraction, fraction)
}

/// The access patterns: strides, granularity, misaligned starts and particle layouts
/// (figures), and one warp's first load of each pattern (`coalescing-patterns`).
pub(super) fn write_access(run: &Run, r: &Results) -> anyhow::Result<()> {
    let fraction = "fraction of the copy ceiling";
    let ceiling = r.ceiling_note();
    let one_way = r.one_way_ceilings();

    // Strides: measured and predicted, floats and doubles.
    let mut points = Vec::new();
    for elem_bytes in [4u64, 8] {
        let name = type_name(elem_bytes);
        for &stride in &r.strides {
            let pattern = Pattern::Affine { elem_bytes, stride, offset: 0 };
            points.push(r.fraction_point(
                &format!("{name}, measured"),
                stride,
                r.measured(&pattern)?,
            ));
        }
        for &stride in &r.strides {
            let pattern = Pattern::Affine { elem_bytes, stride, offset: 0 };
            points.push(predicted_point(
                &format!("{name}, predicted"),
                stride,
                pattern.predicted_fraction(),
            ));
        }
    }
    run.figure(
        "coalescing-stride",
        &with_meta(
            &[
                ("l2", L2_COLD),
                ("source_bytes", &r.sweep_bytes.to_string()),
                ("ceiling", &ceiling),
            ],
            &one_way,
        ),
        &Spec::line(
            "Strided loads, contiguous stores: measured and predicted",
            "stride (elements)",
            fraction,
        )
        .log_x(),
        &points,
    )?;

    write_granularity_figure(run, r)?;

    // Misaligned starts: measured and both predictions.
    let offset_pattern = |offset| Pattern::Affine { elem_bytes: 4, stride: 1, offset };
    let mut points = Vec::new();
    for &offset in &r.offsets {
        let m = r
            .misaligned
            .get(&offset_pattern(offset))
            .ok_or_else(|| anyhow::anyhow!("offset {offset} was not measured"))?;
        points.push(r.fraction_point("measured", offset, m));
    }
    for &offset in &r.offsets {
        points.push(predicted_point(
            "predicted, sectors per request",
            offset,
            offset_pattern(offset).traffic().per_request_fraction(),
        ));
    }
    for &offset in &r.offsets {
        points.push(predicted_point(
            "predicted, distinct sectors",
            offset,
            offset_pattern(offset).traffic().dram_fraction(),
        ));
    }
    run.figure(
        "coalescing-offset",
        &with_meta(
            &[
                ("l2", L2_COLD),
                ("source_bytes", &r.offset_bytes.to_string()),
                ("ceiling", &ceiling),
            ],
            &one_way,
        ),
        &Spec::line(
            "Float loads starting k elements after a 128-byte boundary",
            "start offset k (floats)",
            fraction,
        )
        .y_from_zero(),
        &points,
    )?;

    // Particles.
    let aos = Pattern::DriftAos { record_bytes: PARTICLE_BYTES };
    let mut points = Vec::new();
    // The struct of arrays first: the legend sits at the upper right.
    for (label, pattern) in [
        ("struct of arrays", Pattern::DriftSoa),
        ("array of structs (28-byte records)", aos),
    ] {
        points.push(r.fraction_point("measured", label, r.measured(&pattern)?));
        points.push(predicted_point(
            "predicted (distinct sectors)",
            label,
            pattern.predicted_fraction(),
        ));
    }
    run.figure(
        "coalescing-layout",
        &with_meta(
            &[
                ("l2", L2_COLD),
                ("particles", &r.particles.to_string()),
                ("ceiling", &ceiling),
            ],
            &one_way,
        ),
        &Spec::bar(
            "Particle drift, positions updated: useful bytes per second",
            "layout",
            fraction,
        ),
        &points,
    )?;

    run.table(
        "coalescing-patterns",
        "One warp's first load, computed; the whole kernel predicted from distinct sectors and measured, as fractions of the copy ceiling (L2 cold)",
        &with_meta(&[("l2", L2_COLD), ("ceiling", &ceiling)], &one_way),
        &pattern_rows(r)?,
    )?;
    Ok(())
}

/// The float stride sweep under each L2 fetch granularity, beside what device memory would
/// move if it fetched blocks of that many bytes.
pub(super) fn write_granularity_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let g = &r.granularity;
    let one_way = r.one_way_ceilings();
    let mut points = Vec::new();
    for gr in &g.runs {
        for (stride, m) in &gr.points {
            points.push(r.fraction_point(
                &format!("limit {} B, measured", gr.requested),
                stride,
                m,
            ));
        }
    }
    for gr in &g.runs {
        for (stride, _) in &gr.points {
            points.push(predicted_point(
                &format!("{}-byte fetches, model", gr.requested),
                stride,
                fetch_model_fraction(4, *stride, gr.requested as u64),
            ));
        }
    }
    let in_force = g
        .runs
        .iter()
        .map(|gr| format!("{} B asked, {} B read back", gr.requested, gr.in_force))
        .collect::<Vec<_>>()
        .join("; ");
    let mut spec = Spec::line(
        "Strided float loads under each L2 fetch granularity limit",
        "stride (floats)",
        "fraction of the copy ceiling",
    )
    .log_x();
    for gr in &g.runs {
        spec = spec.dashed(&format!("{}-byte fetches, model", gr.requested));
    }
    run.figure(
        "coalescing-granularity",
        &with_meta(
            &[
                ("l2", L2_COLD),
                ("source_bytes", &r.sweep_bytes.to_string()),
                ("ceiling", &r.ceiling_note()),
                (
                    "limit_before",
                    &format!("{} B (restored after the sweep)", g.default),
                ),
                ("limit_in_force", &in_force),
            ],
            &one_way,
        ),
        &spec,
        &points,
    )
}
