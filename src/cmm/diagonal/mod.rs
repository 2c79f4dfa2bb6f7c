//! The chapter "Chained matrix multiplication and the diagonal layout": the systems of Seifi &
//! Al-Mamun (2024), sections 4 to 8, rebuilt and measured.
//!
//! [`measure`] verifies and times; [`report`] draws every figure and table from the results.
//! [`solve`] answers one chain (`--dims`, `--matrices`), on the CPU and, unless `--cpu-only`,
//! on the GPU.

pub mod measure;
pub mod report;
pub mod solve;

pub use measure::{
    measure, Part, Results, Settings, DIM_MAX, SEPARATION_BLOCKS, STREAMS_N,
    TABLE1_CPU_REPS, TRAFFIC_N, VARIANTS_N,
};
pub use report::report;
