//! The section "A matrix multiply fed by cp.async": the FP32 multiplies of
//! `kernels/hopper_sgemm.cu` and `hopper_sgemm_warp.cu` — step 6's layout with 2, 3 and 4
//! stages of `cp.async` in flight, and the warp-tiled kernels (A k-major, the slice unrolled, 128 x 128 or
//! 128 x 256 tiles, slices of 8 or 16, registers or `cp.async` stages) — beside the
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
use crate::harness::sections::Plan;
use crate::harness::timing::Plan as Timing;

use crate::harness::{Gpu, Run, Stats, L2};
use crate::tiling::device::{self as tiling, Kernels, Operands};
use crate::tiling::model::Step;
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

/// How a kernel's slices reach shared memory, which decides the GPUs that run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feed {
    /// Loads into registers, then stores (`hopper_sgemm_warp.cu`, any GPU).
    Registers,
    /// `cp.async` for one operand or both (`hopper_sgemm.cu`, 8.0).
    CpAsync,
}

/// One kernel of the section: its function, the columns of its block tile (its rows
/// are always 128), its k slice, its stages, the shared memory it asks for and how its
/// slices arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub kernel: K,
    pub bn: usize,
    pub bk: usize,
    pub stages: usize,
    pub shared_bytes: usize,
    pub feed: Feed,
}

/// Step 6's layout with `stages` cp.async stages.
const fn staged(kernel: K, stages: usize) -> Variant {
    let shared_bytes = stages * STAGE_BYTES;
    Variant { kernel, bn: TILE, bk: SLICE, stages, shared_bytes, feed: Feed::CpAsync }
}

/// A warp-tiled kernel: per stage, A as (k, 128 + 4 padding) and B as (k, `bn`).
const fn warp(kernel: K, bn: usize, bk: usize, stages: usize, feed: Feed) -> Variant {
    let shared_bytes = 4 * stages * bk * (TILE + 4 + bn);
    Variant { kernel, bn, bk, stages, shared_bytes, feed }
}

/// The most shared memory one block of the kernels fed by `feed` asks for: what a GPU
/// must let a block opt in to for that half of the section.
pub const fn shared_needed(feed: Feed) -> usize {
    let (mut most, mut i) = (0, 0);
    while i < KERNELS.len() {
        let v = KERNELS[i];
        // `==` on an enum is not const: compare the discriminants.
        if v.feed as u8 == feed as u8 && v.shared_bytes > most {
            most = v.shared_bytes;
        }
        i += 1;
    }
    most
}

/// The kernel files of the section: the warp-tiled kernels fed through registers (any
/// GPU), then those fed by `cp.async` (8.0).
pub const FILES: [&str; 2] = ["hopper_sgemm_warp.cu", "hopper_sgemm.cu"];

/// Every kernel of the section, checked and timed at every size.
pub const KERNELS: [Variant; 11] = [
    staged(K::Sgemm2, 2),
    staged(K::Sgemm3, 3),
    staged(K::Sgemm4, 4),
    warp(K::Warp128K8, 128, 8, 2, Feed::Registers),
    warp(K::Warp128K8Cp3, 128, 8, 3, Feed::CpAsync),
    warp(K::Warp128K8Bcp, 128, 8, 2, Feed::CpAsync),
    warp(K::Warp256K8, 256, 8, 2, Feed::Registers),
    warp(K::Warp256K8Bcp, 256, 8, 2, Feed::CpAsync),
    warp(K::Warp256K16, 256, 16, 2, Feed::Registers),
    warp(K::Warp256K16Bcp, 256, 16, 2, Feed::CpAsync),
    warp(K::Warp256K16All, 256, 16, 2, Feed::Registers),
];

/// One timed multiply.
#[derive(Debug, Clone)]
pub struct SgemmRun {
    pub size: (usize, usize, usize),
    pub kernel: String,
    pub time: Stats,
}

/// What the compiler, the occupancy calculator and the machine code say about one
/// kernel. The loop counts are those of the main loop's SASS (the loop with the most
/// FFMA), `None` without `ptxas`/`nvdisasm`; the loop holds both load paths (16-byte and
/// 4-byte), of which one runs.
#[derive(Debug, Clone)]
pub struct SgemmCode {
    pub kernel: String,
    pub registers: i32,
    pub spill_bytes: i32,
    pub shared_bytes: usize,
    pub blocks_per_sm: u32,
    pub loop_census: Option<LoopCensus>,
}

/// Instructions of a kernel's main loop: all, the fused multiply-adds, the shared loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopCensus {
    pub instructions: usize,
    pub ffma: usize,
    pub shared_loads: usize,
}

/// Counts the main loop of `f`: the loop with the most `FFMA`.
pub fn loop_census(f: &crate::harness::sass::Function) -> Option<LoopCensus> {
    let body = f.busiest_loop(|i| i.base() == "FFMA")?;
    Some(LoopCensus {
        instructions: body.len(),
        ffma: body.iter().filter(|i| i.base() == "FFMA").count(),
        shared_loads: body.iter().filter(|i| i.base() == "LDS").count(),
    })
}

fn cfg((m, n): (usize, usize), v: Variant) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(v.bn) as u32, m.div_ceil(TILE) as u32, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: v.shared_bytes as u32,
    }
}

/// The part of [`crate::hopper_memory::SECTIONS`] a kernel fed by `feed` belongs to.
pub fn part(feed: Feed) -> &'static str {
    match feed {
        Feed::Registers => crate::hopper_memory::SGEMM_REGISTERS,
        Feed::CpAsync => crate::hopper_memory::SGEMM_CP_ASYNC,
    }
}

/// The kernels of the section that `plan` runs, in [`KERNELS`]' order.
pub fn runnable(plan: &Plan) -> Vec<Variant> {
    KERNELS.into_iter().filter(|v| plan.runs(part(v.feed))).collect()
}

/// Loads the chapter's kernels and lets each of `variants` ask for its stages' shared
/// memory (several need more than the 48 KiB a launch gets without asking).
pub fn prepare(gpu: &Gpu, variants: &[Variant]) -> anyhow::Result<KernelTable<K>> {
    let table = KernelTable::<K>::load(gpu)?;
    for v in variants {
        table.get(v.kernel).set_attribute(
            CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            v.shared_bytes as i32,
        )?;
    }
    Ok(table)
}

/// Enqueues `C = A B` with kernel `f` of variant `v`: one block per 128 x `v.bn` tile.
pub fn launch(
    f: &CudaFunction,
    v: Variant,
    stream: &Arc<CudaStream>,
    ops: &mut Operands,
) -> anyhow::Result<()> {
    let (m, n, k) = (ops.m as i32, ops.n as i32, ops.k as i32);
    // SAFETY: every kernel of hopper_sgemm.cu and hopper_sgemm_warp.cu is (a, b, c, M, N, K), launched with the
    // shared memory of its variant; each bound-checks every index.
    unsafe {
        stream
            .launch_builder(f)
            .arg(&ops.a)
            .arg(&ops.b)
            .arg(&mut ops.c)
            .arg(&m)
            .arg(&n)
            .arg(&k)
            .launch(cfg((ops.m, ops.n), v))?
    };
    Ok(())
}

/// Compares the reference's rows of `got` within the tiling chapter's K-scaled
/// tolerance; every element must be finite (the poison is NaN).
pub use crate::tiling::device::check_rows as check;

/// Poisons C, runs the kernel once, checks it; then times it under each of `plans`.
pub fn verify_then_time(
    gpu: &Gpu,
    v: Variant,
    ops: &mut Operands,
    reference: &Reference,
    table: &KernelTable<K>,
    plans: &[Timing],
) -> anyhow::Result<Vec<Stats>> {
    let f = table.get(v.kernel);
    let name = v.kernel.function();
    let v = gpu.verify_then_time(
        ops,
        |gpu, ops| gpu.poison(&mut ops.c),
        |s, ops| launch(f, v, s, ops),
        |gpu, ops| {
            let got = gpu.stream.clone_dtoh(&ops.c)?;
            Ok(check(&name, ops, &got, reference)?)
        },
        plans,
    )?;
    Ok(v.times)
}

/// The kernels `--counters` counts (with cuBLAS and step 6) at the first power-of-two
/// size and the first odd one: the three-stage kernel of step 6's layout and two
/// warp-tiled kernels.
pub const COUNTED: [K; 3] = [K::Sgemm3, K::Warp128K8, K::Warp256K16];

/// `label` on an `m × n × k` multiply: DRAM must at least read A and B and write C once;
/// the warps must at least issue the `m n k` fused multiply-adds, 32 per instruction (the
/// counted instructions over this are the instructions issued per useful multiply-add).
fn case(label: &str, (m, n, k): (usize, usize, usize)) -> Case {
    Case::new(format!("{label} {m}x{n}x{k}"))
        .predict(Quantity::DramBytes, 4.0 * (m * k + k * n + m * n) as f64)
        .predict(Quantity::BankConflicts, 0.0)
        .predict(Quantity::Instructions, (m * n * k) as f64 / 32.0)
}

/// Checks every kernel that `plan` runs at the odd sizes, then verifies and times all of
/// them, cuBLAS and step 6 at each timed size.
pub fn measure(run: &Run, plan: &Plan, r: &mut Results) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let kernels = runnable(plan);
    let table = prepare(gpu, &kernels)?;
    let tiled = Kernels::load(gpu)?;
    let timing = Timing::new(2, run.reps(), L2::Cold);
    // `--quick` (the sanitizers' mode) keeps the small odd sizes: under racecheck every
    // shared-memory access is tracked, and 1000 × 1003 × 517 alone would take minutes.
    let checked =
        CHECKED.iter().filter(|(m, n, k)| !run.quick || m * n * k < 10_000_000);
    for (i, &size) in checked.enumerate() {
        let mut ops = Operands::new(gpu, size, run.seed + 100 + i as u64)?;
        let reference = Reference::for_operands(&ops, run.seed);
        for &kernel in &kernels {
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
            if counted {
                let label = if step == Step::Cublas { "cuBLAS" } else { "step 6" };
                gpu.count_next(case(label, size));
            }
            let v = tiling::verify_then_time(
                gpu,
                &tiled,
                step,
                &mut ops,
                &reference,
                &[timing],
            )?;
            r.sgemm.push(SgemmRun {
                size,
                kernel: step.label().into(),
                time: v.time().clone(),
            });
        }
        for &v in &kernels {
            let name = v.kernel.function();
            if counted && COUNTED.contains(&v.kernel) {
                gpu.count_next(case(&name, size));
            }
            let times =
                verify_then_time(gpu, v, &mut ops, &reference, &table, &[timing])?;
            r.sgemm.push(SgemmRun { size, kernel: name, time: times[0].clone() });
        }
    }
    // The machine code of each file this GPU loaded (the kernels are in two).
    let tools = crate::harness::sass::Tools::find();
    let mut sass = Vec::new();
    for file in FILES {
        if let (Some(t), Some(module)) = (&tools, table.try_module(file)) {
            sass.push(t.disassemble(&module.ptx, "sm_90")?);
        }
    }
    for &v in &kernels {
        let f = table.get(v.kernel);
        let name = v.kernel.function();
        r.sgemm_code.push(SgemmCode {
            kernel: name.clone(),
            registers: f.num_regs()?,
            spill_bytes: f.local_size_bytes()?,
            shared_bytes: v.shared_bytes,
            blocks_per_sm: f.occupancy_max_active_blocks_per_multiprocessor(
                THREADS,
                v.shared_bytes,
                None,
            )?,
            loop_census: sass
                .iter()
                .find_map(|s| s.function(&name))
                .and_then(loop_census),
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

/// Where the warp-tiled kernels put things, on the CPU, with the kernel's index
/// arithmetic: the stage slots thread `tid` stores A's and B's elements to (A as
/// (k, row) with row pitch 132, then B as (k, column)), and the (row, column) of the
/// block tile its result (i, j) belongs to.
pub mod warp_layout {
    pub const A_LD: usize = super::TILE + 4;

    /// Slots of a stage that thread `tid` writes for a slice of `bk` and tiles of `bn`.
    pub fn stage_slots(tid: usize, bk: usize, bn: usize) -> Vec<usize> {
        let mut slots = Vec::new();
        for j in 0..bk / 8 {
            for q in 0..4 {
                let k = (tid % 2) * 4 + 8 * j + q;
                slots.push(k * A_LD + tid / 2);
            }
        }
        let lanes = bn / 4;
        for j in 0..bk * bn / 1024 {
            let k = tid / lanes + (256 / lanes) * j;
            for q in 0..4 {
                slots.push(bk * A_LD + k * bn + (tid % lanes) * 4 + q);
            }
        }
        slots
    }

    /// The element of the block tile that thread `tid`'s result (i, j) is, 8 x `bn`/16.
    pub fn result(tid: usize, bn: usize, (i, j): (usize, usize)) -> (usize, usize) {
        let (warp, lane) = (tid / 32, tid % 32);
        let a_off = (warp / 2) * 32 + (lane / 8) * 4;
        let b_off = (warp % 2) * (bn / 2) + (lane % 8) * 4;
        (a_off + (i / 4) * 16 + i % 4, b_off + 32 * (j / 4) + j % 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::inputs::random_f32;
    use crate::harness::verify::check_close;
    use crate::tiling::model;
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

    #[test]
    fn the_warp_tiles_store_every_slot_once_and_own_every_result_once() {
        use super::warp_layout::{result, stage_slots, A_LD};
        for (bk, bn) in [(8, 128), (16, 128), (8, 256), (16, 256)] {
            let mut writes = vec![0u8; bk * (A_LD + bn)];
            for tid in 0..THREADS as usize {
                for s in stage_slots(tid, bk, bn) {
                    writes[s] += 1;
                }
            }
            for (slot, &w) in writes.iter().enumerate() {
                let padding = slot < bk * A_LD && slot % A_LD >= TILE;
                assert_eq!(w, u8::from(!padding), "bk {bk} bn {bn} slot {slot}");
            }
            let mut owned = vec![0u8; TILE * bn];
            for tid in 0..THREADS as usize {
                for i in 0..8 {
                    for j in 0..bn / 16 {
                        let (r, c) = result(tid, bn, (i, j));
                        owned[r * bn + c] += 1;
                    }
                }
            }
            assert!(owned.iter().all(|&o| o == 1), "bk {bk} bn {bn}");
        }
    }

    #[test]
    fn a_warps_transposed_stores_hit_32_banks() {
        // One store instruction (fixed j and q) of the 32 lanes of a warp: A's k = 0
        // and k = 4 rows lie 16 banks apart, so 32 lanes hit 32 distinct banks.
        use super::warp_layout::stage_slots;
        for warp in 0..8 {
            for store in 0..4 {
                let mut banks: Vec<usize> = (warp * 32..warp * 32 + 32)
                    .map(|tid| stage_slots(tid, 8, 128)[store] % 32)
                    .collect();
                banks.sort_unstable();
                banks.dedup();
                assert_eq!(banks.len(), 32, "warp {warp} store {store}");
            }
        }
    }
}
