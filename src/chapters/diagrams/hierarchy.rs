//! The memory-spaces chapter's diagram: the memory hierarchy of the GPU the book ran on, from
//! the registers and shared memory of an SM through L2 to device memory and the host, each
//! level with the size the device reported and the dependent-load latency and the bandwidth
//! the book measured for it.
//!
//! Unlike the other diagrams it is composed from records (as the roofline is): the chapter's
//! pointer chase (`memory_spaces-latency`), its bandwidth of each space
//! (`memory_spaces-bandwidth`), its map of the spaces with the device's capacities
//! (`memory_spaces-map`) and the ceilings' host transfers (`ceilings-summary`). A folder that
//! lacks one of them gets no diagram, and [`compose`] says which is missing.

use std::path::Path;

use anyhow::Context;
use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::harness::compare::leading_number;
use crate::harness::plot::{Fill, Ink, Shape};
use crate::harness::record::{Meta, Record};
use crate::harness::roof::{cell, number, read};

pub const STEM: &str = "memory_spaces-diagram-hierarchy";

/// The records the diagram is composed from.
pub const COMPOSED_FROM: &[&str] = &[
    "memory_spaces-latency",
    "memory_spaces-bandwidth",
    "memory_spaces-map",
    "ceilings-summary",
];

/// A dependent load's latency, with the footprint its chase walked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Chase {
    pub footprint_bytes: f64,
    pub ns: f64,
}

/// What the diagram draws, every number as its record holds it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Hierarchy {
    pub sms: f64,
    /// Registers per SM, 32 bits each.
    pub registers_per_sm: f64,
    /// L1 and shared memory together, per SM.
    pub l1_kib: f64,
    pub l2_mib: f64,
    /// Device memory as the map states it (`79.2 GiB`).
    pub device_memory: String,
    pub shared: Chase,
    /// The global chase at its smallest footprint, which stays in L1.
    pub l1: Chase,
    /// The global chase at 2 MiB, inside L2 (as the bytes-in-flight table takes it).
    pub l2: Chase,
    /// The global chase at its largest footprint beyond L2.
    pub device: Chase,
    pub shared_gbps: f64,
    pub l2_gbps: f64,
    pub device_gbps: f64,
    pub h2d_pinned_gbps: f64,
    pub d2h_pinned_gbps: f64,
}

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The metadata value `key` of `rec` as a number (its leading number: `256 (stated ...)`).
pub(super) fn meta_number(rec: &Record, stem: &str, key: &str) -> anyhow::Result<f64> {
    rec.meta
        .get(key)
        .and_then(leading_number)
        .with_context(|| format!("{stem} has no number `{key}` in its metadata"))
}

/// The `y` of every row of `series` in the latency record, by footprint.
pub(super) fn chases(rec: &Record, series: &dyn Fn(&str) -> bool) -> Vec<Chase> {
    let mut out: Vec<Chase> = rec
        .rows
        .iter()
        .filter(|r| cell(rec, r, "series").is_ok_and(series))
        .filter_map(|r| {
            Some(Chase {
                footprint_bytes: number(rec, r, "x").ok()?,
                ns: number(rec, r, "y").ok()?,
            })
        })
        .collect();
    out.sort_by(|a, b| a.footprint_bytes.total_cmp(&b.footprint_bytes));
    out
}

/// The median of the row of `rec` whose first column is `name`.
pub(super) fn median_of(rec: &Record, stem: &str, name: &str) -> anyhow::Result<f64> {
    let row = rec
        .rows
        .iter()
        .find(|r| r[0] == name)
        .with_context(|| format!("{stem} has no row `{name}`"))?;
    number(rec, row, "median")
}

/// The GB/s of the bandwidth record's bar whose label starts with `label`.
fn delivered(rec: &Record, label: &str) -> anyhow::Result<f64> {
    let row = rec
        .rows
        .iter()
        .find(|r| cell(rec, r, "x").is_ok_and(|x| x.starts_with(label)))
        .with_context(|| format!("memory_spaces-bandwidth has no bar `{label}`"))?;
    number(rec, row, "y")
}

/// The map's "this GPU has" for the space `space`.
fn capacity<'r>(rec: &'r Record, space: &str) -> anyhow::Result<&'r str> {
    let row = rec
        .rows
        .iter()
        .find(|r| r[0] == space)
        .with_context(|| format!("memory_spaces-map has no row `{space}`"))?;
    cell(rec, row, "this GPU has")
}

impl Hierarchy {
    /// Reads the hierarchy from the records of `dir`.
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        let latency = read(dir, "memory_spaces-latency")?;
        let bandwidth = read(dir, "memory_spaces-bandwidth")?;
        let map = read(dir, "memory_spaces-map")?;
        let summary = read(dir, "ceilings-summary")?;
        let l1_kib = meta_number(&latency, "memory_spaces-latency", "l1_kib")?;
        let l2_mib = meta_number(&latency, "memory_spaces-latency", "l2_mib")?;
        let global = chases(&latency, &|s| s.starts_with("global"));
        let shared = chases(&latency, &|s| s == "shared");
        let l1 = global
            .first()
            .filter(|c| c.footprint_bytes <= l1_kib * KIB)
            .context("memory_spaces-latency has no global chase that fits L1")?;
        let l2 = global.iter().find(|c| c.footprint_bytes == 2.0 * MIB).context(
            "memory_spaces-latency has no global chase at 2 MiB (a full run measures it)",
        )?;
        let device = global
            .last()
            .filter(|c| c.footprint_bytes > l2_mib * MIB)
            .context(
                "memory_spaces-latency has no global chase beyond L2 (a full run measures it)",
            )?;
        let registers = capacity(&map, "registers")?;
        let registers_per_sm = leading_number(registers).with_context(|| {
            format!("registers: `{registers}` starts with no number")
        })?;
        // "79.2 GiB device memory behind 50 MiB of L2": the size and its unit.
        let global_capacity = capacity(&map, "global")?;
        let device_memory: Vec<&str> =
            global_capacity.split_whitespace().take(2).collect();
        anyhow::ensure!(
            matches!(device_memory[..], [n, u] if n.parse::<f64>().is_ok() && u.ends_with("iB")),
            "global: `{global_capacity}` does not start with a size"
        );
        Ok(Self {
            sms: meta_number(&latency, "memory_spaces-latency", "sms")?,
            registers_per_sm,
            l1_kib,
            l2_mib,
            device_memory: device_memory.join(" "),
            shared: *shared
                .first()
                .context("memory_spaces-latency has no shared chase")?,
            l1: *l1,
            l2: *l2,
            device: *device,
            shared_gbps: delivered(&bandwidth, "shared")?,
            l2_gbps: delivered(&bandwidth, "global, L2")?,
            device_gbps: delivered(&bandwidth, "global, DRAM")?,
            h2d_pinned_gbps: median_of(&summary, "ceilings-summary", "H2D pinned")?,
            d2h_pinned_gbps: median_of(&summary, "ceilings-summary", "D2H pinned")?,
        })
    }
}

/// A latency as drawn: three figures below 100 ns, whole nanoseconds above.
pub(super) fn ns(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1} ns")
    } else {
        format!("{v:.0} ns")
    }
}

/// A bandwidth as drawn: three figures below 100 GB/s, whole GB/s above.
pub(super) fn gbps(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1} GB/s")
    } else {
        format!("{v:.0} GB/s")
    }
}

/// A footprint in KiB, MiB or GiB.
pub(super) fn bytes(b: f64) -> String {
    let (v, unit) = match b {
        b if b >= 1024.0 * MIB => (b / (1024.0 * MIB), "GiB"),
        b if b >= MIB => (b / MIB, "MiB"),
        b => (b / KIB, "KiB"),
    };
    if v.fract() == 0.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{v:.1} {unit}")
    }
}

/// The provenance of a diagram composed from `composed_from`: the device of the chase's run,
/// this program's build, and the records it read with their commits.
pub(super) fn provenance(dir: &Path, composed_from: &[&str]) -> anyhow::Result<Meta> {
    let latency = read(dir, "memory_spaces-latency")?;
    let summary = read(dir, "ceilings-summary")?;
    let mut meta = Meta::default();
    for key in ["gpu", "compute_capability", "sms", "l2_mib", "driver", "cuda"] {
        if let Some(v) = latency.meta.get(key) {
            meta = meta.with(key, v);
        }
    }
    Ok(meta
        .with("cudarc", env!("CMBOOK_CUDARC_VERSION"))
        .with("commit", env!("CMBOOK_GIT_COMMIT"))
        .with("date_utc", &chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .with("composed_from", &composed_from.join(", "))
        .with("memory_spaces_commit", latency.meta.get("commit").unwrap_or("?"))
        .with("ceilings_commit", summary.meta.get("commit").unwrap_or("?")))
}

/// The diagram, composed from the records of `dir`.
pub fn compose(dir: &Path) -> anyhow::Result<Diagram> {
    let h = Hierarchy::read(dir)?;
    Ok(Diagram { provenance: Some(provenance(dir, COMPOSED_FROM)?), ..draw(&h) })
}

/// The boxes of the levels on the left, each level's latency and bandwidth to its right,
/// arrows for the way data comes up to the threads.
pub(super) fn draw(h: &Hierarchy) -> Diagram {
    let panel = "";
    let w = 9.0;
    let notes_x = w + 0.8;
    let mut shapes = Vec::new();
    let notes = |shapes: &mut Vec<Shape>, centre: f64, lines: &[String]| {
        let top = centre - 0.3 * (lines.len() - 1) as f64;
        for (i, line) in lines.iter().enumerate() {
            shapes.push(Shape::text(
                panel,
                notes_x,
                top + 0.6 * i as f64,
                HPos::Left,
                line,
            ));
        }
    };
    // One SM: its registers and its shared memory with L1.
    shapes.push(Shape::text(
        panel,
        0.0,
        -0.5,
        HPos::Left,
        &format!("each of {:.0} SMs", h.sms),
    ));
    shapes.push(Shape::frame(panel, 0.0, 0.0, w, 3.6, Ink::Dark));
    let registers_kib = h.registers_per_sm * 4.0 / KIB;
    shapes.push(Shape::cell(
        panel,
        0.5,
        0.3,
        w - 1.0,
        1.0,
        Fill::Tint(0),
        &format!("registers: {registers_kib:.0} KiB"),
    ));
    notes(
        &mut shapes,
        0.8,
        &[
            format!("{:.0} 32-bit registers per SM,", h.registers_per_sm),
            "read by instructions, not by loads".into(),
        ],
    );
    shapes.push(Shape::cell(
        panel,
        0.5,
        2.2,
        w - 1.0,
        1.0,
        Fill::Tint(0),
        &format!("shared memory + L1: {:.0} KiB", h.l1_kib),
    ));
    notes(
        &mut shapes,
        2.7,
        &[
            format!("load after load: {} shared,", ns(h.shared.ns)),
            format!("{} L1 ({} chase)", ns(h.l1.ns), bytes(h.l1.footprint_bytes)),
            format!("shared delivers {}", gbps(h.shared_gbps)),
        ],
    );
    // L2 and device memory: a chase's latency, and the rate the chapter read them at.
    let chased = |chase: &Chase, read_gbps: f64| {
        vec![
            format!("load after load: {}", ns(chase.ns)),
            format!(
                "({} chase), reads {}",
                bytes(chase.footprint_bytes),
                gbps(read_gbps)
            ),
        ]
    };
    let levels: [(f64, Fill, String, Vec<String>); 3] = [
        (
            4.8,
            Fill::Tint(1),
            format!("L2: {:.0} MiB, one for all SMs", h.l2_mib),
            chased(&h.l2, h.l2_gbps),
        ),
        (
            7.0,
            Fill::Tint(2),
            format!("device memory: {}", h.device_memory),
            chased(&h.device, h.device_gbps),
        ),
        (
            9.2,
            Fill::Plain,
            "host memory".into(),
            vec![
                "pinned copies over the host link:".into(),
                format!(
                    "{} in, {} out",
                    gbps(h.h2d_pinned_gbps),
                    gbps(h.d2h_pinned_gbps)
                ),
            ],
        ),
    ];
    let mut above = 3.6;
    for (y, fill, label, lines) in levels {
        // Data comes up from each level to the one above it.
        shapes.push(Shape::arrow(panel, (w / 2.0, y), (w / 2.0, above), Ink::Muted));
        shapes.push(Shape::cell(panel, 0.0, y, w, 1.0, fill, &label));
        notes(&mut shapes, y + 0.5, &lines);
        above = y + 1.0;
    }
    // Whole hundredths of a unit, so that the record reads as the layout was meant.
    for s in &mut shapes {
        for v in [&mut s.x, &mut s.y, &mut s.w, &mut s.h] {
            *v = (*v * 100.0).round() / 100.0;
        }
    }
    Diagram {
        stem: STEM,
        title:
            "The memory hierarchy of this GPU: each level's size, the latency of one \
                dependent load and the bandwidth measured for it"
                .into(),
        computed_by: "diagrams::hierarchy",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::ShapeKind;

    /// A folder of small made-up records, shaped as the chapters write them.
    fn made_up() -> tempfile::TempDir {
        super::super::tests::made_up_records(&[
            (
                "memory_spaces-latency",
                "# l1_kib: 192 (stated, not measured)\n\
                 series,x,y,y_min,y_max\n\
                 global (one element per 128-byte line),16384,22.5,22,23\n\
                 global (one element per 128-byte line),2097152,150,149,151\n\
                 global (one element per 128-byte line),33554432,260,259,261\n\
                 global (one element per 128-byte line),268435456,400,399,401\n\
                 shared,1024,15.5,15,16\n\
                 shared,4096,15.6,15,16\n\
                 constant,1024,17,17,17\n",
            ),
            (
                "memory_spaces-bandwidth",
                "series,x,y,y_min,y_max\n\
                 GB/s delivered,\"global, DRAM (read)\",3200,3100,3300\n\
                 GB/s delivered,\"global, L2 (read, one launch)\",6400,6300,6500\n\
                 GB/s delivered,shared,30000,29000,31000\n\
                 GB/s delivered,registers,90000,89000,91000\n",
            ),
            (
                "memory_spaces-map",
                "space,this GPU has\n\
                 registers,32768 32-bit registers per SM (128 KiB)\n\
                 global,39.5 GiB device memory behind 40 MiB of L2\n",
            ),
            (
                "ceilings-summary",
                "ceiling,median,min,max,unit,measured_as\n\
                 \"device read, read-only kernel\",3150,3100,3200,GB/s,x\n\
                 D2H pinned,52.5,50,53,GB/s,1024 MiB\n\
                 H2D pinned,50.5,50,51,GB/s,1024 MiB\n",
            ),
        ])
    }

    /// Every number in the diagram's texts and labels, in order.
    fn numbers_drawn(d: &Diagram) -> Vec<f64> {
        d.shapes
            .iter()
            .flat_map(|s| {
                // Whole words only: the 1 of `L1` is a name, the 32 of `32-bit` a number.
                s.label
                    .split(|c: char| c.is_whitespace() || c == '-')
                    .filter_map(|t| t.trim_matches(|c| "(),:".contains(c)).parse().ok())
                    .collect::<Vec<f64>>()
            })
            .collect()
    }

    #[test]
    fn every_number_drawn_is_a_records() {
        let tmp = made_up();
        let d = compose(tmp.path()).unwrap();
        let h = Hierarchy::read(tmp.path()).unwrap();
        assert_eq!(h.shared, Chase { footprint_bytes: 1024.0, ns: 15.5 });
        assert_eq!(h.l1, Chase { footprint_bytes: 16384.0, ns: 22.5 });
        assert_eq!(h.l2, Chase { footprint_bytes: 2.0 * MIB, ns: 150.0 });
        assert_eq!(h.device, Chase { footprint_bytes: 256.0 * MIB, ns: 400.0 });
        let mut drawn = numbers_drawn(&d);
        // Sizes (SMs, registers, KiB of registers and of L1, MiB of L2, device memory, the
        // 32 of a register's bits), footprints of the chases, latencies and bandwidths: each
        // as its record holds it, and nothing else.
        let mut expected = vec![
            100.0, 128.0, 32768.0, 32.0, 192.0, 15.5, 22.5, 16.0, 30000.0, 40.0, 150.0,
            2.0, 6400.0, 39.5, 400.0, 256.0, 3200.0, 50.5, 52.5,
        ];
        drawn.sort_by(f64::total_cmp);
        expected.sort_by(f64::total_cmp);
        assert_eq!(drawn, expected);
        let labels: Vec<&str> = d.shapes.iter().map(|s| s.label.as_str()).collect();
        for want in [
            "each of 100 SMs",
            "registers: 128 KiB",
            "shared memory + L1: 192 KiB",
            "load after load: 15.5 ns shared,",
            "22.5 ns L1 (16 KiB chase)",
            "shared delivers 30000 GB/s",
            "L2: 40 MiB, one for all SMs",
            "load after load: 150 ns",
            "(2 MiB chase), reads 6400 GB/s",
            "device memory: 39.5 GiB",
            "load after load: 400 ns",
            "(256 MiB chase), reads 3200 GB/s",
            "50.5 GB/s in, 52.5 GB/s out",
        ] {
            assert!(labels.contains(&want), "`{want}` is not drawn: {labels:?}");
        }
        // Four levels below the SM's frame, each fed by an arrow from the one below.
        let arrows = d.shapes.iter().filter(|s| s.shape == ShapeKind::Arrow).count();
        assert_eq!(arrows, 3);
        let meta = d.provenance.unwrap();
        assert_eq!(meta.get("gpu"), Some("Made-up GPU"));
        assert_eq!(meta.get("composed_from"), Some(COMPOSED_FROM.join(", ").as_str()));
        assert_eq!(meta.get("memory_spaces_commit"), Some("fedcba"));
    }

    #[test]
    fn a_missing_record_or_chase_composes_nothing_and_says_which() {
        let tmp = made_up();
        let data = tmp.path().join("data");
        std::fs::remove_file(data.join("ceilings-summary.csv")).unwrap();
        let e = compose(tmp.path()).unwrap_err();
        assert!(format!("{e:#}").contains("ceilings-summary"), "{e:#}");
        // A quick run's chase that stops inside L2: no device-memory latency to draw.
        let tmp = made_up();
        let path = tmp.path().join("data/memory_spaces-latency.csv");
        let text = std::fs::read_to_string(&path).unwrap();
        let quick: String = text
            .lines()
            .filter(|l| !l.contains(",268435456,"))
            .map(|l| l.to_owned() + "\n")
            .collect();
        std::fs::write(&path, quick).unwrap();
        let e = compose(tmp.path()).unwrap_err();
        assert!(format!("{e:#}").contains("beyond L2"), "{e:#}");
    }

    #[test]
    fn sizes_and_rates_are_drawn_to_their_records_precision() {
        assert_eq!(ns(14.4617), "14.5 ns");
        assert_eq!(ns(348.07), "348 ns");
        assert_eq!(gbps(54.9), "54.9 GB/s");
        assert_eq!(gbps(3086.3), "3086 GB/s");
        assert_eq!(bytes(8192.0), "8 KiB");
        assert_eq!(bytes(536870912.0), "512 MiB");
        assert_eq!(bytes(1.5 * 1024.0 * MIB), "1.5 GiB");
    }
}
