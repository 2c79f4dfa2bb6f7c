//! Chained matrix multiplication (CMM): the dynamic program, its data layouts, and what they cost.
//!
//! * [`dp`]: the chain, overflow bounds, the table and the CPU programs (serial and rayon);
//! * [`blocked`]: the CPU program with the tiled kernels' blocking (min-plus blocks, rayon);
//! * [`paren`]: parenthesizations (reconstruction, cost of any order, brute force);
//! * [`layout`]: row-major and diagonal-major index functions and the paper's figures;
//! * [`traffic`]: sectors and lines the kernels' table loads touch, computed per warp;
//! * [`gpu`]: choosing, launching, verifying and timing the kernels;
//! * [`launches`]: what keeping the diagonals in order costs (launches, graph, grid barrier);
//! * [`chain`]: real matrix chains multiplied with cuBLAS in the left-to-right and optimal orders;
//! * [`tiled`]: the tiled program for large chains (block diagonals, min-plus tiles, wavefronts);
//! * [`exercises`]: the chapter's exercises, solved;
//! * [`paper`]: the numbers Seifi & Al-Mamun 2024 report;
//! * [`diagonal`]: the chapter "Chained matrix multiplication and the diagonal layout"
//!   (measure, report, and one chain answered);
//! * [`beyond`]: the chapter "CMM beyond the paper" (measure, report).
//!
//! The kernels live in `kernels/cmm_*.cu`; each file's header gives its launch configuration
//! and parameter order.

pub mod beyond;
pub mod blocked;
pub mod chain;
pub mod diagonal;
pub mod dp;
pub mod error;
pub mod exercise_tables;
pub mod exercises;
pub mod gpu;
pub mod launches;
pub mod layout;
pub mod paper;
pub mod paren;
pub mod tiled;
pub mod traffic;

pub use error::CmmError;
