//! The GPU half of the chapter (`tiled_matmul`): every step of the tiled matrix multiply, and
//! cuBLAS SGEMM (FP32, TF32 off), verified against a double-precision CPU reference at sizes
//! that are not tile multiples, then timed at one square size with L2 cold.
//!
//! [`measure`] verifies and times; [`report`] draws every figure and table from the results.

pub mod measure;
pub mod report;

pub use measure::{measure, Settings, GENERIC_N, SIDE};
pub use report::report;
