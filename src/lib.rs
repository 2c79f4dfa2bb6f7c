//! The code behind *The measured book on CUDA memory optimization*.
//!
//! The chapters' prose lives in `src/book/`; the code they stand on lives in the module tree
//! below, one module per chapter, plus the chapter registry ([`chapters`]), the roofline
//! composed from every chapter's records ([`roofline`]) and the kernel exercises
//! ([`exercises`]).
//! `harness` is written once and used by every example: GPU access, kernel compilation,
//! timing, verification, records with provenance, and figures.

pub mod atax;
pub mod ceilings;
pub mod chapters;
pub mod cmm;
pub mod coalescing;
pub mod exercises;
pub mod harness;
pub mod hopper_memory;
pub mod memory_spaces;
pub mod multi_gpu;
pub mod roofline;
pub mod tiling;
