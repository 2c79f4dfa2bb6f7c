//! The roofline: every kernel of the book that does floating-point arithmetic, placed
//! by its arithmetic intensity (FLOPs per byte it must move) and the rate it reached,
//! under the ceilings the same GPU measured (`ceilings-peaks`: FP32 and FP64
//! multiply-adds, the L2 read inside one launch, device memory's best copy).
//!
//! It is composed from the records of a folder (the book's `figures/`, or a reader's
//! run), so it needs no GPU: `reproduce` draws it after measuring, and `reproduce
//! --roofline` on any folder. Bytes are the ones each algorithm must move (inputs read
//! once, outputs written once), as the chapters compute them; kernels that do no
//! arithmetic (copies, transposes, strided reads) have an intensity of zero and are
//! shown against the bandwidth ceilings in their own chapters.

use std::path::Path;

use crate::harness::compare::leading_number;
use crate::harness::plot::{self, Axis, Point, Spec};
use crate::harness::record::{self, Meta};
use crate::harness::roof::{cell, number, read};
pub use crate::harness::roof::{read_roof, Roof};
use crate::harness::run;
use crate::memory_spaces::report::CEILING_BARS;

/// One kernel on the roofline.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelPoint {
    /// The chapter's stem (`tiling`, `atax`, ...).
    pub chapter: &'static str,
    pub kernel: String,
    pub double: bool,
    pub flops: f64,
    pub bytes: f64,
    pub seconds: f64,
    /// The record it was read from.
    pub source: &'static str,
    /// Whether its data stayed in L2 (then L2, not device memory, is its bandwidth
    /// roof).
    pub l2_resident: bool,
}

impl KernelPoint {
    pub fn intensity(&self) -> f64 {
        self.flops / self.bytes
    }
    pub fn gflops(&self) -> f64 {
        self.flops / self.seconds / 1e9
    }
}

/// `M x N` of an ATAX dataset label such as `LARGE 1900×2100` or `16384² 16384×16384`.
fn dataset_shape(label: &str) -> Option<(f64, f64)> {
    let dims = label.split_whitespace().last()?;
    let (m, n) = dims.split_once('×')?;
    Some((m.parse().ok()?, n.parse().ok()?))
}

// ANCHOR: points
/// The kernels of the book that do floating-point arithmetic, read from the records in
/// `dir` (records that are missing contribute nothing): - matrix multiply steps and
/// cuBLAS: `2 M N K` FLOPs over the `4 (M K + K N + M N)` bytes of the three matrices
/// (`tiling-kernels`); - ATAX, every variant at the largest float and the largest
/// double matrix: `4 M N` FLOPs over the bytes the variant moves (`atax-kernels`, L2
/// cold); - the signal example (one multiply-add per matrix element) and the
/// three-point stencil (two adds per element, 8 useful bytes) from the rates the
/// memory-spaces chapter recorded.
pub fn read_points(dir: &Path) -> Vec<KernelPoint> {
    let mut points = Vec::new();
    if let Ok(rec) = read(dir, "tiling-kernels") {
        let size = rec.meta.get("size").unwrap_or("");
        let dims: Vec<f64> = size
            .split(',')
            .filter_map(|p| leading_number(p.split('=').nth(1)?.trim()))
            .collect();
        if let [m, n, k] = dims[..] {
            let (flops, bytes) = (2.0 * m * n * k, 4.0 * (m * k + k * n + m * n));
            for row in &rec.rows {
                if let (Ok(step), Ok(g)) =
                    (cell(&rec, row, "step"), number(&rec, row, "gflops_median"))
                {
                    points.push(KernelPoint {
                        chapter: "tiling",
                        kernel: step.to_string(),
                        double: false,
                        flops,
                        bytes,
                        seconds: flops / (g * 1e9),
                        source: "tiling-kernels",
                        l2_resident: false,
                    });
                }
            }
        }
    }
    if let Ok(rec) = read(dir, "atax-kernels") {
        for precision in ["float", "double"] {
            let rows: Vec<&Vec<String>> = rec
                .rows
                .iter()
                .filter(|r| cell(&rec, r, "type").ok() == Some(precision))
                .collect();
            // The last dataset of a precision is its largest.
            let Some(last) = rows.last().and_then(|r| cell(&rec, r, "dataset").ok())
            else {
                continue;
            };
            let Some((m, n)) = dataset_shape(last) else { continue };
            for row in
                rows.iter().filter(|r| cell(&rec, r, "dataset").ok() == Some(last))
            {
                let (Ok(variant), Ok(mb), Ok(us)) = (
                    cell(&rec, row, "variant"),
                    number(&rec, row, "mb_moved"),
                    number(&rec, row, "cold_median_us"),
                ) else {
                    continue;
                };
                points.push(KernelPoint {
                    chapter: "atax",
                    kernel: format!("{variant}, {precision} {last}"),
                    double: precision == "double",
                    flops: 4.0 * m * n,
                    bytes: mb * 1e6,
                    seconds: us * 1e-6,
                    source: "atax-kernels",
                    l2_resident: false, // L2 cold: the cache is flushed before each run
                });
            }
        }
    }
    // Rates in GB/s: at the kernel's intensity, GFLOP/s = GB/s × FLOP/byte.
    let mut from_rate = |stem: &'static str,
                         what: &str,
                         keep: &dyn Fn(&str) -> bool,
                         flop_per_byte: f64| {
        let Ok(rec) = read(dir, stem) else { return };
        for row in &rec.rows {
            let (Ok(series), Ok(x), Ok(gbps)) = (
                cell(&rec, row, "series"),
                cell(&rec, row, "x"),
                number(&rec, row, "y"),
            ) else {
                continue;
            };
            if !keep(x) {
                continue;
            }
            // One second's worth of the kernel: its bytes and FLOPs at the measured
            // rate.
            let bytes = gbps * 1e9;
            let l2_resident = series.starts_with("L2 warm");
            let cache = match (series.starts_with("L2 "), l2_resident) {
                (true, true) => ", L2 warm",
                (true, false) => ", L2 cold",
                _ => "",
            };
            points.push(KernelPoint {
                chapter: "memory_spaces",
                kernel: format!("{what}: {x}{cache}"),
                double: false,
                flops: bytes * flop_per_byte,
                bytes,
                seconds: 1.0,
                source: stem,
                l2_resident,
            });
        }
    };
    // The figures' bars that are ceilings measured beside the kernels, not kernels.
    let kernel = |x: &str| !CEILING_BARS.contains(&x);
    // signal: 2 FLOPs per 4-byte element (the results, one float per 2500-float row,
    // are within 0.04% of the bytes and counted in the rate).
    from_rate("memory_spaces-signal", "signal", &kernel, 0.5);
    // stencil: b[j] = a[j-1] + a[j] + a[j+1], 2 FLOPs per 8 useful bytes.
    from_rate("memory_spaces-stencil", "stencil", &kernel, 0.25);
    points
}
// ANCHOR_END: points

/// The figures and the table this module writes, all composed by `reproduce` (and
/// known to [`crate::chapters::reproduce_writes`]).
pub const STEMS: &[&str] = &[
    "ceilings-roofline",
    "ceilings-roofline-kernels",
    "memory_spaces-roofline",
    "tiling-roofline",
    "atax-roofline",
    "ceilings-little",
];

#[derive(serde::Serialize)]
struct KernelRow {
    chapter: &'static str,
    kernel: String,
    precision: &'static str,
    #[serde(rename = "FLOP per byte")]
    intensity: String,
    #[serde(rename = "GFLOP/s")]
    gflops: String,
    #[serde(rename = "bandwidth roof")]
    bandwidth: &'static str,
    #[serde(rename = "roof GFLOP/s")]
    roof: String,
    #[serde(rename = "% of roof")]
    percent: String,
}

/// The provenance of a composed record: the device and ceilings of `roof`, this
/// program's build and command, and the records it read.
fn meta_for(roof: &Roof, points: &[KernelPoint]) -> Meta {
    let mut sources: Vec<&str> = points.iter().map(|p| p.source).collect();
    sources.push("ceilings-peaks");
    sources.sort();
    sources.dedup();
    let mut meta = Meta::default();
    for key in ["gpu", "compute_capability", "sms", "l2_mib", "driver", "cuda"] {
        if let Some(v) = roof.meta.get(key) {
            meta = meta.with(key, v);
        }
    }
    meta.with("cudarc", env!("CMBOOK_CUDARC_VERSION"))
        .with("commit", env!("CMBOOK_GIT_COMMIT"))
        .with("date_utc", &chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .with("command", &run::command_line())
        .with("profile", run::profile())
        .with("composed_from", &sources.join(", "))
        .with("ceilings_commit", roof.meta.get("commit").unwrap_or("?"))
        .with("fp32_gflops", &format!("{:.0}", roof.fp32_gflops))
        .with("fp64_gflops", &format!("{:.0}", roof.fp64_gflops))
        .with("dram_gbps", &format!("{:.0}", roof.dram_gbps))
        .with("l2_gbps", &format!("{:.0}", roof.l2_gbps))
}

/// The roofs' names, as the figures' legends show them.
const COPY_ROOF: &str = "device memory, best copy";
const READ_ROOF: &str = "device memory, read-only kernel";
const L2_ROOF: &str = "L2, inside one launch";
/// The series of the kernels a figure names, and of the ones it draws in grey.
const NAMED: &str = "kernels named";
const OTHERS: &str = "other kernels (Table 1.4)";

/// The bandwidth roofs as lines across the intensities `range`: each from the left edge to
/// where it meets the FP32 peak, or to the right edge if that comes first; a roof that meets
/// the peak left of the range is the peak there and is not drawn. The read-only kernel's roof
/// is drawn where `read_gbps` is known. The peaks themselves are the figure's reference lines.
fn roof_points(roof: &Roof, read_gbps: Option<f64>, range: (f64, f64)) -> Vec<Point> {
    let line = |name: &str, gbps: f64| {
        let ridge = roof.fp32_gflops / gbps;
        let end = ridge.min(range.1);
        (ridge > range.0)
            .then_some([(range.0, gbps * range.0), (end, gbps * end)])
            .into_iter()
            .flatten()
            .map(move |(x, y)| Point::new(name, x, y, y, y))
            .collect::<Vec<_>>()
    };
    let mut points = line(COPY_ROOF, roof.dram_gbps);
    if let Some(gbps) = read_gbps {
        points.extend(line(READ_ROOF, gbps));
    }
    points.extend(line(L2_ROOF, roof.l2_gbps));
    points
}

/// The intensities a figure spans: its kernels', a factor of two wider either side, and the
/// ridge where a kernel lies right of it (the distance to the ridge is then the point).
fn x_range(points: &[&KernelPoint], roof: &Roof) -> (f64, f64) {
    let ridge = roof.fp32_gflops / roof.dram_gbps;
    if points.is_empty() {
        return (0.1, ridge);
    }
    let lo = points.iter().map(|p| p.intensity()).fold(f64::INFINITY, f64::min);
    let hi = points.iter().map(|p| p.intensity()).fold(0.0, f64::max);
    let lo = if hi > ridge { lo.min(ridge) } else { lo };
    (lo / 2.0, hi * 2.0)
}

/// The read-only kernel's rate that bounds a figure's kernels: for the whole book the
/// ceilings run's (Table 1.1), for a chapter the one its record measured beside its kernels
/// (`read_ceiling`); None where no record holds one.
fn read_ceiling(
    dir: &Path,
    chapter: Option<&str>,
    points: &[&KernelPoint],
) -> Option<f64> {
    match chapter {
        None => {
            let summary = read(dir, "ceilings-summary").ok()?;
            let row = summary
                .rows
                .iter()
                .find(|r| r[0] == "device read, read-only kernel")?;
            number(&summary, row, "median").ok()
        }
        Some(_) => points.iter().find_map(|p| {
            let rec = read(dir, p.source).ok()?;
            leading_number(rec.meta.get("read_ceiling")?)
        }),
    }
}

/// The kernel's name on a figure: the step, the variant without its matrix, the example.
fn short_name(p: &KernelPoint, with_chapter: bool) -> String {
    let precision = if p.double { "FP64" } else { "FP32" };
    let name = match p.chapter {
        "atax" => {
            let variant = p
                .kernel
                .rsplit_once(if p.double { ", double" } else { ", float" })
                .map_or(p.kernel.as_str(), |(v, _)| v);
            format!("{variant}, {precision}")
        }
        _ => p.kernel.clone(),
    };
    match (with_chapter, p.chapter) {
        (true, "tiling") => format!("matrix multiply: {name}"),
        (true, "atax") => format!("ATAX {name}"),
        _ => name,
    }
}

/// The kernels a figure names: of each chapter and precision, the one closest to its roof
/// and, on a chapter's own figure, the one farthest from it; the rest are drawn grey.
fn named(points: &[&KernelPoint], roof: &Roof, whole_book: bool) -> Vec<usize> {
    let share = |p: &KernelPoint| {
        p.gflops() / roof.attainable(p.intensity(), p.double, p.l2_resident)
    };
    let mut groups: Vec<(&str, bool)> =
        points.iter().map(|p| (p.chapter, p.double)).collect();
    groups.dedup();
    let mut out = Vec::new();
    for (chapter, double) in groups {
        let mine = || {
            points
                .iter()
                .enumerate()
                .filter(move |(_, p)| p.chapter == chapter && p.double == double)
        };
        let by_share = |a: &(usize, &&KernelPoint), b: &(usize, &&KernelPoint)| {
            share(a.1).total_cmp(&share(b.1))
        };
        let best = mine().max_by(by_share).map(|(i, _)| i);
        let worst = mine().min_by(by_share).map(|(i, _)| i);
        out.extend(best);
        if !whole_book && worst != best {
            out.extend(worst);
        }
    }
    out
}

/// Writes the roofline figures (the whole book, and one per chapter) and the table of
/// kernels into `dir`, from the records already there.
pub fn write(dir: &Path) -> anyhow::Result<usize> {
    let roof = read_roof(dir)?;
    let points = read_points(dir);
    anyhow::ensure!(
        !points.is_empty(),
        "no kernel records to place on the roofline in {}",
        dir.display()
    );
    let meta = meta_for(&roof, &points);
    let figure = |stem: &str,
                  title: &str,
                  chapter: Option<&str>|
     -> anyhow::Result<()> {
        let mine: Vec<&KernelPoint> =
            points.iter().filter(|p| chapter.is_none_or(|c| p.chapter == c)).collect();
        let read_gbps = read_ceiling(dir, chapter, &mine);
        let mut pts = roof_points(&roof, read_gbps, x_range(&mine, &roof));
        let mut s =
            Spec::line(title, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s")
                .log_x()
                .log_y()
                .ref_line(Axis::Y, "fp32_gflops", "FP32 peak {}")
                .ref_line(Axis::Y, "fp64_gflops", "FP64 peak {}");
        // Each roof its colour in every figure: the read-only kernel's a paler blue than
        // the copy's.
        let mut colors = Vec::new();
        for (r, colour) in [(COPY_ROOF, 0), (READ_ROOF, 4), (L2_ROOF, 1)] {
            if pts.iter().any(|p| p.series == r) {
                s = s.dashed(r);
                colors.push(colour);
            }
        }
        let named = named(&mine, &roof, chapter.is_none());
        // The grey kernels first, so that the named ones are drawn over them.
        if named.len() < mine.len() {
            s = s.markers_only(OTHERS).grey(OTHERS);
            colors.push(6);
        }
        for p in mine.iter().enumerate().filter(|(i, _)| !named.contains(i)) {
            let g = p.1.gflops();
            pts.push(Point::new(OTHERS, p.1.intensity(), g, g, g));
        }
        s = s.markers_only(NAMED);
        colors.push(2);
        for &i in &named {
            let p = mine[i];
            let g = p.gflops();
            let point = Point::new(NAMED, p.intensity(), g, g, g);
            s = s.point_label_at(&point.x, g, &short_name(p, chapter.is_none()));
            pts.push(point);
        }
        let s = s.colors(&colors);
        let meta = match read_gbps {
            Some(gbps) => meta.clone().with("read_gbps", &format!("{gbps:.0}")),
            None => meta.clone(),
        };
        plot::write_figure(dir, stem, &meta, &s, &pts)
    };
    figure(
        "ceilings-roofline",
        "The roofline of this GPU, with every kernel of the book that computes",
        None,
    )?;
    figure(
        "memory_spaces-roofline",
        "Memory spaces on the roofline: signal and stencil kernels",
        Some("memory_spaces"),
    )?;
    figure(
        "tiling-roofline",
        "The matrix multiply steps on the roofline",
        Some("tiling"),
    )?;
    figure(
        "atax-roofline",
        "ATAX on the roofline, largest matrices, L2 cold",
        Some("atax"),
    )?;
    let rows: Vec<KernelRow> = points
        .iter()
        .map(|p| {
            let attainable = roof.attainable(p.intensity(), p.double, p.l2_resident);
            KernelRow {
                chapter: p.chapter,
                kernel: p.kernel.clone(),
                precision: if p.double { "FP64" } else { "FP32" },
                bandwidth: if p.l2_resident { "L2" } else { "device memory" },
                intensity: format!("{:.3}", p.intensity()),
                gflops: format!("{:.0}", p.gflops()),
                roof: format!("{attainable:.0}"),
                percent: format!("{:.0}", 100.0 * p.gflops() / attainable),
            }
        })
        .collect();
    let title =
        "Every kernel on the roofline: its intensity, its rate, and the rate the \
                 roofline allows at that intensity";
    // The table is long: its first rows show, the rest fold away.
    let meta = meta.with("fold", "10").with("title", title);
    record::write_table(dir, "ceilings-roofline-kernels", &meta, &rows)?;
    write_little(dir, &roof)?;
    Ok(STEMS.len())
}

/// A row of the bytes-in-flight table.
#[derive(Debug, Clone, serde::Serialize)]
struct LittleRow {
    level: &'static str,
    latency_ns: String,
    bandwidth_gbps: String,
    in_flight_kib: String,
    per_sm_kib: String,
    per_thread_full: String,
    per_thread_quarter: String,
}

/// Little's law: the bytes a memory level must have requested and not yet delivered to
/// run at its bandwidth are its latency times that bandwidth. Per SM, and per thread when
/// every SM holds `threads_per_sm` threads (all 2048, or a quarter of them).
pub fn bytes_in_flight(latency_ns: f64, gbps: f64) -> f64 {
    latency_ns * 1e-9 * gbps * 1e9
}

const MIB: f64 = 1024.0 * 1024.0;

/// `ceilings-little`: load bytes in flight for device memory and L2, from the memory-spaces
/// chapter's dependent-load latency (its global chase far beyond L2, and at 2 MiB, inside
/// it) and the ceilings' read rates. The latency is an idle GPU's, so every figure is a
/// lower bound: under load requests queue and the latency to cover grows.
fn write_little(dir: &Path, roof: &Roof) -> anyhow::Result<()> {
    let Ok(latency) = read(dir, "memory_spaces-latency") else {
        return Ok(()); // the memory-spaces chapter did not run here
    };
    let sms: f64 = roof.meta.get("sms").and_then(|s| s.parse().ok()).unwrap_or(132.0);
    let l2_bytes =
        roof.meta.get("l2_mib").and_then(|s| s.parse::<f64>().ok()).map(|m| m * MIB);
    // The global chases with their footprints in bytes.
    let chases: Vec<(f64, &Vec<String>)> = latency
        .rows
        .iter()
        .filter(|r| r[0].starts_with("global"))
        .filter_map(|r| Some((r[1].parse::<f64>().ok()?, r)))
        .collect();
    let beyond_l2 = chases
        .iter()
        .filter(|(bytes, _)| l2_bytes.is_none_or(|l2| *bytes > l2))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let inside_l2 = chases.iter().rfind(|(bytes, _)| *bytes == 2.0 * MIB);
    let (Some((_, far)), Some((_, near))) = (beyond_l2, inside_l2) else {
        // A `--quick` run chases only small footprints: no latency of device memory to
        // multiply, so no table rather than a wrong one.
        println!(
            "ceilings-little: not written (memory_spaces-latency has no global chase beyond \
             L2 and at 2 MiB; a full run of memory_spaces measures both)"
        );
        return Ok(());
    };
    let global = |row: &Vec<String>| number(&latency, row, "y");
    let kib = |b: f64| format!("{:.0}", b / 1024.0);
    let row = |level, ns: f64, gbps: f64| {
        let total = bytes_in_flight(ns, gbps);
        let per_sm = total / sms;
        LittleRow {
            level,
            latency_ns: format!("{ns:.0}"),
            bandwidth_gbps: format!("{gbps:.0}"),
            in_flight_kib: kib(total),
            per_sm_kib: format!("{:.1}", per_sm / 1024.0),
            per_thread_full: format!("{:.1}", per_sm / 2048.0),
            per_thread_quarter: format!("{:.1}", per_sm / 512.0),
        }
    };
    // Only loads wait for their data: device memory's row uses the read-only stream's rate
    // (Table 1.1's "device read"), where the ceilings run measured it, and the copy's
    // otherwise, which counts the copy's writes as if they were loads.
    let read_gbps = read(dir, "ceilings-summary").ok().and_then(|summary| {
        let row =
            summary.rows.iter().find(|r| r[0] == "device read, read-only kernel")?;
        row.get(1)?.parse::<f64>().ok()
    });
    let dram = match read_gbps {
        Some(gbps) => row("device memory, loads at the read rate", global(far)?, gbps),
        None => row("device memory, at the copy rate", global(far)?, roof.dram_gbps),
    };
    let rows = vec![dram, row("L2", global(near)?, roof.l2_gbps)];
    let mut meta = Meta::default();
    for key in ["gpu", "compute_capability", "sms", "l2_mib", "driver", "cuda"] {
        if let Some(v) = roof.meta.get(key) {
            meta = meta.with(key, v);
        }
    }
    let meta = meta
        .with("cudarc", env!("CMBOOK_CUDARC_VERSION"))
        .with("commit", env!("CMBOOK_GIT_COMMIT"))
        .with("date_utc", &chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .with("command", &run::command_line())
        .with("profile", run::profile())
        .with(
            "composed_from",
            "ceilings-peaks, ceilings-summary, memory_spaces-latency",
        )
        .with("computed", "roofline::write_little (Little's law)")
        .with(
            "title",
            "Load bytes in flight: idle latency times read bandwidth, a lower bound, for the \
             whole GPU, per SM, and per thread with 2048 or 512 threads resident per SM",
        )
        .with(
            "headers",
            "level = level | latency_ns = idle latency (ns) | \
             bandwidth_gbps = read bandwidth (GB/s) | \
             in_flight_kib = load bytes in flight (KiB) | \
             per_sm_kib = load bytes in flight per SM (KiB) | \
             per_thread_full = per thread, 2048 per SM (bytes) | \
             per_thread_quarter = per thread, 512 per SM (bytes)",
        );
    record::write_table(dir, "ceilings-little", &meta, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_labels_give_their_shape() {
        assert_eq!(dataset_shape("LARGE 1900×2100"), Some((1900.0, 2100.0)));
        assert_eq!(dataset_shape("16384² 16384×16384"), Some((16384.0, 16384.0)));
        assert_eq!(dataset_shape("square"), None);
    }

    #[test]
    fn bytes_in_flight_are_taken_at_the_read_rate_where_it_was_measured() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            data.join("memory_spaces-latency.csv"),
            "series,x,y,y_min,y_max\n\
             global (one element per 128-byte line),2097152,150,150,150\n\
             global (one element per 128-byte line),1073741824,400,400,400\n",
        )
        .unwrap();
        let roof = Roof {
            fp32_gflops: 60_000.0,
            fp64_gflops: 30_000.0,
            l2_gbps: 6_400.0,
            // The copy's read + write: what the table falls back on without a read rate.
            dram_gbps: 3_000.0,
            meta: Meta::default().with("sms", "100").with("l2_mib", "50"),
        };
        let little = |summary_rows: &str| {
            let text =
                format!("ceiling,median,min,max,unit,measured_as\n{summary_rows}");
            std::fs::write(data.join("ceilings-summary.csv"), text).unwrap();
            write_little(tmp.path(), &roof).unwrap();
            read(tmp.path(), "ceilings-little").unwrap()
        };
        let first = |rec: &record::Record| rec.rows[0][..5].to_vec();
        // 400 ns × 3200 GB/s = 1 280 000 bytes: 1250 KiB, 12.5 KiB on each of 100 SMs.
        let measured =
            little("\"device read, read-only kernel\",3200,3190,3210,GB/s,x\n");
        assert_eq!(
            first(&measured),
            ["device memory, loads at the read rate", "400", "3200", "1250", "12.5"]
        );
        // 150 ns × 6400 GB/s = 960 000 bytes.
        assert_eq!(measured.rows[1][2..5], ["6400", "938", "9.4"]);
        // A summary from before the read-only kernel: the copy's rate, and it says so.
        let old = little("\"device copy, copy kernel\",3000,2990,3010,GB/s,x\n");
        assert_eq!(
            first(&old)[..3],
            ["device memory, at the copy rate", "400", "3000"]
        );
    }

    /// A folder with the ceilings, a matrix multiply of two steps and ATAX at one float
    /// matrix (whose record states the read ceiling measured beside it).
    fn made_up() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let write = |stem: &str, body: &str| {
            std::fs::write(data.join(format!("{stem}.csv")), body).unwrap();
        };
        write(
            "ceilings-peaks",
            "ceiling,median,min,max,unit\n\
             FP32 multiply-add,60.0,60,60,TFLOP/s\n\
             FP64 multiply-add,30.0,30,30,TFLOP/s\n\
             \"L2 read, inside one launch\",6000,6000,6000,GB/s\n\
             \"device memory, best copy\",3000,3000,3000,GB/s\n",
        );
        write(
            "ceilings-summary",
            "ceiling,median,min,max,unit\n\
             \"device read, read-only kernel\",3200,3200,3200,GB/s\n",
        );
        write(
            "tiling-kernels",
            "# size: M = 600, N = 600, K = 600\n\
             step,gflops_median\n1 naive,5000\n2 shared,8000\ncuBLAS SGEMM,50000\n",
        );
        // 1000 × 1000 floats: 4 MFLOP; 8 MB moved by the two kernels, 4 MB fused.
        write(
            "atax-kernels",
            "# read_ceiling: 3100 GB/s (read-only kernel, 1024 MiB, L2 cold)\n\
             dataset,type,variant,mb_moved,cold_median_us\n\
             L 1000×1000,float,baseline,8,40\n\
             L 1000×1000,float,tiled,8,5\n\
             L 1000×1000,float,fused,4,1.4\n",
        );
        tmp
    }

    /// The x range, series, named points and read roof of figure `stem` of `dir`.
    struct Drawn {
        x: (f64, f64),
        series: Vec<String>,
        named: Vec<(String, String)>,
        others: usize,
        read_gbps: Option<f64>,
    }

    fn drawn(dir: &Path, stem: &str) -> Drawn {
        let rec = read(dir, stem).unwrap();
        let spec = Spec::from_meta(&rec.meta).unwrap();
        let xs: Vec<f64> = rec.rows.iter().map(|r| r[1].parse().unwrap()).collect();
        let mut series: Vec<String> = Vec::new();
        for r in &rec.rows {
            if !series.contains(&r[0]) {
                series.push(r[0].clone());
            }
        }
        let of = |name: &'static str| rec.rows.iter().filter(move |r| r[0] == name);
        // Every named point carries a label, keyed by its x and y.
        let named: Vec<(String, String)> = of(NAMED)
            .map(|r| {
                let key = format!(
                    "{}{}{}",
                    r[1],
                    plot::LABEL_AT,
                    r[2].parse::<f64>().unwrap()
                );
                let label = spec.point_labels.iter().find(|(k, _)| *k == key);
                (
                    r[1].clone(),
                    label.expect("a named point without its label").1.clone(),
                )
            })
            .collect();
        assert_eq!(
            named.len(),
            spec.point_labels.len(),
            "{stem}: a label names nothing"
        );
        assert_eq!(spec.grey.iter().any(|g| g == OTHERS), of(OTHERS).count() > 0);
        Drawn {
            x: (
                xs.iter().copied().fold(f64::INFINITY, f64::min),
                xs.iter().copied().fold(0.0, f64::max),
            ),
            series,
            named,
            others: of(OTHERS).count(),
            read_gbps: rec.meta.get("read_gbps").map(|v| v.parse().unwrap()),
        }
    }

    #[test]
    fn each_figure_spans_its_kernels_names_a_few_and_greys_the_rest() {
        let tmp = made_up();
        write(tmp.path()).unwrap();
        // ATAX at 0.5 and 1 FLOP/byte, far left of the ridge (20): x from 0.25 to 2, not
        // out to the ridge; the chapter's own read ceiling as a second memory roof.
        let atax = drawn(tmp.path(), "atax-roofline");
        assert_eq!(atax.x, (0.25, 2.0));
        assert_eq!(atax.read_gbps, Some(3100.0));
        assert_eq!(atax.series, [COPY_ROOF, READ_ROOF, L2_ROOF, OTHERS, NAMED]);
        // Closest to its roof (fused: 4 MFLOP in 1.4 µs against 3000 GB/s × 1) and farthest
        // (baseline), the tiled one grey.
        let labels: Vec<&str> = atax.named.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["fused, FP32", "baseline, FP32"]);
        assert_eq!(atax.others, 1);
        // The matrix multiply (100 FLOP/byte) lies right of the ridge: the range reaches
        // back to the ridge, and L2's roof, at the peak from 10 FLOP/byte on, is not drawn.
        let tiling = drawn(tmp.path(), "tiling-roofline");
        assert_eq!(tiling.x, (10.0, 100.0));
        assert_eq!(tiling.read_gbps, None);
        assert_eq!(tiling.series, [COPY_ROOF, OTHERS, NAMED]);
        let labels: Vec<&str> = tiling.named.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["cuBLAS SGEMM", "1 naive"]);
        // The whole book: the ceilings run's read rate; one name per chapter and precision.
        let book = drawn(tmp.path(), "ceilings-roofline");
        assert_eq!(book.read_gbps, Some(3200.0));
        let labels: Vec<&str> = book.named.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["matrix multiply: cuBLAS SGEMM", "ATAX fused, FP32"]);
        assert_eq!(book.others, 4);
        assert!(book.series.len() <= 6);
    }

    #[test]
    fn the_roof_is_the_lower_of_memory_and_arithmetic() {
        let roof = Roof {
            fp32_gflops: 60_000.0,
            fp64_gflops: 30_000.0,
            l2_gbps: 7_000.0,
            dram_gbps: 3_000.0,
            meta: Meta::default(),
        };
        assert_eq!(roof.attainable(1.0, false, false), 3_000.0);
        assert_eq!(roof.attainable(1.0, false, true), 7_000.0);
        assert_eq!(roof.attainable(100.0, false, false), 60_000.0);
        assert_eq!(roof.attainable(100.0, true, false), 30_000.0);
        // Each roof rises to the peak at its ridge: 60 000 / 3000 = 20 FLOP/byte for the
        // copy, 60 000 / 4000 = 15 for reads alone.
        let lines = roof_points(&roof, Some(4_000.0), (0.1, 100.0));
        let ends: Vec<(&str, &str, f64)> =
            lines.iter().map(|p| (p.series.as_str(), p.x.as_str(), p.y)).collect();
        assert_eq!(
            ends,
            [
                (COPY_ROOF, "0.1", 300.0),
                (COPY_ROOF, "20", 60_000.0),
                (READ_ROOF, "0.1", 400.0),
                (READ_ROOF, "15", 60_000.0),
                (L2_ROOF, "0.1", 700.0),
                (L2_ROOF, "8.571428571428571", 60_000.0),
            ]
        );
        // A range that ends left of the ridges: the roofs stop at its edge, below the peak.
        let short = roof_points(&roof, None, (0.1, 2.0));
        assert_eq!(short.len(), 4);
        assert_eq!((short[1].x.as_str(), short[1].y), ("2", 6_000.0));
        // A range right of a roof's ridge: that roof is the peak there, not drawn.
        let right = roof_points(&roof, None, (10.0, 1000.0));
        let series: Vec<&str> = right.iter().map(|p| p.series.as_str()).collect();
        assert_eq!(series, [COPY_ROOF, COPY_ROOF]);
    }
}
