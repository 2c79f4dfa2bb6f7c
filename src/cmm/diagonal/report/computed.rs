//! The tables computed by code, not measured: the worked example's orders, the two layouts
//! of a small table, and the traffic each layout makes.

use super::*;
use crate::cmm::layout;
use crate::cmm::paren;
use crate::cmm::traffic::WarpMapping;

/// How `cmm-worked-example` is shown (see `harness::table`).
const WORKED_SHOWN: [(&str, &str); 2] = [
    ("headers", "scalar_multiplications = scalar multiplications"),
    ("computed", "`cmm::dp`"),
];

/// The five orders of the worked example and the DP's answer.
pub(super) fn worked_example(run: &Run, r: &Results) -> anyhow::Result<()> {
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
pub(super) fn layout_tables(run: &Run) -> anyhow::Result<()> {
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
pub(super) fn traffic_table(run: &Run, r: &Results) -> anyhow::Result<()> {
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

#[derive(serde::Serialize)]
struct FootprintRow {
    n: usize,
    layout: &'static str,
    cost_mib: String,
    split_mib: String,
    both_mib: String,
    share_of_l2: String,
}

/// How `cmm-footprint` is shown (see `harness::table`).
const FOOTPRINT_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "cost_mib = cost table (MiB) | split_mib = split table (MiB) | \
         both_mib = both tables (MiB) | share_of_l2 = share of the L2",
    ),
    (
        "computed",
        "`cmm::layout` (8-byte costs, 4-byte splits, as the kernels allocate)",
    ),
];

/// What each one-block kernel keeps in memory at the n of the speedup-against-n sweep: the
/// cost table and the split table, both in the kernel's layout, against the L2's size.
pub(super) fn footprint_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mib = |bytes: usize| format!("{:.1}", bytes as f64 / (1 << 20) as f64);
    let mut rows = Vec::new();
    for &n in &r.settings.ratio_sweep {
        for l in Layout::ALL {
            let cells = l.dp_len(n);
            let both = cells * (8 + 4);
            rows.push(FootprintRow {
                n,
                layout: l.name(),
                cost_mib: mib(cells * 8),
                split_mib: mib(cells * 4),
                both_mib: mib(both),
                share_of_l2: format!("{:.0}%", 100.0 * both as f64 / r.l2_bytes as f64),
            });
        }
    }
    let l2 = format!("{} MiB", r.l2_bytes >> 20);
    let title = "What each one-block kernel keeps in memory: its cost and split tables";
    run.table(
        "cmm-footprint",
        title,
        &[&[("l2_size", l2.as_str())][..], &FOOTPRINT_SHOWN].concat(),
        &rows,
    )
}
