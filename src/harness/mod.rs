//! The harness every chapter's example stands on, written once:
//!
//! | module    | job                                                                     |
//! |-----------|-------------------------------------------------------------------------|
//! | [`gpu`]     | find the driver, NVRTC and cuBLAS without panicking; open the device      |
//! | [`inputs`]  | fresh seeded random inputs (never zeros)                                  |
//! | [`kernels`] | the registry of `kernels/*.cu` and their NVRTC compilation               |
//! | [`timing`]  | CUDA-event timing with warm-up, repetitions and an explicit L2 state      |
//! | [`stats`]   | median, min, max of repeated measurements                                |
//! | [`verify`]  | poison outputs, compare against CPU references, name the first mismatch  |
//! | [`record`]  | CSV files with provenance, and the Markdown tables the chapters include  |
//! | [`plot`]    | SVG figures drawn from those CSV files alone                             |
//! | [`sanitizer`] | compute-sanitizer's summaries, for the appendix's table               |
//! | [`cli`]     | the flags every example shares, and the exit codes                       |

pub mod cli;
pub mod gpu;
pub mod includes;
pub mod inputs;
pub mod kernels;
pub mod plot;
pub mod record;
pub mod sanitizer;
pub mod stats;
pub mod timing;
pub mod verify;

pub use cli::{run_main, CommonArgs, UsageError};
pub use gpu::{Gpu, GpuUnavailable};
pub use plot::audit_figures;
pub use stats::Stats;
pub use timing::L2;
pub use verify::{Mismatch, Tolerance};
