//! The GPU side of the matrix multiply: the kernels of `kernels/tiling.cu` and cuBLAS, each
//! step's launch, the check every step passes before it is timed, and occupancy.

use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use super::model::{self, Step};
use super::reference::Reference;
use crate::harness::blas::{open_blas, sgemm_row_major};
use crate::harness::kernels::KernelTable;
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Mismatch, Report, Verified};
use crate::harness::{inputs, Gpu, UsageError};

crate::kernel_names! {
    /// The kernels of `kernels/tiling.cu`; steps 4 and 5 share one (`vec` picks the loads).
    pub enum TilingKernel in "tiling.cu" {
        Naive => "matmul_naive",
        Tiled16 => "matmul_tiled16",
        Tiled16Grouped => "matmul_tiled16_grouped",
        Tiled32 => "matmul_tiled32",
        Regs8x8 => "matmul_regs8x8",
        QuadDoubleBuffer => "matmul_quad_db",
        GenericWindow => "generic_window",
    }
}

/// The chapter's kernels, loaded, and a cuBLAS handle on the timing stream.
pub struct Kernels {
    pub table: KernelTable<TilingKernel>,
    pub blas: CudaBlas,
}

impl Kernels {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        Ok(Self { table: KernelTable::load(gpu)?, blas: open_blas(gpu)? })
    }

    /// The loaded kernel of `step` (an error for cuBLAS, which has none of ours).
    pub fn function(&self, step: Step) -> anyhow::Result<&CudaFunction> {
        let kernel = step
            .kernel()
            .ok_or_else(|| anyhow::anyhow!("step `{}` has no kernel", step.label()))?;
        Ok(self.table.get(kernel))
    }
}

/// `A` (M x K), `B` (K x N) on the host and the device, and the device's `C` (M x N).
pub struct Operands {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a_host: Vec<f32>,
    pub b_host: Vec<f32>,
    pub a: CudaSlice<f32>,
    pub b: CudaSlice<f32>,
    pub c: CudaSlice<f32>,
}

impl Operands {
    /// Fresh random operands in [-1, 1) from `seed`. Sizes a 32-bit index cannot describe, or
    /// that do not fit in device memory, are usage errors.
    pub fn new(
        gpu: &Gpu,
        (m, n, k): (usize, usize, usize),
        seed: u64,
    ) -> anyhow::Result<Self> {
        let dims_ok = [m, n, k].iter().all(|&d| (1..=i32::MAX as usize).contains(&d));
        let bytes = 4 * (m * k + k * n + m * n) as u128;
        if !dims_ok || bytes > gpu.info.total_mem_bytes as u128 * 3 / 4 {
            return Err(UsageError(format!(
                "a {m} x {n} x {k} multiply does not fit this device (dimensions \
                 1..=2^31-1, three matrices in 3/4 of its memory)"
            ))
            .into());
        }
        let a_host = inputs::random_f32(m * k, seed);
        let b_host = inputs::random_f32(k * n, seed + 1);
        let a = gpu.stream.clone_htod(&a_host)?;
        let b = gpu.stream.clone_htod(&b_host)?;
        let c = gpu.stream.alloc_zeros::<f32>(m * n)?;
        Ok(Self { m, n, k, a_host, b_host, a, b, c })
    }

    pub fn size(&self) -> String {
        format!("{} x {} x {}", self.m, self.n, self.k)
    }
}

// ANCHOR: launch
/// Enqueues one multiply `C = A B` by `step` on `stream`.
pub fn launch(
    kernels: &Kernels,
    step: Step,
    stream: &Arc<CudaStream>,
    ops: &mut Operands,
) -> anyhow::Result<()> {
    let (m, n, k) = (ops.m as i32, ops.n as i32, ops.k as i32);
    if step == Step::Cublas {
        return sgemm_row_major(
            &kernels.blas,
            (ops.m, ops.k, ops.n),
            &ops.a,
            &ops.b,
            &mut ops.c,
        );
    }
    let (bx, by) = step.block();
    let (gx, gy) = step.grid(ops.m, ops.n);
    let cfg = LaunchConfig {
        grid_dim: (gx, gy, 1),
        block_dim: (bx, by, 1),
        shared_mem_bytes: 0,
    };
    let f = kernels.function(step)?;
    let mut builder = stream.launch_builder(f);
    builder.arg(&ops.a).arg(&ops.b).arg(&mut ops.c).arg(&m).arg(&n).arg(&k);
    // Steps 5 and 6 load float4 where every group of 4 is aligned: K and
    // N multiples of 4.
    let vec = i32::from(
        matches!(step, Step::Float4 | Step::QuadDoubleBuffer)
            && ops.k.is_multiple_of(4)
            && ops.n.is_multiple_of(4),
    );
    if matches!(step, Step::Regs8x8 | Step::Float4 | Step::QuadDoubleBuffer) {
        builder.arg(&vec);
    }
    let group = model::GROUP_ROWS as i32;
    if step == Step::Tiled16Grouped {
        builder.arg(&group);
    }
    // SAFETY: the arguments match the kernel's signature; the kernels
    // bound-check every index.
    unsafe { builder.launch(cfg)? };
    Ok(())
}
// ANCHOR_END: launch

// ANCHOR: verify
/// Correct before fast, through [`Gpu::verify_then_time`]: C is poisoned, `step` runs
/// once and is checked by [`check`]; only then is it timed, once under each of `plans`
/// (none: verify only).
pub fn verify_then_time(
    gpu: &Gpu,
    kernels: &Kernels,
    step: Step,
    ops: &mut Operands,
    reference: &Reference,
    plans: &[Plan],
) -> anyhow::Result<Verified<Report>> {
    gpu.verify_then_time(
        ops,
        |gpu, ops| gpu.poison(&mut ops.c),
        |s, ops| launch(kernels, step, s, ops),
        |gpu, ops| {
            let got = gpu.stream.clone_dtoh(&ops.c)?;
            Ok(check(step, ops, &got, reference)?)
        },
        plans,
    )
}

/// Compares the reference's rows of `got` (C downloaded) within the K-scaled tolerance;
/// every other element must at least be finite (an unwritten one is NaN).
pub fn check(
    step: Step,
    ops: &Operands,
    got: &[f32],
    reference: &Reference,
) -> Result<Report, Mismatch> {
    check_rows(step.label(), ops, got, reference)
}

/// [`check`] for any kernel `name` (the Hopper chapter's multiplies use it too).
pub fn check_rows(
    name: &str,
    ops: &Operands,
    got: &[f32],
    reference: &Reference,
) -> Result<Report, Mismatch> {
    let (n, size) = (ops.n, ops.size());
    if let Some(i) = got.iter().position(|x| !x.is_finite()) {
        return Err(Mismatch {
            kernel: name.into(),
            size,
            index: i,
            got: format!("{:e}", got[i]),
            want: "a finite value".into(),
            wrong: got.iter().filter(|x| !x.is_finite()).count(),
            total: got.len(),
        });
    }
    let picked: Vec<f32> = reference
        .rows
        .iter()
        .flat_map(|&r| got[r * n..r * n + n].iter().copied())
        .collect();
    verify::check_close(
        name,
        &size,
        &picked,
        &reference.values,
        model::tolerance(ops.k),
    )
}
// ANCHOR_END: verify

/// What the compiler and the occupancy calculator say about one kernel.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Occupancy {
    pub threads_per_block: u32,
    pub shared_bytes_per_block: i32,
    pub registers_per_thread: i32,
    pub spill_bytes_per_thread: i32,
    pub blocks_per_sm: u32,
    pub warps_per_sm: u32,
}

/// The occupancy of `step`'s kernel; `None` for cuBLAS (its kernels are not ours to query).
pub fn occupancy(kernels: &Kernels, step: Step) -> anyhow::Result<Option<Occupancy>> {
    if step == Step::Cublas {
        return Ok(None);
    }
    let f = kernels.function(step)?;
    let (bx, by) = step.block();
    let threads = bx * by;
    let blocks = f.occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)?;
    Ok(Some(Occupancy {
        threads_per_block: threads,
        shared_bytes_per_block: f.shared_size_bytes()?,
        registers_per_thread: f.num_regs()?,
        spill_bytes_per_thread: f.local_size_bytes()?,
        blocks_per_sm: blocks,
        warps_per_sm: blocks * threads / 32,
    }))
}
