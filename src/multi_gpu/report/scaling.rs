//! Every pair of GPUs, the CMM batch over 1, 2, 4, ... GPUs, the speedups over one GPU side by
//! side, the drawing of the topology, and the model of a second node.

use super::*;
use crate::harness::plot::{self, Ticks};
use crate::harness::record;
use crate::multi_gpu::internode::{self, Link, IB_NAME, INFINIBAND};
use crate::multi_gpu::peer::{PairCopy, PairPoint};

/// How `multi_gpu-pairs` is shown (see `harness::table`).
pub(super) const PAIRS_SHOWN: [(&str, &str); 3] = [
    (
        "headers",
        "from = from GPU | to = to GPU | nvidia-smi = `nvidia-smi topo -m` | \
         both ways GB/s = both ways at once, GB/s (both directions added)",
    ),
    (
        "columns",
        "from | to | nvidia-smi | {one way GB/s} ({min}–{max}) = one way, GB/s, median \
         (min–max) | both ways GB/s",
    ),
    ("code", "nvidia-smi"),
];

/// How `multi_gpu-fan-out` is shown.
pub(super) const FAN_OUT_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "from = from GPU | to = to GPUs, at once | \
         one way GB/s = one peer at a time, GB/s (mean over its peers) | \
         all at once / one = all at once / one peer at a time",
    ),
    (
        "columns",
        "from | to | {GB/s} ({min}–{max}) = all at once, GB/s, median (min–max) | \
         one way GB/s | all at once / one",
    ),
];

/// How `multi_gpu-cmm` is shown.
pub(super) const CMM_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "chains per GPU = chains per GPU (the most) | ms per chain = ms per chain (batch / \
         chains) | speedup = speedup over one GPU",
    ),
    (
        "columns",
        "GPUs | chains | chains per GPU | {ms} ({min}–{max}) = batch, ms, median (min–max) | \
         ms per chain | speedup",
    ),
];

/// How the model's two tables are shown.
pub(super) const LINKS_SHOWN: [(&str, &str); 1] = [(
    "headers",
    "alpha µs = α, fixed cost of one step (µs) | beta GB/s = β, one direction (GB/s) | \
     from = where the numbers come from",
)];
pub(super) const TWO_NODES_SHOWN: [(&str, &str); 1] = [(
    "headers",
    "measured µs = one node, measured (µs) | model µs = one node, model (µs) | \
     two nodes µs = two nodes, model (µs) | two nodes / one = two nodes / one node (model) | \
     measured busbw GB/s = one node, measured bus bandwidth (GB/s) | \
     two nodes busbw GB/s = two nodes, model bus bandwidth (GB/s)",
)];

#[derive(serde::Serialize)]
struct PairsRow {
    from: usize,
    to: usize,
    #[serde(rename = "nvidia-smi")]
    smi: String,
    #[serde(rename = "one way GB/s")]
    one_way: String,
    min: String,
    max: String,
    #[serde(rename = "both ways GB/s")]
    both_ways: String,
}

#[derive(serde::Serialize)]
struct FanOutRow {
    from: usize,
    to: String,
    #[serde(rename = "GB/s")]
    median: String,
    min: String,
    max: String,
    #[serde(rename = "one way GB/s")]
    one_way: String,
    #[serde(rename = "all at once / one")]
    ratio: String,
}

#[derive(serde::Serialize)]
struct CmmRow {
    #[serde(rename = "GPUs")]
    gpus: usize,
    chains: usize,
    #[serde(rename = "chains per GPU")]
    per_gpu: usize,
    ms: String,
    min: String,
    max: String,
    #[serde(rename = "ms per chain")]
    per_chain: String,
    speedup: String,
}

#[derive(serde::Serialize)]
struct LinkRow {
    link: String,
    #[serde(rename = "alpha µs")]
    alpha: String,
    #[serde(rename = "beta GB/s")]
    beta: String,
    from: String,
}

#[derive(serde::Serialize)]
struct TwoNodesRow {
    size: String,
    #[serde(rename = "measured µs")]
    measured: String,
    #[serde(rename = "model µs")]
    model: String,
    #[serde(rename = "two nodes µs")]
    two_nodes: String,
    #[serde(rename = "two nodes / one")]
    ratio: String,
    #[serde(rename = "measured busbw GB/s")]
    measured_busbw: String,
    #[serde(rename = "two nodes busbw GB/s")]
    two_nodes_busbw: String,
}

/// The nvidia-smi cell of the ordered pair (`from`, `to`).
fn smi(r: &Results, from: usize, to: usize) -> String {
    r.pairs
        .iter()
        .find(|p| p.from == from && p.to == to)
        .and_then(|p| p.link.clone())
        .unwrap_or_else(|| "–".into())
}

fn point_of<'r>(r: &'r Results, copy: &PairCopy) -> Option<&'r PairPoint> {
    r.pair_copies.iter().find(|p| p.copy == *copy)
}

/// The copy engines between every pair, and each GPU to all others at once.
pub(super) fn report_pairs(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
    let Some(bytes) = r.pair_copies.first().map(|p| p.bytes) else { return Ok(()) };
    let mut rows = Vec::new();
    for p in &r.pair_copies {
        let PairCopy::OneWay { from, to } = p.copy else { continue };
        let g = p.gbps();
        let both =
            point_of(r, &PairCopy::BothWays { a: from.min(to), b: from.max(to) });
        rows.push(PairsRow {
            from,
            to,
            smi: smi(r, from, to),
            one_way: sig3(g.median),
            min: sig3(g.worst),
            max: sig3(g.best),
            both_ways: both.map_or("–".into(), |b| sig3(b.gbps().median)),
        });
    }
    let title = format!(
        "The copy engines between every pair of GPUs, {} each way (cuMemcpyPeerAsync): bytes \
         that arrived per second, one way and both ways at once",
        size_text(bytes)
    );
    run.table("multi_gpu-pairs", &title, &shown(meta, &PAIRS_SHOWN), &rows)?;
    for row in &rows {
        println!(
            "GPU {} -> GPU {} ({}): {:>8} GB/s one way, {:>8} GB/s both ways",
            row.from, row.to, row.smi, row.one_way, row.both_ways
        );
    }

    let one_way_mean = |from: usize| {
        let rates: Vec<f64> = r
            .pair_copies
            .iter()
            .filter(|p| matches!(p.copy, PairCopy::OneWay { from: f, .. } if f == from))
            .map(|p| p.gbps().median)
            .collect();
        (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
    };
    let mut fan = Vec::new();
    for p in &r.pair_copies {
        let PairCopy::FanOut { from, to } = &p.copy else { continue };
        let g = p.gbps();
        let single = one_way_mean(*from);
        fan.push(FanOutRow {
            from: *from,
            to: to.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", "),
            median: sig3(g.median),
            min: sig3(g.worst),
            max: sig3(g.best),
            one_way: single.map_or("–".into(), sig3),
            ratio: single.map_or("–".into(), |s| ratio(g.median, s)),
        });
    }
    {
        let title = format!(
            "One GPU sending to every other at once, {} to each (one stream per destination): \
             bytes that left it per second, against one peer at a time",
            size_text(bytes)
        );
        let empty = plus(
            meta,
            "empty",
            "With two GPUs each has one peer, so one peer at a time is every peer at once.",
        );
        run.table("multi_gpu-fan-out", &title, &shown(&empty, &FAN_OUT_SHOWN), &fan)?;
        for row in &fan {
            println!(
                "GPU {} -> GPUs {} at once: {:>8} GB/s ({} of one at a time)",
                row.from, row.to, row.median, row.ratio
            );
        }
    }
    Ok(())
}

/// The CMM batch at every GPU count, and the speedups of ATAX and the batch side by side.
pub(super) fn report_scaling(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
    let one = r.cmm.iter().find(|p| p.gpus == 1);
    let rows: Vec<CmmRow> = r
        .cmm
        .iter()
        .map(|p| CmmRow {
            gpus: p.gpus,
            chains: p.chains,
            per_gpu: p.most_per_gpu,
            ms: sig3(p.time.median_ms),
            min: sig3(p.time.min_ms),
            max: sig3(p.time.max_ms),
            per_chain: sig3(p.time.median_ms / p.chains as f64),
            speedup: one
                .map_or("–".into(), |o| ratio(o.time.median_ms, p.time.median_ms)),
        })
        .collect();
    if let Some(first) = r.cmm.first() {
        let title = format!(
            "The CMM beyond chapter's batch split over the GPUs: {} chains of {} matrices \
             ({}), each GPU solving its block with every chain in every launch; every table \
             checked against the CPU's; L2 warm",
            first.chains, first.n, first.config
        );
        run.table("multi_gpu-cmm", &title, &shown(meta, &CMM_SHOWN), &rows)?;
        for row in &rows {
            println!(
                "CMM batch on {} GPU(s): {:>8} ms ({} chains per GPU), speedup {}",
                row.gpus, row.ms, row.per_gpu, row.speedup
            );
        }
    }

    // Speedups over one GPU against the number of GPUs: ATAX at its largest matrix, the
    // CMM batch, and the ideal.
    let mut points = Vec::new();
    let rows_max = r.atax.iter().map(|p| p.rows).max().unwrap_or(0);
    let atax = |g: usize| r.atax.iter().find(|p| p.gpus == g && p.rows == rows_max);
    if let Some(base) = atax(1) {
        for p in r.atax.iter().filter(|p| p.rows == rows_max) {
            let combined = p.with_all_reduce.as_ref().unwrap_or(&p.kernels);
            let b = base.kernels.median_ms;
            points.push(Point::over("ATAX kernels", p.gpus, b, &p.kernels));
            points.push(Point::over("ATAX kernels + all-reduce", p.gpus, b, combined));
            let e = base.end_to_end.median_ms;
            points.push(Point::over("ATAX end to end", p.gpus, e, &p.end_to_end));
        }
    }
    if let Some(base) = one {
        for p in &r.cmm {
            points.push(Point::over("CMM batch", p.gpus, base.time.median_ms, &p.time));
        }
    }
    let mut counts: Vec<usize> =
        points.iter().filter_map(|p| p.x.parse().ok()).collect();
    counts.sort();
    counts.dedup();
    if counts.len() < 2 {
        return Ok(());
    }
    let ideal = "k GPUs, ideal";
    for &k in &counts {
        points.push(Point::new(ideal, k, k as f64, k as f64, k as f64));
    }
    let matrix = atax(1).map(|p| format!("{}×{}", p.rows, p.cols)).unwrap_or_default();
    let extra = plus(meta, "atax_matrix", &matrix);
    let extra = plus(&extra, "l2", "cold for ATAX's kernels, warm for the CMM batch");
    run.figure(
        "multi_gpu-scaling",
        &extra,
        &Spec::line(
            "Speedup over one GPU: ATAX at its largest matrix, and the CMM batch",
            "GPUs",
            "speedup over one GPU",
        )
        .x_ticks(Ticks::Data)
        .dashed(ideal),
        &points,
    )?;
    Ok(())
}

/// The drawing of the topology table the run just wrote.
pub(super) fn report_topology_diagram(
    run: &Run,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
    use super::topology::{shapes, COMPUTED_BY, STEM, TITLE};
    anyhow::ensure!(run.chapter.writes(STEM), "{STEM} is not declared");
    let table = record::read_csv(&run.out.join("data").join("multi_gpu-topology.csv"))?;
    // Its links are what the run read from the machine, so the footer names the record.
    let meta = plot::diagram_meta(run.meta_with(meta), TITLE, COMPUTED_BY, 1)
        .with("composed_from", "multi_gpu-topology");
    plot::write_diagram(&run.out, STEM, &meta, &shapes(&table)?)
}

/// The model of a second node: the NVLink step fitted to the all-reduce over the most GPUs,
/// the assumed InfiniBand link, and the all-reduce over one node and two.
pub(super) fn report_internode(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
    let Some(gpus) = r.collectives.iter().map(|p| p.ranks).max() else { return Ok(()) };
    let Some(node) = internode::fit_node(&r.collectives, gpus) else {
        println!("skipped: the model of a second node (no fit to the all-reduce)");
        return Ok(());
    };
    let link_row = |name: &str, l: Link, from: &str| LinkRow {
        link: name.into(),
        alpha: sig3(l.alpha_us),
        beta: sig3(l.beta_gbps),
        from: from.into(),
    };
    let links = [
        link_row(
            "NVLink within the node, one step of the ring",
            node,
            &format!("fitted to the all-reduce over {gpus} GPUs measured here"),
        ),
        link_row(IB_NAME, INFINIBAND, "assumed: NDR's 400 Gb/s is 50 GB/s each way"),
    ];
    let computed = format!(
        "multi_gpu::internode: an alpha–beta model fitted to this run's all-reduce over {gpus} \
         GPUs, and an assumed InfiniBand link"
    );
    let model_meta = plus(meta, "computed", &computed);
    run.table(
        "multi_gpu-two-nodes-links",
        "The links of the model: t = α + bytes / β for one step of a collective",
        &shown(&model_meta, &LINKS_SHOWN),
        &links,
    )?;
    let largest = r.collectives.iter().map(|p| p.bytes).max().unwrap_or(0);
    let rows: Vec<TwoNodesRow> = internode::predict(&r.collectives, gpus, node)
        .into_iter()
        .filter(|p| listed(p.bytes, largest))
        .map(|p| TwoNodesRow {
            size: size_text(p.bytes),
            measured: sig3(p.measured_s * 1e6),
            model: sig3(p.one_node_s * 1e6),
            two_nodes: sig3(p.two_nodes_s * 1e6),
            ratio: ratio(p.two_nodes_s, p.one_node_s),
            measured_busbw: sig3(p.busbw(p.measured_s, gpus)),
            two_nodes_busbw: sig3(p.busbw(p.two_nodes_s, 2 * gpus)),
        })
        .collect();
    let title = format!(
        "A model, not a measurement: the all-reduce over one node of {gpus} GPUs (measured, and \
         the model fitted to it) and over two such nodes joined by InfiniBand (the model: a \
         reduce-scatter in each node, an all-reduce of each GPU's part with its counterpart, \
         an all-gather in each node)"
    );
    run.table(
        "multi_gpu-two-nodes",
        &title,
        &shown(&model_meta, &TWO_NODES_SHOWN),
        &rows,
    )?;
    println!(
        "model: NVLink step α {} µs, β {} GB/s (fitted); two nodes of {gpus} GPUs over {IB_NAME}",
        sig3(node.alpha_us),
        sig3(node.beta_gbps)
    );
    for row in &rows {
        println!(
            "model all-reduce {:>9}: one node {:>9} µs (measured {:>9}), two nodes {:>9} µs",
            row.size, row.model, row.measured, row.two_nodes
        );
    }
    Ok(())
}
