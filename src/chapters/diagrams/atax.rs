//! The ATAX chapter's diagram: what one warp's first load of `A` reads in each way the chapter
//! reads it (kernel 1, kernel 2, a warp per row, the fused pass), on a small float matrix, with
//! the lanes' elements given by the index arithmetic of `kernels/atax.cu` and the sectors
//! counted by the coalescing chapter's model ([`footprint`]).

use plotters::style::text_anchor::HPos;

use super::Diagram;
use crate::atax::device::{fused_form, FusedForm, BLOCK};
use crate::coalescing::sectors::{footprint, Footprint, SECTOR_BYTES, WARP_SIZE};
use crate::harness::plot::{Fill, Ink, Shape};

/// Rows of the drawn matrix: enough for kernel 1's first warp to have 32 rows to read.
pub(super) const M: u64 = 32;
/// Columns of the drawn matrix: more than a warp's 32, and not a multiple of 32, so that
/// kernel 2 and the warp per row have 32 columns for their lanes and a remainder after them.
pub(super) const N: u64 = 40;
/// `A` holds floats.
pub(super) const ELEM_BYTES: u64 = 4;

/// One way the chapter's kernels read `A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    /// Kernel 1 of the slides (`tmp_thread_per_row`): thread `row` walks row `row`.
    ThreadPerRow,
    /// Kernel 2 of the slides (`y_thread_per_col`): thread `col` walks column `col`.
    ThreadPerCol,
    /// `tmp_warp_per_row`: warp `row` walks row `row`, lane `l` its columns `l, l + 32, …`.
    WarpPerRow,
    /// `fused_rows_to_registers`: block `b` takes rows `2b` and `2b + 1`, thread `t` their
    /// columns `t, t + blockDim.x, …`, both rows' loads issued before any arithmetic.
    Fused,
}

impl Reader {
    pub(super) const ALL: [Reader; 4] =
        [Reader::ThreadPerRow, Reader::ThreadPerCol, Reader::WarpPerRow, Reader::Fused];

    /// How the chapter names the kernel.
    pub(super) fn name(self) -> &'static str {
        match self {
            Reader::ThreadPerRow => "kernel 1",
            Reader::ThreadPerCol => "kernel 2",
            Reader::WarpPerRow => "warp per row",
            Reader::Fused => "fused pass",
        }
    }

    /// Threads per block of the launch (`blockDim.x`): the chapter's [`BLOCK`], or for the
    /// fused pass the block of the instance that covers [`N`] floats.
    fn block_threads(self) -> u64 {
        match self {
            Reader::Fused => {
                let (form, shape) = fused_form::<f32>(N as usize)
                    .expect("an instance covers the matrix");
                assert_eq!(
                    form,
                    FusedForm::Registers,
                    "the drawn matrix fits registers"
                );
                shape.threads as u64
            }
            _ => BLOCK as u64,
        }
    }

    /// The element `(row, column)` of `A` that thread `t` of block 0 reads in its load
    /// number `k` of `A` (in program order), by the kernel's index arithmetic; `None` where
    /// the thread has left or its lane is masked off.
    pub(super) fn element(self, t: u64, k: u64) -> Option<(u64, u64)> {
        let threads = self.block_threads();
        assert!(t < threads, "thread {t} is not in a block of {threads}");
        match self {
            // row = blockIdx.x * blockDim.x + threadIdx.x; a_row[j] at step j = k.
            Reader::ThreadPerRow => (t < M && k < N).then_some((t, k)),
            // col = blockIdx.x * blockDim.x + threadIdx.x; a[i * n + col] at step i = k.
            Reader::ThreadPerCol => (t < N && k < M).then_some((k, t)),
            // row = (blockIdx.x * blockDim.x + threadIdx.x) / 32; a_row[j], j = lane + 32 k.
            Reader::WarpPerRow => {
                let (row, j) = (t / WARP_SIZE, t % WARP_SIZE + WARP_SIZE * k);
                (row < M && j < N).then_some((row, j))
            }
            // Block 0's first pair is rows 0 and 1; per column step s, a_row0[j] then
            // a_row1[j] with j = t + s blockDim.x.
            Reader::Fused => {
                let (step, row) = (k / 2, k % 2);
                let j = t + step * threads;
                (row < M && j < N).then_some((row, j))
            }
        }
    }

    /// The elements warp 0's lanes read in load `k`, lane by lane (`None` for a masked lane).
    pub(super) fn warp_elements(self, k: u64) -> Vec<Option<(u64, u64)>> {
        (0..WARP_SIZE).map(|lane| self.element(lane, k)).collect()
    }

    /// The byte addresses of warp 0's active lanes in load `k` (A at offset 0).
    pub(super) fn warp_addresses(self, k: u64) -> Vec<u64> {
        self.warp_elements(k)
            .into_iter()
            .flatten()
            .map(|(r, c)| address(r, c))
            .collect()
    }

    /// What warp 0's load `k` touches, in the coalescing chapter's model.
    pub(super) fn footprint(self, k: u64) -> Footprint {
        footprint(&self.warp_addresses(k), ELEM_BYTES)
    }

    /// The panel's title: the kernel and its first load's sectors.
    pub(super) fn panel(self) -> String {
        let fp = self.footprint(0);
        format!("{}: {} sectors for {} lanes", self.name(), fp.sectors, fp.lanes)
    }
}

/// The byte offset of `A[row][col]` in the row-major matrix.
pub(super) fn address(row: u64, col: u64) -> u64 {
    (row * N + col) * ELEM_BYTES
}

/// The `(row, first column)` of a sector of `A`: rows of [`N`] floats start on sectors.
pub(super) fn sector_cell(sector: u64) -> (u64, u64) {
    let element = sector * SECTOR_BYTES / ELEM_BYTES;
    (element / N, element % N)
}

/// Elements in one sector.
const SECTOR_ELEMS: u64 = SECTOR_BYTES / ELEM_BYTES;

/// One panel per way of reading `A`: the matrix a cell per element, warp 0's first load
/// solid, its next load tinted, and the sectors of the first load outlined.
pub fn patterns() -> Diagram {
    assert_eq!(N * ELEM_BYTES % SECTOR_BYTES, 0, "every row starts on a sector");
    let mut shapes = Vec::new();
    for reader in Reader::ALL {
        let name = reader.panel();
        let first = reader.warp_elements(0);
        let next = reader.warp_elements(1);
        for r in 0..M {
            for c in 0..N {
                let fill = if first.contains(&Some((r, c))) {
                    Fill::Solid(0)
                } else if next.contains(&Some((r, c))) {
                    Fill::Tint(1)
                } else {
                    Fill::Plain
                };
                shapes.push(Shape::cell(&name, c as f64, r as f64, 1.0, 1.0, fill, ""));
            }
        }
        let mut sectors: Vec<u64> =
            reader.warp_addresses(0).iter().map(|a| a / SECTOR_BYTES).collect();
        sectors.sort_unstable();
        sectors.dedup();
        for s in sectors {
            let (row, col) = sector_cell(s);
            let w = SECTOR_ELEMS as f64;
            shapes.push(Shape::frame(&name, col as f64, row as f64, w, 1.0, Ink::Dark));
        }
        let lanes = first.iter().flatten();
        let (&(r0, c0), &(r31, c31)) =
            (lanes.clone().next().expect("lane 0 reads"), lanes.last().expect("lanes"));
        let last = format!("lane {}", first.iter().flatten().count() - 1);
        // The lanes' two ends named outside the matrix: above and below a column, or both
        // above a row, so that every panel's matrix starts at one height.
        let gap = 1.6;
        shapes.push(Shape::text(
            &name,
            c0 as f64,
            r0 as f64 - gap,
            HPos::Left,
            "lane 0",
        ));
        if c0 == c31 {
            let y = (r31 + 1) as f64 + gap;
            shapes.push(Shape::text(&name, c31 as f64, y, HPos::Left, &last));
        } else {
            let y = r31 as f64 - gap;
            shapes.push(Shape::text(&name, (c31 + 1) as f64, y, HPos::Right, &last));
        }
    }
    Diagram {
        stem: "atax-diagram-patterns",
        title: format!(
            "One warp's first load of A in each kernel, A a {M} × {N} float matrix stored by \
             rows: the elements its lanes read (blue), the 32-byte sectors they touch \
             (outlined) and what its next load reads (orange)"
        ),
        computed_by: "the indices of kernels/atax.cu and coalescing::sectors::footprint",
        panel_columns: 2,
        shapes,
        provenance: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::panel;
    use super::*;
    use crate::atax::KERNEL_FILE;
    use crate::coalescing::sectors::LINE_BYTES;
    use crate::harness::kernels;
    use crate::harness::plot::ShapeKind;

    #[test]
    fn the_sectors_drawn_are_the_models_count() {
        let d = patterns();
        for reader in Reader::ALL {
            let name = reader.panel();
            let shapes = panel(&d, &name);
            assert!(shapes.len() as u64 > M * N, "{name} is drawn");
            let fp = reader.footprint(0);
            assert_eq!(fp.lanes, WARP_SIZE, "{name}: every lane of the warp reads");
            assert!(name.ends_with(&format!("{} sectors for 32 lanes", fp.sectors)));
            // One outline per sector of the model, each around a sector the lanes read.
            let frames: Vec<&&Shape> =
                shapes.iter().filter(|s| s.shape == ShapeKind::Frame).collect();
            assert_eq!(frames.len() as u64, fp.sectors, "{name}");
            let addresses = reader.warp_addresses(0);
            for f in &frames {
                let lo = address(f.y as u64, f.x as u64);
                assert_eq!(lo % SECTOR_BYTES, 0, "{name}: a frame starts on a sector");
                assert_eq!(f.w as u64 * ELEM_BYTES, SECTOR_BYTES, "{name}");
                let inside =
                    addresses.iter().filter(|&&a| (lo..lo + SECTOR_BYTES).contains(&a));
                assert!(inside.count() > 0, "{name}: an outlined sector no lane reads");
            }
            // The solid cells are the lanes' elements, each where the index arithmetic puts it.
            let mut solid: Vec<(u64, u64)> = shapes
                .iter()
                .filter(|s| s.fill().ok() == Some(Fill::Solid(0)))
                .map(|s| (s.y as u64, s.x as u64))
                .collect();
            let mut lanes: Vec<(u64, u64)> =
                reader.warp_elements(0).into_iter().flatten().collect();
            solid.sort_unstable();
            lanes.sort_unstable();
            assert_eq!(solid, lanes, "{name}");
        }
        // What the chapter says of the first loads: kernel 1's lanes touch a sector and a
        // line each, 32 rows apart; the three others read one 128-byte line, 4 sectors.
        let k1 = Reader::ThreadPerRow.footprint(0);
        assert_eq!((k1.sectors, k1.lines), (32, 32));
        for reader in &Reader::ALL[1..] {
            let fp = reader.footprint(0);
            assert_eq!(
                (fp.sectors, fp.lines),
                (LINE_BYTES / SECTOR_BYTES, 1),
                "{reader:?}"
            );
        }
        // The next loads: kernel 1 steps to the next column, kernel 2 to the next row,
        // the warp per row to the 8 columns past its 32, the fused pass to the pair's second row.
        let next =
            |r: Reader| r.warp_elements(1).into_iter().flatten().collect::<Vec<_>>();
        assert!(next(Reader::ThreadPerRow)
            .iter()
            .enumerate()
            .all(|(l, &e)| e == (l as u64, 1)));
        assert!(next(Reader::ThreadPerCol)
            .iter()
            .enumerate()
            .all(|(l, &e)| e == (1, l as u64)));
        assert_eq!(
            next(Reader::WarpPerRow),
            (32..N).map(|c| (0, c)).collect::<Vec<_>>()
        );
        assert!(next(Reader::Fused)
            .iter()
            .enumerate()
            .all(|(l, &e)| e == (1, l as u64)));
    }

    /// The index arithmetic [`Reader::element`] follows is the kernel file's.
    #[test]
    fn the_indices_are_the_kernels() {
        let source =
            kernels::source(KERNEL_FILE).expect("the ATAX kernels are embedded").source;
        let body = |function: &str| -> &str {
            let start = source
                .find(&format!("void {function}("))
                .unwrap_or_else(|| panic!("{KERNEL_FILE} defines no {function}"));
            let end = source[start..].find("\n}\n").expect("the function ends") + start;
            &source[start..end]
        };
        let uses = |function: &str, lines: &[&str]| {
            let b = body(function);
            for l in lines {
                assert!(b.contains(l), "{function} no longer reads `{l}`");
            }
        };
        uses(
            "tmp_thread_per_row",
            &[
                "unsigned row = blockIdx.x * blockDim.x + threadIdx.x;",
                "const T* a_row = a + (u64)row * n;",
                "for (unsigned j = 0; j < n; ++j) sum += a_row[j] * x[j];",
            ],
        );
        uses(
            "y_thread_per_col",
            &[
                "unsigned col = blockIdx.x * blockDim.x + threadIdx.x;",
                "for (unsigned i = 0; i < m; ++i) sum += a[(u64)i * n + col] * tmp[i];",
            ],
        );
        uses(
            "tmp_warp_per_row",
            &[
                "unsigned lane = threadIdx.x % 32;",
                "unsigned row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;",
                "for (unsigned j = lane; j < n; j += 32) sum += a_row[j] * x[j];",
            ],
        );
        uses(
            "fused_rows_to_registers",
            &[
                "for (unsigned row = 2 * blockIdx.x; row < m; row += 2 * gridDim.x) {",
                "const T* a_row1 = a_row0 + n;",
                "unsigned j = t + k * blockDim.x;",
                "a0_reg[k] = j < n ? a_row0[j] : T(0);",
                "a1_reg[k] = (second && j < n) ? a_row1[j] : T(0);",
            ],
        );
        // The fused block for 40 floats: one column a thread, 64 threads (two warps).
        assert_eq!(Reader::Fused.block_threads(), 64);
    }
}
