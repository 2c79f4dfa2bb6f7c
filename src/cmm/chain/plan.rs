//! What the dynamic program predicts for a chain, and what measuring it will cost: both
//! orders and their multiplications, each order's products in dependency order, and the
//! device memory and time a measurement of both orders needs.

use super::super::dp::{self, validate_dims};
use super::super::error::CmmError;
use super::super::paren::{self, ParenTree};

/// The most device memory one chain's measurement may hold: its inputs and one buffer per product
/// of both orders ([`device_bytes`]).
pub const DEVICE_BYTES_LIMIT: u128 = 4 << 30;

/// The FP32 rate the time budget assumes: about what cuBLAS SGEMM reaches on an H100 at
/// 4096 x 4096 x 4096 with TF32 off. Thin products run slower, which the budget's slack absorbs.
pub const BUDGET_FLOP_PER_S: f64 = 50e12;

/// The longest one run of a chain's costlier order may take at [`BUDGET_FLOP_PER_S`], so that a
/// measurement of every chain, with warm-up and repetitions, stays well under a minute.
pub const MAX_SECONDS_PER_RUN: f64 = 1.0;

/// The order `((A1A2)A3)...An`.
pub fn left_to_right(n: usize) -> ParenTree {
    assert!(n >= 1, "a chain has at least one matrix");
    (2..=n).fold(ParenTree::matrix(1), |product, i| {
        ParenTree::product(product, ParenTree::matrix(i))
            .expect("A1..A(i-1) ends just before Ai")
    })
}

/// What the dynamic program predicts for one chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    pub left_to_right: ParenTree,
    pub optimal: ParenTree,
    /// Scalar multiplications of each order.
    pub left_to_right_mults: u128,
    pub optimal_mults: u128,
}

impl Prediction {
    /// How many times more multiplications left to right needs.
    pub fn ratio(&self) -> f64 {
        self.left_to_right_mults as f64 / self.optimal_mults as f64
    }
}

/// Both orders of `dims` and their costs: the optimum read back from [`dp::solve_serial`]'s table.
pub fn predict(dims: &[u32]) -> Result<Prediction, CmmError> {
    let n = validate_dims(dims)?;
    let table = dp::solve_serial(dims)?;
    let optimal = paren::optimal_tree(&table);
    let left_to_right = left_to_right(n);
    Ok(Prediction {
        left_to_right_mults: left_to_right.cost(dims)?,
        optimal_mults: optimal.cost(dims)?,
        left_to_right,
        optimal,
    })
}

/// Floating-point operations of `mults` multiply-adds, in GFLOP.
pub fn gflop(mults: u128) -> f64 {
    2.0 * mults as f64 / 1e9
}

/// Where an operand of a product comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operand {
    /// Input matrix `A(i+1)`.
    Input(usize),
    /// The result of an earlier product of the schedule.
    Product(usize),
}

/// One product of a schedule: row-major `out (m x n) = left (m x k) right (k x n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Step {
    pub(super) left: Operand,
    pub(super) right: Operand,
    pub(super) m: usize,
    pub(super) k: usize,
    pub(super) n: usize,
}

/// The products of an order, each after the products it reads (post-order), so product `s`
/// reads only inputs and products `< s`, and the last product is the chain's.
pub(super) fn schedule(dims: &[u32], order: &ParenTree) -> Result<Vec<Step>, CmmError> {
    fn visit(tree: &ParenTree, dims: &[u32], steps: &mut Vec<Step>) -> Operand {
        match tree.factors() {
            None => Operand::Input(tree.first() - 1),
            Some((left_tree, right_tree)) => {
                let left = visit(left_tree, dims, steps);
                let right = visit(right_tree, dims, steps);
                let dim = |x: usize| dims[x] as usize;
                steps.push(Step {
                    left,
                    right,
                    m: dim(tree.first() - 1),
                    k: dim(left_tree.last()),
                    n: dim(tree.last()),
                });
                Operand::Product(steps.len() - 1)
            }
        }
    }
    // The cost check also proves that the tree covers exactly A1..An.
    order.cost(dims)?;
    let mut steps = Vec::new();
    visit(order, dims, &mut steps);
    Ok(steps)
}

/// Bytes of the inputs of `dims` in `f32`.
fn input_bytes(dims: &[u32]) -> u128 {
    dims.windows(2).map(|w| 4 * u128::from(w[0]) * u128::from(w[1])).sum()
}

/// Device memory the evaluation of `orders` holds at once: the inputs, plus one buffer per
/// product of every order (what [`ChainEvaluation`](super::device::ChainEvaluation) allocates), in bytes.
pub fn device_bytes(dims: &[u32], orders: &[&ParenTree]) -> Result<u128, CmmError> {
    let mut bytes = input_bytes(dims);
    for order in orders {
        bytes += schedule(dims, order)?
            .iter()
            .map(|s| 4 * (s.m * s.n) as u128)
            .sum::<u128>();
    }
    Ok(bytes)
}

/// What a chain's measurement costs, before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Footprint {
    /// [`device_bytes`] of both orders.
    pub device_bytes: u128,
    /// The largest product either order forms, in bytes.
    pub largest_product_bytes: u128,
    /// FLOP of the costlier order (left to right, since the optimum is never costlier).
    pub worst_order_flop: f64,
}

impl Footprint {
    /// Seconds the costlier order takes at [`BUDGET_FLOP_PER_S`].
    pub fn seconds_at_budget_rate(&self) -> f64 {
        self.worst_order_flop / BUDGET_FLOP_PER_S
    }

    /// Within [`DEVICE_BYTES_LIMIT`] and [`MAX_SECONDS_PER_RUN`].
    pub fn within_budget(&self) -> bool {
        self.device_bytes <= DEVICE_BYTES_LIMIT
            && self.seconds_at_budget_rate() <= MAX_SECONDS_PER_RUN
    }
}

/// The footprint of measuring both orders of `dims`.
pub fn footprint(dims: &[u32]) -> Result<Footprint, CmmError> {
    let p = predict(dims)?;
    let mut largest = 0u128;
    for order in [&p.left_to_right, &p.optimal] {
        largest = schedule(dims, order)?
            .iter()
            .map(|s| 4 * (s.m * s.n) as u128)
            .fold(largest, u128::max);
    }
    Ok(Footprint {
        device_bytes: device_bytes(dims, &[&p.left_to_right, &p.optimal])?,
        largest_product_bytes: largest,
        worst_order_flop: 2.0 * p.left_to_right_mults.max(p.optimal_mults) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::super::chains::{realistic_chains, realistic_chains_quick, NamedChain};
    use super::*;
    use crate::cmm::exercises::left_to_right_cost;

    fn every_chain() -> Vec<NamedChain> {
        let mut chains = realistic_chains(2024);
        chains.extend(realistic_chains_quick(2024));
        chains
    }

    #[test]
    fn the_optimum_never_costs_more_and_matches_the_table() {
        for c in every_chain() {
            let p = predict(&c.dims).unwrap();
            assert!(p.optimal_mults <= p.left_to_right_mults, "{}", c.name);
            assert_eq!(
                p.left_to_right_mults,
                left_to_right_cost(&c.dims),
                "{}",
                c.name
            );
            assert_eq!(
                p.optimal_mults,
                u128::from(dp::solve_serial(&c.dims).unwrap().optimal_cost())
            );
            assert!(p.ratio() >= 1.0);
        }
        let worked = predict(&[1000, 100, 1500, 600, 400]).unwrap();
        assert_eq!(worked.optimal.to_string(), "(A1((A2A3)A4))");
        assert_eq!(worked.optimal_mults, 1232 * 50u128.pow(3));
        assert_eq!(worked.left_to_right.to_string(), "(((A1A2)A3)A4)");
    }

    #[test]
    fn every_chain_fits_the_memory_and_time_budget() {
        let mut table = String::from("chain | n | device GiB | largest product MiB | left-to-right GFLOP | optimal GFLOP | predicted ratio | ms at budget rate\n");
        for c in every_chain() {
            let f = footprint(&c.dims).unwrap();
            let p = predict(&c.dims).unwrap();
            table.push_str(&format!(
                "{} | {} | {:.2} | {:.0} | {:.1} | {:.2} | {:.2} | {:.1}\n",
                c.name,
                c.matrices(),
                f.device_bytes as f64 / (1u64 << 30) as f64,
                f.largest_product_bytes as f64 / (1u64 << 20) as f64,
                gflop(p.left_to_right_mults),
                gflop(p.optimal_mults),
                p.ratio(),
                1e3 * f.seconds_at_budget_rate()
            ));
            assert!(f.within_budget(), "{} is over budget: {f:?}", c.name);
        }
        // Shown with `cargo test -- --nocapture`: the chain list the chapter measures.
        println!("{table}");
    }

    #[test]
    fn device_bytes_counts_inputs_and_one_buffer_per_product() {
        let dims = [20u32, 2, 30, 12, 8];
        let p = predict(&dims).unwrap();
        let inputs = 4 * (20 * 2 + 2 * 30 + 30 * 12 + 12 * 8) as u128;
        // Left to right forms 20x30, 20x12, 20x8; (A1((A2A3)A4)) forms 2x12, 2x8, 20x8.
        assert_eq!(
            device_bytes(&dims, &[&p.left_to_right]).unwrap(),
            inputs + 4 * (600 + 240 + 160)
        );
        assert_eq!(
            device_bytes(&dims, &[&p.optimal]).unwrap(),
            inputs + 4 * (24 + 16 + 160)
        );
        assert_eq!(footprint(&dims).unwrap().largest_product_bytes, 4 * 600);
    }

    #[test]
    fn a_schedule_reads_only_what_it_has_computed() {
        let dims = [7u32, 3, 9, 4, 6, 5];
        for tree in paren::all_parenthesizations(1, 5) {
            let steps = schedule(&dims, &tree).unwrap();
            assert_eq!(steps.len(), 4);
            for (s, step) in steps.iter().enumerate() {
                for o in [step.left, step.right] {
                    if let Operand::Product(j) = o {
                        assert!(j < s, "{tree}: product {s} reads product {j}");
                    }
                }
            }
            let last = steps.last().unwrap();
            assert_eq!((last.m, last.n), (7, 5), "{tree}");
        }
        assert!(
            schedule(&dims, &left_to_right(4)).is_err(),
            "a tree of 4 matrices does not fit 5"
        );
    }
}
