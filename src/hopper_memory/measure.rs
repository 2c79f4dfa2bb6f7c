//! What the chapter "Asynchronous memory on Hopper" measures. Every kernel's output is
//! checked against the CPU (exactly: the kernels move, add integers or multiply once)
//! before it is timed.

use cudarc::driver::LaunchConfig;

use super::HopperKernel as K;
use super::{CLUSTER_BARRIERS, CP_ASYNC_STAGES, DSMEM, L2_WINDOW, TMA};
use crate::harness::kernels::KernelTable;
use crate::harness::launch::{L2Limits, L2Window};
use crate::harness::sections::{self, Caps, Plan, Skip};
use crate::harness::{FullQuick, Gpu, Run, Stats};

mod copies;
mod sync;

/// MiB of the streamed array (read once, written once) in the cp.async and L2 sections.
pub const STREAM_MIB: FullQuick<u64> = FullQuick::new(512, 8);
/// MiB of the lookup table that fits the persisting part of L2 (capped by the device).
pub const LOOKUP_MIB: FullQuick<u64> = FullQuick::new(24, 2);

pub(super) const MIB: usize = 1 << 20;

/// The chapter's sections; `--section` picks some (default: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Section {
    /// Barriers of a block, a cluster and the grid, each alone and with a round's write
    /// and check; a kernel boundary; a graph node.
    Ladder,
    /// The L2 access-policy window on a table looked up while a stream flows past, and on
    /// a table read again after a stream.
    L2,
    /// All-reduces in a cluster through distributed shared memory or through L2.
    Dsmem,
    /// cp.async with 1 to 4 stages: bytes in flight against bandwidth.
    Stages,
    /// The TMA: tiled copy and transpose, beside the padded-tile transpose.
    Tma,
    /// FP32 matrix multiply with 2 to 4 cp.async stages, beside step 6 and cuBLAS.
    Sgemm,
}

/// The sizes of one run.
#[derive(Debug, Clone)]
pub struct Settings {
    pub sections: Vec<Section>,
    pub stream_mib: u64,
    pub lookup_mib: u64,
    /// Matrix sides of the TMA section (square matrices).
    pub sides: Vec<usize>,
}

/// What a rung's timed loop holds besides its barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timed {
    /// The barrier and nothing else (its passes counted in a register).
    Alone,
    /// The barrier and its half of a round: a shared-memory store and load.
    SharedRound,
    /// The barrier and its half of a round: a shared-memory store and a read of the next
    /// block's shared memory.
    DsmemRound,
    /// The barrier and its half of a round: a store and a load of a word in global memory.
    GlobalRound,
    /// A boundary between empty kernels or graph nodes: the boundary alone.
    EmptyKernels,
}

impl Timed {
    /// The table's words for it.
    pub fn label(self) -> &'static str {
        match self {
            Timed::Alone => "barrier alone",
            Timed::SharedRound => "barrier + the round's shared store and load",
            Timed::DsmemRound => "barrier + the round's shared store and DSMEM load",
            Timed::GlobalRound => "barrier + the round's global store and load",
            Timed::EmptyKernels => "boundary alone (empty kernels)",
        }
    }
}

/// One rung of the synchronisation ladder: the cost of one barrier (or boundary).
#[derive(Debug, Clone)]
pub struct Rung {
    /// Which barrier: `__syncthreads`, a cluster barrier, a grid barrier, a boundary.
    pub barrier: String,
    pub timed: Timed,
    pub who: String,
    /// Milliseconds per barrier.
    pub per: Stats,
    pub how: String,
}

/// One run of the lookup workload.
#[derive(Debug, Clone)]
pub struct LookupRun {
    pub table_bytes: usize,
    pub window: Option<L2Window>,
    pub time: Stats,
}

/// One all-reduce measurement: cluster size, path, milliseconds per round.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub cluster: u32,
    pub dsmem: bool,
    pub per_round: Stats,
}

/// One streaming run: stages, blocks of 128 threads per SM, time.
#[derive(Debug, Clone)]
pub struct StageRun {
    pub stages: u32,
    pub blocks_per_sm: u32,
    pub time: Stats,
}

/// One copy or transpose of a square matrix.
#[derive(Debug, Clone)]
pub struct MatrixRun {
    pub side: usize,
    pub kernel: &'static str,
    pub pitch: usize,
    /// The time, or why the kernel could not run with this layout.
    pub time: Result<Stats, String>,
}

/// Registers and instructions of a kernel.
#[derive(Debug, Clone)]
pub struct KernelCode {
    pub kernel: &'static str,
    pub registers: i32,
    pub sass: Option<crate::harness::sass::Function>,
}

/// Everything the chapter's tables and figures are drawn from.
#[derive(Default)]
pub struct Results {
    pub ladder: Vec<Rung>,
    pub lookups: Vec<LookupRun>,
    pub l2_limits: Option<L2Limits>,
    /// The table read, streamed past and read again ([`super::l2`]), and its stream's
    /// bytes (read once, written once).
    pub rereads: Vec<super::l2::RereadRun>,
    pub reread_stream_bytes: usize,
    pub stream_bytes: usize,
    pub exchanges: Vec<Exchange>,
    pub exchange_rounds: u32,
    pub stages: Vec<StageRun>,
    pub matrices: Vec<MatrixRun>,
    pub code: Vec<KernelCode>,
    /// The error a shape the device refuses produced (the cluster check's demonstration).
    pub refused_cluster: Option<String>,
    /// Cluster sizes the device refused for a kernel, and why (not measured).
    pub skipped: Vec<String>,
    /// The parts of the chosen sections that this GPU cannot run, each with its need.
    pub parts_skipped: Vec<Skip>,
    /// The matrix multiplies timed, the sizes only checked, and the kernels' code.
    pub sgemm: Vec<super::sgemm::SgemmRun>,
    pub sgemm_checked: Vec<(usize, usize, usize)>,
    pub sgemm_code: Vec<super::sgemm::SgemmCode>,
}

/// What `gpu` offers the chapter: as the GPU a run pretends to be, where it pretends.
pub fn caps(gpu: &Gpu) -> anyhow::Result<Caps> {
    let persisting = L2Limits::query(gpu)?.max_persisting;
    Ok(Caps::of(&gpu.info, persisting))
}

/// The parts of the chapter `gpu` runs ([`super::SECTIONS`]).
pub fn plan(gpu: &Gpu) -> anyhow::Result<Plan> {
    Ok(sections::plan(super::SECTIONS, &caps(gpu)?))
}

/// Measures the chosen sections, each part that this GPU cannot run skipped with one line
/// naming its need (and recorded in [`Results::parts_skipped`]).
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let table = KernelTable::<K>::load(run.gpu())?;
    let plan = plan(run.gpu())?;
    let mut r = Results::default();
    for &section in &settings.sections {
        for part in section.parts() {
            if let Some(skip) = plan.skip(part) {
                println!("{skip}");
                r.parts_skipped.push(skip.clone());
            }
        }
        let runs = |part| plan.runs(part);
        match section {
            Section::Ladder => {
                sync::ladder(run, &table, runs(CLUSTER_BARRIERS), &mut r)?
            }
            Section::L2 if runs(L2_WINDOW) => {
                super::l2::lookup(run, &table, settings, &mut r)?;
                super::l2::reread(run, &table, &mut r)?;
            }
            Section::Dsmem if runs(DSMEM) => sync::dsmem(run, &table, &mut r)?,
            Section::Stages if runs(CP_ASYNC_STAGES) => {
                copies::stages(run, &table, settings, &mut r)?
            }
            Section::Tma => copies::tma(run, &table, settings, runs(TMA), &mut r)?,
            Section::Sgemm => super::sgemm::measure(run, &plan, &mut r)?,
            Section::L2 | Section::Dsmem | Section::Stages => {}
        }
    }
    Ok(r)
}

/// A one-dimensional launch of `grid` blocks of `block` threads with `shared` bytes of
/// dynamic shared memory.
pub(super) fn cfg(grid: u32, block: u32, shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: shared,
    }
}
