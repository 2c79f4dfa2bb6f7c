//! The chapter's goals, each with what was measured.

use super::*;

pub(super) fn report_targets(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
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
            required: "≥ 400 GB/s".into(),
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
            required: "≥ 740 GB/s".into(),
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
            required: "≥ 95%".into(),
            measured: format!("{} ({})", percent(share), k.0),
            met: yes(share >= 0.95),
        });
    }
    let largest = r.collectives.iter().map(|p| p.bytes).max();
    let most = r.collectives.iter().map(|p| p.ranks).max();
    let ours = r.collectives.iter().find(|p| {
        p.collective == Collective::AllReduce
            && Some(p.bytes) == largest
            && Some(p.ranks) == most
    });
    let theirs = |o: &crate::multi_gpu::collectives::CollectivePoint| {
        r.torch.iter().filter(|t| t.ranks() == o.ranks).find_map(|t| t.at(o.bytes))
    };
    match ours.map(|o| (o, theirs(o))) {
        Some((o, Some(t))) => {
            let q = o.busbw().median / t.busbw_gbps;
            rows.push(TargetRow {
                target: format!(
                    "NCCL all-reduce over {} GPUs at {}, bus bandwidth against \
                     torch.distributed",
                    o.ranks,
                    size_text(o.bytes)
                ),
                required: "within 5%".into(),
                measured: format!(
                    "{} against {} GB/s ({})",
                    sig3(o.busbw().median),
                    sig3(t.busbw_gbps),
                    ratio(o.busbw().median, t.busbw_gbps)
                ),
                met: yes(q >= 0.95),
            });
        }
        Some((o, None)) => rows.push(TargetRow {
            target: format!(
                "NCCL all-reduce over {} GPUs at {}, against torch.distributed",
                o.ranks,
                size_text(o.bytes)
            ),
            required: "within 5%".into(),
            measured: format!(
                "{} GB/s; torch.distributed not measured",
                sig3(o.busbw().median)
            ),
            met: "not measured",
        }),
        None => {}
    }
    // k GPUs are at best k times faster than one; the goal leaves a tenth for what does not
    // split (the launches, the all-reduce).
    let split_goal = |k: usize| 0.9 * k as f64;
    let max_gpus = r.atax.iter().map(|p| p.gpus).max().unwrap_or(1);
    let rows_max = r.atax.iter().map(|p| p.rows).max().unwrap_or(0);
    let find = |g: usize| r.atax.iter().find(|p| p.gpus == g && p.rows == rows_max);
    if let (Some(one), Some(all), true) = (find(1), find(max_gpus), max_gpus > 1) {
        let s = one.kernels.median_ms / all.kernels.median_ms;
        rows.push(TargetRow {
            target: format!(
                "ATAX kernels on {max_gpus} GPUs against one ({}×{}, {} MiB)",
                all.rows,
                all.cols,
                all.matrix_bytes() / MIB
            ),
            required: format!("≥ {}×", sig3(split_goal(max_gpus))),
            measured: format!(
                "{}×",
                ratio(one.kernels.median_ms, all.kernels.median_ms)
            ),
            met: yes(s >= split_goal(max_gpus)),
        });
    }
    let cmm_gpus = r.cmm.iter().map(|p| p.gpus).max().unwrap_or(1);
    let cmm = |g: usize| r.cmm.iter().find(|p| p.gpus == g);
    if let (Some(one), Some(all), true) = (cmm(1), cmm(cmm_gpus), cmm_gpus > 1) {
        let s = one.time.median_ms / all.time.median_ms;
        rows.push(TargetRow {
            target: format!(
                "CMM batch on {cmm_gpus} GPUs against one ({} chains of {} matrices)",
                all.chains, all.n
            ),
            required: format!("≥ {}×", sig3(split_goal(cmm_gpus))),
            measured: format!("{}×", ratio(one.time.median_ms, all.time.median_ms)),
            met: yes(s >= split_goal(cmm_gpus)),
        });
    }
    let title = "The chapter's goals and what this run measured";
    run.table("multi_gpu-targets", title, meta, &rows)?;
    for t in &rows {
        println!(
            "target {:<60} {:<12} {:<44} {}",
            t.target, t.required, t.measured, t.met
        );
    }
    Ok(())
}
