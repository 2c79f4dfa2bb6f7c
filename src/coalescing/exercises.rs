//! Solutions of the chapter's exercises; `tests/coalescing_cpu.rs` checks their answers.

use std::ops::RangeInclusive;

use super::banks::{column_read_words, conflict_degree};
use super::patterns::Pattern;
use super::reference::PARTICLE_BYTES;
use super::sectors::{footprint, Footprint};

// ANCHOR: float3_x
/// Exercise 1: a warp reads only the `x` component of 32 consecutive `float3`
/// (12-byte) positions. Lane `l` reads the 4 bytes at `12 l`.
pub fn float3_x_request() -> Footprint {
    let addresses: Vec<u64> = (0..32).map(|lane| 12 * lane).collect();
    footprint(&addresses, 4)
}
// ANCHOR_END: float3_x

// ANCHOR: conflict_by_width
/// Exercise 2: the conflict degree of a column read from a tile whose rows are
/// `width` words long, for every width in `widths`.
pub fn conflict_by_row_width(widths: RangeInclusive<u64>) -> Vec<(u64, u64)> {
    let degree = |width| conflict_degree(&column_read_words(width, 0));
    widths.map(|width| (width, degree(width))).collect()
}
// ANCHOR_END: conflict_by_width

// ANCHOR: padded_record
/// Exercise 3: the predicted fraction of the copy ceiling for the drift on the
/// 28-byte record and on a record padded to 32 bytes (an unused float appended).
pub fn padded_record_fractions() -> (f64, f64) {
    let drift = |record_bytes| Pattern::DriftAos { record_bytes }.predicted_fraction();
    (drift(PARTICLE_BYTES), drift(32))
}
// ANCHOR_END: padded_record
