//! Walks over a 32 KiB table with 1 to 32 distinct addresses per warp-wide load, the table in
//! each home of the signal vector: what a broadcast is worth, and what serialisation costs.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, UsageError};
use crate::memory_spaces::{reference, BLOCK, SIGNAL_MAX};

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

fn launch_walk(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    home: VectorHome,
    table: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    (distinct, steps): (u32, u32),
) -> anyhow::Result<()> {
    let n = out.len() as u64;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(n.div_ceil(BLOCK as u64))?, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (distinct, steps) = (distinct as i32, steps as i32);
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

/// Verifies, then times, the walks of `n` threads, `steps` loads each, for every number of
/// distinct addresses per warp in `distincts` and every home of the table.
pub fn measure_walks(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    steps: u32,
    distincts: &[u32],
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<WalkPoint>> {
    if n == 0
        || steps == 0
        || steps > i32::MAX as u32
        || distincts.iter().any(|d| !(1..=32).contains(d))
    {
        return Err(UsageError(format!(
            "the walks need threads > 0, 1 to {} steps and 1 to 32 distinct addresses",
            i32::MAX
        ))
        .into());
    }
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
            let verified = gpu.verify_then_time_output(
                &mut out,
                |s, out| launch_walk(s, kernels, home, &table, out, (distinct, steps)),
                // The same additions in the same order as the reference: exact.
                |got| verify::check_exact(&name, &size, got, &want),
                &[plan],
            )?;
            points.push(WalkPoint {
                home,
                distinct,
                timed: Timed {
                    stats: verified.time().clone(),
                    amount: n as f64 * steps as f64,
                },
            });
        }
    }
    Ok(points)
}
