//! Where cell `(row, col)` of an upper-triangular table lives in memory.
//!
//! The dynamic program for chained matrix multiplication fills an upper-triangular table one
//! diagonal at a time (diagonal `d` holds the cells with `col - row = d`). Stored by rows, the
//! cells of one diagonal sit `n + 1` elements apart; Seifi & Al-Mamun 2024 (Section 6, Figures
//! 2-4) store each diagonal contiguously instead, diagonal 0 first. This module gives both index
//! functions, the inverse of the diagonal-major one, and text renderings of the paper's figures
//! computed from those functions.
//!
//! Two numbering conventions meet here:
//! * the figures and the generic functions use 0-based `(row, col)` of an `n x n` matrix, with
//!   `row <= col < n`;
//! * the dynamic-programming table uses the paper's 1-based `(i, j)`, `1 <= i <= j <= n`, where
//!   `n` is the number of matrices. [`Layout::dp_index`] is the index the kernels use.

use std::fmt::Write as _;

use serde::Serialize;

/// The largest `n` for which every index of both DP layouts fits in a CUDA `int`:
/// `(n + 1)^2 <= 2^31 - 1`. The kernels compute indices in 32-bit `int`.
pub const MAX_N_FOR_I32_INDEX: usize = 46_339;

/// Number of cells on and above the main diagonal of an `n x n` matrix: `n (n + 1) / 2`.
pub fn triangle_len(n: usize) -> usize {
    n * (n + 1) / 2
}

/// Index of `(row, col)` in an `n x n` matrix stored by rows, 0-based (the paper's Figure 3).
pub fn row_major_index(n: usize, row: usize, col: usize) -> usize {
    debug_assert!(row < n && col < n);
    n * row + col
}

/// The paper's DP indexing: `M[i][j]` at `(n + 1) * i + j`, with 1-based `i, j` and `n` the
/// number of matrices (Seifi & Al-Mamun 2024, Section 5.2). Row 0 and column 0 are never used,
/// so the buffer has `(n + 1)^2` cells of which `n (n + 1) / 2` hold costs.
pub fn paper_row_major_index(n: usize, i: usize, j: usize) -> usize {
    debug_assert!(i <= n && j <= n);
    (n + 1) * i + j
}

/// Index of `(row, col)`, `row <= col < n`, in the upper triangle packed by rows with no gaps:
/// row 0 holds `n` cells, row 1 holds `n - 1`, and so on. This is also the order in which the
/// figures hand out letters (`A` = `(0, 0)`, `B` = `(0, 1)`, ...).
pub fn packed_row_index(n: usize, row: usize, col: usize) -> usize {
    debug_assert!(row <= col && col < n);
    // Rows 0..row hold n + (n - 1) + ... + (n - row + 1) = row * (2n - row + 1) / 2 cells.
    row * (2 * n + 1 - row) / 2 + (col - row)
}

// ANCHOR: diag_index
/// First index of diagonal `d` (`0 <= d <= n`) in the diagonal-major order of an
/// `n x n` upper triangle. Diagonal `e` holds `n - e` cells, so this is
/// `n + (n - 1) + ... + (n - d + 1)`. `diagonal_offset(n, n)` is one
/// past the last cell.
pub fn diagonal_offset(n: usize, d: usize) -> usize {
    debug_assert!(d <= n);
    d * (2 * n + 1 - d) / 2
}

/// Index of `(row, col)`, `row <= col < n`, in the diagonal-major order of Seifi &
/// Al-Mamun 2024, Figure 4: diagonal `d = col - row` is stored contiguously, ordered by
/// row, and the diagonals follow one another starting with the main diagonal `d = 0`.
pub fn diag_index(n: usize, row: usize, col: usize) -> usize {
    debug_assert!(row <= col && col < n);
    diagonal_offset(n, col - row) + row
}
// ANCHOR_END: diag_index

/// Inverse of [`diag_index`]: the `(row, col)` stored at `index`, `index < triangle_len(n)`.
///
/// Finding the diagonal means solving `diagonal_offset(n, d) <= index` for the largest `d`, a
/// quadratic. A floating-point root gives a guess that rounding may put one off; two integer
/// loops then move it to the exact answer, so the result does not depend on rounding.
pub fn diag_index_inverse(n: usize, index: usize) -> (usize, usize) {
    assert!(
        index < triangle_len(n),
        "index {index} is outside the {n} x {n} upper triangle"
    );
    let b = (2 * n + 1) as f64;
    let root_guess = (b - (b * b - 8.0 * index as f64).sqrt()) / 2.0;
    let mut d = (root_guess.max(0.0) as usize).min(n - 1);
    while diagonal_offset(n, d) > index {
        d -= 1;
    }
    while diagonal_offset(n, d + 1) <= index {
        d += 1;
    }
    let row = index - diagonal_offset(n, d);
    (row, row + d)
}

/// The two ways the kernels store the DP table of `n` matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Layout {
    /// The paper's baseline: `M[i][j]` at `(n + 1) * i + j`, `(n + 1)^2` cells.
    RowMajor,
    /// The paper's data layout: diagonals stored one after another, `n (n + 1) / 2` cells.
    DiagonalMajor,
}

impl Layout {
    /// Both layouts, baseline first.
    pub const ALL: [Layout; 2] = [Layout::RowMajor, Layout::DiagonalMajor];

    /// A short name for tables and file names.
    pub fn name(self) -> &'static str {
        match self {
            Layout::RowMajor => "row-major",
            Layout::DiagonalMajor => "diagonal-major",
        }
    }

    /// Cells in the buffer holding the DP table of `n` matrices.
    pub fn dp_len(self, n: usize) -> usize {
        match self {
            Layout::RowMajor => (n + 1) * (n + 1),
            Layout::DiagonalMajor => triangle_len(n),
        }
    }

    /// Index of the DP cell `M[i][j]` (1-based, `1 <= i <= j <= n`) in this layout. The kernels
    /// compute exactly this.
    pub fn dp_index(self, n: usize, i: usize, j: usize) -> usize {
        debug_assert!(1 <= i && i <= j && j <= n);
        match self {
            Layout::RowMajor => paper_row_major_index(n, i, j),
            Layout::DiagonalMajor => diag_index(n, i - 1, j - 1),
        }
    }

    /// How far, in elements, the left operand moves when the split advances from `k` to
    /// `k + 1` in cell `(i, j)`: from `M[i][k]` to `M[i][k+1]`. Kernels that walk the `k` loop
    /// add this instead of recomputing [`Layout::dp_index`], which for the diagonal-major
    /// layout costs a multiply per load.
    ///
    /// Row-major: the next element of the row, `+1`. Diagonal-major: `M[i][k+1]` sits at the
    /// same position `i - 1` one diagonal up; diagonal `k - i` holds `n - (k - i)` cells, so the
    /// step is `n - (k - i)`.
    pub fn left_step(self, n: usize, i: usize, k: usize) -> isize {
        match self {
            Layout::RowMajor => 1,
            Layout::DiagonalMajor => (n - (k - i)) as isize,
        }
    }

    /// How far the right operand moves from `M[k+1][j]` to `M[k+2][j]` (see
    /// [`Layout::left_step`]). Row-major: one row down, `+(n + 1)`. Diagonal-major: with
    /// `f = j - k - 1`, `M[k+2][j]` sits on diagonal `f - 1`, which starts `n - f + 1` cells
    /// earlier, at position `k + 1`, one further along: `f - n` in all.
    pub fn right_step(self, n: usize, j: usize, k: usize) -> isize {
        match self {
            Layout::RowMajor => (n + 1) as isize,
            Layout::DiagonalMajor => (j - k - 1) as isize - n as isize,
        }
    }
}

/// Spreadsheet-style label for the `rank`-th cell: `A`..`Z`, then `AA`, `AB`, ...
pub fn cell_label(rank: usize) -> String {
    let mut label = Vec::new();
    let mut rest = rank + 1;
    while rest > 0 {
        rest -= 1;
        label.push(b'A' + (rest % 26) as u8);
        rest /= 26;
    }
    label.reverse();
    String::from_utf8(label).expect("labels are ASCII capitals")
}

/// Label of the upper-triangular cell `(row, col)`: cells are lettered by rows as in the paper's
/// Figure 2 (`A` = `(0, 0)`, ..., `U` = `(5, 5)` for `n = 6`).
pub fn upper_cell_label(n: usize, row: usize, col: usize) -> String {
    cell_label(packed_row_index(n, row, col))
}

/// The paper's Figure 2 for any `n`: the matrix with its upper triangle lettered by rows and
/// `.` below the diagonal.
pub fn render_matrix(n: usize) -> String {
    let width = upper_cell_label(n, n.saturating_sub(1), n.saturating_sub(1)).len();
    let mut text = String::new();
    for row in 0..n {
        let cells: Vec<String> = (0..n)
            .map(|col| {
                let label =
                    if col >= row { upper_cell_label(n, row, col) } else { ".".into() };
                format!("{label:>width$}")
            })
            .collect();
        text.push_str(cells.join(" ").trim_end());
        text.push('\n');
    }
    text
}

/// What each slot of an `n x n` row-major buffer holds (the paper's Figure 3): the label of an
/// upper cell, or `None` for a slot below the diagonal that the triangle leaves unused.
/// Built by sending every cell through [`row_major_index`].
pub fn row_major_memory(n: usize) -> Vec<Option<String>> {
    let mut slots = vec![None; n * n];
    for row in 0..n {
        for col in row..n {
            slots[row_major_index(n, row, col)] = Some(upper_cell_label(n, row, col));
        }
    }
    slots
}

/// What each slot of the diagonal-major buffer holds (the paper's Figure 4). Built by sending
/// every cell through [`diag_index`]; every slot is filled because the index is a bijection.
pub fn diagonal_major_memory(n: usize) -> Vec<Option<String>> {
    let mut slots = vec![None; triangle_len(n)];
    for row in 0..n {
        for col in row..n {
            slots[diag_index(n, row, col)] = Some(upper_cell_label(n, row, col));
        }
    }
    slots
}

/// Renders a memory order as lines of `per_line` slots: an address line over a content line,
/// like the paper's Figures 3 and 4. Unused slots are shown as `.`; all columns share one width
/// so that the lines stack into a grid.
pub fn render_memory(slots: &[Option<String>], per_line: usize) -> String {
    assert!(per_line > 0, "per_line must be at least 1");
    let widest_label = slots.iter().flatten().map(String::len).max().unwrap_or(1);
    let widest_address = slots.len().saturating_sub(1).to_string().len();
    let width = widest_label.max(widest_address);
    let mut text = String::new();
    for (chunk_index, chunk) in slots.chunks(per_line).enumerate() {
        let first_address = chunk_index * per_line;
        let mut addresses = String::from("addr");
        let mut contents = String::from("cell");
        for (offset, slot) in chunk.iter().enumerate() {
            let content = slot.as_deref().unwrap_or(".");
            // Writing into a String cannot fail.
            let _ = write!(addresses, " {:>width$}", first_address + offset);
            let _ = write!(contents, " {content:>width$}");
        }
        if chunk_index > 0 {
            text.push('\n');
        }
        text.push_str(&addresses);
        text.push('\n');
        text.push_str(&contents);
        text.push('\n');
    }
    text
}
