//! The section "The matrix multiply with cp.async stages": the FP32 multiply of
//! `kernels/hopper_sgemm.cu` with 2, 3 and 4 stages of `cp.async` in flight, beside the
//! tiling chapter's step 6 and cuBLAS SGEMM, on the same operands in the same run. Every
//! product is checked against the CPU's double-precision rows before it is timed: all
//! rows at the small odd sizes, sampled rows at the large ones.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

use super::measure::Results;
use super::HopperKernel as K;
use crate::harness::counters::{Case, Quantity};
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::timing::Plan;
use crate::harness::verify::{self, Mismatch, Report};
use crate::harness::{Gpu, Run, Stats, L2};
use crate::tiling::device::{self as tiling, Kernels, Operands};
use crate::tiling::model::{self, Step};
use crate::tiling::reference::Reference;

/// The block tile (rows x columns of C), the k slice, threads per block.
pub const TILE: usize = 128;
pub const SLICE: usize = 16;
pub const THREADS: u32 = 256;
/// Shared memory of one stage: A (128 rows x (16 + 4 padding)) and B (16 x 128) floats.
pub const STAGE_BYTES: usize = 4 * (TILE * (SLICE + 4) + SLICE * TILE);

/// Timed sizes (M, N, K): powers of two, sides one above and one below (K not a
/// multiple of 4: the 4-byte copies), and a rectangle that is no multiple of the tile
/// (K and N multiples of 4: the 16-byte copies).
pub const SIZES: [(usize, usize, usize); 5] = [
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (4097, 4097, 4097),
    (8191, 8191, 8191),
    (3000, 12000, 2500),
];
/// Sizes checked element by element and not timed: odd, prime-ish, smaller than one tile
/// in some direction, K of 1.
pub const CHECKED: [(usize, usize, usize); 4] =
    [(61, 67, 71), (1000, 1003, 517), (130, 5, 129), (257, 260, 1)];
/// The sizes of `--quick` (timed too).
pub const QUICK_SIZES: [(usize, usize, usize); 2] = [(256, 256, 256), (253, 259, 127)];

/// The cp.async kernels: stages and kernel.
pub const KERNELS: [(u32, K); 3] = [(2, K::Sgemm2), (3, K::Sgemm3), (4, K::Sgemm4)];

/// One timed multiply.
#[derive(Debug, Clone)]
pub struct SgemmRun {
    pub size: (usize, usize, usize),
    pub kernel: String,
    pub time: Stats,
}

/// What the compiler and the occupancy calculator say about one kernel.
#[derive(Debug, Clone)]
pub struct SgemmCode {
    pub kernel: String,
    pub registers: i32,
    pub spill_bytes: i32,
    pub shared_bytes: usize,
    pub blocks_per_sm: u32,
}

fn cfg((m, n): (usize, usize), stages: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: stages * STAGE_BYTES as u32,
    }
}

/// Loads the chapter's kernels and lets each ask for its stages' shared memory (3 and 4
/// stages need more than the 48 KiB a launch gets without asking).
pub fn prepare(gpu: &Gpu) -> anyhow::Result<KernelTable<K>> {
    let table = KernelTable::<K>::load(gpu)?;
    for (stages, k) in KERNELS {
        table.get(k).set_attribute(
            CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            (stages as usize * STAGE_BYTES) as i32,
        )?;
    }
    Ok(table)
}

/// Enqueues `C = A B` with the `stages`-stage kernel `f`: one block per 128 x 128 tile.
pub fn launch(
    f: &CudaFunction,
    stages: u32,
    stream: &Arc<CudaStream>,
    ops: &mut Operands,
) -> anyhow::Result<()> {
    let (m, n, k) = (ops.m as i32, ops.n as i32, ops.k as i32);
    // SAFETY: sgemm_cp_async_S(a, b, c, M, N, K) with the shared memory of S stages; the
    // kernel bound-checks every index.
    unsafe {
        stream
            .launch_builder(f)
            .arg(&ops.a)
            .arg(&ops.b)
            .arg(&mut ops.c)
            .arg(&m)
            .arg(&n)
            .arg(&k)
            .launch(cfg((ops.m, ops.n), stages))?
    };
    Ok(())
}

/// Compares the reference's rows of `got` within the tiling chapter's K-scaled
/// tolerance; every element must be finite (the poison is NaN).
pub fn check(
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

/// Poisons C, runs the kernel once, checks it; then times it under each of `plans`.
pub fn verify_then_time(
    gpu: &Gpu,
    (stages, k): (u32, K),
    ops: &mut Operands,
    reference: &Reference,
    table: &KernelTable<K>,
    plans: &[Plan],
) -> anyhow::Result<Vec<Stats>> {
    let f = table.get(k);
    let name = k.function();
    let v = gpu.verify_then_time(
        ops,
        |gpu, ops| gpu.poison(&mut ops.c),
        |s, ops| launch(f, stages, s, ops),
        |gpu, ops| {
            let got = gpu.stream.clone_dtoh(&ops.c)?;
            Ok(check(&name, ops, &got, reference)?)
        },
        plans,
    )?;
    Ok(v.times)
}

/// `label` on an `m × n × k` multiply: DRAM must at least read A and B and write C once.
fn case(label: &str, (m, n, k): (usize, usize, usize)) -> Case {
    Case::new(format!("{label} {m}x{n}x{k}"))
        .predict(Quantity::DramBytes, 4.0 * (m * k + k * n + m * n) as f64)
        .predict(Quantity::BankConflicts, 0.0)
}

/// Checks every kernel at the odd sizes, then verifies and times all of them, cuBLAS
/// and step 6 at each timed size.
pub fn measure(run: &Run, r: &mut Results) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let table = prepare(gpu)?;
    let tiled = Kernels::load(gpu)?;
    let plan = Plan::new(2, run.reps(), L2::Cold);
    // `--quick` (the sanitizers' mode) keeps the small odd sizes: under racecheck every
    // shared-memory access is tracked, and 1000 × 1003 × 517 alone would take minutes.
    let checked =
        CHECKED.iter().filter(|(m, n, k)| !run.quick || m * n * k < 10_000_000);
    for (i, &size) in checked.enumerate() {
        let mut ops = Operands::new(gpu, size, run.seed + 100 + i as u64)?;
        let reference = Reference::for_operands(&ops, run.seed);
        for kernel in KERNELS {
            verify_then_time(gpu, kernel, &mut ops, &reference, &table, &[])?;
        }
        r.sgemm_checked.push(size);
    }
    let sizes: &[(usize, usize, usize)] = if run.quick { &QUICK_SIZES } else { &SIZES };
    for (i, &size) in sizes.iter().enumerate() {
        let mut ops = Operands::new(gpu, size, run.seed + 200 + i as u64)?;
        let reference = Reference::for_operands(&ops, run.seed);
        // Counted: the first (power-of-two) size and the first odd one.
        let counted = i == 0 || i == 2;
        for step in [Step::Cublas, Step::QuadDoubleBuffer] {
            if counted && step == Step::QuadDoubleBuffer {
                gpu.count_next(case("step 6", size));
            }
            let v = tiling::verify_then_time(
                gpu,
                &tiled,
                step,
                &mut ops,
                &reference,
                &[plan],
            )?;
            r.sgemm.push(SgemmRun {
                size,
                kernel: step.label().into(),
                time: v.time().clone(),
            });
        }
        for kernel in KERNELS {
            let name = kernel.1.function();
            if counted && kernel.0 == 3 {
                gpu.count_next(case(&name, size));
            }
            let times =
                verify_then_time(gpu, kernel, &mut ops, &reference, &table, &[plan])?;
            r.sgemm.push(SgemmRun { size, kernel: name, time: times[0].clone() });
        }
    }
    for (stages, k) in KERNELS {
        let f = table.get(k);
        let shared = stages as usize * STAGE_BYTES;
        r.sgemm_code.push(SgemmCode {
            kernel: k.function(),
            registers: f.num_regs()?,
            spill_bytes: f.local_size_bytes()?,
            shared_bytes: shared,
            blocks_per_sm: f.occupancy_max_active_blocks_per_multiprocessor(
                THREADS, shared, None,
            )?,
        });
    }
    Ok(())
}

/// One stage as the kernel's copies fill it, on the CPU: A's slice (128 rows x 16 k, row
/// pitch 20) and B's (16 k x 128 columns) for the block at (`block_row`, `block_col`) and
/// the slice at `k0`, walked thread by thread with `load_stage`'s index arithmetic; what
/// lies outside the matrices is 0 (zero-fill). The third value counts the writes to each
/// slot of the stage: every slot that the compute reads must be written exactly once.
pub fn stage_model(
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
    (block_row, block_col, k0): (usize, usize, usize),
) -> (Vec<f32>, Vec<f32>, Vec<u8>) {
    let a_ld = SLICE + 4;
    let mut a_tile = vec![f32::NAN; TILE * a_ld];
    let mut b_tile = vec![f32::NAN; SLICE * TILE];
    let mut writes = vec![0u8; TILE * a_ld + SLICE * TILE];
    for tid in 0..THREADS as usize {
        for j in 0..2 {
            let (r, kq) = (tid / 4 + 64 * j, (tid % 4) * 4);
            for q in 0..4 {
                let (row, kk) = (block_row + r, k0 + kq + q);
                let slot = r * a_ld + kq + q;
                a_tile[slot] = if row < m && kk < k { a[row * k + kk] } else { 0.0 };
                writes[slot] += 1;
            }
            let (kb, nq) = (tid / 32 + 8 * j, (tid % 32) * 4);
            for q in 0..4 {
                let (kk, col) = (k0 + kb, block_col + nq + q);
                let slot = kb * TILE + nq + q;
                b_tile[slot] = if kk < k && col < n { b[kk * n + col] } else { 0.0 };
                writes[TILE * a_ld + slot] += 1;
            }
        }
    }
    (a_tile, b_tile, writes)
}

/// The whole product as the kernel computes it, on the CPU: stage by stage, each
/// thread's 8 x 8 quadrant results by fused multiply-adds in the kernel's order, written
/// back only inside C. For small sizes (tests).
pub fn model_product(
    a: &[f32],
    b: &[f32],
    (m, n, k): (usize, usize, usize),
) -> Vec<f32> {
    let mut c = vec![f32::NAN; m * n];
    let a_ld = SLICE + 4;
    let quad = |t: usize, i: usize| if i < 4 { t * 4 + i } else { 64 + t * 4 + i - 4 };
    for block_row in (0..m).step_by(TILE) {
        for block_col in (0..n).step_by(TILE) {
            let mut acc = vec![[[0f32; 8]; 8]; THREADS as usize];
            for k0 in (0..k).step_by(SLICE) {
                let (at, bt, _) =
                    stage_model(a, b, (m, n, k), (block_row, block_col, k0));
                for (tid, acc) in acc.iter_mut().enumerate() {
                    let (tr, tc) = (tid / 16, tid % 16);
                    for kk in 0..SLICE {
                        for (i, row) in acc.iter_mut().enumerate() {
                            let av = at[quad(tr, i) * a_ld + kk];
                            for (j, x) in row.iter_mut().enumerate() {
                                *x = av.mul_add(bt[kk * TILE + quad(tc, j)], *x);
                            }
                        }
                    }
                }
            }
            for (tid, acc) in acc.iter().enumerate() {
                let (tr, tc) = (tid / 16, tid % 16);
                for (i, row) in acc.iter().enumerate() {
                    for (j, &x) in row.iter().enumerate() {
                        let (r, col) =
                            (block_row + quad(tr, i), block_col + quad(tc, j));
                        if r < m && col < n {
                            c[r * n + col] = x;
                        }
                    }
                }
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::inputs::random_f32;
    use crate::harness::verify::check_close;
    use crate::tiling::reference::reference_rows;

    #[test]
    fn every_slot_of_a_stage_is_copied_once() {
        let (m, n, k) = (130, 131, 19);
        let a = random_f32(m * k, 1);
        let b = random_f32(k * n, 2);
        let a_ld = SLICE + 4;
        for origin in [(0, 0, 0), (128, 128, 16)] {
            let (at, bt, writes) = stage_model(&a, &b, (m, n, k), origin);
            for r in 0..TILE {
                for kk in 0..SLICE {
                    assert_eq!(writes[r * a_ld + kk], 1, "A ({r}, {kk})");
                    assert!(at[r * a_ld + kk].is_finite());
                }
                // the padding is never written, never read
                assert!(writes[r * a_ld + SLICE..(r + 1) * a_ld]
                    .iter()
                    .all(|&w| w == 0));
            }
            assert!(writes[TILE * a_ld..].iter().all(|&w| w == 1), "B");
            assert!(bt.iter().all(|x| x.is_finite()));
        }
        // Past the edges: row 130 of A, k 19 and column 131 of B are zeros.
        let (at, bt, _) = stage_model(&a, &b, (m, n, k), (128, 128, 16));
        assert_eq!(at[2 * a_ld], 0.0, "row 130 is past M");
        assert_eq!(at[3], 0.0, "k = 19 is past K");
        assert_eq!(at[2], a[128 * k + 18], "k = 18 is inside");
        assert_eq!(bt[3], 0.0, "column 131 is past N");
        assert_eq!(bt[3 * TILE], 0.0, "k = 19 is past K");
    }

    #[test]
    fn the_kernels_walk_matches_the_reference_at_odd_sizes() {
        for (i, &dims) in
            [(1, 1, 1), (61, 67, 71), (130, 5, 129), (257, 131, 3)].iter().enumerate()
        {
            let (m, n, k) = dims;
            let a = random_f32(m * k, 10 + i as u64);
            let b = random_f32(k * n, 20 + i as u64);
            let got = model_product(&a, &b, dims);
            let rows: Vec<usize> = (0..m).collect();
            let want = reference_rows(&a, &b, (n, k), &rows);
            check_close(
                "model",
                &format!("{m}x{n}x{k}"),
                &got,
                &want,
                model::tolerance(k),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
