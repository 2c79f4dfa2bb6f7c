//! The chapter "Measuring a GPU": the ceilings every later chapter is measured against.
//!
//! [`measure`] verifies and times; [`report`] draws every figure and table from the results.
//! The copy and transfer measurements themselves live in [`crate::harness::ceiling`], because
//! every chapter measures its own ceiling in the same run.

pub mod exercises;
pub mod measure;
pub mod peaks;
pub mod report;

pub use measure::{measure, Settings, CEILING_MIB, MAX_TRANSFER_MIB};
pub use report::report;
