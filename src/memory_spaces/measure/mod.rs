//! Verify, then time: every kernel of `kernels/memory_spaces.cu` runs once on fresh random
//! input with its output poisoned, is compared with its CPU reference, and only then is timed.
//!
//! | file | what it measures |
//! |------|------------------|
//! | [`kernels`] | nothing: the chapter's kernel table, and what every measurement returns |
//! | [`signal`] | the signal example, the vector in constant, global and read-only memory |
//! | [`walks`] | a 32 KiB table read with 1 to 32 distinct addresses per warp load, and the constant-memory walk with its addresses spaced three ways |
//! | [`stencils`] | the three-point stencil from global memory and from a shared tile |
//! | [`histograms`] | a per-thread histogram in local memory and in registers |
//! | [`chases`] | pointer chases: the latency of one load in each space |
//! | [`onchip`] | the bytes per second shared memory and registers deliver |
//!
//! [`measure()`] runs them all at the sizes of one run and returns the [`Results`] the report
//! draws.

pub mod chases;
pub mod histograms;
pub mod kernels;
pub mod onchip;
pub mod signal;
pub mod stencils;
pub mod walks;

pub use chases::{measure_chase, ChaseResult, ChaseSpace};
pub use histograms::{measure_histograms, HistogramKernel, HistogramResult};
pub use kernels::{resident_blocks, Kernels, MemoryKernel, Timed};
pub use onchip::{measure_onchip, OnChip, OnChipKernel};
pub use signal::{
    launch_signal, measure_signal, set_signal_const, SignalSize, VectorHome,
};
pub use stencils::{launch_stencil, measure_stencils, StencilKernel};
pub use walks::{SpacedPoint, WalkPoint, WalkSizes, WalkSpacing};

use crate::ceilings::peaks::{measure_l2_read, L2_PASSES};
use crate::harness::ceiling::{self, CeilingKernel, Ceilings, CopyKernel};
use crate::harness::kernels::KernelName;
use crate::harness::kernels::KernelTable;
use crate::harness::sass::{self, Tools};
use crate::harness::stats::Rate;
use crate::harness::timing::Plan;
use crate::harness::{FullQuick, Run, L2};

pub use super::args::Settings;
use super::map::{space_rows, SpaceRow};
use super::KERNEL_FILE;

/// Timed repetitions of each pointer chase unless `--reps` says otherwise: each repetition
/// is `CHASE_STEPS` dependent loads, so fewer suffice.
pub const CHASE_REPS: FullQuick<u32> = FullQuick::new(5, 1);

// The sizes no flag changes. None is a multiple of anything: every kernel has a partial
// last block.
/// Rows and columns of each signal matrix.
const SIGNAL_ROWS: FullQuick<usize> = FullQuick::new(3001, 301);
const SIGNAL_M: FullQuick<usize> = FullQuick::new(2500, 257);
/// Loads per thread of each walk.
const WALK_STEPS: FullQuick<u32> = FullQuick::new(4096, 64);
/// Values the histograms count.
const HISTOGRAM_N: FullQuick<usize> = FullQuick::new(50_000_017, 100_003);
/// Passes of the on-chip kernels over their 32 floats per thread.
const ONCHIP_PASSES: FullQuick<u32> = FullQuick::new(256, 4);
/// Bytes of the L2-cold copy that sets the device-memory ceiling.
const COPY_COLD_BYTES: FullQuick<usize> = FullQuick::new(512 * MIB, 16 * MIB);
/// Untimed repetitions before every timed measurement but the chases' (one).
const WARMUP: FullQuick<usize> = FullQuick::new(2, 1);

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// Everything one run of the example measured.
#[derive(Debug, Clone)]
pub struct Results {
    pub map: Vec<SpaceRow>,
    /// The copy kernel on a large array, L2 cold: bytes copied and read + write bandwidth.
    pub copy_cold: (usize, Rate),
    /// The copy kernel on an array that fits in L2, L2 warm.
    pub copy_warm: (usize, Rate),
    /// The read-only kernel on the large copy's source, L2 cold: the ceiling of the
    /// signal example, whose bytes are nearly all reads (bytes per second).
    pub read_cold: Rate,
    /// The copy, read-only and write-only ceilings (medians) of the large array, L2 cold,
    /// and of the L2-resident one, L2 warm.
    pub ceilings_cold: Ceilings,
    pub ceilings_warm: Ceilings,
    /// L2's read rate inside one launch (the ceilings chapter's kernel): bytes of the
    /// L2-resident buffer, passes over it, and the rate.
    pub l2_read: (usize, u32, Rate),
    pub signal_size: SignalSize,
    pub signal: Vec<(VectorHome, Timed)>,
    pub walk_threads: usize,
    pub walk_steps: u32,
    pub walks: Vec<WalkPoint>,
    /// The constant-memory walk with its addresses spaced three ways.
    pub spaced_walks: Vec<SpacedPoint>,
    /// The load instructions of the signal and walk kernels in machine code, and who
    /// assembled them; `None` without `ptxas` and `nvdisasm`.
    pub sass: Option<(String, Vec<LoopCensus>)>,
    pub stencil_cold_n: usize,
    pub stencil_cold: Vec<(StencilKernel, Timed)>,
    pub stencil_warm_n: usize,
    pub stencil_warm: Vec<(StencilKernel, Timed)>,
    pub histogram_n: usize,
    pub histograms: Vec<HistogramResult>,
    pub chases: Vec<ChaseResult>,
    pub onchip: OnChip,
}

/// Footprints of the chases: from well inside L1 to well past L2, and what shared and
/// constant memory can hold.
pub fn chase_footprints(space: ChaseSpace, quick: bool) -> Vec<usize> {
    match (space, quick) {
        (ChaseSpace::Global, false) => vec![
            8 * KIB,
            32 * KIB,
            128 * KIB,
            512 * KIB,
            2 * MIB,
            8 * MIB,
            16 * MIB,
            32 * MIB,
            64 * MIB,
            128 * MIB,
            512 * MIB,
        ],
        (ChaseSpace::Global, true) => vec![4 * KIB, 64 * KIB, MIB],
        (ChaseSpace::Shared, false) => vec![KIB, 4 * KIB, 16 * KIB, 32 * KIB],
        (ChaseSpace::Constant, false) => vec![KIB, 4 * KIB, 16 * KIB],
        (ChaseSpace::Shared | ChaseSpace::Constant, true) => vec![4 * KIB],
    }
}

/// Distinct addresses per warp load of the walks.
pub fn walk_distincts(quick: bool) -> Vec<u32> {
    if quick {
        vec![1, 2, 3, 32]
    } else {
        vec![1, 2, 3, 4, 6, 8, 12, 16, 24, 32]
    }
}

/// The instructions of one kernel's main loop (the loop with the most loads), per trip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopCensus {
    pub kernel: MemoryKernel,
    /// Every instruction of one trip.
    pub instructions: usize,
    /// `FFMA` and `FADD`: one per element the trip handles.
    pub adds: usize,
    /// `LDG`, coherent or not.
    pub global_loads: usize,
    /// `LDC` from the `__constant__` bank: one address per lane.
    pub constant_loads: usize,
    /// `ULDC` from the `__constant__` bank: one address per warp, on the uniform datapath.
    pub uniform_constant_loads: usize,
}

/// The kernels whose loads the chapter counts.
pub const SASS_KERNELS: [MemoryKernel; 6] = [
    MemoryKernel::Signal(VectorHome::Constant),
    MemoryKernel::Signal(VectorHome::Global),
    MemoryKernel::Signal(VectorHome::ReadOnly),
    MemoryKernel::Walk(VectorHome::Constant),
    MemoryKernel::WalkConstSpaced,
    MemoryKernel::Walk(VectorHome::Global),
];

/// Counts the main loop of every kernel of [`SASS_KERNELS`] in `listing` (`nvdisasm -c`).
pub fn loop_census(listing: &sass::Sass) -> anyhow::Result<Vec<LoopCensus>> {
    let is_load =
        |i: &sass::Instr| sass::is_global_load(i) || sass::is_user_constant_load(i);
    let mut rows = Vec::new();
    for kernel in SASS_KERNELS {
        let name = kernel.function();
        let f = listing
            .function(&name)
            .ok_or_else(|| anyhow::anyhow!("no function `{name}` in the SASS"))?;
        let body = f
            .busiest_loop(is_load)
            .ok_or_else(|| anyhow::anyhow!("no loop with a load in `{name}`"))?;
        let count =
            |p: &dyn Fn(&sass::Instr) -> bool| body.iter().filter(|i| p(i)).count();
        rows.push(LoopCensus {
            kernel,
            instructions: body.len(),
            adds: count(&|i| matches!(i.base(), "FFMA" | "FADD")),
            global_loads: count(&sass::is_global_load),
            constant_loads: count(&|i| {
                sass::is_user_constant_load(i) && i.base() == "LDC"
            }),
            uniform_constant_loads: count(&|i| {
                sass::is_user_constant_load(i) && i.base() == "ULDC"
            }),
        });
    }
    Ok(rows)
}

/// Verifies and times everything the chapter shows, at the sizes of this run.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let (quick, seed) = (run.quick, run.seed);
    let cold = Plan::new(WARMUP.pick(quick), run.reps(), L2::Cold);
    let warm = Plan::new(WARMUP.pick(quick), run.reps(), L2::Warm);
    let chase_plan = Plan::new(1, run.reps_or(CHASE_REPS) as usize, L2::Warm);
    let kernels = Kernels::load(gpu)?;
    let copy = CopyKernel::load(gpu)?;

    let signal_size = SignalSize {
        rows: SIGNAL_ROWS.pick(quick),
        m: SIGNAL_M.pick(quick),
        matrices: settings.signal_matrices as usize,
    };
    // Two full waves of 2048 threads per SM, less a few: a partial last block.
    let walk_threads =
        FullQuick::new(gpu.info.sms as usize * 2048 - 13, 1000).pick(quick);
    let walk_steps = WALK_STEPS.pick(quick);
    let distincts = walk_distincts(quick);
    let stencil_cold_n = settings.stencil_n as usize;
    // Input and output together fill half of L2.
    let stencil_warm_n = FullQuick::new(gpu.info.l2_bytes / 16 + 3, 10_007).pick(quick);
    let copy_cold_bytes = COPY_COLD_BYTES.pick(quick);
    let copy_warm_bytes = FullQuick::new(gpu.info.l2_bytes / 4, MIB).pick(quick);
    let histogram_n = HISTOGRAM_N.pick(quick);
    let chase_steps = settings.chase_steps;
    let onchip_passes = ONCHIP_PASSES.pick(quick);

    let chase_points: usize =
        ChaseSpace::ALL.iter().map(|&s| chase_footprints(s, quick).len()).sum();
    let bar = run.progress(9 + chase_points);

    bar.set_message("copy ceilings");
    // Bytes per second (read + write), like every other rate the report turns into GB/s.
    let measured = ceiling::measure_copy(gpu, &copy, copy_cold_bytes, cold, seed)?;
    let copy_cold = measured.best_stats().0.rate(2.0 * copy_cold_bytes as f64);
    let read_cold = measured.read.rate(copy_cold_bytes as f64);
    let ceilings_cold = Ceilings::of(&measured, L2::Cold);
    bar.inc(1);
    // L2 itself: a quarter of it read many times inside one launch, so that the launch
    // does not dominate (a single short copy measures mostly the launch).
    let l2_table = KernelTable::<CeilingKernel>::load(gpu)?;
    let l2_bytes = (gpu.info.l2_bytes / 4) / 16 * 16;
    let l2_passes = L2_PASSES.pick(quick);
    let l2_rate =
        measure_l2_read(gpu, &l2_table, l2_bytes, l2_passes, warm, seed + 9)?.rate();
    let measured = ceiling::measure_copy(gpu, &copy, copy_warm_bytes, warm, seed + 1)?;
    let copy_warm = measured.best_stats().0.rate(2.0 * copy_warm_bytes as f64);
    let ceilings_warm = Ceilings::of(&measured, L2::Warm);
    bar.inc(1);

    bar.set_message("signal example");
    let signal = measure_signal(gpu, &kernels, signal_size, cold, seed + 2)?;
    bar.inc(1);

    let walk_sizes = WalkSizes {
        n: walk_threads,
        steps: walk_steps,
        distincts: &distincts,
        plan: warm,
        seed: seed + 3,
    };
    bar.set_message("divergent walks");
    let walks = walk_sizes.walks(gpu, &kernels)?;
    bar.inc(1);
    bar.set_message("constant-memory walks, three spacings");
    let spaced_walks = walk_sizes.spaced_walks(gpu, &kernels)?;
    bar.inc(1);

    bar.set_message("stencils");
    let stencil_cold = measure_stencils(gpu, &kernels, stencil_cold_n, cold, seed + 4)?;
    bar.inc(1);
    let stencil_warm = measure_stencils(gpu, &kernels, stencil_warm_n, warm, seed + 5)?;
    bar.inc(1);

    bar.set_message("histograms");
    let histograms = measure_histograms(gpu, &kernels, histogram_n, cold, seed + 6)?;
    bar.inc(1);

    let mut chases = Vec::new();
    for space in ChaseSpace::ALL {
        for footprint in chase_footprints(space, quick) {
            bar.set_message(format!("chase, {}, {footprint} bytes", space.label()));
            chases.push(measure_chase(
                gpu,
                &kernels,
                space,
                footprint,
                chase_steps,
                chase_plan,
                seed + 7 + footprint as u64,
            )?);
            bar.inc(1);
        }
    }

    bar.set_message("on-chip bandwidth");
    let onchip = measure_onchip(gpu, &kernels, onchip_passes, warm)?;
    bar.inc(1);
    bar.finish_and_clear();

    let sass = match Tools::find() {
        Some(tools) => {
            let sm = gpu.info.arch().replace("compute_", "sm_");
            let listing = tools.disassemble(kernels.ptx(KERNEL_FILE), &sm)?;
            Some((format!("{} for {sm}", tools.version()?), loop_census(&listing)?))
        }
        None => {
            eprintln!(
                "note: ptxas or nvdisasm not found (set CMBOOK_PTXAS and CMBOOK_NVDISASM): \
                 the SASS table of the signal and walk kernels is not written"
            );
            None
        }
    };

    Ok(Results {
        map: space_rows(&gpu.info),
        copy_cold: (copy_cold_bytes, copy_cold),
        copy_warm: (copy_warm_bytes, copy_warm),
        read_cold,
        ceilings_cold,
        ceilings_warm,
        l2_read: (l2_bytes, l2_passes, l2_rate),
        signal_size,
        signal,
        walk_threads,
        walk_steps,
        walks,
        spaced_walks,
        sass,
        stencil_cold_n,
        stencil_cold,
        stencil_warm_n,
        stencil_warm,
        histogram_n,
        histograms,
        chases,
        onchip,
    })
}
