//! A figure's data as the layout sees it: the points split into panels and series, each
//! series' style (colour, marker, dashed, markers only), the resolved reference lines, legend
//! entries and hover titles.

use anyhow::bail;
use plotters::style::RGBColor;

use super::numbers::{bytes_label, hover_number, value_label};
use super::scene::{Marker, MARKERS};
use super::style::{GREY, PALETTE};
use super::types::{Axis, Kind, Point, RefLine};
use super::Spec;
use crate::harness::record::Meta;

pub(super) struct Panel {
    pub(super) name: Option<String>,
    /// (series index, category or x text, point)
    pub(super) points: Vec<(usize, String, Point)>,
}

impl Panel {
    /// The points of one category row: for each series of `present` (in order, with its
    /// position `k` there) that has a point at `cat`, `(k, series index, point)`.
    pub(super) fn row<'p>(
        &'p self,
        present: &'p [usize],
        cat: &'p str,
    ) -> impl Iterator<Item = (usize, usize, &'p Point)> + 'p {
        present.iter().enumerate().filter_map(move |(k, &si)| {
            self.points
                .iter()
                .find(|(s, x, _)| *s == si && x == cat)
                .map(|(_, _, p)| (k, si, p))
        })
    }
}

/// One entry of a legend.
#[derive(Debug, Clone)]
pub(super) enum Swatch {
    Line { color: RGBColor, marker: Marker, dashed: bool },
    Markers { color: RGBColor, marker: Marker, hollow: bool },
    Bar { color: RGBColor, outlined: bool },
    Guide,
}

pub(super) struct Style {
    pub(super) color: RGBColor,
    pub(super) marker: Marker,
    pub(super) dashed: bool,
    pub(super) markers_only: bool,
    /// The palette's second round: a bar of this series is drawn pale with an outline in its
    /// colour, so that it is not mistaken for the series eight places before it.
    pub(super) outlined: bool,
}

pub(super) struct Figure<'a> {
    pub(super) spec: &'a Spec,
    pub(super) kind: Kind,
    pub(super) meta: &'a Meta,
    /// Series names as shown (panel part removed).
    pub(super) series: Vec<String>,
    pub(super) styles: Vec<Style>,
    pub(super) panels: Vec<Panel>,
    pub(super) refs: Vec<(RefLine, f64)>,
}

impl<'a> Figure<'a> {
    pub(super) fn new(
        spec: &'a Spec,
        meta: &'a Meta,
        points: &[Point],
    ) -> anyhow::Result<Self> {
        let kind =
            if spec.kind == Kind::Bar && spec.y_log { Kind::Dot } else { spec.kind };
        // Each point as drawn: its series relabelled, then series and x exchanged where the
        // spec says so; `raw` keeps the recorded series name, which `dashed` and
        // `markers_only` may name.
        let raw: Vec<&str> = points.iter().map(|p| p.series.as_str()).collect();
        let points: Vec<Point> = points.iter().map(|p| spec.as_drawn(p)).collect();
        let points = points.as_slice();
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
                let first = points.iter().position(|p| {
                    spec.panels.map_or(p.series == *name, |by| {
                        by.split(&p.series, &p.x).1 == *name
                    })
                });
                let original =
                    first.map(|k| points[k].series.clone()).unwrap_or_default();
                let recorded = first.map(|k| raw[k]).unwrap_or_default();
                let listed = |l: &[String]| {
                    l.contains(name)
                        || l.contains(&original)
                        || l.iter().any(|n| n == recorded)
                };
                Style {
                    color: if listed(&spec.grey) {
                        GREY
                    } else {
                        PALETTE[ci % PALETTE.len()]
                    },
                    marker: MARKERS[i % MARKERS.len()],
                    dashed: listed(&spec.dashed),
                    markers_only: listed(&spec.markers_only),
                    outlined: (ci / PALETTE.len()) % 2 == 1,
                }
            })
            .collect();
        let refs = spec
            .ref_lines
            .iter()
            .map(|r| {
                // Bars and dots stand on categories: only their value axis has a place for
                // a number.
                if r.axis == Axis::X && spec.kind != Kind::Line {
                    bail!(
                        "reference line `{}`: a bar or dot chart's x axis holds categories, \
                         so only `y = …` lines can be drawn",
                        r.text()
                    );
                }
                Ok((r.clone(), r.resolve(meta)?))
            })
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { spec, kind, meta, series, styles, panels, refs })
    }

    pub(super) fn legend_entries(&self, with_refs: bool) -> Vec<(Swatch, String)> {
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
                    Kind::Bar => Swatch::Bar { color: st.color, outlined: st.outlined },
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

    pub(super) fn ref_label(&self, r: &RefLine, v: f64) -> String {
        let shown = if r.axis == Axis::X && self.spec.x_bytes {
            bytes_label(v)
        } else {
            value_label(v)
        };
        r.label.replace("{}", &shown)
    }

    pub(super) fn hover(&self, si: usize, x_text: &str, p: &Point) -> String {
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

    pub(super) fn x_text(&self, x: &str) -> String {
        match x.parse::<f64>() {
            Ok(v) if self.spec.x_bytes => bytes_label(v),
            Ok(v) => hover_number(v),
            Err(_) => x.to_string(),
        }
    }
}

/// The series present in a panel, in the figure's order.
pub(super) fn series_in(p: &Panel) -> Vec<usize> {
    let mut s: Vec<usize> = p.points.iter().map(|(i, _, _)| *i).collect();
    s.sort_unstable();
    s.dedup();
    s
}

#[cfg(test)]
mod tests {
    use super::super::testing::{clean, draw};
    use super::super::types::PanelBy;
    use super::*;

    fn figure(spec: &Spec, points: &[Point]) -> (Vec<String>, Vec<Option<String>>) {
        let meta = Meta::default();
        let f = Figure::new(spec, &meta, points).unwrap();
        (f.series, f.panels.into_iter().map(|p| p.name).collect())
    }

    #[test]
    fn labels_apply_before_panels_split_names_and_recorded_names_still_style() {
        let pts = vec![
            Point::new("fused: carve-out = table", 8, 1.1, 1.0, 1.2),
            Point::new("fused: largest", 8, 0.5, 0.4, 0.6),
            Point::new("flush: carve-out = table", 8, 1.2, 1.1, 1.3),
            Point::new("no colon", 8, 1.0, 1.0, 1.0),
        ];
        let spec = Spec::line("t", "x", "y")
            .panels(PanelBy::SeriesBeforeColon, 1)
            .series_label(
                "fused: carve-out = table",
                "past a stream: sized to the table",
            )
            .series_label(
                "flush: carve-out = table",
                "after a flush: sized to the table",
            )
            .dashed("fused: largest");
        let (series, panels) = figure(&spec, &pts);
        assert_eq!(series, ["sized to the table", "largest", "no colon"]);
        let names: Vec<&str> = panels.iter().flatten().map(String::as_str).collect();
        assert_eq!(names, ["past a stream", "fused", "after a flush", "no colon"]);
        let meta = Meta::default();
        let f = Figure::new(&spec, &meta, &pts).unwrap();
        assert!(f.styles[1].dashed && !f.styles[0].dashed);
        // The labels survive the CSV: the recorded names keep their ` = `.
        clean(&draw(&spec, &pts));
    }

    #[test]
    fn series_along_x_makes_the_variants_categories_and_the_kernels_series() {
        let pts = vec![
            Point::new("plain", "copy", 0.79, 0.78, 0.80),
            Point::new("__ldg", "copy", 0.79, 0.78, 0.80),
            Point::new("plain", "gather", 0.82, 0.81, 0.83),
            Point::new("const", "gather", 0.82, 0.81, 0.83),
        ];
        let spec = Spec::bar("t", "qualifiers", "fraction").x_is_series();
        let (series, panels) = figure(&spec, &pts);
        assert_eq!(series, ["copy", "gather"]);
        assert_eq!(panels, [None]);
        let meta = Meta::default();
        let f = Figure::new(&spec, &meta, &pts).unwrap();
        let cats: Vec<&str> =
            f.panels[0].points.iter().map(|(_, c, _)| c.as_str()).collect();
        assert_eq!(cats, ["plain", "__ldg", "plain", "const"]);
        clean(&draw(&spec, &pts));
    }

    #[test]
    fn a_line_chart_from_zero_puts_zero_on_its_axis() {
        // x from 1, so a text "0" can only be a value tick.
        let pts: Vec<Point> = (1..9)
            .map(|k| Point::new("measured", k, 0.8 + 0.01 * k as f64, 0.8, 0.9))
            .collect();
        let plain = draw(&Spec::line("t", "k", "fraction"), &pts);
        let zero = draw(&Spec::line("t", "k", "fraction").y_from_zero(), &pts);
        let tick_zero = |svg: &str| {
            super::super::read_svg_layout(svg).texts.iter().any(|t| t.text == "0")
        };
        assert!(!tick_zero(&plain) && tick_zero(&zero));
        clean(&zero);
    }
}
