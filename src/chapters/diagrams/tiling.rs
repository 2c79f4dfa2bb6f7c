//! The tiled matrix multiply's diagram: one block of the register-tiled kernel
//! (`matmul_regs8x8` in `kernels/tiling.cu`), its tile of C, the slices of A and B it walks
//! through K, and one thread's 8 × 8 results, drawn from the kernel's own constants and the
//! chapter's model of its shape ([`Step`](crate::tiling::model::Step)).

use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::harness::kernels;
use crate::harness::plot::{Fill, Ink, Shape};

/// The kernel file whose `#define`s give the shapes.
const KERNEL_FILE: &str = "tiling.cu";

/// The register-tiled kernels' shape, as `kernels/tiling.cu` defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape8x8 {
    /// Rows and columns of the block's tile of C.
    pub bm: usize,
    pub bn: usize,
    /// Width of one slice of K.
    pub bk: usize,
    /// Rows and columns of C one thread holds in registers.
    pub tm: usize,
    pub tn: usize,
    pub threads: usize,
}

/// The value of `#define NAME value` in the kernel file.
fn define(source: &str, name: &str) -> usize {
    let prefix = format!("#define {name} ");
    source
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{KERNEL_FILE} defines no number {name}"))
}

/// The shape the kernel file defines.
pub(super) fn kernel_shape() -> Shape8x8 {
    let source =
        kernels::source(KERNEL_FILE).expect("the tiling kernels are embedded").source;
    let d = |n| define(source, n);
    Shape8x8 {
        bm: d("BM"),
        bn: d("BN"),
        bk: d("BK"),
        tm: d("TM"),
        tn: d("TN"),
        threads: d("THREADS"),
    }
}

/// Elements of a matrix per unit of the drawing: a thread's 8 × 8 results are half a unit
/// square, so the block's 128 × 128 tile is 8 units and the drawing fits half the page.
pub(super) const ELEMENTS_PER_UNIT: usize = 16;
/// The slices of K drawn (K = 8 slices × BK).
pub(super) const SLICES: usize = 8;
/// The slice the drawing stops at.
pub(super) const SLICE: usize = 2;
/// The thread marked: `threadIdx.x`, which the kernel splits as `tr = t / 16`, `tc = t % 16`.
pub(super) const THREAD: usize = 43;

pub fn steps() -> Diagram {
    let k = kernel_shape();
    let unit = |elements: usize| elements as f64 / ELEMENTS_PER_UNIT as f64;
    let threads_across = k.bn / k.tn;
    let (tr, tc) = (THREAD / threads_across, THREAD % threads_across);
    let panel = "";
    let kw = unit(SLICES * k.bk);
    let gap = 1.0;
    let (cx, cy) = (kw + gap, kw + gap);
    let mut shapes = Vec::new();
    // A: the block's rows, sliced along K; B: the block's columns, sliced along K.
    for s in 0..SLICES {
        let fill = if s == SLICE { Fill::Tint(0) } else { Fill::Plain };
        let label = s.to_string();
        let at = unit(s * k.bk);
        shapes.push(Shape::cell(panel, at, cy, unit(k.bk), unit(k.bm), fill, &label));
        shapes.push(Shape::cell(panel, cx, at, unit(k.bn), unit(k.bk), fill, &label));
    }
    // C: one cell per thread, each the thread's TM × TN results.
    for r in 0..k.bm / k.tm {
        for c in 0..threads_across {
            let fill = if (r, c) == (tr, tc) { Fill::Tint(1) } else { Fill::Plain };
            let (x, y) = (cx + unit(c * k.tn), cy + unit(r * k.tm));
            shapes.push(Shape::cell(panel, x, y, unit(k.tn), unit(k.tm), fill, ""));
        }
    }
    // The thread's operands in this slice: TM rows of A's slice, TN columns of B's.
    let (ax, ay) = (unit(SLICE * k.bk), cy + unit(tr * k.tm));
    let (bx, by) = (cx + unit(tc * k.tn), unit(SLICE * k.bk));
    shapes.push(Shape::cell(panel, ax, ay, unit(k.bk), unit(k.tm), Fill::Tint(1), ""));
    shapes.push(Shape::cell(panel, bx, by, unit(k.tn), unit(k.bk), Fill::Tint(1), ""));
    let (px, py) = (cx + unit(tc * k.tn), cy + unit(tr * k.tm));
    let mid_row = ay + unit(k.tm) / 2.0;
    let mid_col = bx + unit(k.tn) / 2.0;
    shapes.push(Shape::arrow(
        panel,
        (ax + unit(k.bk), mid_row),
        (px, mid_row),
        Ink::Colour(1),
    ));
    shapes.push(Shape::arrow(
        panel,
        (mid_col, by + unit(k.bk)),
        (mid_col, py),
        Ink::Colour(1),
    ));
    shapes.push(Shape::text(panel, kw / 2.0, cy - 0.45, HPos::Center, "A"));
    shapes.push(Shape::text(panel, cx - 0.3, kw / 2.0, HPos::Right, "B"));
    shapes.push(Shape::text(panel, cx - 0.3, cy + unit(k.bm) - 0.4, HPos::Right, "C"));
    let notes = [
        format!("block: {} × {} of C, {} threads", k.bm, k.bn, k.threads),
        format!("A and B walked in slices of {} along K", k.bk),
        format!("here K = {}: slices 0 to {}", SLICES * k.bk, SLICES - 1),
        format!("slice {SLICE} in shared memory (blue)"),
        format!("thread {THREAD} (row {tr}, column {tc}) holds"),
        format!("{} × {} results in registers (orange)", k.tm, k.tn),
        format!("per k: {} of A × {} of B,", k.tm, k.tn),
        format!("{} multiply-adds for {} shared loads", k.tm * k.tn, k.tm + k.tn),
    ];
    let nx = cx + unit(k.bn) + 0.6;
    for (i, note) in notes.iter().enumerate() {
        shapes.push(Shape::text(
            panel,
            nx,
            cy + 0.4 + i as f64 * 0.85,
            HPos::Left,
            note,
        ));
    }
    Diagram {
        stem: "tiling-diagram-steps",
        title: "One block of the register-tiled multiply: its tile of C, the slices of A and \
                B it walks through K, and one thread's results"
            .into(),
        computed_by: "kernels/tiling.cu and tiling::model",
        panel_columns: 1,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::ShapeKind;
    use crate::tiling::model::Step;

    #[test]
    fn the_block_drawn_is_the_kernels_shape() {
        let k = kernel_shape();
        assert_eq!(k, Shape8x8 { bm: 128, bn: 128, bk: 8, tm: 8, tn: 8, threads: 256 });
        // The kernel's constants agree with the chapter's model of the step.
        let step = Step::Regs8x8;
        assert_eq!(step.block_tile(), (k.bm, k.bn));
        assert_eq!(step.block().0 as usize, k.threads);
        assert_eq!(k.bm * k.bn, k.threads * k.tm * k.tn);
        // Per k a thread reads TM + TN floats of shared memory for TM TN multiply-adds:
        // the model's shared bytes per FLOP.
        let per_flop = 4.0 * (k.tm + k.tn) as f64 / (2.0 * (k.tm * k.tn) as f64);
        assert_eq!(Step::Regs8x8.shared_bytes_per_flop(), Some(per_flop));
        let d = steps();
        let cells: Vec<&Shape> =
            d.shapes.iter().filter(|s| s.shape == ShapeKind::Cell).collect();
        let c_cells = cells.iter().filter(|s| s.label.is_empty()).count();
        // One cell per thread, and the thread's two operand blocks.
        assert_eq!(c_cells, k.threads + 2);
        let marked: Vec<&&Shape> =
            cells.iter().filter(|s| s.fill().ok() == Some(Fill::Tint(1))).collect();
        assert_eq!(marked.len(), 3);
        // The thread's results: TM × TN elements, at the row and column the kernel gives it.
        let unit = ELEMENTS_PER_UNIT as f64;
        let patch = marked[0];
        assert_eq!((patch.w * unit, patch.h * unit), (k.tn as f64, k.tm as f64));
        let c_origin = (SLICES * k.bk) as f64 / unit + 1.0;
        assert_eq!(((patch.x - c_origin) * unit) as usize, (THREAD % 16) * k.tn);
        assert_eq!(((patch.y - c_origin) * unit) as usize, (THREAD / 16) * k.tm);
        let slices = cells.iter().filter(|s| !s.label.is_empty()).count();
        assert_eq!(slices, 2 * SLICES);
    }
}
