//! The cooperative launch: every block of the grid resident at once, so that a grid
//! barrier cannot deadlock. cudarc makes the launch; the check that the grid fits is ours.

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use super::{check_cooperative, Args, LaunchError};
use crate::harness::gpu::Gpu;

/// How many blocks of `f` (with `block` threads and `shared` dynamic shared bytes) the
/// GPU holds at once: blocks per SM from the occupancy calculator times the SMs.
pub fn cooperative_capacity(
    gpu: &Gpu,
    f: &CudaFunction,
    block: u32,
    shared: u32,
) -> anyhow::Result<u64> {
    let per_sm =
        f.occupancy_max_active_blocks_per_multiprocessor(block, shared as usize, None)?;
    Ok(per_sm as u64 * gpu.info.sms as u64)
}

/// Launches `f` so that all its blocks are resident at once (a grid barrier is then
/// safe), after checking the grid against [`cooperative_capacity`].
///
/// # Safety
/// `args` must match the kernel's parameters in number, order and type.
pub unsafe fn launch_cooperative(
    gpu: &Gpu,
    f: &CudaFunction,
    cfg: LaunchConfig,
    args: Args<'_>,
) -> anyhow::Result<()> {
    if gpu.ctx.attribute(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? == 0 {
        return Err(LaunchError::Unsupported("cooperative launch").into());
    }
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    let capacity = cooperative_capacity(gpu, f, b.0 * b.1 * b.2, cfg.shared_mem_bytes)?;
    check_cooperative(g.0 as u64 * g.1 as u64 * g.2 as u64, capacity)?;
    // cudarc's builder passes the driver one pointer a parameter, here one a cell.
    let mut builder = gpu.stream.launch_builder(f);
    for cell in &args.cells {
        builder.arg(cell);
    }
    builder.launch_cooperative(cfg)?;
    Ok(())
}
