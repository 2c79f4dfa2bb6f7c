//! The coalescing chapter's diagrams: a warp's addresses as sectors and lines
//! ([`sectors`](crate::coalescing::sectors)), and the banks of a column read of a shared tile
//! ([`banks`](crate::coalescing::banks)), and the tiled transpose's flow through its tile
//! ([`warp_cost`]).

use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::coalescing::banks::{bank_of, column_read_words, conflict_degree, BANKS};
use crate::coalescing::patterns::Pattern;
use crate::coalescing::sectors::{Access, LINE_BYTES, SECTOR_BYTES, WARP_SIZE};
use crate::coalescing::transpose::{warp_cost, TransposeKernel};
use crate::harness::plot::{Fill, Ink, Shape};

/// The four patterns of the sectors diagram, from the chapter's table.
pub(super) fn sector_patterns() -> [Pattern; 4] {
    [
        Pattern::Affine { elem_bytes: 4, stride: 1, offset: 0 },
        Pattern::Affine { elem_bytes: 4, stride: 2, offset: 0 },
        Pattern::Affine { elem_bytes: 4, stride: 1, offset: 1 },
        Pattern::DriftAos {
            record_bytes: crate::coalescing::reference::PARTICLE_BYTES,
        },
    ]
}

/// The warp a diagram shows: warp 1, an interior warp, as in the chapter's table
/// ([`Pattern::first_load`]).
pub(super) const WARP: u64 = 1;

/// The first load of `p`: what one lane accesses.
pub(super) fn first_access(p: &Pattern) -> Access {
    p.accesses().0[0]
}

/// A warp's 32 addresses, the sectors they touch and the 128-byte lines of those sectors:
/// one panel per pattern, one unit per 32-byte sector.
pub fn sectors() -> Diagram {
    let mut shapes = Vec::new();
    for p in sector_patterns() {
        let access = first_access(&p);
        let addresses = access.warp_addresses(WARP);
        let fp = access.warp_footprint(WARP);
        let name = format!(
            "{}: {} sectors in {} line{}, {} of {} bytes used",
            p.label(),
            fp.sectors,
            fp.lines,
            if fp.lines == 1 { "" } else { "s" },
            fp.requested_bytes,
            fp.moved_bytes()
        );
        let first_line = addresses[0] / LINE_BYTES;
        let last_line = (addresses.last().expect("a warp has lanes") + access.bytes
            - 1)
            / LINE_BYTES;
        let origin = first_line * LINE_BYTES;
        let unit = |byte: u64| (byte - origin) as f64 / SECTOR_BYTES as f64;
        for (lane, &a) in addresses.iter().enumerate() {
            // Neighbouring lanes alternate dark and light blue, so that touching ones part.
            let fill = Fill::Solid(if lane % 2 == 0 { 0 } else { 4 });
            let w = access.bytes as f64 / SECTOR_BYTES as f64;
            shapes.push(Shape::cell(&name, unit(a), 0.0, w, 0.7, fill, ""));
        }
        let sectors_per_line = LINE_BYTES / SECTOR_BYTES;
        for line in first_line..=last_line {
            let mut touched_line = false;
            for k in 0..sectors_per_line {
                let sector = line * sectors_per_line + k;
                let (lo, hi) = (sector * SECTOR_BYTES, (sector + 1) * SECTOR_BYTES);
                let lanes = addresses
                    .iter()
                    .filter(|&&a| a < hi && a + access.bytes > lo)
                    .count();
                let (fill, label) = if lanes > 0 {
                    (Fill::Tint(0), lanes.to_string())
                } else {
                    (Fill::Plain, String::new())
                };
                touched_line |= lanes > 0;
                shapes.push(Shape::cell(&name, unit(lo), 1.1, 1.0, 1.0, fill, &label));
            }
            if touched_line {
                let x = unit(line * LINE_BYTES);
                let w = sectors_per_line as f64;
                shapes.push(Shape::frame(&name, x, 1.1, w, 1.0, Ink::Dark));
                let label = format!("line {line}");
                shapes.push(Shape::text(&name, x + w / 2.0, 2.6, HPos::Center, &label));
            }
        }
        shapes.push(Shape::text(&name, -0.3, 0.35, HPos::Right, "lanes"));
        shapes.push(Shape::text(&name, -0.3, 1.6, HPos::Right, "lanes per sector"));
    }
    Diagram {
        stem: "coalescing-diagram-sectors",
        title: format!(
            "What one warp's load touches: its 32 lanes (warp {WARP}, alternately dark and \
             light), the 32-byte sectors holding their bytes, and the 128-byte lines of those \
             sectors"
        ),
        computed_by: "coalescing::sectors::footprint",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

/// The two tiles of the banks diagram: `(row_words, panel name)`.
pub(super) fn bank_tiles() -> [(u64, String); 2] {
    [32, 33].map(|w| (w, format!("{w}-word rows: tile_shared[32][{w}]")))
}

/// A warp reading column 0 of a 32-row tile (`tile_shared[lane][0]`), with 32-word rows and
/// with 33-word rows: memory drawn 32 words (one per bank) a row, the words read marked.
pub fn banks() -> Diagram {
    let mut shapes = Vec::new();
    for (row_words, name) in bank_tiles() {
        let read = column_read_words(row_words, 0);
        let words = 32 * row_words;
        for word in 0..words {
            let (row, bank) = ((word / BANKS) as f64, bank_of(word) as f64);
            let fill = if read.contains(&word) {
                Fill::Solid(1)
            } else if word % row_words >= 32 {
                Fill::Unused
            } else {
                Fill::Plain
            };
            shapes.push(Shape::cell(&name, bank, row, 1.0, 1.0, fill, ""));
        }
        let rows = words.div_ceil(BANKS) as f64;
        shapes.push(Shape::text(&name, 0.0, -0.9, HPos::Left, "bank 0"));
        shapes.push(Shape::text(&name, BANKS as f64, -0.9, HPos::Right, "bank 31"));
        let lane_row = |lane: u64| (read[lane as usize] / BANKS) as f64 + 0.5;
        shapes.push(Shape::text(&name, -0.4, lane_row(0), HPos::Right, "lane 0"));
        shapes.push(Shape::text(&name, -0.4, lane_row(31), HPos::Right, "lane 31"));
        let mut banks_hit: Vec<u64> = read.iter().map(|&w| bank_of(w)).collect();
        banks_hit.sort_unstable();
        banks_hit.dedup();
        let degree = conflict_degree(&read);
        let summary = format!(
            "{} bank{} hit: {}",
            banks_hit.len(),
            if banks_hit.len() == 1 { "" } else { "s" },
            if degree == 1 {
                "1 pass, conflict-free".to_string()
            } else {
                format!("{degree} passes, a {degree}-way conflict")
            }
        );
        shapes.push(Shape::text(&name, 16.0, rows + 1.3, HPos::Center, &summary));
        let key = rows + 2.9;
        shapes.push(Shape::cell(&name, 0.0, key - 0.5, 1.0, 1.0, Fill::Solid(1), ""));
        shapes.push(Shape::text(&name, 1.5, key, HPos::Left, "read by the warp"));
        if row_words > 32 {
            shapes.push(Shape::cell(
                &name,
                20.0,
                key - 0.5,
                1.0,
                1.0,
                Fill::Unused,
                "",
            ));
            shapes.push(Shape::text(&name, 21.5, key, HPos::Left, "padding"));
        }
    }
    Diagram {
        stem: "coalescing-diagram-banks",
        title:
            "Lane l reads tile_shared[l][0]: shared memory drawn 32 words a row, one \
                column per bank"
                .into(),
        computed_by: "coalescing::banks::bank_of",
        panel_columns: 2,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::panel;
    use super::*;
    use crate::coalescing::sectors::footprint;

    #[test]
    fn the_sectors_drawn_are_the_footprints() {
        let d = sectors();
        let names: Vec<String> = {
            let mut n: Vec<String> = d.shapes.iter().map(|s| s.panel.clone()).collect();
            n.dedup();
            n
        };
        assert_eq!(names.len(), 4);
        for (p, name) in sector_patterns().iter().zip(&names) {
            let access = first_access(p);
            let fp = footprint(&access.warp_addresses(WARP), access.bytes);
            let shapes = panel(&d, name);
            let tinted: Vec<&&Shape> = shapes
                .iter()
                .filter(|s| s.fill().ok() == Some(Fill::Tint(0)))
                .collect();
            assert_eq!(tinted.len() as u64, fp.sectors, "{name}");
            // Every lane is counted once in each sector it reads from.
            let counted: u64 =
                tinted.iter().map(|s| s.label.parse::<u64>().unwrap()).sum();
            assert!(counted >= 32, "{name}");
            let frames = shapes.iter().filter(|s| s.shape == ShapeKind::Frame).count();
            assert_eq!(frames as u64, fp.lines, "{name}");
            let lanes: Vec<&&Shape> = shapes
                .iter()
                .filter(|s| matches!(s.fill(), Ok(Fill::Solid(_))))
                .collect();
            assert_eq!(lanes.len(), 32, "{name}");
            // Each lane is drawn where its address is, relative to the first line's start.
            let origin = (access.address(WARP * 32) / LINE_BYTES * LINE_BYTES) as f64;
            for (lane, s) in lanes.iter().enumerate() {
                let byte = origin + s.x * SECTOR_BYTES as f64;
                assert_eq!(
                    byte as u64,
                    access.address(WARP * 32 + lane as u64),
                    "{name}"
                );
            }
        }
        // The titles quote the model: stride 2 touches 8 sectors in 2 lines.
        assert!(names[1].contains("stride 2: 8 sectors in 2 lines, 128 of 256 bytes"));
    }

    use crate::harness::plot::ShapeKind;

    #[test]
    fn the_bank_of_each_lane_drawn_is_bank_of() {
        let d = banks();
        for (row_words, name) in bank_tiles() {
            let words = column_read_words(row_words, 0);
            let read: Vec<&Shape> = panel(&d, &name)
                .into_iter()
                .filter(|s| s.shape == ShapeKind::Cell && s.label.is_empty())
                .filter(|s| s.fill().ok() == Some(Fill::Solid(1)) && s.y >= 0.0)
                .filter(|s| s.y < 33.0)
                .collect();
            assert_eq!(read.len(), 32, "{name}");
            for (lane, s) in read.iter().enumerate() {
                assert_eq!(s.x as u64, bank_of(words[lane]), "{name}, lane {lane}");
                assert_eq!(s.y as u64, words[lane] / BANKS, "{name}, lane {lane}");
            }
            let degree = conflict_degree(&words);
            let said = if degree == 1 {
                "conflict-free".to_string()
            } else {
                format!("{degree}-way")
            };
            assert!(panel(&d, &name).iter().any(|s| s.label.contains(&said)), "{name}");
        }
        assert_eq!(conflict_degree(&column_read_words(32, 0)), 32);
    }
}

/// The kernel of the transpose diagram: the chapter's padded 32 × 8 transpose.
pub(super) const TRANSPOSE: TransposeKernel = TransposeKernel::TilePadded32x8;
/// The matrix side the diagram's costs are computed at (any side with an interior tile).
pub(super) const TRANSPOSE_SIDE: u64 = 1024;

/// One panel of the transpose diagram: a grid of `columns` × 32 elements with the words one
/// warp touches marked in palette colour `colour`.
pub(super) struct TransposePanel {
    pub title: String,
    pub columns: u64,
    /// (row, column) of each lane's element, lane by lane.
    pub marked: Vec<(u64, u64)>,
    pub colour: usize,
}

/// The four panels of the transpose diagram, one unit per element.
pub(super) fn transpose_panels() -> Vec<TransposePanel> {
    let side = TRANSPOSE.side();
    let pad = TRANSPOSE.pad().expect("the padded transpose has a tile");
    let cost = warp_cost(TRANSPOSE, TRANSPOSE_SIDE, TRANSPOSE_SIDE);
    let degree = |d: Option<u64>| match d.expect("the padded transpose has a tile") {
        1 => "conflict-free".to_string(),
        d => format!("{d}-way conflict"),
    };
    let row: Vec<(u64, u64)> = (0..WARP_SIZE).map(|lane| (0, lane)).collect();
    let column: Vec<(u64, u64)> = (0..WARP_SIZE).map(|lane| (lane, 0)).collect();
    let panel = |title: String, columns, marked: &[(u64, u64)], colour| {
        TransposePanel { title, columns, marked: marked.to_vec(), colour }
    };
    vec![
        panel(
            format!("1. read a row of in: {} sectors", cost.global_load.sectors),
            side,
            &row,
            0,
        ),
        panel(
            format!(
                "2. store it as a tile row: {}",
                degree(cost.shared_store_conflict)
            ),
            side + pad,
            &row,
            0,
        ),
        panel(
            format!("3. read a tile column: {}", degree(cost.shared_load_conflict)),
            side + pad,
            &column,
            1,
        ),
        panel(
            format!("4. write a row of out: {} sectors", cost.global_store.sectors),
            side,
            &row,
            1,
        ),
    ]
}

/// The tiled transpose's tile flow, one warp's first access in each of its four steps.
pub fn transpose() -> Diagram {
    let side = TRANSPOSE.side();
    let mut shapes = Vec::new();
    for TransposePanel { title: name, columns, marked, colour } in transpose_panels() {
        for r in 0..side {
            for c in 0..columns {
                let fill = if marked.contains(&(r, c)) {
                    Fill::Solid(colour)
                } else if c >= side {
                    Fill::Unused
                } else {
                    Fill::Plain
                };
                shapes.push(Shape::cell(&name, c as f64, r as f64, 1.0, 1.0, fill, ""));
            }
        }
    }
    Diagram {
        stem: "coalescing-diagram-transpose",
        title: format!(
            "The padded tiled transpose ({}), one warp's first access at each step: lanes \
             along a row of in, a row of the shared tile, a column of it, a row of out",
            TRANSPOSE.label()
        ),
        computed_by: "coalescing::transpose::warp_cost",
        panel_columns: 2,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod transpose_tests {
    use super::*;

    #[test]
    fn the_transpose_drawn_is_warp_cost() {
        let d = transpose();
        let cost = warp_cost(TRANSPOSE, TRANSPOSE_SIDE, TRANSPOSE_SIDE);
        let panels = transpose_panels();
        assert_eq!(panels.len(), 4);
        for TransposePanel { title: name, columns, marked, .. } in &panels {
            let solid: Vec<&Shape> = d
                .shapes
                .iter()
                .filter(|s| &s.panel == name && matches!(s.fill(), Ok(Fill::Solid(_))))
                .collect();
            assert_eq!(solid.len(), 32, "{name}");
            assert_eq!(marked.len(), 32, "{name}");
            let cells = d.shapes.iter().filter(|s| &s.panel == name).count() as u64;
            assert_eq!(cells, 32 * columns, "{name}");
        }
        // The shared steps are the words the model counts: row 0 then column 0 of a
        // 33-word-wide tile, each lane in its own bank.
        let row_words = TRANSPOSE.side() + TRANSPOSE.pad().unwrap();
        let words = |m: &[(u64, u64)]| -> Vec<u64> {
            m.iter().map(|&(r, c)| r * row_words + c).collect()
        };
        assert_eq!(
            conflict_degree(&words(&panels[1].marked)),
            cost.shared_store_conflict.unwrap()
        );
        assert_eq!(
            conflict_degree(&words(&panels[2].marked)),
            cost.shared_load_conflict.unwrap()
        );
        assert_eq!(cost.shared_load_conflict, Some(1));
        assert!(panels[0]
            .title
            .ends_with(&format!("{} sectors", cost.global_load.sectors)));
        assert!(panels[3]
            .title
            .ends_with(&format!("{} sectors", cost.global_store.sectors)));
    }
}
