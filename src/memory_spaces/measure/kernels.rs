//! The chapter's one kernel table: every function of `kernels/memory_spaces.cu`, named by
//! what it does and where its data lives.

use cudarc::driver::CudaFunction;

use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::stats::Rate;
use crate::harness::{Gpu, Stats};

use super::chases::ChaseSpace;
use super::histograms::HistogramKernel;
use super::onchip::OnChipKernel;
use super::signal::VectorHome;
use super::stencils::StencilKernel;
use crate::memory_spaces::{BLOCK, KERNEL_FILE};

/// A kernel of `kernels/memory_spaces.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryKernel {
    /// `apply_signal_*`: the signal example with the vector in one home.
    Signal(VectorHome),
    /// `walk_*`: the walk over a 32 KiB table in one home.
    Walk(VectorHome),
    /// `walk_const_spaced`: the constant-memory walk with its spacing as parameters.
    WalkConstSpaced,
    /// `stencil3_*`.
    Stencil(StencilKernel),
    /// `histogram_*`.
    Histogram(HistogramKernel),
    /// `chase_*`: a pointer chase through one space.
    Chase(ChaseSpace),
    /// `bandwidth_*`: bytes delivered from shared memory or registers.
    OnChip(OnChipKernel),
}

impl KernelName for MemoryKernel {
    fn all() -> Vec<Self> {
        let homes = VectorHome::ALL;
        homes
            .map(MemoryKernel::Signal)
            .into_iter()
            .chain(homes.map(MemoryKernel::Walk))
            .chain([MemoryKernel::WalkConstSpaced])
            .chain(StencilKernel::ALL.map(MemoryKernel::Stencil))
            .chain(HistogramKernel::ALL.map(MemoryKernel::Histogram))
            .chain(ChaseSpace::ALL.map(MemoryKernel::Chase))
            .chain(OnChipKernel::ALL.map(MemoryKernel::OnChip))
            .collect()
    }

    fn file(self) -> &'static str {
        KERNEL_FILE
    }

    fn function(self) -> String {
        use MemoryKernel as K;
        let name = match self {
            K::Signal(VectorHome::Constant) => "apply_signal_const",
            K::Signal(VectorHome::Global) => "apply_signal_global",
            K::Signal(VectorHome::ReadOnly) => "apply_signal_readonly",
            K::Walk(VectorHome::Constant) => "walk_const",
            K::Walk(VectorHome::Global) => "walk_global",
            K::Walk(VectorHome::ReadOnly) => "walk_readonly",
            K::WalkConstSpaced => "walk_const_spaced",
            K::Stencil(StencilKernel::Global) => "stencil3_global",
            K::Stencil(StencilKernel::SharedStatic) => "stencil3_shared_static",
            K::Stencil(StencilKernel::SharedDynamic) => "stencil3_shared_dynamic",
            K::Histogram(HistogramKernel::Local) => "histogram_local",
            K::Histogram(HistogramKernel::Registers) => "histogram_registers",
            K::Chase(ChaseSpace::Global) => "chase_global",
            K::Chase(ChaseSpace::Shared) => "chase_shared",
            K::Chase(ChaseSpace::Constant) => "chase_const",
            K::OnChip(OnChipKernel::Shared) => "bandwidth_shared",
            K::OnChip(OnChipKernel::Registers) => "bandwidth_registers",
        };
        name.to_string()
    }
}

/// Every kernel of the chapter, compiled once for this device.
pub type Kernels = KernelTable<MemoryKernel>;

/// Blocks of [`BLOCK`] threads that fill every SM once when running `f`.
pub fn resident_blocks(
    gpu: &Gpu,
    f: &CudaFunction,
    dynamic_shared: u32,
) -> anyhow::Result<u32> {
    let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
        BLOCK,
        dynamic_shared as usize,
        None,
    )?;
    Ok(gpu.info.sms as u32 * per_sm.max(1))
}

/// A verified, timed kernel: its times and the amount of work one run does (bytes, loads or
/// values, as the caller says).
#[derive(Debug, Clone)]
pub struct Timed {
    pub stats: Stats,
    pub amount: f64,
}

impl Timed {
    /// Work per second at the median, best and worst repetition.
    pub fn per_second(&self) -> Rate {
        self.stats.rate(self.amount)
    }
}
