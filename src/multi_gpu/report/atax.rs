//! ATAX split over the GPUs: kernels, the all-reduce, end to end.

use super::*;

/// How `multi_gpu-atax-table` is shown (see `harness::table`): plain headers with units,
/// and the columns that fit the page (the size of A in MiB and the kernels plus all-reduce
/// time stay in the CSV).
pub(super) const ATAX_SHOWN: [(&str, &str); 2] = [(
    "headers",
    "matrix = A (rows × columns) | MiB = size of A (MiB) | kernels µs = kernels (µs) | \
     all-reduce µs = all-reduce (µs) | \
     kernels + all-reduce µs = kernels + all-reduce (µs) | \
     all-reduce share = all-reduce's share | end to end ms = end to end (ms)",
), (
    "columns",
    "GPUs | matrix | kernels µs | all-reduce µs | all-reduce share | speedup, kernels | \
     speedup, with all-reduce | end to end ms | speedup, end to end",
)];

pub(super) fn report_atax(
    run: &Run,
    r: &Results,
    meta: &[(&str, &str)],
) -> anyhow::Result<()> {
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
    run.table("multi_gpu-atax-table", title, &shown(meta, &ATAX_SHOWN), &table)?;
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
