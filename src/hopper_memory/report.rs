//! Every table and figure of the chapter "Asynchronous memory on Hopper", drawn from
//! [`Results`].

use crate::harness::format::sig3;
use crate::harness::plot::{Axis, PanelBy, Point, Spec};
use crate::harness::skipped::Skipped;
use crate::harness::{Run, Stats};

use super::l2::Reuse;
use super::measure::Results;

const MIB: usize = 1 << 20;

#[derive(serde::Serialize)]
struct LadderRow {
    barrier: String,
    what: String,
    who: String,
    median_ns: String,
    min_ns: String,
    max_ns: String,
    measured_as: String,
}

#[derive(serde::Serialize)]
struct LookupRow {
    table_mib: String,
    window: String,
    median_us: String,
    min_us: String,
    max_us: String,
    stream_gbps: String,
    speedup: String,
}

#[derive(serde::Serialize)]
struct RereadRow {
    reuse: String,
    table_mib: String,
    window: String,
    median_us: String,
    min_us: String,
    max_us: String,
    gbps: String,
    speedup: String,
}

#[derive(serde::Serialize)]
struct ExchangeRow {
    cluster: u32,
    dsmem_ns: String,
    global_ns: String,
    global_over_dsmem: String,
}

#[derive(serde::Serialize)]
struct MatrixRow {
    side: usize,
    kernel: String,
    pitch: String,
    median_gbps: String,
    min_gbps: String,
    max_gbps: String,
    of_best_copy: String,
}

#[derive(serde::Serialize)]
struct CodeRow {
    kernel: String,
    registers: i32,
    instructions: String,
    global_loads: String,
    global_stores: String,
    shared_loads: String,
    shared_stores: String,
    tma: String,
}

fn ns(ms: f64) -> String {
    sig3(ms * 1e6)
}

/// Writes the tables and figures of the sections that ran, and prints a summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let skipped: Vec<Skipped> = r.parts_skipped.iter().map(Skipped::section).collect();
    crate::harness::skipped::record(run, "hopper_memory-skipped", &skipped)?;
    if !r.ladder.is_empty() {
        ladder(run, r)?;
    }
    if !r.lookups.is_empty() {
        lookups(run, r)?;
    }
    if !r.rereads.is_empty() {
        rereads(run, r)?;
    }
    if !r.exchanges.is_empty() {
        exchanges(run, r)?;
    }
    if !r.stages.is_empty() {
        stages(run, r)?;
    }
    if !r.matrices.is_empty() {
        matrices(run, r)?;
    }
    if r.code.iter().any(|c| c.sass.is_some()) {
        code(run, r)?;
    }
    if !r.sgemm.is_empty() {
        sgemm(run, r)?;
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct SgemmRow {
    size: String,
    kernel: String,
    median_ms: String,
    min_ms: String,
    max_ms: String,
    median_tflops: String,
    of_cublas: String,
}

#[derive(serde::Serialize)]
struct SgemmCodeRow {
    kernel: String,
    registers: i32,
    spill_bytes: i32,
    shared_kib: String,
    blocks_per_sm: u32,
    loop_instructions: String,
    loop_ffma: String,
    loop_lds: String,
    ffma_share: String,
}

fn sgemm(run: &Run, r: &Results) -> anyhow::Result<()> {
    let cublas = crate::tiling::model::Step::Cublas.label();
    let mut rows = Vec::new();
    for g in &r.sgemm {
        let (m, n, k) = g.size;
        let flops = 2.0 * m as f64 * n as f64 * k as f64;
        let base = r
            .sgemm
            .iter()
            .find(|c| c.size == g.size && c.kernel == cublas)
            .map(|c| c.time.median_ms);
        let of = base
            .map_or("-".into(), |b| format!("{}%", sig3(100.0 * b / g.time.median_ms)));
        let row = SgemmRow {
            size: format!("{m} x {n} x {k}"),
            kernel: format!("`{}`", g.kernel),
            median_ms: sig3(g.time.median_ms),
            min_ms: sig3(g.time.min_ms),
            max_ms: sig3(g.time.max_ms),
            median_tflops: sig3(g.time.rate(flops / 1e12).median),
            of_cublas: of,
        };
        println!(
            "{:<22} {:<32} {:>9} ms {:>7} TFLOP/s {:>7} of cuBLAS",
            row.size, g.kernel, row.median_ms, row.median_tflops, row.of_cublas
        );
        rows.push(row);
    }
    let checked: Vec<String> =
        r.sgemm_checked.iter().map(|(m, n, k)| format!("{m}x{n}x{k}")).collect();
    run.table(
        "hopper_memory-sgemm",
        "FP32 C = A B (M x N x K): the section's kernels beside the tiling chapter's step \
         6 and cuBLAS SGEMM on the same operands (median, min and max over repetitions)",
        &[
            ("l2", "cold"),
            ("flops", "2 M N K"),
            ("verified", "sampled rows at every timed size"),
            ("checked_every_element", &checked.join(", ")),
            (
                "headers",
                "median_ms = median (ms) | min_ms = min (ms) | max_ms = max (ms) | \
                 median_tflops = TFLOP/s (median) | of_cublas = of cuBLAS",
            ),
        ],
        &rows,
    )?;
    let code: Vec<SgemmCodeRow> = r
        .sgemm_code
        .iter()
        .map(|c| SgemmCodeRow {
            kernel: format!("`{}`", c.kernel),
            registers: c.registers,
            spill_bytes: c.spill_bytes,
            shared_kib: sig3(c.shared_bytes as f64 / 1024.0),
            blocks_per_sm: c.blocks_per_sm,
            loop_instructions: c
                .loop_census
                .map_or("-".into(), |l| l.instructions.to_string()),
            loop_ffma: c.loop_census.map_or("-".into(), |l| l.ffma.to_string()),
            loop_lds: c.loop_census.map_or("-".into(), |l| l.shared_loads.to_string()),
            ffma_share: c.loop_census.map_or("-".into(), |l| {
                format!("{}%", sig3(100.0 * l.ffma as f64 / l.instructions as f64))
            }),
        })
        .collect();
    run.table(
        "hopper_memory-sgemm-code",
        "The section's kernels: registers and spills per thread, shared memory per \
         block, blocks per SM (256 threads each), and the instructions of the main loop's \
         SASS (the loop with the most FFMA; it holds both the 16-byte and the 4-byte load \
         paths)",
        &[
            ("sass", "ptxas + nvdisasm, sm_90, of the PTX the run compiled"),
            (
                "headers",
                "spill_bytes = spilled bytes | shared_kib = shared (KiB) | \
                 blocks_per_sm = blocks / SM | loop_instructions = loop | loop_ffma = FFMA \
                 | loop_lds = LDS | ffma_share = FFMA share",
            ),
        ],
        &code,
    )
}

fn ladder(run: &Run, r: &Results) -> anyhow::Result<()> {
    let rows: Vec<LadderRow> = r
        .ladder
        .iter()
        .map(|g| LadderRow {
            barrier: g.barrier.clone(),
            what: g.timed.label().into(),
            who: g.who.clone(),
            median_ns: ns(g.per.median_ms),
            min_ns: ns(g.per.min_ms),
            max_ns: ns(g.per.max_ms),
            measured_as: g.how.clone(),
        })
        .collect();
    println!(
        "{:<32} {:<50} {:<42} {:>10}",
        "barrier", "what is timed", "who waits", "ns (median)"
    );
    for row in &rows {
        println!(
            "{:<32} {:<50} {:<42} {:>10}",
            row.barrier, row.what, row.who, row.median_ns
        );
    }
    if let Some(why) = &r.refused_cluster {
        println!("a cluster of 32 blocks: {why}");
    }
    let refused = r.refused_cluster.clone().unwrap_or_else(|| "none".into());
    // The parts of the chapter this GPU could not run, then the cluster sizes it refused.
    let not_measured: Vec<String> = r
        .parts_skipped
        .iter()
        .map(|s| format!("{}: {}", s.section, s.why))
        .chain(r.skipped.iter().cloned())
        .collect();
    let skipped = if not_measured.is_empty() {
        "none".to_string()
    } else {
        not_measured.join("; ")
    };
    for s in &r.skipped {
        println!("not measured: {s}");
    }
    run.table(
        "hopper_memory-ladder",
        "The synchronisation ladder: what one barrier costs, alone and with its half of a \
         round's write and check, from a block to the whole GPU (median, min and max over \
         repetitions)",
        &[
            ("l2", "warm (nothing but the barrier words is read)"),
            ("refused_cluster_32", &refused),
            ("not_measured", &skipped),
            (
                "headers",
                "what = what is timed | who = who waits | median_ns = median (ns) | \
                 min_ns = min (ns) | max_ns = max (ns) | measured_as = measured as",
            ),
        ],
        &rows,
    )
}

fn lookups(run: &Run, r: &Results) -> anyhow::Result<()> {
    let stream = r.stream_bytes as f64;
    let mut rows = Vec::new();
    let mut base: Option<f64> = None;
    for l in &r.lookups {
        if l.window.is_none() {
            base = Some(l.time.median_ms);
        }
        let rate = l.time.rate(2.0 * stream / 1e9);
        rows.push(LookupRow {
            table_mib: format!("{}", l.table_bytes / MIB),
            window: match &l.window {
                None => "none".into(),
                Some(w) => format!(
                    "persisting, {} MiB, hit ratio {:.2}, carve-out {} MiB",
                    w.bytes / MIB,
                    w.hit_ratio,
                    w.persisting / MIB
                ),
            },
            median_us: sig3(l.time.median_ms * 1e3),
            min_us: sig3(l.time.min_ms * 1e3),
            max_us: sig3(l.time.max_ms * 1e3),
            stream_gbps: sig3(rate.median),
            speedup: match (l.window, base) {
                (Some(_), Some(b)) => format!("{:.2}", b / l.time.median_ms),
                _ => "1".into(),
            },
        });
    }
    for row in &rows {
        println!(
            "lookup table {:>4} MiB, window {:<48} {:>9} µs  speedup {}",
            row.table_mib, row.window, row.median_us, row.speedup
        );
    }
    let limits = r.l2_limits.expect("measured with the lookups");
    let max_window = format!("{} MiB", limits.max_window / MIB);
    let max_persisting = format!("{} MiB", limits.max_persisting / MIB);
    let stream_mib = format!("{} MiB read and written", r.stream_bytes / MIB);
    run.table(
        "hopper_memory-l2",
        "A table looked up while a stream flows past, without and with a persisting \
         access-policy window on the table (median, min and max over repetitions)",
        &[
            ("l2", "warm: repetitions back to back, the window set before the first"),
            ("stream", &stream_mib),
            ("max_window", &max_window),
            ("max_persisting", &max_persisting),
            (
                "headers",
                "table_mib = table (MiB) | median_us = median (µs) | min_us = min (µs) | \
                 max_us = max (µs) | stream_gbps = stream (GB/s) | speedup = speedup over \
                 no window",
            ),
        ],
        &rows,
    )
}

/// `hopper_memory-l2-reuse` (table) and `hopper_memory-l2-sweep` (figure): the table
/// read, streamed past and read again, without and with windows, at every table size.
fn rereads(run: &Run, r: &Results) -> anyhow::Result<()> {
    let limits = r.l2_limits.expect("measured with the rereads");
    let stream = r.reread_stream_bytes;
    let max = limits.max_persisting;
    let mut rows = Vec::new();
    let mut points = Vec::new();
    let carve_mib = max as f64 / MIB as f64;
    for g in &r.rereads {
        let base = r
            .rereads
            .iter()
            .find(|b| b.reuse == g.reuse && b.table_bytes == g.table_bytes)
            .filter(|b| b.window.is_none())
            .expect("every table size runs without a window first");
        let b = base.time.median_ms;
        let mib = g.table_bytes as f64 / MIB as f64;
        let moved = match g.reuse {
            Reuse::Fused => 2.0 * (g.table_bytes + stream) as f64,
            Reuse::AfterFlush => g.table_bytes as f64,
        };
        rows.push(RereadRow {
            reuse: g.reuse.label().into(),
            table_mib: format!("{mib:.0}"),
            window: match &g.window {
                None => "none".into(),
                Some(w) => format!(
                    "persisting, hit ratio {:.2}, carve-out {} MiB",
                    w.hit_ratio,
                    sig3(w.persisting as f64 / MIB as f64)
                ),
            },
            median_us: sig3(g.time.median_ms * 1e3),
            min_us: sig3(g.time.min_ms * 1e3),
            max_us: sig3(g.time.max_ms * 1e3),
            gbps: sig3(g.time.rate(moved / 1e9).median),
            speedup: format!("{:.2}", b / g.time.median_ms),
        });
        if let Some(w) = &g.window {
            // Which window: the carve-out at its maximum holding its share of the
            // table, a carve-out of the table's size, or a table larger than the
            // carve-out marked persisting whole.
            let kind = if w.persisting < max {
                "carve-out = table"
            } else if w.hit_ratio < 1.0 || g.table_bytes <= max {
                "largest carve-out"
            } else {
                "largest carve-out, all marked"
            };
            let series = format!("{}: {kind}", g.reuse.label());
            let t = &g.time;
            let x = format!("{mib:.0}");
            let (med, lo, hi) = (b / t.median_ms, b / t.max_ms, b / t.min_ms);
            points.push(Point::new(&series, x, med, lo, hi));
        }
    }
    for row in &rows {
        println!(
            "{:<24} table {:>4} MiB, window {:<46} {:>9} µs  speedup {}",
            row.reuse, row.table_mib, row.window, row.median_us, row.speedup
        );
    }
    let stream_note = format!(
        "read, stream, read again: {stream} bytes read and {stream} written between the \
         table's two passes; one read after a flush: no stream"
    );
    let carve = format!("{} MiB", sig3(carve_mib));
    let l2_state = "read, stream, read again: warm, repetitions back to back, each finds \
                    L2 as the last left it (the stream's end and, with a window, the \
                    persisting lines); one read after a flush: cold, a buffer twice the \
                    L2 read before every repetition (only persisting lines can stay)";
    run.table(
        "hopper_memory-l2-reuse",
        "A table reused: summed, a stream copied past it, summed again in one kernel; or \
         summed once after L2 was flushed; without and with a persisting window on the \
         table (median, min and max over repetitions)",
        &[
            ("l2", l2_state),
            ("stream", &stream_note),
            ("max_persisting", &carve),
            (
                "headers",
                "reuse = use | table_mib = table (MiB) | median_us = median (µs) | \
                 min_us = min (µs) | max_us = max (µs) | gbps = GB/s (table passes + \
                 stream) | speedup = speedup over no window",
            ),
        ],
        &rows,
    )?;
    run.figure(
        "hopper_memory-l2-sweep",
        &[("l2", l2_state), ("stream", &stream_note), ("max_persisting", &carve)],
        &sweep_spec(carve_mib, &points),
        &points,
    )
}

/// How `hopper_memory-l2-sweep` is drawn: one panel per use (the part of a series name
/// before `: `), the same windows in each, so the lines of one use no longer cross those of
/// the other; each window named for what it does, not for how the code sizes it.
fn sweep_spec(carve_mib: f64, points: &[Point]) -> Spec {
    let mut spec = Spec::line(
        "A table reused past a stream or a flush: the persisting window's speedup",
        "table (MiB)",
        "speedup over no window",
    )
    .panels(PanelBy::SeriesBeforeColon, 1)
    .ref_line(Axis::Y, "1", "no window")
    .ref_line(Axis::X, &format!("{carve_mib:.2}"), "persisting carve-out");
    let mut named: Vec<&str> = Vec::new();
    for p in points {
        if named.contains(&p.series.as_str()) {
            continue;
        }
        named.push(&p.series);
        let Some((reuse, kind)) = p.series.split_once(": ") else { continue };
        let what = match kind {
            "carve-out = table" => "carve-out sized to the table",
            "largest carve-out" => "largest carve-out, the part that fits marked",
            _ => "largest carve-out, the whole table marked",
        };
        spec = spec.series_label(&p.series, &format!("{reuse}: {what}"));
    }
    spec
}

fn exchanges(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut clusters: Vec<u32> = r.exchanges.iter().map(|e| e.cluster).collect();
    clusters.dedup();
    let find = |c: u32, dsmem: bool| -> &Stats {
        &r.exchanges
            .iter()
            .find(|e| e.cluster == c && e.dsmem == dsmem)
            .expect("both")
            .per_round
    };
    for c in clusters {
        let (d, g) = (find(c, true), find(c, false));
        rows.push(ExchangeRow {
            cluster: c,
            dsmem_ns: ns(d.median_ms),
            global_ns: ns(g.median_ms),
            global_over_dsmem: format!("{:.2}", g.median_ms / d.median_ms),
        });
        println!(
            "cluster of {c:>2}: one round through DSMEM {:>7} ns, through L2 {:>7} ns",
            ns(d.median_ms),
            ns(g.median_ms)
        );
    }
    let rounds = format!(
        "{} vs {} rounds, difference",
        r.exchange_rounds,
        2 * r.exchange_rounds
    );
    run.table(
        "hopper_memory-dsmem",
        "One all-reduce round inside a cluster (publish, barrier, read every block's value, \
         barrier): through distributed shared memory or through L2 (median over repetitions)",
        &[
            ("l2", "warm"),
            ("measured_as", &rounds),
            (
                "headers",
                "cluster = blocks per cluster | dsmem_ns = through DSMEM (ns) | global_ns = \
                 through L2 (ns) | global_over_dsmem = L2 / DSMEM",
            ),
        ],
        &rows,
    )
}

/// `hopper_memory-stages`: the stream's read rate against the load bytes in flight per SM.
/// Both axes count loads only, so that Little's law reads straight off the figure: the
/// latency the loads see is the bytes in flight over the read rate.
fn stages(run: &Run, r: &Results) -> anyhow::Result<()> {
    let read = r.stream_bytes as f64;
    let points: Vec<Point> = r
        .stages
        .iter()
        .map(|s| {
            let kib = load_kib_in_flight_per_sm(s);
            let series = format!("{} threads per SM", s.blocks_per_sm * 128);
            Point::rate(&series, kib, &s.time, read, 1e9)
        })
        .collect();
    for s in &r.stages {
        let gbps = s.time.rate(read / 1e9).median;
        println!(
            "cp.async, {} stages, {:>4} threads per SM: {:>5} KiB of loads in flight per \
             SM, {:>6} GB/s read",
            s.stages,
            s.blocks_per_sm * 128,
            load_kib_in_flight_per_sm(s),
            sig3(gbps)
        );
    }
    run.figure(
        "hopper_memory-stages",
        &[
            ("l2", "cold"),
            ("stream", &format!("{} MiB read and written", r.stream_bytes / MIB)),
            ("in_flight", "load bytes in flight per SM: threads x 16 bytes x stages"),
            ("rate", "bytes read per second (the stream writes as many)"),
        ],
        &Spec::line(
            "Streaming through cp.async: read bandwidth against load bytes in flight per \
             SM (1 to 4 stages along each line)",
            "load bytes in flight per SM (KiB)",
            "GB/s read",
        )
        .log_x(),
        &points,
    )
}

/// The bytes of loads one SM has requested and not yet received, in KiB: its threads,
/// 16 bytes a copy, one copy per stage.
fn load_kib_in_flight_per_sm(s: &super::measure::StageRun) -> f64 {
    (s.blocks_per_sm * 128 * 16 * s.stages) as f64 / 1024.0
}

fn matrices(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for m in &r.matrices {
        let bytes = 2.0 * (m.side * m.side * 4) as f64;
        let best_copy = r
            .matrices
            .iter()
            .filter(|c| c.side == m.side && !c.kernel.contains("transpose"))
            .filter_map(|c| c.time.as_ref().ok().map(|t| t.median_ms))
            .fold(f64::INFINITY, f64::min);
        let pitch = if m.pitch == m.side {
            format!("{} (none)", m.pitch)
        } else {
            format!("{}", m.pitch)
        };
        let row = match &m.time {
            Ok(t) => {
                let rate = t.rate(bytes / 1e9);
                MatrixRow {
                    side: m.side,
                    kernel: format!("`{}`", m.kernel),
                    pitch,
                    median_gbps: sig3(rate.median),
                    min_gbps: sig3(rate.worst),
                    max_gbps: sig3(rate.best),
                    of_best_copy: format!("{:.1}%", 100.0 * best_copy / t.median_ms),
                }
            }
            Err(why) => MatrixRow {
                side: m.side,
                kernel: format!("`{}`", m.kernel),
                pitch,
                median_gbps: "refused".into(),
                min_gbps: "–".into(),
                max_gbps: "–".into(),
                of_best_copy: why.replace('|', "/"),
            },
        };
        println!(
            "side {:>5} {:<20} pitch {:<12} {:>7} GB/s  {}",
            row.side, row.kernel, row.pitch, row.median_gbps, row.of_best_copy
        );
        rows.push(row);
    }
    run.table(
        "hopper_memory-tma",
        "Copies and transposes of square float matrices, with and without a row pitch \
         (GB/s read + write, median, min and max over repetitions; share of the faster copy)",
        &[
            ("l2", "cold"),
            (
                "headers",
                "pitch = row pitch (floats) | median_gbps = median (GB/s) | min_gbps = min \
                 (GB/s) | max_gbps = max (GB/s) | of_best_copy = of the best copy",
            ),
        ],
        &rows,
    )
}

fn code(run: &Run, r: &Results) -> anyhow::Result<()> {
    use crate::harness::sass::{is_global_load, is_global_store};
    let rows: Vec<CodeRow> = r
        .code
        .iter()
        .map(|c| {
            let count =
                |pred: &dyn Fn(&crate::harness::sass::Instr) -> bool| match &c.sass {
                    Some(f) => f.count(pred).to_string(),
                    None => "–".into(),
                };
            CodeRow {
                kernel: format!("`{}`", c.kernel),
                registers: c.registers,
                instructions: count(&|_| true),
                global_loads: count(&is_global_load),
                global_stores: count(&is_global_store),
                shared_loads: count(&|i| i.base() == "LDS"),
                shared_stores: count(&|i| i.base() == "STS"),
                tma: count(&|i| {
                    i.base().starts_with("UTMA") || i.base().starts_with("UBLKCP")
                }),
            }
        })
        .collect();
    run.table(
        "hopper_memory-sass",
        "What the copy and transpose kernels are made of: registers per thread (driver) and \
         instructions in the machine code (SASS, ptxas + nvdisasm)",
        &[(
            "headers",
            "instructions = SASS instructions | global_loads = global loads (LDG) | \
             global_stores = global stores (STG) | shared_loads = shared loads (LDS) | \
             shared_stores = shared stores (STS) | tma = TMA (UTMA*)",
        )],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The book's `hopper_memory-l2-sweep` was drawn with the spec this module writes for
    /// its series and carve-out: a change to how the figure is drawn changes the committed
    /// record too.
    #[test]
    fn the_books_sweep_carries_the_spec_the_report_writes() {
        let record = crate::harness::record::book_record("hopper_memory-l2-sweep");
        let refs = record.meta.get("ref_lines").unwrap();
        let carve_mib: f64 = refs
            .split("x = ")
            .nth(1)
            .and_then(|v| v.split(':').next())
            .unwrap()
            .parse()
            .unwrap();
        let points: Vec<Point> = record
            .rows
            .iter()
            .map(|r| Point::new(&r[0], &r[1], 1.0, 1.0, 1.0))
            .collect();
        assert_eq!(Spec::read(&record.meta).unwrap(), sweep_spec(carve_mib, &points));
    }
}
