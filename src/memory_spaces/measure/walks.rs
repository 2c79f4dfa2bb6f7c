//! Walks over a 32 KiB table with 1 to 32 distinct addresses per warp-wide load, the table in
//! each home of the signal vector: what a broadcast is worth, and what serialisation costs.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, UsageError};
use crate::memory_spaces::{counted, reference, BLOCK, SIGNAL_MAX};

use super::kernels::{Kernels, MemoryKernel, Timed};
use super::signal::{set_signal_const, VectorHome};

/// One point of the divergent walk: the table's home, distinct addresses per warp-wide load,
/// and the time; the amount is the lane loads (`n × steps`).
#[derive(Debug, Clone)]
pub struct WalkPoint {
    pub home: VectorHome,
    pub distinct: u32,
    pub timed: Timed,
}

/// Verifies one walk of `n` threads and `steps` steps (`launch` writing `out`, `check`
/// comparing it), then times it under `plan`; the amount is its `n × steps` lane loads.
fn verified_walk(
    gpu: &Gpu,
    out: &mut CudaSlice<f32>,
    (n, steps): (usize, u32),
    plan: Plan,
    launch: impl FnMut(&Arc<CudaStream>, &mut CudaSlice<f32>) -> anyhow::Result<()>,
    check: impl FnOnce(&[f32]) -> Result<verify::Report, verify::Mismatch>,
) -> anyhow::Result<Timed> {
    let verified = gpu.verify_then_time_output(out, launch, check, &[plan])?;
    Ok(Timed { stats: verified.time().clone(), amount: n as f64 * steps as f64 })
}

/// The launch of every walk kernel: one thread per element of `out`, in blocks of
/// [`BLOCK`].
fn walk_cfg(out: &CudaSlice<f32>) -> anyhow::Result<LaunchConfig> {
    Ok(LaunchConfig {
        grid_dim: (u32::try_from((out.len() as u64).div_ceil(BLOCK as u64))?, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

fn launch_walk(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    home: VectorHome,
    table: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    (distinct, steps): (u32, u32),
) -> anyhow::Result<()> {
    let cfg = walk_cfg(out)?;
    let (n, distinct, steps) = (out.len() as u64, distinct as i32, steps as i32);
    let f = kernels.get(MemoryKernel::Walk(home));
    let mut launch = stream.launch_builder(f);
    if home != VectorHome::Constant {
        launch.arg(table);
    }
    launch.arg(out).arg(&n).arg(&distinct).arg(&steps);
    // SAFETY: matches walk_*([const float* table,] float* out, u64 n, int distinct, int steps);
    // every table index is masked to SIGNAL_MAX - 1 and table holds SIGNAL_MAX floats.
    unsafe { launch.launch(cfg)? };
    Ok(())
}

/// What both walks are measured at: `n` threads of `steps` loads each, for every number of
/// distinct addresses per warp in `distincts`, timed under `plan`, the table drawn from
/// `seed`.
#[derive(Debug, Clone, Copy)]
pub struct WalkSizes<'a> {
    pub n: usize,
    pub steps: u32,
    pub distincts: &'a [u32],
    pub plan: Plan,
    pub seed: u64,
}

impl WalkSizes<'_> {
    /// Verifies, then times, the walks for every number of distinct addresses per warp
    /// and every home of the table.
    pub fn walks(self, gpu: &Gpu, kernels: &Kernels) -> anyhow::Result<Vec<WalkPoint>> {
        if self.n == 0
            || self.steps == 0
            || self.steps > i32::MAX as u32
            || self.distincts.iter().any(|d| !(1..=32).contains(d))
        {
            return Err(UsageError(format!(
                "the walks need threads > 0, 1 to {} steps and 1 to 32 distinct addresses",
                i32::MAX
            ))
            .into());
        }
        let WalkSizes { n, steps, distincts, plan, seed } = self;
        let table_host = inputs::random_f32(SIGNAL_MAX, seed);
        set_signal_const(gpu, kernels, &table_host)?;
        let table = gpu.stream.clone_htod(&table_host)?;
        let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
        let mut points = Vec::new();
        for &distinct in distincts {
            let want = reference::walk(&table_host, n, distinct, steps);
            for home in VectorHome::ALL {
                let size = format!("n={n} steps={steps} distinct={distinct}");
                let name = MemoryKernel::Walk(home).function();
                let timed = verified_walk(
                    gpu,
                    &mut out,
                    (n, steps),
                    plan,
                    |s, out| {
                        launch_walk(s, kernels, home, &table, out, (distinct, steps))
                    },
                    // The same additions in the same order as the reference: exact.
                    |got| verify::check_exact(&name, &size, got, &want),
                )?;
                points.push(WalkPoint { home, distinct, timed });
            }
        }
        Ok(points)
    }

    /// Verifies, then times, `walk_const_spaced` for every spacing and every number of
    /// distinct addresses: the same instructions each time, only the addresses differ.
    pub fn spaced_walks(
        self,
        gpu: &Gpu,
        kernels: &Kernels,
    ) -> anyhow::Result<Vec<SpacedPoint>> {
        if self.n == 0 || self.steps == 0 || self.steps > i32::MAX as u32 {
            return Err(
                UsageError("the walks need threads > 0 and steps > 0".into()).into()
            );
        }
        let WalkSizes { n, steps, distincts, plan, seed } = self;
        let table_host = inputs::random_f32(SIGNAL_MAX, seed);
        set_signal_const(gpu, kernels, &table_host)?;
        let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
        let name = MemoryKernel::WalkConstSpaced.function();
        let mut points = Vec::new();
        for spacing in WalkSpacing::ALL {
            for &distinct in distincts {
                let want = reference::walk_spaced(
                    &table_host,
                    n,
                    distinct,
                    steps,
                    spacing.words(),
                );
                let (g, w) = spacing.words();
                let size =
                    format!("n={n} steps={steps} distinct={distinct} spacing={g},{w}");
                if counted::SPACED_WALK_DISTINCTS.contains(&distinct) {
                    gpu.count_next(counted::spaced_walk_case(
                        spacing.label(),
                        distinct,
                    ));
                }
                let timed = verified_walk(
                    gpu,
                    &mut out,
                    (n, steps),
                    plan,
                    |s, out| {
                        launch_walk_spaced(s, kernels, out, (distinct, steps), spacing)
                    },
                    |got| verify::check_exact(&name, &size, got, &want),
                )?;
                points.push(SpacedPoint { spacing, distinct, timed });
            }
        }
        Ok(points)
    }
}

/// Where the `distinct` addresses of the constant-memory walk lie: how far apart the groups of
/// a warp start, and how far apart the warps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WalkSpacing {
    /// `walk_const`'s own: groups 129 words apart, warps 97 apart. Every group has a line of
    /// its own, and the warps of an SM together read many places of the table at once.
    Apart,
    /// Groups 1 word apart: a warp's addresses lie in one or two 128-byte lines.
    SameLine,
    /// Groups 129 words apart, every warp at the same place: all warps read the same
    /// `distinct` words, so the constant cache needs to hold only those.
    SameWords,
}

impl WalkSpacing {
    pub const ALL: [WalkSpacing; 3] =
        [WalkSpacing::Apart, WalkSpacing::SameLine, WalkSpacing::SameWords];

    /// `(group_words, warp_words)`, the parameters of `walk_const_spaced`.
    pub fn words(self) -> (u32, u32) {
        match self {
            WalkSpacing::Apart => (129, 97),
            WalkSpacing::SameLine => (1, 97),
            WalkSpacing::SameWords => (129, 0),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            WalkSpacing::Apart => "groups 129 words apart, warps 97 apart",
            WalkSpacing::SameLine => "groups 1 word apart, warps 97 apart",
            WalkSpacing::SameWords => "groups 129 words apart, warps 0 apart",
        }
    }
}

/// One point of the constant-memory walk with a given spacing.
#[derive(Debug, Clone)]
pub struct SpacedPoint {
    pub spacing: WalkSpacing,
    pub distinct: u32,
    pub timed: Timed,
}

fn launch_walk_spaced(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    out: &mut CudaSlice<f32>,
    (distinct, steps): (u32, u32),
    spacing: WalkSpacing,
) -> anyhow::Result<()> {
    let cfg = walk_cfg(out)?;
    let (n, distinct, steps) = (out.len() as u64, distinct as i32, steps as i32);
    let (group_words, warp_words) = spacing.words();
    let f = kernels.get(MemoryKernel::WalkConstSpaced);
    // SAFETY: matches walk_const_spaced(float* out, u64 n, int distinct, int steps,
    // unsigned group_words, unsigned warp_words); every index is masked to SIGNAL_MAX - 1.
    unsafe {
        stream
            .launch_builder(f)
            .arg(out)
            .arg(&n)
            .arg(&distinct)
            .arg(&steps)
            .arg(&group_words)
            .arg(&warp_words)
            .launch(cfg)?
    };
    Ok(())
}
