//! The read-only data path: a streaming copy and gathers, with plain pointers, `__ldg` and
//! `const __restrict__`.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use crate::coalescing::readonly::ReadOnlyKernel;
use crate::coalescing::reference;
use crate::harness::kernels::KernelName;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, UsageError};

use super::kernels::{Kernels, Measurement, BLOCK};

/// Enqueues one read-only-section kernel. A copy reads `src` (passed as `table`) and ignores
/// `index`; a gather reads both.
pub fn launch_readonly(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    kernel: ReadOnlyKernel,
    (table, index): (&CudaSlice<f32>, &CudaSlice<u32>),
    out: &mut CudaSlice<f32>,
) -> anyhow::Result<()> {
    let n = out.len();
    let blocks =
        u32::try_from(n.div_ceil(kernel.per_thread() * BLOCK as usize).max(1))?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let f = kernels.readonly(kernel);
    let n64 = n as u64;
    if kernel.is_gather() {
        assert!(index.len() >= n);
        // SAFETY: matches gather*(const float* table, const unsigned* index, float* out, u64 n);
        // every index is below table.len() (checked by the caller, see measure_readonly).
        unsafe {
            stream
                .launch_builder(f)
                .arg(table)
                .arg(index)
                .arg(out)
                .arg(&n64)
                .launch(cfg)?
        };
    } else {
        assert!(table.len() >= n);
        // SAFETY: matches copy_*(const float* src, float* dst, u64 n).
        unsafe { stream.launch_builder(f).arg(table).arg(out).arg(&n64).launch(cfg)? };
    }
    Ok(())
}

/// Verifies, then times, every kernel of the read-only section on `n` elements; the gathers
/// read a table of `table_len` floats at random indices. Useful bytes count the streamed
/// arrays only (4 bytes read from `src` or `index`, 4 written to `out`, per element): the
/// table reads are the reuse a cache should absorb.
pub fn measure_readonly(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    table_len: u32,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<(ReadOnlyKernel, Measurement)>> {
    if n == 0 || table_len == 0 {
        return Err(UsageError(
            "the read-only section needs n > 0 and a table of at least one float"
                .into(),
        )
        .into());
    }
    let what = format!("the read-only kernels on {n} elements");
    gpu.ensure_fits(3 * n * 4 + table_len as usize * 4, &what)?;
    let src_host = inputs::random_f32(n, seed);
    let table_host = inputs::random_f32(table_len as usize, seed + 1);
    let index_host = reference::random_indices(n, table_len, seed + 2);
    let gathered = reference::gather(&table_host, &index_host);
    let src = gpu.stream.clone_htod(&src_host)?;
    let table = gpu.stream.clone_htod(&table_host)?;
    let index = gpu.stream.clone_htod(&index_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
    let mut results = Vec::new();
    for kernel in ReadOnlyKernel::all() {
        let (first, want) =
            if kernel.is_gather() { (&table, &gathered) } else { (&src, &src_host) };
        let verified = gpu.verify_then_time_output(
            &mut out,
            |s, out| launch_readonly(s, kernels, kernel, (first, &index), out),
            |got| verify::check_exact(&kernel.function(), &format!("n={n}"), got, want),
            &[plan],
        )?;
        let stats = verified.time().clone();
        results.push((kernel, Measurement { stats, useful_bytes: 8 * n as u64 }));
    }
    Ok(results)
}
