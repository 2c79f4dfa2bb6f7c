//! Line and bar charts laid out on a grid of panels (small multiples; a single panel is a grid
//! of one): the vertical value axes, the panels' frames, grids, reference lines, data and tick
//! labels, then the labels, legend, axis titles and footer around them.

use anyhow::{bail, Context};
use plotters::style::text_anchor::{HPos, VPos};

use super::axis::{make_axis, AxisRequest, Orient, ValueAxis};
use super::bars::draw_bars;
use super::layout::{
    bottom_ticks, panel_frame, panel_ground, PanelGrid, COL_GAP, MARGIN, TICK,
};
use super::legend::{place_x_ref_label, place_y_ref_label};
use super::lines::{draw_lines, place_point_labels};
use super::scene::{Scene, TextOp};
use super::style::{
    line_height, width_of, wrap_balanced, F_AXIS, F_TICK, GRID, GUIDE, INK, WIDTH,
};
use super::types::{Axis, Kind, Ticks};

/// Lays out line and bar charts: one panel or a grid of small multiples, with vertical value
/// axes (shared or one per panel, and an optional second axis on the right), the x axis of
/// line charts or the category labels of bar charts, reference lines and their labels, point
/// labels, the legend, the axis titles and the footer. `None` when this attempt cannot
/// place its legend or a reference line's label without covering something (`last` places
/// them regardless).
pub(super) fn layout_grid(
    g: &PanelGrid,
    mut sc: Scene,
    y: f64,
    value_labels: bool,
    headroom: f64,
) -> anyhow::Result<Option<(Scene, u32)>> {
    let (fig, plot_h, cols) = (g.fig, g.plot_h, g.cols);
    let spec = fig.spec;
    let n_panels = fig.panels.len();
    let ref_values = |axis: Axis| -> Vec<f64> {
        fig.refs.iter().filter(|(r, _)| r.axis == axis).map(|(_, v)| *v).collect()
    };
    // Vertical value axes: pixel span known (plot height), so ticks can be chosen now.
    let mut y_axes = g.value_axes(headroom, plot_h, 0.0)?;
    let tick_w = y_axes
        .iter()
        .flat_map(|a| a.ticks.iter().map(|(_, l)| width_of(l, F_TICK)))
        .fold(0.0, f64::max);
    let left_w = tick_w + TICK + 6.0;
    // A second value axis on the right.
    let mut y2_axes: Vec<Option<ValueAxis>> = Vec::new();
    for a in &y_axes {
        let Some((_, s)) = &spec.y2 else {
            y2_axes.push(None);
            continue;
        };
        let req = AxisRequest {
            values: vec![a.value_at(a.lo) * s, a.value_at(a.hi) * s],
            log: a.log,
            bytes: false,
            from_zero: false,
            ticks: &Ticks::Auto,
            data: Vec::new(),
            orient: Orient::Vertical,
            headroom_px: 0.0,
            integer: false,
        };
        let mut b = make_axis(&req, plot_h, 0.0)
            .with_context(|| format!("the second axis (y2_scale {s})"))?;
        // The primary axis' span in the second unit: only the ticks differ.
        (b.lo, b.hi) = if a.log {
            (a.lo + s.log10(), a.hi + s.log10())
        } else {
            (a.lo * s, a.hi * s)
        };
        b.ticks.retain(|(v, _)| {
            let p = if b.log { v.log10() } else { *v };
            p >= b.lo - 1e-9 && p <= b.hi + 1e-9
        });
        y2_axes.push(Some(b));
    }
    let right_w = match &spec.y2 {
        Some(_) => {
            let w = y2_axes
                .iter()
                .flatten()
                .flat_map(|a| a.ticks.iter().map(|(_, l)| width_of(l, F_TICK)))
                .fold(0.0, f64::max);
            w + TICK + 6.0 + line_height(F_AXIS) + 6.0 + MARGIN
        }
        None => MARGIN + 10.0,
    };
    let col_w = (WIDTH - g.band - right_w - (cols - 1) as f64 * COL_GAP) / cols as f64;
    let plot_w = col_w - left_w;

    // Horizontal axis of line charts, shared by all panels.
    let x_axis = if fig.kind == Kind::Line {
        let xs: Vec<f64> = fig
            .panels
            .iter()
            .flat_map(|p| p.points.iter())
            .map(|(_, x, _)| {
                x.parse::<f64>().with_context(|| format!("x `{x}` is not a number"))
            })
            .collect::<anyhow::Result<_>>()?;
        let integer = xs.iter().all(|x| x.fract() == 0.0);
        let req = AxisRequest {
            integer,
            values: xs.iter().copied().chain(ref_values(Axis::X)).collect(),
            log: spec.x_log,
            bytes: spec.x_bytes,
            from_zero: false,
            ticks: &spec.x_ticks,
            data: xs,
            orient: Orient::Horizontal,
            headroom_px: 0.0,
        };
        Some(make_axis(&req, 0.0, plot_w)?)
    } else {
        None
    };

    // Category labels of bar charts, wrapped to their slot.
    let cat_lines: Vec<Vec<Vec<String>>> = g
        .cats_per_panel
        .iter()
        .map(|cats| {
            let slot = plot_w / cats.len().max(1) as f64;
            cats.iter().map(|c| wrap_balanced(c, F_TICK, slot - 8.0)).collect()
        })
        .collect();

    let (plots, y) = g.place_panels(
        y,
        (col_w, left_w, plot_w),
        |_| plot_h,
        |r| {
            (r * cols..((r + 1) * cols).min(n_panels))
                .map(|i| match fig.kind {
                    Kind::Bar => cat_lines[i].iter().map(Vec::len).max().unwrap_or(1),
                    _ => 1,
                })
                .max()
                .unwrap_or(1)
        },
    );

    // Place the axes on the page.
    for (i, p) in plots.iter().enumerate() {
        let a = &mut y_axes[i];
        a.p0 = p.y1;
        a.p1 = p.y0;
    }
    let y2_axes: Vec<Option<ValueAxis>> = y2_axes
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            a.map(|mut a| {
                a.p0 = plots[i].y1;
                a.p1 = plots[i].y0;
                a
            })
        })
        .collect();

    // Panels: frame, grid, reference lines, data, tick labels.
    let mut refs_placed = true;
    let mut pending_ref_labels: Vec<(usize, String, Axis, f64)> = Vec::new();
    for (i, plot) in plots.iter().enumerate() {
        let panel = &fig.panels[i];
        let ya = &y_axes[i];
        let xa = x_axis.as_ref().map(|a| a.shifted(plot.x0));
        panel_ground(&mut sc, plot, panel.name.as_ref());
        for (v, _) in &ya.ticks {
            let py = ya.px(*v).round();
            sc.path(vec![(plot.x0, py), (plot.x1, py)], GRID, 1, false);
        }
        if let Some(xa) = &xa {
            for (v, _) in &xa.ticks {
                let px = xa.px(*v).round();
                sc.path(vec![(px, plot.y0), (px, plot.y1)], GRID, 1, false);
            }
        }
        // Reference lines, under the data.
        for (r, v) in &fig.refs {
            match r.axis {
                Axis::Y => {
                    let py = ya.px(*v);
                    sc.path(vec![(plot.x0, py), (plot.x1, py)], GUIDE, 1, true);
                    sc.mark_seg((plot.x0, py), (plot.x1, py));
                }
                Axis::X => {
                    if let Some(xa) = &xa {
                        let px = xa.px(*v);
                        sc.path(vec![(px, plot.y0), (px, plot.y1)], GUIDE, 1, true);
                        sc.mark_seg((px, plot.y0), (px, plot.y1));
                    }
                }
            }
            if !g.attempt.refs_in_legend {
                pending_ref_labels.push((i, fig.ref_label(r, *v), r.axis, *v));
            }
        }
        match (fig.kind, &xa) {
            (Kind::Line, Some(xa)) => draw_lines(&mut sc, fig, panel, xa, ya),
            (Kind::Line, None) => bail!("a line chart without its x axis"),
            (Kind::Bar, _) => draw_bars(
                &mut sc,
                fig,
                panel,
                &g.cats_per_panel[i],
                plot,
                ya,
                value_labels,
            ),
            (Kind::Dot, _) => {
                bail!("a dot plot is laid out by dot.rs, not on this grid")
            }
        }
        // Axes and tick labels.
        panel_frame(&mut sc, plot);
        for (v, l) in &ya.ticks {
            let py = ya.px(*v).round();
            sc.path(vec![(plot.x0 - TICK, py), (plot.x0, py)], INK, 1, false);
            sc.text(TextOp::new(
                l,
                plot.x0 - TICK - 3.0,
                py,
                F_TICK,
                HPos::Right,
                VPos::Center,
            ));
        }
        if let Some(Some(a2)) = y2_axes.get(i) {
            let last_col = (i % cols == cols - 1) || i == n_panels - 1;
            if last_col {
                sc.path(vec![(plot.x1, plot.y0), (plot.x1, plot.y1)], INK, 1, false);
                for (v, l) in &a2.ticks {
                    let py = a2.px(*v).round();
                    sc.path(vec![(plot.x1, py), (plot.x1 + TICK, py)], INK, 1, false);
                    sc.text(TextOp::new(
                        l,
                        plot.x1 + TICK + 3.0,
                        py,
                        F_TICK,
                        HPos::Left,
                        VPos::Center,
                    ));
                }
            }
        }
        match &xa {
            Some(xa) => bottom_ticks(&mut sc, plot, xa),
            None => {
                let cats = &g.cats_per_panel[i];
                let slot = plot.x1 - plot.x0;
                let slot = slot / cats.len().max(1) as f64;
                for (ci, lines) in cat_lines[i].iter().enumerate() {
                    let cx = plot.x0 + slot * (ci as f64 + 0.5);
                    for (li, line) in lines.iter().enumerate() {
                        sc.text(TextOp::new(
                            line,
                            cx,
                            plot.y1 + 6.0 + li as f64 * line_height(F_TICK),
                            F_TICK,
                            HPos::Center,
                            VPos::Top,
                        ));
                    }
                }
            }
        }
    }
    // Reference-line labels, beside their lines where something leaves room.
    for (i, label, axis, v) in pending_ref_labels {
        let plot = plots[i];
        let b = match axis {
            Axis::Y => place_y_ref_label(&sc, &plot, y_axes[i].px(v), &label),
            // Figure::new refuses x reference lines where there is no x axis.
            Axis::X => match &x_axis {
                Some(xa) => place_x_ref_label(&sc, &plot, xa.px(v) + plot.x0, &label),
                None => bail!("reference line `{label}` on x, which holds categories"),
            },
        };
        match b {
            Some(t) => {
                let mut t = t;
                t.color = GUIDE;
                sc.text(t);
            }
            None => refs_placed = false,
        }
    }
    if !refs_placed && !g.last {
        return Ok(None);
    }
    if let (Kind::Line, Some(xa)) = (fig.kind, &x_axis) {
        for (i, plot) in plots.iter().enumerate() {
            let xa = xa.shifted(plot.x0);
            place_point_labels(&mut sc, fig, &fig.panels[i], plot, &xa, &y_axes[i]);
        }
    }
    // The legend, the axis titles and the footer.
    g.finish(sc, &plots, y, spec.y2.as_ref().map(|(label, _)| label.as_str()))
}

#[cfg(test)]
mod tests {
    use crate::harness::plot::testing::{clean, draw};
    use crate::harness::plot::{read_svg_layout, Axis, PanelBy, Point, Spec};

    #[test]
    fn panels_split_categories_and_keep_colours() {
        let spec = Spec::bar("Speedup", "dataset", "×")
            .panels(PanelBy::XLastWord, 1)
            .ref_line(Axis::Y, "1", "1× (no speedup)");
        let mut pts = Vec::new();
        for d in ["MINI", "SMALL", "LARGE"] {
            for p in ["double", "float"] {
                for (k, s) in ["pinned", "unified", "streams"].iter().enumerate() {
                    let v = 0.5 + k as f64;
                    pts.push(Point::new(s, format!("{d} {p}"), v, v * 0.9, v * 1.1));
                }
            }
        }
        let svg = draw(&spec, &pts);
        let l = read_svg_layout(&svg);
        let texts: Vec<&str> = l.texts.iter().map(|t| t.text.as_str()).collect();
        for want in ["double", "float", "MINI", "1× (no speedup)"] {
            assert!(texts.contains(&want), "{want}: {texts:?}");
        }
        assert!(!texts.contains(&"MINI double"), "{texts:?}");
        // Hover titles keep the full category.
        assert!(l
            .marks
            .iter()
            .any(|m| m.title.starts_with("pinned, MINI double: 0.5")));
        // Every bar of a series has one colour in both panels.
        let fills: std::collections::BTreeSet<&str> = svg
            .lines()
            .filter(|x| x.starts_with("<rect") && x.contains("fill=\"#0072B2\""))
            .map(|_| "blue")
            .collect();
        assert_eq!(fills.len(), 1);
        assert_eq!(l.marks.len(), 18);
        clean(&svg);
    }
}
