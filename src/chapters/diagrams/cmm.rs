//! The diagonal-layout chapter's diagram: the table of a 6-matrix chain lettered by rows, and
//! where its cells sit in memory row-major and diagonal-major (the paper's Figures 2-4), with
//! the cells one warp reads at one step marked ([`layout`](crate::cmm::layout)).

use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::cmm::layout::{
    diag_index, diagonal_major_memory, row_major_index, row_major_memory,
    upper_cell_label,
};
use crate::harness::plot::{Fill, Shape};

/// The table's side, as in the paper's figures.
pub(super) const N: usize = 6;
/// The diagonal whose cells the marked warp computes: lane `l` computes cell `(l, l + D)`.
pub(super) const D: usize = 1;

/// The cells one warp computes on diagonal [`D`], lane by lane: `(row, col)`.
pub(super) fn warp_cells() -> Vec<(usize, usize)> {
    (0..N - D).map(|lane| (lane, lane + D)).collect()
}

fn fill_of(label: &str, marked: &[String]) -> Fill {
    if marked.iter().any(|m| m == label) {
        Fill::Tint(1)
    } else {
        Fill::Tint(0)
    }
}

/// The table and its two memory orders; one unit per cell.
pub fn layouts() -> Diagram {
    let marked: Vec<String> =
        warp_cells().iter().map(|&(r, c)| upper_cell_label(N, r, c)).collect();
    let lanes = marked.len();
    let mut shapes = Vec::new();
    let table = format!("the {N} × {N} table, lettered by rows");
    for row in 0..N {
        for col in 0..N {
            let (x, y) = (col as f64, row as f64);
            let cell = if col >= row {
                let label = upper_cell_label(N, row, col);
                Shape::cell(&table, x, y, 1.0, 1.0, fill_of(&label, &marked), &label)
            } else {
                Shape::cell(&table, x, y, 1.0, 1.0, Fill::Unused, "")
            };
            shapes.push(cell);
        }
        shapes.push(Shape::text(
            &table,
            -0.3,
            row as f64 + 0.5,
            HPos::Right,
            &format!("row {row}"),
        ));
    }
    let key_y = N as f64 + 0.9;
    shapes.push(Shape::cell(&table, 0.0, key_y - 0.5, 1.0, 1.0, Fill::Tint(1), ""));
    shapes.push(Shape::text(
        &table,
        1.4,
        key_y,
        HPos::Left,
        &format!("lanes 0–{} of a warp on diagonal {D}", lanes - 1),
    ));
    let step = |index: &dyn Fn(usize, usize) -> usize| {
        let cells = warp_cells();
        index(cells[1].0, cells[1].1) as isize - index(cells[0].0, cells[0].1) as isize
    };
    let row_step = step(&|r, c| row_major_index(N, r, c));
    let diag_step = step(&|r, c| diag_index(N, r, c));
    let apart = |s: isize| match s {
        1 => "side by side".to_string(),
        s => format!("{s} slots apart"),
    };
    for (name, slots) in [
        (
            format!("row-major, {} slots: the warp's cells {}", N * N, apart(row_step)),
            row_major_memory(N),
        ),
        (
            format!(
                "diagonal-major, {} slots: the warp's cells {}",
                slots_len(),
                apart(diag_step)
            ),
            diagonal_major_memory(N),
        ),
    ] {
        for (address, slot) in slots.iter().enumerate() {
            let x = address as f64;
            let cell = match slot {
                Some(label) => {
                    Shape::cell(&name, x, 0.0, 1.0, 1.0, fill_of(label, &marked), label)
                }
                None => Shape::cell(&name, x, 0.0, 1.0, 1.0, Fill::Unused, ""),
            };
            shapes.push(cell);
            if address % 5 == 0 || address + 1 == slots.len() {
                shapes.push(Shape::text(
                    &name,
                    x + 0.5,
                    1.6,
                    HPos::Center,
                    &address.to_string(),
                ));
            }
        }
        shapes.push(Shape::text(&name, -0.3, 0.5, HPos::Right, "holds"));
        shapes.push(Shape::text(&name, -0.3, 1.6, HPos::Right, "address"));
    }
    Diagram {
        stem: "cmm_diagonal-diagram-layouts",
        title: format!(
            "The upper triangle of a {N} × {N} table (the paper's Figure 2) in row-major order \
             (Figure 3) and diagonal-major order (Figure 4)"
        ),
        computed_by: "the index functions of cmm::layout",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

fn slots_len() -> usize {
    diagonal_major_memory(N).len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::ShapeKind;

    /// The slots a memory panel draws: (address, label), unused slots unlabelled.
    fn slots(d: &Diagram, prefix: &str) -> Vec<(usize, String, Fill)> {
        d.shapes
            .iter()
            .filter(|s| s.panel.starts_with(prefix) && s.shape == ShapeKind::Cell)
            .map(|s| (s.x as usize, s.label.clone(), s.fill().unwrap()))
            .collect()
    }

    #[test]
    fn every_cell_sits_where_the_index_functions_put_it() {
        let d = layouts();
        let row_major = slots(&d, "row-major");
        let diagonal = slots(&d, "diagonal-major");
        assert_eq!(row_major.len(), N * N);
        assert_eq!(diagonal.len(), N * (N + 1) / 2);
        for row in 0..N {
            for col in row..N {
                let label = upper_cell_label(N, row, col);
                assert_eq!(row_major[row_major_index(N, row, col)].1, label);
                assert_eq!(diagonal[diag_index(N, row, col)].1, label);
            }
        }
        // The warp's cells: N + 1 apart row-major, contiguous diagonal-major.
        let marked = |s: &[(usize, String, Fill)]| -> Vec<usize> {
            s.iter().filter(|c| c.2 == Fill::Tint(1)).map(|c| c.0).collect()
        };
        let cells = warp_cells();
        let expect = |f: &dyn Fn(usize, usize) -> usize| -> Vec<usize> {
            cells.iter().map(|&(r, c)| f(r, c)).collect()
        };
        assert_eq!(marked(&row_major), expect(&|r, c| row_major_index(N, r, c)));
        assert_eq!(marked(&diagonal), expect(&|r, c| diag_index(N, r, c)));
        assert!(marked(&row_major).windows(2).all(|w| w[1] - w[0] == N + 1));
        assert!(marked(&diagonal).windows(2).all(|w| w[1] - w[0] == 1));
        assert!(d.shapes.iter().any(|s| s.panel.contains("7 slots apart")));
        assert!(d.shapes.iter().any(|s| s.panel.contains("side by side")));
    }
}
