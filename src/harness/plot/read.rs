//! Reading a drawn SVG back, as the layout tests and the book's figure checks do: its texts
//! with their estimated boxes, its data marks (hover groups), and [`layout_problems`], every
//! text that is too small, outside the figure or over another text or a mark.

use plotters::style::text_anchor::{HPos, VPos};

use super::scene::{marker_box, text_box, Bx};
use super::style::{text_width, BOOK_DISPLAY_WIDTH, MIN_DISPLAY_FONT_PX};

/// A text of a drawn SVG with the box it covers (estimated as the layout estimates it).
#[derive(Debug, Clone)]
pub struct SvgText {
    pub text: String,
    /// The SVG `font-size`.
    pub font_px: f64,
    pub bbox: Bx,
}

/// The texts, the data marks (everything inside a hover group, with its title) and the size
/// of an SVG this module drew.
#[derive(Debug, Clone, Default)]
pub struct SvgLayout {
    pub width: f64,
    pub height: f64,
    pub texts: Vec<SvgText>,
    pub marks: Vec<SvgMark>,
}

/// A data mark of a drawn SVG: what one hover group holds.
#[derive(Debug, Clone, Default)]
pub struct SvgMark {
    pub title: String,
    /// Bars, markers (their bounding boxes).
    pub boxes: Vec<Bx>,
    /// Lines, as their segments.
    pub segments: Vec<((f64, f64), (f64, f64))>,
}

fn attr<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = line.find(&key)? + key.len();
    let end = line[start..].find('"')? + start;
    Some(&line[start..end])
}

fn num_attr(line: &str, name: &str) -> Option<f64> {
    attr(line, name)?.parse().ok()
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn points_attr(line: &str) -> Vec<(f64, f64)> {
    attr(line, "points")
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|p| {
            let (x, y) = p.split_once(',')?;
            Some((x.parse().ok()?, y.parse().ok()?))
        })
        .collect()
}

/// Parses an SVG written by [`draw_svg`](super::draw_svg).
pub fn read_svg_layout(svg: &str) -> SvgLayout {
    let lines: Vec<&str> = svg.lines().collect();
    let mut out = SvgLayout::default();
    let mut group: Option<SvgMark> = None;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if l.starts_with("<svg") {
            out.width = num_attr(l, "width").unwrap_or(0.0);
            out.height = num_attr(l, "height").unwrap_or(0.0);
        } else if l == "<g>" {
            let title = lines
                .get(i + 1)
                .and_then(|t| t.strip_prefix("<title>"))
                .and_then(|t| t.strip_suffix("</title>"))
                .map(xml_unescape)
                .unwrap_or_default();
            group = Some(SvgMark { title, ..SvgMark::default() });
            i += 2;
            continue;
        } else if l == "</g>" {
            out.marks.extend(group.take());
        } else if l.starts_with("<text") {
            let content = xml_unescape(lines.get(i + 1).copied().unwrap_or(""));
            let font_px = num_attr(l, "font-size").unwrap_or(0.0);
            let h = match attr(l, "text-anchor") {
                Some("middle") => HPos::Center,
                Some("end") => HPos::Right,
                _ => HPos::Left,
            };
            let v = match attr(l, "dy") {
                Some("0.76em") => VPos::Top,
                Some("-0.5ex") => VPos::Bottom,
                _ => VPos::Center,
            };
            let bold = attr(l, "font-weight") == Some("bold");
            let w = text_width(&content, font_px) * if bold { 1.1 } else { 1.0 };
            let (x, y) =
                (num_attr(l, "x").unwrap_or(0.0), num_attr(l, "y").unwrap_or(0.0));
            let rotate =
                attr(l, "transform").is_some_and(|t| t.starts_with("rotate(270"));
            let bbox = text_box(x, y, w, font_px, h, v, rotate);
            out.texts.push(SvgText { text: content, font_px, bbox });
            i += 3;
            continue;
        } else if let Some(SvgMark { boxes, segments: segs, .. }) = group.as_mut() {
            if l.starts_with("<rect") {
                let (x, y) =
                    (num_attr(l, "x").unwrap_or(0.0), num_attr(l, "y").unwrap_or(0.0));
                let (w, h) = (
                    num_attr(l, "width").unwrap_or(0.0),
                    num_attr(l, "height").unwrap_or(0.0),
                );
                boxes.push(Bx::new(x, y, x + w, y + h));
            } else if l.starts_with("<circle") {
                let (x, y) = (
                    num_attr(l, "cx").unwrap_or(0.0),
                    num_attr(l, "cy").unwrap_or(0.0),
                );
                let r = num_attr(l, "r").unwrap_or(0.0);
                boxes.push(marker_box((x, y), r));
            } else if l.starts_with("<polyline") || l.starts_with("<polygon") {
                let pts = points_attr(l);
                for w in pts.windows(2) {
                    segs.push((w[0], w[1]));
                }
                if pts.len() == 1 {
                    boxes.push(marker_box(pts[0], 0.5));
                }
            } else if l.starts_with("<line") {
                let p = |a: &str, b: &str| {
                    (num_attr(l, a).unwrap_or(0.0), num_attr(l, b).unwrap_or(0.0))
                };
                segs.push((p("x1", "y1"), p("x2", "y2")));
            }
        }
        i += 1;
    }
    out
}

/// Everything about an SVG's layout that makes it hard to read: text smaller than
/// [`MIN_DISPLAY_FONT_PX`] at the book's width, texts that overlap each other or a data mark,
/// texts outside the figure. Empty when the figure is clean.
pub fn layout_problems(svg: &str) -> Vec<String> {
    let l = read_svg_layout(svg);
    let mut problems = Vec::new();
    if l.width <= 0.0 {
        return vec!["no <svg width>".into()];
    }
    let scale = BOOK_DISPLAY_WIDTH.min(l.width) / l.width;
    let canvas = Bx::new(0.0, 0.0, l.width, l.height);
    for t in &l.texts {
        if t.font_px * scale < MIN_DISPLAY_FONT_PX - 1e-9 {
            problems.push(format!(
                "`{}` renders at {:.1} px at {BOOK_DISPLAY_WIDTH} px (font-size {:.2})",
                t.text,
                t.font_px * scale,
                t.font_px
            ));
        }
        if !t.bbox.inside(&canvas.grow(0.5)) {
            problems
                .push(format!("`{}` runs outside the figure ({:?})", t.text, t.bbox));
        }
    }
    for (i, a) in l.texts.iter().enumerate() {
        let ab = a.bbox.grow(-0.5);
        for b in &l.texts[i + 1..] {
            if ab.hits(&b.bbox.grow(-0.5)) {
                problems.push(format!("`{}` overlaps `{}`", a.text, b.text));
            }
        }
        for SvgMark { title, boxes, segments: segs } in &l.marks {
            if boxes.iter().any(|m| m.hits(&ab))
                || segs.iter().any(|(p, q)| ab.hits_segment(*p, *q))
            {
                problems.push(format!("`{}` covers the mark `{title}`", a.text));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlap_check_sees_overlaps() {
        let svg = "<svg width=\"860\" height=\"100\" viewBox=\"0 0 860 100\">\n\
<text x=\"10\" y=\"10\" dy=\"0.76em\" text-anchor=\"start\" font-family=\"sans-serif\" font-size=\"12.9\" opacity=\"1\" fill=\"#000000\">\nhello world\n</text>\n\
<text x=\"20\" y=\"12\" dy=\"0.76em\" text-anchor=\"start\" font-family=\"sans-serif\" font-size=\"8\" opacity=\"1\" fill=\"#000000\">\nsmall\n</text>\n\
<g>\n<title>s, a: 1</title>\n<rect x=\"60\" y=\"5\" width=\"10\" height=\"50\" opacity=\"1\" fill=\"#0072B2\" stroke=\"none\"/>\n</g>\n</svg>\n";
        let p = layout_problems(svg);
        assert!(p.iter().any(|x| x.contains("overlaps")), "{p:?}");
        assert!(p.iter().any(|x| x.contains("renders at")), "{p:?}");
        assert!(p.iter().any(|x| x.contains("covers the mark `s, a: 1`")), "{p:?}");
    }
}
