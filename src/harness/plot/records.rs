//! Records in, SVG out: writing a figure's CSV and drawing its SVG from it, redrawing every
//! figure and table of a folder from its CSV, and the audit that each committed SVG and table
//! is exactly what its CSV draws.

use std::path::Path;

use anyhow::Context;

use super::layout::draw_svg;
use super::types::Point;
use super::Spec;
use crate::harness::record::{self, Meta, Record};

/// Writes `dir/data/<stem>.csv` (provenance + spec + points) and `dir/<stem>.svg` drawn from it.
pub fn write_figure(
    dir: &Path,
    stem: &str,
    meta: &Meta,
    spec: &Spec,
    points: &[Point],
) -> anyhow::Result<()> {
    let csv_path = dir.join("data").join(format!("{stem}.csv"));
    record::write_csv(&csv_path, &spec.add_to(meta.clone()), points)?;
    redraw(&csv_path, &dir.join(format!("{stem}.svg")))
}

/// Draws `svg_path` from the figure CSV at `csv_path`.
pub fn redraw(csv_path: &Path, svg_path: &Path) -> anyhow::Result<()> {
    let record = record::read_csv(csv_path)?;
    let name = csv_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let svg = draw_svg(&record, &name)
        .with_context(|| format!("cannot draw {}", csv_path.display()))?;
    record::write_atomic(svg_path, svg.as_bytes())
}

pub(super) fn points_of(record: &Record) -> anyhow::Result<Vec<Point>> {
    let col = |n: &str| record.column(n);
    let (s, x, y, lo, hi) =
        (col("series")?, col("x")?, col("y")?, col("y_min")?, col("y_max")?);
    let num =
        |v: &str| v.parse::<f64>().with_context(|| format!("`{v}` is not a number"));
    record
        .rows
        .iter()
        .map(|r| {
            Ok(Point {
                series: r[s].clone(),
                x: r[x].clone(),
                y: num(&r[y])?,
                y_min: num(&r[lo])?,
                y_max: num(&r[hi])?,
            })
        })
        .collect()
}

/// Checks every record under `dir/data/` against what it draws: a figure CSV (one with a `plot`
/// key) must match `dir/<stem>.svg` byte for byte, a table CSV must match `dir/<stem>.md`, every
/// record must carry full provenance, and every SVG or table must have its CSV.
/// Returns one line per problem; empty means the figures are exactly their data.
pub fn audit_figures(dir: &Path) -> anyhow::Result<Vec<String>> {
    record::audit_records(dir, |_| true)
}

/// Redraws every figure and table under `dir` from its CSV (no GPU needed).
pub fn redraw_all(dir: &Path) -> anyhow::Result<usize> {
    Ok(record::redraw_records(dir, |_| true)?.0)
}
