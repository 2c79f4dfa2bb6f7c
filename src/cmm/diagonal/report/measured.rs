//! The measured figures and tables: the paper's Table 1 on our GPU, the breakeven, the
//! experiments behind the layout's gain, section 7's variants and streams, the row stride, and
//! what keeping the diagonals in order costs.

use super::*;
use crate::cmm::launches::{SeparationRow, SEPARATION_SHOWN};

/// How `cmm-table1-compare` is shown (see `harness::table`).
const TABLE1_HEADERS: [(&str, &str); 1] = [(
    "headers",
    "paper_serial_ms = paper: serial CPU (ms) | paper_cuda_ms = paper: CUDA (ms) | \
     paper_layout_ms = paper: CUDA, diagonal layout (ms) | \
     paper_layout_speedup = paper: speedup of the layout | \
     our_serial_ms = ours: serial CPU (ms) | our_rowmajor_ms = ours: row-major (ms) | \
     our_diagonal_ms = ours: diagonal-major (ms) | \
     our_layout_speedup = ours: speedup of the layout",
)];

/// Table 1 beside the paper's, the times as a figure, and the layout's speedup.
pub(super) fn table1(run: &Run, r: &Results) -> anyhow::Result<Vec<Table1Row>> {
    let mut rows = Vec::new();
    let mut t1_points = Vec::new();
    let mut speedup_points = Vec::new();
    let ours = format!("ours, {}", r.device);
    for (idx, t) in r.table1.iter().enumerate() {
        let (n, row, diag) = (t.kernels.n, &t.kernels.row_major, &t.kernels.diagonal);
        let paper_row = paper::TABLE_1.get(idx).filter(|r| r.n as usize == n);
        let p = |f: fn(&paper::Table1Row) -> f64| {
            paper_row.map(|r| format!("{:.1}", f(r))).unwrap_or_else(|| "–".into())
        };
        rows.push(Table1Row {
            n,
            paper_serial_ms: p(|r| r.serial_ms),
            paper_cuda_ms: p(|r| r.cuda_ms),
            paper_layout_ms: p(|r| r.data_layout_ms),
            paper_layout_speedup: paper_row
                .map(|r| ratio(r.cuda_ms, r.data_layout_ms))
                .unwrap_or_else(|| "–".into()),
            our_serial_ms: fmt_ms(t.serial.median_ms),
            our_rowmajor_ms: fmt_ms(row.median_ms),
            our_diagonal_ms: fmt_ms(diag.median_ms),
            our_layout_speedup: ratio(row.median_ms, diag.median_ms),
        });
        for (name, s) in [
            ("serial CPU (this host)", &t.serial),
            ("GPU, row-major (the paper's CUDA version)", row),
            ("GPU, diagonal-major (the paper's layout)", diag),
        ] {
            t1_points.push(Point::ms(name, n, s));
        }
        speedup_points.push(Point::new(
            &ours,
            n,
            row.median_ms / diag.median_ms,
            row.min_ms / diag.max_ms,
            row.max_ms / diag.min_ms,
        ));
        if let Some(r) = paper_row {
            for (name, v) in [
                (PAPER_SERIAL, r.serial_ms),
                (PAPER_ROWMAJOR, r.cuda_ms),
                (PAPER_DIAGONAL, r.data_layout_ms),
            ] {
                t1_points.push(Point::new(name, n, v, v, v));
            }
            let paper_speedup = r.cuda_ms / r.data_layout_ms;
            speedup_points.push(Point::new(
                PAPER_SPEEDUP,
                n,
                paper_speedup,
                paper_speedup,
                paper_speedup,
            ));
        }
    }
    let title =
        "Table 1 of the paper (V100) beside ours: milliseconds per complete DP; GPU \
                 times are kernel time with the table on the GPU, CPU times one core";
    run.table(
        "cmm-table1-compare",
        title,
        &[&[KERNEL_L2][..], &TABLE1_HEADERS].concat(),
        &rows,
    )?;
    run.figure(
        "cmm-table1-times",
        &[KERNEL_L2],
        &Spec::line(
            "CMM, n = 1016..1024: serial CPU and the one-block kernels",
            "n (matrices)",
            "milliseconds",
        )
        .log_y()
        // The paper's series dashed, in the colour of ours.
        .dashed(PAPER_SERIAL)
        .dashed(PAPER_ROWMAJOR)
        .dashed(PAPER_DIAGONAL)
        .colors(&[0, 1, 2, 0, 1, 2]),
        &t1_points,
    )?;
    run.figure(
        "cmm-layout-speedup",
        &[KERNEL_L2],
        &Spec::line(
            "Speedup of the diagonal-major layout over row-major (one-block kernels)",
            "n (matrices)",
            "row-major time / diagonal-major time",
        )
        .dashed(PAPER_SPEEDUP),
        &speedup_points,
    )?;
    Ok(rows)
}

/// How `cmm-breakeven-n` is shown (see `harness::table`).
const BREAKEVEN_HEADERS: [(&str, &str); 1] = [(
    "headers",
    "first_n_gpu_faster = first n where the GPU is faster | \
     gpu_faster_from_n_on = GPU faster at every n from | \
     counted = what the GPU time counts",
)];

/// The breakeven (the paper's Figure 6) and where the GPU overtakes the CPU.
pub(super) fn breakeven(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut points = Vec::new();
    // (n, GPU row-major faster than the CPU)
    let mut ahead: Vec<(usize, bool)> = Vec::new();
    for b in &r.breakeven.sizes {
        let n = b.end_to_end.n;
        for layout in Layout::ALL {
            let s = b.end_to_end.get(layout);
            points.push(Point::ms(&format!("GPU {}, end to end", layout.name()), n, s));
        }
        ahead.push((n, b.end_to_end.row_major.median_ms < b.serial.median_ms));
        points.push(Point::ms("serial CPU", n, &b.serial));
    }
    run.figure(
        "cmm-breakeven",
        &[END_TO_END_L2],
        &Spec::line(
            "Small chains: serial CPU vs GPU end to end (allocation, copies, launch)",
            "n (matrices)",
            "milliseconds",
        )
        .log_y(),
        &points,
    )?;
    let first_ahead = ahead
        .iter()
        .find(|(_, a)| *a)
        .map(|(n, _)| n.to_string())
        .unwrap_or_else(|| "none".into());
    // The smallest n from which the GPU is ahead at every larger n of the sweep.
    let stays_ahead =
        ahead.iter().rposition(|(_, a)| !*a).map_or(Some(0), |last_behind| {
            (last_behind + 1 < ahead.len()).then_some(last_behind + 1)
        });
    let last_n =
        r.settings.breakeven.last().expect("a breakeven sweep of one n or more");
    let stays = stays_ahead
        .map(|i| ahead[i].0.to_string())
        .unwrap_or_else(|| format!("above {last_n}"));
    let counted = format!(
        "allocation + dims in + kernel + both tables out, host clock, median of {}",
        r.breakeven.end_to_end_reps
    );
    let rows = [
        BreakevenRow {
            source: "paper, V100",
            first_n_gpu_faster: format!("about {}", paper::BREAKEVEN_N),
            gpu_faster_from_n_on: "not stated".into(),
            counted: "as stated in the text (Figure 6)".into(),
        },
        BreakevenRow {
            source: "ours",
            first_n_gpu_faster: first_ahead,
            gpu_faster_from_n_on: stays,
            counted,
        },
    ];
    let title = "Where the GPU (row-major, end to end) overtakes the serial CPU";
    run.table(
        "cmm-breakeven-n",
        title,
        &[&[END_TO_END_L2][..], &BREAKEVEN_HEADERS].concat(),
        &rows,
    )
}

/// How `cmm-experiments` is shown (see `harness::table`).
const EXPERIMENTS_HEADERS: [(&str, &str); 1] = [(
    "headers",
    "rowmajor_ms = row-major (ms) | diagonal_ms = diagonal-major (ms) | \
     diagonal_speedup = speedup of the diagonal layout",
)];

/// What the layout's speedup depends on: n, the row stride, the cost width, the index.
pub(super) fn experiments(
    run: &Run,
    r: &Results,
) -> anyhow::Result<Vec<ExperimentRow>> {
    let mut experiments = Vec::new();
    let mut sweep_points = Vec::new();
    for p in &r.layout_vs_n {
        let mib = |l: Layout| (l.dp_len(p.n) * 8) as f64 / (1 << 20) as f64;
        experiments.push(ExperimentRow::pair(
            format!(
                "8-byte costs; table {:.1} MiB row-major, {:.1} MiB diagonal",
                mib(Layout::RowMajor),
                mib(Layout::DiagonalMajor)
            ),
            p,
        ));
        sweep_points.push(Point::ms("row-major", p.n, &p.row_major));
        sweep_points.push(Point::ms("diagonal-major", p.n, &p.diagonal));
    }
    run.figure(
        "cmm-time-vs-n",
        &[
            KERNEL_L2,
            ("note", "one block of min(n, 1024) threads; above 1024 each thread takes several rows"),
        ],
        &Spec::line(
            "One-block kernels: time of the whole DP against n",
            "n (matrices)",
            "milliseconds",
        )
        .log_x()
        .log_y(),
        &sweep_points,
    )?;

    let w = r.widths.as_ref().expect("the paper's part measures the cost widths");
    let small_max = w.small_max;
    experiments.push(ExperimentRow::pair(
        format!("8-byte costs, dimensions <= {small_max}"),
        &w.u64_small,
    ));
    experiments.push(ExperimentRow::pair(
        format!("4-byte costs, the same chain (dimensions <= {small_max})"),
        &w.u32_small,
    ));
    experiments.push(ExperimentRow::new(
        "8-byte costs, diagonal index recomputed for every load".into(),
        w.n,
        w.u64.row_major.median_ms,
        w.indexed.median_ms,
    ));
    experiments.push(ExperimentRow::pair(
        "8-byte costs, diagonal pointers stepped (the kernel above)".into(),
        &w.u64,
    ));
    let title =
        "What the layout's speedup depends on: one-block kernels, milliseconds per \
                 complete DP";
    run.table(
        "cmm-experiments",
        title,
        &[&[KERNEL_L2][..], &EXPERIMENTS_HEADERS].concat(),
        &experiments,
    )?;
    Ok(experiments)
}

/// Section 7.1: more threads per diagonal, one launch per diagonal.
pub(super) fn variants(run: &Run, r: &Results) -> anyhow::Result<()> {
    let points: Vec<Point> = r
        .variants
        .iter()
        .map(|(k, s)| {
            let group = match k {
                Kernel::OneBlock { .. } => "one block (the paper's kernel)",
                Kernel::CellPerThread { .. } => "launch per diagonal, thread per cell",
                Kernel::BlockPerCell { .. } => {
                    "launch per diagonal, block of 256 per cell"
                }
                Kernel::Persistent { .. }
                | Kernel::LaunchOnly { .. }
                | Kernel::BarriersOnly { .. } => "one cooperative launch",
            };
            Point::new(k.layout().name(), group, s.median_ms, s.min_ms, s.max_ms)
        })
        .collect();
    let n = r.settings.variants_n;
    run.figure(
        "cmm-variants",
        &[KERNEL_L2, ("n", &n.to_string())],
        &Spec::bar(
            &format!(
                "The paper's section 7.1 variants at n = {n}: milliseconds per complete DP"
            ),
            "kernel",
            "milliseconds",
        ),
        &points,
    )
}

/// Section 7.2: k independent chains, one after another vs one stream each.
pub(super) fn streams(run: &Run, r: &Results) -> anyhow::Result<()> {
    let points: Vec<Point> = r
        .streams
        .iter()
        .flat_map(|p| {
            [
                Point::ms("one stream, chains one after another", p.k, &p.one_stream),
                Point::ms("one stream per chain", p.k, &p.stream_per_chain),
            ]
        })
        .collect();
    let sn = r.settings.streams_n;
    run.figure(
        "cmm-streams",
        &[KERNEL_L2, ("n", &sn.to_string())],
        &Spec::line(
            &format!(
                "The paper's section 7.2: k independent chains of n = {sn}, diagonal-major \
                 one-block kernel"
            ),
            "k (chains)",
            "milliseconds for all k",
        )
        .log_x()
        .log_y()
        .x_ticks(Ticks::Data),
        &points,
    )
}

/// The largest power of two (up to 128) that divides `bytes`: 8, 16, 32, 64 or 128.
pub(super) fn alignment(bytes: usize) -> usize {
    (3..=7).rev().map(|p| 1usize << p).find(|a| bytes.is_multiple_of(*a)).unwrap_or(1)
}

/// The bytes between the addresses two neighbouring lanes load in the row-major one-block
/// kernel: lane i starts at k = i, so M[i][k] and M[k+1][j] both step by (n + 2) cells.
pub(super) fn lane_stride_bytes(n: usize) -> usize {
    (n + 2) * 8
}

#[derive(serde::Serialize)]
struct AlignmentRow {
    stride_alignment_bytes: usize,
    n: String,
    rowmajor_ms: String,
    rowmajor_vs_8_byte: String,
    diagonal_ms: String,
}

/// How `cmm-stride-alignment` is shown (see `harness::table`).
const ALIGNMENT_HEADERS: [(&str, &str); 1] = [(
    "headers",
    "stride_alignment_bytes = lanes' stride (n + 2)·8 is a multiple of (bytes) | \
     n = n of the sweep | rowmajor_ms = row-major, median over these n (ms) | \
     rowmajor_vs_8_byte = row-major against the 8-byte-aligned n | \
     diagonal_ms = diagonal-major, median over these n (ms)",
)];

/// The median of some medians.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if !v.len().is_multiple_of(2) {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// The one-block kernels one n at a time, and the sweep grouped by how the lanes' stride
/// is aligned.
pub(super) fn stride(run: &Run, r: &Results) -> anyhow::Result<()> {
    let stride_points: Vec<Point> = r
        .stride
        .iter()
        .flat_map(|p| Layout::ALL.map(|l| Point::ms(l.name(), p.n, p.get(l))))
        .collect();
    run.figure(
        "cmm-stride",
        &[KERNEL_L2],
        &Spec::line(
            "One-block kernels, n one at a time: the row-major lanes' stride matters",
            "n (matrices); row-major lanes are (n + 2) x 8 bytes apart",
            "milliseconds",
        ),
        &stride_points,
    )?;
    let mut groups: Vec<usize> =
        r.stride.iter().map(|p| alignment(lane_stride_bytes(p.n))).collect();
    groups.sort_unstable();
    groups.dedup();
    let group_median = |a: usize, l: Layout| {
        median(
            r.stride
                .iter()
                .filter(|p| alignment(lane_stride_bytes(p.n)) == a)
                .map(|p| p.get(l).median_ms)
                .collect(),
        )
    };
    let base = groups.first().map(|&a| group_median(a, Layout::RowMajor));
    let rows: Vec<AlignmentRow> = groups
        .iter()
        .map(|&a| {
            let ns: Vec<String> = r
                .stride
                .iter()
                .filter(|p| alignment(lane_stride_bytes(p.n)) == a)
                .map(|p| p.n.to_string())
                .collect();
            let row = group_median(a, Layout::RowMajor);
            AlignmentRow {
                stride_alignment_bytes: a,
                n: ns.join(", "),
                rowmajor_ms: fmt_ms(row),
                rowmajor_vs_8_byte: base.map(|b| ratio(row, b)).unwrap_or_default(),
                diagonal_ms: fmt_ms(group_median(a, Layout::DiagonalMajor)),
            }
        })
        .collect();
    let title =
        "The row stride one n at a time, grouped by the largest power of two (up to \
                 128 bytes) that divides the lanes' stride";
    run.table(
        "cmm-stride-alignment",
        title,
        &[&[KERNEL_L2][..], &ALIGNMENT_HEADERS].concat(),
        &rows,
    )
}

/// A launch per diagonal, a CUDA graph, one cooperative launch: times and per-diagonal costs.
pub(super) fn separation(run: &Run, r: &Results) -> anyhow::Result<()> {
    let rows: Vec<SeparationRow> =
        r.separation.iter().map(|s| SeparationRow::new(s, fmt_ms)).collect();
    let mut points = Vec::new();
    for s in &r.separation {
        let b = s.block;
        for (way, t) in [
            ("launch per diagonal", &s.launches),
            ("CUDA graph", &s.graph),
            ("one cooperative launch", &s.cooperative),
        ] {
            points.push(Point::ms(&format!("{way}, B={b}"), s.n, t));
        }
    }
    run.figure(
        "cmm-grid-barrier",
        &[KERNEL_L2, ("layout", "row-major")],
        &Spec::line(
            "Block per cell: a launch per diagonal, a CUDA graph, or one cooperative \
             launch with a grid barrier per diagonal",
            "n (matrices)",
            "milliseconds",
        )
        .log_x()
        .log_y(),
        &points,
    )?;
    let title =
        "Keeping the diagonals in order: whole DP (ms, median) and the cost of one \
                 diagonal's separation alone (µs, median over the diagonals)";
    run.table(
        "cmm-grid-barrier-costs",
        title,
        &[&[KERNEL_L2, ("layout", "row-major")][..], &SEPARATION_SHOWN].concat(),
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::diagonal::measure::{STRIDE_LADDER_N, TRAFFIC_N};

    #[test]
    fn the_counted_strides_take_every_rung_of_the_ladder_once_and_the_slowest_twice() {
        let mut rungs: Vec<usize> = STRIDE_LADDER_N
            .iter()
            .chain([&TRAFFIC_N.full])
            .map(|&n| alignment(lane_stride_bytes(n)))
            .collect();
        rungs.sort_unstable();
        assert_eq!(rungs, [8, 16, 32, 64, 128, 128]);
    }
}
