//! Bytes per second from shared memory and from registers: every thread adds 32 floats per
//! pass, from a shared tile or from its own registers.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{verify, Gpu, UsageError};
use crate::memory_spaces::{reference, BLOCK, TILE_ROWS};

use super::kernels::{resident_blocks, Kernels, MemoryKernel, Timed};

/// The on-chip bandwidth kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OnChipKernel {
    /// `bandwidth_shared`: the operands come from a shared tile.
    Shared,
    /// `bandwidth_registers`: the operands are the thread's own registers.
    Registers,
}

impl OnChipKernel {
    pub const ALL: [OnChipKernel; 2] = [OnChipKernel::Shared, OnChipKernel::Registers];
}

/// The on-chip bandwidth kernels' results; each amount is bytes delivered to the threads
/// (4 per float added).
#[derive(Debug, Clone)]
pub struct OnChip {
    pub shared: Timed,
    pub registers: Timed,
    pub passes: u32,
}

/// Verifies, then times, `bandwidth_shared` and `bandwidth_registers` on enough blocks to fill
/// every SM, `passes` passes over 32 floats per thread.
pub fn measure_onchip(
    gpu: &Gpu,
    kernels: &Kernels,
    passes: u32,
    plan: Plan,
) -> anyhow::Result<OnChip> {
    if passes == 0 || passes > i32::MAX as u32 {
        return Err(UsageError(format!(
            "the on-chip kernels need 1 to {} passes",
            i32::MAX
        ))
        .into());
    }
    let mut timed = Vec::new();
    for kernel in OnChipKernel::ALL {
        let name = MemoryKernel::OnChip(kernel);
        let f = kernels.get(name);
        let blocks = resident_blocks(gpu, f, 0)?;
        let want = match kernel {
            OnChipKernel::Shared => reference::bandwidth_shared(blocks, BLOCK, passes),
            OnChipKernel::Registers => {
                reference::bandwidth_registers(blocks, BLOCK, passes)
            }
        };
        let mut out = gpu.stream.alloc_zeros::<f32>((blocks * BLOCK) as usize)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let passes_arg = passes as i32;
        let verified = gpu.verify_then_time_output(
            &mut out,
            |s, out| {
                // SAFETY: matches bandwidth_*(float* out, int passes); out holds one float
                // per thread.
                unsafe { s.launch_builder(f).arg(out).arg(&passes_arg).launch(cfg)? };
                Ok(())
            },
            |got| {
                let size = format!("{blocks} blocks, {passes} passes");
                verify::check_exact(&name.function(), &size, got, &want)
            },
            &[plan],
        )?;
        let bytes =
            blocks as f64 * BLOCK as f64 * passes as f64 * TILE_ROWS as f64 * 4.0;
        timed.push(Timed { stats: verified.time().clone(), amount: bytes });
    }
    let registers = timed.pop().expect("two kernels timed");
    let shared = timed.pop().expect("two kernels timed");
    Ok(OnChip { shared, registers, passes })
}
