//! The glossary's pictures: one small diagram for each core term (warp, sector, bank conflict,
//! tile, occupancy, bytes in flight), each computed by the model the chapters use for it, and
//! bytes in flight composed from the measured latency and read ceiling.

use std::path::Path;

use anyhow::Context;
use plotters::style::text_anchor::HPos;

use super::hierarchy::{chases, median_of, meta_number, provenance};
use super::Diagram;
use crate::chapters::roofline::bytes_in_flight as littles_law;
use crate::coalescing::banks::{bank_of, column_read_words, conflict_degree, BANKS};
use crate::coalescing::sectors::{Access, LINE_BYTES, SECTOR_BYTES, WARP_SIZE};
use crate::harness::occupancy::{
    blocks_by_limit, blocks_per_sm, occupancy as occupancy_of, KernelResources, Limit,
    SmLimits, SM_90,
};
use crate::harness::plot::{Fill, Ink, Shape};
use crate::harness::roof::read;
use crate::tiling::model::Step;

const PANEL: &str = "";

/// Threads of the block the warp picture splits.
pub(super) const BLOCK_THREADS: u64 = 96;
/// The thread whose warp and lane the picture names.
pub(super) const THREAD: u64 = 40;

/// A block of [`BLOCK_THREADS`] threads as warps of [`WARP_SIZE`]: one row per warp, one
/// cell per lane; the warp of [`THREAD`] tinted, the thread itself marked.
pub fn warp() -> Diagram {
    let warps = BLOCK_THREADS.div_ceil(WARP_SIZE);
    let (marked_warp, marked_lane) = (THREAD / WARP_SIZE, THREAD % WARP_SIZE);
    let row_y = |w: u64| w as f64 * 1.5;
    let mut shapes = Vec::new();
    for t in 0..BLOCK_THREADS {
        let (w, lane) = (t / WARP_SIZE, t % WARP_SIZE);
        let fill = if t == THREAD {
            Fill::Solid(1)
        } else if w == marked_warp {
            Fill::Tint(0)
        } else {
            Fill::Plain
        };
        shapes.push(Shape::cell(PANEL, lane as f64, row_y(w), 1.0, 1.0, fill, ""));
    }
    for w in 0..warps {
        let (first, last) =
            (w * WARP_SIZE, ((w + 1) * WARP_SIZE).min(BLOCK_THREADS) - 1);
        let label = format!("warp {w}: threads {first}–{last}");
        shapes.push(Shape::text(PANEL, -0.4, row_y(w) + 0.5, HPos::Right, &label));
    }
    shapes.push(Shape::text(PANEL, 0.0, -0.7, HPos::Left, "lane 0"));
    let last_lane = format!("lane {}", WARP_SIZE - 1);
    shapes.push(Shape::text(PANEL, WARP_SIZE as f64, -0.7, HPos::Right, &last_lane));
    let note = format!(
        "thread t is lane t mod {WARP_SIZE} of warp t / {WARP_SIZE}: thread {THREAD} \
         (orange) is lane {marked_lane} of warp {marked_warp} (blue)"
    );
    shapes.push(Shape::text(PANEL, 0.0, row_y(warps) + 0.2, HPos::Left, &note));
    Diagram {
        stem: "glossary-diagram-warp",
        title: format!(
            "A block of {BLOCK_THREADS} threads is {warps} warps of {WARP_SIZE}, one row per \
             warp"
        ),
        computed_by: "coalescing::sectors::WARP_SIZE",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The access of the sector picture: 4-byte elements, unit stride, from an aligned start.
pub(super) fn sector_access() -> Access {
    Access::strided(4, 1, 0)
}

/// One warp's 4-byte unit-stride load (warp 0 of [`sector_access`]): its lanes, the sectors
/// that hold their bytes and the line of those sectors; one unit per 4 bytes.
pub fn sector() -> Diagram {
    let access = sector_access();
    let addresses = access.warp_addresses(0);
    let fp = access.warp_footprint(0);
    let unit = |byte: u64| (byte / access.bytes) as f64;
    let mut shapes = Vec::new();
    for (lane, &a) in addresses.iter().enumerate() {
        // Neighbouring lanes alternate dark and light blue, so that touching ones part.
        let fill = Fill::Solid(if lane % 2 == 0 { 0 } else { 4 });
        shapes.push(Shape::cell(PANEL, unit(a), 0.0, 1.0, 0.8, fill, ""));
    }
    let last_byte = addresses.last().expect("a warp has lanes") + access.bytes - 1;
    let sectors = addresses[0] / SECTOR_BYTES..=last_byte / SECTOR_BYTES;
    for sector in sectors {
        let lo = sector * SECTOR_BYTES;
        let w = unit(SECTOR_BYTES);
        let label = format!("sector {sector}: {SECTOR_BYTES} bytes");
        shapes.push(Shape::cell(PANEL, unit(lo), 1.4, w, 1.2, Fill::Tint(0), &label));
    }
    let lines = addresses[0] / LINE_BYTES..=last_byte / LINE_BYTES;
    for line in lines {
        let (x, w) = (unit(line * LINE_BYTES), unit(LINE_BYTES));
        shapes.push(Shape::frame(PANEL, x, 1.4, w, 1.2, Ink::Dark));
        let label = format!("line {line}: {LINE_BYTES} bytes");
        shapes.push(Shape::text(PANEL, x + w / 2.0, 3.1, HPos::Center, &label));
    }
    let last_lane = format!("lane {}", WARP_SIZE - 1);
    shapes.push(Shape::text(PANEL, 0.0, -0.6, HPos::Left, "lane 0"));
    shapes.push(Shape::text(PANEL, unit(32 * 4), -0.6, HPos::Right, &last_lane));
    let note = format!(
        "{} lanes × {} bytes = {} bytes: {} sectors, {} line, {} bytes moved",
        fp.lanes,
        access.bytes,
        fp.requested_bytes,
        fp.sectors,
        fp.lines,
        fp.moved_bytes()
    );
    shapes.push(Shape::text(PANEL, 0.0, 4.1, HPos::Left, &note));
    Diagram {
        stem: "glossary-diagram-sector",
        title: "One warp's load of 32 consecutive floats: the sectors that hold its bytes, and \
                their line"
            .into(),
        computed_by: "coalescing::sectors::footprint",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// Lanes of the bank picture: the first of a warp that reads a column.
pub(super) const BANK_LANES: u64 = 8;
/// Words per row of the bank picture's tile: one per bank.
pub(super) const BANK_ROW_WORDS: u64 = 32;

/// The words the bank picture's lanes read: column 0 of a tile of [`BANK_ROW_WORDS`]-word
/// rows, one row per lane.
pub(super) fn bank_words(row_words: u64) -> Vec<u64> {
    column_read_words(row_words, 0).into_iter().take(BANK_LANES as usize).collect()
}

/// [`BANK_LANES`] lanes reading a column of a 32-word-wide tile: memory drawn one bank per
/// column, the words read marked, the conflict degree said.
pub fn bank_conflict() -> Diagram {
    let words = bank_words(BANK_ROW_WORDS);
    let mut shapes = Vec::new();
    for row in 0..BANK_LANES {
        for bank in 0..BANKS {
            let word = row * BANK_ROW_WORDS + bank;
            let fill = if words.contains(&word) { Fill::Solid(1) } else { Fill::Plain };
            let (x, y) = (bank_of(word) as f64, (word / BANKS) as f64);
            shapes.push(Shape::cell(PANEL, x, y, 1.0, 1.0, fill, ""));
        }
    }
    for (lane, &word) in words.iter().enumerate() {
        let y = (word / BANKS) as f64 + 0.5;
        let label = format!("lane {lane}");
        shapes.push(Shape::text(PANEL, -0.4, y, HPos::Right, &label));
    }
    shapes.push(Shape::text(PANEL, 0.0, -0.7, HPos::Left, "bank 0"));
    let last_bank = format!("bank {}", BANKS - 1);
    shapes.push(Shape::text(PANEL, BANKS as f64, -0.7, HPos::Right, &last_bank));
    let degree = conflict_degree(&words);
    let mut hit: Vec<u64> = words.iter().map(|&w| bank_of(w)).collect();
    hit.sort_unstable();
    hit.dedup();
    let rows = BANK_LANES as f64;
    let note = format!(
        "{} different words in {} bank{}: conflict degree {degree}, {degree} passes",
        words.len(),
        hit.len(),
        if hit.len() == 1 { "" } else { "s" },
    );
    shapes.push(Shape::text(PANEL, 0.0, rows + 0.8, HPos::Left, &note));
    let padded = BANK_ROW_WORDS + 1;
    let padded_note = format!(
        "with {padded}-word rows the same lanes need {} pass{}",
        conflict_degree(&bank_words(padded)),
        if conflict_degree(&bank_words(padded)) == 1 { "" } else { "es" }
    );
    shapes.push(Shape::text(PANEL, 0.0, rows + 1.8, HPos::Left, &padded_note));
    Diagram {
        stem: "glossary-diagram-bank-conflict",
        title: format!(
            "Lane l reads tile[l][0] of a tile of {BANK_ROW_WORDS}-word rows: shared memory \
             drawn {BANKS} words a row, one column per bank"
        ),
        computed_by: "coalescing::banks::conflict_degree",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The step of the tiling chapter the tile picture draws: square shared-memory tiles.
pub(super) const TILE_STEP: Step = Step::Tiled16;
/// Tiles per side of the matrices drawn.
pub(super) const TILES: usize = 3;
/// The k step drawn, and the block's tile of C (row, column) in tiles.
pub(super) const TILE_K: usize = 1;
pub(super) const TILE_C: (usize, usize) = (1, 1);
/// Matrix elements per unit of the drawing.
pub(super) const TILE_ELEMENTS_PER_UNIT: usize = 8;

/// How many times each element of a staged tile is used for one load from global memory:
/// the untiled kernel's global bytes per FLOP over the tiled one's.
pub(super) fn tile_reuse() -> f64 {
    let untiled = Step::Naive.global_bytes_per_flop().expect("the naive step loads");
    let tiled = TILE_STEP.global_bytes_per_flop().expect("a tiled step loads");
    untiled / tiled
}

/// A block's tile of C, the row of A tiles and column of B tiles it walks through, and the
/// pair staged in shared memory at one step of k.
pub fn tile() -> Diagram {
    let (t, _) = TILE_STEP.block_tile();
    let side = t as f64 / TILE_ELEMENTS_PER_UNIT as f64;
    let span = side * TILES as f64;
    let (cx, cy) = (span + 1.0, span + 1.0);
    let mut shapes = Vec::new();
    for i in 0..TILES {
        for j in 0..TILES {
            let (x, y) = (j as f64 * side, i as f64 * side);
            // A: the block's row of tiles, labelled by k; B: its column.
            let a = if i == TILE_C.0 {
                let fill = if j == TILE_K { Fill::Tint(0) } else { Fill::Plain };
                (fill, format!("k = {j}"))
            } else {
                (Fill::Unused, String::new())
            };
            shapes.push(Shape::cell(PANEL, x, cy + y, side, side, a.0, &a.1));
            let b = if j == TILE_C.1 {
                let fill = if i == TILE_K { Fill::Tint(0) } else { Fill::Plain };
                (fill, format!("k = {i}"))
            } else {
                (Fill::Unused, String::new())
            };
            shapes.push(Shape::cell(PANEL, cx + x, y, side, side, b.0, &b.1));
            let c = if (i, j) == TILE_C {
                (Fill::Tint(1), "block".to_string())
            } else {
                (Fill::Unused, String::new())
            };
            shapes.push(Shape::cell(PANEL, cx + x, cy + y, side, side, c.0, &c.1));
        }
    }
    shapes.push(Shape::text(PANEL, span / 2.0, cy - 0.45, HPos::Center, "A"));
    shapes.push(Shape::text(PANEL, cx - 0.3, span / 2.0, HPos::Right, "B"));
    shapes.push(Shape::text(PANEL, cx + span + 0.3, cy + span / 2.0, HPos::Left, "C"));
    let (bx, by) = TILE_STEP.block();
    let reuse = tile_reuse();
    let notes = [
        format!("T = {t}: a block of {bx} × {by} threads computes one T × T tile of C (orange)"),
        format!(
            "at each step of k it stages a tile of A and one of B in shared memory (blue: \
             k = {TILE_K})"
        ),
        format!("each staged element is loaded once and read by {reuse:.0} threads"),
        format!(
            "global memory per FLOP: {:.0} bytes untiled, {} bytes tiled",
            Step::Naive.global_bytes_per_flop().expect("the naive step loads"),
            TILE_STEP.global_bytes_per_flop().expect("a tiled step loads")
        ),
    ];
    for (i, note) in notes.iter().enumerate() {
        let y = cy + span + 0.8 + 0.75 * i as f64;
        shapes.push(Shape::text(PANEL, 0.0, y, HPos::Left, note));
    }
    Diagram {
        stem: "glossary-diagram-tile",
        title: format!(
            "Tiles of {t} × {t}: a block's tile of C and the tiles of A and B it stages in \
             shared memory, one step of k at a time"
        ),
        computed_by: "tiling::model::Step",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The SM of the occupancy picture: compute capability 9.0, the book's GPUs.
pub(super) const OCCUPANCY_SM: SmLimits = SM_90;
/// The kernel of the occupancy picture: example values, not a kernel of the book.
pub(super) const OCCUPANCY_KERNEL: KernelResources = KernelResources {
    threads_per_block: 256,
    registers_per_thread: 64,
    shared_per_block: 16 * 1024,
};
/// Units of the drawing one SM's resource spans.
pub(super) const SM_UNITS: f64 = 24.0;

/// What one block of `k` takes of each drawn resource of `sm`, as a share of the SM's.
pub(super) fn block_share(sm: &SmLimits, k: &KernelResources, limit: Limit) -> f64 {
    let warps = k.threads_per_block.div_ceil(32);
    match limit {
        Limit::Threads => (warps * 32) as f64 / sm.threads as f64,
        Limit::Registers => {
            let per_warp = (k.registers_per_thread * 32)
                .div_ceil(sm.register_unit_per_warp)
                * sm.register_unit_per_warp;
            (per_warp * warps) as f64 / sm.registers as f64
        }
        Limit::SharedMemory => {
            let bytes = (k.shared_per_block + sm.shared_reserved_per_block)
                .div_ceil(sm.shared_unit_bytes)
                * sm.shared_unit_bytes;
            bytes as f64 / sm.shared_bytes as f64
        }
        Limit::Blocks => 1.0 / sm.blocks as f64,
    }
}

/// One SM's threads, registers and shared memory as bars, each filled with as many blocks of
/// the example kernel as it holds; the tightest marked.
pub fn occupancy() -> Diagram {
    let (sm, k) = (OCCUPANCY_SM, OCCUPANCY_KERNEL);
    let (blocks, tightest) = blocks_per_sm(&sm, &k);
    let mut shapes = Vec::new();
    let resource = |l: Limit| match l {
        Limit::Threads => format!("{} threads", sm.threads),
        Limit::Registers => format!("{} registers", sm.registers),
        Limit::SharedMemory => format!("{} KiB shared", sm.shared_bytes / 1024),
        Limit::Blocks => format!("{} blocks", sm.blocks),
    };
    let drawn = blocks_by_limit(&sm, &k)
        .into_iter()
        .filter(|&(l, _)| l != Limit::Blocks)
        .enumerate();
    for (row, (limit, fit)) in drawn {
        let y = row as f64 * 1.6;
        let w = block_share(&sm, &k, limit) * SM_UNITS;
        let fill = if limit == tightest { Fill::Tint(1) } else { Fill::Tint(0) };
        for b in 0..fit {
            shapes.push(Shape::cell(PANEL, b as f64 * w, y, w, 1.0, fill, ""));
        }
        shapes.push(Shape::frame(PANEL, 0.0, y, SM_UNITS, 1.0, Ink::Dark));
        shapes.push(Shape::text(PANEL, -0.4, y + 0.5, HPos::Right, &resource(limit)));
        let count = if limit == tightest {
            format!("{fit} blocks: the tightest")
        } else {
            format!("{fit} blocks")
        };
        shapes.push(Shape::text(PANEL, SM_UNITS + 0.4, y + 0.5, HPos::Left, &count));
    }
    let kernel = format!(
        "example kernel: {} threads a block, {} registers a thread, {} KiB shared a block",
        k.threads_per_block,
        k.registers_per_thread,
        k.shared_per_block / 1024
    );
    shapes.push(Shape::text(PANEL, -5.5, -0.9, HPos::Left, &kernel));
    let warps = blocks * k.threads_per_block.div_ceil(32);
    let notes = [
        format!(
            "{blocks} blocks fit ({} limits it): {warps} of {} warps, occupancy {:.0}%",
            tightest.label(),
            sm.threads / 32,
            100.0 * occupancy_of(&sm, &k)
        ),
        format!(
            "each bar is one SM of compute capability 9.0; it also holds at most {} blocks",
            sm.blocks
        ),
    ];
    for (i, note) in notes.iter().enumerate() {
        shapes.push(Shape::text(PANEL, -5.5, 5.2 + 0.9 * i as f64, HPos::Left, note));
    }
    Diagram {
        stem: "glossary-diagram-occupancy",
        title: "How many blocks of a kernel one SM holds: each of its resources filled with \
                blocks (example values, not measured)"
            .into(),
        computed_by: "harness::occupancy::blocks_per_sm",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

pub const BYTES_IN_FLIGHT_STEM: &str = "glossary-diagram-bytes-in-flight";

/// The records the bytes-in-flight picture is composed from: the dependent-load latency (and
/// the SMs) of the memory-spaces chapter, and the ceilings' read rate.
pub const BYTES_IN_FLIGHT_FROM: &[&str] =
    &["memory_spaces-latency", "ceilings-summary"];

/// The ceiling the rate of the picture is: loads alone, as only loads wait for their data.
const READ_CEILING: &str = "device read, read-only kernel";

/// Slots, each a bar of requests, per latency.
pub(super) const SLOTS_PER_LATENCY: usize = 8;
/// Bars drawn.
pub(super) const BARS: usize = 12;
/// Where "now" is drawn, in slots: after enough bars that a full latency of them is open.
pub(super) const NOW: f64 = 11.5;

/// What the bytes-in-flight picture draws: one SM's share of the read rate, and the latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Flight {
    pub latency_ns: f64,
    pub read_gbps: f64,
    pub sms: f64,
}

impl Flight {
    pub fn per_sm_gbps(&self) -> f64 {
        self.read_gbps / self.sms
    }

    /// Bytes one SM must have in flight (Little's law).
    pub fn per_sm_bytes(&self) -> f64 {
        littles_law(self.latency_ns, self.per_sm_gbps())
    }

    /// Bytes one bar stands for: one SM's requests over one slot, a latency's share.
    pub fn bar_bytes(&self) -> f64 {
        self.per_sm_bytes() / SLOTS_PER_LATENCY as f64
    }

    /// Reads the latency of device memory (the global chase at its largest footprint, beyond
    /// L2, as the memory hierarchy takes it), the SMs and the read ceiling from the records
    /// of `dir`.
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        let stem = "memory_spaces-latency";
        let latency = read(dir, stem)?;
        let l2_bytes = meta_number(&latency, stem, "l2_mib")? * 1024.0 * 1024.0;
        let device = chases(&latency, &|s| s.starts_with("global"))
            .last()
            .copied()
            .filter(|c| c.footprint_bytes > l2_bytes)
            .context(format!(
                "{stem} has no global chase beyond L2 (a full run measures it)"
            ))?;
        let summary = read(dir, "ceilings-summary")?;
        let read_gbps = median_of(&summary, "ceilings-summary", READ_CEILING)?;
        Ok(Self {
            latency_ns: device.ns,
            read_gbps,
            sms: meta_number(&latency, stem, "sms")?,
        })
    }
}

fn kib(bytes: f64) -> String {
    format!("{:.1} KiB", bytes / 1024.0)
}

/// Little's law as a picture: one SM's requests, a bar per slot of an eighth of the latency,
/// each bar as long as the latency; at any moment a latency's worth of bars is open.
pub(super) fn draw_flight(f: &Flight) -> Diagram {
    let mut shapes = Vec::new();
    let latency = SLOTS_PER_LATENCY as f64;
    let row_y = |i: usize| i as f64 * 0.8;
    let bar = kib(f.bar_bytes());
    for i in 0..BARS {
        let start = i as f64;
        let open = start <= NOW && NOW < start + latency;
        let fill = if open { Fill::Tint(0) } else { Fill::Plain };
        shapes.push(Shape::cell(PANEL, start, row_y(i), latency, 0.6, fill, ""));
    }
    let bottom = row_y(BARS) + 0.2;
    shapes.push(Shape::line(PANEL, (NOW, -0.4), (NOW, bottom), Ink::Colour(1)));
    shapes.push(Shape::text(PANEL, NOW, -0.8, HPos::Center, "now"));
    let end = (BARS - 1) as f64 + latency;
    shapes.push(Shape::arrow(
        PANEL,
        (0.0, bottom + 0.4),
        (end, bottom + 0.4),
        Ink::Muted,
    ));
    shapes.push(Shape::text(PANEL, end + 0.3, bottom + 0.4, HPos::Left, "time"));
    let open =
        (0..BARS).filter(|&i| (i as f64) <= NOW && NOW < i as f64 + latency).count();
    let notes = [
        format!(
            "each bar: the loads one SM issues in {:.0} ns, {bar}, open for the latency \
             L = {:.0} ns",
            f.latency_ns / latency,
            f.latency_ns
        ),
        format!(
            "rate: {:.0} GB/s read by {:.0} SMs = {:.1} GB/s per SM",
            f.read_gbps,
            f.sms,
            f.per_sm_gbps()
        ),
        format!(
            "open now: {open} bars = {} in flight per SM = rate × L",
            kib(open as f64 * f.bar_bytes())
        ),
    ];
    for (i, note) in notes.iter().enumerate() {
        shapes.push(Shape::text(
            PANEL,
            0.0,
            bottom + 1.3 + 0.75 * i as f64,
            HPos::Left,
            note,
        ));
    }
    Diagram {
        stem: BYTES_IN_FLIGHT_STEM,
        title:
            "Little's law for one SM: loads issued at the read rate, each open for the \
                latency of device memory"
                .into(),
        computed_by: "roofline::bytes_in_flight",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The bytes-in-flight picture, composed from the records of `dir`.
pub fn bytes_in_flight(dir: &Path) -> anyhow::Result<Diagram> {
    let f = Flight::read(dir)?;
    Ok(Diagram {
        provenance: Some(provenance(dir, BYTES_IN_FLIGHT_FROM)?),
        ..draw_flight(&f)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coalescing::sectors::footprint;
    use crate::harness::plot::ShapeKind;

    fn cells(d: &Diagram) -> Vec<&Shape> {
        d.shapes.iter().filter(|s| s.shape == ShapeKind::Cell).collect()
    }

    fn says(d: &Diagram, text: &str) -> bool {
        d.shapes.iter().any(|s| s.label.contains(text))
    }

    #[test]
    fn the_warps_and_lanes_drawn_are_the_division() {
        let d = warp();
        let cells = cells(&d);
        assert_eq!(cells.len() as u64, BLOCK_THREADS);
        let rows: std::collections::BTreeSet<u64> =
            cells.iter().map(|s| (s.y / 1.5) as u64).collect();
        assert_eq!(rows.len() as u64, BLOCK_THREADS / WARP_SIZE);
        for (t, s) in cells.iter().enumerate() {
            let t = t as u64;
            assert_eq!(
                (s.x as u64, (s.y / 1.5) as u64),
                (t % WARP_SIZE, t / WARP_SIZE)
            );
        }
        let marked: Vec<&&Shape> =
            cells.iter().filter(|s| s.fill().ok() == Some(Fill::Solid(1))).collect();
        assert_eq!(marked.len(), 1);
        assert_eq!(marked[0].x as u64 + 32 * (marked[0].y / 1.5) as u64, THREAD);
        let warp_cells = cells.iter().filter(|s| s.fill().ok() == Some(Fill::Tint(0)));
        assert_eq!(warp_cells.count() as u64, WARP_SIZE - 1);
        assert!(says(&d, "thread 40 (orange) is lane 8 of warp 1 (blue)"));
    }

    #[test]
    fn the_sectors_drawn_are_the_models_count() {
        let d = sector();
        let access = sector_access();
        let fp = footprint(&access.warp_addresses(0), access.bytes);
        let tinted = cells(&d)
            .into_iter()
            .filter(|s| s.fill().ok() == Some(Fill::Tint(0)))
            .count();
        assert_eq!(tinted as u64, fp.sectors);
        assert_eq!(fp.sectors, 4);
        let frames = d.shapes.iter().filter(|s| s.shape == ShapeKind::Frame).count();
        assert_eq!(frames as u64, fp.lines);
        let lanes: Vec<&Shape> = cells(&d)
            .into_iter()
            .filter(|s| matches!(s.fill(), Ok(Fill::Solid(_))))
            .collect();
        assert_eq!(lanes.len() as u64, WARP_SIZE);
        for (lane, s) in lanes.iter().enumerate() {
            assert_eq!(s.x as u64 * access.bytes, access.address(lane as u64));
        }
        assert!(says(&d, &format!("{} sectors, 1 line, 128 bytes moved", fp.sectors)));
    }

    #[test]
    fn the_conflict_degree_drawn_is_conflict_degree() {
        let d = bank_conflict();
        let words = bank_words(BANK_ROW_WORDS);
        let read: Vec<&Shape> = cells(&d)
            .into_iter()
            .filter(|s| s.fill().ok() == Some(Fill::Solid(1)))
            .collect();
        assert_eq!(read.len() as u64, BANK_LANES);
        for (s, &w) in read.iter().zip(&words) {
            assert_eq!((s.x as u64, s.y as u64), (bank_of(w), w / BANKS));
        }
        let degree = conflict_degree(&words);
        assert_eq!(degree, BANK_LANES);
        assert!(says(&d, &format!("conflict degree {degree}, {degree} passes")));
        assert_eq!(conflict_degree(&bank_words(BANK_ROW_WORDS + 1)), 1);
        assert!(says(&d, "rows the same lanes need 1 pass"));
    }

    #[test]
    fn the_tiles_and_reuse_drawn_are_the_models() {
        let d = tile();
        let (t, t_cols) = TILE_STEP.block_tile();
        assert_eq!(t, t_cols);
        // The block's threads: one per element of its tile of C.
        let (bx, by) = TILE_STEP.block();
        assert_eq!((bx * by) as usize, t * t);
        // Each staged element serves the T threads of its row (A) or column (B).
        assert_eq!(tile_reuse(), t as f64);
        assert!(says(&d, &format!("loaded once and read by {t} threads")));
        let side = t as f64 / TILE_ELEMENTS_PER_UNIT as f64;
        let cells = cells(&d);
        assert_eq!(cells.len(), 3 * TILES * TILES);
        for s in &cells {
            assert_eq!((s.w, s.h), (side, side));
        }
        let staged =
            cells.iter().filter(|s| s.fill().ok() == Some(Fill::Tint(0))).count();
        assert_eq!(staged, 2);
        let walked = cells.iter().filter(|s| s.label.starts_with("k = ")).count();
        assert_eq!(walked, 2 * TILES);
    }

    #[test]
    fn the_blocks_drawn_are_the_occupancy_arithmetic() {
        let d = occupancy();
        let (sm, k) = (OCCUPANCY_SM, OCCUPANCY_KERNEL);
        let (blocks, tightest) = blocks_per_sm(&sm, &k);
        assert_eq!((blocks, tightest), (4, Limit::Registers));
        let cells = cells(&d);
        let drawn: Vec<(Limit, u32)> = blocks_by_limit(&sm, &k)
            .into_iter()
            .filter(|&(l, _)| l != Limit::Blocks)
            .collect();
        for (row, (limit, fit)) in drawn.iter().enumerate() {
            let y = row as f64 * 1.6;
            let in_row: Vec<&&Shape> = cells.iter().filter(|s| s.y == y).collect();
            assert_eq!(in_row.len() as u32, *fit, "{}", limit.label());
            // The blocks fit inside the SM's bar.
            let right = in_row.iter().map(|s| s.x + s.w).fold(0.0, f64::max);
            assert!(right <= SM_UNITS + 1e-9, "{}", limit.label());
            let marked = in_row.iter().all(|s| s.fill().ok() == Some(Fill::Tint(1)));
            assert_eq!(marked, *limit == tightest, "{}", limit.label());
        }
        let fewest = drawn.iter().map(|&(_, b)| b).min().unwrap();
        assert_eq!(fewest, blocks);
        assert!(says(&d, &format!("{blocks} blocks fit (registers limits it)")));
        assert!(says(&d, "occupancy 50%"));
    }

    /// The picture with round numbers, and as composed from the book's records.
    #[test]
    fn the_bytes_drawn_in_flight_are_rate_times_latency() {
        let example = Flight { latency_ns: 400.0, read_gbps: 3200.0, sms: 128.0 };
        let book = Flight::read(&super::super::book_figures()).unwrap();
        for f in [example, book] {
            let d = draw_flight(&f);
            let open: Vec<&Shape> = cells(&d)
                .into_iter()
                .filter(|s| s.fill().ok() == Some(Fill::Tint(0)))
                .collect();
            assert_eq!(open.len(), SLOTS_PER_LATENCY);
            let drawn = open.len() as f64 * f.bar_bytes();
            let law = littles_law(f.latency_ns, f.per_sm_gbps());
            assert!((drawn - law).abs() < 1e-9 * law, "{drawn} vs {law}");
            // Every open bar spans "now"; every bar is the latency long.
            for s in cells(&d) {
                assert_eq!(s.w, SLOTS_PER_LATENCY as f64);
            }
            for s in &open {
                assert!(s.x <= NOW && NOW < s.x + s.w);
            }
            assert!(says(&d, &format!("{} in flight per SM", kib(law))));
        }
        // 400 ns at 25 GB/s per SM: 10 000 bytes.
        assert!((littles_law(400.0, example.per_sm_gbps()) - 10_000.0).abs() < 1e-6);
    }
}
