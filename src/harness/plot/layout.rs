//! Laying a figure out: [`draw_svg`] tries up to three placements of the legend and the
//! reference-line labels; [`layout`] sets the title, the legend above the plot where it goes
//! there, the panel grid's size and the value-axis request, then hands over to the dot plot
//! (`dot.rs`) or the line and bar grid (`grid.rs`); [`footer`] writes the provenance below.

use anyhow::bail;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::WHITE;

use super::axis::{make_axis, AxisRequest, Orient, ValueAxis};
use super::bars::bar_value_labels_fit;
use super::dot::{dot_row_height, layout_dot};
use super::figure::{Figure, Swatch};
use super::grid::layout_grid;
use super::legend::{legend_inside, legend_rows};
use super::records::points_of;
use super::render::render;
use super::scene::{Bx, Scene, TextOp};
use super::style::{
    em, line_height, wrap, wrap_balanced, FRAME, F_AXIS, F_FOOTER, F_LABEL, F_PANEL,
    F_TICK, F_TITLE, GRID, INK, MUTED, WIDTH,
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
    if record.meta.get("plot") == Some("diagram") {
        return super::diagram::draw_diagram(record, data_name);
    }
    let spec = Spec::from_meta(&record.meta)?;
    let points = spec.drawn(&points_of(record)?);
    if points.is_empty() {
        bail!("a figure needs at least one point (of the series it shows)");
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
    // The last attempt places everything or fails with the reason.
    bail!("no attempt could lay the figure out")
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
            from_zero: fig.kind == Kind::Bar || spec.y_from_zero,
            ticks: value_ticks,
            data: Vec::new(),
            orient: if horizontal { Orient::Horizontal } else { Orient::Vertical },
            headroom_px: headroom,
            integer: false,
        };
    let value_labels =
        fig.kind == Kind::Bar && bar_value_labels_fit(fig, &cats_per_panel);
    let headroom = if value_labels { em(F_LABEL) + 8.0 } else { 0.0 };

    let grid = PanelGrid {
        fig,
        band,
        left_lines: &left_lines,
        bottom_title,
        plot_h,
        cats_per_panel: &cats_per_panel,
        cols,
        rows,
        value_request: &value_request,
        data_name,
        legend_outside,
        entries: &entries,
        attempt,
        last,
    };
    if horizontal {
        return layout_dot(&grid, sc, y);
    }
    layout_grid(&grid, sc, y, value_labels, headroom)
}

/// What the dot plot (`dot.rs`) and the line and bar grid (`grid.rs`) are laid out from: the
/// figure, the band left of the panels that holds the value-axis title, the axis titles, each
/// panel's height, the categories of each panel, the grid's columns and rows, the value-axis
/// request, and where this attempt puts the legend.
pub(super) struct PanelGrid<'g, 'a> {
    pub(super) fig: &'g Figure<'a>,
    pub(super) band: f64,
    left_lines: &'g [String],
    bottom_title: &'g str,
    pub(super) plot_h: f64,
    pub(super) cats_per_panel: &'g [Vec<String>],
    pub(super) cols: usize,
    rows: usize,
    value_request: &'g dyn Fn(&mut dyn Iterator<Item = &Point>, f64) -> AxisRequest<'a>,
    data_name: &'g str,
    legend_outside: bool,
    entries: &'g [(Swatch, String)],
    pub(super) attempt: Attempt,
    pub(super) last: bool,
}

impl PanelGrid<'_, '_> {
    /// The value axis of each panel (one shared by all, or each panel's own), from pixel `p0`
    /// (the lowest value) to `p1`, with `headroom` pixels left beyond the largest value.
    pub(super) fn value_axes(
        &self,
        headroom: f64,
        p0: f64,
        p1: f64,
    ) -> anyhow::Result<Vec<ValueAxis>> {
        let fig = self.fig;
        if fig.spec.independent_y {
            let mut axes = Vec::new();
            for p in &fig.panels {
                let req = (self.value_request)(
                    &mut p.points.iter().map(|(_, _, q)| q),
                    headroom,
                );
                axes.push(make_axis(&req, p0, p1)?);
            }
            Ok(axes)
        } else {
            let req = (self.value_request)(
                &mut fig.panels.iter().flat_map(|p| p.points.iter().map(|(_, _, q)| q)),
                headroom,
            );
            let a = make_axis(&req, p0, p1)?;
            Ok(vec![a; fig.panels.len()])
        }
    }

    /// The panels' boxes, row by row from `y`: each `plot_w` wide after `left_w` of labels in
    /// its column of `col_w`, and `height(i)` high, under its name where the
    /// figure has panels; each row followed by `below(r)` lines of tick labels. Returns the
    /// boxes and the y below the last row.
    pub(super) fn place_panels(
        &self,
        mut y: f64,
        (col_w, left_w, plot_w): (f64, f64, f64),
        height: impl Fn(usize) -> f64,
        below: impl Fn(usize) -> usize,
    ) -> (Vec<Bx>, f64) {
        let (cols, n_panels) = (self.cols, self.fig.panels.len());
        let panel_title_h = if self.fig.spec.panels.is_some() {
            line_height(F_PANEL) + 4.0
        } else {
            0.0
        };
        let mut plots = Vec::new();
        for r in 0..self.rows {
            let top = y + panel_title_h;
            for c in 0..cols {
                let i = r * cols + c;
                if i >= n_panels {
                    break;
                }
                let x0 = self.band + c as f64 * (col_w + COL_GAP) + left_w;
                plots.push(Bx::new(x0, top, x0 + plot_w, top + height(i)));
            }
            y = top + self.plot_h + 8.0 + below(r) as f64 * line_height(F_TICK) + 6.0;
        }
        (plots, y)
    }

    /// Finishes the figure around its panels: the legend inside the first panel where this
    /// attempt puts it there, the value-axis title (rotated, left), `right_title` (rotated,
    /// right: a second value axis), the bottom axis title from `y`, then the footer. `None`
    /// when no place inside the panel is free for the legend and a later attempt should put
    /// it above the plot (`last` refuses instead).
    pub(super) fn finish(
        &self,
        mut sc: Scene,
        plots: &[Bx],
        mut y: f64,
        right_title: Option<&str>,
    ) -> anyhow::Result<Option<(Scene, u32)>> {
        if !self.legend_outside
            && !self.entries.is_empty()
            && !legend_inside(&mut sc, self.entries, &plots[0])
        {
            if self.last {
                bail!("no room for the legend");
            }
            return Ok(None);
        }
        let grid_top = plots.iter().map(|p| p.y0).fold(f64::INFINITY, f64::min);
        let grid_bottom = plots.iter().map(|p| p.y1).fold(0.0, f64::max);
        let mid = (grid_top + grid_bottom) / 2.0;
        for (k, line) in self.left_lines.iter().enumerate() {
            rotated_title(&mut sc, line, MARGIN + k as f64 * line_height(F_AXIS), mid);
        }
        if let Some(label) = right_title {
            rotated_title(&mut sc, label, WIDTH - MARGIN - line_height(F_AXIS), mid);
        }
        let gx0 = plots.iter().map(|p| p.x0).fold(f64::INFINITY, f64::min);
        let gx1 = plots.iter().map(|p| p.x1).fold(0.0, f64::max);
        for line in wrap(self.bottom_title, F_AXIS, WIDTH - 2.0 * MARGIN) {
            sc.text(TextOp::new(
                &line,
                (gx0 + gx1) / 2.0,
                y,
                F_AXIS,
                HPos::Center,
                VPos::Top,
            ));
            y += line_height(F_AXIS);
        }
        let height = footer(&mut sc, self.fig.meta, self.data_name, y + 8.0);
        Ok(Some((sc, height)))
    }
}

/// An axis title turned to run upwards, its top at `x`, centred on `mid`.
fn rotated_title(sc: &mut Scene, line: &str, x: f64, mid: f64) {
    let mut t = TextOp::new(line, x, mid, F_AXIS, HPos::Center, VPos::Top);
    t.rotate = true;
    sc.text(t);
}

/// A panel's white ground, with its name above it in bold where the figure has panels.
pub(super) fn panel_ground(sc: &mut Scene, plot: &Bx, name: Option<&String>) {
    if let Some(name) = name {
        let mut t = TextOp::new(
            name,
            plot.x0,
            plot.y0 - 4.0,
            F_PANEL,
            HPos::Left,
            VPos::Bottom,
        );
        t.bold = true;
        sc.text(t);
    }
    sc.rect(*plot, Some(WHITE), None);
}

/// A panel's frame, with the axis lines on its left and bottom edges drawn in ink.
pub(super) fn panel_frame(sc: &mut Scene, plot: &Bx) {
    sc.rect(*plot, None, Some((FRAME, 1)));
    sc.path(
        vec![(plot.x0, plot.y0), (plot.x0, plot.y1), (plot.x1, plot.y1)],
        INK,
        1,
        false,
    );
}

/// The ticks of a horizontal axis `xa` below a panel, each with its label.
pub(super) fn bottom_ticks(sc: &mut Scene, plot: &Bx, xa: &ValueAxis) {
    for (v, l) in &xa.ticks {
        let px = xa.px(*v).round();
        sc.path(vec![(px, plot.y1), (px, plot.y1 + TICK)], INK, 1, false);
        sc.text(TextOp::new(
            l,
            px,
            plot.y1 + TICK + 3.0,
            F_TICK,
            HPos::Center,
            VPos::Top,
        ));
    }
}

/// One line below the figure: the machine that measured it and its data file; returns the
/// figure's height. The rest of the provenance (driver, CUDA, cudarc, commit, date) and the
/// commands that re-measure and redraw it are in the data file and the appendix, not in the
/// picture, which keeps its height for the data.
pub(super) fn footer(sc: &mut Scene, meta: &Meta, data_name: &str, y: f64) -> u32 {
    let get = |k: &str| meta.get(k).unwrap_or("?").to_string();
    let cpu_only = meta.get("gpu").is_none_or(|g| g.starts_with("none"));
    let machine = match (cpu_only, meta.get("cpu")) {
        (true, Some(cpu)) => format!("CPU-only measurement on {cpu}"),
        (true, None) => "CPU-only measurement".into(),
        (false, _) => format!("measured on {}", get("gpu")),
    };
    footer_line(sc, &format!("{machine} · data: figures/data/{data_name}"), y)
}

/// The footer's rule and `line` below it from `y` (wrapped at its spaces where it is wider
/// than the figure); returns the figure's height.
pub(super) fn footer_line(sc: &mut Scene, line: &str, y: f64) -> u32 {
    let mut y = y;
    let max_w = WIDTH - 2.0 * MARGIN;
    sc.path(vec![(MARGIN, y - 4.0), (WIDTH - MARGIN, y - 4.0)], GRID, 1, false);
    // A name wider than the figure is wrapped at its spaces.
    for part in wrap(line, F_FOOTER, max_w) {
        let mut t = TextOp::new(&part, MARGIN, y, F_FOOTER, HPos::Left, VPos::Top);
        t.color = MUTED;
        sc.text(t);
        y += line_height(F_FOOTER);
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
                && a.contains("measured on Test GPU")
                && !a.contains("commit")
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
