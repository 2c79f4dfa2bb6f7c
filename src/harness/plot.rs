//! Figures: SVG drawn from a record alone.
//!
//! A figure's CSV holds its provenance, how to draw it and its points
//! (`series,x,y,y_min,y_max`). [`draw_svg`] needs nothing else, so any figure can be redrawn
//! without a GPU, and a test can check that every committed SVG is exactly what its CSV draws.
//!
//! How to draw a figure is a handful of `# key: value` lines ([`Spec`]). Always present:
//! `plot` (`line`, `bar` or `dot`), `title`, `x_label`, `y_label`, `x_log`, `y_log`. Each of
//! the others is off unless its key is there:
//!
//! | key | value | effect |
//! |---|---|---|
//! | `markers_only` | series names, ` \| `-separated | markers without a joining line |
//! | `panels` | `x first word`, `x last word`, `series first word`, `series last word`, `series` | small multiples: one panel per value of that part, the rest names the category or series |
//! | `panel_columns` | a count | panels per row (1 when absent) |
//! | `panel_y` | `independent` | each panel its own value axis |
//! | `ref_lines` | `y = 1: label \| x = l2_mib MiB: L2 {}` | dashed reference lines; the value may name another metadata key and a byte unit; `{}` in the label is the value |
//! | `dashed` | series names | drawn dashed with hollow markers (e.g. a paper's numbers) |
//! | `colors` | palette indices, one per series in order of appearance | pairs of series sharing a hue |
//! | `point_labels` | `x = label \| …` | names the markers of a markers-only series, by their x |
//! | `x_unit` | `bytes` | x ticks at powers of two, written in KiB/MiB/GiB |
//! | `x_ticks`, `y_ticks` | `dense`, `data`, or a list of numbers | tick positions |
//! | `y2_label`, `y2_scale` | a label; a factor | a second value axis on the right: y × factor |
//!
//! A bar chart's value axis is always linear: a `bar` record with `y_log: true` is drawn as a
//! dot plot (markers with min–max bars on a log axis), never as bars on a log axis.
//!
//! Layout rules every figure follows (and the tests check): every text is at least
//! [`MIN_DISPLAY_FONT_PX`] high when the figure is shown [`BOOK_DISPLAY_WIDTH`] pixels wide; no
//! text overlaps another text or a data mark (texts are placed by estimating their boxes with
//! DejaVu Sans' advance widths, the widest of the usual sans-serif fonts); axes end near the
//! data; a legend sits inside the plot only where it covers nothing, and above the plot
//! otherwise; every bar and point carries a `<title>` with its values (shown on hover where the
//! SVG is opened by itself). Figures are drawn on their own white card with dark ink, so they
//! read the same in mdBook's light and dark themes; the footer names the GPU (or the CPU), the
//! data file and the commands that re-measure and redraw the figure.

use std::path::Path;

use anyhow::{bail, Context};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::record::{self, Meta, Record};

/// One plotted value with its spread (min and max over repetitions).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    pub series: String,
    /// A number for line charts, a category name for bar charts.
    pub x: String,
    pub y: f64,
    pub y_min: f64,
    pub y_max: f64,
}

impl Point {
    pub fn new(series: &str, x: impl ToString, y: f64, y_min: f64, y_max: f64) -> Self {
        Self { series: series.to_string(), x: x.to_string(), y, y_min, y_max }
    }

    /// A time in milliseconds: the median with the fastest and slowest repetition.
    pub fn ms(series: &str, x: impl ToString, s: &super::Stats) -> Self {
        Self::new(series, x, s.median_ms, s.min_ms, s.max_ms)
    }

    /// A rate (work per second, divided by `unit`, e.g. 1e9 for GB/s): the median, with the
    /// slowest repetition as the low end and the fastest as the high end.
    pub fn rate(
        series: &str,
        x: impl ToString,
        s: &super::Stats,
        work: f64,
        unit: f64,
    ) -> Self {
        let r = s.rate(work / unit);
        Self::new(series, x, r.median, r.worst, r.best)
    }
}

/// Line chart (numeric x), grouped bar chart (categorical x, linear value axis) or dot plot
/// (categorical rows, markers with min–max bars; for values that span decades).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Line,
    Bar,
    Dot,
}

/// Which part of a point names its panel (small multiples).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelBy {
    /// The first word of x; the rest of x is the category.
    XFirstWord,
    /// The last word of x; the rest of x is the category.
    XLastWord,
    /// The first word of the series name; the rest names the series.
    SeriesFirstWord,
    /// The last word of the series name; the rest names the series.
    SeriesLastWord,
    /// One panel per series.
    Series,
}

impl PanelBy {
    const ALL: [(PanelBy, &'static str); 5] = [
        (PanelBy::XFirstWord, "x first word"),
        (PanelBy::XLastWord, "x last word"),
        (PanelBy::SeriesFirstWord, "series first word"),
        (PanelBy::SeriesLastWord, "series last word"),
        (PanelBy::Series, "series"),
    ];

    fn text(self) -> &'static str {
        Self::ALL.iter().find(|(p, _)| *p == self).map(|(_, t)| *t).unwrap_or("")
    }

    fn parse(v: &str) -> anyhow::Result<Self> {
        Self::ALL.iter().find(|(_, t)| *t == v.trim()).map(|(p, _)| *p).with_context(
            || {
                format!(
                    "`panels: {v}`: expected one of {}",
                    Self::ALL.map(|(_, t)| t).join(", ")
                )
            },
        )
    }

    /// (panel, series, category) of a point.
    fn split(self, series: &str, x: &str) -> (String, String, String) {
        fn first(s: &str) -> (String, String) {
            match s.trim().split_once(' ') {
                Some((a, b)) => (a.to_string(), b.trim().to_string()),
                None => (s.trim().to_string(), String::new()),
            }
        }
        fn last(s: &str) -> (String, String) {
            match s.trim().rsplit_once(' ') {
                Some((a, b)) => (b.to_string(), a.trim().to_string()),
                None => (s.trim().to_string(), String::new()),
            }
        }
        match self {
            PanelBy::XFirstWord => {
                let (p, c) = first(x);
                (p, series.into(), c)
            }
            PanelBy::XLastWord => {
                let (p, c) = last(x);
                (p, series.into(), c)
            }
            PanelBy::SeriesFirstWord => {
                let (p, s) = first(series);
                (p, s, x.into())
            }
            PanelBy::SeriesLastWord => {
                let (p, s) = last(series);
                (p, s, x.into())
            }
            PanelBy::Series => (series.into(), series.into(), x.into()),
        }
    }
}

/// Which axis a reference line crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    X,
    Y,
}

/// A dashed reference line: `y = 1` for a speedup, a target, a cache capacity.
#[derive(Debug, Clone, PartialEq)]
pub struct RefLine {
    /// The line is `axis = value`: `Y` draws a horizontal line.
    pub axis: Axis,
    /// A number, or the name of another metadata key whose value starts with a number;
    /// optionally followed by a byte unit (`KiB`, `MiB`, `GiB`), e.g. `l2_mib MiB`.
    pub value: String,
    /// Shown beside the line (or in the legend); `{}` is replaced by the value.
    pub label: String,
}

impl RefLine {
    fn text(&self) -> String {
        let axis = if self.axis == Axis::X { "x" } else { "y" };
        format!("{axis} = {}: {}", self.value, self.label)
    }

    fn parse(v: &str) -> anyhow::Result<Self> {
        let bad = || format!("reference line `{v}`: expected `y = 1: label`");
        let (lhs, label) = v.split_once(": ").with_context(bad)?;
        let (axis, value) = lhs.split_once('=').with_context(bad)?;
        let axis = match axis.trim() {
            "x" => Axis::X,
            "y" => Axis::Y,
            _ => bail!(bad()),
        };
        Ok(Self {
            axis,
            value: value.trim().to_string(),
            label: label.trim().to_string(),
        })
    }

    /// The value in data units, reading a metadata key where the value names one.
    fn resolve(&self, meta: &Meta) -> anyhow::Result<f64> {
        let mut words = self.value.split_whitespace();
        let head = words
            .next()
            .with_context(|| format!("empty value in `{}`", self.text()))?;
        let number = match head.parse::<f64>() {
            Ok(n) => n,
            Err(_) => {
                let v = meta.get(head).with_context(|| {
                    format!(
                        "`{}` names the metadata key `{head}`, which is absent",
                        self.text()
                    )
                })?;
                leading_number(v).with_context(|| {
                    format!("metadata `{head}: {v}` does not start with a number")
                })?
            }
        };
        let unit = match words.next() {
            None | Some("B") => 1.0,
            Some("KiB") => 1024.0,
            Some("MiB") => 1024.0 * 1024.0,
            Some("GiB") => 1024.0 * 1024.0 * 1024.0,
            Some(u) => {
                bail!("`{}`: unknown unit `{u}` (B, KiB, MiB, GiB)", self.text())
            }
        };
        Ok(number * unit)
    }
}

fn leading_number(v: &str) -> Option<f64> {
    let end = v
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == 'e')
        })
        .unwrap_or(v.len());
    v[..end].parse().ok()
}

/// Where an axis puts its ticks.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Ticks {
    /// Round numbers (1-2-5 per decade on a log axis), as many as fit.
    #[default]
    Auto,
    /// Round numbers, about twice as many.
    Dense,
    /// At the distinct x (or y) values of the data.
    Data,
    /// At these values (those inside the axis).
    List(Vec<f64>),
}

impl Ticks {
    fn text(&self) -> String {
        match self {
            Ticks::Auto => "auto".into(),
            Ticks::Dense => "dense".into(),
            Ticks::Data => "data".into(),
            Ticks::List(v) => {
                v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
            }
        }
    }

    fn parse(v: &str) -> anyhow::Result<Self> {
        Ok(match v.trim() {
            "auto" => Ticks::Auto,
            "dense" => Ticks::Dense,
            "data" => Ticks::Data,
            list => Ticks::List(
                list.split_whitespace()
                    .map(|n| n.parse::<f64>().with_context(|| format!("tick `{n}`")))
                    .collect::<anyhow::Result<_>>()?,
            ),
        })
    }
}

/// How to draw a figure; stored in the CSV's metadata (see the module documentation for the
/// keys). Every option beyond the first six fields is off by default and stored only when
/// set, so the records of figures without it are unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub kind: Kind,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Series of a line chart drawn as markers alone, unjoined: for points whose x order means
    /// nothing (one point per case, a scatter).
    pub markers_only: Vec<String>,
    /// Small multiples: one panel per value of this part of the points.
    pub panels: Option<PanelBy>,
    /// Panels per row.
    pub panel_columns: usize,
    /// Each panel its own value axis (shared when false).
    pub independent_y: bool,
    pub ref_lines: Vec<RefLine>,
    /// Series drawn dashed, with hollow markers.
    pub dashed: Vec<String>,
    /// Palette index of each series, in order of first appearance (empty: 0, 1, 2, …).
    pub colors: Vec<usize>,
    /// (x as written in the data, label) for markers of markers-only series.
    pub point_labels: Vec<(String, String)>,
    /// x values are byte counts: ticks at powers of two, in KiB/MiB/GiB.
    pub x_bytes: bool,
    pub x_ticks: Ticks,
    pub y_ticks: Ticks,
    /// A second value axis on the right: (label, value per unit of y).
    pub y2: Option<(String, f64)>,
}

/// Separates the names in list-valued metadata (`markers_only`, `dashed`, `ref_lines`, …).
const SERIES_SEPARATOR: &str = " | ";

fn check_name(name: &str) {
    assert!(
        !name.contains(SERIES_SEPARATOR),
        "a name stored in figure metadata cannot contain `{SERIES_SEPARATOR}`"
    );
}

impl Spec {
    pub fn line(title: &str, x_label: &str, y_label: &str) -> Self {
        Self {
            kind: Kind::Line,
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_log: false,
            y_log: false,
            markers_only: Vec::new(),
            panels: None,
            panel_columns: 1,
            independent_y: false,
            ref_lines: Vec::new(),
            dashed: Vec::new(),
            colors: Vec::new(),
            point_labels: Vec::new(),
            x_bytes: false,
            x_ticks: Ticks::Auto,
            y_ticks: Ticks::Auto,
            y2: None,
        }
    }
    pub fn bar(title: &str, x_label: &str, y_label: &str) -> Self {
        Self { kind: Kind::Bar, ..Self::line(title, x_label, y_label) }
    }
    /// A dot plot: one row per category, markers with min–max bars; `log_y` makes the value
    /// axis logarithmic (the way to show bar-chart data that spans decades).
    pub fn dot(title: &str, x_label: &str, y_label: &str) -> Self {
        Self { kind: Kind::Dot, ..Self::line(title, x_label, y_label) }
    }
    pub fn log_x(mut self) -> Self {
        self.x_log = true;
        self
    }
    pub fn log_y(mut self) -> Self {
        self.y_log = true;
        self
    }
    /// Draws `series` as markers without a joining line (line charts only).
    pub fn markers_only(mut self, series: &str) -> Self {
        check_name(series);
        self.markers_only.push(series.to_string());
        self
    }
    /// Small multiples: one panel per value of `by`, `columns` panels per row.
    pub fn panels(mut self, by: PanelBy, columns: usize) -> Self {
        self.panels = Some(by);
        self.panel_columns = columns.max(1);
        self
    }
    /// Each panel its own value axis.
    pub fn independent_y(mut self) -> Self {
        self.independent_y = true;
        self
    }
    /// A dashed line `axis = value` (see [`RefLine`]).
    pub fn ref_line(mut self, axis: Axis, value: &str, label: &str) -> Self {
        check_name(label);
        self.ref_lines.push(RefLine { axis, value: value.into(), label: label.into() });
        self
    }
    /// Draws `series` dashed, with hollow markers.
    pub fn dashed(mut self, series: &str) -> Self {
        check_name(series);
        self.dashed.push(series.to_string());
        self
    }
    /// Palette index of each series, in order of first appearance.
    pub fn colors(mut self, indices: &[usize]) -> Self {
        self.colors = indices.to_vec();
        self
    }
    /// Names the marker at `x` (as written in the data) of a markers-only series.
    pub fn point_label(mut self, x: &str, label: &str) -> Self {
        check_name(label);
        self.point_labels.push((x.to_string(), label.to_string()));
        self
    }
    /// x values are byte counts.
    pub fn x_bytes(mut self) -> Self {
        self.x_bytes = true;
        self
    }
    pub fn x_ticks(mut self, t: Ticks) -> Self {
        self.x_ticks = t;
        self
    }
    pub fn y_ticks(mut self, t: Ticks) -> Self {
        self.y_ticks = t;
        self
    }
    /// A second value axis on the right, `label`, showing y × `per_y`.
    pub fn y2(mut self, label: &str, per_y: f64) -> Self {
        self.y2 = Some((label.to_string(), per_y));
        self
    }

    fn add_to(&self, meta: Meta) -> Meta {
        let kind = match self.kind {
            Kind::Line => "line",
            Kind::Bar => "bar",
            Kind::Dot => "dot",
        };
        let mut meta = meta
            .with("plot", kind)
            .with("title", &self.title)
            .with("x_label", &self.x_label)
            .with("y_label", &self.y_label)
            .with("x_log", &self.x_log.to_string())
            .with("y_log", &self.y_log.to_string());
        let join = |v: &[String]| v.join(SERIES_SEPARATOR);
        if !self.markers_only.is_empty() {
            meta = meta.with("markers_only", &join(&self.markers_only));
        }
        if let Some(p) = self.panels {
            meta = meta.with("panels", p.text());
            if self.panel_columns != 1 {
                meta = meta.with("panel_columns", &self.panel_columns.to_string());
            }
        }
        if self.independent_y {
            meta = meta.with("panel_y", "independent");
        }
        if !self.ref_lines.is_empty() {
            let v: Vec<String> = self.ref_lines.iter().map(RefLine::text).collect();
            meta = meta.with("ref_lines", &join(&v));
        }
        if !self.dashed.is_empty() {
            meta = meta.with("dashed", &join(&self.dashed));
        }
        if !self.colors.is_empty() {
            let v: Vec<String> = self.colors.iter().map(|c| c.to_string()).collect();
            meta = meta.with("colors", &v.join(" "));
        }
        if !self.point_labels.is_empty() {
            let v: Vec<String> =
                self.point_labels.iter().map(|(x, l)| format!("{x} = {l}")).collect();
            meta = meta.with("point_labels", &join(&v));
        }
        if self.x_bytes {
            meta = meta.with("x_unit", "bytes");
        }
        if self.x_ticks != Ticks::Auto {
            meta = meta.with("x_ticks", &self.x_ticks.text());
        }
        if self.y_ticks != Ticks::Auto {
            meta = meta.with("y_ticks", &self.y_ticks.text());
        }
        if let Some((label, scale)) = &self.y2 {
            meta = meta.with("y2_label", label).with("y2_scale", &scale.to_string());
        }
        meta
    }

    fn from_meta(meta: &Meta) -> anyhow::Result<Self> {
        let get = |k: &str| {
            meta.get(k).with_context(|| format!("figure metadata lacks `{k}`"))
        };
        let list = |k: &str| -> Vec<String> {
            meta.get(k)
                .map(|v| v.split(SERIES_SEPARATOR).map(str::to_string).collect())
                .unwrap_or_default()
        };
        let kind = match get("plot")? {
            "line" => Kind::Line,
            "bar" => Kind::Bar,
            "dot" => Kind::Dot,
            other => bail!("unknown plot kind `{other}`"),
        };
        let y2 = match (meta.get("y2_label"), meta.get("y2_scale")) {
            (None, None) => None,
            (Some(l), Some(s)) => Some((
                l.to_string(),
                s.parse::<f64>().with_context(|| format!("`y2_scale: {s}`"))?,
            )),
            _ => bail!("`y2_label` and `y2_scale` go together"),
        };
        Ok(Self {
            kind,
            title: get("title")?.to_string(),
            x_label: get("x_label")?.to_string(),
            y_label: get("y_label")?.to_string(),
            x_log: get("x_log")? == "true",
            y_log: get("y_log")? == "true",
            markers_only: list("markers_only"),
            panels: meta.get("panels").map(PanelBy::parse).transpose()?,
            panel_columns: meta
                .get("panel_columns")
                .map(|c| {
                    c.parse::<usize>().with_context(|| format!("`panel_columns: {c}`"))
                })
                .transpose()?
                .unwrap_or(1)
                .max(1),
            independent_y: match meta.get("panel_y") {
                None | Some("shared") => false,
                Some("independent") => true,
                Some(o) => bail!("`panel_y: {o}`: expected `independent` or `shared`"),
            },
            ref_lines: list("ref_lines")
                .iter()
                .map(|r| RefLine::parse(r))
                .collect::<anyhow::Result<_>>()?,
            dashed: list("dashed"),
            colors: meta
                .get("colors")
                .map(|v| {
                    v.split_whitespace()
                        .map(|c| {
                            c.parse::<usize>().with_context(|| format!("colour `{c}`"))
                        })
                        .collect::<anyhow::Result<Vec<_>>>()
                })
                .transpose()?
                .unwrap_or_default(),
            point_labels: list("point_labels")
                .iter()
                .map(|e| {
                    e.split_once(" = ")
                        .map(|(x, l)| (x.trim().to_string(), l.trim().to_string()))
                        .with_context(|| {
                            format!("point label `{e}`: expected `x = label`")
                        })
                })
                .collect::<anyhow::Result<_>>()?,
            x_bytes: match meta.get("x_unit") {
                None => false,
                Some("bytes") => true,
                Some(o) => bail!("`x_unit: {o}`: only `bytes` is known"),
            },
            x_ticks: meta
                .get("x_ticks")
                .map(Ticks::parse)
                .transpose()?
                .unwrap_or_default(),
            y_ticks: meta
                .get("y_ticks")
                .map(Ticks::parse)
                .transpose()?
                .unwrap_or_default(),
            y2,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Style

/// Okabe–Ito colours (distinguishable with the common colour-vision deficiencies) without
/// their yellow, which does not read on white; a darker orange and a wine red complete eight.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(190, 130, 0),
    RGBColor(40, 40, 40),
    RGBColor(136, 34, 85),
];
const INK: RGBColor = RGBColor(30, 30, 30);
const MUTED: RGBColor = RGBColor(85, 85, 85);
const GUIDE: RGBColor = RGBColor(70, 70, 70);
const GRID: RGBColor = RGBColor(228, 228, 228);
const FRAME: RGBColor = RGBColor(190, 190, 190);
const LEADER: RGBColor = RGBColor(140, 140, 140);

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
const F_TITLE: f64 = 21.0;
const F_AXIS: f64 = 17.0;
const F_PANEL: f64 = 17.0;
const F_TICK: f64 = 16.0;
const F_LEGEND: f64 = 16.0;
const F_LABEL: f64 = 16.0;
const F_FOOTER: f64 = 16.0;

/// The SVG font size of a requested size.
fn em(requested: f64) -> f64 {
    requested * PLOTTERS_SVG_FONT_SCALE
}

fn line_height(requested: f64) -> f64 {
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

fn width_of(text: &str, requested: f64) -> f64 {
    text_width(text, em(requested))
}

/// Greedy word wrap to `max_w` pixels (a single word wider than that gets a line alone).
fn wrap(text: &str, requested: f64, max_w: f64) -> Vec<String> {
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
fn wrap_balanced(text: &str, requested: f64, max_w: f64) -> Vec<String> {
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

// ---------------------------------------------------------------------------------------
// Numbers

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` with `digits` significant digits, no exponent, trailing zeros dropped.
fn sig(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).max(0) as usize;
    let s = trim_zeros(format!("{v:.decimals$}"));
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// `v` divided by its SI prefix (k, M, G) with `digits` significant digits: `32.6k`.
fn si(v: f64, digits: i32) -> String {
    let a = v.abs();
    let (div, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", sig(v / div, digits))
}

/// A value written on a bar or beside a dot: three significant digits, trailing zeros kept so
/// neighbours read alike (`0.560` beside `0.959`, `1.00`), whole numbers from 100 to 9999, an
/// SI prefix from 10 000 (`10.5`, `2803`, `32.6k`).
fn value_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e4 {
        si(v, 3)
    } else if a >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        // Rounding can add a digit (9.996 -> 10.00): write it with three again.
        if s.trim_start_matches('-').replace('.', "").trim_start_matches('0').len() > 3
        {
            value_label(s.parse().unwrap_or(v))
        } else {
            s
        }
    }
}

/// A value in a hover title: four significant digits, whole numbers from 1000.
fn hover_number(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        sig(v, 4)
    }
}

/// A byte count in binary units: `512 B`, `4 KiB`, `1.5 MiB`.
fn bytes_label(v: f64) -> String {
    const K: f64 = 1024.0;
    let (div, unit) = if v >= K * K * K {
        (K * K * K, "GiB")
    } else if v >= K * K {
        (K * K, "MiB")
    } else if v >= K {
        (K, "KiB")
    } else {
        (1.0, "B")
    };
    format!("{} {unit}", sig(v / div, 3))
}

/// Decimals needed to write multiples of `step` exactly.
fn decimals_of(step: f64) -> usize {
    (0..10)
        .find(|&d| {
            let s = step * 10f64.powi(d as i32);
            (s - s.round()).abs() < 1e-6 * s.abs().max(1.0)
        })
        .unwrap_or(10)
}

/// Tick labels of one axis, written consistently: plain numbers, with an SI prefix on every
/// label from 1000 up when the axis reaches 10 000 (`500, 1k, 2k, 10k`, never `1e4`).
fn tick_labels(values: &[f64], step: Option<f64>, bytes: bool) -> Vec<String> {
    if bytes {
        return values.iter().map(|&v| bytes_label(v)).collect();
    }
    let top = values.iter().fold(0f64, |m, v| m.max(v.abs()));
    let prefixed = top >= 1e4;
    values
        .iter()
        .map(|&v| {
            if prefixed && v.abs() >= 1000.0 {
                match step {
                    Some(s) => {
                        let div = if top >= 1e7 { 1e6 } else { 1e3 };
                        let suffix = if top >= 1e7 { "M" } else { "k" };
                        let d = decimals_of(s / div);
                        format!("{}{suffix}", trim_zeros(format!("{:.d$}", v / div)))
                    }
                    None => si(v, 3),
                }
            } else {
                match step {
                    Some(s) => {
                        let d = decimals_of(s);
                        let t = format!("{v:.d$}");
                        if t.trim_start_matches('-')
                            .chars()
                            .all(|c| c == '0' || c == '.')
                        {
                            "0".into()
                        } else {
                            t
                        }
                    }
                    None => sig(v, 4),
                }
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Axes

/// A rule that generates tick values inside a range (data units).
#[derive(Debug, Clone)]
enum TickRule {
    Linear(f64),
    /// Mantissas per decade, every `n`th decade.
    Decades(&'static [f64], i32),
    /// Powers of two whose exponent is a multiple of `n`.
    Pow2(i32),
    Fixed(Vec<f64>),
}

impl TickRule {
    fn generate(&self, lo: f64, hi: f64) -> Vec<f64> {
        let eps = 1e-9 * (hi - lo).abs().max(hi.abs()).max(1e-300);
        let inside = |v: f64| v >= lo - eps && v <= hi + eps;
        match self {
            TickRule::Linear(step) => {
                let first = (lo / step - 1e-9).ceil() as i64;
                let last = (hi / step + 1e-9).floor() as i64;
                (first..=last)
                    .map(|k| k as f64 * step)
                    .map(|v| if v.abs() < eps { 0.0 } else { v })
                    .collect()
            }
            TickRule::Decades(mantissas, every) => {
                let (d0, d1) =
                    (lo.log10().floor() as i32 - 1, hi.log10().ceil() as i32 + 1);
                let mut out = Vec::new();
                for d in d0..=d1 {
                    if d.rem_euclid(*every) != 0 {
                        continue;
                    }
                    for m in mantissas.iter() {
                        let v = m * 10f64.powi(d);
                        if inside(v) {
                            out.push(v);
                        }
                    }
                }
                out
            }
            TickRule::Pow2(every) => {
                let (k0, k1) =
                    (lo.log2().floor() as i32 - 1, hi.log2().ceil() as i32 + 1);
                (k0..=k1)
                    .filter(|k| k.rem_euclid(*every) == 0)
                    .map(|k| 2f64.powi(k))
                    .filter(|&v| inside(v))
                    .collect()
            }
            TickRule::Fixed(values) => {
                values.iter().copied().filter(|&v| inside(v)).collect()
            }
        }
    }

    fn step(&self) -> Option<f64> {
        match self {
            TickRule::Linear(s) => Some(*s),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Orient {
    Horizontal,
    Vertical,
}

/// A value axis: its range in plotted units (log10 of the value on a log axis), where it lies
/// on the page, and its ticks.
#[derive(Debug, Clone)]
struct ValueAxis {
    lo: f64,
    hi: f64,
    log: bool,
    /// Pixel positions of `lo` and `hi`.
    p0: f64,
    p1: f64,
    /// (value, label)
    ticks: Vec<(f64, String)>,
}

impl ValueAxis {
    fn plotted(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }
    fn px(&self, v: f64) -> f64 {
        self.p0
            + (self.plotted(v) - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)
    }
    fn value_at(&self, plotted: f64) -> f64 {
        if self.log {
            10f64.powf(plotted)
        } else {
            plotted
        }
    }
}

/// What an axis needs to know to choose its range and ticks.
struct AxisRequest<'a> {
    /// Every value it must show (data with spreads, reference lines).
    values: Vec<f64>,
    log: bool,
    bytes: bool,
    /// Bars rise from zero.
    from_zero: bool,
    ticks: &'a Ticks,
    /// The distinct data values (for `Ticks::Data`).
    data: Vec<f64>,
    orient: Orient,
    /// Pixels kept free beyond the largest value (room for value labels).
    headroom_px: f64,
    /// Whole numbers only (counts, offsets): no tick at 2.5.
    integer: bool,
}

fn nice_steps(span: f64) -> Vec<f64> {
    let mut steps = Vec::new();
    let mut e = (span / 60.0).log10().floor() as i32;
    while steps.len() < 40 {
        for m in [1.0, 2.0, 2.5, 5.0] {
            let s = m * 10f64.powi(e);
            if s > span / 60.0 && s <= span * 1.01 {
                steps.push(s);
            }
        }
        if 10f64.powi(e) > span {
            break;
        }
        e += 1;
    }
    steps
}

/// Chooses the range and ticks of an axis lying from pixel `p0` (low values) to `p1`.
fn make_axis(req: &AxisRequest, p0: f64, p1: f64) -> anyhow::Result<ValueAxis> {
    let len = (p1 - p0).abs();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for &v in &req.values {
        if !v.is_finite() {
            bail!("cannot plot {v}");
        }
        if req.log && v <= 0.0 {
            bail!("a log axis cannot show {v}");
        }
        let p = if req.log { v.log10() } else { v };
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if !lo.is_finite() {
        bail!("no finite values to plot");
    }
    if req.from_zero && !req.log {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < 1e-12 {
        let d = if req.log { 0.15 } else { hi.abs().max(1.0) * 0.1 };
        lo -= d;
        hi += d;
    }
    let data_hi = hi;
    let span = hi - lo;
    let pad = 0.04 * span;
    if !(req.from_zero && lo == 0.0 && !req.log) {
        lo -= pad;
    }
    hi += pad;
    if req.headroom_px > 0.0 && len > req.headroom_px * 2.0 {
        hi = hi.max(lo + (data_hi - lo) * len / (len - req.headroom_px));
    }
    let (dlo, dhi) = if req.log { (10f64.powf(lo), 10f64.powf(hi)) } else { (lo, hi) };

    // Candidate rules, densest first.
    let dense = matches!(req.ticks, Ticks::Dense);
    let mut rules: Vec<TickRule> = Vec::new();
    match req.ticks {
        Ticks::List(v) => rules.push(TickRule::Fixed(v.clone())),
        Ticks::Data => {
            let mut d = req.data.clone();
            d.sort_by(f64::total_cmp);
            d.dedup();
            rules.push(TickRule::Fixed(d));
        }
        Ticks::Auto | Ticks::Dense => {
            if req.log && req.bytes {
                rules.extend([1, 2, 3, 4, 5, 10].map(TickRule::Pow2));
            } else if req.log {
                if dense {
                    rules.push(TickRule::Decades(
                        &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0],
                        1,
                    ));
                    rules.push(TickRule::Decades(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0], 1));
                    rules.push(TickRule::Decades(&[1.0, 2.0, 3.0, 5.0, 7.0], 1));
                }
                rules.push(TickRule::Decades(&[1.0, 2.0, 5.0], 1));
                rules.push(TickRule::Decades(&[1.0, 3.0], 1));
                rules.extend([1, 2, 3, 5].map(|n| TickRule::Decades(&[1.0], n)));
                // Less than a decade: round numbers on the log axis.
                if rules.iter().all(|r| r.generate(dlo, dhi).len() < 3) {
                    rules.extend(
                        nice_steps(dhi - dlo).into_iter().map(TickRule::Linear),
                    );
                }
            } else {
                rules.extend(
                    nice_steps(hi - lo)
                        .into_iter()
                        .filter(|s| !req.integer || s.fract() == 0.0)
                        .map(TickRule::Linear),
                );
            }
        }
    }
    let max_ticks = match (req.orient, dense) {
        (Orient::Vertical, false) => 9,
        (Orient::Vertical, true) => 16,
        (Orient::Horizontal, _) => 14,
    };
    let gap = match (req.orient, dense) {
        (Orient::Vertical, false) => 22.0,
        (Orient::Vertical, true) => 7.0,
        (Orient::Horizontal, _) => 18.0,
    };
    let place = |plo: f64, phi: f64, v: f64| {
        let p = if req.log { v.log10() } else { v };
        p0 + (p - plo) / (phi - plo) * (p1 - p0)
    };
    let extent = |label: &str| match req.orient {
        Orient::Horizontal => width_of(label, F_TICK),
        Orient::Vertical => em(F_TICK),
    };
    let fits = |values: &[f64], labels: &[String], plo: f64, phi: f64| {
        values.windows(2).zip(labels.windows(2)).all(|(v, l)| {
            let d = (place(plo, phi, v[1]) - place(plo, phi, v[0])).abs();
            d >= (extent(&l[0]) + extent(&l[1])) / 2.0 + gap
        })
    };
    let mut chosen: Option<(TickRule, Vec<f64>)> = None;
    for rule in &rules {
        let v = rule.generate(dlo, dhi);
        if v.len() < 2 && !matches!(rule, TickRule::Fixed(_)) {
            continue;
        }
        if v.len() > max_ticks && !matches!(rule, TickRule::Fixed(_)) {
            continue;
        }
        let labels = tick_labels(&v, rule.step(), req.bytes);
        if fits(&v, &labels, lo, hi) {
            chosen = Some((rule.clone(), v));
            break;
        }
    }
    let (rule, mut values) = match chosen {
        Some(c) => c,
        None => {
            // Nothing fits as a whole: the sparsest rule with two ticks, thinned below.
            let rule = rules
                .iter()
                .rev()
                .find(|r| r.generate(dlo, dhi).len() >= 2)
                .or(rules.last())
                .cloned()
                .unwrap_or(TickRule::Fixed(vec![]));
            let v = rule.generate(dlo, dhi);
            (rule, v)
        }
    };
    // End near the data: extend to the next tick beyond either end when it is close.
    let reach = 0.03 * (hi - lo);
    let (wlo, whi) = if req.log {
        (10f64.powf(lo - reach), 10f64.powf(hi + reach))
    } else {
        (lo - reach, hi + reach)
    };
    let wide = rule.generate(wlo, whi);
    let plotted = |v: f64| if req.log { v.log10() } else { v };
    if let Some(&next) =
        wide.iter().filter(|&&v| plotted(v) > hi + 1e-12).min_by(|a, b| a.total_cmp(b))
    {
        hi = plotted(next);
        values.push(next);
    }
    if !(req.from_zero && lo == 0.0) {
        if let Some(&prev) = wide
            .iter()
            .filter(|&&v| plotted(v) < lo - 1e-12)
            .max_by(|a, b| a.total_cmp(b))
        {
            lo = plotted(prev);
            values.insert(0, prev);
        }
    }
    values.sort_by(f64::total_cmp);
    values.dedup();
    let labels = tick_labels(&values, rule.step(), req.bytes);
    // Thin whatever still collides: keep a label only if it clears the last one kept.
    let mut ticks: Vec<(f64, String)> = Vec::new();
    for (v, l) in values.into_iter().zip(labels) {
        if let Some((pv, pl)) = ticks.last() {
            let d = (place(lo, hi, v) - place(lo, hi, *pv)).abs();
            if d < (extent(pl) + extent(&l)) / 2.0 + gap.min(10.0) {
                continue;
            }
        }
        ticks.push((v, l));
    }
    Ok(ValueAxis { lo, hi, log: req.log, p0, p1, ticks })
}

// ---------------------------------------------------------------------------------------
// Scene: what is drawn, in page pixels, with the boxes the layout keeps clear.

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
    fn grow(&self, d: f64) -> Bx {
        Bx::new(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)
    }
    fn inside(&self, o: &Bx) -> bool {
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
enum Shape {
    Box(Bx),
    Seg((f64, f64), (f64, f64)),
}

impl Shape {
    fn hits(&self, b: &Bx) -> bool {
        match self {
            Shape::Box(m) => m.hits(b),
            Shape::Seg(a, c) => b.hits_segment(*a, *c),
        }
    }
    /// Whether the segment p–q crosses this shape.
    fn hits_segment(&self, p: (f64, f64), q: (f64, f64)) -> bool {
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
enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
    TriangleDown,
}

const MARKERS: [Marker; 5] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
    Marker::TriangleDown,
];

#[derive(Clone)]
struct TextOp {
    x: f64,
    y: f64,
    text: String,
    size: f64,
    color: RGBColor,
    h: HPos,
    v: VPos,
    rotate: bool,
    bold: bool,
}

impl TextOp {
    fn new(text: &str, x: f64, y: f64, size: f64, h: HPos, v: VPos) -> Self {
        Self {
            x,
            y,
            text: text.into(),
            size,
            color: INK,
            h,
            v,
            rotate: false,
            bold: false,
        }
    }

    /// The box the text covers: its advance width by one em (ascent and descent).
    fn bbox(&self) -> Bx {
        let w = width_of(&self.text, self.size) * if self.bold { 1.1 } else { 1.0 };
        text_box(self.x, self.y, w, em(self.size), self.h, self.v, self.rotate)
    }
}

/// The box of a text `w` pixels wide at SVG font size `e`, anchored at (x, y) the way
/// plotters anchors it (`dy` of 0.76em, 0.5ex or -0.5ex for top, centre, bottom).
fn text_box(x: f64, y: f64, w: f64, e: f64, h: HPos, v: VPos, rotate: bool) -> Bx {
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
enum Op {
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
struct Scene {
    ops: Vec<Op>,
    /// Boxes of the texts placed so far.
    texts: Vec<Bx>,
    /// Data marks and guides that texts must not cover.
    marks: Vec<Shape>,
}

impl Scene {
    fn text(&mut self, t: TextOp) -> Bx {
        let b = t.bbox();
        self.texts.push(b);
        self.ops.push(Op::Text(t));
        b
    }
    fn rect(&mut self, b: Bx, fill: Option<RGBColor>, stroke: Option<(RGBColor, u32)>) {
        self.ops.push(Op::Rect { b, fill, stroke });
    }
    fn path(
        &mut self,
        pts: Vec<(f64, f64)>,
        color: RGBColor,
        width: u32,
        dashed: bool,
    ) {
        self.ops.push(Op::Path { pts, color, width, dashed });
    }
    /// Whether a box would cover nothing placed so far.
    fn free(&self, b: &Bx) -> bool {
        self.cost(b) == 0
    }
    fn cost(&self, b: &Bx) -> usize {
        self.texts.iter().filter(|t| t.hits(b)).count()
            + self.marks.iter().filter(|m| m.hits(b)).count()
    }
    fn mark_box(&mut self, b: Bx) {
        self.marks.push(Shape::Box(b));
    }
    fn mark_seg(&mut self, a: (f64, f64), b: (f64, f64)) {
        self.marks.push(Shape::Seg(a, b));
    }
}

// ---------------------------------------------------------------------------------------
// Figure data

struct Panel {
    name: Option<String>,
    /// (series index, category or x text, point)
    points: Vec<(usize, String, Point)>,
}

/// One entry of a legend.
#[derive(Debug, Clone)]
enum Swatch {
    Line { color: RGBColor, marker: Marker, dashed: bool },
    Markers { color: RGBColor, marker: Marker, hollow: bool },
    Bar(RGBColor),
    Guide,
}

struct Style {
    color: RGBColor,
    marker: Marker,
    dashed: bool,
    markers_only: bool,
}

struct Figure<'a> {
    spec: &'a Spec,
    kind: Kind,
    meta: &'a Meta,
    /// Series names as shown (panel part removed).
    series: Vec<String>,
    styles: Vec<Style>,
    panels: Vec<Panel>,
    refs: Vec<(RefLine, f64)>,
}

impl<'a> Figure<'a> {
    fn new(spec: &'a Spec, meta: &'a Meta, points: &[Point]) -> anyhow::Result<Self> {
        let kind =
            if spec.kind == Kind::Bar && spec.y_log { Kind::Dot } else { spec.kind };
        let mut series: Vec<String> = Vec::new();
        let mut panels: Vec<Panel> = Vec::new();
        for p in points {
            let (panel, s, cat) = match spec.panels {
                Some(by) => {
                    let (a, b, c) = by.split(&p.series, &p.x);
                    (Some(a), b, c)
                }
                None => (None, p.series.clone(), p.x.clone()),
            };
            let si = match series.iter().position(|x| x == &s) {
                Some(i) => i,
                None => {
                    series.push(s);
                    series.len() - 1
                }
            };
            let pi = match panels.iter().position(|x| x.name == panel) {
                Some(i) => i,
                None => {
                    panels.push(Panel { name: panel, points: Vec::new() });
                    panels.len() - 1
                }
            };
            panels[pi].points.push((si, cat, p.clone()));
        }
        let styles = series
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let ci = spec.colors.get(i).copied().unwrap_or(i);
                let original = points
                    .iter()
                    .find(|p| {
                        spec.panels.map_or(p.series == *name, |by| {
                            by.split(&p.series, &p.x).1 == *name
                        })
                    })
                    .map(|p| p.series.clone())
                    .unwrap_or_default();
                let listed = |l: &[String]| l.contains(name) || l.contains(&original);
                Style {
                    color: PALETTE[ci % PALETTE.len()],
                    marker: MARKERS[i % MARKERS.len()],
                    dashed: listed(&spec.dashed),
                    markers_only: listed(&spec.markers_only),
                }
            })
            .collect();
        let refs = spec
            .ref_lines
            .iter()
            .map(|r| Ok((r.clone(), r.resolve(meta)?)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { spec, kind, meta, series, styles, panels, refs })
    }

    fn legend_entries(&self, with_refs: bool) -> Vec<(Swatch, String)> {
        let mut out = Vec::new();
        let show = self.kind == Kind::Line || self.series.len() > 1;
        if show {
            for (i, name) in self.series.iter().enumerate() {
                let st = &self.styles[i];
                let sw = match self.kind {
                    Kind::Line if st.markers_only => Swatch::Markers {
                        color: st.color,
                        marker: Marker::Circle,
                        hollow: true,
                    },
                    Kind::Line => Swatch::Line {
                        color: st.color,
                        marker: st.marker,
                        dashed: st.dashed,
                    },
                    Kind::Bar => Swatch::Bar(st.color),
                    Kind::Dot => Swatch::Markers {
                        color: st.color,
                        marker: st.marker,
                        hollow: st.dashed,
                    },
                };
                out.push((sw, name.clone()));
            }
        }
        if with_refs {
            for (r, v) in &self.refs {
                out.push((Swatch::Guide, self.ref_label(r, *v)));
            }
        }
        out
    }

    fn ref_label(&self, r: &RefLine, v: f64) -> String {
        let shown = if r.axis == Axis::X && self.spec.x_bytes {
            bytes_label(v)
        } else {
            value_label(v)
        };
        r.label.replace("{}", &shown)
    }

    fn hover(&self, si: usize, x_text: &str, p: &Point) -> String {
        let mut t = format!("{}, {x_text}: {}", self.series[si], hover_number(p.y));
        if p.y_max > p.y_min {
            t.push_str(&format!(
                " ({}–{})",
                hover_number(p.y_min),
                hover_number(p.y_max)
            ));
        }
        if let Some((label, scale)) = &self.spec.y2 {
            t.push_str(&format!(" = {} {label}", hover_number(p.y * scale)));
        }
        t
    }

    fn x_text(&self, x: &str) -> String {
        match x.parse::<f64>() {
            Ok(v) if self.spec.x_bytes => bytes_label(v),
            Ok(v) => hover_number(v),
            Err(_) => x.to_string(),
        }
    }
}

/// How one attempt at a layout places its legend and reference-line labels.
#[derive(Debug, Clone, Copy)]
struct Attempt {
    legend_outside: bool,
    refs_in_legend: bool,
}

const MARGIN: f64 = 12.0;
const COL_GAP: f64 = 26.0;
const TICK: f64 = 5.0;

/// Draws the figure described by `record` as SVG text. `data_name` is shown in the footer.
pub fn draw_svg(record: &Record, data_name: &str) -> anyhow::Result<String> {
    let spec = Spec::from_meta(&record.meta)?;
    let points = points_of(record)?;
    if points.is_empty() {
        bail!("a figure needs at least one point");
    }
    let fig = Figure::new(&spec, &record.meta, &points)?;
    let attempts = [
        Attempt { legend_outside: false, refs_in_legend: false },
        Attempt { legend_outside: true, refs_in_legend: false },
        Attempt { legend_outside: true, refs_in_legend: true },
    ];
    for (i, a) in attempts.iter().enumerate() {
        if let Some((scene, height)) =
            layout(&fig, data_name, *a, i == attempts.len() - 1)?
        {
            return render(&scene, height);
        }
    }
    unreachable!("the last attempt always places everything")
}

/// Lays the figure out; `None` when this attempt cannot place its legend or a reference
/// line's label without covering something (`last` places them regardless).
fn layout(
    fig: &Figure,
    data_name: &str,
    attempt: Attempt,
    last: bool,
) -> anyhow::Result<Option<(Scene, u32)>> {
    let spec = fig.spec;
    let mut sc = Scene::default();
    let mut y = 12.0;
    for line in wrap_balanced(&spec.title, F_TITLE, WIDTH - 2.0 * MARGIN) {
        sc.text(TextOp::new(&line, WIDTH / 2.0, y, F_TITLE, HPos::Center, VPos::Top));
        y += line_height(F_TITLE);
    }
    y += 6.0;
    let n_panels = fig.panels.len();
    let legend_outside = attempt.legend_outside || n_panels > 1;
    let entries = fig.legend_entries(attempt.refs_in_legend);
    if legend_outside && !entries.is_empty() {
        y = legend_rows(&mut sc, &entries, MARGIN + 20.0, y, WIDTH - MARGIN) + 8.0;
    }

    let cols = spec.panel_columns.clamp(1, n_panels.max(1));
    let rows = n_panels.div_ceil(cols);
    let horizontal = fig.kind == Kind::Dot;
    // Axis titles: y (rotated, left; the category title for a dot plot), x (below).
    let (left_title, bottom_title) = if horizontal {
        (&spec.x_label, &spec.y_label)
    } else {
        (&spec.y_label, &spec.x_label)
    };
    let cats_per_panel: Vec<Vec<String>> = fig
        .panels
        .iter()
        .map(|p| {
            let mut c: Vec<String> = Vec::new();
            for (_, x, _) in &p.points {
                if !c.contains(x) {
                    c.push(x.clone());
                }
            }
            c
        })
        .collect();
    let plot_h = if horizontal {
        cats_per_panel.iter().map(Vec::len).max().unwrap_or(1) as f64
            * dot_row_height(fig)
            + 8.0
    } else {
        match rows {
            1 => 330.0,
            2 => 220.0,
            _ => 180.0,
        }
    };
    let grid_h_estimate = rows as f64 * (plot_h + 60.0);
    let left_lines =
        wrap_balanced(left_title, F_AXIS, grid_h_estimate.min(rows as f64 * plot_h));
    let band = MARGIN + left_lines.len() as f64 * line_height(F_AXIS) + 4.0;

    // Value axes (vertical for line and bar charts, horizontal for dot plots).
    let value_ticks = &spec.y_ticks;
    let ref_values = |axis: Axis| -> Vec<f64> {
        fig.refs.iter().filter(|(r, _)| r.axis == axis).map(|(_, v)| *v).collect()
    };
    let value_request =
        |pts: &mut dyn Iterator<Item = &Point>, headroom: f64| AxisRequest {
            values: pts
                .flat_map(|p| [p.y, p.y_min, p.y_max])
                .chain(ref_values(Axis::Y))
                .collect(),
            log: spec.y_log,
            bytes: false,
            from_zero: fig.kind == Kind::Bar,
            ticks: value_ticks,
            data: Vec::new(),
            orient: if horizontal { Orient::Horizontal } else { Orient::Vertical },
            headroom_px: headroom,
            integer: false,
        };
    let value_labels =
        fig.kind == Kind::Bar && bar_value_labels_fit(fig, &cats_per_panel);
    let headroom = if value_labels { em(F_LABEL) + 8.0 } else { 0.0 };

    if horizontal {
        return layout_dot(
            fig,
            sc,
            y,
            band,
            &left_lines,
            bottom_title,
            plot_h,
            &cats_per_panel,
            cols,
            rows,
            &value_request,
            data_name,
            legend_outside,
            &entries,
            attempt,
            last,
        );
    }

    // Vertical value axes: pixel span known (plot height), so ticks can be chosen now.
    let mut y_axes: Vec<ValueAxis> = Vec::new();
    if spec.independent_y {
        for p in &fig.panels {
            let req = value_request(&mut p.points.iter().map(|(_, _, q)| q), headroom);
            y_axes.push(make_axis(&req, plot_h, 0.0)?);
        }
    } else {
        let req = value_request(
            &mut fig.panels.iter().flat_map(|p| p.points.iter().map(|(_, _, q)| q)),
            headroom,
        );
        let a = make_axis(&req, plot_h, 0.0)?;
        y_axes = vec![a; n_panels];
    }
    let tick_w = y_axes
        .iter()
        .flat_map(|a| a.ticks.iter().map(|(_, l)| width_of(l, F_TICK)))
        .fold(0.0, f64::max);
    let left_w = tick_w + TICK + 6.0;
    // A second value axis on the right.
    let y2_axes: Vec<Option<ValueAxis>> = y_axes
        .iter()
        .map(|a| {
            spec.y2.as_ref().map(|(_, s)| {
                let req = AxisRequest {
                    values: vec![a.value_at(a.lo) * s, a.value_at(a.hi) * s],
                    log: a.log,
                    bytes: false,
                    from_zero: false,
                    ticks: &Ticks::Auto,
                    data: Vec::new(),
                    orient: Orient::Vertical,
                    headroom_px: 0.0,
                    integer: false,
                };
                let mut b = make_axis(&req, plot_h, 0.0).expect("a range with values");
                // The primary axis' span in the second unit: only the ticks differ.
                (b.lo, b.hi) = if a.log {
                    (a.lo + s.log10(), a.hi + s.log10())
                } else {
                    (a.lo * s, a.hi * s)
                };
                b.ticks.retain(|(v, _)| {
                    let p = if b.log { v.log10() } else { *v };
                    p >= b.lo - 1e-9 && p <= b.hi + 1e-9
                });
                b
            })
        })
        .collect();
    let right_w = match &spec.y2 {
        Some(_) => {
            let w = y2_axes
                .iter()
                .flatten()
                .flat_map(|a| a.ticks.iter().map(|(_, l)| width_of(l, F_TICK)))
                .fold(0.0, f64::max);
            w + TICK + 6.0 + line_height(F_AXIS) + 6.0 + MARGIN
        }
        None => MARGIN + 10.0,
    };
    let col_w = (WIDTH - band - right_w - (cols - 1) as f64 * COL_GAP) / cols as f64;
    let plot_w = col_w - left_w;

    // Horizontal axis of line charts, shared by all panels.
    let x_axis = if fig.kind == Kind::Line {
        let xs: Vec<f64> = fig
            .panels
            .iter()
            .flat_map(|p| p.points.iter())
            .map(|(_, x, _)| {
                x.parse::<f64>().with_context(|| format!("x `{x}` is not a number"))
            })
            .collect::<anyhow::Result<_>>()?;
        let integer = xs.iter().all(|x| x.fract() == 0.0);
        let req = AxisRequest {
            integer,
            values: xs.iter().copied().chain(ref_values(Axis::X)).collect(),
            log: spec.x_log,
            bytes: spec.x_bytes,
            from_zero: false,
            ticks: &spec.x_ticks,
            data: xs,
            orient: Orient::Horizontal,
            headroom_px: 0.0,
        };
        Some(make_axis(&req, 0.0, plot_w)?)
    } else {
        None
    };

    // Category labels of bar charts, wrapped to their slot.
    let cat_lines: Vec<Vec<Vec<String>>> = cats_per_panel
        .iter()
        .map(|cats| {
            let slot = plot_w / cats.len().max(1) as f64;
            cats.iter().map(|c| wrap_balanced(c, F_TICK, slot - 8.0)).collect()
        })
        .collect();

    let panel_title_h =
        if spec.panels.is_some() { line_height(F_PANEL) + 4.0 } else { 0.0 };
    let mut plots: Vec<Bx> = Vec::new();
    for r in 0..rows {
        let bottom_lines = (r * cols..((r + 1) * cols).min(n_panels))
            .map(|i| match fig.kind {
                Kind::Bar => cat_lines[i].iter().map(Vec::len).max().unwrap_or(1),
                _ => 1,
            })
            .max()
            .unwrap_or(1);
        let top = y + panel_title_h;
        for c in 0..cols {
            let i = r * cols + c;
            if i >= n_panels {
                break;
            }
            let x0 = band + c as f64 * (col_w + COL_GAP) + left_w;
            plots.push(Bx::new(x0, top, x0 + plot_w, top + plot_h));
        }
        y = top + plot_h + 8.0 + bottom_lines as f64 * line_height(F_TICK) + 6.0;
    }

    // Place the axes on the page.
    for (i, p) in plots.iter().enumerate() {
        let a = &mut y_axes[i];
        a.p0 = p.y1;
        a.p1 = p.y0;
    }
    let y2_axes: Vec<Option<ValueAxis>> = y2_axes
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            a.map(|mut a| {
                a.p0 = plots[i].y1;
                a.p1 = plots[i].y0;
                a
            })
        })
        .collect();

    // Panels: frame, grid, reference lines, data, tick labels.
    let mut refs_placed = true;
    let mut pending_ref_labels: Vec<(usize, String, Axis, f64)> = Vec::new();
    for (i, plot) in plots.iter().enumerate() {
        let panel = &fig.panels[i];
        let ya = &y_axes[i];
        let xa = x_axis.as_ref().map(|a| {
            let mut a = a.clone();
            a.p0 += plot.x0;
            a.p1 += plot.x0;
            a
        });
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
        for (v, _) in &ya.ticks {
            let py = ya.px(*v).round();
            sc.path(vec![(plot.x0, py), (plot.x1, py)], GRID, 1, false);
        }
        if let Some(xa) = &xa {
            for (v, _) in &xa.ticks {
                let px = xa.px(*v).round();
                sc.path(vec![(px, plot.y0), (px, plot.y1)], GRID, 1, false);
            }
        }
        // Reference lines, under the data.
        for (r, v) in &fig.refs {
            match r.axis {
                Axis::Y => {
                    let py = ya.px(*v);
                    sc.path(vec![(plot.x0, py), (plot.x1, py)], GUIDE, 1, true);
                    sc.mark_seg((plot.x0, py), (plot.x1, py));
                }
                Axis::X => {
                    if let Some(xa) = &xa {
                        let px = xa.px(*v);
                        sc.path(vec![(px, plot.y0), (px, plot.y1)], GUIDE, 1, true);
                        sc.mark_seg((px, plot.y0), (px, plot.y1));
                    }
                }
            }
            if !attempt.refs_in_legend {
                pending_ref_labels.push((i, fig.ref_label(r, *v), r.axis, *v));
            }
        }
        match fig.kind {
            Kind::Line => draw_lines(&mut sc, fig, panel, xa.as_ref().unwrap(), ya),
            Kind::Bar => draw_bars(
                &mut sc,
                fig,
                panel,
                &cats_per_panel[i],
                plot,
                ya,
                value_labels,
            ),
            Kind::Dot => unreachable!(),
        }
        // Axes and tick labels.
        sc.rect(*plot, None, Some((FRAME, 1)));
        sc.path(
            vec![(plot.x0, plot.y0), (plot.x0, plot.y1), (plot.x1, plot.y1)],
            INK,
            1,
            false,
        );
        for (v, l) in &ya.ticks {
            let py = ya.px(*v).round();
            sc.path(vec![(plot.x0 - TICK, py), (plot.x0, py)], INK, 1, false);
            sc.text(TextOp::new(
                l,
                plot.x0 - TICK - 3.0,
                py,
                F_TICK,
                HPos::Right,
                VPos::Center,
            ));
        }
        if let Some(Some(a2)) = y2_axes.get(i) {
            let last_col = (i % cols == cols - 1) || i == n_panels - 1;
            if last_col {
                sc.path(vec![(plot.x1, plot.y0), (plot.x1, plot.y1)], INK, 1, false);
                for (v, l) in &a2.ticks {
                    let py = a2.px(*v).round();
                    sc.path(vec![(plot.x1, py), (plot.x1 + TICK, py)], INK, 1, false);
                    sc.text(TextOp::new(
                        l,
                        plot.x1 + TICK + 3.0,
                        py,
                        F_TICK,
                        HPos::Left,
                        VPos::Center,
                    ));
                }
            }
        }
        match fig.kind {
            Kind::Line => {
                let xa = xa.as_ref().unwrap();
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
            }
            _ => {
                let cats = &cats_per_panel[i];
                let slot = plot.x1 - plot.x0;
                let slot = slot / cats.len().max(1) as f64;
                for (ci, lines) in cat_lines[i].iter().enumerate() {
                    let cx = plot.x0 + slot * (ci as f64 + 0.5);
                    for (li, line) in lines.iter().enumerate() {
                        sc.text(TextOp::new(
                            line,
                            cx,
                            plot.y1 + 6.0 + li as f64 * line_height(F_TICK),
                            F_TICK,
                            HPos::Center,
                            VPos::Top,
                        ));
                    }
                }
            }
        }
    }
    // Reference-line labels, beside their lines where something leaves room.
    for (i, label, axis, v) in pending_ref_labels {
        let plot = plots[i];
        let b = match axis {
            Axis::Y => place_y_ref_label(&sc, &plot, y_axes[i].px(v), &label),
            Axis::X => {
                let xa = x_axis.as_ref().unwrap();
                place_x_ref_label(&sc, &plot, xa.px(v) + plot.x0, &label)
            }
        };
        match b {
            Some(t) => {
                let mut t = t;
                t.color = GUIDE;
                sc.text(t);
            }
            None => refs_placed = false,
        }
    }
    if !refs_placed && !last {
        return Ok(None);
    }
    if let (Kind::Line, Some(xa)) = (fig.kind, &x_axis) {
        for (i, plot) in plots.iter().enumerate() {
            let mut xa = xa.clone();
            xa.p0 += plot.x0;
            xa.p1 += plot.x0;
            place_point_labels(&mut sc, fig, &fig.panels[i], plot, &xa, &y_axes[i]);
        }
    }
    if !legend_outside
        && !entries.is_empty()
        && !legend_inside(&mut sc, &entries, &plots[0])
    {
        if last {
            bail!("no room for the legend");
        }
        return Ok(None);
    }

    // Axis titles.
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
    if let Some((label, _)) = &spec.y2 {
        let mut t = TextOp::new(
            label,
            WIDTH - MARGIN - line_height(F_AXIS),
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

/// Whether every bar can carry its value above it: few bars, each label no wider than its bar's
/// share of the group.
fn bar_value_labels_fit(fig: &Figure, cats: &[Vec<String>]) -> bool {
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

/// The series present in a panel, in the figure's order.
fn series_in(p: &Panel) -> Vec<usize> {
    let mut s: Vec<usize> = p.points.iter().map(|(i, _, _)| *i).collect();
    s.sort_unstable();
    s.dedup();
    s
}

fn marker_box(c: (f64, f64), r: f64) -> Bx {
    Bx::new(c.0 - r, c.1 - r, c.0 + r, c.1 + r)
}

/// A vertical min–max bar with caps, as marks.
fn error_bar_v(
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

fn error_bar_h(
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

fn draw_lines(
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
            let label = point_label(fig, si, x);
            let mut title = fig.hover(si, &fig.x_text(x), p);
            if let Some(l) = label {
                title = format!("{l}: {title}");
            }
            sc.ops.push(Op::Open(title));
            let shape = if st.markers_only { Marker::Circle } else { st.marker };
            sc.ops.push(Op::Marker { c: *c, r, shape, color: st.color, hollow });
            error_bar_v(sc, c.0, ya.px(p.y_min), ya.px(p.y_max), cap, st.color);
            sc.ops.push(Op::Close);
            sc.mark_box(marker_box(*c, r + 1.0));
        }
    }
}

fn point_label<'a>(fig: &'a Figure, si: usize, x: &str) -> Option<&'a str> {
    if !fig.styles[si].markers_only {
        return None;
    }
    let xv = x.parse::<f64>().ok();
    fig.spec
        .point_labels
        .iter()
        .find(|(k, _)| k == x || (xv.is_some() && k.parse::<f64>().ok() == xv))
        .map(|(_, l)| l.as_str())
}

fn draw_bars(
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
        for (k, &si) in present.iter().enumerate() {
            let Some((_, _, p)) =
                panel.points.iter().find(|(s, x, _)| *s == si && x == cat)
            else {
                continue;
            };
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
            sc.rect(b, Some(st.color), None);
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

/// A label for a horizontal reference line at `py`: above or below it, at either end.
fn place_y_ref_label(sc: &Scene, plot: &Bx, py: f64, label: &str) -> Option<TextOp> {
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
fn place_x_ref_label(sc: &Scene, plot: &Bx, px: f64, label: &str) -> Option<TextOp> {
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

/// Names the labelled markers, each beside its marker where it covers nothing, farther out
/// with a leader line where the neighbourhood is crowded.
fn place_point_labels(
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
            point_label(fig, *si, x).map(|l| {
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

/// Draws a legend inside the plot where it covers nothing; false if no place is free.
fn legend_inside(sc: &mut Scene, entries: &[(Swatch, String)], plot: &Bx) -> bool {
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
fn legend_rows(
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
        Swatch::Markers { .. } | Swatch::Bar(_) => 14.0,
    }
}

fn swatch(sc: &mut Scene, sw: &Swatch, x: f64, y: f64) {
    match sw {
        Swatch::Line { color, marker, dashed } => {
            sc.path(vec![(x, y), (x + 28.0, y)], *color, 2, *dashed);
            sc.ops.push(Op::Marker {
                c: (x + 14.0, y),
                r: 3.5,
                shape: *marker,
                color: *color,
                hollow: *dashed,
            });
        }
        Swatch::Markers { color, marker, hollow } => {
            sc.ops.push(Op::Marker {
                c: (x + 7.0, y),
                r: 5.0,
                shape: *marker,
                color: *color,
                hollow: *hollow,
            });
        }
        Swatch::Bar(color) => {
            sc.rect(Bx::new(x, y - 7.0, x + 14.0, y + 7.0), Some(*color), None);
        }
        Swatch::Guide => {
            sc.path(vec![(x, y), (x + 28.0, y)], GUIDE, 1, true);
        }
    }
}

/// The provenance and the commands, wrapped below the figure; returns the figure's height.
fn footer(sc: &mut Scene, meta: &Meta, data_name: &str, y: f64) -> u32 {
    let get = |k: &str| meta.get(k).unwrap_or("?").to_string();
    let cpu_only = meta.get("gpu").is_none_or(|g| g.starts_with("none"));
    let mut first: Vec<String> = Vec::new();
    match (cpu_only, meta.get("cpu")) {
        (true, Some(cpu)) => first.push(format!("CPU-only measurement on {cpu}")),
        (true, None) => first.push("CPU-only measurement".into()),
        (false, _) => {
            first.push(get("gpu"));
            first.push(format!("driver {}", get("driver")));
        }
    }
    first.push(format!("cudarc {}", get("cudarc")));
    first.push(format!("commit {}", get("commit")));
    first.push(get("date_utc"));
    let second = vec![
        format!("data: figures/data/{data_name}"),
        format!("re-measure: {}", get("command")),
        "redraw: cargo run --release --example reproduce -- --out figures/ --redraw-only".to_string(),
    ];
    let mut y = y;
    let max_w = WIDTH - 2.0 * MARGIN;
    sc.path(vec![(MARGIN, y - 4.0), (WIDTH - MARGIN, y - 4.0)], GRID, 1, false);
    for group in [first, second] {
        let mut line = String::new();
        let mut lines = Vec::new();
        for item in group {
            let cand = if line.is_empty() {
                item.clone()
            } else {
                format!("{line} · {item}")
            };
            if line.is_empty() || width_of(&cand, F_FOOTER) <= max_w {
                line = cand;
            } else {
                lines.push(std::mem::replace(&mut line, item));
            }
        }
        lines.push(line);
        for l in lines {
            // A single item wider than the figure is wrapped at its spaces.
            for part in wrap(&l, F_FOOTER, max_w) {
                let mut t =
                    TextOp::new(&part, MARGIN, y, F_FOOTER, HPos::Left, VPos::Top);
                t.color = MUTED;
                sc.text(t);
                y += line_height(F_FOOTER);
            }
        }
    }
    (y + 8.0).ceil() as u32
}

/// Vertical distance between the markers of two series in one row of a dot plot.
const DOT_DODGE: f64 = 12.0;

/// Height of one category row of a dot plot: room for every series' marker.
fn dot_row_height(fig: &Figure) -> f64 {
    (fig.series.len() as f64 * DOT_DODGE + 14.0).max(38.0)
}

#[allow(clippy::too_many_arguments)]
fn layout_dot<'a>(
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

// ---------------------------------------------------------------------------------------
// Rendering

const GROUP_OPEN: &str = "cmbook-hover-group-open:";
const GROUP_CLOSE: &str = "cmbook-hover-group-close";

fn ip(p: (f64, f64)) -> (i32, i32) {
    (p.0.round() as i32, p.1.round() as i32)
}

fn render(sc: &Scene, height: u32) -> anyhow::Result<String> {
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
                out.push_str(&format!("<g>\n<title>{}</title>\n", xml_escape(title)));
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

// ---------------------------------------------------------------------------------------
// Records in, SVG out

/// Writes `dir/data/<stem>.csv` (provenance + spec + points) and `dir/<stem>.svg` drawn from it.
pub fn write_figure(
    dir: &Path,
    stem: &str,
    meta: &Meta,
    spec: &Spec,
    points: &[Point],
) -> anyhow::Result<()> {
    let csv_path = dir.join("data").join(format!("{stem}.csv"));
    record::write_csv(&csv_path, &spec.add_to(meta.clone()), points)?;
    redraw(&csv_path, &dir.join(format!("{stem}.svg")))
}

/// Draws `svg_path` from the figure CSV at `csv_path`.
pub fn redraw(csv_path: &Path, svg_path: &Path) -> anyhow::Result<()> {
    let record = record::read_csv(csv_path)?;
    let name = csv_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let svg = draw_svg(&record, &name)
        .with_context(|| format!("cannot draw {}", csv_path.display()))?;
    std::fs::write(svg_path, svg)
        .with_context(|| format!("cannot write {}", svg_path.display()))
}

fn points_of(record: &Record) -> anyhow::Result<Vec<Point>> {
    let col = |n: &str| record.column(n);
    let (s, x, y, lo, hi) =
        (col("series")?, col("x")?, col("y")?, col("y_min")?, col("y_max")?);
    let num =
        |v: &str| v.parse::<f64>().with_context(|| format!("`{v}` is not a number"));
    record
        .rows
        .iter()
        .map(|r| {
            Ok(Point {
                series: r[s].clone(),
                x: r[x].clone(),
                y: num(&r[y])?,
                y_min: num(&r[lo])?,
                y_max: num(&r[hi])?,
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Reading a drawn SVG back: what the layout tests check

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

/// Parses an SVG written by [`draw_svg`].
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
/// Checks every record under `dir/data/` against what it draws: a figure CSV (one with a `plot`
/// key) must match `dir/<stem>.svg` byte for byte, a table CSV must match `dir/<stem>.md`, every
/// record must carry full provenance, and every SVG or table must have its CSV.
/// Returns one line per problem; empty means the figures are exactly their data.
pub fn audit_figures(dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut stems = Vec::new();
    for entry in std::fs::read_dir(dir.join("data"))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let name = format!("{stem}.csv");
        let rec = match record::read_csv(&path) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{name}: {e:#}"));
                continue;
            }
        };
        let missing = rec.meta.missing_provenance();
        if !missing.is_empty() {
            problems.push(format!("{name}: provenance lacks {}", missing.join(", ")));
        }
        let (own, other) =
            if rec.meta.get("plot").is_some() { ("svg", "md") } else { ("md", "svg") };
        if dir.join(format!("{stem}.{other}")).exists() {
            problems.push(format!("{stem}.{other} shares its stem with a {own} record: one CSV per figure or table"));
        }
        if rec.meta.get("plot").is_some() {
            let svg = dir.join(format!("{stem}.svg"));
            match (std::fs::read_to_string(&svg), draw_svg(&rec, &name)) {
                (Ok(committed), Ok(drawn)) if committed == drawn => {}
                (Ok(_), Ok(_)) => problems.push(format!(
                    "{stem}.svg differs from what {name} draws (stale or hand-edited)"
                )),
                (Err(_), _) => problems.push(format!("{stem}.svg is missing")),
                (_, Err(e)) => problems.push(format!("{name} cannot be drawn: {e:#}")),
            }
        } else {
            let md = dir.join(format!("{stem}.md"));
            match std::fs::read_to_string(&md) {
                Ok(committed) => match record::markdown_table(&rec, &format!("figures/data/{name}")) {
                    Ok(drawn) if drawn == committed => {}
                    Ok(_) => problems.push(format!("{stem}.md differs from the table {name} renders (stale or hand-edited)")),
                    Err(e) => problems.push(format!("{name} cannot be shown as a table: {e:#}")),
                },
                Err(_) => problems.push(format!("{stem}.md is missing")),
            }
        }
        stems.push(stem);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_output = path.extension().is_some_and(|e| e == "svg" || e == "md");
        if is_output
            && !stems
                .contains(&path.file_stem().unwrap().to_string_lossy().into_owned())
        {
            problems.push(format!("{} has no CSV under data/", path.display()));
        }
    }
    Ok(problems)
}

/// Redraws every figure and table under `dir` from its CSV (no GPU needed).
pub fn redraw_all(dir: &Path) -> anyhow::Result<usize> {
    let mut count = 0;
    for entry in std::fs::read_dir(dir.join("data"))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let rec = record::read_csv(&path)?;
        if rec.meta.get("plot").is_some() {
            redraw(&path, &dir.join(format!("{stem}.svg")))?;
        } else {
            std::fs::write(
                dir.join(format!("{stem}.md")),
                record::markdown_table(&rec, &format!("figures/data/{stem}.csv"))?,
            )?;
        }
        count += 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(spec: &Spec, points: &[Point]) -> Record {
        let meta = spec.add_to(
            Meta::default()
                .with("gpu", "Test GPU")
                .with("commit", "abc")
                .with("l2_mib", "50")
                .with("command", "cargo run --release --example test"),
        );
        record::parse_csv(&record::to_csv_string(&meta, points).unwrap()).unwrap()
    }

    fn draw(spec: &Spec, points: &[Point]) -> String {
        draw_svg(&record(spec, points), "t.csv").unwrap()
    }

    fn clean(svg: &str) {
        let p = layout_problems(svg);
        assert!(p.is_empty(), "{}\n{svg}", p.join("\n"));
    }

    fn ticks(spec_axis: AxisRequest, len: f64) -> ValueAxis {
        make_axis(&spec_axis, len, 0.0).unwrap()
    }

    fn request<'a>(values: &[f64], log: bool, ticks: &'a Ticks) -> AxisRequest<'a> {
        AxisRequest {
            values: values.to_vec(),
            log,
            bytes: false,
            from_zero: false,
            ticks,
            data: values.to_vec(),
            orient: Orient::Vertical,
            headroom_px: 0.0,
            integer: false,
        }
    }

    #[test]
    fn line_figure_redraws_identically_from_its_csv() {
        let spec = Spec::line("Copy bandwidth", "bytes", "GB/s").log_x();
        let pts = vec![
            Point::new("kernel", 1e6, 500.0, 450.0, 520.0),
            Point::new("kernel", 1e9, 2900.0, 2890.0, 2950.0),
            Point::new("memcpy", 1e6, 400.0, 400.0, 400.0),
            Point::new("memcpy", 1e9, 2800.0, 2700.0, 2810.0),
        ];
        let a = draw(&spec, &pts);
        let b = draw(&spec, &pts);
        assert_eq!(a, b, "drawing must be deterministic");
        assert!(
            a.starts_with("<svg")
                && a.contains("Copy bandwidth")
                && a.contains("memcpy")
                && a.contains("Test GPU")
                && a.contains("re-measure: cargo run --release --example test")
                && a.contains("--redraw-only")
        );
        clean(&a);
    }

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
    fn every_option_survives_the_csv_and_absent_options_add_no_keys() {
        let plain = Spec::bar("t", "x", "y");
        let keys = |s: &Spec| s.add_to(Meta::default()).0.len();
        assert_eq!(keys(&plain), 6);
        let full = Spec::line("t", "x", "y")
            .log_x()
            .markers_only("m")
            .panels(PanelBy::XLastWord, 2)
            .independent_y()
            .ref_line(Axis::Y, "1", "no speedup")
            .ref_line(Axis::X, "l2_mib MiB", "L2 {}")
            .dashed("paper")
            .colors(&[0, 1, 0])
            .point_label("1.5", "chain a")
            .x_bytes()
            .x_ticks(Ticks::Data)
            .y_ticks(Ticks::List(vec![10.0, 15.0, 20.0]))
            .y2("GFLOP/s", 516.89);
        let meta = full.add_to(Meta::default());
        assert_eq!(Spec::from_meta(&meta).unwrap(), full);
        assert_eq!(
            meta.get("ref_lines"),
            Some("y = 1: no speedup | x = l2_mib MiB: L2 {}")
        );
        let dot = Spec::dot("t", "x", "y").log_y().y_ticks(Ticks::Dense);
        assert_eq!(Spec::from_meta(&dot.add_to(Meta::default())).unwrap(), dot);
    }

    #[test]
    fn numbers_carry_sensible_digits() {
        assert_eq!(value_label(10.542388), "10.5");
        assert_eq!(value_label(32644.348), "32.6k");
        assert_eq!(value_label(116410.4), "116k");
        assert_eq!(value_label(2803.21), "2803");
        assert_eq!(value_label(0.0457), "0.0457");
        assert_eq!(value_label(0.56), "0.560");
        assert_eq!(value_label(1.0), "1.00");
        assert_eq!(value_label(9.996), "10.0");
        assert_eq!(value_label(99.96), "100");
        assert_eq!(value_label(100.0), "100");
        assert_eq!(hover_number(32644.348), "32644");
        assert_eq!(hover_number(1.2231084), "1.223");
        assert_eq!(bytes_label(131072.0), "128 KiB");
        assert_eq!(bytes_label(536870912.0), "512 MiB");
        assert_eq!(bytes_label(52428800.0), "50 MiB");
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(sig(9.996, 3), "10");
    }

    #[test]
    fn tick_labels_are_consistent_on_an_axis() {
        // Log axis across 10 000: an SI prefix on every label from 1000 up, no exponents.
        let l = tick_labels(&[100.0, 1000.0, 10000.0, 100000.0], None, false);
        assert_eq!(l, ["100", "1k", "10k", "100k"]);
        // Below 10 000 plain numbers.
        assert_eq!(
            tick_labels(&[1.0, 10.0, 100.0, 1000.0], None, false),
            ["1", "10", "100", "1000"]
        );
        // Linear: the step's decimals, on every label.
        assert_eq!(
            tick_labels(&[0.0, 0.25, 0.5], Some(0.25), false),
            ["0", "0.25", "0.50"]
        );
        assert_eq!(
            tick_labels(&[0.0, 20000.0, 40000.0], Some(20000.0), false),
            ["0", "20k", "40k"]
        );
        // Both axes of a drawn log-log figure: no exponent, no 10000 beside a 1k.
        let svg = draw(
            &Spec::line("t", "x", "y").log_x().log_y(),
            &[
                Point::new("s", 1, 3.0, 3.0, 3.0),
                Point::new("s", 100000, 300000.0, 300000.0, 300000.0),
            ],
        );
        let texts: Vec<String> =
            read_svg_layout(&svg).texts.into_iter().map(|t| t.text).collect();
        assert!(
            !texts.iter().any(|t| t.contains("e4") || t.contains("e5") || t == "10000"),
            "{texts:?}"
        );
        assert!(texts.contains(&"10k".to_string()), "{texts:?}");
    }

    #[test]
    fn axes_end_near_the_data() {
        // 1 … 1024 on a log axis used to run to 10 000: a decade past the data.
        let a = ticks(request(&[1.0, 1024.0], true, &Ticks::Auto), 700.0);
        assert!(a.hi < 1024f64.log10() + 0.2 && a.lo > -0.2, "{a:?}");
        assert!(a.ticks.iter().all(|(v, _)| *v >= 0.9 && *v <= 1500.0), "{a:?}");
        // 57 … 927 on a log axis: neither 10 nor 10 000 in range.
        let b = ticks(request(&[57.0, 927.0], true, &Ticks::Auto), 330.0);
        assert!(10f64.powf(b.lo) > 40.0 && 10f64.powf(b.hi) < 1300.0, "{b:?}");
        assert!(b.ticks.len() >= 3, "{b:?}");
        // Linear from zero: the top tick at most one step above the data.
        let mut r = request(&[0.0, 83.3], false, &Ticks::Auto);
        r.from_zero = true;
        let c = ticks(r, 330.0);
        assert!(c.lo == 0.0 && c.hi < 100.0, "{c:?}");
        // An explicit list is honoured inside the range.
        let list = Ticks::List(vec![
            10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0,
        ]);
        let d = ticks(request(&[14.5, 350.0], true, &list), 330.0);
        let labels: Vec<&str> = d.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            labels.contains(&"20")
                && labels.contains(&"150")
                && labels.contains(&"300"),
            "{labels:?}"
        );
    }

    #[test]
    fn byte_axes_read_in_binary_units() {
        let mut r = request(&[1024.0, 536870912.0], true, &Ticks::Auto);
        r.bytes = true;
        r.orient = Orient::Horizontal;
        let a = make_axis(&r, 0.0, 700.0).unwrap();
        let labels: Vec<&str> = a.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert!(labels.contains(&"1 KiB") && labels.contains(&"1 MiB"), "{labels:?}");
        assert!(labels.iter().all(|l| l.ends_with("iB")), "{labels:?}");
    }

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

    #[test]
    fn log_axis_refuses_non_positive_values() {
        let spec = Spec::line("t", "x", "y").log_y();
        let pts = vec![Point::new("s", 1, 0.0, 0.0, 0.0)];
        assert!(draw_svg(&record(&spec, &pts), "t.csv").is_err());
    }

    #[test]
    fn panels_split_categories_and_keep_colours() {
        let spec = Spec::bar("Speedup", "dataset", "×")
            .panels(PanelBy::XLastWord, 1)
            .ref_line(Axis::Y, "1", "1× (no speedup)");
        let mut pts = Vec::new();
        for d in ["MINI", "SMALL", "LARGE"] {
            for p in ["double", "float"] {
                for (k, s) in ["pinned", "unified", "streams"].iter().enumerate() {
                    let v = 0.5 + k as f64;
                    pts.push(Point::new(s, format!("{d} {p}"), v, v * 0.9, v * 1.1));
                }
            }
        }
        let svg = draw(&spec, &pts);
        let l = read_svg_layout(&svg);
        let texts: Vec<&str> = l.texts.iter().map(|t| t.text.as_str()).collect();
        for want in ["double", "float", "MINI", "1× (no speedup)"] {
            assert!(texts.contains(&want), "{want}: {texts:?}");
        }
        assert!(!texts.contains(&"MINI double"), "{texts:?}");
        // Hover titles keep the full category.
        assert!(l
            .marks
            .iter()
            .any(|m| m.title.starts_with("pinned, MINI double: 0.5")));
        // Every bar of a series has one colour in both panels.
        let fills: std::collections::BTreeSet<&str> = svg
            .lines()
            .filter(|x| x.starts_with("<rect") && x.contains("fill=\"#0072B2\""))
            .map(|_| "blue")
            .collect();
        assert_eq!(fills.len(), 1);
        assert_eq!(l.marks.len(), 18);
        clean(&svg);
    }

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

    #[test]
    fn cpu_only_footers_name_the_cpu() {
        let spec = Spec::line("t", "x", "y");
        let meta = spec.add_to(
            Meta::default()
                .with("gpu", "none (CPU-only measurement)")
                .with("cpu", "AMD EPYC 9654")
                .with("driver", "n/a")
                .with("command", "cargo run --release --example loop_permutation"),
        );
        let pts =
            [Point::new("s", 1, 1.0, 1.0, 1.0), Point::new("s", 2, 2.0, 2.0, 2.0)];
        let rec =
            record::parse_csv(&record::to_csv_string(&meta, &pts).unwrap()).unwrap();
        let svg = draw_svg(&rec, "t.csv").unwrap();
        assert!(svg.contains("CPU-only measurement on AMD EPYC 9654"), "{svg}");
        assert!(!svg.contains("driver n/a"));
    }

    #[test]
    fn reference_lines_read_metadata_keys_and_units() {
        let meta = Meta::default().with("l2_mib", "50").with("l1_kib", "256 (stated)");
        let r = RefLine::parse("x = l2_mib MiB: L2 {}").unwrap();
        assert_eq!(r.resolve(&meta).unwrap(), 50.0 * 1024.0 * 1024.0);
        let r = RefLine::parse("x = l1_kib KiB: L1 {}").unwrap();
        assert_eq!(r.resolve(&meta).unwrap(), 256.0 * 1024.0);
        assert!(RefLine::parse("x = nothing: x").unwrap().resolve(&meta).is_err());
        assert!(RefLine::parse("z = 1: x").is_err());
    }

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
