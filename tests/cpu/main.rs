//! Every check that needs neither a GPU nor the built book, in one test binary: each file
//! that was its own binary is a module here, so the library, cudarc and plotters are linked
//! once instead of once per file.

#[path = "../common/mod.rs"]
mod common;

mod atax_cpu;
mod audit;
mod cli;
mod cmm_cpu;
mod coalescing_cpu;
mod command_lines;
mod compare;
mod compile_matrix;
mod figures;
mod hostile_records;
mod launch_cpu;
mod memory_spaces_cpu;
mod multi_gpu_cpu;
mod nvrtc;
mod output_folder;
mod quoted_numbers;
mod tiling_cpu;
