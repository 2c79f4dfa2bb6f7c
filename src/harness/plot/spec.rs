//! [`Spec`], how to draw a figure: its builder methods and its round trip through a CSV's
//! metadata (`add_to` writes the keys of the module documentation, `from_meta` reads them).

use anyhow::{bail, Context};

use super::types::{Axis, Kind, PanelBy, Point, RefLine, Ticks};
use crate::harness::record::Meta;

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
    /// Series drawn in grey: the points a figure does not single out.
    pub grey: Vec<String>,
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
    /// The series drawn, by their names in the data (empty: every series). The others stay
    /// in the record, for a table or a reader's own plot: a figure makes one point.
    pub shown: Vec<String>,
    /// (series as recorded, name drawn): what a series is, in words, where the record names
    /// it by the code's options; applied before the panels split names.
    pub series_labels: Vec<(String, String)>,
    /// Bars grouped by series: the series names are the categories along x and the x values
    /// name the series (each group one kernel's variants, say).
    pub x_is_series: bool,
    /// The value axis includes zero, so heights compare as lengths (bars always do).
    pub y_from_zero: bool,
}

/// Joins the x and the y of a point label that names one marker of several at one x.
pub const LABEL_AT: &str = " @ ";

/// Separates the names in list-valued metadata (`markers_only`, `dashed`, `ref_lines`, …).
const SERIES_SEPARATOR: &str = " | ";
/// Separates a recorded series name from the label drawn for it in `series_labels`.
const LABEL_SEPARATOR: &str = " = ";

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
            grey: Vec::new(),
            colors: Vec::new(),
            point_labels: Vec::new(),
            x_bytes: false,
            x_ticks: Ticks::Auto,
            y_ticks: Ticks::Auto,
            y2: None,
            shown: Vec::new(),
            series_labels: Vec::new(),
            x_is_series: false,
            y_from_zero: false,
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
    /// Draws `series` in grey, behind what the figure names.
    pub fn grey(mut self, series: &str) -> Self {
        check_name(series);
        self.grey.push(series.to_string());
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
    /// Names the marker at (`x`, `y`) of a markers-only series: one of several markers that
    /// share an x. `x` as written in the data, `y` as its number.
    pub fn point_label_at(self, x: &str, y: f64, label: &str) -> Self {
        self.point_label(&format!("{x}{LABEL_AT}{y}"), label)
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
    /// A second value axis on the right, `label`, showing y × `per_y`. A factor that is not a
    /// finite number above 0 (a measurement too small to round to one) has no axis to show:
    /// none is drawn, as a record that declared one would be refused.
    pub fn y2(mut self, label: &str, per_y: f64) -> Self {
        self.y2 =
            (per_y.is_finite() && per_y > 0.0).then(|| (label.to_string(), per_y));
        self
    }

    /// Draws only `series` (by its name in the data) and the others so named; a name no
    /// point has draws nothing, so a run that skipped a program still draws the rest.
    pub fn show(mut self, series: &str) -> Self {
        check_name(series);
        self.shown.push(series.to_string());
        self
    }
    /// Draws the series recorded as `recorded` under the name `label`.
    pub fn series_label(mut self, recorded: &str, label: &str) -> Self {
        check_name(recorded);
        check_name(label);
        assert!(
            !label.contains(LABEL_SEPARATOR),
            "a series label cannot contain `{LABEL_SEPARATOR}`"
        );
        self.series_labels.push((recorded.to_string(), label.to_string()));
        self
    }
    /// The series names are the categories along x; the x values name the series.
    pub fn x_is_series(mut self) -> Self {
        self.x_is_series = true;
        self
    }
    /// The value axis reaches down (or up) to zero.
    pub fn y_from_zero(mut self) -> Self {
        self.y_from_zero = true;
        self
    }

    /// A point as drawn: its series relabelled, then series and x exchanged if asked.
    pub(super) fn as_drawn(&self, p: &Point) -> Point {
        let mut p = p.clone();
        if let Some((_, label)) =
            self.series_labels.iter().find(|(r, _)| *r == p.series)
        {
            p.series = label.clone();
        }
        if self.x_is_series {
            std::mem::swap(&mut p.series, &mut p.x);
        }
        p
    }

    /// The spec a record's metadata holds (what a test compares with the code's).
    pub fn read(meta: &Meta) -> anyhow::Result<Self> {
        Self::from_meta(meta)
    }

    /// The points drawn: those of the series shown (by their names in the data); each is
    /// then drawn as [`Spec::as_drawn`] says.
    pub(super) fn drawn(&self, points: &[Point]) -> Vec<Point> {
        points
            .iter()
            .filter(|p| self.shown.is_empty() || self.shown.contains(&p.series))
            .cloned()
            .collect()
    }

    pub(super) fn add_to(&self, meta: Meta) -> Meta {
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
        if !self.grey.is_empty() {
            meta = meta.with("grey", &join(&self.grey));
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
        if !self.shown.is_empty() {
            meta = meta.with("series_shown", &join(&self.shown));
        }
        if !self.series_labels.is_empty() {
            let v: Vec<String> = self
                .series_labels
                .iter()
                .map(|(r, l)| format!("{r}{LABEL_SEPARATOR}{l}"))
                .collect();
            meta = meta.with("series_labels", &join(&v));
        }
        if self.x_is_series {
            meta = meta.with("x_is_series", "true");
        }
        if self.y_from_zero {
            meta = meta.with("y_from_zero", "true");
        }
        meta
    }

    pub(crate) fn from_meta(meta: &Meta) -> anyhow::Result<Self> {
        let get = |k: &str| {
            meta.get(k).with_context(|| format!("figure metadata lacks `{k}`"))
        };
        let list = |k: &str| -> Vec<String> {
            meta.get(k)
                .map(|v| v.split(SERIES_SEPARATOR).map(str::to_string).collect())
                .unwrap_or_default()
        };
        let flag = |k: &str| -> anyhow::Result<bool> {
            match meta.get(k) {
                None | Some("false") => Ok(false),
                Some("true") => Ok(true),
                Some(o) => bail!("`{k}: {o}`: expected `true` or `false`"),
            }
        };
        let kind = match get("plot")? {
            "line" => Kind::Line,
            "bar" => Kind::Bar,
            "dot" => Kind::Dot,
            other => bail!("unknown plot kind `{other}`"),
        };
        let y2 = match (meta.get("y2_label"), meta.get("y2_scale")) {
            (None, None) => None,
            (Some(l), Some(s)) => {
                let scale =
                    s.parse::<f64>().with_context(|| format!("`y2_scale: {s}`"))?;
                // The right axis shows y × scale: any other factor draws no axis at all (NaN,
                // infinite) or one running the wrong way or collapsed to a point (0 or less).
                if !(scale.is_finite() && scale > 0.0) {
                    bail!("`y2_scale: {s}`: the second axis' factor must be a finite number above 0");
                }
                Some((l.to_string(), scale))
            }
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
            grey: list("grey"),
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
            shown: list("series_shown"),
            // Split at the last ` = `: a recorded name may hold one (`carve-out = table`), a
            // label may not.
            series_labels: list("series_labels")
                .iter()
                .map(|e| {
                    e.rsplit_once(LABEL_SEPARATOR)
                        .map(|(r, l)| (r.trim().to_string(), l.trim().to_string()))
                        .with_context(|| {
                            format!(
                                "series label `{e}`: expected `recorded name = label`"
                            )
                        })
                })
                .collect::<anyhow::Result<_>>()?,
            x_is_series: flag("x_is_series")?,
            y_from_zero: flag("y_from_zero")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            .y2("GFLOP/s", 516.89)
            .series_label("carve-out = table", "whole table fits: window: all of it")
            .x_is_series()
            .y_from_zero()
            .show("m")
            .show("paper");
        let meta = full.add_to(Meta::default());
        assert_eq!(Spec::from_meta(&meta).unwrap(), full);
        assert_eq!(
            meta.get("ref_lines"),
            Some("y = 1: no speedup | x = l2_mib MiB: L2 {}")
        );
        // A factor with no axis to show is not written, so the record stays drawable.
        for factor in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let meta =
                Spec::bar("t", "x", "y").y2("GFLOP/s", factor).add_to(Meta::default());
            assert_eq!(meta.get("y2_scale"), None);
        }
        assert_eq!(meta.get("series_shown"), Some("m | paper"));
        let dot = Spec::dot("t", "x", "y").log_y().y_ticks(Ticks::Dense);
        assert_eq!(Spec::from_meta(&dot.add_to(Meta::default())).unwrap(), dot);
    }

    #[test]
    fn the_series_shown_are_drawn_under_their_names_and_a_missing_one_is_no_error() {
        let points = [
            Point::new("CPU, 16 threads (rayon)", 1, 2.0, 2.0, 2.0),
            Point::new("GPU one block", 1, 1.0, 1.0, 1.0),
            Point::new("GPU tiled", 1, 0.5, 0.5, 0.5),
        ];
        let spec = Spec::line("t", "x", "y")
            .show("CPU, 16 threads (rayon)")
            .show("GPU tiled")
            .show("a program this run skipped")
            .series_label("CPU, 16 threads (rayon)", "CPU");
        let drawn: Vec<(String, f64)> = spec
            .drawn(&points)
            .iter()
            .map(|p| spec.as_drawn(p))
            .map(|p| (p.series, p.y))
            .collect();
        assert_eq!(drawn, [("CPU".to_string(), 2.0), ("GPU tiled".to_string(), 0.5)]);
        assert_eq!(Spec::line("t", "x", "y").drawn(&points), points);
    }
}
