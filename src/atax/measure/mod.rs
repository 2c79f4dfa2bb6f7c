//! Verify, then time: every kernel variant and every host strategy computes y for fresh random
//! inputs (outputs poisoned first), is compared with the CPU reference, and only then timed;
//! first at sizes that are multiples of nothing, then at the PolyBench datasets and one large
//! square float matrix, next to the copy and transfer ceilings measured in the same run.
//!
//! * [`kernels`]: the kernel variants, A already on the device;
//! * [`end_to_end`]: the host strategies, with the transfers;
//! * [`occupancy`]: kernel 2 alone, with few and with many warps per column;
//! * [`host_costs`]: the host buffer of A (pageable, pinned, registered) and a context;
//! * [`shapes`]: the fused pass against cuBLAS at large tall, wide and odd float shapes, and
//!   at the odd ones with pitched rows.

pub mod end_to_end;
pub mod host_costs;
pub mod kernels;
pub mod occupancy;
pub mod shapes;

use crate::harness::ceiling::{self, Ceilings, CopyKernel, Direction, HostMemory};
use crate::harness::timing::Plan;
use crate::harness::{Gpu, Run, Stats, L2};

pub use super::args::Settings;
use super::datasets::{Dataset, LARGE_SQUARE, ODD_SIZES, POLYBENCH};
use super::device::Kernels;
use super::element::Element;
pub use end_to_end::{measure_end_to_end, EndToEndResult, Strategy};
pub use host_costs::{
    host_reps, measure_context_creation, measure_host_costs, HostCosts,
};
pub use kernels::{measure_kernels, HostProblem, KernelResult, KernelVariant};
pub use occupancy::{measure_y_alone, Launch, YAloneKernel, YAloneResult};
pub use shapes::{
    measure_pitched, measure_shapes, LARGE_SHAPES, PITCHED_SHAPES,
    QUICK_PITCHED_SHAPES, QUICK_SHAPES, ROW_ALIGN_ELEMENTS, SHAPE_VARIANTS,
};

/// Row chunks (and streams) of the streamed strategies, as in the slides.
pub const STREAMS: usize = 4;

/// What one run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Everything: every table and figure of the chapter.
    All,
    /// The copy ceiling and the odd square shapes as allocated and pitched (`atax-pitched`).
    Pitched,
}

/// The plans every measurement runs under.
#[derive(Debug, Clone, Copy)]
pub struct Plans {
    /// The chapter's number: median of many, L2 warm.
    pub warm: Plan,
    /// The same, L2 flushed before each repetition.
    pub cold: Plan,
    /// The slides' method: one warm-up, five runs, their mean.
    pub slides: Plan,
}

impl Plans {
    pub fn new(reps: usize) -> Self {
        Self {
            warm: Plan::new(3, reps, L2::Warm),
            cold: Plan::new(3, reps, L2::Cold),
            slides: Plan::new(1, 5, L2::Warm),
        }
    }
}

/// A variant or strategy that could not run at a size, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub d: Dataset,
    pub elem: &'static str,
    pub what: &'static str,
    pub why: String,
}

/// Pinned and pageable host-to-device copies of A alone.
#[derive(Debug, Clone)]
pub struct Transfer {
    pub d: Dataset,
    pub elem: &'static str,
    pub bytes: u64,
    pub pinned: Stats,
    pub pageable: Stats,
}

/// Everything one run measured.
#[derive(Debug, Clone)]
pub struct Results {
    /// The device-memory ceilings of this run, L2 cold: the best copy, the read-only and
    /// the write-only stream on the same buffers. ATAX's bytes are nearly all reads, so its
    /// floors and fractions divide by the read ceiling.
    pub ceilings: Ceilings,
    pub transfers: Vec<Transfer>,
    pub kernels: Vec<KernelResult>,
    /// The fused passes and cuBLAS at the large float shapes of [`shapes`].
    pub shapes: Vec<KernelResult>,
    /// The same at the odd square shapes, as allocated and pitched.
    pub pitched: Vec<KernelResult>,
    /// What was measured: with [`Part::Pitched`], only the ceilings and `pitched`.
    pub part: Part,
    pub end_to_end: Vec<EndToEndResult>,
    /// Kernel 2 alone, launched with few and with many warps per column.
    pub y_alone: Vec<YAloneResult>,
    /// The host buffer of A at each size and precision: pageable, pinned, registered.
    pub host_costs: Vec<(Dataset, &'static str, HostCosts)>,
    /// A new CUDA context created and destroyed (host clock), or why it could not be.
    pub context: Result<Stats, String>,
    /// SMs of the GPU (for the warps per SM of each launch).
    pub sms: u32,
    pub skipped: Vec<Skipped>,
    /// Verifications at the odd sizes (kernels and strategies).
    pub odd_checks: usize,
}

/// The large square dataset of side `side`: the book's `16384²`, or another square.
pub fn large_square(side: usize) -> Dataset {
    let name = if side == LARGE_SQUARE.m { LARGE_SQUARE.name } else { "square" };
    Dataset { m: side, n: side, name }
}

/// Measures the copy ceiling, verifies everything at the odd sizes, then verifies and times
/// everything at the PolyBench datasets (double and float; the first two with `--quick`),
/// at the large square float matrix and at the large shapes, the odd ones pitched too.
/// [`Part::Pitched`]: the ceilings and the pitched comparison only.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let (reps, seed) = (run.reps(), run.seed);
    let plans = Plans::new(reps);
    // End to end at 1 GiB a repetition takes tens to hundreds of milliseconds: fewer of them.
    let large_plans = Plans::new(reps.min(8));
    let polybench = if run.quick { &POLYBENCH[..2] } else { &POLYBENCH[..] };
    let large = large_square(settings.side as usize);
    let ceiling_bytes = (settings.ceiling_mib as usize) << 20;
    let k32 = Kernels::<f32>::load(gpu)?;
    let k64 = Kernels::<f64>::load(gpu)?;
    // The parts this GPU cannot run, said once here; each is also a row of the skipped
    // table at every size it would have run.
    let sections = crate::harness::sections::plan(
        crate::atax::SECTIONS,
        &crate::harness::sections::Caps::of(&gpu.info, 0),
    );
    for skip in &sections.skipped {
        println!("{skip}");
    }
    let shapes: &[Dataset] = if run.quick { &QUICK_SHAPES } else { &LARGE_SHAPES };
    let pitched = if run.quick { &QUICK_PITCHED_SHAPES } else { &PITCHED_SHAPES };
    let all = settings.part == Part::All;
    let steps = if all { 1 + 2 * ODD_SIZES.len() + 2 * polybench.len() + 3 } else { 2 };
    let bar = run.progress(steps);

    bar.set_message(format!(
        "copy, read and write ceilings, {} MiB",
        settings.ceiling_mib
    ));
    let copy = CopyKernel::load(gpu)?;
    let cold = Plan::new(3, reps, L2::Cold);
    let ceilings = Ceilings::of(
        &ceiling::measure_copy(gpu, &copy, ceiling_bytes, cold, seed)?,
        L2::Cold,
    );
    bar.inc(1);
    let context = if all {
        bar.set_message("a new CUDA context");
        measure_context_creation(gpu, reps.clamp(1, 5))
            .map_err(|e| format!("creating a second context on this GPU failed: {e:#}"))
    } else {
        Err("not measured (--part pitched)".to_string())
    };

    let mut results = Results {
        ceilings,
        transfers: Vec::new(),
        kernels: Vec::new(),
        shapes: Vec::new(),
        pitched: Vec::new(),
        part: settings.part,
        end_to_end: Vec::new(),
        y_alone: Vec::new(),
        host_costs: Vec::new(),
        context,
        sms: gpu.info.sms as u32,
        skipped: Vec::new(),
        odd_checks: 0,
    };

    if !all {
        bar.set_message("fused and cuBLAS at odd sides, as allocated and pitched");
        let (timed, skipped) =
            measure_pitched(gpu, &k32, pitched, large_plans, seed + 600)?;
        results.pitched = timed;
        results.skipped.extend(skipped);
        bar.finish_and_clear();
        return Ok(results);
    }

    // Correctness at sizes that are multiples of nothing, before any timing.
    for (i, d) in ODD_SIZES.iter().enumerate() {
        bar.set_message(format!("verifying at {}", d.label()));
        results.odd_checks += verify_only::<f32>(gpu, &k32, *d, seed + i as u64)?;
        bar.inc(1);
        results.odd_checks += verify_only::<f64>(gpu, &k64, *d, seed + 100 + i as u64)?;
        bar.inc(1);
    }

    for (i, d) in polybench.iter().enumerate() {
        bar.set_message(format!("{} double", d.label()));
        let at = seed + 200 + i as u64;
        measure_dataset::<f64>(gpu, &k64, *d, plans, at, &mut results)?;
        bar.inc(1);
        bar.set_message(format!("{} float", d.label()));
        let at = seed + 300 + i as u64;
        measure_dataset::<f32>(gpu, &k32, *d, plans, at, &mut results)?;
        bar.inc(1);
    }
    bar.set_message(format!("{} float", large.label()));
    measure_dataset::<f32>(gpu, &k32, large, large_plans, seed + 400, &mut results)?;
    bar.inc(1);
    bar.set_message("fused and cuBLAS at tall, wide and odd shapes");
    let (timed, skipped) = measure_shapes(gpu, &k32, shapes, large_plans, seed + 500)?;
    results.shapes = timed;
    results.skipped.extend(skipped);
    bar.inc(1);
    bar.set_message("fused and cuBLAS at odd sides, as allocated and pitched");
    let (timed, skipped) =
        measure_pitched(gpu, &k32, pitched, large_plans, seed + 600)?;
    results.pitched = timed;
    results.skipped.extend(skipped);
    bar.inc(1);
    bar.finish_and_clear();
    Ok(results)
}

/// Verifies every kernel variant and host strategy at `d`; returns how many checks passed.
pub fn verify_only<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    d: Dataset,
    seed: u64,
) -> anyhow::Result<usize> {
    let p = HostProblem::<T>::new(d, seed);
    let (kernels, _) = measure_kernels(gpu, k, &p, None)?;
    let (e2e, _) = measure_end_to_end(gpu, k, &p, None)?;
    let y_alone = measure_y_alone(gpu, k, &p, None)?;
    Ok(kernels.len() + e2e.len() + y_alone.len())
}

/// Verifies and times everything at `d`, and the copies of A alone.
pub fn measure_dataset<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    d: Dataset,
    plans: Plans,
    seed: u64,
    results: &mut Results,
) -> anyhow::Result<()> {
    let p = HostProblem::<T>::new(d, seed);
    let (kernels, skipped) = measure_kernels(gpu, k, &p, Some(plans))?;
    results.kernels.extend(kernels);
    results.skipped.extend(skipped);
    let (e2e, skipped) = measure_end_to_end(gpu, k, &p, Some(plans))?;
    results.end_to_end.extend(e2e);
    results.skipped.extend(skipped);
    let bytes = d.matrix_bytes(T::BYTES);
    let (pinned, pageable) = a_transfer_ms(gpu, bytes as usize, plans.warm, seed + 7)?;
    results.transfers.push(Transfer { d, elem: T::C_NAME, bytes, pinned, pageable });
    results.y_alone.extend(measure_y_alone(gpu, k, &p, Some(plans))?);
    let reps = host_reps(bytes as usize, plans.warm.reps);
    let costs = measure_host_costs(gpu, bytes as usize, reps)?;
    results.host_costs.push((d, T::C_NAME, costs));
    Ok(())
}

/// Host-to-device copies of A's size from pinned and from pageable memory, measured with the
/// harness's transfer ceiling.
pub fn a_transfer_ms(
    gpu: &Gpu,
    bytes: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<(Stats, Stats)> {
    let h2d = |host, seed| {
        let bytes = bytes.max(1);
        ceiling::measure_transfer(gpu, bytes, Direction::HostToDevice, host, plan, seed)
    };
    Ok((h2d(HostMemory::Pinned, seed)?, h2d(HostMemory::Pageable, seed + 1)?))
}
