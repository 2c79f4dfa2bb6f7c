//! The scene: what is drawn, in page pixels, with the boxes the layout keeps clear. Boxes
//! ([`Bx`]) and their overlap tests, markers, texts with their estimated boxes, the drawing
//! operations, and the error bars and marker boxes that every chart draws.

use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::RGBColor;

use super::render::drawable_text;
use super::style::{em, width_of, INK};

/// An axis-aligned box in page pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bx {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Bx {
    pub fn new(x0: f64, y0: f64, x1: f64, y1: f64) -> Self {
        Self { x0: x0.min(x1), y0: y0.min(y1), x1: x0.max(x1), y1: y0.max(y1) }
    }
    pub fn hits(&self, o: &Bx) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
    pub(super) fn grow(&self, d: f64) -> Bx {
        Bx::new(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)
    }
    pub(super) fn inside(&self, o: &Bx) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
    /// Whether the segment a–b passes through the box (Liang–Barsky clipping).
    pub fn hits_segment(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        for (p, q) in [
            (-dx, a.0 - self.x0),
            (dx, self.x1 - a.0),
            (-dy, a.1 - self.y0),
            (dy, self.y1 - a.1),
        ] {
            if p == 0.0 {
                if q <= 0.0 {
                    return false;
                }
            } else {
                let r = q / p;
                if p < 0.0 {
                    t0 = t0.max(r);
                } else {
                    t1 = t1.min(r);
                }
                if t0 >= t1 {
                    return false;
                }
            }
        }
        true
    }
}

/// What texts and legends must not cover.
#[derive(Debug, Clone)]
pub(super) enum Shape {
    Box(Bx),
    Seg((f64, f64), (f64, f64)),
}

impl Shape {
    pub(super) fn hits(&self, b: &Bx) -> bool {
        match self {
            Shape::Box(m) => m.hits(b),
            Shape::Seg(a, c) => b.hits_segment(*a, *c),
        }
    }
    /// Whether the segment p–q crosses this shape.
    pub(super) fn hits_segment(&self, p: (f64, f64), q: (f64, f64)) -> bool {
        match self {
            Shape::Box(m) => m.hits_segment(p, q),
            Shape::Seg(a, c) => segments_cross(*a, *c, p, q),
        }
    }
}

fn segments_cross(a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64)) -> bool {
    let cross = |o: (f64, f64), p: (f64, f64), q: (f64, f64)| {
        (p.0 - o.0) * (q.1 - o.1) - (p.1 - o.1) * (q.0 - o.0)
    };
    let (d1, d2) = (cross(c, d, a), cross(c, d, b));
    let (d3, d4) = (cross(a, b, c), cross(a, b, d));
    d1 * d2 < 0.0 && d3 * d4 < 0.0
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
}

pub(super) const MARKERS: [Marker; 5] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
];

#[derive(Clone)]
pub(super) struct TextOp {
    pub(super) x: f64,
    pub(super) y: f64,
    pub(super) text: String,
    pub(super) size: f64,
    pub(super) color: RGBColor,
    pub(super) h: HPos,
    pub(super) v: VPos,
    pub(super) rotate: bool,
    pub(super) bold: bool,
}

impl TextOp {
    pub(super) fn new(text: &str, x: f64, y: f64, size: f64, h: HPos, v: VPos) -> Self {
        Self {
            x,
            y,
            text: drawable_text(text),
            size,
            color: INK,
            h,
            v,
            rotate: false,
            bold: false,
        }
    }

    /// The box the text covers: its advance width by one em (ascent and descent).
    pub(super) fn bbox(&self) -> Bx {
        let w = width_of(&self.text, self.size) * if self.bold { 1.1 } else { 1.0 };
        text_box(self.x, self.y, w, em(self.size), self.h, self.v, self.rotate)
    }
}

/// The box of a text `w` pixels wide at SVG font size `e`, anchored at (x, y) the way
/// plotters anchors it (`dy` of 0.76em, 0.5ex or -0.5ex for top, centre, bottom).
pub(super) fn text_box(
    x: f64,
    y: f64,
    w: f64,
    e: f64,
    h: HPos,
    v: VPos,
    rotate: bool,
) -> Bx {
    let along = |c: f64| match h {
        HPos::Left => (c, c + w),
        HPos::Center => (c - w / 2.0, c + w / 2.0),
        HPos::Right => (c - w, c),
    };
    let across = |c: f64| match v {
        VPos::Top => (c, c + e),
        VPos::Center => (c - e / 2.0, c + e / 2.0),
        VPos::Bottom => (c - e, c),
    };
    if rotate {
        // Rotated by 270 degrees about (x, y): the text runs upwards.
        let (a0, a1) = along(0.0);
        let (c0, c1) = across(0.0);
        Bx::new(x + c0, y - a1, x + c1, y - a0)
    } else {
        let (a0, a1) = along(x);
        let (c0, c1) = across(y);
        Bx::new(a0, c0, a1, c1)
    }
}

#[derive(Clone)]
pub(super) enum Op {
    Rect {
        b: Bx,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, u32)>,
    },
    Path {
        pts: Vec<(f64, f64)>,
        color: RGBColor,
        width: u32,
        dashed: bool,
    },
    Marker {
        c: (f64, f64),
        r: f64,
        shape: Marker,
        color: RGBColor,
        hollow: bool,
    },
    Text(TextOp),
    /// Starts a group carrying a hover title; ends at the next `Close`.
    Open(String),
    Close,
}

#[derive(Default)]
pub(super) struct Scene {
    pub(super) ops: Vec<Op>,
    /// Boxes of the texts placed so far.
    pub(super) texts: Vec<Bx>,
    /// Data marks and guides that texts must not cover.
    pub(super) marks: Vec<Shape>,
}

impl Scene {
    pub(super) fn text(&mut self, t: TextOp) -> Bx {
        let b = t.bbox();
        self.texts.push(b);
        self.ops.push(Op::Text(t));
        b
    }
    pub(super) fn rect(
        &mut self,
        b: Bx,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, u32)>,
    ) {
        self.ops.push(Op::Rect { b, fill, stroke });
    }
    /// A bar (or its legend swatch): filled with `color`, or, `outlined`, filled with a pale
    /// tint of it inside a 2-pixel outline of it.
    pub(super) fn bar(&mut self, b: Bx, color: RGBColor, outlined: bool) {
        if outlined {
            let pale = |c: u8| (f64::from(c) * 0.3 + 255.0 * 0.7).round() as u8;
            let tint = RGBColor(pale(color.0), pale(color.1), pale(color.2));
            self.rect(b, Some(tint), Some((color, 2)));
        } else {
            self.rect(b, Some(color), None);
        }
    }
    pub(super) fn path(
        &mut self,
        pts: Vec<(f64, f64)>,
        color: RGBColor,
        width: u32,
        dashed: bool,
    ) {
        self.ops.push(Op::Path { pts, color, width, dashed });
    }
    pub(super) fn marker(
        &mut self,
        c: (f64, f64),
        r: f64,
        shape: Marker,
        color: RGBColor,
        hollow: bool,
    ) {
        self.ops.push(Op::Marker { c, r, shape, color, hollow });
    }
    /// Whether a box would cover nothing placed so far.
    pub(super) fn free(&self, b: &Bx) -> bool {
        self.cost(b) == 0
    }
    pub(super) fn cost(&self, b: &Bx) -> usize {
        self.texts.iter().filter(|t| t.hits(b)).count()
            + self.marks.iter().filter(|m| m.hits(b)).count()
    }
    pub(super) fn mark_box(&mut self, b: Bx) {
        self.marks.push(Shape::Box(b));
    }
    pub(super) fn mark_seg(&mut self, a: (f64, f64), b: (f64, f64)) {
        self.marks.push(Shape::Seg(a, b));
    }
}

pub(super) fn marker_box(c: (f64, f64), r: f64) -> Bx {
    Bx::new(c.0 - r, c.1 - r, c.0 + r, c.1 + r)
}

/// A vertical min–max bar with caps, as marks.
pub(super) fn error_bar_v(
    sc: &mut Scene,
    x: f64,
    y_lo: f64,
    y_hi: f64,
    cap: f64,
    color: RGBColor,
) {
    if (y_lo - y_hi).abs() < 1.0 {
        return;
    }
    sc.path(vec![(x, y_lo), (x, y_hi)], color, 1, false);
    sc.path(vec![(x - cap, y_lo), (x + cap, y_lo)], color, 1, false);
    sc.path(vec![(x - cap, y_hi), (x + cap, y_hi)], color, 1, false);
    sc.mark_box(Bx::new(x - cap, y_lo, x + cap, y_hi));
}

pub(super) fn error_bar_h(
    sc: &mut Scene,
    y: f64,
    x_lo: f64,
    x_hi: f64,
    cap: f64,
    color: RGBColor,
) {
    if (x_lo - x_hi).abs() < 1.0 {
        return;
    }
    sc.path(vec![(x_lo, y), (x_hi, y)], color, 1, false);
    sc.path(vec![(x_lo, y - cap), (x_lo, y + cap)], color, 1, false);
    sc.path(vec![(x_hi, y - cap), (x_hi, y + cap)], color, 1, false);
    sc.mark_box(Bx::new(x_lo, y - cap, x_hi, y + cap));
}
