//! Figures: SVG drawn from a record alone.
//!
//! A figure's CSV holds its provenance, how to draw it (`plot`, `title`, `x_label`, `y_label`,
//! `x_log`, `y_log`) and its points (`series,x,y,y_min,y_max`). [`draw_svg`] needs nothing else,
//! so any figure can be redrawn without a GPU, and a test can check that every committed SVG is
//! exactly what its CSV draws.
//!
//! Figures are drawn on their own white card with dark ink, so they read the same in mdBook's
//! light and dark themes; the footer names the GPU and the data file.

use std::path::Path;

use anyhow::{bail, Context};
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

/// Line chart (numeric x) or grouped bar chart (categorical x).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Line,
    Bar,
}

/// How to draw a figure; stored in the CSV's metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub kind: Kind,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_log: bool,
    pub y_log: bool,
    /// Series of a line chart drawn as markers alone, unjoined: for points whose x order means
    /// nothing (one point per case, a scatter). Stored only when not empty, so the records of
    /// figures without such series are unchanged.
    pub markers_only: Vec<String>,
}

/// Separates the names in the `markers_only` metadata value.
const SERIES_SEPARATOR: &str = " | ";

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
        }
    }
    pub fn bar(title: &str, x_label: &str, y_label: &str) -> Self {
        Self { kind: Kind::Bar, ..Self::line(title, x_label, y_label) }
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
        assert!(
            !series.contains(SERIES_SEPARATOR),
            "a series drawn as markers only cannot contain `{SERIES_SEPARATOR}`"
        );
        self.markers_only.push(series.to_string());
        self
    }

    fn add_to(&self, meta: Meta) -> Meta {
        let meta = meta
            .with("plot", if self.kind == Kind::Line { "line" } else { "bar" })
            .with("title", &self.title)
            .with("x_label", &self.x_label)
            .with("y_label", &self.y_label)
            .with("x_log", &self.x_log.to_string())
            .with("y_log", &self.y_log.to_string());
        if self.markers_only.is_empty() {
            meta
        } else {
            meta.with("markers_only", &self.markers_only.join(SERIES_SEPARATOR))
        }
    }

    fn from_meta(meta: &Meta) -> anyhow::Result<Self> {
        let get = |k: &str| {
            meta.get(k).with_context(|| format!("figure metadata lacks `{k}`"))
        };
        let kind = match get("plot")? {
            "line" => Kind::Line,
            "bar" => Kind::Bar,
            other => bail!("unknown plot kind `{other}`"),
        };
        Ok(Self {
            kind,
            title: get("title")?.to_string(),
            x_label: get("x_label")?.to_string(),
            y_label: get("y_label")?.to_string(),
            x_log: get("x_log")? == "true",
            y_log: get("y_log")? == "true",
            markers_only: meta
                .get("markers_only")
                .map(|v| v.split(SERIES_SEPARATOR).map(str::to_string).collect())
                .unwrap_or_default(),
        })
    }
}

/// Okabe–Ito colours: distinguishable with the common colour-vision deficiencies.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];
const INK: RGBColor = RGBColor(30, 30, 30);
const SIZE: (u32, u32) = (860, 520);

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

/// Tick label of a log-axis position `v` (the axis runs in log10 units).
fn log_label(v: f64) -> String {
    let value = 10f64.powf(v);
    if (v - v.round()).abs() > 1e-6 {
        return String::new(); // label only the decades; the grid shows the rest
    }
    match value {
        x if x >= 1e4 || x < 1e-3 => format!("1e{}", v.round() as i32),
        x if x >= 1.0 => format!("{}", x.round() as i64),
        x => format!("{}", (x * 1e3).round() / 1e3),
    }
}

fn linear_label(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && (a >= 1e5 || a < 1e-3) {
        format!("{v:.1e}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Axis range (in plotted units) covering `values`, padded; log axes plot log10 of the value.
fn axis_range(
    values: impl Iterator<Item = f64>,
    log: bool,
    from_zero: bool,
) -> anyhow::Result<(f64, f64)> {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for v in values {
        if log && v <= 0.0 {
            bail!("a log axis cannot show {v}");
        }
        let p = if log { v.log10() } else { v };
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if !lo.is_finite() || !hi.is_finite() {
        bail!("no finite values to plot");
    }
    if log {
        return Ok((lo.floor().min(lo - 0.05), hi.ceil().max(hi + 0.05)));
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    let pad = if hi > lo { 0.06 * (hi - lo) } else { hi.abs().max(1.0) * 0.1 };
    Ok((if from_zero && lo >= 0.0 { 0.0 } else { lo - pad }, hi + pad))
}

/// How many plotted positions a legend box in one corner would cover. The box is taken as
/// 40% of the width and a band of height growing with the number of series; bars count as
/// covering everything below their top.
fn legend_cost(
    points: &[(f64, f64)],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
    series: usize,
    right: bool,
    upper: bool,
) -> usize {
    let width = 0.4;
    let height = (0.06 + 0.055 * series as f64).min(0.6);
    points
        .iter()
        .filter(|(x, y)| {
            let fx = (x - x0) / (x1 - x0);
            let fy = (y - y0) / (y1 - y0);
            let in_x = if right { fx >= 1.0 - width } else { fx <= width };
            let in_y = if upper { fy >= 1.0 - height } else { fy <= height };
            in_x && in_y
        })
        .count()
}

/// The corner of a line chart whose legend would hide the fewest points (ties: upper left,
/// upper right, lower right, lower left).
fn emptiest_corner(
    points: &[(f64, f64)],
    xr: (f64, f64),
    yr: (f64, f64),
    series: usize,
) -> SeriesLabelPosition {
    let candidates = [
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let mut best = (usize::MAX, SeriesLabelPosition::UpperLeft);
    for (pos, right, upper) in candidates {
        let cost = legend_cost(points, xr, yr, series, right, upper);
        if cost < best.0 {
            best = (cost, pos);
        }
    }
    best.1
}

/// Draws the figure described by `record` as SVG text. `data_name` is shown in the footer.
pub fn draw_svg(record: &Record, data_name: &str) -> anyhow::Result<String> {
    let spec = Spec::from_meta(&record.meta)?;
    let points = points_of(record)?;
    if points.is_empty() {
        bail!("a figure needs at least one point");
    }
    let mut series: Vec<String> = Vec::new();
    for p in &points {
        if !series.contains(&p.series) {
            series.push(p.series.clone());
        }
    }
    let footer = format!(
        "{} · driver {} · cudarc {} · commit {} · {} · data: figures/data/{}",
        record.meta.get("gpu").unwrap_or("?"),
        record.meta.get("driver").unwrap_or("?"),
        record.meta.get("cudarc").unwrap_or("?"),
        record.meta.get("commit").unwrap_or("?"),
        record.meta.get("date_utc").unwrap_or("?"),
        data_name
    );

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let (main, foot) = root.split_vertically(SIZE.1 - 22);
        foot.draw(&Text::new(
            footer,
            (10, 4),
            ("sans-serif", 11).into_font().color(&RGBColor(90, 90, 90)),
        ))?;
        let ty = |v: f64| if spec.y_log { v.log10() } else { v };
        let (y0, y1) = axis_range(
            points.iter().flat_map(|p| [p.y, p.y_min, p.y_max]),
            spec.y_log,
            spec.kind == Kind::Bar,
        )?;
        let font = |s: u32| ("sans-serif", s).into_font().color(&INK);

        match spec.kind {
            Kind::Line => {
                let xs: Vec<f64> = points
                    .iter()
                    .map(|p| {
                        p.x.parse::<f64>()
                            .with_context(|| format!("x `{}` is not a number", p.x))
                    })
                    .collect::<anyhow::Result<_>>()?;
                let tx = |v: f64| if spec.x_log { v.log10() } else { v };
                let (x0, x1) = axis_range(xs.iter().copied(), spec.x_log, false)?;
                let mut chart = ChartBuilder::on(&main)
                    .caption(&spec.title, font(20))
                    .margin(12)
                    .x_label_area_size(44)
                    .y_label_area_size(72)
                    .build_cartesian_2d(x0..x1, y0..y1)?;
                let (xl, yl) = (spec.x_log, spec.y_log);
                chart
                    .configure_mesh()
                    .x_desc(&spec.x_label)
                    .y_desc(&spec.y_label)
                    .x_labels(if xl {
                        ((x1 - x0).round() as usize + 1) * 4
                    } else {
                        10
                    })
                    .y_labels(if yl {
                        ((y1 - y0).round() as usize + 1) * 4
                    } else {
                        10
                    })
                    .x_label_formatter(&|v| {
                        if xl {
                            log_label(*v)
                        } else {
                            linear_label(*v)
                        }
                    })
                    .y_label_formatter(&|v| {
                        if yl {
                            log_label(*v)
                        } else {
                            linear_label(*v)
                        }
                    })
                    .axis_desc_style(font(15))
                    .label_style(font(13))
                    .light_line_style(RGBColor(235, 235, 235))
                    .bold_line_style(RGBColor(205, 205, 205))
                    .axis_style(INK)
                    .draw()?;
                for (si, name) in series.iter().enumerate() {
                    let color = PALETTE[si % PALETTE.len()];
                    let mine: Vec<(f64, &Point)> = xs
                        .iter()
                        .zip(&points)
                        .filter(|(_, p)| &p.series == name)
                        .map(|(x, p)| (tx(*x), p))
                        .collect();
                    if spec.markers_only.contains(name) {
                        chart
                            .draw_series(mine.iter().map(|(x, p)| {
                                Circle::new((*x, ty(p.y)), 4, color.filled())
                            }))?
                            .label(name.as_str())
                            .legend(move |(x, y)| {
                                Circle::new((x + 9, y), 4, color.filled())
                            });
                    } else {
                        chart
                            .draw_series(LineSeries::new(
                                mine.iter().map(|(x, p)| (*x, ty(p.y))),
                                color.stroke_width(2),
                            ))?
                            .label(name.as_str())
                            .legend(move |(x, y)| {
                                PathElement::new(
                                    vec![(x, y), (x + 18, y)],
                                    color.stroke_width(3),
                                )
                            });
                        chart.draw_series(mine.iter().map(|(x, p)| {
                            Circle::new((*x, ty(p.y)), 3, color.filled())
                        }))?;
                    }
                    chart.draw_series(
                        mine.iter().filter(|(_, p)| p.y_max > p.y_min).map(|(x, p)| {
                            ErrorBar::new_vertical(
                                *x,
                                ty(p.y_min),
                                ty(p.y),
                                ty(p.y_max),
                                color.stroke_width(1),
                                6,
                            )
                        }),
                    )?;
                }
                let plotted: Vec<(f64, f64)> = xs
                    .iter()
                    .zip(&points)
                    .flat_map(|(x, p)| {
                        [
                            (tx(*x), ty(p.y)),
                            (tx(*x), ty(p.y_max)),
                            (tx(*x), ty(p.y_min)),
                        ]
                    })
                    .collect();
                let corner =
                    emptiest_corner(&plotted, (x0, x1), (y0, y1), series.len());
                chart
                    .configure_series_labels()
                    .position(corner)
                    .background_style(WHITE.mix(0.9))
                    .border_style(RGBColor(180, 180, 180))
                    .label_font(font(13))
                    .draw()?;
            }
            Kind::Bar => {
                let mut categories: Vec<String> = Vec::new();
                for p in &points {
                    if !categories.contains(&p.x) {
                        categories.push(p.x.clone());
                    }
                }
                let n_cat = categories.len() as f64;
                let cats = categories.clone();
                let mut chart = ChartBuilder::on(&main)
                    .caption(&spec.title, font(20))
                    .margin(12)
                    .x_label_area_size(44)
                    .y_label_area_size(72)
                    .build_cartesian_2d(-0.5..n_cat - 0.5, y0..y1)?;
                let yl = spec.y_log;
                chart
                    .configure_mesh()
                    .disable_x_mesh()
                    .x_desc(&spec.x_label)
                    .y_desc(&spec.y_label)
                    .x_labels(categories.len() * 2 + 1)
                    .x_label_formatter(&|v| {
                        let i = v.round();
                        if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len()
                        {
                            cats[i as usize].clone()
                        } else {
                            String::new()
                        }
                    })
                    .y_labels(if yl {
                        ((y1 - y0).round() as usize + 1) * 4
                    } else {
                        10
                    })
                    .y_label_formatter(&|v| {
                        if yl {
                            log_label(*v)
                        } else {
                            linear_label(*v)
                        }
                    })
                    .axis_desc_style(font(15))
                    .label_style(font(13))
                    .light_line_style(RGBColor(235, 235, 235))
                    .bold_line_style(RGBColor(205, 205, 205))
                    .axis_style(INK)
                    .draw()?;
                let width = 0.8 / series.len() as f64;
                for (si, name) in series.iter().enumerate() {
                    let color = PALETTE[si % PALETTE.len()];
                    let mine: Vec<(f64, &Point)> = points
                        .iter()
                        .filter(|p| &p.series == name)
                        .map(|p| {
                            (
                                categories.iter().position(|c| c == &p.x).unwrap()
                                    as f64
                                    - 0.4
                                    + width * (si as f64 + 0.5),
                                p,
                            )
                        })
                        .collect();
                    chart
                        .draw_series(mine.iter().map(|(x, p)| {
                            Rectangle::new(
                                [(x - width * 0.45, y0), (x + width * 0.45, ty(p.y))],
                                color.filled(),
                            )
                        }))?
                        .label(name.as_str())
                        .legend(move |(x, y)| {
                            Rectangle::new(
                                [(x, y - 5), (x + 14, y + 5)],
                                color.filled(),
                            )
                        });
                    chart.draw_series(
                        mine.iter().filter(|(_, p)| p.y_max > p.y_min).map(|(x, p)| {
                            ErrorBar::new_vertical(
                                *x,
                                ty(p.y_min),
                                ty(p.y),
                                ty(p.y_max),
                                INK.stroke_width(1),
                                6,
                            )
                        }),
                    )?;
                    let value_font = ("sans-serif", 12)
                        .into_font()
                        .color(&INK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom));
                    chart.draw_series(mine.iter().map(|(x, p)| {
                        Text::new(
                            linear_label(p.y),
                            (*x, ty(p.y_max.max(p.y))),
                            value_font.clone(),
                        )
                    }))?;
                }
                if series.len() > 1 {
                    // Bars rise from the bottom, so only the upper corners are candidates.
                    let tops: Vec<(f64, f64)> = points
                        .iter()
                        .map(|p| {
                            (
                                categories.iter().position(|c| c == &p.x).unwrap()
                                    as f64,
                                ty(p.y_max.max(p.y)),
                            )
                        })
                        .flat_map(|(x, y)| [(x - 0.4, y), (x, y), (x + 0.4, y)])
                        .collect();
                    let right = legend_cost(
                        &tops,
                        (-0.5, n_cat - 0.5),
                        (y0, y1),
                        series.len(),
                        true,
                        true,
                    );
                    let left = legend_cost(
                        &tops,
                        (-0.5, n_cat - 0.5),
                        (y0, y1),
                        series.len(),
                        false,
                        true,
                    );
                    chart
                        .configure_series_labels()
                        .position(if left < right {
                            SeriesLabelPosition::UpperLeft
                        } else {
                            SeriesLabelPosition::UpperRight
                        })
                        .background_style(WHITE.mix(0.9))
                        .border_style(RGBColor(180, 180, 180))
                        .label_font(font(13))
                        .draw()?;
                }
            }
        }
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(spec: &Spec, points: &[Point]) -> Record {
        let meta =
            spec.add_to(Meta::default().with("gpu", "Test GPU").with("commit", "abc"));
        record::parse_csv(&record::to_csv_string(&meta, points).unwrap()).unwrap()
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
        let a = draw_svg(&record(&spec, &pts), "t.csv").unwrap();
        let b = draw_svg(&record(&spec, &pts), "t.csv").unwrap();
        assert_eq!(a, b, "drawing must be deterministic");
        assert!(
            a.starts_with("<svg")
                && a.contains("Copy bandwidth")
                && a.contains("memcpy")
                && a.contains("Test GPU")
        );
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
        let polylines = |svg: &str| svg.matches("<polyline").count();
        let (with_lines, with_markers) = (
            draw_svg(&record(&joined, &pts), "t.csv").unwrap(),
            draw_svg(&rec, "t.csv").unwrap(),
        );
        // Each joined series draws its line and its legend swatch; a markers-only series neither.
        assert_eq!(
            polylines(&with_lines),
            polylines(&with_markers) + 2,
            "{with_markers}"
        );
    }

    #[test]
    fn bar_figure_with_log_y() {
        let spec = Spec::bar("Launch cost", "how", "µs").log_y();
        let pts = vec![
            Point::new("per launch", "stream", 2.5, 2.4, 3.0),
            Point::new("per launch", "graph node", 0.8, 0.7, 0.9),
        ];
        let svg = draw_svg(&record(&spec, &pts), "t.csv").unwrap();
        assert!(svg.contains("graph node") && svg.contains("2.5"));
    }

    #[test]
    fn log_axis_refuses_non_positive_values() {
        let spec = Spec::line("t", "x", "y").log_y();
        let pts = vec![Point::new("s", 1, 0.0, 0.0, 0.0)];
        assert!(draw_svg(&record(&spec, &pts), "t.csv").is_err());
    }

    #[test]
    fn decade_labels() {
        assert_eq!(log_label(0.0), "1");
        assert_eq!(log_label(3.0), "1000");
        assert_eq!(log_label(6.0), "1e6");
        assert_eq!(log_label(4.0), "1e4");
        assert_eq!(log_label(-1.0), "0.1");
        assert_eq!(log_label(0.5), "");
        assert_eq!(linear_label(2.50), "2.5");
        assert_eq!(linear_label(0.0), "0");
    }
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
                Ok(committed) if committed == record::markdown_table(&rec, &format!("figures/data/{name}")) => {}
                Ok(_) => problems.push(format!("{stem}.md differs from the table {name} renders (stale or hand-edited)")),
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
                record::markdown_table(&rec, &format!("figures/data/{stem}.csv")),
            )?;
        }
        count += 1;
    }
    Ok(count)
}
