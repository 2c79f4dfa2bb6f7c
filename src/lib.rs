//! The code behind *The measured book on CUDA memory optimization*.
//!
//! The chapters' prose lives in `src/book/`; the code they stand on lives in three floors:
//! - [`harness`], written once and used by every example: GPU access, kernel compilation,
//!   timing, verification, records with provenance, figures, and the types a chapter's entry
//!   is made of. It imports nothing else from this crate.
//! - one module per chapter, each declaring its own entry (`CHAPTER`), flags, measurements and
//!   reports; a chapter imports the harness, and another chapter only where it extends it
//!   (the list is checked by a test in [`chapters`]).
//! - [`chapters`], the list of the chapters in the book's order and the work that spans them:
//!   `reproduce`, the roofline composed from every chapter's records, the exercise index.

pub mod atax;
pub mod ceilings;
pub mod chapters;
pub mod cmm;
pub mod coalescing;
pub mod harness;
pub mod hopper_memory;
pub mod memory_spaces;
pub mod multi_gpu;
pub mod tiling;
