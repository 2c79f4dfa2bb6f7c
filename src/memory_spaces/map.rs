//! The map of memory spaces: what each is, who can use it, how long it lives, where it is, and
//! how much of it this GPU has. The qualitative columns restate the CUDA C++ Programming Guide
//! (its sections on variable memory space specifiers and the device memory spaces) for the GPUs
//! this book runs on; the capacities are read from the device at run time.

use crate::harness::format;
use crate::harness::gpu::DeviceInfo;

/// One row of the chapter's first table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpaceRow {
    pub space: &'static str,
    #[serde(rename = "declared as")]
    pub declared: &'static str,
    pub scope: &'static str,
    pub lifetime: &'static str,
    #[serde(rename = "where")]
    pub location: &'static str,
    pub cached: &'static str,
    #[serde(rename = "kernel threads")]
    pub threads: &'static str,
    pub host: &'static str,
    #[serde(rename = "this GPU has")]
    pub capacity: String,
}

fn kib(bytes: usize) -> String {
    format!("{} KiB", bytes / 1024)
}

fn gib(bytes: usize) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// Whole MiB (the listing's `mib`).
fn mib(bytes: usize) -> String {
    format::mib(bytes, 0)
}

// ANCHOR: space_rows
/// The six spaces, with `info`'s capacities.
pub fn space_rows(info: &DeviceInfo) -> Vec<SpaceRow> {
    let registers_bytes = info.registers_per_sm as usize * 4;
    vec![
        SpaceRow {
            space: "registers",
            declared: "a scalar local variable (`float acc;`), an array indexed \
                       only by constants",
            scope: "thread",
            lifetime: "thread",
            location: "on chip (register file of the SM)",
            cached: "n/a",
            threads: "read/write (own)",
            host: "none",
            capacity: format!(
                "{} 32-bit registers per SM ({})",
                info.registers_per_sm,
                kib(registers_bytes)
            ),
        },
        SpaceRow {
            space: "local",
            declared: "an array indexed at run time, or registers spilled by the \
                       compiler",
            scope: "thread",
            lifetime: "thread",
            location: "off chip (device memory)",
            cached: "L1 and L2",
            threads: "read/write (own)",
            host: "none",
            capacity: format!(
                "carved from device memory ({})",
                gib(info.total_mem_bytes)
            ),
        },
        SpaceRow {
            space: "shared",
            declared: "`__shared__ float t[N];` or `extern __shared__ float t[];`",
            scope: "block",
            lifetime: "block",
            location: "on chip (next to L1 in the SM)",
            cached: "n/a (it is the on-chip store)",
            threads: "read/write (whole block)",
            host: "none (sets the dynamic size at launch)",
            capacity: format!(
                "{} per block (opt-in), {} per SM",
                kib(info.shared_per_block_optin),
                kib(info.shared_per_sm)
            ),
        },
        SpaceRow {
            space: "global",
            declared: "`cuMemAlloc` (a kernel pointer argument), or \
                       `__device__ float g[N];`",
            scope: "grid, and every later grid",
            lifetime: "application (until freed)",
            location: "off chip (device memory)",
            cached: "L2; L1 for loads",
            threads: "read/write (all)",
            host: "read/write (copies)",
            capacity: format!(
                "{} device memory behind {} of L2",
                gib(info.total_mem_bytes),
                mib(info.l2_bytes)
            ),
        },
        SpaceRow {
            space: "constant",
            declared: "`__constant__ float c[N];`",
            scope: "grid, and every later grid",
            lifetime: "application (the module)",
            location: "off chip, with a constant cache in each SM",
            cached: "constant cache, L2",
            threads: "read only",
            host: "read/write (through the module's symbol)",
            capacity: kib(info.constant_bytes),
        },
        SpaceRow {
            space: "read-only path (texture)",
            declared: "global memory read with `__ldg` or through \
                       `const T* __restrict__`",
            scope: "grid",
            lifetime: "application (until freed)",
            location: "off chip, read through the L1/texture cache",
            cached: "L1/texture cache, L2",
            threads: "read only (while the kernel runs)",
            host: "read/write (it is global memory)",
            capacity: format!("global memory; {} of L2", mib(info.l2_bytes)),
        },
    ]
}
// ANCHOR_END: space_rows
