//! Placing what names the data: legends (inside the plot where a corner or edge covers
//! nothing, else in rows above it), their swatches, and the labels of reference lines beside
//! their lines.

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::WHITE;

use super::figure::Swatch;
use super::scene::{Bx, Scene, TextOp};
use super::style::{line_height, width_of, FRAME, F_LABEL, F_LEGEND, GUIDE};

/// A label for a horizontal reference line at `py`: above or below it, at either end.
pub(super) fn place_y_ref_label(
    sc: &Scene,
    plot: &Bx,
    py: f64,
    label: &str,
) -> Option<TextOp> {
    let inset = 6.0;
    let cands = [
        TextOp::new(
            label,
            plot.x1 - inset,
            py - 3.0,
            F_LABEL,
            HPos::Right,
            VPos::Bottom,
        ),
        TextOp::new(
            label,
            plot.x0 + inset,
            py - 3.0,
            F_LABEL,
            HPos::Left,
            VPos::Bottom,
        ),
        TextOp::new(label, plot.x1 - inset, py + 3.0, F_LABEL, HPos::Right, VPos::Top),
        TextOp::new(label, plot.x0 + inset, py + 3.0, F_LABEL, HPos::Left, VPos::Top),
        TextOp::new(
            label,
            (plot.x0 + plot.x1) / 2.0,
            py - 3.0,
            F_LABEL,
            HPos::Center,
            VPos::Bottom,
        ),
        TextOp::new(
            label,
            (plot.x0 + plot.x1) / 2.0,
            py + 3.0,
            F_LABEL,
            HPos::Center,
            VPos::Top,
        ),
    ];
    cands.into_iter().find(|t| {
        let b = t.bbox();
        b.inside(plot) && sc.free(&b.grow(1.0))
    })
}

/// A label for a vertical reference line at `px`: beside it, from the top down.
pub(super) fn place_x_ref_label(
    sc: &Scene,
    plot: &Bx,
    px: f64,
    label: &str,
) -> Option<TextOp> {
    let step = line_height(F_LABEL);
    (0..12)
        .flat_map(|k| {
            let y = plot.y0 + 4.0 + k as f64 * step;
            [
                TextOp::new(label, px + 4.0, y, F_LABEL, HPos::Left, VPos::Top),
                TextOp::new(label, px - 4.0, y, F_LABEL, HPos::Right, VPos::Top),
            ]
        })
        .find(|t| {
            let b = t.bbox();
            b.inside(plot) && sc.free(&b.grow(1.0))
        })
}

/// Draws a legend inside the plot where it covers nothing; false if no place is free.
pub(super) fn legend_inside(
    sc: &mut Scene,
    entries: &[(Swatch, String)],
    plot: &Bx,
) -> bool {
    let lh = line_height(F_LEGEND) + 2.0;
    let sw_w = entries.iter().map(|(s, _)| swatch_width(s)).fold(0.0, f64::max);
    let w = entries.iter().map(|(_, n)| width_of(n, F_LEGEND)).fold(0.0, f64::max)
        + sw_w
        + 6.0
        + 16.0;
    let h = entries.len() as f64 * lh + 10.0;
    let inset = 8.0;
    let (l, r) = (plot.x0 + inset, plot.x1 - inset - w);
    let (t, b) = (plot.y0 + inset, plot.y1 - inset - h);
    let (cx, cy) = ((plot.x0 + plot.x1 - w) / 2.0, (plot.y0 + plot.y1 - h) / 2.0);
    let corners = [(l, t), (r, t), (r, b), (l, b), (cx, t), (cx, b), (l, cy), (r, cy)];
    for (x, y) in corners {
        let bx = Bx::new(x, y, x + w, y + h);
        if bx.inside(plot) && sc.free(&bx.grow(3.0)) {
            sc.rect(bx, Some(WHITE), Some((FRAME, 1)));
            for (k, (sw, name)) in entries.iter().enumerate() {
                let ey = y + 5.0 + k as f64 * lh + lh / 2.0;
                swatch(sc, sw, x + 8.0, ey);
                sc.text(TextOp::new(
                    name,
                    x + 8.0 + sw_w + 6.0,
                    ey,
                    F_LEGEND,
                    HPos::Left,
                    VPos::Center,
                ));
            }
            sc.mark_box(bx);
            return true;
        }
    }
    false
}

/// Draws legend entries in rows from `x0` to `x1` starting at `y`; returns the y below them.
pub(super) fn legend_rows(
    sc: &mut Scene,
    entries: &[(Swatch, String)],
    x0: f64,
    y: f64,
    x1: f64,
) -> f64 {
    let lh = line_height(F_LEGEND) + 4.0;
    let mut x = x0;
    let mut row_y = y;
    for (sw, name) in entries {
        let w = swatch_width(sw) + 6.0 + width_of(name, F_LEGEND);
        if x > x0 && x + w > x1 {
            x = x0;
            row_y += lh;
        }
        let cy = row_y + lh / 2.0;
        swatch(sc, sw, x, cy);
        sc.text(TextOp::new(
            name,
            x + swatch_width(sw) + 6.0,
            cy,
            F_LEGEND,
            HPos::Left,
            VPos::Center,
        ));
        x += w + 22.0;
    }
    row_y + lh
}

fn swatch_width(sw: &Swatch) -> f64 {
    match sw {
        Swatch::Line { .. } | Swatch::Guide => 28.0,
        Swatch::Markers { .. } | Swatch::Bar { .. } => 14.0,
    }
}

fn swatch(sc: &mut Scene, sw: &Swatch, x: f64, y: f64) {
    match sw {
        Swatch::Line { color, marker, dashed } => {
            sc.path(vec![(x, y), (x + 28.0, y)], *color, 2, *dashed);
            sc.marker((x + 14.0, y), 3.5, *marker, *color, *dashed);
        }
        Swatch::Markers { color, marker, hollow } => {
            sc.marker((x + 7.0, y), 5.0, *marker, *color, *hollow);
        }
        Swatch::Bar { color, outlined } => {
            sc.bar(Bx::new(x, y - 7.0, x + 14.0, y + 7.0), *color, *outlined);
        }
        Swatch::Guide => {
            sc.path(vec![(x, y), (x + 28.0, y)], GUIDE, 1, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::harness::plot::testing::{clean, draw};
    use crate::harness::plot::{read_svg_layout, Point, Spec, SvgMark};

    #[test]
    fn a_legend_never_covers_data() {
        // Lines through every corner: no corner is free, the legend goes above the plot.
        let spec = Spec::line("t", "x", "y");
        let mut pts = Vec::new();
        for i in 0..=20 {
            let x = i as f64;
            pts.push(Point::new("rising", x, x, x, x));
            pts.push(Point::new("falling", x, 20.0 - x, 20.0 - x, 20.0 - x));
            pts.push(Point::new("flat high", x, 19.0, 19.0, 19.0));
            pts.push(Point::new("flat low", x, 1.0, 1.0, 1.0));
            let z = if i % 2 == 0 { 0.0 } else { 20.0 };
            pts.push(Point::new("zigzag", x, z, z, z));
        }
        let svg = draw(&spec, &pts);
        clean(&svg);
        let l = read_svg_layout(&svg);
        let legend = l.texts.iter().find(|t| t.text == "rising").unwrap();
        let plot_top = l
            .marks
            .iter()
            .flat_map(|SvgMark { boxes: b, segments: s, .. }| {
                b.iter().map(|b| b.y0).chain(s.iter().map(|(p, _)| p.1))
            })
            .fold(f64::INFINITY, f64::min);
        assert!(
            legend.bbox.y1 < plot_top,
            "legend at {:?}, data from {plot_top}",
            legend.bbox
        );
    }
}
