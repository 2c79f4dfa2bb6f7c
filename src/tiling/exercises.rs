//! Solutions of the chapter's exercises; `tests/tiling_cpu.rs` checks them.

use super::legality::{all_orders, check_order, BadNest, Verdict};

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
