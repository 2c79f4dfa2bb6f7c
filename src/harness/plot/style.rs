//! Colours, font sizes and text metrics: the palette, the requested font sizes and the SVG
//! sizes they become, DejaVu Sans advance widths ([`text_width`]) and word wrapping.

use plotters::style::RGBColor;

/// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies) without
/// their yellow, which does not read on white; a darker orange and a wine red complete eight.
pub(super) const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(190, 130, 0),
    RGBColor(40, 40, 40),
    RGBColor(136, 34, 85),
];
/// The colour of the points a figure draws without naming them (a `grey` series).
pub(super) const GREY: RGBColor = RGBColor(160, 160, 160);
pub(super) const INK: RGBColor = RGBColor(30, 30, 30);
pub(super) const MUTED: RGBColor = RGBColor(85, 85, 85);
pub(super) const GUIDE: RGBColor = RGBColor(70, 70, 70);
pub(super) const GRID: RGBColor = RGBColor(228, 228, 228);
pub(super) const FRAME: RGBColor = RGBColor(190, 190, 190);
pub(super) const LEADER: RGBColor = RGBColor(140, 140, 140);

/// Width of every figure in SVG pixels.
pub const WIDTH: f64 = 860.0;
/// The widest the book shows a figure (mdBook's content column), in CSS pixels.
pub const BOOK_DISPLAY_WIDTH: f64 = 750.0;
/// The smallest text height, in CSS pixels, at [`BOOK_DISPLAY_WIDTH`].
pub const MIN_DISPLAY_FONT_PX: f64 = 11.0;
/// plotters' SVG backend writes `font-size` = the requested size / 1.24.
pub const PLOTTERS_SVG_FONT_SCALE: f64 = 1.0 / 1.24;

// Requested font sizes (plotters units); the smallest, 16, renders at 12.9 SVG px, 11.25 px
// at the book's width.
pub(super) const F_TITLE: f64 = 21.0;
pub(super) const F_AXIS: f64 = 17.0;
pub(super) const F_PANEL: f64 = 17.0;
pub(super) const F_TICK: f64 = 16.0;
pub(super) const F_LEGEND: f64 = 16.0;
pub(super) const F_LABEL: f64 = 16.0;
pub(super) const F_FOOTER: f64 = 16.0;

/// The SVG font size of a requested size.
pub(super) fn em(requested: f64) -> f64 {
    requested * PLOTTERS_SVG_FONT_SCALE
}

pub(super) fn line_height(requested: f64) -> f64 {
    (em(requested) * 1.3).ceil()
}

/// Advance widths of DejaVu Sans, in thousandths of an em, for ASCII 32..=126.
const DEJAVU_ASCII: [u16; 95] = [
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337,
    636, 636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531,
    1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787,
    603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500,
    500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
];

fn char_em(c: char) -> f64 {
    let w = match c {
        ' '..='~' => DEJAVU_ASCII[c as usize - 32],
        '×' | '−' | '≤' | '≥' | '→' | '±' => 838,
        '²' | '³' => 401,
        'µ' => 636,
        '·' | '’' => 318,
        '–' | '°' => 500,
        '—' | '…' => 1000,
        _ => 800,
    };
    f64::from(w) / 1000.0
}

/// Estimated width in pixels of `text` set at `font_px` (SVG font size) in DejaVu Sans, the
/// widest of the usual sans-serif fonts, so a layout that fits with it fits with the others.
pub fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars().map(char_em).sum::<f64>() * font_px
}

pub(super) fn width_of(text: &str, requested: f64) -> f64 {
    text_width(text, em(requested))
}

/// Greedy word wrap to `max_w` pixels (a single word wider than that gets a line alone).
pub(super) fn wrap(text: &str, requested: f64, max_w: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let cand =
            if cur.is_empty() { word.to_string() } else { format!("{cur} {word}") };
        if cur.is_empty() || width_of(&cand, requested) <= max_w {
            cur = cand;
        } else {
            lines.push(std::mem::replace(&mut cur, word.to_string()));
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Word wrap into as few lines as [`wrap`] needs, of widths as even as possible.
pub(super) fn wrap_balanced(text: &str, requested: f64, max_w: f64) -> Vec<String> {
    let lines = wrap(text, requested, max_w);
    if lines.len() < 2 {
        return lines;
    }
    let (mut lo, mut hi) = (0.0, max_w);
    for _ in 0..24 {
        let mid = (lo + hi) / 2.0;
        if wrap(text, requested, mid).len() <= lines.len() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    wrap(text, requested, hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::testing::draw;
    use crate::harness::plot::{read_svg_layout, Point, Spec};

    #[test]
    fn text_is_legible_at_the_books_width() {
        for size in [F_TITLE, F_AXIS, F_PANEL, F_TICK, F_LEGEND, F_LABEL, F_FOOTER] {
            assert!(
                em(size) * BOOK_DISPLAY_WIDTH / WIDTH >= MIN_DISPLAY_FONT_PX,
                "{size}"
            );
        }
        let svg =
            draw(&Spec::bar("t", "x", "y"), &[Point::new("s", "a", 1.0, 1.0, 1.0)]);
        let sizes: Vec<f64> =
            read_svg_layout(&svg).texts.iter().map(|t| t.font_px).collect();
        assert!(
            sizes.iter().all(|s| s * BOOK_DISPLAY_WIDTH / WIDTH >= MIN_DISPLAY_FONT_PX),
            "{sizes:?}"
        );
    }
}
