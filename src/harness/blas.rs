//! cuBLAS, opened one way for the whole book: on the timing stream, in full FP32.
//!
//! cuBLAS may round FP32 inputs to TF32 (or use the BF16x9 emulation) inside SGEMM when the
//! handle's math mode allows it, and the environment variable `NVIDIA_TF32_OVERRIDE` can
//! change what a program asked for. A comparison with hand-written FP32 kernels is only fair
//! when cuBLAS computes in FP32 too, so every handle is checked here and refused otherwise.
//! The book's one row-major SGEMM ([`sgemm_row_major`]) and the rows a sampled check of a
//! large product compares ([`sample_rows`]) live here too, shared by the chapters that
//! multiply matrices.

use cudarc::cublas::sys::{cublasMath_t, cublasOperation_t};
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};
use cudarc::driver::CudaSlice;

use super::gpu::Gpu;
use super::inputs;

// ANCHOR: open_blas
/// A cuBLAS handle on `gpu`'s timing stream whose math mode computes FP32 in FP32.
pub fn open_blas(gpu: &Gpu) -> anyhow::Result<CudaBlas> {
    tf32_environment_check(std::env::var("NVIDIA_TF32_OVERRIDE").ok().as_deref())?;
    let blas = CudaBlas::new(gpu.stream.clone())?;
    // The default mode computes FP32 in FP32 without TF32 (the pedantic mode would also
    // forbid cuBLAS's fast reduction orders: a slower, unfair reference). Set it
    // explicitly, then read back what the handle does.
    // SAFETY: sets the handle's math mode; the handle is valid for the call.
    unsafe {
        cudarc::cublas::sys::cublasSetMathMode(
            *blas.handle(),
            cublasMath_t::CUBLAS_DEFAULT_MATH,
        )
        .result()?
    };
    let mut mode = 0u32;
    // SAFETY: cublasGetMathMode writes one C enum (an unsigned int) through the
    // pointer; reading it as u32 accepts any combination of flags, which no Rust enum
    // value could hold.
    unsafe {
        cudarc::cublas::sys::cublasGetMathMode(
            *blas.handle(),
            (&mut mode as *mut u32).cast::<cublasMath_t>(),
        )
        .result()?
    };
    math_mode_check(mode)?;
    Ok(blas)
}
// ANCHOR_END: open_blas

// ANCHOR: sgemm_row_major
/// Row-major `c (m x n) = a (m x k) b (k x n)` with cuBLAS SGEMM, on a handle from
/// [`open_blas`] (FP32, no TF32). cuBLAS is column-major: row-major C = A B is
/// column-major C^T = B^T A^T, so B goes first, and every leading dimension is a row
/// length. Refuses buffers shorter than the shapes and sides past cuBLAS's 32-bit ints.
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
    // SAFETY: the buffers hold at least k x n, m x k and m x n floats (checked
    // above), as cfg says.
    unsafe { blas.gemm(cfg, b, a, c)? };
    Ok(())
}
// ANCHOR_END: sgemm_row_major

/// The rows of an `m`-row product that a sampled check compares, when checking every row
/// would cost too much on the CPU: the first and last, both sides of the 16-, 32- and 128-row
/// block edges near the start and the middle (the tile heights of the book's kernels), and
/// six chosen by `seed`. Sorted, without repeats.
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

/// Refuses a math mode that lets SGEMM round its inputs below FP32.
pub fn math_mode_check(mode: u32) -> anyhow::Result<()> {
    // The low bits name the mode; CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION is a flag.
    let base = mode & 0xF;
    let reduced = [
        cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH as u32,
        cublasMath_t::CUBLAS_FP32_EMULATED_BF16X9_MATH as u32,
    ];
    anyhow::ensure!(
        !reduced.contains(&base),
        "the cuBLAS handle's math mode is {mode}, which lets SGEMM round its inputs below FP32"
    );
    Ok(())
}

/// `NVIDIA_TF32_OVERRIDE=0` forbids TF32 everywhere, which is what the book measures anyway;
/// any other value is refused, since the libraries document only 0.
pub fn tf32_environment_check(
    value: Option<&str>,
) -> Result<(), super::run::UsageError> {
    match value {
        None | Some("0") => Ok(()),
        Some(v) => Err(super::run::UsageError(format!(
            "NVIDIA_TF32_OVERRIDE={v} is set: the book compares FP32 kernels with cuBLAS in \
             FP32; unset it (or set it to 0)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduced_precision_modes_and_overrides_are_refused() {
        assert!(math_mode_check(cublasMath_t::CUBLAS_DEFAULT_MATH as u32).is_ok());
        assert!(math_mode_check(cublasMath_t::CUBLAS_PEDANTIC_MATH as u32).is_ok());
        assert!(
            math_mode_check(cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH as u32).is_err()
        );
        let flagged = cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH as u32
            | cublasMath_t::CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION as u32;
        assert!(math_mode_check(flagged).is_err());
        assert!(tf32_environment_check(None).is_ok());
        assert!(tf32_environment_check(Some("0")).is_ok());
        assert!(tf32_environment_check(Some("1"))
            .unwrap_err()
            .0
            .contains("NVIDIA_TF32"));
    }
}
