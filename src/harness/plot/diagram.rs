//! Diagrams: pictures of the book's ideas (a warp's lanes and the sectors they touch, the
//! banks of a shared tile, a table's memory order), drawn from shapes that a model computed.
//!
//! A diagram's CSV has `plot: diagram`, a `title`, `computed` (the model whose output the
//! shapes are, named in the footer) and optionally `panel_columns`; its rows are [`Shape`]s
//! (`panel,shape,x,y,w,h,style,label`). Coordinates are in units of the diagram (a lane, a
//! sector, a cell), with y growing downwards; every panel is drawn at one scale, the largest at
//! which the widest panel, with its texts, fits its column (and at most [`MAX_UNIT_PX`]). So
//! one unit is the same length in every panel of a diagram, and panels compare by size.
//!
//! The drawing refuses what would not read: a label wider or taller than its cell, a text
//! over another text, a line or a cell, a label on a solid fill. What it draws thus follows
//! the layout rules of every figure ([`layout_problems`](super::layout_problems) checks them).

use anyhow::{bail, ensure, Context};
use plotters::style::text_anchor::{HPos, VPos};
use plotters::style::{RGBColor, WHITE};

use super::layout::{footer_line, COL_GAP, MARGIN};
use super::render::render;
use super::scene::{Bx, Scene, TextOp};
use super::style::{
    em, line_height, wrap_balanced, FRAME, F_LABEL, F_PANEL, F_TITLE, INK, MUTED,
    PALETTE, WIDTH,
};
use crate::harness::record::{self, Meta, Record};

/// The largest length of one unit of a diagram, in SVG pixels: a diagram of few units is not
/// blown up to the page's width.
pub const MAX_UNIT_PX: f64 = 34.0;

/// What a row of a diagram draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShapeKind {
    /// A filled box, `w` × `h` at (`x`, `y`), with its label centred inside it; `style` is
    /// its [`Fill`].
    Cell,
    /// An outline around other shapes (a 128-byte line around its sectors, a tile); `style`
    /// is its [`Ink`].
    Frame,
    /// A line from (`x`, `y`) to (`x + w`, `y + h`); `style` is its [`Ink`].
    Line,
    /// A line with an arrowhead at its end (`x + w`, `y + h`).
    Arrow,
    /// The label alone, at (`x`, `y`): `style` is `left`, `center` or `right`, the end of the
    /// text at `x`; the text is centred on `y`.
    Text,
}

/// One shape of a diagram: one row of its CSV.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Shape {
    /// The panel the shape belongs to (its title; panels are drawn in order of appearance).
    pub panel: String,
    pub shape: ShapeKind,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
    pub style: String,
    pub label: String,
}

/// How a cell is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// White inside a grey outline: a place that holds nothing of interest.
    Plain,
    /// Light grey: a place that is there but unused (padding, the unused half of a table).
    Unused,
    /// A pale tint of palette colour `i` inside an outline of it: a place that matters, with
    /// room for a label.
    Tint(usize),
    /// Palette colour `i`, unlabelled: a mark (the bytes a lane reads).
    Solid(usize),
}

impl Fill {
    fn text(self) -> String {
        match self {
            Fill::Plain => "plain".into(),
            Fill::Unused => "unused".into(),
            Fill::Tint(i) => format!("tint {i}"),
            Fill::Solid(i) => format!("solid {i}"),
        }
    }

    fn parse(s: &str) -> anyhow::Result<Self> {
        let colour = |i: &str| -> anyhow::Result<usize> {
            let i: usize = i.parse().with_context(|| format!("fill `{s}`"))?;
            ensure!(
                i < PALETTE.len(),
                "fill `{s}`: the palette has {} colours",
                PALETTE.len()
            );
            Ok(i)
        };
        Ok(match s.split_once(' ') {
            None if s == "plain" => Fill::Plain,
            None if s == "unused" => Fill::Unused,
            Some(("tint", i)) => Fill::Tint(colour(i)?),
            Some(("solid", i)) => Fill::Solid(colour(i)?),
            _ => bail!("unknown fill `{s}`"),
        })
    }
}

/// The colour of a frame, a line or an arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ink {
    /// The figure's dark ink.
    Dark,
    /// Grey, for what guides the eye without being the point.
    Muted,
    /// Palette colour `i`.
    Colour(usize),
}

impl Ink {
    fn text(self) -> String {
        match self {
            Ink::Dark => "ink".into(),
            Ink::Muted => "muted".into(),
            Ink::Colour(i) => i.to_string(),
        }
    }

    fn parse(s: &str) -> anyhow::Result<Self> {
        Ok(match s {
            "ink" => Ink::Dark,
            "muted" => Ink::Muted,
            i => {
                let i: usize =
                    i.parse().with_context(|| format!("unknown ink `{s}`"))?;
                ensure!(
                    i < PALETTE.len(),
                    "ink `{s}`: the palette has {} colours",
                    PALETTE.len()
                );
                Ink::Colour(i)
            }
        })
    }

    fn rgb(self) -> RGBColor {
        match self {
            Ink::Dark => INK,
            Ink::Muted => MUTED,
            Ink::Colour(i) => PALETTE[i],
        }
    }
}

impl Shape {
    fn new(panel: &str, shape: ShapeKind, (x, y, w, h): (f64, f64, f64, f64)) -> Self {
        Self {
            panel: panel.into(),
            shape,
            x,
            y,
            w,
            h,
            style: String::new(),
            label: String::new(),
        }
    }
    /// A cell `w` × `h` at (`x`, `y`) filled `fill`, labelled `label` (empty: none).
    pub fn cell(
        panel: &str,
        x: f64,
        y: f64,
        w: f64,
        h: f64,
        fill: Fill,
        label: &str,
    ) -> Self {
        Self {
            style: fill.text(),
            label: label.into(),
            ..Self::new(panel, ShapeKind::Cell, (x, y, w, h))
        }
    }
    /// An outline `w` × `h` at (`x`, `y`).
    pub fn frame(panel: &str, x: f64, y: f64, w: f64, h: f64, ink: Ink) -> Self {
        Self { style: ink.text(), ..Self::new(panel, ShapeKind::Frame, (x, y, w, h)) }
    }
    /// A line from `from` to `to`.
    pub fn line(panel: &str, from: (f64, f64), to: (f64, f64), ink: Ink) -> Self {
        let extent = (from.0, from.1, to.0 - from.0, to.1 - from.1);
        Self { style: ink.text(), ..Self::new(panel, ShapeKind::Line, extent) }
    }
    /// An arrow from `from` to `to`.
    pub fn arrow(panel: &str, from: (f64, f64), to: (f64, f64), ink: Ink) -> Self {
        Self { shape: ShapeKind::Arrow, ..Self::line(panel, from, to, ink) }
    }
    /// `label` with its `anchor` end at (`x`, `y`) (left, centre or right), centred on `y`.
    pub fn text(panel: &str, x: f64, y: f64, anchor: HPos, label: &str) -> Self {
        let style = match anchor {
            HPos::Left => "left",
            HPos::Center => "center",
            HPos::Right => "right",
        };
        Self {
            style: style.into(),
            label: label.into(),
            ..Self::new(panel, ShapeKind::Text, (x, y, 0.0, 0.0))
        }
    }

    /// The fill of a cell.
    pub fn fill(&self) -> anyhow::Result<Fill> {
        Fill::parse(&self.style)
    }

    fn ink(&self) -> anyhow::Result<Ink> {
        Ink::parse(&self.style)
    }

    fn anchor(&self) -> anyhow::Result<HPos> {
        Ok(match self.style.as_str() {
            "left" => HPos::Left,
            "center" => HPos::Center,
            "right" => HPos::Right,
            other => bail!("text `{}`: unknown anchor `{other}`", self.label),
        })
    }
}

/// The metadata a diagram adds to its provenance: how to draw it and which model computed it.
pub fn diagram_meta(
    meta: Meta,
    title: &str,
    computed_by: &str,
    panel_columns: usize,
) -> Meta {
    let meta =
        meta.with("plot", "diagram").with("title", title).with("computed", computed_by);
    if panel_columns > 1 {
        meta.with("panel_columns", &panel_columns.to_string())
    } else {
        meta
    }
}

/// Writes `dir/data/<stem>.csv` (provenance, how to draw it, its shapes) and `dir/<stem>.svg`
/// drawn from it.
pub fn write_diagram(
    dir: &std::path::Path,
    stem: &str,
    meta: &Meta,
    shapes: &[Shape],
) -> anyhow::Result<()> {
    let csv_path = dir.join("data").join(format!("{stem}.csv"));
    record::write_csv(&csv_path, meta, shapes)?;
    super::redraw(&csv_path, &dir.join(format!("{stem}.svg")))
}

/// The shapes of a diagram's record.
pub fn shapes_of(record: &Record) -> anyhow::Result<Vec<Shape>> {
    let col = |n: &str| record.column(n);
    let cols = [
        col("panel")?,
        col("shape")?,
        col("x")?,
        col("y")?,
        col("w")?,
        col("h")?,
        col("style")?,
        col("label")?,
    ];
    let num = |v: &str| -> anyhow::Result<f64> {
        let n: f64 = v.parse().with_context(|| format!("`{v}` is not a number"))?;
        ensure!(n.is_finite(), "`{v}` is not a finite number");
        Ok(n)
    };
    record
        .rows
        .iter()
        .map(|r| {
            let shape = match r[cols[1]].as_str() {
                "cell" => ShapeKind::Cell,
                "frame" => ShapeKind::Frame,
                "line" => ShapeKind::Line,
                "arrow" => ShapeKind::Arrow,
                "text" => ShapeKind::Text,
                other => bail!("unknown shape `{other}`"),
            };
            Ok(Shape {
                panel: r[cols[0]].clone(),
                shape,
                x: num(&r[cols[2]])?,
                y: num(&r[cols[3]])?,
                w: num(&r[cols[4]])?,
                h: num(&r[cols[5]])?,
                style: r[cols[6]].clone(),
                label: r[cols[7]].clone(),
            })
        })
        .collect()
}

/// One panel's shapes and their extent in units.
struct Panel<'s> {
    name: &'s str,
    shapes: Vec<&'s Shape>,
    /// The extent of its geometry (texts excluded): x0, y0, x1, y1.
    units: (f64, f64, f64, f64),
}

impl Panel<'_> {
    /// The panel's extent in pixels, texts included, with its geometry at `scale` pixels per
    /// unit and its origin (the geometry's top left corner) at (0, 0).
    fn extent_px(&self, scale: f64) -> Bx {
        let (x0, y0, x1, y1) = self.units;
        let mut b = Bx::new(0.0, 0.0, (x1 - x0) * scale, (y1 - y0) * scale);
        for s in self.shapes.iter().filter(|s| s.shape == ShapeKind::Text) {
            if let Ok(t) = self.text_op(s, scale, (0.0, 0.0)) {
                let t = t.bbox();
                b = Bx::new(
                    b.x0.min(t.x0),
                    b.y0.min(t.y0),
                    b.x1.max(t.x1),
                    b.y1.max(t.y1),
                );
            }
        }
        b
    }

    /// A point in units as pixels, the panel's origin placed at `at`.
    fn px(&self, scale: f64, at: (f64, f64), (x, y): (f64, f64)) -> (f64, f64) {
        (at.0 + (x - self.units.0) * scale, at.1 + (y - self.units.1) * scale)
    }

    fn text_op(&self, s: &Shape, scale: f64, at: (f64, f64)) -> anyhow::Result<TextOp> {
        let (x, y) = self.px(scale, at, (s.x, s.y));
        Ok(TextOp::new(&s.label, x, y, F_LABEL, s.anchor()?, VPos::Center))
    }
}

fn panels_of(shapes: &[Shape]) -> Vec<Panel<'_>> {
    let mut panels: Vec<Panel> = Vec::new();
    for s in shapes {
        let i = match panels.iter().position(|p| p.name == s.panel) {
            Some(i) => i,
            None => {
                panels.push(Panel {
                    name: &s.panel,
                    shapes: Vec::new(),
                    units: (
                        f64::INFINITY,
                        f64::INFINITY,
                        f64::NEG_INFINITY,
                        f64::NEG_INFINITY,
                    ),
                });
                panels.len() - 1
            }
        };
        let p = &mut panels[i];
        p.shapes.push(s);
        let (xa, xb) = (s.x.min(s.x + s.w), s.x.max(s.x + s.w));
        let (ya, yb) = (s.y.min(s.y + s.h), s.y.max(s.y + s.h));
        p.units = (
            p.units.0.min(xa),
            p.units.1.min(ya),
            p.units.2.max(xb),
            p.units.3.max(yb),
        );
    }
    panels
}

/// How the panels sit in a column at `scale`: pixels left of the geometry's origin (the widest
/// text reaching left of any panel) and right of it (the widest panel with its texts). Every
/// panel's origin is placed at the same x, so that one unit of every panel starts at one
/// place and lengths compare across panels.
fn block(panels: &[Panel], scale: f64) -> (f64, f64) {
    panels.iter().fold((0.0, 0.0), |(left, right), p| {
        let e = p.extent_px(scale);
        (f64::max(left, -e.x0), f64::max(right, e.x1))
    })
}

/// The scale, in pixels per unit, at which every panel, with its texts, fits `col_w` when
/// their origins are aligned ([`block`]).
fn fit_scale(panels: &[Panel], col_w: f64) -> anyhow::Result<f64> {
    let geometry = panels.iter().map(|p| p.units.2 - p.units.0).fold(0.0, f64::max);
    if geometry <= 0.0 {
        return Ok(MAX_UNIT_PX);
    }
    let mut s = MAX_UNIT_PX.min(col_w / geometry);
    // Texts keep their size while the geometry shrinks: a few steps find the scale at which
    // both fit.
    for _ in 0..12 {
        let (left, right) = block(panels, s);
        let over = left + right - col_w;
        if over <= 0.5 {
            return Ok(s);
        }
        s -= over / geometry + 0.01;
        ensure!(s > 0.0, "the diagram's texts alone are wider than {col_w:.0} pixels");
    }
    bail!("the diagram does not fit {col_w:.0} pixels")
}

/// Draws the diagram described by `record` as SVG text; `data_name` is shown in the footer.
pub(super) fn draw_diagram(record: &Record, data_name: &str) -> anyhow::Result<String> {
    let meta = &record.meta;
    let title = meta.get("title").context("diagram metadata lacks `title`")?;
    let computed = meta.get("computed").context("diagram metadata lacks `computed`")?;
    let columns: usize = match meta.get("panel_columns") {
        Some(c) => c.parse().with_context(|| format!("`panel_columns: {c}`"))?,
        None => 1,
    };
    let shapes = shapes_of(record)?;
    ensure!(!shapes.is_empty(), "a diagram needs at least one shape");
    let panels = panels_of(&shapes);
    let columns = columns.clamp(1, panels.len());
    let col_w =
        (WIDTH - 2.0 * MARGIN - (columns - 1) as f64 * COL_GAP) / columns as f64;
    let scale = fit_scale(&panels, col_w)?;
    let (left, right) = block(&panels, scale);

    let mut sc = Scene::default();
    let mut y = 12.0;
    for line in wrap_balanced(title, F_TITLE, WIDTH - 2.0 * MARGIN) {
        sc.text(TextOp::new(&line, WIDTH / 2.0, y, F_TITLE, HPos::Center, VPos::Top));
        y += line_height(F_TITLE);
    }
    y += 8.0;
    for row in panels.chunks(columns) {
        let named = row.iter().any(|p| !p.name.is_empty());
        let title_h = if named { line_height(F_PANEL) + 6.0 } else { 0.0 };
        let mut bottom = y;
        for (c, p) in row.iter().enumerate() {
            let col_x = MARGIN + c as f64 * (col_w + COL_GAP);
            let ext = p.extent_px(scale);
            // The aligned panels centred in their column, each below its title.
            let block_x = col_x + (col_w - (left + right)) / 2.0;
            let at = (block_x + left, y + title_h - ext.y0);
            if !p.name.is_empty() {
                let title_w =
                    TextOp::new(p.name, 0.0, 0.0, F_PANEL, HPos::Left, VPos::Top);
                let title_w = title_w.bbox().x1 * 1.1;
                ensure!(
                    title_w <= col_w + 0.5,
                    "the panel title `{}` is wider than its column",
                    p.name
                );
                let x = block_x.min(col_x + col_w - title_w).max(col_x);
                let mut t = TextOp::new(p.name, x, y, F_PANEL, HPos::Left, VPos::Top);
                t.bold = true;
                sc.text(t);
            }
            draw_panel(&mut sc, p, scale, at)?;
            bottom = bottom.max(y + title_h + ext.y1 - ext.y0);
        }
        y = bottom + 18.0;
    }
    // A diagram composed from measured records says so: its numbers are measurements.
    let line = match meta.get("composed_from") {
        Some(records) => format!(
            "drawn by {computed} from the measured records {records} · data: \
             figures/data/{data_name}"
        ),
        None => {
            format!("computed by {computed} (not measured) · data: figures/data/{data_name}")
        }
    };
    let height = footer_line(&mut sc, &line, y);
    render(&sc, height)
}

/// Draws one panel with its origin at `at`, refusing a text that would not read.
fn draw_panel(
    sc: &mut Scene,
    p: &Panel,
    scale: f64,
    at: (f64, f64),
) -> anyhow::Result<()> {
    let px = |x: f64, y: f64| p.px(scale, at, (x, y));
    let mut cells: Vec<Bx> = Vec::new();
    let mut labels: Vec<(TextOp, usize)> = Vec::new();
    // Fills first, then outlines and lines over them, then every text over all of them.
    for s in &p.shapes {
        if s.shape != ShapeKind::Cell {
            continue;
        }
        let (a, b) = (px(s.x, s.y), px(s.x + s.w, s.y + s.h));
        let bx = Bx::new(a.0, a.1, b.0, b.1);
        let fill = s.fill()?;
        match fill {
            Fill::Plain => sc.rect(bx, Some(WHITE), Some((FRAME, 1))),
            Fill::Unused => {
                sc.rect(bx, Some(RGBColor(236, 236, 236)), Some((FRAME, 1)))
            }
            Fill::Tint(i) => sc.bar(bx, PALETTE[i], true),
            Fill::Solid(i) => sc.rect(bx, Some(PALETTE[i]), None),
        }
        if !s.label.is_empty() {
            ensure!(
                !matches!(fill, Fill::Solid(_)),
                "the label `{}` is on a solid fill, where it would not read",
                s.label
            );
            let t = TextOp::new(
                &s.label,
                (bx.x0 + bx.x1) / 2.0,
                (bx.y0 + bx.y1) / 2.0,
                F_LABEL,
                HPos::Center,
                VPos::Center,
            );
            let tb = t.bbox();
            ensure!(
                tb.x1 - tb.x0 <= bx.x1 - bx.x0 - 2.0 && em(F_LABEL) <= bx.y1 - bx.y0,
                "the label `{}` does not fit its {:.0} × {:.0} px cell in `{}`",
                s.label,
                bx.x1 - bx.x0,
                bx.y1 - bx.y0,
                p.name
            );
            labels.push((t, cells.len()));
        }
        cells.push(bx);
    }
    for s in &p.shapes {
        match s.shape {
            ShapeKind::Frame => {
                let (a, b) = (px(s.x, s.y), px(s.x + s.w, s.y + s.h));
                sc.rect(Bx::new(a.0, a.1, b.0, b.1), None, Some((s.ink()?.rgb(), 2)));
            }
            ShapeKind::Line | ShapeKind::Arrow => {
                let (a, b) = (px(s.x, s.y), px(s.x + s.w, s.y + s.h));
                let colour = s.ink()?.rgb();
                sc.path(vec![a, b], colour, 2, false);
                sc.mark_seg(a, b);
                if s.shape == ShapeKind::Arrow {
                    let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
                    ensure!(len > 0.0, "an arrow of no length in `{}`", p.name);
                    let (ux, uy) = ((b.0 - a.0) / len, (b.1 - a.1) / len);
                    let head = 7.0_f64.min(len / 2.0);
                    // Two strokes 30 degrees either side of the shaft.
                    let (c, s30) = (0.866, 0.5);
                    let left = (
                        b.0 - head * (ux * c - uy * s30),
                        b.1 - head * (uy * c + ux * s30),
                    );
                    let right = (
                        b.0 - head * (ux * c + uy * s30),
                        b.1 - head * (uy * c - ux * s30),
                    );
                    sc.path(vec![left, b, right], colour, 2, false);
                }
            }
            ShapeKind::Cell | ShapeKind::Text => {}
        }
    }
    for s in p.shapes.iter().filter(|s| s.shape == ShapeKind::Text) {
        labels.push((p.text_op(s, scale, at)?, usize::MAX));
    }
    for (t, own) in labels {
        let tb = t.bbox().grow(-0.5);
        let over_cell = cells.iter().enumerate().any(|(i, c)| i != own && c.hits(&tb));
        ensure!(!over_cell, "the text `{}` covers a cell in `{}`", t.text, p.name);
        ensure!(
            sc.free(&tb),
            "the text `{}` covers another text or a line in `{}`",
            t.text,
            p.name
        );
        sc.text(t);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::layout_problems;

    fn draw(shapes: &[Shape]) -> anyhow::Result<String> {
        let meta = diagram_meta(
            Meta::default().with("gpu", "none").with("commit", "abc"),
            "A diagram",
            "a::model",
            1,
        );
        let text = record::to_csv_string(&meta, shapes).unwrap();
        draw_diagram(&record::parse_csv(&text).unwrap(), "t.csv")
    }

    #[test]
    fn a_diagram_redraws_identically_and_reads_at_the_books_width() {
        let mut shapes: Vec<Shape> = (0..8)
            .map(|i| {
                let fill = if i % 2 == 0 { Fill::Tint(0) } else { Fill::Plain };
                Shape::cell("first", i as f64, 0.0, 1.0, 1.0, fill, &i.to_string())
            })
            .collect();
        shapes.push(Shape::frame("first", 0.0, 0.0, 4.0, 1.0, Ink::Dark));
        shapes.push(Shape::text("first", -0.3, 0.5, HPos::Right, "sectors"));
        shapes.push(Shape::cell("second", 0.0, 0.0, 0.5, 0.7, Fill::Solid(0), ""));
        shapes.push(Shape::arrow("second", (0.0, 1.0), (3.0, 1.0), Ink::Colour(1)));
        shapes.push(Shape::text("second", 3.3, 1.0, HPos::Left, "an arrow"));
        let svg = draw(&shapes).unwrap();
        assert_eq!(svg, draw(&shapes).unwrap());
        assert!(layout_problems(&svg).is_empty(), "{:?}", layout_problems(&svg));
        for text in ["A diagram", "first", "second", "sectors", "an arrow", "7"] {
            assert!(svg.contains(&format!("\n{text}\n")), "{text} missing");
        }
        assert!(svg.contains(
            "computed by a::model (not measured) · data: figures/data/t.csv"
        ));
        // The shapes survive their CSV exactly.
        let meta = Meta::default();
        let back = shapes_of(
            &record::parse_csv(&record::to_csv_string(&meta, &shapes).unwrap())
                .unwrap(),
        );
        assert_eq!(back.unwrap(), shapes);
    }

    #[test]
    fn panels_share_one_scale_and_one_origin() {
        let shapes = vec![
            Shape::cell("wide", 0.0, 0.0, 40.0, 1.0, Fill::Plain, ""),
            Shape::cell("narrow", 0.0, 0.0, 2.0, 1.0, Fill::Plain, ""),
        ];
        let svg = draw(&shapes).unwrap();
        let rects: Vec<(f64, f64)> = svg
            .lines()
            .filter(|l| l.starts_with("<rect") && l.contains("fill=\"#FFFFFF\""))
            .filter_map(|l| {
                let attr = |n: &str| -> Option<f64> {
                    let k = format!(" {n}=\"");
                    let s = l.find(&k)? + k.len();
                    l[s..s + l[s..].find('"')?].parse().ok()
                };
                Some((attr("x")?, attr("width")?))
            })
            .filter(|&(_, w)| w < WIDTH - 2.0)
            .collect();
        assert_eq!(rects.len(), 2, "{svg}");
        assert_eq!(rects[0].0, rects[1].0, "one origin");
        assert!((rects[0].1 / rects[1].1 - 20.0).abs() < 0.5, "one scale: {rects:?}");
    }

    #[test]
    fn what_would_not_read_is_refused() {
        let too_long =
            [Shape::cell("p", 0.0, 0.0, 1.0, 1.0, Fill::Tint(0), "a long label")];
        let e = draw(&too_long).unwrap_err().to_string();
        assert!(e.contains("does not fit"), "{e}");
        let on_solid = [Shape::cell("p", 0.0, 0.0, 4.0, 1.0, Fill::Solid(0), "x")];
        assert!(draw(&on_solid).unwrap_err().to_string().contains("solid fill"));
        let over_cell = [
            Shape::cell("p", 0.0, 0.0, 4.0, 1.0, Fill::Plain, ""),
            Shape::text("p", 1.0, 0.5, HPos::Left, "on the cell"),
        ];
        assert!(draw(&over_cell).unwrap_err().to_string().contains("covers a cell"));
        let over_text = [
            Shape::cell("p", 0.0, 0.0, 4.0, 1.0, Fill::Plain, ""),
            Shape::text("p", 0.0, 2.0, HPos::Left, "one text"),
            Shape::text("p", 0.5, 2.1, HPos::Left, "another"),
        ];
        let e = draw(&over_text).unwrap_err().to_string();
        assert!(e.contains("covers another text"), "{e}");
        let bad_fill = [Shape { style: "tint 9".into(), ..too_long[0].clone() }];
        assert!(draw(&bad_fill).unwrap_err().to_string().contains("palette"));
    }
}
