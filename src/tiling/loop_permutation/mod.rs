//! The CPU half of the chapter (`loop_permutation`): traversal orders and the strip sizes of
//! `D[i] += B[j][i]`, each pair of orders checked for identical results, then timed on the
//! host clock; and the matrix-multiply model's predictions, which need no measurement.
//!
//! [`measure`] checks and times; [`report`] draws every figure and table from the results.

pub mod measure;
pub mod report;

pub use measure::{measure, Settings, MIN_ELEMENTS};
pub use report::report;
