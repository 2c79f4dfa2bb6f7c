//! Every figure and table of the chapter "Chained matrix multiplication and the diagonal
//! layout", drawn from [`Results`], and the console summary.

use crate::cmm::gpu::Kernel;
use crate::cmm::layout::{self, Layout};
use crate::cmm::paper;
use crate::cmm::paren;
use crate::cmm::traffic::WarpMapping;
use crate::harness::format::{ms, ratio};
use crate::harness::plot::{Point, Spec, Ticks};
use crate::harness::Run;

use super::measure::{LayoutPair, Results};

/// The paper's series in Table 1's figures (drawn dashed, beside ours).
const PAPER_SERIAL: &str = "serial CPU, paper (V100 host)";
const PAPER_ROWMAJOR: &str = "V100 row-major, paper";
const PAPER_DIAGONAL: &str = "V100 diagonal-major, paper";
const PAPER_SPEEDUP: &str = "paper, V100 (Table 1)";

/// Milliseconds as the chapter's tables write them: four decimals below 1 ms.
fn fmt_ms(v: f64) -> String {
    ms(v, 4)
}

/// What the kernel tables and figures say about L2.
const KERNEL_L2: (&str, &str) = (
    "l2",
    "warm (the table stays on the GPU between repetitions; it is rewritten by every solve)",
);
/// What the end-to-end figure and table say about L2.
const END_TO_END_L2: (&str, &str) = (
    "l2",
    "not controlled: each end-to-end run allocates, copies in, solves and copies out",
);

#[derive(serde::Serialize)]
struct OrderRow {
    order: String,
    scalar_multiplications: String,
    optimal: &'static str,
}

#[derive(serde::Serialize)]
struct Table1Row {
    n: usize,
    paper_serial_ms: String,
    paper_cuda_ms: String,
    paper_layout_ms: String,
    paper_layout_speedup: String,
    our_serial_ms: String,
    our_rowmajor_ms: String,
    our_diagonal_ms: String,
    our_layout_speedup: String,
}

#[derive(serde::Serialize)]
struct MemoryRow {
    address: usize,
    row_major_holds: String,
    diagonal_major_holds: String,
}

#[derive(serde::Serialize)]
struct MatrixRow {
    row: usize,
    #[serde(rename = "col 0")]
    c0: String,
    #[serde(rename = "col 1")]
    c1: String,
    #[serde(rename = "col 2")]
    c2: String,
    #[serde(rename = "col 3")]
    c3: String,
    #[serde(rename = "col 4")]
    c4: String,
    #[serde(rename = "col 5")]
    c5: String,
}

#[derive(serde::Serialize)]
struct TrafficRow {
    threads: &'static str,
    layout: &'static str,
    cost_bytes: u32,
    sectors_per_warp_load: String,
    lines_per_warp_load: String,
    sector_efficiency: String,
    total_sectors_millions: String,
    fresh_sectors_millions: String,
}

#[derive(serde::Serialize)]
struct ExperimentRow {
    experiment: String,
    n: usize,
    rowmajor_ms: String,
    diagonal_ms: String,
    diagonal_speedup: String,
}

impl ExperimentRow {
    fn new(experiment: String, n: usize, row: f64, diagonal: f64) -> Self {
        Self {
            experiment,
            n,
            rowmajor_ms: fmt_ms(row),
            diagonal_ms: fmt_ms(diagonal),
            diagonal_speedup: ratio(row, diagonal),
        }
    }

    fn pair(experiment: String, p: &LayoutPair) -> Self {
        Self::new(experiment, p.n, p.row_major.median_ms, p.diagonal.median_ms)
    }
}

#[derive(serde::Serialize)]
struct BreakevenRow {
    source: &'static str,
    first_n_gpu_faster: String,
    gpu_faster_from_n_on: String,
    counted: String,
}

/// Writes the chapter's figures and tables and prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    worked_example(run, r)?;
    layout_tables(run)?;
    traffic_table(run, r)?;
    let t1_rows = table1(run, r)?;
    breakeven(run, r)?;
    let experiments = experiments(run, r)?;
    variants(run, r)?;
    streams(run, r)?;

    println!(
        "{:>6} {:>12} {:>12} {:>12} {:>9} | paper V100: {:>9} {:>9} {:>7}",
        "n",
        "serial ms",
        "row-major",
        "diagonal",
        "speedup",
        "CUDA",
        "layout",
        "speedup"
    );
    for r in &t1_rows {
        println!(
            "{:>6} {:>12} {:>12} {:>12} {:>9} | {:>21} {:>9} {:>7}",
            r.n,
            r.our_serial_ms,
            r.our_rowmajor_ms,
            r.our_diagonal_ms,
            r.our_layout_speedup,
            r.paper_cuda_ms,
            r.paper_layout_ms,
            r.paper_layout_speedup
        );
    }
    for e in &experiments {
        println!(
            "{:>6}  {:<70} {:>10} {:>10} {:>6}",
            e.n, e.experiment, e.rowmajor_ms, e.diagonal_ms, e.diagonal_speedup
        );
    }
    println!(
        "every GPU table verified cell by cell against the CPU; figures and data written to {}",
        run.out.display()
    );
    Ok(())
}

/// How `cmm-worked-example` is shown (see `harness::table`).
const WORKED_SHOWN: [(&str, &str); 2] = [
    ("headers", "scalar_multiplications = scalar multiplications"),
    ("computed", "`cmm::dp`"),
];

/// The five orders of the worked example and the DP's answer.
fn worked_example(run: &Run, r: &Results) -> anyhow::Result<()> {
    let optimum = r.worked.optimal_cost();
    let rows: Vec<OrderRow> = r
        .worked_orders
        .iter()
        .map(|o| OrderRow {
            order: o.tree.to_string(),
            scalar_multiplications: o.cost.to_string(),
            optimal: if o.cost == optimum as u128 { "yes" } else { "" },
        })
        .collect();
    let title = format!(
        "The five orders of A1(20x2) A2(2x30) A3(30x12) A4(12x8); the DP (CPU and both GPU \
         layouts) finds {} = {}",
        optimum,
        paren::parenthesization(&r.worked)
    );
    run.table("cmm-worked-example", &title, &WORKED_SHOWN, &rows)
}

/// How `cmm-layout-memory` is shown (see `harness::table`).
const MEMORY_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "row_major_holds = row-major holds | \
         diagonal_major_holds = diagonal-major holds",
    ),
    ("computed", "`cmm::layout`"),
];

/// The paper's figures 2-4: the 6x6 upper triangle in both memory orders.
fn layout_tables(run: &Run) -> anyhow::Result<()> {
    let n6 = 6;
    let label = |r: usize, c: usize| {
        if c >= r {
            layout::upper_cell_label(n6, r, c)
        } else {
            String::new()
        }
    };
    let matrix: Vec<MatrixRow> = (0..n6)
        .map(|r| MatrixRow {
            row: r,
            c0: label(r, 0),
            c1: label(r, 1),
            c2: label(r, 2),
            c3: label(r, 3),
            c4: label(r, 4),
            c5: label(r, 5),
        })
        .collect();
    let title =
        "The upper triangle of a 6x6 table, cells lettered in row order (the paper's \
                 Figure 2), from cmm::layout";
    run.table("cmm-layout-matrix", title, &[("computed", "`cmm::layout`")], &matrix)?;
    let rm = layout::row_major_memory(n6);
    let dm = layout::diagonal_major_memory(n6);
    let memory: Vec<MemoryRow> = (0..rm.len().max(dm.len()))
        .map(|a| MemoryRow {
            address: a,
            row_major_holds: rm.get(a).cloned().flatten().unwrap_or_else(|| "·".into()),
            diagonal_major_holds: dm.get(a).cloned().flatten().unwrap_or_default(),
        })
        .collect();
    let title =
        "Memory order of the 6x6 triangle: row-major with the lower half unused \
                 (Figure 3) and diagonal-major, packed (Figure 4), from cmm::layout";
    run.table("cmm-layout-memory", title, &MEMORY_SHOWN, &memory)
}

/// How `cmm-traffic` is shown (see `harness::table`).
const TRAFFIC_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "cost_bytes = cost (bytes) | sectors_per_warp_load = sectors per warp load | \
         lines_per_warp_load = lines per warp load | \
         sector_efficiency = sector efficiency | \
         total_sectors_millions = sectors (millions) | \
         fresh_sectors_millions = fresh sectors (millions)",
    ),
    ("computed", "`cmm::traffic`"),
];

/// Traffic computed from the index functions: sectors per warp load.
fn traffic_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let rows: Vec<TrafficRow> = r
        .traffic
        .iter()
        .map(|(mapping, t)| TrafficRow {
            threads: match mapping {
                WarpMapping::CellPerThread => "thread per cell",
                WarpMapping::SplitKPerCell => "warp splits k",
            },
            layout: t.layout.name(),
            cost_bytes: t.elem_bytes,
            sectors_per_warp_load: format!("{:.2}", t.sectors_per_warp_load),
            lines_per_warp_load: format!("{:.2}", t.lines_per_warp_load),
            sector_efficiency: format!("{:.0}%", 100.0 * t.sector_efficiency),
            total_sectors_millions: format!("{:.1}", t.sectors as f64 / 1e6),
            fresh_sectors_millions: format!("{:.1}", t.fresh_sectors as f64 / 1e6),
        })
        .collect();
    let title = format!(
        "Table loads of the whole DP at n = {}, computed from the index functions (not \
         measured): 32-byte sectors and 128-byte lines per warp-wide load",
        r.settings.traffic_n
    );
    run.table("cmm-traffic", &title, &TRAFFIC_SHOWN, &rows)
}

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
fn table1(run: &Run, r: &Results) -> anyhow::Result<Vec<Table1Row>> {
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
fn breakeven(run: &Run, r: &Results) -> anyhow::Result<()> {
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
fn experiments(run: &Run, r: &Results) -> anyhow::Result<Vec<ExperimentRow>> {
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

    let stride_points: Vec<Point> = r
        .stride
        .iter()
        .flat_map(|p| Layout::ALL.map(|l| Point::ms(l.name(), p.n, p.get(l))))
        .collect();
    run.figure(
        "cmm-stride",
        &[KERNEL_L2],
        &Spec::line(
            "One-block kernels, n one at a time: the row-major table's row stride matters",
            "n (matrices); row-major row stride = (n + 1) x 8 bytes",
            "milliseconds",
        ),
        &stride_points,
    )?;

    let w = &r.widths;
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
fn variants(run: &Run, r: &Results) -> anyhow::Result<()> {
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
            };
            Point::new(k.layout().name(), group, s.median_ms, s.min_ms, s.max_ms)
        })
        .collect();
    let n = r.widths.n;
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
fn streams(run: &Run, r: &Results) -> anyhow::Result<()> {
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
