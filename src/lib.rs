//! The code behind *The measured book on CUDA memory optimization*.
//!
//! Chapters live in `src/*.md`; the code they stand on lives in the module tree below.
//! `harness` is written once and used by every example: GPU access, kernel compilation,
//! timing, verification, records with provenance, and figures.

pub mod atax;
pub mod ceilings;
pub mod chapters;
pub mod cmm;
pub mod coalescing;
pub mod harness;
pub mod memory_spaces;
pub mod multi_gpu;
pub mod tiling;
