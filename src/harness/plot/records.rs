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
    std::fs::write(svg_path, svg)
        .with_context(|| format!("cannot write {}", svg_path.display()))
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
    let mut problems = Vec::new();
    let mut stems = Vec::new();
    for entry in std::fs::read_dir(dir.join("data"))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let name = format!("{stem}.csv");
        let rec = match record::read_csv(&path) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{name}: {e:#}"));
                continue;
            }
        };
        let missing = rec.meta.missing_provenance();
        if !missing.is_empty() {
            problems.push(format!("{name}: provenance lacks {}", missing.join(", ")));
        }
        let (own, other) =
            if rec.meta.get("plot").is_some() { ("svg", "md") } else { ("md", "svg") };
        if dir.join(format!("{stem}.{other}")).exists() {
            problems.push(format!("{stem}.{other} shares its stem with a {own} record: one CSV per figure or table"));
        }
        if rec.meta.get("plot").is_some() {
            let svg = dir.join(format!("{stem}.svg"));
            match (std::fs::read_to_string(&svg), draw_svg(&rec, &name)) {
                (Ok(committed), Ok(drawn)) if committed == drawn => {}
                (Ok(_), Ok(_)) => problems.push(format!(
                    "{stem}.svg differs from what {name} draws (stale or hand-edited)"
                )),
                (Err(_), _) => problems.push(format!("{stem}.svg is missing")),
                (_, Err(e)) => problems.push(format!("{name} cannot be drawn: {e:#}")),
            }
        } else {
            let md = dir.join(format!("{stem}.md"));
            match std::fs::read_to_string(&md) {
                Ok(committed) => {
                    match record::markdown_table(&rec, &format!("figures/data/{name}")) {
                        Ok(drawn) if drawn == committed => {}
                        Ok(_) => problems.push(format!(
                            "{stem}.md differs from the table {name} renders (stale or hand-edited)"
                        )),
                        Err(e) => {
                            problems.push(format!("{name} cannot be shown as a table: {e:#}"))
                        }
                    }
                }
                Err(_) => problems.push(format!("{stem}.md is missing")),
            }
        }
        stems.push(stem);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_output = path.extension().is_some_and(|e| e == "svg" || e == "md");
        if is_output
            && !stems
                .contains(&path.file_stem().unwrap().to_string_lossy().into_owned())
        {
            problems.push(format!("{} has no CSV under data/", path.display()));
        }
    }
    Ok(problems)
}

/// Redraws every figure and table under `dir` from its CSV (no GPU needed).
pub fn redraw_all(dir: &Path) -> anyhow::Result<usize> {
    let mut count = 0;
    for entry in std::fs::read_dir(dir.join("data"))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let rec = record::read_csv(&path)?;
        if rec.meta.get("plot").is_some() {
            redraw(&path, &dir.join(format!("{stem}.svg")))?;
        } else {
            std::fs::write(
                dir.join(format!("{stem}.md")),
                record::markdown_table(&rec, &format!("figures/data/{stem}.csv"))?,
            )?;
        }
        count += 1;
    }
    Ok(count)
}
