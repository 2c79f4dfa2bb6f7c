//! Dot plots: one row per category, each series' marker with a horizontal min–max bar on a
//! horizontal value axis (log where the values span decades), in one panel or a grid of them.

use anyhow::bail;
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::WHITE;

use super::axis::{make_axis, AxisRequest};
use super::figure::{series_in, Figure, Swatch};
use super::layout::{footer, Attempt, COL_GAP, MARGIN, TICK};
use super::legend::{legend_inside, place_x_ref_label};
use super::numbers::value_label;
use super::scene::{error_bar_h, marker_box, Bx, Op, Scene, TextOp};
use super::style::{
    line_height, width_of, wrap, wrap_balanced, FRAME, F_AXIS, F_LABEL, F_PANEL,
    F_TICK, GRID, GUIDE, INK, WIDTH,
};
use super::types::{Axis, Point};

/// Vertical distance between the markers of two series in one row of a dot plot.
const DOT_DODGE: f64 = 12.0;

/// Height of one category row of a dot plot: room for every series' marker.
pub(super) fn dot_row_height(fig: &Figure) -> f64 {
    (fig.series.len() as f64 * DOT_DODGE + 14.0).max(38.0)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn layout_dot<'a>(
    fig: &Figure<'a>,
    mut sc: Scene,
    mut y: f64,
    band: f64,
    left_lines: &[String],
    bottom_title: &str,
    plot_h: f64,
    cats_per_panel: &[Vec<String>],
    cols: usize,
    rows: usize,
    value_request: &dyn Fn(&mut dyn Iterator<Item = &Point>, f64) -> AxisRequest<'a>,
    data_name: &str,
    legend_outside: bool,
    entries: &[(Swatch, String)],
    attempt: Attempt,
    last: bool,
) -> anyhow::Result<Option<(Scene, u32)>> {
    let spec = fig.spec;
    let n_panels = fig.panels.len();
    // Category labels on the left, wrapped to at most 240 px.
    let cat_w = 240.0;
    let cat_lines: Vec<Vec<Vec<String>>> = cats_per_panel
        .iter()
        .map(|cats| cats.iter().map(|c| wrap_balanced(c, F_TICK, cat_w)).collect())
        .collect();
    let left_w = cat_lines
        .iter()
        .flatten()
        .flatten()
        .map(|l| width_of(l, F_TICK))
        .fold(0.0, f64::max)
        + 12.0;
    let col_w =
        (WIDTH - band - MARGIN - 10.0 - (cols - 1) as f64 * COL_GAP) / cols as f64;
    let plot_w = col_w - left_w;
    // Value labels to the right of each dot need room: reserve their widest.
    let label_w = fig
        .panels
        .iter()
        .flat_map(|p| p.points.iter())
        .map(|(_, _, p)| width_of(&value_label(p.y), F_LABEL))
        .fold(0.0, f64::max)
        + 12.0;
    let mut axes = Vec::new();
    if spec.independent_y {
        for p in &fig.panels {
            let req = value_request(&mut p.points.iter().map(|(_, _, q)| q), label_w);
            axes.push(make_axis(&req, 0.0, plot_w)?);
        }
    } else {
        let req = value_request(
            &mut fig.panels.iter().flat_map(|p| p.points.iter().map(|(_, _, q)| q)),
            label_w,
        );
        let a = make_axis(&req, 0.0, plot_w)?;
        axes = vec![a; n_panels];
    }
    let panel_title_h =
        if spec.panels.is_some() { line_height(F_PANEL) + 4.0 } else { 0.0 };
    let mut plots = Vec::new();
    for r in 0..rows {
        let top = y + panel_title_h;
        for c in 0..cols {
            let i = r * cols + c;
            if i >= n_panels {
                break;
            }
            let x0 = band + c as f64 * (col_w + COL_GAP) + left_w;
            let h = cats_per_panel[i].len() as f64 * dot_row_height(fig) + 8.0;
            plots.push(Bx::new(x0, top, x0 + plot_w, top + h.min(plot_h)));
        }
        y = top + plot_h + 8.0 + line_height(F_TICK) + 6.0;
    }
    for (i, plot) in plots.iter().enumerate() {
        let panel = &fig.panels[i];
        let mut xa = axes[i].clone();
        xa.p0 += plot.x0;
        xa.p1 += plot.x0;
        if let Some(name) = &panel.name {
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
        for (v, _) in &xa.ticks {
            let px = xa.px(*v).round();
            sc.path(vec![(px, plot.y0), (px, plot.y1)], GRID, 1, false);
        }
        let cats = &cats_per_panel[i];
        let row_h = (plot.y1 - plot.y0 - 8.0) / cats.len().max(1) as f64;
        let present = series_in(panel);
        let mut labels = Vec::new();
        for (ci, cat) in cats.iter().enumerate() {
            let cy = plot.y0 + 4.0 + row_h * (ci as f64 + 0.5);
            sc.path(vec![(plot.x0, cy.round()), (plot.x1, cy.round())], GRID, 1, true);
            let lines = &cat_lines[i][ci];
            let lh = line_height(F_TICK);
            for (li, line) in lines.iter().enumerate() {
                let ly = cy - (lines.len() as f64 - 1.0) * lh / 2.0 + li as f64 * lh;
                sc.text(TextOp::new(
                    line,
                    plot.x0 - 8.0,
                    ly,
                    F_TICK,
                    HPos::Right,
                    VPos::Center,
                ));
            }
            for (k, &si) in present.iter().enumerate() {
                let Some((_, _, p)) =
                    panel.points.iter().find(|(s, x, _)| *s == si && x == cat)
                else {
                    continue;
                };
                let st = &fig.styles[si];
                let dy = (k as f64 - (present.len() as f64 - 1.0) / 2.0) * DOT_DODGE;
                let c = (xa.px(p.y), cy + dy);
                sc.ops.push(Op::Open(fig.hover(si, cat, p)));
                error_bar_h(
                    &mut sc,
                    c.1,
                    xa.px(p.y_min),
                    xa.px(p.y_max),
                    4.0,
                    st.color,
                );
                sc.ops.push(Op::Marker {
                    c,
                    r: 5.0,
                    shape: st.marker,
                    color: st.color,
                    hollow: st.dashed,
                });
                sc.ops.push(Op::Close);
                sc.mark_box(marker_box(c, 6.0));
                if present.len() == 1 {
                    let right = xa.px(p.y_max.max(p.y)).max(c.0 + 5.0);
                    labels.push(TextOp::new(
                        &value_label(p.y),
                        right + 6.0,
                        c.1,
                        F_LABEL,
                        HPos::Left,
                        VPos::Center,
                    ));
                }
            }
        }
        for t in labels {
            sc.text(t);
        }
        sc.rect(*plot, None, Some((FRAME, 1)));
        sc.path(
            vec![(plot.x0, plot.y0), (plot.x0, plot.y1), (plot.x1, plot.y1)],
            INK,
            1,
            false,
        );
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
        for (r, v) in &fig.refs {
            if r.axis == Axis::Y {
                let px = xa.px(*v);
                sc.path(vec![(px, plot.y0), (px, plot.y1)], GUIDE, 1, true);
                if !attempt.refs_in_legend {
                    match place_x_ref_label(&sc, plot, px, &fig.ref_label(r, *v)) {
                        Some(mut t) => {
                            t.color = GUIDE;
                            sc.text(t);
                        }
                        None if !last => return Ok(None),
                        None => {}
                    }
                }
            }
        }
    }
    if !legend_outside
        && !entries.is_empty()
        && !legend_inside(&mut sc, entries, &plots[0])
    {
        if last {
            bail!("no room for the legend");
        }
        return Ok(None);
    }
    let grid_top = plots.iter().map(|p| p.y0).fold(f64::INFINITY, f64::min);
    let grid_bottom = plots.iter().map(|p| p.y1).fold(0.0, f64::max);
    let mid = (grid_top + grid_bottom) / 2.0;
    for (k, line) in left_lines.iter().enumerate() {
        let mut t = TextOp::new(
            line,
            MARGIN + k as f64 * line_height(F_AXIS),
            mid,
            F_AXIS,
            HPos::Center,
            VPos::Top,
        );
        t.rotate = true;
        sc.text(t);
    }
    let gx0 = plots.iter().map(|p| p.x0).fold(f64::INFINITY, f64::min);
    let gx1 = plots.iter().map(|p| p.x1).fold(0.0, f64::max);
    for line in wrap(bottom_title, F_AXIS, WIDTH - 2.0 * MARGIN) {
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
    let height = footer(&mut sc, fig.meta, data_name, y + 8.0);
    Ok(Some((sc, height)))
}

#[cfg(test)]
mod tests {
    use crate::harness::plot::testing::{clean, draw};
    use crate::harness::plot::{read_svg_layout, Point, Spec};

    #[test]
    fn bars_never_stand_on_a_log_axis() {
        let spec = Spec::bar("Launch cost", "how", "µs").log_y();
        let pts = vec![
            Point::new("per launch", "stream", 2.5, 2.4, 3.0),
            Point::new("per launch", "graph node", 0.8, 0.7, 0.9),
        ];
        let svg = draw(&spec, &pts);
        assert!(svg.contains("graph node") && svg.contains("2.5"));
        let l = read_svg_layout(&svg);
        // Markers (circles), not rectangles.
        assert!(svg.contains("<circle"), "{svg}");
        assert!(l.marks.iter().all(|m| m.boxes.iter().all(|b| b.x1 - b.x0 < 20.0)));
        clean(&svg);
    }
}
