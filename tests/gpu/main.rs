//! The checks that need a CUDA GPU (ignored, with that reason, by a plain `cargo test`), in one
//! test binary. On a machine with one GPU: `cargo test --release -- --ignored --skip two_gpus`.

#[path = "../common/mod.rs"]
mod common;

mod gpu_atax;
mod gpu_ceilings;
mod gpu_cmm;
mod gpu_cmm_chain;
mod gpu_cmm_tiled;
mod gpu_coalescing;
mod gpu_exercises;
mod gpu_hopper;
mod gpu_memory_spaces;
mod gpu_multi_gpu;
mod gpu_tiling;
