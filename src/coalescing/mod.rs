//! Chapter "Coalescing, alignment and the matrix transpose": what a warp's addresses cost.
//!
//! The arithmetic (no GPU needed):
//! * [`sectors`]: the 32-byte sectors and 128-byte lines one warp request touches, and what a
//!   whole kernel moves when every sector crosses once;
//! * [`banks`]: which shared-memory bank each lane of a warp hits, and the conflict degree;
//! * [`patterns`]: the chapter's access patterns (strides, offsets, particles in AoS and SoA)
//!   and the bandwidth the sector arithmetic predicts for each;
//! * [`transpose`]: the transpose kernels' shapes, their per-warp sectors and banks, and the
//!   CPU transpose;
//! * [`reference`]: CPU references and inputs for every kernel;
//! * [`readonly`]: the kernels of the read-only data path section;
//! * [`ptx`]: which load instructions the compiler emitted (`ld.global` or `ld.global.nc`);
//! * [`exercises`]: the solutions of the chapter's exercises.
//!
//! The measurements: [`measure`] holds the chapter's kernel table, verifies every kernel of
//! `kernels/coalescing.cu` against its CPU reference, then times it, at the sizes of one run;
//! [`report`] draws the chapter's figures and tables from the results.

pub mod banks;
pub mod counted;
pub mod exercises;
pub mod measure;
pub mod patterns;
pub mod ptx;
pub mod readonly;
pub mod reference;
pub mod report;
pub mod sectors;
pub mod transpose;

pub use measure::{
    measure, Results, Settings, CEILING_MIB, OFFSET_MIB, PARTICLES, READONLY_N,
    SWEEP_MIB, TABLE_LEN, TRANSPOSE_SIDE,
};
pub use report::report;

/// The kernel file of this chapter.
pub const KERNEL_FILE: &str = "coalescing.cu";
