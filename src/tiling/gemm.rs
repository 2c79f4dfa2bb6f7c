//! The GPU side: each step's launch, cuBLAS as the reference, verification, timing, occupancy.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use rayon::prelude::*;

use super::model::{self, Step};
use super::KERNEL_FILE;
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Mismatch, Report};
use crate::harness::UsageError;
use crate::harness::{inputs, Gpu, Stats};

/// The chapter's kernels, loaded, and a cuBLAS handle on the timing stream.
pub struct Kernels {
    functions: HashMap<Step, CudaFunction>,
    pub blas: CudaBlas,
}

impl Kernels {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let module = gpu.load(KERNEL_FILE)?;
        let mut functions = HashMap::new();
        for step in Step::ALL {
            if let Some(name) = step.function() {
                functions.insert(step, module.function(name)?);
            }
        }
        Ok(Self { functions, blas: CudaBlas::new(gpu.stream.clone())? })
    }

    /// The loaded kernel of `step` (an error for cuBLAS, which has none of ours).
    pub fn function(&self, step: Step) -> anyhow::Result<&CudaFunction> {
        self.functions
            .get(&step)
            .ok_or_else(|| anyhow::anyhow!("step `{}` has no kernel", step.label()))
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
            return Err(UsageError(format!("a {m} x {n} x {k} multiply does not fit this device (dimensions 1..=2^31-1, three matrices in 3/4 of its memory)")).into());
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
    // Steps 5 and 6 load float4 where every group of 4 is aligned: K and N multiples of 4.
    let vec = i32::from(
        matches!(step, Step::Float4 | Step::QuadDoubleBuffer)
            && ops.k % 4 == 0
            && ops.n % 4 == 0,
    );
    if matches!(step, Step::Regs8x8 | Step::Float4 | Step::QuadDoubleBuffer) {
        builder.arg(&vec);
    }
    // SAFETY: the arguments match the kernel's signature; the kernels bound-check every index.
    unsafe { builder.launch(cfg)? };
    Ok(())
}
// ANCHOR_END: launch

// ANCHOR: sgemm_row_major
/// Row-major `c (m x n) = a (m x k) b (k x n)` with cuBLAS SGEMM in its default math mode (no
/// TF32). cuBLAS is column-major: row-major C = A B is column-major C^T = B^T A^T, so B goes
/// first, and every leading dimension is a row length. Refuses buffers shorter than the shapes
/// and sides past cuBLAS's 32-bit ints.
pub fn sgemm_row_major(
    blas: &CudaBlas,
    (m, k, n): (usize, usize, usize),
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) -> anyhow::Result<()> {
    for (name, len, needed) in
        [("a", a.len(), m * k), ("b", b.len(), k * n), ("c", c.len(), m * n)]
    {
        anyhow::ensure!(
            len >= needed,
            "sgemm {m} x {k} x {n}: buffer {name} holds {len} floats, needs {needed}"
        );
    }
    let int = |x: usize| {
        i32::try_from(x)
            .map_err(|_| anyhow::anyhow!("dimension {x} exceeds cuBLAS's 32-bit int"))
    };
    let (m, k, n) = (int(m)?, int(k)?, int(n)?);
    let cfg = GemmConfig {
        transa: cublasOperation_t::CUBLAS_OP_N,
        transb: cublasOperation_t::CUBLAS_OP_N,
        m: n,
        n: m,
        k,
        alpha: 1.0f32,
        lda: n,
        ldb: k,
        beta: 0.0f32,
        ldc: n,
    };
    // SAFETY: the buffers hold at least k x n, m x k and m x n floats (checked above), as cfg says.
    unsafe { blas.gemm(cfg, b, a, c)? };
    Ok(())
}
// ANCHOR_END: sgemm_row_major

/// Rows `rows` of `A B`, accumulated in double precision on the CPU (`rows.len()` x N).
pub fn reference_rows(
    a: &[f32],
    b: &[f32],
    (n, k): (usize, usize),
    rows: &[usize],
) -> Vec<f64> {
    let mut out = vec![0f64; rows.len() * n];
    out.par_chunks_mut(n).zip(rows.par_iter()).for_each(|(acc, &i)| {
        for kk in 0..k {
            let aik = a[i * k + kk] as f64;
            let b_row = &b[kk * n..kk * n + n];
            for (c, &bv) in acc.iter_mut().zip(b_row) {
                *c += aik * bv as f64;
            }
        }
    });
    out
}

/// The rows a large result is checked on: the first and last, both sides of the 128-row
/// block edges near the start and the middle, and a few chosen by `seed`.
pub fn sample_rows(m: usize, seed: u64) -> Vec<usize> {
    let mut rows: Vec<usize> = [
        0,
        1,
        15,
        16,
        31,
        32,
        127,
        128,
        m / 2,
        m / 2 + 1,
        m.saturating_sub(2),
        m.saturating_sub(1),
    ]
    .into_iter()
    .filter(|&r| r < m)
    .collect();
    let picks = inputs::random_f32(6, seed);
    rows.extend(
        picks.iter().map(|x| (((*x + 1.0) / 2.0) as f64 * m as f64) as usize % m),
    );
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// What verification compares against: every row, or a sample of rows.
pub struct Reference {
    pub rows: Vec<usize>,
    pub values: Vec<f64>,
}

impl Reference {
    /// All rows when the product is small enough (at most 2^31 multiply-adds), else a sample.
    pub fn for_operands(ops: &Operands, seed: u64) -> Self {
        let all = (ops.m as u128 * ops.n as u128 * ops.k as u128) <= 1 << 31;
        let rows = if all { (0..ops.m).collect() } else { sample_rows(ops.m, seed) };
        let values = reference_rows(&ops.a_host, &ops.b_host, (ops.n, ops.k), &rows);
        Self { rows, values }
    }
}

// ANCHOR: verify
/// Poisons C, runs `step` once, and compares the reference's rows within the K-scaled
/// tolerance; every other element must at least be finite (an unwritten one is NaN).
pub fn verify(
    gpu: &Gpu,
    kernels: &Kernels,
    step: Step,
    ops: &mut Operands,
    reference: &Reference,
) -> anyhow::Result<Report> {
    gpu.poison(&mut ops.c)?;
    launch(kernels, step, &gpu.stream, ops)?;
    let got = gpu.stream.clone_dtoh(&ops.c)?;
    let (n, size) = (ops.n, ops.size());
    let name = step.label();
    if let Some(i) = got.iter().position(|x| !x.is_finite()) {
        return Err(Mismatch {
            kernel: name.into(),
            size,
            index: i,
            got: format!("{:e}", got[i]),
            want: "a finite value".into(),
            wrong: got.iter().filter(|x| !x.is_finite()).count(),
            total: got.len(),
        }
        .into());
    }
    let picked: Vec<f32> = reference
        .rows
        .iter()
        .flat_map(|&r| got[r * n..r * n + n].iter().copied())
        .collect();
    Ok(verify::check_close(
        name,
        &size,
        &picked,
        &reference.values,
        model::tolerance(ops.k),
    )?)
}
// ANCHOR_END: verify

/// Times `step` under `plan` (after it has been verified).
pub fn measure(
    gpu: &Gpu,
    kernels: &Kernels,
    step: Step,
    ops: &mut Operands,
    plan: Plan,
) -> anyhow::Result<Stats> {
    gpu.time(plan, |s| launch(kernels, step, s, ops))
}

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
