//! The ceilings chapter's diagram: the roofline explained before the measured rooflines. Log
//! intensity across, log FLOP/s up; device memory's roof rising as bandwidth × intensity
//! until it meets the FP32 peak at the ridge (peak / bandwidth), flat after it; and two
//! kernels of the book's kinds placed where the roof caps them: a matrix-vector product,
//! left of the ridge, limited by bytes, and a matrix multiply, right of it, limited by FLOPs.
//!
//! Like the memory hierarchy it is composed from records, so that its numbers are this GPU's:
//! the FP32 peak and the best copy from `ceilings-peaks` (the roofs every measured roofline
//! draws) and the read-only kernel's rate from `ceilings-summary`.

use std::path::Path;

use anyhow::Context;
use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::harness::plot::{Fill, Ink, Shape};
use crate::harness::record::Meta;
use crate::harness::roof::{number, read, read_roof};

pub const STEM: &str = "ceilings-diagram-roofline";

/// The records the diagram is composed from.
pub const COMPOSED_FROM: &[&str] = &["ceilings-peaks", "ceilings-summary"];

/// The ceilings the diagram draws, in GFLOP/s and GB/s, as the records hold them.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ceilings {
    pub fp32_gflops: f64,
    /// Device memory's best copy (read + write): the memory roof of the measured rooflines.
    pub copy_gbps: f64,
    /// The read-only kernel's rate: the roof of a kernel that only reads.
    pub read_gbps: f64,
}

/// The row of `ceilings-summary` that holds the read-only kernel's rate.
const READ_ROW: &str = "device read, read-only kernel";

impl Ceilings {
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        let roof = read_roof(dir)?;
        let summary = read(dir, "ceilings-summary")?;
        let row = summary
            .rows
            .iter()
            .find(|r| r[0] == READ_ROW)
            .with_context(|| format!("ceilings-summary has no row `{READ_ROW}`"))?;
        Ok(Self {
            fp32_gflops: roof.fp32_gflops,
            copy_gbps: roof.dram_gbps,
            read_gbps: number(&summary, row, "median")?,
        })
    }

    /// The ridge: the intensity, in FLOP/byte, at which the memory roof meets the peak.
    pub fn ridge(&self) -> f64 {
        self.fp32_gflops / self.copy_gbps
    }

    /// What the roof allows at `intensity`.
    pub fn attainable(&self, intensity: f64) -> f64 {
        self.fp32_gflops.min(self.copy_gbps * intensity)
    }
}

/// A kernel placed on the roof by its intensity alone.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Example {
    pub what: &'static str,
    pub intensity: f64,
}

/// The side of the book's matrix multiply (chapter 4 measures 4096 × 4096 × 4096).
const MATMUL_N: f64 = 4096.0;

/// The two kernels placed on the roof: a float matrix-vector product (ATAX's kind) does a
/// multiply and an add for each 4-byte matrix element it reads; a float matrix multiply of
/// side n does 2 n³ FLOPs over three matrices of 4 n² bytes each, read or written once.
pub(super) fn examples() -> [Example; 2] {
    [
        Example { what: "matrix-vector product", intensity: 2.0 / 4.0 },
        Example {
            what: "4096³ matrix multiply",
            intensity: 2.0 * MATMUL_N.powi(3) / (3.0 * 4.0 * MATMUL_N.powi(2)),
        },
    ]
}

/// The axes: intensity from 0.1 to 1000 FLOP/byte, rate from 100 to 100 000 GFLOP/s.
const X_DECADES: (i32, i32) = (-1, 3);
const Y_DECADES: (i32, i32) = (2, 5);
/// Units per decade across and up.
const DECADE_W: f64 = 4.5;
const DECADE_H: f64 = 3.0;

/// The diagram's x of `intensity`.
pub(super) fn x_of(intensity: f64) -> f64 {
    (intensity.log10() - X_DECADES.0 as f64) * DECADE_W
}

/// The intensity at the diagram's x.
pub(super) fn intensity_at(x: f64) -> f64 {
    10f64.powf(x / DECADE_W + X_DECADES.0 as f64)
}

fn plot_h() -> f64 {
    (Y_DECADES.1 - Y_DECADES.0) as f64 * DECADE_H
}

fn plot_w() -> f64 {
    (X_DECADES.1 - X_DECADES.0) as f64 * DECADE_W
}

/// The diagram's y (growing downwards) of `gflops`.
pub(super) fn y_of(gflops: f64) -> f64 {
    plot_h() - (gflops.log10() - Y_DECADES.0 as f64) * DECADE_H
}

/// A decade's tick label: 0.1, 1, 10, ..., 100 000.
fn decade(p: i32) -> String {
    if p < 0 {
        format!("{}", 10f64.powi(p))
    } else {
        let digits = format!("{}", 10u64.pow(p as u32));
        if digits.len() > 4 {
            let (a, b) = digits.split_at(digits.len() - 3);
            format!("{a} {b}")
        } else {
            digits
        }
    }
}

/// An intensity as drawn: a tenth below 10 FLOP/byte, whole ones above.
fn intensity(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A rate as drawn: whole units, as the records give them.
fn whole(v: f64) -> String {
    format!("{v:.0}")
}

/// The provenance of the diagram: the device of the ceilings' run, this program's build, and
/// the records it read with their commit.
fn provenance(dir: &Path) -> anyhow::Result<Meta> {
    let peaks = read(dir, "ceilings-peaks")?;
    let mut meta = Meta::default();
    for key in ["gpu", "compute_capability", "sms", "l2_mib", "driver", "cuda"] {
        if let Some(v) = peaks.meta.get(key) {
            meta = meta.with(key, v);
        }
    }
    Ok(meta
        .with("cudarc", env!("CMBOOK_CUDARC_VERSION"))
        .with("commit", env!("CMBOOK_GIT_COMMIT"))
        .with("date_utc", &chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .with("composed_from", &COMPOSED_FROM.join(", "))
        .with("ceilings_commit", peaks.meta.get("commit").unwrap_or("?")))
}

/// The diagram, composed from the records of `dir`.
pub fn compose(dir: &Path) -> anyhow::Result<Diagram> {
    let c = Ceilings::read(dir)?;
    Ok(Diagram { provenance: Some(provenance(dir)?), ..draw(&c) })
}

/// The axes with their decades, the two roofs, the ridge, and the two kernels with the
/// arrows that say what limits each.
pub(super) fn draw(c: &Ceilings) -> Diagram {
    let panel = "";
    let (w, h) = (plot_w(), plot_h());
    let mut shapes = Vec::new();
    // Axes, a tick and its value at every decade.
    shapes.push(Shape::line(panel, (0.0, h), (w, h), Ink::Dark));
    shapes.push(Shape::line(panel, (0.0, 0.0), (0.0, h), Ink::Dark));
    for p in X_DECADES.0..=X_DECADES.1 {
        let x = x_of(10f64.powi(p));
        shapes.push(Shape::line(panel, (x, h), (x, h + 0.15), Ink::Dark));
        shapes.push(Shape::text(panel, x, h + 0.5, HPos::Center, &decade(p)));
    }
    shapes.push(Shape::text(
        panel,
        w / 2.0,
        h + 1.1,
        HPos::Center,
        "arithmetic intensity: FLOPs per byte moved (log scale)",
    ));
    for p in Y_DECADES.0..=Y_DECADES.1 {
        let y = y_of(10f64.powi(p));
        shapes.push(Shape::line(panel, (-0.15, y), (0.0, y), Ink::Dark));
        shapes.push(Shape::text(panel, -0.3, y, HPos::Right, &decade(p)));
    }
    shapes.push(Shape::text(panel, 0.3, -0.2, HPos::Left, "GFLOP/s (log scale)"));
    // The memory roof from the left edge to the ridge, the compute roof from there on.
    let ridge = c.ridge();
    let x0 = intensity_at(0.0);
    let (rx, ry) = (x_of(ridge), y_of(c.fp32_gflops));
    shapes.push(Shape::line(
        panel,
        (0.0, y_of(c.copy_gbps * x0)),
        (rx, ry),
        Ink::Colour(0),
    ));
    shapes.push(Shape::line(panel, (rx, ry), (w, ry), Ink::Colour(1)));
    // Top left, above the rising roof.
    let (label_x, label_y) = (0.4, 1.5);
    shapes.push(Shape::text(
        panel,
        label_x,
        label_y,
        HPos::Left,
        &format!("memory roof: {} GB/s × intensity", whole(c.copy_gbps)),
    ));
    shapes.push(Shape::text(
        panel,
        label_x,
        label_y + 0.55,
        HPos::Left,
        &format!("(the best copy; reads alone: {} GB/s)", whole(c.read_gbps)),
    ));
    shapes.push(Shape::text(
        panel,
        (rx + w) / 2.0,
        ry - 0.4,
        HPos::Center,
        &format!("compute roof: FP32 peak {} GFLOP/s", whole(c.fp32_gflops)),
    ));
    // The ridge, dropped to the intensity axis.
    shapes.push(Shape::line(panel, (rx, ry), (rx, h), Ink::Muted));
    shapes.push(Shape::text(
        panel,
        rx + 0.2,
        h - 1.05,
        HPos::Left,
        &format!(
            "ridge: {} / {} = {ridge:.1} FLOP/byte",
            whole(c.fp32_gflops),
            whole(c.copy_gbps)
        ),
    ));
    shapes.push(Shape::text(panel, rx - 0.2, h - 0.45, HPos::Right, "memory-bound ←"));
    shapes.push(Shape::text(panel, rx + 0.2, h - 0.45, HPos::Left, "→ compute-bound"));
    // Each kernel on the roof, a note below it and an arrow up to it.
    let [bytes, flops] = examples();
    // Each note starts where it clears the roof on its left: the rising roof for the first,
    // the ridge's line for the second.
    for (e, limit, note_x) in [(&bytes, "bytes", 1.2), (&flops, "FLOPs", rx + 0.3)] {
        let g = c.attainable(e.intensity);
        let (x, y) = (x_of(e.intensity), y_of(g));
        let s = 0.3;
        shapes.push(Shape::cell(
            panel,
            x - s / 2.0,
            y - s / 2.0,
            s,
            s,
            Fill::Solid(3),
            "",
        ));
        let note_y = y + 1.9;
        shapes.push(Shape::arrow(
            panel,
            (x, note_y - 0.4),
            (x, y + s / 2.0 + 0.05),
            Ink::Dark,
        ));
        shapes.push(Shape::text(
            panel,
            note_x,
            note_y,
            HPos::Left,
            &format!("{}: {} FLOP/byte,", e.what, intensity(e.intensity)),
        ));
        shapes.push(Shape::text(
            panel,
            note_x,
            note_y + 0.55,
            HPos::Left,
            &format!("at most {} GFLOP/s: limited by {limit}", whole(g)),
        ));
    }
    // Whole hundredths of a unit, so that the record reads as the layout was meant.
    for s in &mut shapes {
        for v in [&mut s.x, &mut s.y, &mut s.w, &mut s.h] {
            *v = (*v * 100.0).round() / 100.0;
        }
    }
    Diagram {
        stem: STEM,
        title: "The roofline of this GPU explained: what a kernel can reach at each \
                arithmetic intensity, and what limits it"
            .into(),
        computed_by: "diagrams::roofline",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::ShapeKind;

    /// A folder with the two ceilings records, shaped as the chapter writes them.
    fn made_up() -> tempfile::TempDir {
        super::super::tests::made_up_records(&[
            (
                "ceilings-peaks",
                "ceiling,median,min,max,unit,datasheet,measured_as\n\
                 FP32 multiply-add,50.0,49.9,50.1,TFLOP/s,–,x\n\
                 FP64 multiply-add,25.0,24.9,25.1,TFLOP/s,–,x\n\
                 \"L2 read, inside one launch\",6000,5990,6010,GB/s,–,x\n\
                 \"device memory, best copy\",2500,2490,2510,GB/s,–,x\n",
            ),
            (
                "ceilings-summary",
                "ceiling,median,min,max,unit,measured_as\n\
                 \"device copy, copy kernel\",2500,2490,2510,GB/s,x\n\
                 \"device read, read-only kernel\",2600,2590,2610,GB/s,x\n",
            ),
        ])
    }

    fn lines(d: &Diagram, ink: Ink) -> Vec<&Shape> {
        let style = Shape::line("", (0.0, 0.0), (1.0, 1.0), ink).style;
        d.shapes
            .iter()
            .filter(|s| s.shape == ShapeKind::Line && s.style == style)
            .collect()
    }

    fn labels(d: &Diagram) -> Vec<&str> {
        d.shapes.iter().map(|s| s.label.as_str()).collect()
    }

    #[test]
    fn the_ridge_drawn_is_the_peak_over_the_bandwidth() {
        let tmp = made_up();
        let d = compose(tmp.path()).unwrap();
        let c = Ceilings::read(tmp.path()).unwrap();
        assert_eq!(
            c,
            Ceilings { fp32_gflops: 50_000.0, copy_gbps: 2500.0, read_gbps: 2600.0 }
        );
        assert_eq!(c.ridge(), 20.0);
        // The memory roof ends, the compute roof starts and the ridge's line stands where
        // the intensity is peak / bandwidth (to the hundredth of a unit the record keeps).
        let (memory, compute, ridge) = (
            lines(&d, Ink::Colour(0)),
            lines(&d, Ink::Colour(1)),
            lines(&d, Ink::Muted),
        );
        assert_eq!((memory.len(), compute.len(), ridge.len()), (1, 1, 1));
        let near =
            |x: f64, intensity: f64| (intensity_at(x) / intensity - 1.0).abs() < 0.01;
        assert!(near(memory[0].x + memory[0].w, c.ridge()));
        assert!(near(compute[0].x, c.ridge()));
        assert!(near(ridge[0].x, c.ridge()) && ridge[0].w == 0.0);
        // The memory roof rises one decade of FLOP/s per decade of intensity, from the
        // bandwidth × intensity at the left edge to the peak.
        let m = memory[0];
        assert!((y_of(2500.0 * intensity_at(m.x)) - m.y).abs() < 0.01);
        assert!((y_of(50_000.0) - (m.y + m.h)).abs() < 0.01);
        assert_eq!(compute[0].h, 0.0);
        for want in [
            "memory roof: 2500 GB/s × intensity",
            "(the best copy; reads alone: 2600 GB/s)",
            "compute roof: FP32 peak 50000 GFLOP/s",
            "ridge: 50000 / 2500 = 20.0 FLOP/byte",
        ] {
            assert!(
                labels(&d).contains(&want),
                "`{want}` is not drawn: {:?}",
                labels(&d)
            );
        }
        let meta = d.provenance.unwrap();
        assert_eq!(meta.get("gpu"), Some("Made-up GPU"));
        assert_eq!(meta.get("composed_from"), Some("ceilings-peaks, ceilings-summary"));
    }

    #[test]
    fn each_example_lies_on_the_side_of_the_ridge_its_label_says() {
        let tmp = made_up();
        let d = compose(tmp.path()).unwrap();
        let c = Ceilings::read(tmp.path()).unwrap();
        let ridge_x = lines(&d, Ink::Muted)[0].x;
        let points: Vec<&Shape> =
            d.shapes.iter().filter(|s| s.shape == ShapeKind::Cell).collect();
        assert_eq!(points.len(), 2);
        let limited: Vec<&str> =
            labels(&d).into_iter().filter(|l| l.contains("limited by")).collect();
        assert_eq!(limited.len(), 2);
        for ((p, label), e) in points.iter().zip(&limited).zip(examples()) {
            let (x, y) = (p.x + p.w / 2.0, p.y + p.h / 2.0);
            // Each point sits on the roof, at what the roof allows at its intensity.
            assert!((intensity_at(x) / e.intensity - 1.0).abs() < 0.01, "{label}");
            assert!((y - y_of(c.attainable(e.intensity))).abs() < 0.01, "{label}");
            let bytes = label.ends_with("limited by bytes");
            assert!(bytes || label.ends_with("limited by FLOPs"), "{label}");
            assert_eq!(
                x < ridge_x,
                bytes,
                "{label} at x = {x}, the ridge at {ridge_x}"
            );
            assert_eq!(e.intensity < c.ridge(), bytes, "{label}");
            // The rate it reaches is the bandwidth's share left of the ridge, the peak right.
            let rate = if bytes { 2500.0 * e.intensity } else { 50_000.0 };
            assert!(
                label.starts_with(&format!("at most {rate:.0} GFLOP/s")),
                "{label}"
            );
        }
        assert_eq!(examples()[0].intensity, 0.5);
        assert_eq!(examples()[1].intensity, 4096.0 / 6.0);
    }

    #[test]
    fn a_missing_ceiling_composes_nothing_and_says_which() {
        let tmp = made_up();
        std::fs::remove_file(tmp.path().join("data/ceilings-summary.csv")).unwrap();
        let e = compose(tmp.path()).unwrap_err();
        assert!(format!("{e:#}").contains("ceilings-summary"), "{e:#}");
    }

    #[test]
    fn decades_read_as_numbers() {
        let drawn: Vec<String> = (-1..=5).map(decade).collect();
        assert_eq!(drawn, ["0.1", "1", "10", "100", "1000", "10 000", "100 000"]);
    }
}
