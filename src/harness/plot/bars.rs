//! Drawing grouped bar charts: bars with min–max bars and hover titles, and their value labels
//! where every label fits above its bar.

use plotters::style::text_anchor::{HPos, VPos};

use super::axis::ValueAxis;
use super::figure::{series_in, Figure, Panel};
use super::numbers::value_label;
use super::scene::{error_bar_v, Bx, Op, Scene, Shape, TextOp};
use super::style::{width_of, F_LABEL, INK, WIDTH};
use super::types::PanelBy;

/// Whether every bar can carry its value above it: few bars, each label no wider than its bar's
/// share of the group.
pub(super) fn bar_value_labels_fit(fig: &Figure, cats: &[Vec<String>]) -> bool {
    let bars: usize = fig.panels.iter().map(|p| p.points.len()).sum();
    if bars > 16 {
        return false;
    }
    let cols = fig.spec.panel_columns.clamp(1, fig.panels.len().max(1));
    let plot_w = (WIDTH - 140.0) / cols as f64;
    fig.panels.iter().zip(cats).all(|(p, c)| {
        let n_series = series_in(p).len().max(1);
        let pitch = plot_w / c.len().max(1) as f64 * 0.8 / n_series as f64;
        p.points
            .iter()
            .all(|(_, _, q)| width_of(&value_label(q.y), F_LABEL) <= pitch - 4.0)
    })
}

pub(super) fn draw_bars(
    sc: &mut Scene,
    fig: &Figure,
    panel: &Panel,
    cats: &[String],
    plot: &Bx,
    ya: &ValueAxis,
    value_labels: bool,
) {
    let present = series_in(panel);
    let slot = (plot.x1 - plot.x0) / cats.len().max(1) as f64;
    let pitch = slot * 0.8 / present.len().max(1) as f64;
    let bar_w = (pitch * 0.86).max(2.0);
    let base = ya.px(ya.value_at(ya.lo.max(if ya.log { ya.lo } else { 0.0 })));
    let mut labels = Vec::new();
    for (ci, cat) in cats.iter().enumerate() {
        for (k, si, p) in panel.row(&present, cat) {
            let st = &fig.styles[si];
            let cx = plot.x0 + slot * ci as f64 + slot * 0.1 + pitch * (k as f64 + 0.5);
            let top = ya.px(p.y);
            let b = Bx::new(cx - bar_w / 2.0, top, cx + bar_w / 2.0, base);
            let original = match &panel.name {
                Some(n) => match fig.spec.panels {
                    Some(PanelBy::XFirstWord) => format!("{n} {cat}"),
                    Some(PanelBy::XLastWord) => format!("{cat} {n}"),
                    _ => format!("{cat} ({n})"),
                },
                None => cat.clone(),
            };
            sc.ops.push(Op::Open(fig.hover(si, original.trim(), p)));
            sc.bar(b, st.color, st.outlined);
            let cap = (bar_w * 0.3).clamp(1.5, 6.0);
            error_bar_v(sc, cx, ya.px(p.y_min), ya.px(p.y_max), cap, INK);
            sc.ops.push(Op::Close);
            sc.mark_box(b);
            if value_labels {
                let y_top = ya.px(p.y_max.max(p.y)).min(top);
                labels.push(TextOp::new(
                    &value_label(p.y),
                    cx,
                    y_top - 3.0,
                    F_LABEL,
                    HPos::Center,
                    VPos::Bottom,
                ));
            }
        }
    }
    for mut t in labels {
        // Above any reference line it would sit on.
        for _ in 0..4 {
            let b = t.bbox();
            match sc.marks.iter().find(|m| m.hits(&b)) {
                Some(Shape::Seg(a, _)) => t.y = a.1.min(t.y) - 3.0,
                _ => break,
            }
        }
        sc.text(t);
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::plot::testing::{clean, draw};
    use crate::harness::plot::Point;
    use crate::harness::plot::Spec;

    /// Past the palette's eight colours a bar series keeps its colour as an outline around a
    /// pale fill, in the plot and in the legend, so no two series look the same.
    #[test]
    fn series_past_the_palette_are_outlined() {
        let spec = Spec::bar("Ten variants", "dataset", "fraction");
        let pts: Vec<Point> = (0..10)
            .map(|i| {
                Point::new(
                    &format!("variant {i}"),
                    "LARGE",
                    0.1 * f64::from(i + 1),
                    0.0,
                    1.1,
                )
            })
            .collect();
        let svg = draw(&spec, &pts);
        // The first series' blue (0, 114, 178) fills two rectangles (bar and swatch); the
        // ninth series' outline has the same colour, and its fill is the pale tint.
        let blue_fills = svg.matches(r##"fill="#0072B2""##).count();
        let blue_outlines = svg.matches(r##"stroke="#0072B2""##).count();
        assert_eq!((blue_fills, blue_outlines), (2, 2), "{svg}");
        assert_eq!(svg.matches(r##"fill="#B3D5E8""##).count(), 2, "{svg}");
        clean(&svg);
    }
}
