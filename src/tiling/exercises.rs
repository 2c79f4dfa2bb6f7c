//! Solutions of the chapter's exercises; `tests/cpu/tiling_cpu.rs` checks them. The check of the
//! kernel exercise is here too.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::device::{self, Operands};
use super::legality::{all_orders, check_order, BadNest, Verdict};
use super::model::Step;
use super::reference::Reference;
use crate::harness::exercise::{check_sizes, Passed, Version};
use crate::harness::{Gpu, Mismatch};

// ANCHOR: legal_orders
/// Exercise 1: every order of a loop nest (as in [`check_order`]) that keeps all
/// dependences `distances` lexicographically positive.
pub fn legal_orders(
    distances: &[Vec<i64>],
    depth: usize,
) -> Result<Vec<Vec<usize>>, BadNest> {
    let mut legal = Vec::new();
    for order in all_orders(depth) {
        if check_order(distances, &order)? == Verdict::Legal {
            legal.push(order);
        }
    }
    Ok(legal)
}
// ANCHOR_END: legal_orders

// ANCHOR: smallest_tile
/// Exercise 2: the smallest square block tile T for which a multiply whose every block
/// reads its operands from memory (4 / T bytes per FLOP) is no longer limited by
/// bandwidth: `4 / T <= bandwidth / flop_rate`.
pub fn smallest_square_tile(bandwidth_gb_s: f64, gflop_s: f64) -> usize {
    assert!(bandwidth_gb_s > 0.0 && gflop_s > 0.0);
    let bytes_per_flop = bandwidth_gb_s / gflop_s;
    let mut t = 1;
    while 4.0 / t as f64 > bytes_per_flop {
        t += 1;
    }
    t
}
// ANCHOR_END: smallest_tile

crate::exercise_kernels! {
    /// The kernels of exercise 4.3 (`kernels/exercises_tiling.cu`).
    pub enum MatmulTile in "exercises_tiling.cu" {
        /// The tiled multiply the reader starts from.
        Exercise => "matmul_tile_exercise",
        /// The book's solution.
        Solution => "matmul_tile_solution",
    }
}

/// The products (M x N x K) exercise 4.3 is checked at: the chapter's sizes, which leave a
/// partial tile in every dimension.
pub const MATMUL_TILE_SIZES: [(usize, usize, usize); 4] =
    [(1, 1, 1), (7, 5, 3), (127, 129, 131), (1000, 1003, 517)];

/// Exercise 4.3: runs one version of the tiled multiply through the chapter's check at every
/// size of [`MATMUL_TILE_SIZES`]: C poisoned, one launch, then the chapter's comparison
/// ([`device::check`]): every element finite, and within the chapter's tolerance of the
/// double-precision reference.
pub fn check_matmul_tile(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    const TILE: usize = 16;
    check_sizes::<MatmulTile, _>(
        gpu,
        version,
        MATMUL_TILE_SIZES,
        |f, name, (m, n, k)| {
            let seed = (m * n * k) as u64;
            let mut ops = Operands::new(gpu, (m, n, k), seed)?;
            let reference = Reference::for_operands(&ops, seed);
            let cfg = LaunchConfig {
                grid_dim: (n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32, 1),
                block_dim: (TILE as u32, TILE as u32, 1),
                shared_mem_bytes: 0,
            };
            let (m32, n32, k32) = (m as i32, n as i32, k as i32);
            let verified = gpu.verify_then_time(
                &mut ops,
                |gpu, ops| gpu.poison(&mut ops.c),
                |s, ops| {
                    // SAFETY: (const float* a, const float* b, float* c, int M, int N,
                    // int K) with buffers of M K, K N and M N floats; the kernels
                    // bound-check every index.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&ops.a)
                            .arg(&ops.b)
                            .arg(&mut ops.c)
                            .arg(&m32)
                            .arg(&n32)
                            .arg(&k32)
                            .launch(cfg)?
                    };
                    Ok(())
                },
                |gpu, ops| {
                    let got = gpu.stream.clone_dtoh(&ops.c)?;
                    // The chapter's own comparison (Listing 7), with this kernel's name.
                    let checked = device::check(Step::Tiled16, ops, &got, &reference);
                    Ok(checked.map_err(|mismatch| Mismatch {
                        kernel: name.to_string(),
                        ..mismatch
                    })?)
                },
                &[],
            )?;
            Ok((ops.size(), verified.check.checked))
        },
    )
}
