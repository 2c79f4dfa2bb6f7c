//! Chapter "Reuse, loop permutation, tiling": from CPU loops to a tiled matrix multiply. Two
//! examples measure it, each in the book's one shape (settings → `measure` → results →
//! `report`):
//!
//! | module | what it holds |
//! |---|---|
//! | [`loop_permutation`] | the CPU example: traversal orders and strip sizes, measured |
//! | [`tiled_matmul`] | the GPU example: every step of the multiply against cuBLAS |
//! | [`traversal`] | row-order and column-order sweeps of a 2D array, measured on the CPU |
//! | [`legality`] | dependence distance vectors: is a loop order legal, are loops fully permutable |
//! | [`strip`] | `D[i] += B[j][i]`: original, strip-mined, strip-mined + permuted, measured |
//! | [`model`] | the steps of the tiled matrix multiply and what each should cost (bytes per FLOP) |
//! | [`device`] | the GPU side: the kernels, launching each step and cuBLAS, the check, occupancy |
//! | [`reference`](mod@reference) | the multiply's CPU reference (double accumulation, all rows or a sample) |
//! | [`out_of_core`] | a multiply larger than the device budget: panels staged from the host, streams |
//! | [`generic`] | one pointer for global and shared memory: generic addressing, checked and shown in PTX |
//! | [`lecture`] | the lecture's numbers (its tiled multiply's GFLOP/s, its GPU) kept as data |
//! | [`exercises`] | solutions of the exercises |

pub mod counted;
pub mod device;
pub mod exercises;
pub mod generic;
pub mod lecture;
pub mod legality;
pub mod loop_permutation;
pub mod model;
pub mod out_of_core;
pub mod reference;
pub mod strip;
pub mod tiled_matmul;
pub mod traversal;
