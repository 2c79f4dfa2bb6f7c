//! NCCL's collectives against message size, and PyTorch's all-reduce beside them.

use super::*;

/// How `multi_gpu-collectives-table` is shown (see `harness::table`): plain headers with
/// units, and the all-reduce in view with the other collectives folded.
pub(super) const COLLECTIVES_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "size = size, as nccl-tests counts it | µs = time of one, median (µs) | \
         algbw GB/s = algorithm bandwidth (GB/s) | busbw GB/s = bus bandwidth (GB/s)",
    ),
    ("fold", "collective = all-reduce"),
];

/// How `multi_gpu-torch` is shown: plain headers with units.
pub(super) const TORCH_SHOWN: [(&str, &str); 1] = [(
    "headers",
    "cudarc µs = time, cudarc (µs) | torch µs = time, torch.distributed (µs) | \
     cudarc busbw GB/s = bus bandwidth, cudarc (GB/s) | \
     torch busbw GB/s = bus bandwidth, torch.distributed (GB/s) | \
     cudarc / torch = bus bandwidth, cudarc / torch.distributed",
)];

pub(super) fn report_collectives(
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
    run.table(
        "multi_gpu-collectives-table",
        &title,
        &shown(&meta, &COLLECTIVES_SHOWN),
        &rows,
    )?;
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
        run.table("multi_gpu-torch", title, &shown(&meta, &TORCH_SHOWN), &rows)?;
        for row in &rows {
            println!(
                "all-reduce {:>9}: cudarc {:>8} GB/s, torch {:>8} GB/s ({})",
                row.size, row.ours, row.torch, row.ratio
            );
        }
    }
    Ok(())
}
