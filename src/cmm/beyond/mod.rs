//! Chapter "CMM beyond the paper": the same dynamic program from n = 128 to n = 16384, and
//! matrix chains multiplied in the order it finds.
//!
//! [`measure`] verifies and times; [`report`] draws every figure and table from the results.

pub mod batch;
pub mod counted;
pub mod exercises;
pub mod instructions;
pub mod measure;
pub mod report;

pub use measure::{
    check_matrices, measure, Lengths, Part, Results, Settings, CHAIN_REPS, MATRICES,
    MAX_MATRICES,
};
pub use report::report;
