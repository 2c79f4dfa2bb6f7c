//! The transposes: each kernel's bandwidth and cost per warp, the sides that are not
//! multiples of 32 (packed and pitched), and the bank conflicts of a column read.

use crate::harness::ceiling::{with_meta, Ceilings};
use crate::harness::format::percent;
use crate::harness::plot::{PanelBy, Point, Spec};
use crate::harness::Run;

use super::super::measure::{Layout, Measurement, Results};
use super::super::transpose::{tma_conflicts, warp_cost, TMA_LABEL};
use super::{whole, L2_COLD};

#[derive(serde::Serialize)]
pub(super) struct TransposeRow {
    kernel: &'static str,
    threads: String,
    #[serde(rename = "elements per thread")]
    per_thread: u64,
    #[serde(rename = "sectors per warp: load, store")]
    sectors: String,
    #[serde(rename = "bank conflict: store, load")]
    conflicts: String,
    #[serde(rename = "GB/s median (min-max)")]
    gbps: String,
    #[serde(rename = "of copy")]
    of_copy: String,
}

/// The transposes: each kernel's bandwidth (figure) and cost per warp (table), the sides
/// that are not multiples of 32, and the bank conflicts of a column read.
pub(super) fn write_transposes(run: &Run, r: &Results) -> anyhow::Result<()> {
    // Transposes.
    let n = r.transpose_n;
    let copy = r.transpose_copy;
    let series = "GB/s, read + write";
    let mut points =
        vec![Point::new(series, "best copy", copy.median, copy.worst, copy.best)];
    let mut transpose_rows = Vec::new();
    // The per-warp model needs an interior tile; the counts do not depend on the size beyond it.
    let model_side = (n as u64).max(128);
    for (kernel, m) in &r.transposes {
        let g = m.gbps();
        points.push(Point::new(series, kernel.label(), g.median, g.worst, g.best));
        let cost = warp_cost(*kernel, model_side, model_side);
        let conflicts = match (cost.shared_store_conflict, cost.shared_load_conflict) {
            (Some(store), Some(load)) => format!("{store}-way, {load}-way"),
            _ => "no shared memory".to_string(),
        };
        transpose_rows.push(TransposeRow {
            kernel: kernel.label(),
            threads: format!("32 x {}", kernel.block_rows()),
            per_thread: kernel.elements_per_thread(),
            sectors: format!(
                "{}, {}",
                cost.global_load.sectors, cost.global_store.sectors
            ),
            conflicts,
            gbps: format!("{} ({}-{})", whole(g.median), whole(g.worst), whole(g.best)),
            of_copy: percent(g.median / copy.median),
        });
    }
    // The Hopper chapter's TMA transpose on the same matrix, when it ran.
    let tma_at_n = r
        .tma
        .iter()
        .find(|t| t.side == n && t.layout == Layout::Packed)
        .and_then(|t| t.time.as_ref().ok());
    if let Some(m) = tma_at_n {
        let g = m.gbps();
        points.push(Point::new(series, TMA_LABEL, g.median, g.worst, g.best));
        let (store, load) = tma_conflicts();
        transpose_rows.push(TransposeRow {
            kernel: TMA_LABEL,
            threads: "32 x 8".to_string(),
            per_thread: 4,
            sectors: "none: the TMA moves the tiles".to_string(),
            conflicts: format!("{store}-way, {load}-way"),
            gbps: format!("{} ({}-{})", whole(g.median), whole(g.worst), whole(g.best)),
            of_copy: percent(g.median / copy.median),
        });
    }
    let matrix = format!("{n} x {n} float, {} bytes each way", n * n * 4);
    // The transposes read and write alike: the copy is their ceiling; the record also
    // says the read-only and write-only ceilings on the same bytes.
    let [_, read, write] = r.transpose_ceilings.meta();
    let one_way = [read, write];
    run.figure(
        "coalescing-transpose",
        &with_meta(&[("l2", L2_COLD), ("matrix", &matrix)], &one_way),
        &Spec::bar(
            &format!("Transpose of a {n} x {n} float matrix"),
            "kernel",
            "GB/s (read + write)",
        ),
        &points,
    )?;
    run.table(
        "coalescing-transpose-kernels",
        &format!("The transposes per warp (computed) and their bandwidth at {n} x {n}, L2 cold; best copy of the same bytes ({}): {} GB/s", r.transpose_copy_by, whole(copy.median)),
        &with_meta(&[("l2", L2_COLD), ("matrix", &matrix)], &one_way),
        &transpose_rows,
    )?;
    write_sides(run, r)?;
    Ok(())
}

#[derive(serde::Serialize)]
pub(super) struct SideRow {
    side: usize,
    #[serde(rename = "rows starting on a sector")]
    aligned: String,
    kernel: &'static str,
    rows: String,
    #[serde(rename = "GB/s median (min-max)")]
    gbps: String,
    #[serde(rename = "best copy GB/s")]
    copy: String,
    #[serde(rename = "of best copy")]
    of_copy: String,
    #[serde(rename = "read-only GB/s")]
    read: String,
    #[serde(rename = "write-only GB/s")]
    write: String,
}

/// The columns `coalescing-transpose-pitch` shows; the read-only and write-only ceilings on
/// the same bytes stay in its data.
const PITCH_COLUMNS: &str = "side | rows starting on a sector | kernel | rows | \
                             GB/s median (min-max) | best copy GB/s | of best copy";

/// `coalescing-transpose-sides` (figure) and `coalescing-transpose-pitch` (table): the
/// fastest transposes as fractions of the best copy of the same bytes, at the timed power
/// of two and at sides that are not multiples of 32, with packed and with pitched rows.
pub(super) fn write_sides(run: &Run, r: &Results) -> anyhow::Result<()> {
    if r.sides.is_empty() {
        return Ok(());
    }
    let mut points = Vec::new();
    let mut rows = Vec::new();
    // (series as recorded, name drawn): one panel per kernel, its rows packed or pitched.
    let mut labels: Vec<(String, String)> = Vec::new();
    let n = r.transpose_n;
    let mut add = |side: usize, k: &'static str, layout: Layout, m: &Measurement, c| {
        let g = m.gbps();
        let (copy, by, one_way): (&crate::harness::stats::Rate, &str, &Ceilings) = c;
        let series = format!("{k}, {layout}");
        if !labels.iter().any(|(r, _)| *r == series) {
            labels.push((series.clone(), format!("{k}: rows {layout}")));
        }
        let f = |v: f64| v / copy.median;
        points.push(Point::new(&series, side, f(g.median), f(g.worst), f(g.best)));
        rows.push(SideRow {
            side,
            aligned: aligned(layout, side),
            kernel: k,
            rows: layout.to_string(),
            gbps: format!("{} ({}-{})", whole(g.median), whole(g.worst), whole(g.best)),
            copy: format!("{} ({by})", whole(copy.median)),
            of_copy: percent(g.median / copy.median),
            read: whole(one_way.read),
            write: whole(one_way.write),
        });
    };
    let side_kernels = super::super::measure::SIDE_KERNELS;
    for (k, m) in r.transposes.iter().filter(|(k, _)| side_kernels.contains(k)) {
        let c = (&r.transpose_copy, r.transpose_copy_by, &r.transpose_ceilings);
        add(n, k.label(), Layout::Packed, m, c);
    }
    for side in &r.sides {
        for (k, layout, m) in &side.runs {
            add(
                side.side,
                k.label(),
                *layout,
                m,
                (&side.copy, side.copy_by, &side.ceilings),
            );
        }
    }
    // The TMA transpose against the same copies; a layout it cannot address is a row
    // of the table that says why, and no bar.
    let mut refused = Vec::new();
    for t in &r.tma {
        let copy = if t.side == n {
            Some((&r.transpose_copy, r.transpose_copy_by, &r.transpose_ceilings))
        } else {
            let side = r.sides.iter().find(|s| s.side == t.side);
            side.map(|s| (&s.copy, s.copy_by, &s.ceilings))
        };
        let Some(c) = copy else { continue };
        match &t.time {
            Ok(m) => add(t.side, TMA_LABEL, t.layout, m, c),
            Err(why) => refused.push(SideRow {
                side: t.side,
                aligned: aligned(t.layout, t.side),
                kernel: TMA_LABEL,
                rows: t.layout.to_string(),
                gbps: format!("not run: {why}"),
                copy: format!("{} ({})", whole(c.0.median), c.1),
                of_copy: "-".to_string(),
                read: whole(c.2.read),
                write: whole(c.2.write),
            }),
        }
    }
    rows.extend(refused);
    // Grouped by side as measured, packed rows before pitched ones (a stable sort).
    let order =
        |side: usize| r.sides.iter().position(|s| s.side == side).map(|i| i + 1);
    let packed = Layout::Packed.to_string();
    rows.sort_by_key(|row| {
        (if row.side == n { Some(0) } else { order(row.side) }, row.rows != packed)
    });
    let pitch = super::super::measure::PITCH_FLOATS;
    let note = format!(
        "rows packed (a row of n floats starts n floats after the last) or pitched to {pitch} floats ({} bytes); every fraction divides by the best copy of the same n² floats, measured in the same run",
        pitch * 4
    );
    // Every side's read-only and write-only ceilings, beside the copy each divides by.
    let per_side = |one_way: fn(&Ceilings) -> f64| {
        let at_n = std::iter::once((n, &r.transpose_ceilings));
        let sides = at_n.chain(r.sides.iter().map(|s| (s.side, &s.ceilings)));
        let each: Vec<String> = sides
            .map(|(side, c)| format!("{side}: {} GB/s", whole(one_way(c))))
            .collect();
        each.join(", ")
    };
    let one_way = [
        (
            "read_ceiling",
            format!(
                "read-only kernel on each side's n² floats: {}",
                per_side(|c| c.read)
            ),
        ),
        (
            "write_ceiling",
            format!(
                "write-only kernel on each side's n² floats: {}",
                per_side(|c| c.write)
            ),
        ),
    ];
    run.figure(
        "coalescing-transpose-sides",
        &with_meta(&[("l2", L2_COLD), ("layouts", &note)], &one_way),
        &labels.iter().fold(
            Spec::bar(
                "The fastest transposes at sides that are not multiples of 32",
                "side (floats)",
                "fraction of the best copy (read + write)",
            )
            .panels(PanelBy::SeriesBeforeColon, 2),
            |s, (r, l)| s.series_label(r, l),
        ),
        &points,
    )?;
    run.table(
        "coalescing-transpose-pitch",
        "The fastest transposes with packed and pitched rows, L2 cold, as fractions of the best copy of the same bytes",
        &[("l2", L2_COLD), ("layouts", &note), ("columns", PITCH_COLUMNS)],
        &rows,
    )
}

/// The share of rows that start on a 32-byte sector: "all" or "1 in k".
pub(super) fn aligned(layout: Layout, side: usize) -> String {
    match layout.pitch(side) % 8 {
        0 => "all".to_string(),
        p => format!("1 in {}", 8 / gcd(p, 8)),
    }
}

pub(super) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
