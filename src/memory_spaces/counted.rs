//! The chapter's cases for `--counters`: the global pointer chase at each footprint, and
//! the L2 hit rate the cache's capacity predicts for it.

use crate::harness::counters::{Case, Quantity};

/// A chase of `steps` dependent loads, one per 128-byte line, over `footprint` bytes,
/// starting with an empty L2 of `l2_bytes` (the counters flush it). The model: while the
/// footprint fits in L2, only the first touch of each line misses; beyond it, a random
/// chain finds its line in L2 with the probability that L2 holds it, `l2_bytes /
/// footprint`. The counted rate shows where the model's single 50 MiB cache breaks.
pub fn chase_case(footprint: usize, steps: u64, l2_bytes: usize) -> Case {
    let lines = (footprint / 128) as f64;
    let steps_f = steps as f64;
    let hit = if footprint <= l2_bytes {
        100.0 * (steps_f - lines.min(steps_f)) / steps_f
    } else {
        100.0 * l2_bytes as f64 / footprint as f64
    };
    Case::new(format!("global chase, {}", footprint_text(footprint)))
        .predict(Quantity::L2HitPercent, hit)
}

fn footprint_text(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hit_rate_model() {
        let l2 = 50 << 20;
        let c = chase_case(1 << 20, 100_000, l2);
        // 8192 first touches out of 100 000 loads.
        assert!((c.predictions[0].1 - 91.808).abs() < 1e-9);
        assert_eq!(chase_case(100 << 20, 100_000, l2).predictions[0].1, 50.0);
        assert_eq!(c.label, "global chase, 1 MiB");
    }
}
