//! Reading a tiled solve back and checking it: every cell of every chain compared with
//! the CPU's table before any solve is timed.

use cudarc::driver::CudaGraph;

use super::{TiledKernels, TiledProblem, SPLIT_BITS};
use crate::cmm::dp::DpTable;
use crate::cmm::layout::Layout;
use crate::harness::timing::Plan;
use crate::harness::{Stats, Verified};

impl<'g> TiledKernels<'g> {
    /// Reads the keys of chain 0 back as a [`DpTable`]: `M[i][j]` is `T[i - 1][j]`.
    pub fn read_back(&self, p: &TiledProblem) -> anyhow::Result<DpTable> {
        self.read_back_chain(p, 0)
    }

    /// Reads the keys of chain `z` of a batch back as a [`DpTable`].
    pub fn read_back_chain(
        &self,
        p: &TiledProblem,
        z: usize,
    ) -> anyhow::Result<DpTable> {
        let per = p.keys_per_chain();
        let keys = self.gpu.stream.clone_dtoh(&p.keys.slice(z * per..(z + 1) * per))?;
        Ok(table_from_keys(p.n, p.stride(), &keys)?)
    }

    /// Compares every chain of a batch with the CPU, cell by cell: `cpu(z)` is chain `z`'s
    /// reference table.
    pub fn check_batch(
        &self,
        p: &TiledProblem,
        cpu: impl Fn(usize) -> anyhow::Result<DpTable> + Sync,
    ) -> anyhow::Result<()> {
        use rayon::prelude::*;
        let stride = p.stride();
        let what = format!("cmm_tiled_*_u64, {}", p.config.label());
        // A few chains at a time: their keys and the CPU's tables, compared in parallel.
        const AT_ONCE: usize = 32;
        for first in (0..p.chains).step_by(AT_ONCE) {
            let last = (first + AT_ONCE).min(p.chains);
            let got: Vec<DpTable> = (first..last)
                .map(|z| self.read_back_chain(p, z))
                .collect::<anyhow::Result<_>>()?;
            (first..last).into_par_iter().zip(got.par_iter()).try_for_each(
                |(z, gpu_table)| -> anyhow::Result<()> {
                    let reference = cpu(z)?;
                    crate::cmm::gpu::check_table(
                        &what,
                        p.n,
                        &reference,
                        gpu_table,
                        |i, j| z * stride * stride + (i - 1) * stride + j,
                    )
                    .map_err(|mut e| {
                        e.kernel = format!("{} (chain {z} of the batch)", e.kernel);
                        e.into()
                    })
                },
            )?;
        }
        Ok(())
    }

    /// Correct before fast, through [`Gpu::verify_then_time`](crate::harness::Gpu::verify_then_time): poisons the keys (the solve
    /// itself resets them, so this proves the reset), solves once, compares every cell with the
    /// CPU's table, and only then times complete solves under each of `plans` (table resident
    /// on the GPU, no transfers).
    pub fn verify_then_time(
        &self,
        p: &mut TiledProblem,
        cpu: &DpTable,
        plans: &[Plan],
    ) -> anyhow::Result<Verified<DpTable>> {
        self.gpu.verify_then_time(
            p,
            |gpu, p| gpu.poison(&mut p.keys),
            |s, p| self.enqueue(s, p),
            |_, p| self.check_single(p, cpu),
            plans,
        )
    }

    /// Reads a single chain's table back and compares every cell with `cpu`.
    pub fn check_single(
        &self,
        p: &TiledProblem,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        anyhow::ensure!(p.chains == 1, "verify a batch with check_batch");
        let gpu_table = self.read_back(p)?;
        let stride = p.stride();
        crate::cmm::gpu::check_table(
            &format!("cmm_tiled_*, {}", p.config.label()),
            p.n,
            cpu,
            &gpu_table,
            |i, j| (i - 1) * stride + j,
        )?;
        Ok(gpu_table)
    }

    /// Verifies one solve replayed from `graph` (captured by [`TiledKernels::capture`]
    /// from `p`): poison, one launch of the graph, every cell compared with `cpu`.
    pub fn solve_verified_graph(
        &self,
        p: &mut TiledProblem,
        graph: &CudaGraph,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        Ok(self
            .gpu
            .verify_then_time(
                p,
                |gpu, p| gpu.poison(&mut p.keys),
                |_, _| Ok(graph.launch()?),
                |_, p| self.check_single(p, cpu),
                &[],
            )?
            .check)
    }

    /// [`TiledKernels::verify_then_time`] without timing: the table, every cell equal to the
    /// CPU's.
    pub fn solve_verified(
        &self,
        p: &mut TiledProblem,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        Ok(self.verify_then_time(p, cpu, &[])?.check)
    }

    /// Times complete solves (table resident on the GPU, no transfers). Only for a problem
    /// [`TiledKernels::solve_verified`] has checked, when the plan depends on that check.
    pub fn time(&self, p: &mut TiledProblem, plan: Plan) -> anyhow::Result<Stats> {
        self.gpu.time(plan, |s| self.enqueue(s, p))
    }
}

/// Decodes a key table (`stride x stride`, `T[a][b]` at `a * stride + b`) into a [`DpTable`].
pub fn table_from_keys(
    n: usize,
    stride: usize,
    keys: &[u64],
) -> Result<DpTable, crate::cmm::CmmError> {
    let row = n + 1;
    let mut cost = vec![0u64; Layout::RowMajor.dp_len(n)];
    let mut split = vec![0u32; cost.len()];
    for i in 1..=n {
        for j in i..=n {
            let key = keys[(i - 1) * stride + j];
            cost[row * i + j] = key >> SPLIT_BITS;
            split[row * i + j] = (key & ((1 << SPLIT_BITS) - 1)) as u32;
        }
    }
    DpTable::from_layout(Layout::RowMajor, n, &cost, &split)
}
