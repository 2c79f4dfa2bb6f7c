//! The chapter's one kernel table: every function of `kernels/coalescing.cu`, and the launch
//! shape of the grid-stride kernels.

use cudarc::driver::{CudaFunction, LaunchConfig};

use crate::coalescing::readonly::ReadOnlyKernel;
use crate::coalescing::transpose::TransposeKernel;
use crate::coalescing::KERNEL_FILE;
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::stats::Rate;
use crate::harness::{Gpu, Stats};

/// Threads per block of the one-dimensional kernels.
pub const BLOCK: u32 = 256;

crate::kernel_names! {
    /// The kernels that stride over their data with a grid of resident blocks.
    pub enum StreamKernel in "coalescing.cu" {
        /// `dst[i] = src[offset + i stride]`, floats.
        AffineF32 => "affine_read_f32",
        /// The same, doubles.
        AffineF64 => "affine_read_f64",
        /// The particle drift on an array of structs.
        DriftAos => "drift_aos",
        /// The particle drift on a struct of arrays.
        DriftSoa => "drift_soa",
    }
}

/// A kernel of `kernels/coalescing.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoalescingKernel {
    Stream(StreamKernel),
    Transpose(TransposeKernel),
    ReadOnly(ReadOnlyKernel),
}

impl KernelName for CoalescingKernel {
    fn all() -> Vec<Self> {
        let stream = StreamKernel::all().into_iter().map(CoalescingKernel::Stream);
        let transpose =
            TransposeKernel::all().into_iter().map(CoalescingKernel::Transpose);
        let readonly =
            ReadOnlyKernel::all().into_iter().map(CoalescingKernel::ReadOnly);
        stream.chain(transpose).chain(readonly).collect()
    }

    fn file(self) -> &'static str {
        match self {
            CoalescingKernel::Stream(k) => k.file(),
            CoalescingKernel::Transpose(k) => k.file(),
            CoalescingKernel::ReadOnly(k) => k.file(),
        }
    }

    fn function(self) -> String {
        match self {
            CoalescingKernel::Stream(k) => k.function(),
            CoalescingKernel::Transpose(k) => k.function(),
            CoalescingKernel::ReadOnly(k) => k.function(),
        }
    }
}

/// A grid-stride kernel, ready to launch: enough blocks of [`BLOCK`] threads to fill every SM
/// once, fewer when the data is small.
pub struct GridStrideKernel<'a> {
    pub kernel: StreamKernel,
    pub f: &'a CudaFunction,
    pub resident_blocks: u32,
}

impl GridStrideKernel<'_> {
    /// The launch configuration for `n` elements, `per_thread` of them per thread and round.
    pub fn config(&self, n: usize, per_thread: usize) -> LaunchConfig {
        let needed = n.div_ceil(per_thread * BLOCK as usize).max(1);
        let blocks =
            self.resident_blocks.min(u32::try_from(needed).unwrap_or(u32::MAX));
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// Every kernel of the chapter, compiled once for this device, with the PTX kept.
pub struct Kernels {
    pub table: KernelTable<CoalescingKernel>,
    /// Resident blocks of each grid-stride kernel, in [`StreamKernel::all`]'s order.
    resident: Vec<(StreamKernel, u32)>,
}

impl Kernels {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let table = KernelTable::<CoalescingKernel>::load(gpu)?;
        let mut resident = Vec::new();
        for k in StreamKernel::all() {
            let f = table.get(CoalescingKernel::Stream(k));
            let per_sm =
                f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)?;
            resident.push((k, gpu.info.sms as u32 * per_sm.max(1)));
        }
        Ok(Self { table, resident })
    }

    /// A grid-stride kernel with its launch shape.
    pub fn stream(&self, kernel: StreamKernel) -> GridStrideKernel<'_> {
        let resident_blocks = self
            .resident
            .iter()
            .find(|(k, _)| *k == kernel)
            .expect("every grid-stride kernel is loaded")
            .1;
        GridStrideKernel {
            kernel,
            f: self.table.get(CoalescingKernel::Stream(kernel)),
            resident_blocks,
        }
    }

    pub fn transpose(&self, kernel: TransposeKernel) -> &CudaFunction {
        self.table.get(CoalescingKernel::Transpose(kernel))
    }

    pub fn readonly(&self, kernel: ReadOnlyKernel) -> &CudaFunction {
        self.table.get(CoalescingKernel::ReadOnly(kernel))
    }

    /// The PTX NVRTC produced for `kernels/coalescing.cu` (what
    /// [`crate::coalescing::ptx::census`] reads).
    pub fn ptx(&self) -> &str {
        self.table.ptx(KERNEL_FILE)
    }
}

/// One verified, timed kernel: its times and the bytes it must move.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub stats: Stats,
    /// Bytes the algorithm moves (reads plus writes of the elements it uses).
    pub useful_bytes: u64,
}

impl Measurement {
    /// Useful bytes per second, in GB/s, at the median, best and worst repetition.
    pub fn gbps(&self) -> Rate {
        self.stats.rate(self.useful_bytes as f64 / 1e9)
    }
}
