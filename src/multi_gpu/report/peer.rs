//! The peer copies, the bytes in flight, and the latency of a peer load.

use super::*;

/// How `multi_gpu-peer-summary` is shown (see `harness::table`): the spread of the
/// repetitions beside the median.
pub(super) const PEER_SUMMARY_SHOWN: [(&str, &str); 1] = [(
    "columns",
    "path | size | {GB/s} ({min}–{max}) = GB/s, median (min–max) | \
     of the copy engine, one way",
)];

/// How `multi_gpu-latency` is shown: the spread of the repetitions beside the median.
pub(super) const LATENCY_SHOWN: [(&str, &str); 1] = [(
    "columns",
    "GPU loads from | footprint | dependent loads | \
     {ns per load} ({min}–{max}) = ns per load, median (min–max)",
)];

pub(super) fn report_peer(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
    let copy = &r.local_copy;
    // A copy within one GPU reads and writes each byte: bytes copied per second is half its
    // read + write rate, the number comparable with a copy that crosses to another GPU.
    let copied = |s: &crate::harness::Stats| s.rate(copy.bytes as f64 / 1e9);
    let local = [
        ("one GPU, copy kernel (L2 cold)", &copy.kernel),
        ("one GPU, cuMemcpyDtoD (L2 cold)", &copy.memcpy),
    ];
    let mut rows: Vec<PathRow> = local
        .into_iter()
        .map(|(path, stats)| {
            let g = copied(stats);
            PathRow {
                path: path.into(),
                size: size_text(copy.bytes),
                median: sig3(g.median),
                min: sig3(g.worst),
                max: sig3(g.best),
                of_copy_engine: "–".into(),
            }
        })
        .collect();
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
    run.table(
        "multi_gpu-peer-summary",
        title,
        &shown(meta, &PEER_SUMMARY_SHOWN),
        &rows,
    )?;
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
        &peer_spec(&one_way),
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

pub(super) fn report_latency(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
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
    run.table("multi_gpu-latency", &title, &shown(meta, &LATENCY_SHOWN), &rows)?;
    for l in &rows {
        println!("GPU {} loads from {:<26} {:>6} ns", r.chase_gpu, l.target, l.median);
    }
    Ok(())
}

/// `multi_gpu-peer`: two panels on one log scale, the copies within GPU 0 and directly to
/// GPU 1 (the copy within one GPU first in the data, so its panel comes first) and those
/// through the host: five lines and two instead of seven in one.
fn peer_spec(points: &[Point]) -> Spec {
    let mut spec =
        Spec::line("Copies from GPU 0 to GPU 1, one direction", "bytes copied", "GB/s")
            .log_x()
            .log_y()
            .x_bytes()
            .panels(PanelBy::SeriesBeforeColon, 1);
    let mut named: Vec<&str> = Vec::new();
    for p in points {
        if named.contains(&p.series.as_str()) {
            continue;
        }
        named.push(&p.series);
        let panel = if p.series.starts_with(&Path::HostStaged.name()) {
            "through the host"
        } else {
            "within GPU 0, and directly to GPU 1"
        };
        spec = spec.series_label(&p.series, &format!("{panel}: {}", p.series));
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The book's `multi_gpu-peer` was drawn with the spec this module writes for its
    /// series: a change to how the figure is drawn changes the committed record too.
    #[test]
    fn the_books_peer_figure_carries_the_spec_the_report_writes() {
        let record = crate::harness::record::book_record("multi_gpu-peer");
        let points: Vec<Point> = record
            .rows
            .iter()
            .map(|r| Point::new(&r[0], &r[1], 1.0, 1.0, 1.0))
            .collect();
        assert_eq!(Spec::read(&record.meta).unwrap(), peer_spec(&points));
    }
}
