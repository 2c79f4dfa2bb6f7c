//! The tiled matrix multiply's cases for `--counters`: each step at the timed size, with
//! the bytes the tiling model predicts.

use crate::harness::counters::{Case, Quantity};

use super::model::{flops, Step};

/// `step` on an `m × n × k` multiply: device memory must at least read A and B and write C
/// once (L2 serves every re-read); the global loads ask for the model's bytes per FLOP.
pub fn step_case(step: Step, (m, n, k): (usize, usize, usize)) -> Case {
    let compulsory = 4.0 * (m * k + k * n + m * n) as f64;
    let case = Case::new(format!("{} {m}x{n}x{k}", step.label()))
        .predict(Quantity::DramBytes, compulsory);
    match step.global_bytes_per_flop() {
        Some(per_flop) => {
            case.predict(Quantity::GlobalLoadBytes, per_flop * flops(m, n, k))
        }
        None => case,
    }
}
