//! Laying a figure out: [`draw_svg`] tries up to three placements of the legend and the
//! reference-line labels; [`layout`] sets the title, the legend above the plot where it goes
//! there, the panel grid's size and the value-axis request, then hands over to the dot plot
//! (`dot.rs`) or the line and bar grid (`grid.rs`); [`footer`] writes the provenance below.

use anyhow::bail;
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{AxisRequest, Orient};
use super::bars::bar_value_labels_fit;
use super::dot::{dot_row_height, layout_dot};
use super::figure::Figure;
use super::grid::layout_grid;
use super::legend::legend_rows;
use super::records::points_of;
use super::render::render;
use super::scene::{Scene, TextOp};
use super::style::{
    em, line_height, width_of, wrap, wrap_balanced, F_AXIS, F_FOOTER, F_LABEL, F_TITLE,
    GRID, MUTED, WIDTH,
};
use super::types::{Axis, Kind, Point};
use super::Spec;
use crate::harness::record::{Meta, Record};

/// How one attempt at a layout places its legend and reference-line labels.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attempt {
    legend_outside: bool,
    pub(super) refs_in_legend: bool,
}

pub(super) const MARGIN: f64 = 12.0;
pub(super) const COL_GAP: f64 = 26.0;
pub(super) const TICK: f64 = 5.0;

/// Draws the figure described by `record` as SVG text. `data_name` is shown in the footer.
pub fn draw_svg(record: &Record, data_name: &str) -> anyhow::Result<String> {
    let spec = Spec::from_meta(&record.meta)?;
    let points = points_of(record)?;
    if points.is_empty() {
        bail!("a figure needs at least one point");
    }
    let fig = Figure::new(&spec, &record.meta, &points)?;
    let attempts = [
        Attempt { legend_outside: false, refs_in_legend: false },
        Attempt { legend_outside: true, refs_in_legend: false },
        Attempt { legend_outside: true, refs_in_legend: true },
    ];
    for (i, a) in attempts.iter().enumerate() {
        if let Some((scene, height)) =
            layout(&fig, data_name, *a, i == attempts.len() - 1)?
        {
            return render(&scene, height);
        }
    }
    unreachable!("the last attempt always places everything")
}

/// Lays the figure out; `None` when this attempt cannot place its legend or a reference
/// line's label without covering something (`last` places them regardless).
fn layout(
    fig: &Figure,
    data_name: &str,
    attempt: Attempt,
    last: bool,
) -> anyhow::Result<Option<(Scene, u32)>> {
    let spec = fig.spec;
    let mut sc = Scene::default();
    let mut y = 12.0;
    for line in wrap_balanced(&spec.title, F_TITLE, WIDTH - 2.0 * MARGIN) {
        sc.text(TextOp::new(&line, WIDTH / 2.0, y, F_TITLE, HPos::Center, VPos::Top));
        y += line_height(F_TITLE);
    }
    y += 6.0;
    let n_panels = fig.panels.len();
    let legend_outside = attempt.legend_outside || n_panels > 1;
    let entries = fig.legend_entries(attempt.refs_in_legend);
    if legend_outside && !entries.is_empty() {
        y = legend_rows(&mut sc, &entries, MARGIN + 20.0, y, WIDTH - MARGIN) + 8.0;
    }

    let cols = spec.panel_columns.clamp(1, n_panels.max(1));
    let rows = n_panels.div_ceil(cols);
    let horizontal = fig.kind == Kind::Dot;
    // Axis titles: y (rotated, left; the category title for a dot plot), x (below).
    let (left_title, bottom_title) = if horizontal {
        (&spec.x_label, &spec.y_label)
    } else {
        (&spec.y_label, &spec.x_label)
    };
    let cats_per_panel: Vec<Vec<String>> = fig
        .panels
        .iter()
        .map(|p| {
            let mut c: Vec<String> = Vec::new();
            for (_, x, _) in &p.points {
                if !c.contains(x) {
                    c.push(x.clone());
                }
            }
            c
        })
        .collect();
    let plot_h = if horizontal {
        cats_per_panel.iter().map(Vec::len).max().unwrap_or(1) as f64
            * dot_row_height(fig)
            + 8.0
    } else {
        match rows {
            1 => 330.0,
            2 => 220.0,
            _ => 180.0,
        }
    };
    let grid_h_estimate = rows as f64 * (plot_h + 60.0);
    let left_lines =
        wrap_balanced(left_title, F_AXIS, grid_h_estimate.min(rows as f64 * plot_h));
    let band = MARGIN + left_lines.len() as f64 * line_height(F_AXIS) + 4.0;

    // Value axes (vertical for line and bar charts, horizontal for dot plots).
    let value_ticks = &spec.y_ticks;
    let ref_values = |axis: Axis| -> Vec<f64> {
        fig.refs.iter().filter(|(r, _)| r.axis == axis).map(|(_, v)| *v).collect()
    };
    let value_request =
        |pts: &mut dyn Iterator<Item = &Point>, headroom: f64| AxisRequest {
            values: pts
                .flat_map(|p| [p.y, p.y_min, p.y_max])
                .chain(ref_values(Axis::Y))
                .collect(),
            log: spec.y_log,
            bytes: false,
            from_zero: fig.kind == Kind::Bar,
            ticks: value_ticks,
            data: Vec::new(),
            orient: if horizontal { Orient::Horizontal } else { Orient::Vertical },
            headroom_px: headroom,
            integer: false,
        };
    let value_labels =
        fig.kind == Kind::Bar && bar_value_labels_fit(fig, &cats_per_panel);
    let headroom = if value_labels { em(F_LABEL) + 8.0 } else { 0.0 };

    if horizontal {
        return layout_dot(
            fig,
            sc,
            y,
            band,
            &left_lines,
            bottom_title,
            plot_h,
            &cats_per_panel,
            cols,
            rows,
            &value_request,
            data_name,
            legend_outside,
            &entries,
            attempt,
            last,
        );
    }
    layout_grid(
        fig,
        sc,
        y,
        band,
        &left_lines,
        bottom_title,
        plot_h,
        &cats_per_panel,
        cols,
        rows,
        &value_request,
        value_labels,
        headroom,
        data_name,
        legend_outside,
        &entries,
        attempt,
        last,
    )
}

/// The provenance and the commands, wrapped below the figure; returns the figure's height.
pub(super) fn footer(sc: &mut Scene, meta: &Meta, data_name: &str, y: f64) -> u32 {
    let get = |k: &str| meta.get(k).unwrap_or("?").to_string();
    let cpu_only = meta.get("gpu").is_none_or(|g| g.starts_with("none"));
    let mut first: Vec<String> = Vec::new();
    match (cpu_only, meta.get("cpu")) {
        (true, Some(cpu)) => first.push(format!("CPU-only measurement on {cpu}")),
        (true, None) => first.push("CPU-only measurement".into()),
        (false, _) => {
            first.push(get("gpu"));
            first.push(format!("driver {}", get("driver")));
        }
    }
    first.push(format!("cudarc {}", get("cudarc")));
    first.push(format!("commit {}", get("commit")));
    first.push(get("date_utc"));
    let second = vec![
        format!("data: figures/data/{data_name}"),
        format!("re-measure: {}", get("command")),
        "redraw: cargo run --release --example reproduce -- --out figures/ --redraw-only".to_string(),
    ];
    let mut y = y;
    let max_w = WIDTH - 2.0 * MARGIN;
    sc.path(vec![(MARGIN, y - 4.0), (WIDTH - MARGIN, y - 4.0)], GRID, 1, false);
    for group in [first, second] {
        let mut line = String::new();
        let mut lines = Vec::new();
        for item in group {
            let cand = if line.is_empty() {
                item.clone()
            } else {
                format!("{line} · {item}")
            };
            if line.is_empty() || width_of(&cand, F_FOOTER) <= max_w {
                line = cand;
            } else {
                lines.push(std::mem::replace(&mut line, item));
            }
        }
        lines.push(line);
        for l in lines {
            // A single item wider than the figure is wrapped at its spaces.
            for part in wrap(&l, F_FOOTER, max_w) {
                let mut t =
                    TextOp::new(&part, MARGIN, y, F_FOOTER, HPos::Left, VPos::Top);
                t.color = MUTED;
                sc.text(t);
                y += line_height(F_FOOTER);
            }
        }
    }
    (y + 8.0).ceil() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::testing::{clean, draw, record};
    use crate::harness::plot::{Point, Spec};
    use crate::harness::record;

    #[test]
    fn line_figure_redraws_identically_from_its_csv() {
        let spec = Spec::line("Copy bandwidth", "bytes", "GB/s").log_x();
        let pts = vec![
            Point::new("kernel", 1e6, 500.0, 450.0, 520.0),
            Point::new("kernel", 1e9, 2900.0, 2890.0, 2950.0),
            Point::new("memcpy", 1e6, 400.0, 400.0, 400.0),
            Point::new("memcpy", 1e9, 2800.0, 2700.0, 2810.0),
        ];
        let a = draw(&spec, &pts);
        let b = draw(&spec, &pts);
        assert_eq!(a, b, "drawing must be deterministic");
        assert!(
            a.starts_with("<svg")
                && a.contains("Copy bandwidth")
                && a.contains("memcpy")
                && a.contains("Test GPU")
                && a.contains("re-measure: cargo run --release --example test")
                && a.contains("--redraw-only")
        );
        clean(&a);
    }

    #[test]
    fn log_axis_refuses_non_positive_values() {
        let spec = Spec::line("t", "x", "y").log_y();
        let pts = vec![Point::new("s", 1, 0.0, 0.0, 0.0)];
        assert!(draw_svg(&record(&spec, &pts), "t.csv").is_err());
    }

    #[test]
    fn cpu_only_footers_name_the_cpu() {
        let spec = Spec::line("t", "x", "y");
        let meta = spec.add_to(
            Meta::default()
                .with("gpu", "none (CPU-only measurement)")
                .with("cpu", "AMD EPYC 9654")
                .with("driver", "n/a")
                .with("command", "cargo run --release --example loop_permutation"),
        );
        let pts =
            [Point::new("s", 1, 1.0, 1.0, 1.0), Point::new("s", 2, 2.0, 2.0, 2.0)];
        let rec =
            record::parse_csv(&record::to_csv_string(&meta, &pts).unwrap()).unwrap();
        let svg = draw_svg(&rec, "t.csv").unwrap();
        assert!(svg.contains("CPU-only measurement on AMD EPYC 9654"), "{svg}");
        assert!(!svg.contains("driver n/a"));
    }
}
