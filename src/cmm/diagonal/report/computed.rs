//! The tables computed by code, not measured: the worked example's orders and the traffic
//! each layout makes (the two layouts of a small table are a diagram).

use super::*;
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
