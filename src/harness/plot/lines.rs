//! Drawing line charts: each series' joined line (or markers alone), markers with min–max
//! bars and hover titles, and the labels that name markers of markers-only series, placed
//! where they cover nothing (with a leader line when they must stand off).

use plotters::style::text_anchor::{HPos, VPos};

use super::axis::ValueAxis;
use super::figure::{series_in, Figure, Panel};
use super::scene::{error_bar_v, marker_box, Bx, Marker, Op, Scene, TextOp};
use super::spec::LABEL_AT;
use super::style::{em, width_of, F_LABEL, LEADER};
use super::types::Point;

pub(super) fn draw_lines(
    sc: &mut Scene,
    fig: &Figure,
    panel: &Panel,
    xa: &ValueAxis,
    ya: &ValueAxis,
) {
    for si in series_in(panel) {
        let st = &fig.styles[si];
        let mut pts: Vec<(f64, &String, &Point)> = panel
            .points
            .iter()
            .filter(|(s, _, _)| *s == si)
            .map(|(_, x, p)| (x.parse::<f64>().unwrap_or(f64::NAN), x, p))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let px: Vec<(f64, f64)> =
            pts.iter().map(|(x, _, p)| (xa.px(*x), ya.px(p.y))).collect();
        if !st.markers_only && px.len() > 1 {
            sc.ops.push(Op::Open(fig.series[si].clone()));
            sc.path(px.clone(), st.color, 2, st.dashed);
            sc.ops.push(Op::Close);
            for w in px.windows(2) {
                sc.mark_seg(w[0], w[1]);
            }
        }
        let (r, hollow, cap) =
            if st.markers_only { (5.0, true, 7.0) } else { (3.5, st.dashed, 5.0) };
        for ((_, x, p), c) in pts.iter().zip(&px) {
            let label = point_label(fig, si, x, p.y);
            let mut title = fig.hover(si, &fig.x_text(x), p);
            if let Some(l) = label {
                title = format!("{l}: {title}");
            }
            sc.ops.push(Op::Open(title));
            let shape = if st.markers_only { Marker::Circle } else { st.marker };
            sc.marker(*c, r, shape, st.color, hollow);
            error_bar_v(sc, c.0, ya.px(p.y_min), ya.px(p.y_max), cap, st.color);
            sc.ops.push(Op::Close);
            sc.mark_box(marker_box(*c, r + 1.0));
        }
    }
}

/// The label of the marker at (`x`, `y`): one keyed by its x and y (`x @ y`), or by its x
/// alone.
fn point_label<'a>(fig: &'a Figure, si: usize, x: &str, y: f64) -> Option<&'a str> {
    if !fig.styles[si].markers_only {
        return None;
    }
    let xv = x.parse::<f64>().ok();
    let same_x = |k: &str| k == x || (xv.is_some() && k.parse::<f64>().ok() == xv);
    fig.spec
        .point_labels
        .iter()
        .find(|(k, _)| match k.split_once(LABEL_AT) {
            Some((kx, ky)) => same_x(kx) && ky.parse::<f64>().ok() == Some(y),
            None => same_x(k),
        })
        .map(|(_, l)| l.as_str())
}

/// Names the labelled markers, each beside its marker where it covers nothing, farther out
/// with a leader line where the neighbourhood is crowded.
pub(super) fn place_point_labels(
    sc: &mut Scene,
    fig: &Figure,
    panel: &Panel,
    plot: &Bx,
    xa: &ValueAxis,
    ya: &ValueAxis,
) {
    let mut todo: Vec<(f64, f64, String)> = panel
        .points
        .iter()
        .filter_map(|(si, x, p)| {
            point_label(fig, *si, x, p.y).map(|l| {
                (xa.px(x.parse::<f64>().unwrap_or(f64::NAN)), ya.px(p.y), l.to_string())
            })
        })
        .collect();
    // Crowded points first: they have the fewest places left.
    let positions: Vec<(f64, f64)> = todo.iter().map(|(x, y, _)| (*x, *y)).collect();
    todo.sort_by_key(|a| std::cmp::Reverse(neighbours(&positions, a)));
    // East and west first, then above and below, then the diagonals.
    const ORDER: [usize; 16] = [0, 8, 4, 12, 2, 6, 10, 14, 1, 7, 9, 15, 3, 5, 11, 13];
    let r0 = 7.0;
    for (x, y, label) in todo {
        let w = width_of(&label, F_LABEL);
        let h = em(F_LABEL);
        type Leader = Option<((f64, f64), (f64, f64))>;
        let mut best: Option<((usize, usize, usize), TextOp, Leader)> = None;
        for (ring, dist) in
            [r0, r0 + 14.0, r0 + 30.0, r0 + 50.0, r0 + 75.0].iter().enumerate()
        {
            for (rank, k) in ORDER.iter().enumerate() {
                let ang = *k as f64 * std::f64::consts::PI / 8.0;
                let (dx, dy) = (ang.cos(), -ang.sin());
                // The box's centre, so that its side nearest the marker is `dist` away.
                let cx = x
                    + dx * dist
                    + dx.signum() * w / 2.0 * (dx.abs() > 0.3) as u8 as f64;
                let cy = y
                    + dy * dist
                    + dy.signum() * h / 2.0 * (dy.abs() > 0.3) as u8 as f64;
                let t =
                    TextOp::new(&label, cx, cy, F_LABEL, HPos::Center, VPos::Center);
                let b = t.bbox();
                if !b.inside(plot) {
                    continue;
                }
                let leader = (ring > 0).then(|| {
                    let end = (x.clamp(b.x0, b.x1), y.clamp(b.y0, b.y1));
                    let len =
                        ((end.0 - x).powi(2) + (end.1 - y).powi(2)).sqrt().max(1e-9);
                    let start =
                        (x + (end.0 - x) / len * 7.0, y + (end.1 - y) / len * 7.0);
                    (start, end)
                });
                let mut cost = sc.cost(&b.grow(1.5)) * 10;
                if let Some((a, e)) = leader {
                    cost +=
                        sc.texts.iter().filter(|t| t.hits_segment(a, e)).count() * 10;
                    cost +=
                        sc.marks.iter().filter(|m| m.hits_segment(a, e)).count() * 2;
                }
                let score = (cost, ring, rank);
                if best.as_ref().is_none_or(|(s, _, _)| score < *s) {
                    best = Some((score, t, leader));
                }
            }
            if best.as_ref().is_some_and(|b| b.0 .0 == 0) {
                break;
            }
        }
        if let Some((_, t, leader)) = best {
            if let Some((a, e)) = leader {
                sc.path(vec![a, e], LEADER, 1, false);
                sc.mark_seg(a, e);
            }
            sc.text(t);
        }
    }
}

fn neighbours(all: &[(f64, f64)], a: &(f64, f64, String)) -> usize {
    all.iter().filter(|(x, y)| (x - a.0).abs() < 80.0 && (y - a.1).abs() < 30.0).count()
}

#[cfg(test)]
mod tests {
    use crate::harness::plot::testing::{clean, draw, record};
    use crate::harness::plot::{read_svg_layout, Point, Spec};
    use crate::harness::record::Meta;

    #[test]
    fn markers_only_series_are_not_joined_and_survive_the_csv() {
        let pts = vec![
            Point::new("cases", 1, 2.0, 2.0, 2.0),
            Point::new("cases", 3, 1.0, 1.0, 1.0),
            Point::new("y = x", 1, 1.0, 1.0, 1.0),
            Point::new("y = x", 3, 3.0, 3.0, 3.0),
        ];
        let joined = Spec::line("t", "x", "y");
        let scatter = joined.clone().markers_only("cases");
        assert!(
            joined.add_to(Meta::default()).get("markers_only").is_none(),
            "figures without the option keep their records"
        );
        let rec = record(&scatter, &pts);
        assert_eq!(Spec::from_meta(&rec.meta).unwrap(), scatter);
        let series_lines = |svg: &str| {
            read_svg_layout(svg)
                .marks
                .iter()
                .filter(|m| !m.segments.is_empty() && !m.title.contains(':'))
                .count()
        };
        assert_eq!(series_lines(&draw(&joined, &pts)), 2);
        assert_eq!(series_lines(&draw(&scatter, &pts)), 1);
    }

    #[test]
    fn point_labels_name_markers_without_overlap() {
        let mut spec = Spec::line("t", "predicted", "measured")
            .log_x()
            .log_y()
            .markers_only("chains");
        let mut pts = Vec::new();
        for (i, (x, y)) in [
            (1.22, 1.17),
            (1.23, 1.20),
            (8.0, 4.3),
            (8.9, 5.5),
            (9.2, 5.9),
            (5.2, 4.4),
            (5.9, 4.6),
            (61.0, 35.0),
            (309.0, 12.5),
        ]
        .into_iter()
        .enumerate()
        {
            pts.push(Point::new("chains", x, y, y * 0.98, y * 1.02));
            spec = spec.point_label(&x.to_string(), &format!("random {}", i + 1));
        }
        pts.push(Point::new("predicted = measured", 1.22, 1.22, 1.22, 1.22));
        pts.push(Point::new("predicted = measured", 309.0, 309.0, 309.0, 309.0));
        let svg = draw(&spec, &pts);
        clean(&svg);
        let texts: Vec<String> =
            read_svg_layout(&svg).texts.into_iter().map(|t| t.text).collect();
        for i in 1..=9 {
            assert!(texts.contains(&format!("random {i}")), "{texts:?}");
        }
    }

    #[test]
    fn a_label_at_x_and_y_names_one_of_the_markers_at_one_x_and_grey_series_are_grey() {
        let spec = Spec::line("t", "x", "y")
            .log_y()
            .markers_only("named")
            .markers_only("others")
            .grey("others")
            .point_label_at("2", 40.0, "the fast one");
        let pts = vec![
            Point::new("others", 2, 5.0, 5.0, 5.0),
            Point::new("named", 2, 40.0, 40.0, 40.0),
            Point::new("named", 2, 10.0, 10.0, 10.0),
            Point::new("named", 4, 20.0, 20.0, 20.0),
        ];
        let rec = record(&spec, &pts);
        assert_eq!(Spec::from_meta(&rec.meta).unwrap(), spec);
        let svg = draw(&spec, &pts);
        clean(&svg);
        let layout = read_svg_layout(&svg);
        let texts: Vec<&str> = layout.texts.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts.iter().filter(|t| **t == "the fast one").count(),
            1,
            "{texts:?}"
        );
        // The label names the marker at y = 40 alone, in its hover title too.
        let titled: Vec<&str> = layout
            .marks
            .iter()
            .map(|m| m.title.as_str())
            .filter(|t| t.starts_with("the fast one:"))
            .collect();
        assert_eq!(titled.len(), 1, "{titled:?}");
        assert!(titled[0].contains("40"), "{titled:?}");
        // The grey series is drawn in grey, the named one in the palette's first colour.
        let grey = super::super::style::GREY;
        let hex = format!("#{:02X}{:02X}{:02X}", grey.0, grey.1, grey.2);
        assert!(svg.to_uppercase().contains(&hex), "no grey {hex} in the drawing");
    }
}
