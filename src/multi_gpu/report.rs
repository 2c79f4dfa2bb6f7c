//! Every figure and table of the chapter "Memory across GPUs", drawn from [`Results`].

use crate::harness::format::{ratio, sig3};
use crate::harness::plot::{Axis, Point, Spec};
use crate::harness::Run;

use super::measure::Results;
use super::nccl::Collective;
use super::peer::{ChaseTarget, Path, PeerPoint};

const MIB: usize = 1 << 20;

/// A size in the units a reader reads: `8 B`, `64 KiB`, `1024 MiB`.
pub fn size_text(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// What every record of the run says about where it was measured, beyond the harness's
/// provenance: both GPUs, NCCL, multicast off, the link.
fn provenance(r: &Results) -> Vec<(&'static str, String)> {
    let gpus = r
        .devices
        .iter()
        .map(|d| format!("{}: {} ({})", d.ordinal, d.name, d.pci_bus_id))
        .collect::<Vec<_>>()
        .join("; ");
    let mut v = vec![
        ("gpu", r.gpus_line()),
        ("gpus", gpus),
        ("nccl", format!("{} (loaded through cudarc)", r.nccl_version)),
        (
            "nccl_nvls_enable",
            std::env::var(super::nccl::NVLS_VARIABLE)
                .unwrap_or_else(|_| "unset".into()),
        ),
    ];
    v.push((
        "link",
        match r.link_01() {
            Some(cell) => format!(
                "GPU 0 to GPU 1: {cell} ({}), as nvidia-smi topo -m reports it",
                super::devices::describe_link(cell)
            ),
            None if r.gpu_count() < 2 => "one GPU".into(),
            None => "not reported (nvidia-smi not found)".into(),
        },
    ));
    v
}

fn with<'a>(
    base: &'a [(&'static str, String)],
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    base.iter().map(|(k, v)| (*k, v.as_str())).chain(extra.iter().copied()).collect()
}

/// `meta` and one more key.
fn plus<'a>(
    meta: &[(&'a str, &'a str)],
    key: &'a str,
    value: &'a str,
) -> Vec<(&'a str, &'a str)> {
    meta.iter().copied().chain(std::iter::once((key, value))).collect()
}

#[derive(serde::Serialize)]
struct DeviceRow {
    #[serde(rename = "GPU")]
    gpu: usize,
    name: String,
    #[serde(rename = "PCI address")]
    pci: String,
    memory: String,
    #[serde(rename = "SMs")]
    sms: i32,
    #[serde(rename = "L2")]
    l2: String,
}

#[derive(serde::Serialize)]
struct PairRow {
    from: usize,
    to: usize,
    #[serde(rename = "peer access")]
    access: &'static str,
    #[serde(rename = "native atomics")]
    atomics: &'static str,
    #[serde(rename = "performance rank")]
    rank: i32,
    #[serde(rename = "nvidia-smi")]
    smi: String,
    link: String,
}

#[derive(serde::Serialize)]
struct PathRow {
    path: String,
    size: String,
    #[serde(rename = "GB/s")]
    median: String,
    min: String,
    max: String,
    #[serde(rename = "of the copy engine, one way")]
    of_copy_engine: String,
}

#[derive(serde::Serialize)]
struct LatencyRow {
    #[serde(rename = "GPU loads from")]
    target: String,
    footprint: String,
    #[serde(rename = "dependent loads")]
    steps: u64,
    #[serde(rename = "ns per load")]
    median: String,
    min: String,
    max: String,
}

#[derive(serde::Serialize)]
struct CollectiveRow {
    collective: &'static str,
    size: String,
    #[serde(rename = "µs")]
    us: String,
    #[serde(rename = "algbw GB/s")]
    algbw: String,
    #[serde(rename = "busbw GB/s")]
    busbw: String,
}

#[derive(serde::Serialize)]
struct TorchRow {
    size: String,
    #[serde(rename = "cudarc µs")]
    ours_us: String,
    #[serde(rename = "torch µs")]
    torch_us: String,
    #[serde(rename = "cudarc busbw GB/s")]
    ours: String,
    #[serde(rename = "torch busbw GB/s")]
    torch: String,
    #[serde(rename = "cudarc / torch")]
    ratio: String,
}

#[derive(serde::Serialize)]
struct AtaxRow {
    #[serde(rename = "GPUs")]
    gpus: usize,
    matrix: String,
    #[serde(rename = "MiB")]
    mib: usize,
    #[serde(rename = "kernels µs")]
    kernels: String,
    #[serde(rename = "all-reduce µs")]
    all_reduce: String,
    #[serde(rename = "kernels + all-reduce µs")]
    combined: String,
    #[serde(rename = "all-reduce share")]
    share: String,
    #[serde(rename = "speedup, kernels")]
    speedup_kernels: String,
    #[serde(rename = "speedup, with all-reduce")]
    speedup_combined: String,
    #[serde(rename = "end to end ms")]
    end_to_end: String,
    #[serde(rename = "speedup, end to end")]
    speedup_end_to_end: String,
}

#[derive(serde::Serialize)]
struct TargetRow {
    target: String,
    required: &'static str,
    measured: String,
    met: &'static str,
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn percent(v: f64) -> String {
    format!("{:.1}%", 100.0 * v)
}

/// The fastest copy kernel at the largest size, over the full grid and the in-flight sweep:
/// (what it was, GB/s).
fn best_kernel(r: &Results) -> Option<(String, f64)> {
    let full = [Path::KernelPush, Path::KernelPull]
        .into_iter()
        .filter_map(|p| at_largest(&r.peer, p))
        .map(|p| (format!("{}, every SM", p.path.name()), p.gbps().median));
    let swept = r.in_flight.iter().map(|p| {
        (
            format!("{}, {} blocks", p.path.name(), p.blocks),
            p.time.rate(p.bytes as f64 / 1e9).median,
        )
    });
    full.chain(swept).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The largest size of the peer sweep and the point of `path` there.
fn at_largest(points: &[PeerPoint], path: Path) -> Option<&PeerPoint> {
    let max = points.iter().map(|p| p.bytes).max()?;
    points.iter().find(|p| p.path == path && p.bytes == max)
}

/// Writes the chapter's figures and tables and prints its numbers.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let base = provenance(r);
    let meta = with(&base, &[]);

    let devices: Vec<DeviceRow> = r
        .devices
        .iter()
        .map(|d| DeviceRow {
            gpu: d.ordinal,
            name: d.name.clone(),
            pci: d.pci_bus_id.clone(),
            memory: format!("{:.1} GiB", d.memory_gib),
            sms: d.sms,
            l2: format!("{} MiB", d.l2_mib),
        })
        .collect();
    run.table("multi_gpu-devices", "The GPUs of this run", &meta, &devices)?;
    println!("NCCL {}; {}", r.nccl_version, r.gpus_line());

    if !r.pairs.is_empty() {
        let rows: Vec<PairRow> = r
            .pairs
            .iter()
            .map(|p| PairRow {
                from: p.from,
                to: p.to,
                access: yes(p.access),
                atomics: yes(p.native_atomics),
                rank: p.performance_rank,
                smi: p.link.clone().unwrap_or_else(|| "–".into()),
                link: p
                    .link
                    .as_deref()
                    .map(super::devices::describe_link)
                    .unwrap_or_else(|| "–".into()),
            })
            .collect();
        let title = "What links the GPUs: the CUDA driver's peer attributes (cuDeviceGetP2PAttribute) \
                     and nvidia-smi topo -m";
        run.table("multi_gpu-topology", title, &meta, &rows)?;
        for p in &rows {
            println!(
                "GPU {} -> GPU {}: peer access {}, native atomics {}, rank {}, {} ({})",
                p.from, p.to, p.access, p.atomics, p.rank, p.smi, p.link
            );
        }
    }

    report_peer(run, r, &meta)?;
    report_latency(run, r, &meta)?;
    report_collectives(run, r, &base)?;
    report_atax(run, r, &meta)?;
    report_targets(run, r, &meta)?;
    for s in &r.skipped {
        println!("skipped: {s}");
    }
    Ok(())
}

fn report_peer(run: &Run, r: &Results, meta: &[(&str, &str)]) -> anyhow::Result<()> {
    let copy = &r.local_copy;
    // A copy within one GPU reads and writes each byte: bytes copied per second is half its
    // read + write rate, the number comparable with a copy that crosses to another GPU.
    let copied = |s: &crate::harness::Stats| s.rate(copy.bytes as f64 / 1e9);
    let mut rows = vec![
        PathRow {
            path: "one GPU, copy kernel (L2 cold)".into(),
            size: size_text(copy.bytes),
            median: sig3(copied(&copy.kernel).median),
            min: sig3(copied(&copy.kernel).worst),
            max: sig3(copied(&copy.kernel).best),
            of_copy_engine: "–".into(),
        },
        PathRow {
            path: "one GPU, cuMemcpyDtoD (L2 cold)".into(),
            size: size_text(copy.bytes),
            median: sig3(copied(&copy.memcpy).median),
            min: sig3(copied(&copy.memcpy).worst),
            max: sig3(copied(&copy.memcpy).best),
            of_copy_engine: "–".into(),
        },
    ];
    let engine = at_largest(&r.peer, Path::CopyEngine).map(|p| p.gbps().median);
    for path in Path::ALL.into_iter().filter(|p| *p != Path::Local) {
        let Some(p) = at_largest(&r.peer, path) else { continue };
        let g = p.gbps();
        rows.push(PathRow {
            path: path.name(),
            size: size_text(p.bytes),
            median: sig3(g.median),
            min: sig3(g.worst),
            max: sig3(g.best),
            of_copy_engine: engine.map_or("–".into(), |e| percent(g.median / e)),
        });
    }
    let title = "Copies from GPU 0 to GPU 1 (and back, for both ways), the largest size: bytes \
                 that arrived per second, both directions added for both ways; a copy within one \
                 GPU as bytes copied per second (half its read + write rate)";
    run.table("multi_gpu-peer-summary", title, meta, &rows)?;
    for row in &rows {
        println!(
            "{:<36} {:>9} {:>8} GB/s  {}",
            row.path, row.size, row.median, row.of_copy_engine
        );
    }
    if r.peer.is_empty() {
        return Ok(());
    }

    let point = |p: &PeerPoint| {
        Point::rate(
            &p.path.name(),
            p.bytes,
            &p.time,
            (p.path.directions() * p.bytes) as f64,
            1e9,
        )
    };
    let one_way: Vec<Point> = r
        .peer
        .iter()
        .filter(|p| p.path.directions() == 1)
        .map(|p| {
            if p.path == Path::Local {
                Point::rate(
                    "one GPU, cuMemcpyDtoD (bytes copied)",
                    p.bytes,
                    &p.time,
                    p.bytes as f64,
                    1e9,
                )
            } else {
                point(p)
            }
        })
        .collect();
    run.figure(
        "multi_gpu-peer",
        &plus(meta, "l2", "warm (the destination is another GPU)"),
        &Spec::line(
            "Copies from GPU 0 to GPU 1, one direction",
            "bytes copied",
            "GB/s",
        )
        .log_x()
        .x_bytes(),
        &one_way,
    )?;
    let both: Vec<Point> = r
        .peer
        .iter()
        .filter(|p| {
            matches!(
                p.path,
                Path::CopyEngine
                    | Path::CopyEngineBothWays
                    | Path::KernelPush
                    | Path::KernelPushBothWays
            )
        })
        .map(point)
        .collect();
    run.figure(
        "multi_gpu-both-ways",
        &plus(meta, "l2", "warm"),
        &Spec::line(
            "One direction and both at once: bytes that crossed per second",
            "bytes copied each way",
            "GB/s, both directions added",
        )
        .log_x()
        .x_bytes(),
        &both,
    )?;

    if r.in_flight.is_empty() {
        return Ok(());
    }
    let mut points: Vec<Point> = r
        .in_flight
        .iter()
        .map(|p| {
            Point::rate(&p.path.name(), p.in_flight(), &p.time, p.bytes as f64, 1e9)
        })
        .collect();
    let fastest = points.iter().map(|p| p.y).fold(0.0, f64::max);
    let peer_ns =
        r.latency.iter().find(|l| l.target == ChaseTarget::Peer).map(|l| l.ns().0);
    let model = "bytes in flight / peer-load latency";
    let mut spec = Spec::line(
        &format!(
            "The copy kernel with fewer blocks: {} MiB from GPU 0 to GPU 1",
            r.in_flight[0].bytes / MIB
        ),
        "bytes the grid keeps in flight (blocks × 256 threads × 8 loads × 16 B)",
        "GB/s",
    )
    .log_x()
    .x_bytes();
    let latency_text = peer_ns.map(|ns| format!("{ns:.0} ns"));
    if let Some(ns) = peer_ns {
        let mut xs: Vec<usize> = r.in_flight.iter().map(|p| p.in_flight()).collect();
        xs.sort();
        xs.dedup();
        for x in xs {
            let y = x as f64 / ns; // bytes per nanosecond = GB/s
            if y <= 1.25 * fastest {
                points.push(Point::new(model, x, y, y, y));
            }
        }
        spec = spec.dashed(model);
    }
    let extra = plus(meta, "l2", "warm");
    let extra = match &latency_text {
        Some(t) => plus(&extra, "peer_load_latency", t),
        None => extra,
    };
    run.figure("multi_gpu-in-flight", &extra, &spec, &points)?;
    for p in &r.in_flight {
        println!(
            "{:<24} {:>5} blocks {:>9} in flight {:>8} GB/s",
            p.path.name(),
            p.blocks,
            size_text(p.in_flight()),
            sig3(p.time.rate(p.bytes as f64 / 1e9).median)
        );
    }
    Ok(())
}

fn report_latency(run: &Run, r: &Results, meta: &[(&str, &str)]) -> anyhow::Result<()> {
    let rows: Vec<LatencyRow> = r
        .latency
        .iter()
        .map(|l| {
            let (median, min, max) = l.ns();
            LatencyRow {
                target: l.target.name().into(),
                footprint: size_text(l.footprint),
                steps: l.steps,
                median: format!("{median:.0}"),
                min: format!("{min:.0}"),
                max: format!("{max:.0}"),
            }
        })
        .collect();
    let title = format!(
        "How long one load takes: GPU {} follows a chain of dependent loads (one thread, a \
         random cycle with a node every 256 bytes)",
        r.chase_gpu
    );
    run.table("multi_gpu-latency", &title, meta, &rows)?;
    for l in &rows {
        println!("GPU {} loads from {:<26} {:>6} ns", r.chase_gpu, l.target, l.median);
    }
    Ok(())
}

/// The sizes the collectives' table lists: 8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB and the
/// largest.
fn listed(bytes: usize, largest: usize) -> bool {
    bytes == largest
        || [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20].contains(&bytes)
}

fn report_collectives(
    run: &Run,
    r: &Results,
    base: &[(&'static str, String)],
) -> anyhow::Result<()> {
    if r.collectives.is_empty() {
        return Ok(());
    }
    let ranks = r.collectives[0].ranks;
    let name = |c: Collective| format!("NCCL {} (cudarc)", c.name());
    let torch_series = "torch.distributed all-reduce";
    let torch_meta = r
        .torch
        .as_ref()
        .map(|t| format!("{}; {}", t.versions(), t.meta.get("method").unwrap_or("")));
    let ranks_text = ranks.to_string();
    let mut extra: Vec<(&str, &str)> = vec![
        ("ranks", ranks_text.as_str()),
        ("iterations", "20 collectives per timed repetition, after one untimed"),
    ];
    if let Some(t) = &torch_meta {
        extra.push(("torch_reference", t.as_str()));
    }
    let meta = with(base, &extra);

    let mut bus = Vec::new();
    let mut time = Vec::new();
    for p in &r.collectives {
        let b = p.busbw();
        bus.push(Point::new(&name(p.collective), p.bytes, b.median, b.worst, b.best));
        time.push(Point::new(
            &name(p.collective),
            p.bytes,
            p.time.median_ms * 1e3,
            p.time.min_ms * 1e3,
            p.time.max_ms * 1e3,
        ));
    }
    if let Some(t) = &r.torch {
        for p in &t.points {
            bus.push(Point::new(
                torch_series,
                p.bytes,
                p.busbw_gbps,
                p.busbw_gbps * p.time_us.0 / p.time_us.2,
                p.busbw_gbps * p.time_us.0 / p.time_us.1,
            ));
            time.push(Point::new(
                torch_series,
                p.bytes,
                p.time_us.0,
                p.time_us.1,
                p.time_us.2,
            ));
        }
    }
    let mut spec = Spec::line(
        &format!("NCCL collectives over {ranks} GPUs: bus bandwidth"),
        "size (nccl-tests' definition)",
        "bus bandwidth, GB/s",
    )
    .log_x()
    .log_y()
    .x_bytes();
    let mut time_spec = Spec::line(
        &format!("NCCL collectives over {ranks} GPUs: time of one"),
        "size (nccl-tests' definition)",
        "µs per collective",
    )
    .log_x()
    .log_y()
    .x_bytes();
    if r.torch.is_some() {
        spec = spec.dashed(torch_series);
        time_spec = time_spec.dashed(torch_series);
    }
    // A log axis shows positive values only (a rate rounded to zero cannot be drawn).
    bus.retain(|p| p.y_min > 0.0);
    time.retain(|p| p.y_min > 0.0);
    run.figure("multi_gpu-collectives", &meta, &spec, &bus)?;
    run.figure("multi_gpu-collectives-time", &meta, &time_spec, &time)?;

    let largest = r.collectives.iter().map(|p| p.bytes).max().unwrap_or(0);
    let rows: Vec<CollectiveRow> = r
        .collectives
        .iter()
        .filter(|p| listed(p.bytes, largest))
        .map(|p| CollectiveRow {
            collective: p.collective.name(),
            size: size_text(p.bytes),
            us: sig3(p.time.median_ms * 1e3),
            algbw: sig3(p.algbw().median),
            busbw: sig3(p.busbw().median),
        })
        .collect();
    let title = format!(
        "NCCL through cudarc over {ranks} GPUs: time of one collective (median), algorithm \
         bandwidth (size / time) and bus bandwidth (× 2(n−1)/n for all-reduce, (n−1)/n for the \
         others)"
    );
    run.table("multi_gpu-collectives-table", &title, &meta, &rows)?;
    for row in &rows {
        println!(
            "{:<15} {:>9} {:>9} µs {:>8} GB/s algbw {:>8} GB/s busbw",
            row.collective, row.size, row.us, row.algbw, row.busbw
        );
    }

    if let Some(t) = &r.torch {
        let ours = |bytes: usize| {
            r.collectives
                .iter()
                .find(|p| p.collective == Collective::AllReduce && p.bytes == bytes)
        };
        let rows: Vec<TorchRow> = t
            .points
            .iter()
            .filter(|p| listed(p.bytes, largest) || p.bytes == largest)
            .filter_map(|tp| {
                let o = ours(tp.bytes)?;
                Some(TorchRow {
                    size: size_text(tp.bytes),
                    ours_us: sig3(o.time.median_ms * 1e3),
                    torch_us: sig3(tp.time_us.0),
                    ours: sig3(o.busbw().median),
                    torch: sig3(tp.busbw_gbps),
                    ratio: ratio(o.busbw().median, tp.busbw_gbps),
                })
            })
            .collect();
        let title = "NCCL all-reduce through cudarc beside torch.distributed's, same GPUs, same \
                     command: bus bandwidth and time of one all-reduce";
        run.table("multi_gpu-torch", title, &meta, &rows)?;
        for row in &rows {
            println!(
                "all-reduce {:>9}: cudarc {:>8} GB/s, torch {:>8} GB/s ({})",
                row.size, row.ours, row.torch, row.ratio
            );
        }
    }
    Ok(())
}

fn report_atax(run: &Run, r: &Results, meta: &[(&str, &str)]) -> anyhow::Result<()> {
    let one = |rows: usize| r.atax.iter().find(|p| p.gpus == 1 && p.rows == rows);
    let mut table = Vec::new();
    let mut points = Vec::new();
    let max_gpus = r.atax.iter().map(|p| p.gpus).max().unwrap_or(1);
    for p in &r.atax {
        let base = one(p.rows).expect("one GPU measures every size");
        let speed = |t: f64, b: f64| b / t;
        let combined = p.with_all_reduce.as_ref().unwrap_or(&p.kernels);
        let share = p.all_reduce.as_ref().map(|a| a.median_ms / combined.median_ms);
        table.push(AtaxRow {
            gpus: p.gpus,
            matrix: format!("{}×{}", p.rows, p.cols),
            mib: p.matrix_bytes() / MIB,
            kernels: sig3(p.kernels.median_ms * 1e3),
            all_reduce: p
                .all_reduce
                .as_ref()
                .map_or("–".into(), |a| sig3(a.median_ms * 1e3)),
            combined: p
                .with_all_reduce
                .as_ref()
                .map_or("–".into(), |a| sig3(a.median_ms * 1e3)),
            share: share.map_or("–".into(), percent),
            speedup_kernels: ratio(base.kernels.median_ms, p.kernels.median_ms),
            speedup_combined: ratio(base.kernels.median_ms, combined.median_ms),
            end_to_end: sig3(p.end_to_end.median_ms),
            speedup_end_to_end: ratio(
                base.end_to_end.median_ms,
                p.end_to_end.median_ms,
            ),
        });
        if p.gpus > 1 {
            let x = p.matrix_bytes();
            let g = p.gpus;
            let b = base.kernels.median_ms;
            let sp = |s: &crate::harness::Stats, base: f64| {
                (speed(s.median_ms, base), speed(s.max_ms, base), speed(s.min_ms, base))
            };
            let (m, lo, hi) = sp(&p.kernels, b);
            points.push(Point::new(&format!("{g} GPUs, kernels"), x, m, lo, hi));
            let (m, lo, hi) = sp(combined, b);
            points.push(Point::new(
                &format!("{g} GPUs, kernels + all-reduce"),
                x,
                m,
                lo,
                hi,
            ));
            let (m, lo, hi) = sp(&p.end_to_end, base.end_to_end.median_ms);
            points.push(Point::new(&format!("{g} GPUs, end to end"), x, m, lo, hi));
        }
    }
    let title = "ATAX with A split by rows over the GPUs: each runs the fused kernel on its rows, \
                 NCCL adds the partial ys; kernels L2 cold, end to end from page-locked host \
                 memory; speedups over one GPU (median times)";
    run.table("multi_gpu-atax-table", title, meta, &table)?;
    println!(
        "{:>4} {:>13} {:>11} {:>10} {:>9} {:>9} {:>9}",
        "GPUs", "matrix", "kernels µs", "+reduce µs", "speedup", "e2e ms", "e2e sp."
    );
    for row in &table {
        println!(
            "{:>4} {:>13} {:>11} {:>10} {:>9} {:>9} {:>9}",
            row.gpus,
            row.matrix,
            row.kernels,
            row.combined,
            row.speedup_kernels,
            row.end_to_end,
            row.speedup_end_to_end
        );
    }
    if !points.is_empty() {
        let ideal = max_gpus.to_string();
        run.figure(
            "multi_gpu-atax",
            &plus(meta, "l2", "cold for the kernels; end to end starts on the host"),
            &Spec::line(
                "ATAX on several GPUs: speedup over one",
                "bytes of A",
                "speedup over one GPU",
            )
            .log_x()
            .x_bytes()
            .ref_line(Axis::Y, &ideal, &format!("{ideal} GPUs, ideal"))
            .ref_line(Axis::Y, "1", "one GPU"),
            &points,
        )?;
    }
    Ok(())
}

fn report_targets(run: &Run, r: &Results, meta: &[(&str, &str)]) -> anyhow::Result<()> {
    if r.peer.is_empty() {
        return Ok(());
    }
    let best = |paths: &[Path]| {
        paths
            .iter()
            .filter_map(|&p| at_largest(&r.peer, p))
            .max_by(|a, b| a.gbps().median.total_cmp(&b.gbps().median))
    };
    let mut rows = Vec::new();
    if let Some(p) = best(&[
        Path::CopyEngine,
        Path::CopyEngineStreams,
        Path::KernelPush,
        Path::KernelPull,
    ]) {
        let g = p.gbps().median;
        rows.push(TargetRow {
            target: format!("peer copy, one way ({})", size_text(p.bytes)),
            required: "≥ 400 GB/s",
            measured: format!("{} GB/s ({})", sig3(g), p.path.name()),
            met: yes(g >= 400.0),
        });
    }
    if let Some(p) = best(&[Path::CopyEngineBothWays, Path::KernelPushBothWays]) {
        let g = p.gbps().median;
        rows.push(TargetRow {
            target: format!(
                "peer copy, both ways at once ({} each way)",
                size_text(p.bytes)
            ),
            required: "≥ 740 GB/s",
            measured: format!("{} GB/s ({})", sig3(g), p.path.name()),
            met: yes(g >= 740.0),
        });
    }
    if let (Some(engine), Some(k)) =
        (at_largest(&r.peer, Path::CopyEngine), best_kernel(r))
    {
        let share = k.1 / engine.gbps().median;
        rows.push(TargetRow {
            target: "a kernel on the peer's memory, against the copy engine".into(),
            required: "≥ 95%",
            measured: format!("{} ({})", percent(share), k.0),
            met: yes(share >= 0.95),
        });
    }
    let largest = r.collectives.iter().map(|p| p.bytes).max();
    let ours = r
        .collectives
        .iter()
        .find(|p| p.collective == Collective::AllReduce && Some(p.bytes) == largest);
    match (ours, r.torch.as_ref().and_then(|t| largest.and_then(|b| t.at(b)))) {
        (Some(o), Some(t)) => {
            let q = o.busbw().median / t.busbw_gbps;
            rows.push(TargetRow {
                target: format!(
                    "NCCL all-reduce at {}, bus bandwidth against torch.distributed",
                    size_text(o.bytes)
                ),
                required: "within 5%",
                measured: format!(
                    "{} against {} GB/s ({})",
                    sig3(o.busbw().median),
                    sig3(t.busbw_gbps),
                    ratio(o.busbw().median, t.busbw_gbps)
                ),
                met: yes(q >= 0.95),
            });
        }
        (Some(o), None) => rows.push(TargetRow {
            target: format!(
                "NCCL all-reduce at {}, against torch.distributed",
                size_text(o.bytes)
            ),
            required: "within 5%",
            measured: format!(
                "{} GB/s; no --torch-reference given",
                sig3(o.busbw().median)
            ),
            met: "not measured",
        }),
        _ => {}
    }
    let max_gpus = r.atax.iter().map(|p| p.gpus).max().unwrap_or(1);
    let rows_max = r.atax.iter().map(|p| p.rows).max().unwrap_or(0);
    let find = |g: usize| r.atax.iter().find(|p| p.gpus == g && p.rows == rows_max);
    if let (Some(one), Some(all)) = (find(1), find(max_gpus)) {
        if max_gpus > 1 {
            let s = one.kernels.median_ms / all.kernels.median_ms;
            rows.push(TargetRow {
                target: format!(
                    "ATAX kernels on {max_gpus} GPUs against one ({}×{}, {} MiB)",
                    all.rows,
                    all.cols,
                    all.matrix_bytes() / MIB
                ),
                required: "≥ 1.8×",
                measured: format!(
                    "{}×",
                    ratio(one.kernels.median_ms, all.kernels.median_ms)
                ),
                met: yes(s >= 1.8),
            });
        }
    }
    run.table(
        "multi_gpu-targets",
        "The issue's targets and what this run measured",
        meta,
        &rows,
    )?;
    for t in &rows {
        println!(
            "target {:<60} {:<12} {:<44} {}",
            t.target, t.required, t.measured, t.met
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_a_reader_reads_them() {
        assert_eq!(size_text(8), "8 B");
        assert_eq!(size_text(65536), "64 KiB");
        assert_eq!(size_text(1 << 30), "1024 MiB");
        assert_eq!(size_text(1000), "1000 B");
        assert!(listed(8, 1 << 30) && listed(1 << 30, 1 << 30) && !listed(16, 1 << 30));
    }
}
