//! Tiling for data larger than the device holds: the lecture's "additional level of
//! tiling, between grids".
//!
//! `C = A B` with `A` (M x K) and `C` (M x N) kept in pinned host memory and only `B` and a
//! few row panels on the device, under a byte budget that stands for a device too small for
//! the problem (the budget is enforced by what is allocated, not by the hardware). Each panel
//! of `A` is copied in, multiplied by the chapter's best kernel (step 6) and its panel of `C`
//! copied out. With one stream the three happen in turn; with two or three streams, panel
//! `p` uses stream `p mod S` and its own buffers, so the copies of one panel run while
//! another is multiplied (the H100 copies in each direction with its own engine).

use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};

use super::device::Kernels;
use super::model::{self, Step};
use super::reference::reference_rows;
use crate::harness::blas::sample_rows;
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Mismatch, Report};
use crate::harness::{inputs, Gpu, Stats, UsageError};

/// The product that is timed, (M, N, K): `A` and `C` are 0.8 GB each in the full run.
pub fn size(quick: bool) -> (usize, usize, usize) {
    if quick {
        (3001, 260, 132)
    } else {
        (100_003, 2048, 2048)
    }
}

/// A size checked before the timed one (not timed): no dimension a multiple of a tile or of
/// 4 (so the kernel's scalar loads run), with a budget of panels of 128 rows.
pub fn odd_size(quick: bool) -> (usize, usize, usize) {
    if quick {
        (301, 263, 131)
    } else {
        (1000, 1003, 517)
    }
}

/// The most streams (and panel buffers) a variant uses: the budget is divided by it.
pub const MAX_STREAMS: usize = 3;

/// Rows of a panel are a multiple of the kernel's block tile.
const PANEL_ALIGN: usize = 128;

/// What is run, panel by panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Copy in, multiply, copy out on `streams` streams (1: strictly in turn).
    Pipeline { streams: usize },
    /// The panels' kernels alone, the operands already on the device.
    KernelsOnly,
    /// The copies of every panel of `A` to the device alone.
    CopiesInOnly,
    /// The copies of every panel of `C` to the host alone.
    CopiesOutOnly,
}

impl Variant {
    pub const ALL: [Variant; 6] = [
        Variant::Pipeline { streams: 1 },
        Variant::Pipeline { streams: 2 },
        Variant::Pipeline { streams: 3 },
        Variant::KernelsOnly,
        Variant::CopiesInOnly,
        Variant::CopiesOutOnly,
    ];

    pub fn label(self) -> String {
        match self {
            Variant::Pipeline { streams: 1 } => {
                "1 stream: copy in, multiply, copy out in turn".into()
            }
            Variant::Pipeline { streams } => format!("{streams} streams, overlapped"),
            Variant::KernelsOnly => "part: the multiplies alone".into(),
            Variant::CopiesInOnly => "part: copies of A in alone".into(),
            Variant::CopiesOutOnly => "part: copies of C out alone".into(),
        }
    }

    pub fn streams(self) -> usize {
        match self {
            Variant::Pipeline { streams } => streams,
            _ => 1,
        }
    }
}

/// The problem on the host (pinned) and its panels on the device.
pub struct OutOfCore {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub budget_bytes: usize,
    /// Rows of `A` and `C` per panel.
    pub panel_rows: usize,
    /// `A` as generated (for the CPU reference) and `B`.
    pub a_host: Vec<f32>,
    pub b_host: Vec<f32>,
    pub a_pinned: PinnedHostSlice<f32>,
    pub c_pinned: PinnedHostSlice<f32>,
    pub b: CudaSlice<f32>,
    /// One set of panel buffers per stream: (A panel, C panel).
    pub panels: Vec<(CudaSlice<f32>, CudaSlice<f32>)>,
    pub streams: Vec<Arc<CudaStream>>,
}

impl OutOfCore {
    /// Random operands from `seed`, and panels as tall as [`MAX_STREAMS`] sets of buffers
    /// and `B` allow within `budget_bytes`.
    pub fn new(
        gpu: &Gpu,
        (m, n, k): (usize, usize, usize),
        budget_bytes: usize,
        seed: u64,
    ) -> anyhow::Result<Self> {
        let dims_ok = [m, n, k].iter().all(|&d| (1..=i32::MAX as usize).contains(&d));
        let b_bytes = 4 * k * n;
        let per_row = 4 * (k + n) * MAX_STREAMS;
        let rows = budget_bytes.saturating_sub(b_bytes) / per_row;
        let panel_rows =
            (rows / PANEL_ALIGN * PANEL_ALIGN).min(m.next_multiple_of(PANEL_ALIGN));
        if !dims_ok || panel_rows == 0 {
            return Err(UsageError(format!(
                "a budget of {:.1} MiB does not hold B ({:.1} MiB) and {MAX_STREAMS} panels \
                 of {PANEL_ALIGN} rows for a {m} x {n} x {k} multiply",
                budget_bytes as f64 / (1 << 20) as f64,
                b_bytes as f64 / (1 << 20) as f64
            ))
            .into());
        }
        gpu.ensure_fits(budget_bytes, "the out-of-core multiply's budget")?;
        let a_host = inputs::random_f32(m * k, seed);
        let b_host = inputs::random_f32(k * n, seed + 1);
        // SAFETY: A is written right here; C is written by every run before it is read.
        let mut a_pinned = unsafe { gpu.ctx.alloc_pinned::<f32>(m * k)? };
        a_pinned.as_mut_slice()?.copy_from_slice(&a_host);
        let c_pinned = unsafe { gpu.ctx.alloc_pinned::<f32>(m * n)? };
        let b = gpu.stream.clone_htod(&b_host)?;
        let mut panels = Vec::new();
        for _ in 0..MAX_STREAMS {
            panels.push((
                gpu.stream.alloc_zeros::<f32>(panel_rows * k)?,
                gpu.stream.alloc_zeros::<f32>(panel_rows * n)?,
            ));
        }
        let streams =
            (0..MAX_STREAMS).map(|_| gpu.ctx.new_stream()).collect::<Result<_, _>>()?;
        gpu.stream.synchronize()?;
        Ok(Self {
            m,
            n,
            k,
            budget_bytes,
            panel_rows,
            a_host,
            b_host,
            a_pinned,
            c_pinned,
            b,
            panels,
            streams,
        })
    }

    pub fn panels(&self) -> usize {
        self.m.div_ceil(self.panel_rows)
    }

    /// Device bytes `variant` uses: `B` and one set of panel buffers per stream.
    pub fn device_bytes(&self, variant: Variant) -> usize {
        4 * (self.k * self.n + variant.streams() * self.panel_rows * (self.k + self.n))
    }

    pub fn size(&self) -> String {
        format!("{} x {} x {}", self.m, self.n, self.k)
    }
}

// ANCHOR: pipeline
/// Enqueues `variant` on the worker streams, forked from and joined back to `s`
/// (so events on `s` time all of it). Panel `p` runs on stream `p mod S` with that
/// stream's buffers: a stream's own order keeps a buffer from being refilled before
/// its panel of C has left.
pub fn enqueue(
    ooc: &mut OutOfCore,
    kernels: &Kernels,
    s: &Arc<CudaStream>,
    variant: Variant,
) -> anyhow::Result<()> {
    let (n, k, rows) = (ooc.n, ooc.k, ooc.panel_rows);
    let (streams, panels) = (variant.streams(), ooc.panels());
    let fork = s.record_event(None)?;
    let a_host = ooc.a_pinned.as_slice()?;
    let c_host = ooc.c_pinned.as_mut_slice()?;
    for p in 0..panels {
        let (r0, r1) = (p * rows, ((p + 1) * rows).min(ooc.m));
        let ws = &ooc.streams[p % streams];
        let (a_panel, c_panel) = &mut ooc.panels[p % streams];
        if p < streams {
            ws.wait(&fork)?; // after whatever s did before
        }
        if variant != Variant::KernelsOnly && variant != Variant::CopiesOutOnly {
            let mut dst = a_panel.slice_mut(..(r1 - r0) * k);
            ws.memcpy_htod(&a_host[r0 * k..r1 * k], &mut dst)?;
        }
        if matches!(variant, Variant::Pipeline { .. } | Variant::KernelsOnly) {
            launch_panel(kernels, ws, a_panel, &ooc.b, c_panel, (r1 - r0, n, k))?;
        }
        if variant != Variant::KernelsOnly && variant != Variant::CopiesInOnly {
            let src = c_panel.slice(..(r1 - r0) * n);
            ws.memcpy_dtoh(&src, &mut c_host[r0 * n..r1 * n])?;
        }
    }
    for ws in &ooc.streams[..streams] {
        s.wait(&ws.record_event(None)?)?; // s goes on once every panel is back
    }
    Ok(())
}
// ANCHOR_END: pipeline

/// One panel: `C_panel = A_panel B` by step 6 (float4 loads where K and N allow).
pub fn launch_panel(
    kernels: &Kernels,
    s: &Arc<CudaStream>,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
    (rows, n, k): (usize, usize, usize),
) -> anyhow::Result<()> {
    let step = Step::QuadDoubleBuffer;
    let (bx, by) = step.block();
    let (gx, gy) = step.grid(rows, n);
    let cfg = LaunchConfig {
        grid_dim: (gx, gy, 1),
        block_dim: (bx, by, 1),
        shared_mem_bytes: 0,
    };
    let (m32, n32, k32) = (rows as i32, n as i32, k as i32);
    let vec = i32::from(k.is_multiple_of(4) && n.is_multiple_of(4));
    let mut builder = s.launch_builder(kernels.function(step)?);
    builder.arg(a).arg(b).arg(c).arg(&m32).arg(&n32).arg(&k32).arg(&vec);
    // SAFETY: the arguments match matmul_quad_db; the panel buffers hold `rows` rows of
    // A and C, and the kernel bound-checks every index.
    unsafe { builder.launch(cfg)? };
    Ok(())
}

/// One variant's measurement.
#[derive(Debug, Clone)]
pub struct VariantResult {
    pub variant: Variant,
    pub device_bytes: usize,
    pub stats: Stats,
}

/// One check of the whole pipeline against the CPU.
#[derive(Debug, Clone)]
pub struct PipelineCheck {
    pub size: String,
    pub streams: usize,
    pub panel_rows: usize,
    pub report: Report,
}

/// Everything the out-of-core experiment measured.
#[derive(Debug, Clone)]
pub struct OutOfCoreResults {
    pub size: (usize, usize, usize),
    pub budget_bytes: usize,
    pub panel_rows: usize,
    pub panels: usize,
    /// Bytes of A, B and C together.
    pub data_bytes: usize,
    pub variants: Vec<VariantResult>,
    pub checks: Vec<PipelineCheck>,
}

/// C from the host (after a run) against the CPU: every element finite, the reference's
/// rows (all rows when the product is small) within the chapter's tolerance.
fn check(ooc: &OutOfCore, streams: usize, seed: u64) -> anyhow::Result<PipelineCheck> {
    let (m, n, k) = (ooc.m, ooc.n, ooc.k);
    let got = ooc.c_pinned.as_slice()?;
    let name = format!("out-of-core, {streams} stream(s)");
    if let Some(i) = got.iter().position(|x| !x.is_finite()) {
        return Err(Mismatch {
            kernel: name,
            size: ooc.size(),
            index: i,
            got: format!("{:e}", got[i]),
            want: "a finite value".into(),
            wrong: got.iter().filter(|x| !x.is_finite()).count(),
            total: got.len(),
        }
        .into());
    }
    let all = (m as u128 * n as u128 * k as u128) <= 1 << 31;
    let rows = if all { (0..m).collect() } else { sample_rows(m, seed) };
    let want = reference_rows(&ooc.a_host, &ooc.b_host, (n, k), &rows);
    let picked: Vec<f32> =
        rows.iter().flat_map(|&r| got[r * n..r * n + n].iter().copied()).collect();
    let report =
        verify::check_close(&name, &ooc.size(), &picked, &want, model::tolerance(k))?;
    Ok(PipelineCheck { size: ooc.size(), streams, panel_rows: ooc.panel_rows, report })
}

/// The smallest budget that holds `B` and [`MAX_STREAMS`] panels of 128 rows.
pub fn smallest_budget((_, n, k): (usize, usize, usize)) -> usize {
    4 * (k * n + MAX_STREAMS * PANEL_ALIGN * (k + n))
}

/// Verifies every pipeline at `odd` (in panels of 128 rows), then verifies each pipeline at
/// `size` under `budget_bytes` and times all six variants under `plan`.
pub fn measure(
    gpu: &Gpu,
    kernels: &Kernels,
    (odd, size): ((usize, usize, usize), (usize, usize, usize)),
    budget_bytes: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<OutOfCoreResults> {
    let mut checks = Vec::new();
    let pipelines = &Variant::ALL[..3];
    let mut odd = OutOfCore::new(gpu, odd, smallest_budget(odd), seed + 200)?;
    for &v in pipelines {
        checks.push(verify_variant(gpu, kernels, &mut odd, v, &[])?.0);
    }
    drop(odd);
    let mut ooc = OutOfCore::new(gpu, size, budget_bytes, seed + 300)?;
    let mut variants = Vec::new();
    for v in Variant::ALL {
        let stats = if pipelines.contains(&v) {
            let (check, mut times) =
                verify_variant(gpu, kernels, &mut ooc, v, &[plan])?;
            checks.push(check);
            times.remove(0)
        } else {
            // The parts compute nothing checkable on their own; the pipelines that
            // contain them were verified just above.
            gpu.time(plan, |s| enqueue(&mut ooc, kernels, s, v))?
        };
        variants.push(VariantResult {
            variant: v,
            device_bytes: ooc.device_bytes(v),
            stats,
        });
    }
    let (m, n, k) = size;
    Ok(OutOfCoreResults {
        size,
        budget_bytes,
        panel_rows: ooc.panel_rows,
        panels: ooc.panels(),
        data_bytes: 4 * (m * k + k * n + m * n),
        variants,
        checks,
    })
}

/// [`Gpu::verify_then_time`] for one pipeline: C poisoned on the host and in every panel
/// buffer, one run, the check, then the timings.
fn verify_variant(
    gpu: &Gpu,
    kernels: &Kernels,
    ooc: &mut OutOfCore,
    variant: Variant,
    plans: &[Plan],
) -> anyhow::Result<(PipelineCheck, Vec<Stats>)> {
    let streams = variant.streams();
    let seed = ooc.m as u64;
    let verified = gpu.verify_then_time(
        ooc,
        |gpu, o| {
            for (_, c) in &mut o.panels {
                gpu.poison(c)?;
            }
            gpu.stream.synchronize()?;
            o.c_pinned.as_mut_slice()?.fill(f32::NAN);
            Ok(())
        },
        |s, o| enqueue(o, kernels, s, variant),
        |_, o| check(o, streams, seed),
        plans,
    )?;
    Ok((verified.check, verified.times))
}
