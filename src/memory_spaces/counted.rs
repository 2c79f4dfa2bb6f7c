//! The chapter's cases for `--counters`: the global pointer chase at each footprint, and
//! the L2 hit rate the cache's capacity predicts for it; and the constant-memory walk at a
//! few numbers of distinct addresses, whose stall reasons say what a warp waits for.

use crate::harness::counters::{Case, Quantity};

/// Loads of the counted chase over `footprint` bytes: at least four visits of every line,
/// so that what L2 keeps is hit again (the timed chase's `steps` are too few for that above
/// a few MiB, and the counters start from a flushed L2).
pub fn chase_steps(footprint: usize, steps: u64) -> u64 {
    steps.max(4 * (footprint / 128) as u64)
}

/// A chase of `steps` dependent loads, one per 128-byte line, over `footprint` bytes,
/// starting with an empty L2 of `l2_bytes` (the counters flush it). The model: the first
/// visit of each line misses; while the footprint fits in L2 every later visit hits; beyond
/// it, a random chain finds its line in L2 with the probability that L2 holds it,
/// `l2_bytes / footprint`. The counted rate shows where a single 50 MiB cache is the wrong
/// model.
pub fn chase_case(footprint: usize, steps: u64, l2_bytes: usize) -> Case {
    let lines = (footprint / 128) as f64;
    let steps_f = steps as f64;
    let revisits = (steps_f - lines.min(steps_f)) / steps_f;
    let kept = (l2_bytes as f64 / footprint as f64).min(1.0);
    Case::new(format!("global chase, {}", footprint_text(footprint)))
        .predict(Quantity::L2HitPercent, 100.0 * revisits * kept)
}

/// Distinct addresses per warp load at which the spaced constant walk is counted: the
/// broadcast, the first steps of the superlinear fall, and a different word per lane.
pub const SPACED_WALK_DISTINCTS: [u32; 4] = [1, 2, 3, 32];

/// The spaced constant walk with `distinct` addresses per warp load. It carries no
/// prediction: its machine code is the same at every `distinct` (a run-time argument), and
/// the question the case answers — whether warps wait on constant-cache misses (the
/// `imc_miss` stall) more than in proportion to `distinct` — is one the chapter's model
/// leaves open.
pub fn spaced_walk_case(spacing: &str, distinct: u32) -> Case {
    Case::new(format!("walk_const_spaced, {spacing}, {distinct} address(es)"))
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
        // 100 MiB: four visits per line, half of them kept.
        let big = 100 << 20;
        let steps = chase_steps(big, 100_000);
        assert_eq!(steps, 4 * (big / 128) as u64);
        assert!((chase_case(big, steps, l2).predictions[0].1 - 37.5).abs() < 1e-9);
        assert_eq!(c.label, "global chase, 1 MiB");
    }
}
