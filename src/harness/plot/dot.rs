//! Dot plots: one row per category, each series' marker with a horizontal min–max bar on a
//! horizontal value axis (log where the values span decades), in one panel or a grid of them.

use plotters::style::text_anchor::{HPos, VPos};

use super::figure::{series_in, Figure};
use super::layout::{
    bottom_ticks, panel_frame, panel_ground, PanelGrid, COL_GAP, MARGIN,
};
use super::legend::place_x_ref_label;
use super::numbers::value_label;
use super::scene::{error_bar_h, marker_box, Op, Scene, TextOp};
use super::style::{
    line_height, width_of, wrap_balanced, F_LABEL, F_TICK, GRID, GUIDE, WIDTH,
};
use super::types::Axis;

/// Vertical distance between the markers of two series in one row of a dot plot.
const DOT_DODGE: f64 = 12.0;

/// Height of one category row of a dot plot: room for every series' marker.
pub(super) fn dot_row_height(fig: &Figure) -> f64 {
    (fig.series.len() as f64 * DOT_DODGE + 14.0).max(38.0)
}

/// Lays out a dot plot: one panel or a grid of them, each with its category labels on the
/// left and the horizontal value axis below. `None` when this attempt cannot place its legend
/// or a reference line's label without covering something (`last` places them regardless).
pub(super) fn layout_dot(
    g: &PanelGrid,
    mut sc: Scene,
    y: f64,
) -> anyhow::Result<Option<(Scene, u32)>> {
    let fig = g.fig;
    let cols = g.cols;
    // Category labels on the left, wrapped to at most 240 px.
    let cat_w = 240.0;
    let cat_lines: Vec<Vec<Vec<String>>> = g
        .cats_per_panel
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
        (WIDTH - g.band - MARGIN - 10.0 - (cols - 1) as f64 * COL_GAP) / cols as f64;
    let plot_w = col_w - left_w;
    // Value labels to the right of each dot need room: reserve their widest.
    let label_w = fig
        .panels
        .iter()
        .flat_map(|p| p.points.iter())
        .map(|(_, _, p)| width_of(&value_label(p.y), F_LABEL))
        .fold(0.0, f64::max)
        + 12.0;
    let axes = g.value_axes(label_w, 0.0, plot_w)?;
    let (plots, y) = g.place_panels(
        y,
        (col_w, left_w, plot_w),
        |i| {
            (g.cats_per_panel[i].len() as f64 * dot_row_height(fig) + 8.0).min(g.plot_h)
        },
        |_| 1,
    );
    for (i, plot) in plots.iter().enumerate() {
        let panel = &fig.panels[i];
        let xa = axes[i].shifted(plot.x0);
        panel_ground(&mut sc, plot, panel.name.as_ref());
        for (v, _) in &xa.ticks {
            let px = xa.px(*v).round();
            sc.path(vec![(px, plot.y0), (px, plot.y1)], GRID, 1, false);
        }
        let cats = &g.cats_per_panel[i];
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
            for (k, si, p) in panel.row(&present, cat) {
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
                sc.marker(c, 5.0, st.marker, st.color, st.dashed);
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
        panel_frame(&mut sc, plot);
        bottom_ticks(&mut sc, plot, &xa);
        for (r, v) in &fig.refs {
            if r.axis == Axis::Y {
                let px = xa.px(*v);
                sc.path(vec![(px, plot.y0), (px, plot.y1)], GUIDE, 1, true);
                if !g.attempt.refs_in_legend {
                    match place_x_ref_label(&sc, plot, px, &fig.ref_label(r, *v)) {
                        Some(mut t) => {
                            t.color = GUIDE;
                            sc.text(t);
                        }
                        None if !g.last => return Ok(None),
                        None => {}
                    }
                }
            }
        }
    }
    g.finish(sc, &plots, y, None)
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
