//! The check the two CMM chapters' kernel exercises share: a chain's tables on the device,
//! solved diagonal by diagonal by an exercise's kernel and compared cell by cell with the CPU.

use super::dp::*;
use super::gpu::*;
use super::layout::{triangle_len, Layout, MAX_N_FOR_I32_INDEX};
use crate::harness::exercise::{check_sizes, ExerciseKernels, Passed, Version};
use crate::harness::{Gpu, UsageError};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// A chain's tables on the device, in one layout, for the kernel exercises of the two CMM
/// chapters ([`check_chains`]).
struct DeviceTables {
    layout: Layout,
    n: usize,
    dims: CudaSlice<u32>,
    cost: CudaSlice<u64>,
    split: CudaSlice<u32>,
}

impl DeviceTables {
    /// Uploads `dims` and allocates the tables, after proving that no sum a kernel computes
    /// can wrap 64 bits and that the cells can be indexed with `int`.
    fn new(gpu: &Gpu, layout: Layout, dims: &[u32]) -> anyhow::Result<Self> {
        let n = validate_dims(dims)?;
        gpu_safe_bound(dims)?;
        if n > MAX_N_FOR_I32_INDEX {
            return Err(UsageError(format!(
                "n = {n} is past the kernels' int indices"
            ))
            .into());
        }
        let cells = layout.dp_len(n);
        Ok(Self {
            layout,
            n,
            dims: gpu.stream.clone_htod(dims)?,
            cost: gpu.stream.alloc_zeros(cells)?,
            split: gpu.stream.alloc_zeros(cells)?,
        })
    }

    /// Every cell poisoned (all bits set) but the main diagonal, which the kernels read and
    /// never write: cost 0, split 0, as in the chapter.
    fn poison(&mut self, gpu: &Gpu) -> anyhow::Result<()> {
        let cells = self.layout.dp_len(self.n);
        let (mut cost, mut split) = (vec![u64::MAX; cells], vec![u32::MAX; cells]);
        for i in 1..=self.n {
            let at = self.layout.dp_index(self.n, i, i);
            (cost[at], split[at]) = (0, 0);
        }
        gpu.stream.memcpy_htod(&cost, &mut self.cost)?;
        gpu.stream.memcpy_htod(&split, &mut self.split)?;
        Ok(())
    }

    /// Compares every cell, cost and split, with `cpu`: the first difference is a
    /// [`crate::harness::Mismatch`] naming `kernel`. Returns the cells compared.
    fn check(&self, gpu: &Gpu, kernel: &str, cpu: &DpTable) -> anyhow::Result<usize> {
        let cost = gpu.stream.clone_dtoh(&self.cost)?;
        let split = gpu.stream.clone_dtoh(&self.split)?;
        let got = DpTable::from_layout(self.layout, self.n, &cost, &split)?;
        check_table(kernel, self.n, cpu, &got, |i, j| {
            self.layout.dp_index(self.n, i, j)
        })?;
        Ok(triangle_len(self.n))
    }
}

/// The check of the two CMM chapters' kernel exercises: `version`'s function of `K`, which
/// takes `(const u32* dims, u64* cost, u32* split, int n, int d)` and is launched `like` a
/// per-diagonal kernel of the chapters (its layout, one launch per diagonal), on every chain
/// of `chains` that `refuse` lets through: the tables poisoned but for the main diagonal, one
/// launch per diagonal, then every cell's cost and split compared with the serial program's.
pub(crate) fn check_chains<K: ExerciseKernels>(
    gpu: &Gpu,
    version: Version,
    like: Kernel,
    chains: Vec<Vec<u32>>,
    refuse: impl Fn(&[u32]) -> anyhow::Result<()>,
) -> anyhow::Result<Passed> {
    check_sizes::<K, _>(gpu, version, chains, |f, name, dims| {
        refuse(&dims)?;
        let cpu = solve_serial(&dims)?;
        let n = cpu.n();
        let mut tables = DeviceTables::new(gpu, like.layout(), &dims)?;
        let n32 = n as i32;
        let verified = gpu.verify_then_time(
            &mut tables,
            |gpu, t| t.poison(gpu),
            |s, t| {
                for d in 1..n {
                    let cfg =
                        like.diagonal_launch(n, d).expect("a per-diagonal kernel");
                    let d32 = d as i32;
                    // SAFETY: (const u32* dims, u64* cost, u32* split, int n, int d) with
                    // n + 1 dimensions and the layout's cells; DeviceTables::new proved the
                    // bounds.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&t.dims)
                            .arg(&mut t.cost)
                            .arg(&mut t.split)
                            .arg(&n32)
                            .arg(&d32)
                            .launch(cfg)?
                    };
                }
                Ok(())
            },
            |gpu, t| t.check(gpu, name, &cpu),
            &[],
        )?;
        Ok((format!("n = {n}"), verified.check))
    })
}
