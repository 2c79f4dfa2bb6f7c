//! The harness every chapter's example stands on, written once:
//!
//! | module      | job                                                                  |
//! |-------------|----------------------------------------------------------------------|
//! | [`args`]      | a chapter's command line: common flags, each setting once with its defaults |
//! | [`run`]       | a run's start-up and end: arguments, GPU, provenance, output, exit codes |
//! | [`chapter`]   | what a chapter's entry declares: needs, outputs, headlines, claims     |
//! | [`exercise`]  | a kernel exercise: the reader's version and the book's, one check      |
//! | [`gpu`]       | find the driver, NVRTC and cuBLAS without panicking; open the device   |
//! | [`kernels`]   | `kernels/*.cu` (and the `*.cuh` they share) embedded, compiled by NVRTC, looked up by typed names |
//! | [`launch`]    | cooperative and cluster launches, tensor maps, L2 windows: checked first |
//! | [`out_folder`] | a run's output folder: checked before measuring, locked for the run |
//! | [`inputs`]    | fresh seeded random inputs (never zeros)                               |
//! | [`verify`]    | poison, compare against CPU references, then time: correct before fast |
//! | [`timing`]    | CUDA-event and host-clock timing with warm-up and an explicit L2 state |
//! | [`stats`]     | median, min, max of repeated measurements                             |
//! | [`counters`]  | hardware counters from Nsight Compute, beside the chapters' predictions |
//! | [`ceiling`]   | the copy and transfer ceilings every chapter divides by               |
//! | [`compare`]   | a reader's run beside the book's: headline numbers and claims          |
//! | [`skipped`]   | what a run could not measure on its GPU, one table per chapter         |
//! | [`blas`]      | cuBLAS handles, each checked to compute FP32 in FP32                  |
//! | [`atomic`]    | every file written whole or not at all, never outside its folder      |
//! | [`undo`]      | a run's changes to its folder kept only if it ends well               |
//! | [`record`]    | CSV files with provenance                                             |
//! | [`roof`]      | the peaks a roofline divides by, read back from a run, and datasheets  |
//! | [`table`]     | the Markdown tables the chapters include, shaped by their CSV's keys  |
//! | [`plot`]      | SVG figures drawn from those CSV files alone                          |
//! | [`format`](mod@format)    | how numbers are written into tables                                   |
//! | [`includes`]  | mdBook's `{{#include}}`, for the snippet tests and the anchor checks  |
//! | [`sanitizer`] | compute-sanitizer's summaries, for the appendix's table              |
//! | [`tma`]       | the TMA's tensor maps and launches, for any chapter that uses them     |
//! | [`sass`]      | the machine code of a kernel file (ptxas + nvdisasm), instructions counted |
//! | [`toolchain`] | NVRTC and cuBLAS found and chosen for the reader's driver; entry points that changed |

pub mod args;
pub mod atomic;
pub mod blas;
pub mod ceiling;
pub mod chapter;
pub mod compare;
pub mod counters;
pub mod exercise;
pub mod fit;
pub mod format;
pub mod gpu;
pub mod includes;
pub mod inputs;
pub mod kernels;
pub mod launch;
pub mod occupancy;
pub mod out_folder;
pub mod plot;
pub mod record;
pub mod roof;
pub mod run;
pub mod sanitizer;
pub mod sass;
pub mod sections;
pub mod skipped;
pub mod stats;
pub mod table;
pub mod timing;
pub mod tma;
pub mod toolchain;
pub mod undo;
pub mod verify;

pub use chapter::Chapter;
pub use gpu::{Gpu, GpuUnavailable};
pub use plot::audit_figures;
pub use run::{CommonArgs, FullQuick, Needs, Run, UsageError};
pub use stats::Stats;
pub use timing::L2;
pub use verify::{Mismatch, Tolerance, Verified};
