//! Verify, then time: every kernel of `kernels/coalescing.cu` is checked against its CPU
//! reference (output poisoned first, exact comparison) before any repetition is timed.
//!
//! | file | what it measures |
//! |------|------------------|
//! | [`kernels`] | nothing: the chapter's kernel table, and what a measurement returns |
//! | [`affine`] | strided and misaligned loads (`dst[i] = src[offset + i stride]`) |
//! | [`granularity`] | the float stride sweep under each L2 fetch granularity (32, 64, 128 B) |
//! | [`drift`] | the particle drift on an array of structs and on a struct of arrays |
//! | [`transpose`] | the transposes, verified at odd sizes and timed at one |
//! | [`readonly`] | the read-only data path: a copy and gathers |
//!
//! [`measure()`] runs them all at the sizes of one run, next to the copy ceiling measured in
//! the same run, and returns the [`Results`] the report draws.

pub mod affine;
pub mod drift;
pub mod granularity;
pub mod kernels;
pub mod readonly;
pub mod transpose;

use std::collections::HashMap;

pub use affine::{launch_affine_read, measure_affine_read, AffineSweep, Element};
pub use drift::DRIFT_USEFUL_BYTES;
pub use drift::{launch_drift_aos, launch_drift_soa, measure_drifts, DeviceSoa};
pub use granularity::{
    fetch_model_fraction, measure_granularities, GranularityRun, GranularitySweep,
    GRANULARITIES,
};
pub use kernels::{
    CoalescingKernel, GridStrideKernel, Kernels, Measurement, StreamKernel, BLOCK,
};
pub use readonly::{launch_readonly, measure_readonly};
pub use transpose::{
    launch_transpose, measure_tma_transpose, measure_transposes, Layout,
    MAX_TRANSPOSE_SIDE, PITCH_FLOATS,
};

use indicatif::ProgressBar;

pub use super::args::Settings;
use super::patterns::{self, type_name, Pattern};
use super::ptx::{self, Census, SassCensus};
use super::readonly::ReadOnlyKernel;
use super::reference;
use super::transpose::TransposeKernel;
use crate::harness::ceiling::{self, Ceilings, CopyKernel};
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::sass::Tools;
use crate::harness::sections::{self, Caps, Skip};
use crate::harness::stats::Rate;
use crate::harness::timing::Plan;
use crate::harness::tma::TmaKernel;
use crate::harness::{FullQuick, Gpu, Run, L2};

/// Untimed repetitions before every timed one.
const WARMUP: FullQuick<usize> = FullQuick::new(3, 1);

const MIB: usize = 1 << 20;

/// Sides that are not multiples of 32 (one below and one above the timed power of two,
/// and one near 6000), at which the fastest transposes are timed with packed and with
/// pitched rows.
pub fn odd_sides(quick: bool) -> Vec<usize> {
    if quick {
        vec![511, 513]
    } else {
        vec![6001, 8191, 8193]
    }
}

/// The kernels timed at [`odd_sides`]: the tile-shaped copy and the two fastest
/// transposes.
pub const SIDE_KERNELS: [TransposeKernel; 3] = [
    TransposeKernel::CopyTile32x8,
    TransposeKernel::TilePadded32x8,
    TransposeKernel::Tile64Padded32x8,
];

/// The transposes at one side: the best copy of the same bytes, and each kernel of
/// [`SIDE_KERNELS`] with packed and with pitched rows.
#[derive(Debug, Clone)]
pub struct SideResult {
    pub side: usize,
    /// The faster of the copy kernel and `cuMemcpyDtoD` on n² floats, and which it was.
    pub copy: Rate,
    pub copy_by: &'static str,
    /// The copy, read-only and write-only ceilings on the same bytes (medians).
    pub ceilings: Ceilings,
    pub runs: Vec<(TransposeKernel, Layout, Measurement)>,
}

/// The TMA transpose of the Hopper chapter at one side and layout: its measurement, or
/// why the TMA cannot address the rows.
#[derive(Debug, Clone)]
pub struct TmaRun {
    pub side: usize,
    pub layout: Layout,
    pub time: Result<Measurement, String>,
}

/// Sizes that are not multiples of a tile, on which every transpose is verified (not timed).
pub const ODD_TRANSPOSE_SIZES: [(usize, usize); 5] =
    [(1, 7), (7, 1), (33, 65), (1000, 1003), (31, 1025)];

/// Everything one run of the example measured, and at which sizes.
#[derive(Debug, Clone)]
pub struct Results {
    /// Bytes of the copy that sets the ceiling, and its bandwidth (read + write), GB/s.
    pub ceiling_bytes: usize,
    pub ceiling: Rate,
    /// The same copy's medians beside the read-only and write-only ceilings on its buffers.
    pub ceilings: Ceilings,
    pub strides: Vec<u64>,
    pub offsets: Vec<u64>,
    /// Source bytes of the stride sweep (per element type) and of the offset sweep.
    pub sweep_bytes: usize,
    pub offset_bytes: usize,
    pub particles: usize,
    /// The stride sweep: affine reads with offset 0, floats and doubles.
    pub strided: HashMap<Pattern, Measurement>,
    /// The offset sweep: affine reads of floats with stride 1.
    pub misaligned: HashMap<Pattern, Measurement>,
    pub drift_aos: Measurement,
    pub drift_soa: Measurement,
    /// Side of the square matrix the transposes were timed on, and the copy kernel on the same
    /// bytes.
    pub transpose_n: usize,
    pub transpose_copy: Rate,
    pub transpose_copy_by: &'static str,
    /// The copy, read-only and write-only ceilings on the transposes' bytes (medians).
    pub transpose_ceilings: Ceilings,
    pub transposes: Vec<(TransposeKernel, Measurement)>,
    /// The fastest transposes at sides that are not multiples of 32, packed and pitched.
    pub sides: Vec<SideResult>,
    /// The TMA transpose at the timed side (packed) and at each side of `sides` (packed
    /// and pitched), each against the same best copy as the others.
    pub tma: Vec<TmaRun>,
    pub readonly_n: usize,
    pub table_len: u32,
    pub readonly: Vec<(ReadOnlyKernel, Measurement)>,
    /// The PTX census of each read-only kernel, and who compiled it ("NVRTC 13.0 for compute_90").
    pub ptx: Vec<(ReadOnlyKernel, Census)>,
    pub compiled_by: String,
    /// The same kernels in machine code, and the assembler's version; `None` when `ptxas`
    /// and `nvdisasm` were not found (see [`crate::harness::sass::Tools::find`]).
    pub sass: Option<ReadOnlySass>,
    /// The float stride sweep under each L2 fetch granularity.
    pub granularity: GranularitySweep,
    /// The sections of the chapter's plan this GPU could not run, each said once.
    pub skipped: Vec<Skip>,
}

/// Who assembled the read-only kernels ("Cuda compilation tools, ... for sm_90"), and each
/// kernel's machine code counted.
pub type ReadOnlySass = (String, Vec<(ReadOnlyKernel, SassCensus)>);

/// Strides of the sweep under each L2 fetch granularity: fewer than the main sweep, enough
/// to see where each granularity's model goes flat.
pub fn granularity_strides(quick: bool) -> Vec<u64> {
    if quick {
        vec![1, 2, 4, 8, 16, 32, 64]
    } else {
        vec![1, 2, 4, 8, 12, 16, 24, 32, 48, 64]
    }
}

/// Verifies and times everything the chapter shows, at the sizes of this run, all L2 cold.
pub fn measure(run: &Run, s: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let (quick, seed) = (run.quick, run.seed);
    let ceiling_bytes = s.ceiling_mib as usize * MIB;
    let sweep_bytes = s.sweep_mib as usize * MIB;
    let offset_bytes = s.offset_mib as usize * MIB;
    let n = s.transpose_side as usize;
    let particles = s.particles as usize;
    let readonly_n = s.readonly_n as usize;
    let plan = Plan::new(WARMUP.pick(quick), run.reps(), L2::Cold);

    let kernels = Kernels::load(gpu)?;
    let copy = CopyKernel::load(gpu)?;
    let tma_table = KernelTable::<TmaKernel>::load(gpu)?;
    let sections = sections::plan(crate::coalescing::SECTIONS, &Caps::of(&gpu.info, 0));
    for skip in &sections.skipped {
        println!("{skip}");
    }

    let strides = patterns::sweep_strides(quick);
    let offsets = patterns::sweep_offsets(quick);
    let sides = odd_sides(quick);
    let bar = run.progress(
        2 * strides.len() + offsets.len() + ODD_TRANSPOSE_SIZES.len() + sides.len() + 6,
    );

    // The ceiling every fraction below is taken of.
    bar.set_message(format!("copy ceiling, {} MiB", ceiling_bytes / MIB));
    let measured = ceiling::measure_copy(gpu, &copy, ceiling_bytes, plan, seed)?;
    let (ceiling, ceilings) = (measured.best().0, Ceilings::of(&measured, plan.l2));
    bar.inc(1);

    // Strided loads of 4- and 8-byte elements, then misaligned loads of floats.
    let stride_points: Vec<(u64, u64)> = strides.iter().map(|&s| (s, 0)).collect();
    let offset_points: Vec<(u64, u64)> = offsets.iter().map(|&k| (1, k)).collect();
    let sweep = |bytes, seed, points| Sweep {
        gpu,
        kernels: &kernels,
        plan,
        bar: &bar,
        bytes,
        seed,
        points,
    };
    let mut strided = HashMap::new();
    sweep(sweep_bytes, seed + 1, &stride_points).run::<f32>(&mut strided)?;
    sweep(sweep_bytes, seed + 2, &stride_points).run::<f64>(&mut strided)?;
    let mut misaligned = HashMap::new();
    sweep(offset_bytes, seed + 3, &offset_points).run::<f32>(&mut misaligned)?;

    // The float stride sweep under each L2 fetch granularity (the setting restored after).
    bar.set_message("stride sweep per L2 fetch granularity");
    let granularity = measure_granularities(
        gpu,
        &kernels,
        sweep_bytes,
        &granularity_strides(quick),
        plan,
        seed + 8,
    )?;
    bar.inc(1);

    // Particles in both layouts.
    bar.set_message(format!("drift of {particles} particles"));
    let (drift_aos, drift_soa) = measure_drifts(
        gpu,
        &kernels,
        &reference::random_particles(particles, seed + 4),
        plan,
    )?;
    bar.inc(1);

    // Transposes: verified at odd sizes, then verified and timed at n x n next to a copy of
    // the same bytes.
    let all_transposes = TransposeKernel::all();
    for (rows, cols) in ODD_TRANSPOSE_SIZES {
        bar.set_message(format!("transposes verified at {rows} x {cols}"));
        let seed = seed + (rows * cols) as u64;
        for layout in [Layout::Packed, Layout::Pitched(PITCH_FLOATS)] {
            let shape = (rows, cols);
            measure_transposes(
                gpu,
                &kernels,
                &all_transposes,
                shape,
                layout,
                None,
                seed,
            )?;
            // The TMA transpose where it can address the rows (pitched, or packed rows
            // of a multiple of 4 floats); refused without a launch elsewhere.
            measure_tma_transpose(gpu, &tma_table, shape, layout, None, seed)?.ok();
        }
        bar.inc(1);
    }
    bar.set_message(format!("transposes at {n} x {n}"));
    let measured = ceiling::measure_copy(gpu, &copy, n * n * 4, plan, seed + 5)?;
    let ((transpose_copy, transpose_copy_by), transpose_ceilings) =
        (measured.best(), Ceilings::of(&measured, plan.l2));
    let transposes = measure_transposes(
        gpu,
        &kernels,
        &all_transposes,
        (n, n),
        Layout::Packed,
        Some(plan),
        seed + 6,
    )?
    .into_iter()
    .map(|(k, m)| (k, m.expect("timed: a plan was given")))
    .collect();
    // The TMA transpose on a `side` × `side` matrix laid out as `layout`, verified and
    // timed under the plan of every transpose.
    let tma_run = |side: usize, layout: Layout, seed: u64| -> anyhow::Result<TmaRun> {
        let time = measure_tma_transpose(
            gpu,
            &tma_table,
            (side, side),
            layout,
            Some(plan),
            seed,
        )?
        .map(|m| m.expect("timed: a plan was given"));
        Ok(TmaRun { side, layout, time })
    };
    let mut tma = vec![tma_run(n, Layout::Packed, seed + 6)?];
    bar.inc(1);
    let mut side_results = Vec::new();
    for (i, side) in sides.into_iter().enumerate() {
        bar.set_message(format!("transposes at {side} x {side}, packed and pitched"));
        let seed = seed + 20 + i as u64;
        side_results.push(measure_side(gpu, &kernels, &copy, side, plan, seed)?);
        for layout in [Layout::Packed, Layout::Pitched(PITCH_FLOATS)] {
            tma.push(tma_run(side, layout, seed)?);
        }
        bar.inc(1);
    }

    // The read-only data path, and what the compiler made of its loads.
    bar.set_message("read-only data path");
    let readonly =
        measure_readonly(gpu, &kernels, readonly_n, s.table_len, plan, seed + 7)?;
    let mut census = Vec::new();
    for kernel in ReadOnlyKernel::all() {
        let c = ptx::census(kernels.ptx(), &kernel.function()).ok_or_else(|| {
            anyhow::anyhow!("no entry `{}` in the PTX", kernel.function())
        })?;
        census.push((kernel, c));
    }
    let sass = readonly_sass(kernels.ptx(), &gpu.info.arch())?;
    bar.inc(1);
    bar.finish_and_clear();

    Ok(Results {
        ceiling_bytes,
        ceiling,
        ceilings,
        strides,
        offsets,
        sweep_bytes,
        offset_bytes,
        particles,
        strided,
        misaligned,
        drift_aos,
        drift_soa,
        transpose_n: n,
        transpose_copy,
        transpose_copy_by,
        transpose_ceilings,
        transposes,
        sides: side_results,
        tma,
        readonly_n,
        table_len: s.table_len,
        readonly,
        ptx: census,
        compiled_by: format!(
            "NVRTC {}.{} for {}",
            gpu.info.nvrtc.0,
            gpu.info.nvrtc.1,
            gpu.info.arch()
        ),
        sass,
        granularity,
        skipped: sections.skipped,
    })
}

/// The best copy of `side`² floats, then each kernel of [`SIDE_KERNELS`] verified and timed
/// on a `side` × `side` matrix with packed rows and with rows pitched to
/// [`PITCH_FLOATS`].
pub fn measure_side(
    gpu: &Gpu,
    kernels: &Kernels,
    copy: &CopyKernel,
    side: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<SideResult> {
    let measured = ceiling::measure_copy(gpu, copy, side * side * 4, plan, seed)?;
    let ((copy_rate, copy_by), ceilings) =
        (measured.best(), Ceilings::of(&measured, plan.l2));
    let mut runs = Vec::new();
    for layout in [Layout::Packed, Layout::Pitched(PITCH_FLOATS)] {
        let shape = (side, side);
        let timed = measure_transposes(
            gpu,
            kernels,
            &SIDE_KERNELS,
            shape,
            layout,
            Some(plan),
            seed,
        )?;
        for (k, m) in timed {
            runs.push((k, layout, m.expect("timed: a plan was given")));
        }
    }
    Ok(SideResult { side, copy: copy_rate, copy_by, ceilings, runs })
}

/// The read-only kernels' machine code, counted; `None` without `ptxas` and `nvdisasm`.
fn readonly_sass(ptx: &str, arch: &str) -> anyhow::Result<Option<ReadOnlySass>> {
    let Some(tools) = Tools::find() else {
        eprintln!(
            "note: ptxas or nvdisasm not found (set CMBOOK_PTXAS and CMBOOK_NVDISASM): \
             the SASS table of the read-only kernels is not written"
        );
        return Ok(None);
    };
    let sm = arch.replace("compute_", "sm_");
    let sass = tools.disassemble(ptx, &sm)?;
    let mut counts = Vec::new();
    for kernel in ReadOnlyKernel::all() {
        let f = sass.function(&kernel.function()).ok_or_else(|| {
            anyhow::anyhow!("no function `{}` in the SASS", kernel.function())
        })?;
        counts.push((kernel, ptx::sass_census(f)));
    }
    Ok(Some((format!("{} for {sm}", tools.version()?), counts)))
}

/// One sweep of the affine read: one random source of `bytes`, measured under `plan` at
/// every `(stride, offset)` of `points`.
struct Sweep<'a> {
    gpu: &'a Gpu,
    kernels: &'a Kernels,
    plan: Plan,
    bar: &'a ProgressBar,
    bytes: usize,
    seed: u64,
    points: &'a [(u64, u64)],
}

impl Sweep<'_> {
    /// Measures the sweep for elements of `T`, recording each measurement under its pattern.
    fn run<T: Element>(
        &self,
        measured: &mut HashMap<Pattern, Measurement>,
    ) -> anyhow::Result<()> {
        let elem_bytes = std::mem::size_of::<T>() as u64;
        let len = self.bytes / elem_bytes as usize;
        let mut buffers = AffineSweep::<T>::new(self.gpu, len, self.seed)?;
        for &(stride, offset) in self.points {
            let name = type_name(elem_bytes);
            self.bar.set_message(format!("{name}, stride {stride}, offset {offset}"));
            let (stride_us, offset_us) = (stride as usize, offset as usize);
            let m = buffers.measure(
                self.gpu,
                self.kernels,
                stride_us,
                offset_us,
                self.plan,
            )?;
            measured.insert(Pattern::Affine { elem_bytes, stride, offset }, m);
            self.bar.inc(1);
        }
        Ok(())
    }
}
