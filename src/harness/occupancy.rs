//! How many blocks of a kernel fit on one SM at once: the arithmetic of NVIDIA's occupancy
//! calculator for the limits of compute capability 9.0, without a GPU. The measuring code asks
//! the driver (`cuOccupancyMaxActiveBlocksPerMultiprocessor`) instead; this is for the
//! glossary's picture, which explains where the driver's answer comes from.
//!
//! The limits are the published ones for compute capability 9.0: the CUDA C++ Programming
//! Guide's table "Technical Specifications per Compute Capability" (threads, warps, blocks,
//! registers and shared memory per SM, and the 1 KiB of shared memory the system reserves per
//! block), and the allocation granularities of the CUDA Occupancy Calculator for 9.0
//! (registers in units of 256 per warp, shared memory in units of 128 bytes).

/// The resources of one SM that blocks share, and how they are handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmLimits {
    pub threads: u32,
    pub blocks: u32,
    /// 32-bit registers.
    pub registers: u32,
    /// Registers are handed to a warp in units of this many.
    pub register_unit_per_warp: u32,
    /// Shared memory for blocks, in bytes.
    pub shared_bytes: u32,
    /// Shared memory is handed to a block in units of this many bytes.
    pub shared_unit_bytes: u32,
    /// Shared memory the system reserves for each resident block.
    pub shared_reserved_per_block: u32,
}

/// The limits of an SM of compute capability 9.0 (H100, H200).
pub const SM_90: SmLimits = SmLimits {
    threads: 2048,
    blocks: 32,
    registers: 65536,
    register_unit_per_warp: 256,
    shared_bytes: 228 * 1024,
    shared_unit_bytes: 128,
    shared_reserved_per_block: 1024,
};

/// Threads in a warp.
pub const WARP: u32 = 32;

/// What one block of a kernel asks of an SM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelResources {
    pub threads_per_block: u32,
    pub registers_per_thread: u32,
    /// Shared memory per block, in bytes (static and dynamic).
    pub shared_per_block: u32,
}

/// A resource of the SM that limits resident blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Threads,
    Registers,
    SharedMemory,
    Blocks,
}

impl Limit {
    pub fn label(self) -> &'static str {
        match self {
            Limit::Threads => "threads",
            Limit::Registers => "registers",
            Limit::SharedMemory => "shared memory",
            Limit::Blocks => "blocks",
        }
    }
}

/// `n` rounded up to a multiple of `unit`.
fn round_up(n: u32, unit: u32) -> u32 {
    n.div_ceil(unit) * unit
}

/// The blocks of `k` each resource of `sm` would hold on its own, in the order threads,
/// registers, shared memory, blocks.
pub fn blocks_by_limit(sm: &SmLimits, k: &KernelResources) -> [(Limit, u32); 4] {
    let warps = k.threads_per_block.div_ceil(WARP);
    let registers_per_warp =
        round_up(k.registers_per_thread * WARP, sm.register_unit_per_warp);
    let by_registers = match registers_per_warp {
        0 => sm.blocks,
        r => sm.registers / r / warps,
    };
    let shared_per_block = round_up(
        k.shared_per_block + sm.shared_reserved_per_block,
        sm.shared_unit_bytes,
    );
    [
        (Limit::Threads, sm.threads / (warps * WARP)),
        (Limit::Registers, by_registers),
        (Limit::SharedMemory, sm.shared_bytes / shared_per_block),
        (Limit::Blocks, sm.blocks),
    ]
}

/// How many blocks of `k` are resident on one SM at once, and the resource that sets it (the
/// first of the tightest, in the order of [`blocks_by_limit`]).
pub fn blocks_per_sm(sm: &SmLimits, k: &KernelResources) -> (u32, Limit) {
    let limits = blocks_by_limit(sm, k);
    let (limit, blocks) = limits
        .iter()
        .map(|&(l, b)| (l, b))
        .min_by_key(|&(_, b)| b)
        .expect("an SM has limits");
    (blocks, limit)
}

/// Resident warps as a fraction of the most an SM holds.
pub fn occupancy(sm: &SmLimits, k: &KernelResources) -> f64 {
    let (blocks, _) = blocks_per_sm(sm, k);
    let warps = blocks * k.threads_per_block.div_ceil(WARP);
    warps as f64 / (sm.threads / WARP) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(threads: u32, registers: u32, shared: u32) -> KernelResources {
        KernelResources {
            threads_per_block: threads,
            registers_per_thread: registers,
            shared_per_block: shared,
        }
    }

    #[test]
    fn each_limit_binds_where_the_calculator_says() {
        // 256 threads of 64 registers: 2048 registers a warp, 32 warps, 4 blocks.
        let k = kernel(256, 64, 16 * 1024);
        assert_eq!(
            blocks_by_limit(&SM_90, &k),
            [
                (Limit::Threads, 8),
                (Limit::Registers, 4),
                (Limit::SharedMemory, 13),
                (Limit::Blocks, 32)
            ]
        );
        assert_eq!(blocks_per_sm(&SM_90, &k), (4, Limit::Registers));
        assert_eq!(occupancy(&SM_90, &k), 0.5);
        // Few registers and no shared memory: the threads limit, full occupancy.
        assert_eq!(blocks_per_sm(&SM_90, &kernel(256, 32, 0)), (8, Limit::Threads));
        assert_eq!(occupancy(&SM_90, &kernel(256, 32, 0)), 1.0);
        // 100 KiB of shared memory (+ 1 KiB reserved) leaves room for two blocks.
        assert_eq!(
            blocks_per_sm(&SM_90, &kernel(128, 32, 100 * 1024)),
            (2, Limit::SharedMemory)
        );
        // Tiny blocks: 32 blocks per SM at most, however small.
        assert_eq!(blocks_per_sm(&SM_90, &kernel(32, 16, 0)), (32, Limit::Blocks));
    }

    #[test]
    fn partial_warps_and_odd_register_counts_are_rounded_up() {
        // 48 threads take two warps' room; 33 registers a thread round to 1280 a warp.
        let k = kernel(48, 33, 0);
        let by = blocks_by_limit(&SM_90, &k);
        assert_eq!(by[0], (Limit::Threads, 2048 / 64));
        assert_eq!(by[1], (Limit::Registers, 65536 / 1280 / 2));
        // 1 byte of shared memory costs a 128-byte unit beside the reserved KiB.
        let by = blocks_by_limit(&SM_90, &kernel(32, 16, 1));
        assert_eq!(by[2], (Limit::SharedMemory, 228 * 1024 / (1024 + 128)));
    }
}
