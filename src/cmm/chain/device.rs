//! An order of a chain on the GPU: its products as cuBLAS SGEMMs in dependency order, each
//! with its own buffer allocated before any timing, and the chain's inputs on the device.

use std::sync::Arc;

use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaSlice, CudaStream};

use super::super::dp::validate_dims;
use super::super::paren::ParenTree;
use super::plan::{schedule, Operand, Step};
use super::reference::chain_matrices;
use crate::harness::blas::sgemm_row_major;
use crate::harness::{Gpu, UsageError};

/// One order of one chain, ready to run: its products in dependency order, each with its own
/// device buffer, allocated here, before any timing, and reused by every run.
pub struct ChainEvaluation {
    dims: Vec<u32>,
    steps: Vec<Step>,
    buffers: Vec<CudaSlice<f32>>,
}

impl ChainEvaluation {
    /// Plans `order` on `dims` and allocates one buffer per product on `stream`. Chains of one
    /// matrix have no product to evaluate and are refused, as are dimensions cuBLAS's 32-bit
    /// ints cannot describe.
    pub fn new(
        stream: &Arc<CudaStream>,
        dims: &[u32],
        order: &ParenTree,
    ) -> anyhow::Result<Self> {
        let n = validate_dims(dims)?;
        if n < 2 {
            return Err(UsageError(
                "a chain of one matrix has no product to evaluate".into(),
            )
            .into());
        }
        if let Some(p) = dims.iter().find(|&&p| i32::try_from(p).is_err()) {
            return Err(UsageError(format!(
                "dimension {p} exceeds cuBLAS's 32-bit int"
            ))
            .into());
        }
        let steps = schedule(dims, order)?;
        let buffers = steps
            .iter()
            .map(|s| stream.alloc_zeros::<f32>(s.m * s.n))
            .collect::<Result<_, _>>()?;
        Ok(Self { dims: dims.to_vec(), steps, buffers })
    }

    /// Products per run (`n - 1`).
    pub fn products(&self) -> usize {
        self.steps.len()
    }

    /// Enqueues every product on `blas`'s stream; the chain's product ends in [`Self::result`].
    /// `matrices[i]` must hold `A(i+1)`, `dims[i] x dims[i+1]` floats, row-major.
    pub fn run(
        &mut self,
        blas: &CudaBlas,
        matrices: &[CudaSlice<f32>],
    ) -> anyhow::Result<()> {
        let n = self.dims.len() - 1;
        if matrices.len() != n {
            anyhow::bail!("{} matrices given for a chain of {n}", matrices.len());
        }
        for (i, (m, w)) in matrices.iter().zip(self.dims.windows(2)).enumerate() {
            if m.len() != w[0] as usize * w[1] as usize {
                anyhow::bail!(
                    "A{} holds {} floats, not {} x {}",
                    i + 1,
                    m.len(),
                    w[0],
                    w[1]
                );
            }
        }
        for (s, step) in self.steps.iter().enumerate() {
            // Post-order: product s reads only products before it, so split the buffers there.
            let (done, rest) = self.buffers.split_at_mut(s);
            let operand = |o: Operand| match o {
                Operand::Input(i) => &matrices[i],
                Operand::Product(j) => &done[j],
            };
            sgemm_row_major(
                blas,
                (step.m, step.k, step.n),
                operand(step.left),
                operand(step.right),
                &mut rest[0],
            )?;
        }
        Ok(())
    }

    /// The chain's product, `p_0 x p_n` row-major (valid after [`Self::run`]).
    pub fn result(&self) -> &CudaSlice<f32> {
        self.buffers.last().expect("a chain of two or more matrices has a product")
    }

    /// Takes the chain's product out, dropping the intermediates.
    pub fn into_result(mut self) -> CudaSlice<f32> {
        self.buffers.pop().expect("a chain of two or more matrices has a product")
    }

    /// Poisons every product buffer (NaN), so a product never written cannot pass a check.
    pub fn poison(&mut self, gpu: &Gpu) -> anyhow::Result<()> {
        for b in &mut self.buffers {
            gpu.poison(b)?;
        }
        Ok(())
    }
}

/// Multiplies the chain in `order` once and returns its product (`p_0 x p_n`, row-major). For
/// repeated runs, build a [`ChainEvaluation`] once instead: this allocates every intermediate.
pub fn multiply_chain(
    blas: &CudaBlas,
    stream: &Arc<CudaStream>,
    matrices: &[CudaSlice<f32>],
    dims: &[u32],
    order: &ParenTree,
) -> anyhow::Result<CudaSlice<f32>> {
    let mut evaluation = ChainEvaluation::new(stream, dims, order)?;
    evaluation.run(blas, matrices)?;
    Ok(evaluation.into_result())
}

/// A chain's matrices from [`chain_matrices`], on the host (for the CPU reference) and the device.
pub struct ChainInputs {
    pub dims: Vec<u32>,
    pub host: Vec<Vec<f32>>,
    pub device: Vec<CudaSlice<f32>>,
}

impl ChainInputs {
    pub fn upload(gpu: &Gpu, dims: &[u32], seed: u64) -> anyhow::Result<Self> {
        let host = chain_matrices(dims, seed);
        let device =
            host.iter().map(|m| gpu.stream.clone_htod(m)).collect::<Result<_, _>>()?;
        Ok(Self { dims: dims.to_vec(), host, device })
    }
}
