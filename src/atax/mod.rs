//! Chapter "ATAX": y = Aᵀ(A·x) with A an m × n row-major matrix, two matrix-vector products
//! that read A twice and do two flops per element read: bound by memory.
//!
//! * [`datasets`]: the PolyBench 4.2 sizes, the large size and the odd verification sizes, and
//!   the bytes each variant must move (the floor times the chapter predicts);
//! * [`reference`]: the CPU reference (double accumulation), the tolerance, and the slides'
//!   claims (Testoni & Chiarabini);
//! * [`element`]: the element types (`float`, `double`) and device addresses for cuBLAS;
//! * [`device`]: the kernels of `kernels/atax.cu`, named by type, and cuBLAS, and how each is
//!   launched;
//! * [`measure`]: every kernel variant and every host strategy, verified then timed;
//! * [`report`]: the chapter's figures and tables, computed from the results;
//! * [`exercises`]: the solutions of the chapter's exercises.

pub mod datasets;
pub mod device;
pub mod element;
pub mod exercises;
pub mod measure;
pub mod reference;
pub mod report;

pub use measure::{measure, Part, Settings, CEILING_MIB, SIDE};
pub use report::report;

/// The kernel file of this chapter.
pub const KERNEL_FILE: &str = "atax.cu";
