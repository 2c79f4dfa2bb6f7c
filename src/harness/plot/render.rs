//! Turning a scene into SVG text with plotters, then post-processing it: plotters cannot write
//! a `<title>`, so each hover group is drawn between two sentinel texts that
//! [`add_hover_titles`] replaces by `<g><title>…</title>` … `</g>`. Every text a figure shows
//! passes through [`drawable_text`] first, which leaves no control character in it: the
//! sentinels start with one, so no name or title in a record can be taken for a sentinel.

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::Pos;

use super::scene::{Marker, Op, Scene};
use super::style::WIDTH;

const GROUP_OPEN: &str = "\u{1}cmbook-hover-group-open:";
const GROUP_CLOSE: &str = "\u{1}cmbook-hover-group-close";

/// `text` as a figure may show it: line breaks and tabs become spaces (an SVG text is one
/// line), and every other control character, which XML does not allow, becomes U+FFFD.
/// What a record holds reaches the SVG only through here, so it can never hold a sentinel.
pub(super) fn drawable_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            c if c.is_control() && c.is_whitespace() => ' ',
            c if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

fn ip(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

pub(super) fn render(sc: &Scene, height: u32) -> anyhow::Result<String> {
    let mut svg = String::new();
    let mut titles: Vec<&str> = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH as u32, height))
            .into_drawing_area();
        root.fill(&WHITE)?;
        root.draw(&Rectangle::new(
            [(0, 0), (WIDTH as i32 - 1, height as i32 - 1)],
            RGBColor(214, 214, 214).stroke_width(1),
        ))?;
        let sentinel = ("sans-serif", 1.0).into_font().color(&BLACK);
        for op in &sc.ops {
            match op {
                Op::Rect { b, fill, stroke } => {
                    let corners = [ip((b.x0, b.y0)), ip((b.x1, b.y1))];
                    if let Some(c) = fill {
                        root.draw(&Rectangle::new(corners, c.filled()))?;
                    }
                    if let Some((c, w)) = stroke {
                        root.draw(&Rectangle::new(corners, c.stroke_width(*w)))?;
                    }
                }
                Op::Path { pts, color, width, dashed } => {
                    let pts: Vec<(i32, i32)> = pts.iter().map(|p| ip(*p)).collect();
                    let style = color.stroke_width(*width);
                    if *dashed {
                        root.draw(&DashedPathElement::new(pts, 6, 4, style))?;
                    } else {
                        root.draw(&PathElement::new(pts, style))?;
                    }
                }
                Op::Marker { c, r, shape, color, hollow } => {
                    let style =
                        if *hollow { color.stroke_width(2) } else { color.filled() };
                    let (x, y) = *c;
                    let poly = |v: Vec<(f64, f64)>| -> Vec<(i32, i32)> {
                        v.into_iter().map(|(dx, dy)| ip((x + dx, y + dy))).collect()
                    };
                    let shape_pts = match shape {
                        Marker::Circle => None,
                        Marker::Square => {
                            let s = r * 0.9;
                            Some(poly(vec![(-s, -s), (s, -s), (s, s), (-s, s)]))
                        }
                        Marker::Triangle => {
                            let s = r * 1.2;
                            Some(poly(vec![(0.0, -s), (s, s * 0.75), (-s, s * 0.75)]))
                        }
                        Marker::TriangleDown => {
                            let s = r * 1.2;
                            Some(poly(vec![(0.0, s), (s, -s * 0.75), (-s, -s * 0.75)]))
                        }
                        Marker::Diamond => {
                            let s = r * 1.25;
                            Some(poly(vec![(0.0, -s), (s, 0.0), (0.0, s), (-s, 0.0)]))
                        }
                    };
                    match shape_pts {
                        None => {
                            root.draw(&Circle::new(ip(*c), r.round() as u32, style))?;
                        }
                        Some(mut pts) if *hollow => {
                            pts.push(pts[0]);
                            root.draw(&PathElement::new(pts, style))?;
                        }
                        Some(pts) => {
                            root.draw(&Polygon::new(pts, style))?;
                        }
                    }
                }
                Op::Text(t) => {
                    let font = if t.bold {
                        ("sans-serif", t.size, FontStyle::Bold).into_font()
                    } else {
                        ("sans-serif", t.size).into_font()
                    };
                    let mut style = font.color(&t.color).pos(Pos::new(t.h, t.v));
                    if t.rotate {
                        style = style.transform(FontTransform::Rotate270);
                    }
                    root.draw(&Text::new(t.text.clone(), ip((t.x, t.y)), style))?;
                }
                Op::Open(title) => {
                    titles.push(title);
                    let s = format!("{GROUP_OPEN}{}", titles.len() - 1);
                    root.draw(&Text::new(s, (0, 0), sentinel.clone()))?;
                }
                Op::Close => {
                    root.draw(&Text::new(GROUP_CLOSE, (0, 0), sentinel.clone()))?;
                }
            }
        }
        root.present()?;
    }
    Ok(add_hover_titles(&svg, &titles))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Replaces the sentinel texts around each mark by `<g><title>…</title>` … `</g>`: plotters
/// cannot write a `<title>`, so the marks it draws are grouped afterwards, deterministically.
fn add_hover_titles(svg: &str, titles: &[&str]) -> String {
    let lines: Vec<&str> = svg.lines().collect();
    let mut out = String::with_capacity(svg.len());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with("<text")
            && i + 2 < lines.len()
            && lines[i + 2] == "</text>"
        {
            if let Some(n) = lines[i + 1].strip_prefix(GROUP_OPEN) {
                let title =
                    n.parse::<usize>().ok().and_then(|n| titles.get(n)).unwrap_or(&"");
                out.push_str(&format!(
                    "<g>\n<title>{}</title>\n",
                    xml_escape(&drawable_text(title))
                ));
                i += 3;
                continue;
            }
            if lines[i + 1] == GROUP_CLOSE {
                out.push_str("</g>\n");
                i += 3;
                continue;
            }
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::testing::{clean, draw};
    use crate::harness::plot::{read_svg_layout, Point, Spec};

    #[test]
    fn every_bar_and_point_has_a_hover_title() {
        let bars = Spec::bar("t", "kernel", "GB/s");
        let pts = vec![
            Point::new("a", "copy", 2803.2107, 2787.6, 2814.0),
            Point::new("a", "stencil", 2174.3, 2161.5, 2187.8),
            Point::new("b", "copy", 3442.0, 3442.0, 3442.0),
        ];
        let svg = draw(&bars, &pts);
        let l = read_svg_layout(&svg);
        let titles: Vec<&str> = l.marks.iter().map(|m| m.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "a, copy: 2803 (2788–2814)",
                "b, copy: 3442",
                "a, stencil: 2174 (2162–2188)"
            ]
        );
        assert!(svg.contains("<title>a, copy: 2803 (2788–2814)</title>"));
        assert!(!svg.contains(GROUP_OPEN) && !svg.contains(GROUP_CLOSE));
        clean(&svg);
        let line = Spec::line("t", "n", "ms").log_y();
        let pts =
            vec![Point::new("s", 1, 1.0, 0.9, 1.1), Point::new("s", 2, 2.0, 2.0, 2.0)];
        let l = read_svg_layout(&draw(&line, &pts));
        // The line itself, then one group per point.
        assert_eq!(l.marks.len(), 3);
        assert_eq!(l.marks[1].title, "s, 1: 1 (0.9–1.1)");
    }

    #[test]
    fn names_like_the_sentinels_are_drawn_as_text() {
        let names = [
            "cmbook-hover-group-close",
            "cmbook-hover-group-open:0",
            GROUP_CLOSE,
            &format!("{GROUP_OPEN}0"),
            "a\nb\tc\u{7}d",
        ];
        let spec = Spec::line(GROUP_CLOSE, "n", "ms");
        let pts: Vec<Point> = names
            .iter()
            .flat_map(|s| {
                [Point::new(s, 1, 1.0, 1.0, 1.0), Point::new(s, 2, 2.0, 2.0, 2.0)]
            })
            .collect();
        let svg = draw(&spec, &pts);
        assert!(!svg.chars().any(|c| c.is_control() && c != '\n'), "{svg}");
        // One group per line and per point, every one closed.
        let opened = svg.lines().filter(|l| *l == "<g>").count();
        assert_eq!(opened, names.len() * 3, "{svg}");
        assert_eq!(svg.lines().filter(|l| *l == "</g>").count(), opened, "{svg}");
        let l = read_svg_layout(&svg);
        let texts: Vec<&str> = l.texts.iter().map(|t| t.text.as_str()).collect();
        for shown in [
            "cmbook-hover-group-close",
            "cmbook-hover-group-open:0",
            "\u{FFFD}cmbook-hover-group-close",
            "\u{FFFD}cmbook-hover-group-open:0",
            "a b c\u{FFFD}d",
        ] {
            assert!(texts.contains(&shown), "{shown:?} not in {texts:?}");
        }
        assert!(l.marks.iter().any(|m| m.title == "a b c\u{FFFD}d, 2: 2"), "{svg}");
    }
}
