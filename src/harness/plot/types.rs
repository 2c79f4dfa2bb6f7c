//! The parts of a figure's description: a plotted [`Point`], the chart [`Kind`], what names a
//! panel ([`PanelBy`]), reference lines ([`RefLine`] on an [`Axis`]) and tick positions
//! ([`Ticks`]), each with the text it is stored as in a CSV's metadata.

use anyhow::{bail, Context};

use crate::harness::record::Meta;
use crate::harness::Stats;

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
    pub fn ms(series: &str, x: impl ToString, s: &Stats) -> Self {
        Self::new(series, x, s.median_ms, s.min_ms, s.max_ms)
    }

    /// A ratio to a time: `ms` over the median (a speedup over a time of `ms`, or the share
    /// of a floor of `ms` reached), with the slowest repetition as the low end and the fastest
    /// as the high end.
    pub fn over(series: &str, x: impl ToString, ms: f64, s: &Stats) -> Self {
        Self::new(series, x, ms / s.median_ms, ms / s.max_ms, ms / s.min_ms)
    }

    /// A rate (work per second, divided by `unit`, e.g. 1e9 for GB/s): the median, with the
    /// slowest repetition as the low end and the fastest as the high end.
    pub fn rate(
        series: &str,
        x: impl ToString,
        s: &Stats,
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
    /// The series name up to its first `: `; the rest names the series (a name without one
    /// is a panel of its own, named as the series).
    SeriesBeforeColon,
}

impl PanelBy {
    const ALL: [(PanelBy, &'static str); 6] = [
        (PanelBy::XFirstWord, "x first word"),
        (PanelBy::XLastWord, "x last word"),
        (PanelBy::SeriesFirstWord, "series first word"),
        (PanelBy::SeriesLastWord, "series last word"),
        (PanelBy::Series, "series"),
        (PanelBy::SeriesBeforeColon, "series before colon"),
    ];

    pub(super) fn text(self) -> &'static str {
        Self::ALL.iter().find(|(p, _)| *p == self).map(|(_, t)| *t).unwrap_or("")
    }

    pub(super) fn parse(v: &str) -> anyhow::Result<Self> {
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
    pub(super) fn split(self, series: &str, x: &str) -> (String, String, String) {
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
            PanelBy::SeriesBeforeColon => match series.split_once(": ") {
                Some((p, s)) => (p.trim().into(), s.trim().into(), x.into()),
                None => (series.trim().into(), series.trim().into(), x.into()),
            },
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
    pub(super) fn text(&self) -> String {
        let axis = if self.axis == Axis::X { "x" } else { "y" };
        format!("{axis} = {}: {}", self.value, self.label)
    }

    pub(super) fn parse(v: &str) -> anyhow::Result<Self> {
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
    pub(super) fn resolve(&self, meta: &Meta) -> anyhow::Result<f64> {
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
        let value = number * unit;
        anyhow::ensure!(
            value.is_finite(),
            "`{}`: the value {value} is not a finite number",
            self.text()
        );
        Ok(value)
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
    pub(super) fn text(&self) -> String {
        match self {
            Ticks::Auto => "auto".into(),
            Ticks::Dense => "dense".into(),
            Ticks::Data => "data".into(),
            Ticks::List(v) => {
                v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
            }
        }
    }

    pub(super) fn parse(v: &str) -> anyhow::Result<Self> {
        Ok(match v.trim() {
            "auto" => Ticks::Auto,
            "dense" => Ticks::Dense,
            "data" => Ticks::Data,
            list => Ticks::List(
                list.split_whitespace()
                    .map(|n| match n.parse::<f64>() {
                        Ok(v) if v.is_finite() => Ok(v),
                        Ok(_) => bail!("tick `{n}` is not a finite number"),
                        Err(e) => Err(e).with_context(|| format!("tick `{n}`")),
                    })
                    .collect::<anyhow::Result<_>>()?,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
