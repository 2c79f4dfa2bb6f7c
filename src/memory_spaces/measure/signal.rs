//! The lecture's signal example: one vector applied to many matrices, with the vector in
//! constant memory, in global memory and on the read-only path.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Tolerance, UsageError};
use crate::memory_spaces::{reference, BLOCK, KERNEL_FILE, SIGNAL_MAX};

use super::kernels::{Kernels, MemoryKernel, Timed};

/// The three homes of the signal vector (and of the walks' table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorHome {
    /// `__constant__` memory, read through the constant cache.
    Constant,
    /// Global memory, plain loads.
    Global,
    /// Global memory through the read-only path (`const __restrict__` and `__ldg`).
    ReadOnly,
}

impl VectorHome {
    pub const ALL: [VectorHome; 3] =
        [VectorHome::Constant, VectorHome::Global, VectorHome::ReadOnly];

    pub fn label(self) -> &'static str {
        match self {
            VectorHome::Constant => "constant memory",
            VectorHome::Global => "global memory",
            VectorHome::ReadOnly => "read-only path (__ldg)",
        }
    }
}

/// Sets `signal_const` (all [`SIGNAL_MAX`] floats).
pub fn set_signal_const(
    gpu: &Gpu,
    kernels: &Kernels,
    signal: &[f32],
) -> anyhow::Result<()> {
    anyhow::ensure!(
        signal.len() == SIGNAL_MAX,
        "signal_const holds {SIGNAL_MAX} floats, not {}",
        signal.len()
    );
    kernels.module(KERNEL_FILE).set_constant(&gpu.stream, "signal_const", signal)
}

/// The signal example's sizes: `matrices` matrices of `rows` × `m`, a vector of `m` floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalSize {
    pub rows: usize,
    pub m: usize,
    pub matrices: usize,
}

impl SignalSize {
    pub fn matrix_bytes(&self) -> usize {
        self.rows * self.m * self.matrices * 4
    }
}

/// Enqueues one signal kernel.
pub fn launch_signal(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    home: VectorHome,
    (matrices, signal_global): (&CudaSlice<f32>, &CudaSlice<f32>),
    result: &mut CudaSlice<f32>,
    size: SignalSize,
) -> anyhow::Result<()> {
    assert!(
        matrices.len() >= size.rows * size.m * size.matrices
            && result.len() >= size.rows * size.matrices
    );
    let cfg = LaunchConfig {
        grid_dim: ((size.rows as u32).div_ceil(BLOCK), size.matrices as u32, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (rows, m) = (size.rows as i32, size.m as i32);
    let f = kernels.get(MemoryKernel::Signal(home));
    let mut launch = stream.launch_builder(f);
    launch.arg(matrices);
    if home != VectorHome::Constant {
        launch.arg(signal_global);
    }
    launch.arg(result).arg(&rows).arg(&m);
    // SAFETY: matches apply_signal_*(const float* matrices, [const float* signal,] float* result,
    // int rows, int m); the grid covers rows x matrices and the assert keeps every access inside.
    unsafe { launch.launch(cfg)? };
    Ok(())
}

/// Verifies, then times, the signal example with the vector in each home. The matrices are
/// streamed once; the vector is read once per matrix element, by every thread at once.
/// The amount of work is the matrix and result bytes.
pub fn measure_signal(
    gpu: &Gpu,
    kernels: &Kernels,
    size: SignalSize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<(VectorHome, Timed)>> {
    let SignalSize { rows, m, matrices: n_mat } = size;
    if !(1..=SIGNAL_MAX).contains(&m)
        || rows == 0
        || !(1..=65_535).contains(&n_mat)
        || rows > i32::MAX as usize
    {
        let limits = format!(
            "1 to {SIGNAL_MAX} vector elements, at least 1 row, 1 to 65535 matrices"
        );
        return Err(UsageError(format!(
            "the signal example needs {limits}, not {size:?}"
        ))
        .into());
    }
    let bytes = size.matrix_bytes() + rows * n_mat * 4;
    gpu.ensure_fits(bytes, "the signal example")?;
    let signal_host = inputs::random_f32(SIGNAL_MAX, seed);
    let matrices_host = inputs::random_f32(rows * m * n_mat, seed + 1);
    let want = reference::apply_signal(&matrices_host, &signal_host, rows, m);
    set_signal_const(gpu, kernels, &signal_host)?;
    let signal_global = gpu.stream.clone_htod(&signal_host)?;
    let matrices = gpu.stream.clone_htod(&matrices_host)?;
    let mut result = gpu.stream.alloc_zeros::<f32>(rows * n_mat)?;
    // m products of numbers in [-1, 1), each rounded in f32: the error grows with m.
    let tolerance = Tolerance::new(1e-5 * m as f64, 1e-5);
    let mut timed = Vec::new();
    for home in VectorHome::ALL {
        let buffers = (&matrices, &signal_global);
        let name = MemoryKernel::Signal(home).function();
        let verified = gpu.verify_then_time_output(
            &mut result,
            |s, result| launch_signal(s, kernels, home, buffers, result, size),
            |got| {
                verify::check_close(&name, &format!("{size:?}"), got, &want, tolerance)
            },
            &[plan],
        )?;
        timed.push((
            home,
            Timed { stats: verified.time().clone(), amount: bytes as f64 },
        ));
    }
    Ok(timed)
}
