//! The three-point stencil from global memory and from a shared tile (static and dynamic).

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, UsageError};
use crate::memory_spaces::{reference, BLOCK};

use super::kernels::{resident_blocks, Kernels, MemoryKernel, Timed};

/// The stencil kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StencilKernel {
    Global,
    SharedStatic,
    SharedDynamic,
}

impl StencilKernel {
    pub const ALL: [StencilKernel; 3] = [
        StencilKernel::Global,
        StencilKernel::SharedStatic,
        StencilKernel::SharedDynamic,
    ];

    pub fn label(self) -> &'static str {
        match self {
            StencilKernel::Global => "three global loads",
            StencilKernel::SharedStatic => "shared tile, static",
            StencilKernel::SharedDynamic => "shared tile, dynamic",
        }
    }

    /// Dynamic shared memory the launch asks for: the tile and its two halo elements.
    pub fn dynamic_shared_bytes(self) -> u32 {
        match self {
            StencilKernel::SharedDynamic => (BLOCK + 2) * 4,
            _ => 0,
        }
    }
}

/// Enqueues one stencil kernel `f` (which is `kernel`) on `grid` blocks.
pub fn launch_stencil(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    kernel: StencilKernel,
    grid: u32,
    a: &CudaSlice<f32>,
    b: &mut CudaSlice<f32>,
) -> anyhow::Result<()> {
    assert!(b.len() >= a.len());
    let n = a.len() as u64;
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: kernel.dynamic_shared_bytes(),
    };
    // SAFETY: matches stencil3_*(const float* a, float* b, u64 n); BLOCK threads per block (the
    // static tile's size), and (BLOCK + 2) floats of dynamic shared memory for the dynamic tile.
    unsafe { stream.launch_builder(f).arg(a).arg(b).arg(&n).launch(cfg)? };
    Ok(())
}

// ANCHOR: measure_stencils
/// Verifies, then times, the three stencils on `n` random floats. The amount of work is
/// the useful bytes: every element read once and written once.
pub fn measure_stencils(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<(StencilKernel, Timed)>> {
    if n == 0 {
        return Err(UsageError("the stencil needs at least one element".into()).into());
    }
    gpu.ensure_fits(2 * n * 4, &format!("a stencil over {n} floats"))?;
    let a_host = inputs::random_f32(n, seed);
    let want = reference::stencil3(&a_host);
    let a = gpu.stream.clone_htod(&a_host)?;
    let mut b = gpu.stream.alloc_zeros::<f32>(n)?;
    let mut timed = Vec::new();
    for kernel in StencilKernel::ALL {
        let name = MemoryKernel::Stencil(kernel);
        let f = kernels.get(name);
        let needed = u32::try_from(n.div_ceil(BLOCK as usize)).unwrap_or(u32::MAX);
        let grid = resident_blocks(gpu, f, kernel.dynamic_shared_bytes())?.min(needed);
        let verified = gpu.verify_then_time_output(
            &mut b,
            |s, b| launch_stencil(s, f, kernel, grid, &a, b),
            // Three additions in the reference's order: exact.
            |got| verify::check_exact(&name.function(), &format!("n={n}"), got, &want),
            &[plan],
        )?;
        let stats = verified.time().clone();
        timed.push((kernel, Timed { stats, amount: 8.0 * n as f64 }));
    }
    Ok(timed)
}
// ANCHOR_END: measure_stencils
