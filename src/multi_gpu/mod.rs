//! Chapter "Memory across GPUs": another GPU's memory as the next level of the hierarchy,
//! reached through peer access (NVLink or PCIe) and through NCCL, the library the field uses
//! for collectives (here through cudarc's `nccl` feature).
//!
//! * [`nccl`]: finding NCCL, NVLink multicast off, one communicator per GPU, grouped calls;
//! * [`devices`]: opening every GPU, peer access, what links each pair, timing across GPUs;
//! * [`peer`]: copies between two GPUs by every path, and the latency of one peer load;
//! * [`collectives`]: all-reduce, all-gather and reduce-scatter from bytes to GiB;
//! * [`torch`]: PyTorch's all-reduce, recorded by `torch_reference.py`, as the reference;
//! * [`atax`]: the ATAX chapter's fused kernel on rows split over the GPUs;
//! * [`measure`]: everything, verified then timed; [`report`]: every figure and table;
//! * [`exercises`]: the solutions of the chapter's exercises.
//!
//! Every process that starts NCCL here sets `NCCL_NVLS_ENABLE=0` first ([`nccl::prepare`]):
//! NVLink multicast objects can take a shared host's GPUs out of service, and nothing in this
//! chapter creates one.

pub mod atax;
pub mod collectives;
pub mod devices;
pub mod exercises;
pub mod measure;
pub mod nccl;
pub mod peer;
pub mod report;
pub mod torch;

pub use measure::{measure, Settings, ATAX_COLS, ATAX_ROWS, COLLECTIVE_MIB, PEER_MIB};
pub use report::report;
