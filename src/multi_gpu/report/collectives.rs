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

/// The series of a collective over `ranks` GPUs in the collectives' figures: the panel (the
/// collective's name) first, then the number of GPUs.
fn series(c: Collective, ranks: usize) -> String {
    format!("{} {ranks} GPUs", c.name())
}

/// PyTorch's series, in the all-reduce's panel.
fn torch_series(ranks: usize) -> String {
    format!("all-reduce torch.distributed, {ranks} GPUs")
}

pub(super) fn report_collectives(
    run: &Run,
    r: &Results,
    base: &[(&'static str, String)],
) -> anyhow::Result<()> {
    if r.collectives.is_empty() {
        return Ok(());
    }
    let mut ranks: Vec<usize> = r.collectives.iter().map(|p| p.ranks).collect();
    ranks.sort();
    ranks.dedup();
    let ranks_text = ranks.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    let mut torch: Vec<&crate::multi_gpu::torch::TorchReference> =
        r.torch.iter().collect();
    torch.sort_by_key(|t| t.ranks());
    let torch_meta = (!torch.is_empty()).then(|| {
        let mut runs: Vec<String> = torch
            .iter()
            .map(|t| format!("{} GPUs: {}", t.ranks(), t.versions()))
            .collect();
        runs.push(torch[0].meta.get("method").unwrap_or("").to_string());
        runs.join("; ")
    });
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
        let name = series(p.collective, p.ranks);
        bus.push(Point::new(&name, p.bytes, b.median, b.worst, b.best));
        time.push(Point::new(
            &name,
            p.bytes,
            p.time.median_ms * 1e3,
            p.time.min_ms * 1e3,
            p.time.max_ms * 1e3,
        ));
    }
    for t in &torch {
        let name = torch_series(t.ranks());
        for p in &t.points {
            bus.push(Point::new(
                &name,
                p.bytes,
                p.busbw_gbps,
                p.busbw_gbps * p.time_us.0 / p.time_us.2,
                p.busbw_gbps * p.time_us.0 / p.time_us.1,
            ));
            time.push(Point::new(
                &name,
                p.bytes,
                p.time_us.0,
                p.time_us.1,
                p.time_us.2,
            ));
        }
    }
    let gpus_text = match ranks.as_slice() {
        [k] => format!("{k} GPUs"),
        _ => format!("{ranks_text} GPUs"),
    };
    let mut spec = Spec::line(
        &format!("NCCL collectives over {gpus_text}: bus bandwidth"),
        "size (nccl-tests' definition)",
        "bus bandwidth, GB/s",
    )
    .log_x()
    .log_y()
    .x_bytes()
    .panels(PanelBy::SeriesFirstWord, 1);
    let mut time_spec = Spec::line(
        &format!("NCCL collectives over {gpus_text}: time of one"),
        "size (nccl-tests' definition)",
        "µs per collective",
    )
    .log_x()
    .log_y()
    .x_bytes()
    .panels(PanelBy::SeriesFirstWord, 1);
    for t in &torch {
        spec = spec.dashed(&torch_series(t.ranks()));
        time_spec = time_spec.dashed(&torch_series(t.ranks()));
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
            gpus: p.ranks,
            collective: p.collective.name(),
            size: size_text(p.bytes),
            us: sig3(p.time.median_ms * 1e3),
            algbw: sig3(p.algbw().median),
            busbw: sig3(p.busbw().median),
        })
        .collect();
    let title = format!(
        "NCCL through cudarc over the first {gpus_text}: time of one collective (median), \
         algorithm bandwidth (size / time) and bus bandwidth (× 2(n−1)/n for all-reduce, \
         (n−1)/n for the others)"
    );
    run.table(
        "multi_gpu-collectives-table",
        &title,
        &shown(&meta, &COLLECTIVES_SHOWN),
        &rows,
    )?;
    for row in &rows {
        println!(
            "{} GPUs {:<15} {:>9} {:>9} µs {:>8} GB/s algbw {:>8} GB/s busbw",
            row.gpus, row.collective, row.size, row.us, row.algbw, row.busbw
        );
    }

    if !torch.is_empty() {
        let ours = |ranks: usize, bytes: usize| {
            r.collectives.iter().find(|p| {
                p.collective == Collective::AllReduce
                    && p.ranks == ranks
                    && p.bytes == bytes
            })
        };
        let rows: Vec<TorchRow> = torch
            .iter()
            .flat_map(|t| t.points.iter())
            .filter(|p| listed(p.bytes, largest))
            .filter_map(|tp| {
                let o = ours(tp.ranks, tp.bytes)?;
                Some(TorchRow {
                    gpus: tp.ranks,
                    size: size_text(tp.bytes),
                    ours_us: sig3(o.time.median_ms * 1e3),
                    torch_us: sig3(tp.time_us.0),
                    ours: sig3(o.busbw().median),
                    torch: sig3(tp.busbw_gbps),
                    ratio: ratio(o.busbw().median, tp.busbw_gbps),
                })
            })
            .collect();
        let title = "NCCL all-reduce through cudarc beside torch.distributed's on the same GPUs: \
                     bus bandwidth and time of one all-reduce";
        run.table("multi_gpu-torch", title, &shown(&meta, &TORCH_SHOWN), &rows)?;
        for row in &rows {
            println!(
                "all-reduce {} GPUs {:>9}: cudarc {:>8} GB/s, torch {:>8} GB/s ({})",
                row.gpus, row.size, row.ours, row.torch, row.ratio
            );
        }
    }
    Ok(())
}
