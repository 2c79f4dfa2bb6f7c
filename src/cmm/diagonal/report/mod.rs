//! Every figure and table of the chapter "Chained matrix multiplication and the diagonal
//! layout", drawn from [`Results`], and the console summary.

use crate::cmm::gpu::Kernel;
use crate::cmm::layout::Layout;
use crate::cmm::paper;
use crate::harness::format::{ms, ratio};
use crate::harness::plot::{Point, Spec, Ticks};
use crate::harness::Run;

use super::measure::{LayoutPair, Part, Results};

mod computed;
mod measured;

use self::computed::{footprint_table, traffic_table, worked_example};
use self::measured::{
    breakeven, experiments, separation, streams, stride, table1, variants,
};

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
    traffic_table(run, r)?;
    footprint_table(run, r)?;
    let part = r.settings.part;
    if part.has(Part::Stride) {
        stride(run, r)?;
    }
    if part.has(Part::Barrier) {
        separation(run, r)?;
        for s in &r.separation {
            println!(
                "n = {:>5}, B = {:>3}: launch per diagonal {} ms, graph {} ms, \
                 cooperative ({} blocks) {} ms",
                s.n,
                s.block,
                fmt_ms(s.launches.median_ms),
                fmt_ms(s.graph.median_ms),
                s.grid,
                fmt_ms(s.cooperative.median_ms)
            );
        }
    }
    if !part.has(Part::Paper) {
        return Ok(());
    }
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
