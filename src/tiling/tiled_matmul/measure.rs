//! What `tiled_matmul` measures: every step verified at sizes that leave a partial tile in
//! every dimension, then verified and timed at `side` x `side` x `side`, L2 cold; then the
//! out-of-core multiply (panels staged from pinned host memory under a device budget, with
//! one to three streams) and the generic-addressing check.

use crate::harness::timing::Plan;
use crate::harness::verify::Report;
use crate::harness::{FullQuick, Run, Stats, L2};
use crate::tiling::counted;
use crate::tiling::device::{self, Kernels, Occupancy, Operands};
use crate::tiling::generic::{self, GenericCheck};
use crate::tiling::model::{self, Step};
use crate::tiling::out_of_core::{self, OutOfCoreResults};
use crate::tiling::reference::Reference;

/// Sizes (M, N, K) that are not multiples of any tile, on which every step is verified (not
/// timed); `--quick` leaves out the last.
pub const ODD_SIZES: [(usize, usize, usize); 4] =
    [(1, 1, 1), (7, 5, 3), (127, 129, 131), (1000, 1003, 517)];

/// Elements of the generic-addressing check (not a multiple of its 256-element chunks).
pub const GENERIC_N: FullQuick<usize> = FullQuick::new(100_003, 1000);

/// The sizes of one run.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Side of the timed multiply.
    pub side: usize,
    /// The out-of-core multiply, (M, N, K), and its device budget in bytes.
    pub out_of_core: (usize, usize, usize),
    pub budget_bytes: usize,
    /// Elements of the generic-addressing check.
    pub generic_n: usize,
}

impl Settings {
    /// The book's sizes (or `--quick`'s), with the timed side and the budget as given.
    pub fn new(quick: bool, side: usize, budget_mib: f64) -> Self {
        Self {
            side,
            out_of_core: out_of_core::size(quick),
            budget_bytes: (budget_mib * (1 << 20) as f64) as usize,
            generic_n: GENERIC_N.pick(quick),
        }
    }
}

/// One step's measurement at the timed size.
#[derive(Debug, Clone)]
pub struct StepResult {
    pub step: Step,
    pub occupancy: Option<Occupancy>,
    pub stats: Stats,
}

/// One verification: which step, at which size, how close.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VerifiedRow {
    pub step: &'static str,
    pub size: String,
    pub elements_compared: usize,
    pub worst_abs_err: String,
    pub tolerance_abs: String,
}

impl VerifiedRow {
    fn new(step: Step, ops: &Operands, check: &Report) -> Self {
        Self {
            step: step.label(),
            size: ops.size(),
            elements_compared: check.checked,
            worst_abs_err: format!("{:.2e}", check.max_abs_err),
            tolerance_abs: format!("{:.2e}", model::tolerance(ops.k).abs),
        }
    }
}

/// Everything `tiled_matmul` measured.
pub struct Results {
    pub size: (usize, usize, usize),
    pub steps: Vec<StepResult>,
    /// Every check of the run, the odd sizes first.
    pub verified: Vec<VerifiedRow>,
    /// The out-of-core multiply (absent from results made by hand, e.g. in tests).
    pub out_of_core: Option<OutOfCoreResults>,
    /// The generic-addressing check (likewise).
    pub generic: Option<GenericCheck>,
}

/// Verifies every step at the odd sizes, then verifies and times each at the timed size.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let (side, seed) = (settings.side, run.seed);
    let plan = Plan::new(if run.quick { 1 } else { 2 }, run.reps(), L2::Cold);
    let kernels = Kernels::load(gpu)?;
    let odd = if run.quick { &ODD_SIZES[..3] } else { &ODD_SIZES[..] };
    let bar = run.progress(odd.len() + Step::ALL.len());

    // Verifies one step on `ops`, then times it under `plans`; every check is recorded.
    let mut verified = Vec::new();
    let mut verify =
        |step, ops: &mut Operands, reference: &Reference, plans: &[Plan]| {
            let r =
                device::verify_then_time(gpu, &kernels, step, ops, reference, plans)?;
            verified.push(VerifiedRow::new(step, ops, &r.check));
            anyhow::Ok(r)
        };
    for (i, &dims) in odd.iter().enumerate() {
        let mut ops = Operands::new(gpu, dims, seed + 10 * i as u64)?;
        bar.set_message(format!("verifying every step at {}", ops.size()));
        let reference = Reference::for_operands(&ops, seed);
        for step in Step::ALL {
            verify(step, &mut ops, &reference, &[])?;
        }
        bar.inc(1);
    }

    let mut ops = Operands::new(gpu, (side, side, side), seed + 100)?;
    let reference = Reference::for_operands(&ops, seed + 101);
    let mut steps = Vec::new();
    for step in Step::ALL {
        bar.set_message(format!("{} at {}", step.label(), ops.size()));
        gpu.count_next(counted::step_case(step, (side, side, side)));
        let r = verify(step, &mut ops, &reference, &[plan])?;
        steps.push(StepResult {
            step,
            occupancy: device::occupancy(&kernels, step)?,
            stats: r.time().clone(),
        });
        bar.inc(1);
    }
    bar.set_message("out of core: panels from the host under a device budget");
    let ooc = out_of_core::measure(
        gpu,
        &kernels,
        (out_of_core::odd_size(run.quick), settings.out_of_core),
        settings.budget_bytes,
        Plan::new(1, run.reps(), L2::Warm),
        seed,
    )?;
    bar.set_message("generic addressing");
    let generic = generic::check(gpu, &kernels, settings.generic_n, seed + 400)?;
    bar.finish_and_clear();
    Ok(Results {
        size: (side, side, side),
        steps,
        verified,
        out_of_core: Some(ooc),
        generic: Some(generic),
    })
}
