//! The chapter's targets and its playbook for memory-bound kernels, each computed from
//! this run's results.

use crate::harness::ceiling;
use crate::harness::format::{ratio, us};
use crate::harness::Run;

use super::super::datasets::LARGE_SQUARE;
use super::super::measure::{
    EndToEndResult, KernelResult, KernelVariant, Results, Strategy, YAloneKernel,
};
use super::shapes::FUSED_VARIANTS;
use super::{fastest, key, AFTER_COPY};

#[derive(serde::Serialize)]
pub(super) struct TargetRow {
    pub(super) target: &'static str,
    pub(super) required: &'static str,
    pub(super) measured: String,
    pub(super) met: &'static str,
}

/// `atax-targets`: the chapter's targets, each computed from the results; returns them
/// for the console.
pub(super) fn targets_table(run: &Run, r: &Results) -> anyhow::Result<Vec<TargetRow>> {
    let mut targets = Vec::new();
    let big = LARGE_SQUARE.name;
    let shapes = r.large_shapes();
    let ratios: Vec<(String, f64)> =
        shapes.iter().filter_map(|s| Some((s.d.label(), s.speedup()?))).collect();
    if let Some((worst, speedup)) =
        ratios.iter().min_by(|a, b| a.1.total_cmp(&b.1)).cloned()
    {
        targets.push(TargetRow {
            target: "fastest fused vs cuBLAS gemv ×2, every large float shape, L2 cold",
            required: "≥ 1.85×",
            measured: format!(
                "{speedup:.2}× at the worst shape ({worst}; {} shapes)",
                ratios.len()
            ),
            met: if speedup >= 1.85 { "yes" } else { "no" },
        });
    }
    let square = FUSED_VARIANTS.iter().filter_map(|&v| r.kernel(big, "float", v));
    if let Some(best) = fastest(square, KernelResult::warm) {
        let (w, c) = (best.warm(), best.cold());
        targets.push(TargetRow {
            target: "fused single pass, 16384² float",
            required: "≤ 361 µs",
            measured: format!(
                "{}: {} µs warm, {} µs cold ({}, cold)",
                best.variant.name(),
                us(w.median_ms),
                us(c.median_ms),
                r.of_ceilings(best.bytes, c.median_ms)
            ),
            met: if w.median_ms <= 0.361 { "yes (warm)" } else { "no" },
        });
    }
    let candidates = [
        KernelVariant::Fused,
        KernelVariant::FusedOnce,
        KernelVariant::FusedAtomic,
        KernelVariant::FusedCluster,
        KernelVariant::WarpPerRow,
        KernelVariant::Cublas,
        KernelVariant::Tiled,
    ];
    let timed = candidates.iter().filter_map(|&v| r.kernel("EXTRALARGE", "double", v));
    if let Some(best) = fastest(timed, KernelResult::warm) {
        let (w, c) = (best.warm(), best.cold());
        targets.push(TargetRow {
            target: "EXTRALARGE double, fastest kernel",
            required: "≤ 12 µs",
            measured: format!(
                "{}: {} µs warm, {} µs cold",
                best.variant.name(),
                us(w.median_ms),
                us(c.median_ms)
            ),
            met: if w.median_ms <= 0.012 { "yes (warm)" } else { "no" },
        });
    }
    if let Some(t) = r.transfer(big, "float") {
        let timed = r
            .end_to_end
            .iter()
            .filter(|e| e.d.name == big && e.elem == "float" && e.times.is_some());
        if let Some(best) = fastest(timed, EndToEndResult::timing) {
            let over = best.timing().median_ms / t.pinned.median_ms;
            targets.push(TargetRow {
                target: "end to end, 16384² float, best strategy",
                required: "≤ 1.10 × pinned H2D of A",
                measured: format!("{}: {over:.3} ×", best.strategy.name()),
                met: if over <= 1.10 { "yes" } else { "no" },
            });
        }
    }
    let ceilings = r.ceilings.meta();
    let keys = ceiling::with_meta(&[("l2", "as stated per row")], &ceilings);
    run.table("atax-targets", "The chapter's targets", &keys, &targets)?;
    Ok(targets)
}

#[derive(serde::Serialize)]
pub(super) struct RuleRow {
    rule: &'static str,
    evidence: String,
}

/// `atax-playbook`: rules for memory-bound kernels, each with its evidence from this run.
pub(super) fn playbook_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let dash = || "—".to_string();
    let big = LARGE_SQUARE.name;
    let big_e2e = |s| {
        r.e2e(big, "float", s)
            .map(|e| format!("{:.2} ms", e.timing().median_ms))
            .unwrap_or_else(dash)
    };
    let cold = |d: &str, elem: &str, v| {
        r.kernel(d, elem, v)
            .map(|k| format!("{} µs", us(k.cold().median_ms)))
            .unwrap_or_else(dash)
    };
    let fraction = |d: &str, elem: &str, v| {
        r.kernel(d, elem, v)
            .map(|k| r.of_ceilings(k.bytes, k.cold().median_ms))
            .unwrap_or_else(dash)
    };
    let pinned = |d: &str, elem: &str| {
        let plain = r.e2e_speedup(d, elem, Strategy::PinnedBaseline);
        let counted = r.pinning_counted(d, elem, Strategy::PinnedBaseline);
        match (plain, counted) {
            (Some((sp, _)), Some((reg, alloc))) => format!(
                "{d} {elem}: {sp:.2}× without the cost of pinning, {reg:.2}× with \
                 cuMemHostRegister counted, {alloc:.2}× with both allocations counted"
            ),
            _ => format!("{d} {elem}: —"),
        }
    };
    let y_alone = |d: &str, elem: &str| {
        let one = |k: YAloneKernel| {
            r.y_alone
                .iter()
                .find(|y| y.d.name == d && y.elem == elem && y.kernel == k)
                .and_then(|y| {
                    let (_, c) = y.times.as_ref()?;
                    Some(format!(
                        "{} warps on {} SMs, {} µs",
                        y.launch.warps(),
                        y.launch.busy_sms(r.sms),
                        us(c.median_ms)
                    ))
                })
                .unwrap_or_else(dash)
        };
        format!(
            "{d} {elem}, kernel 2 alone, L2 cold: thread per column {}; split rows {}",
            one(YAloneKernel::ThreadPerCol),
            one(YAloneKernel::SplitRows)
        )
    };
    let (xl, xe) = ("EXTRALARGE", "double");
    let unified: Vec<String> = r
        .datasets()
        .into_iter()
        .filter_map(|(d, elem)| {
            let p = r.e2e(d.name, elem, Strategy::PageableBaseline)?.timing();
            let u = r.e2e(d.name, elem, Strategy::Unified)?.timing();
            (u.max_ms < p.min_ms).then(|| key(&d, elem))
        })
        .collect();
    let unified_sizes = r.datasets().len();
    let rules = vec![
        RuleRow {
            rule: "1. Find out where the time goes first: for one ATAX the copy of A \
                   dwarfs the kernels.",
            evidence: format!(
                "16384² float: pinned copy of A {}; baseline kernels {} (cold)",
                r.transfer(big, "float")
                    .map(|t| format!("{:.2} ms", t.pinned.median_ms))
                    .unwrap_or_else(dash),
                cold(big, "float", KernelVariant::Baseline)
            ),
        },
        RuleRow {
            rule: "2. Pinned memory speeds up every copy from it, but pinning costs time \
                   of its own: count it once per buffer, and pin buffers that are copied \
                   more than once.",
            evidence: format!("{}; {}", pinned(xl, xe), pinned(big, "float")),
        },
        RuleRow {
            rule: "3. Launch enough warps before anything else: a kernel whose grid \
                   cannot keep enough loads in flight is slow however its warps read.",
            evidence: format!(
                "{}; two-pass, L2 cold: baseline {}, pre-transposed {}, \
                 pre-transposed, split {}, warp per row {}, warp per row, split y {}",
                y_alone(xl, xe),
                cold(xl, xe, KernelVariant::Baseline),
                cold(xl, xe, KernelVariant::PreTransposed),
                cold(xl, xe, KernelVariant::PreTransposedSplit),
                cold(xl, xe, KernelVariant::WarpPerRow),
                cold(xl, xe, KernelVariant::WarpPerRowSplitY)
            ),
        },
        RuleRow {
            rule: "4. Where x lives hardly matters: the bytes of A are what cost.",
            evidence: format!(
                "16384² float, cold: baseline {}, x in constant {}",
                cold(big, "float", KernelVariant::Baseline),
                cold(big, "float", KernelVariant::XConst)
            ),
        },
        RuleRow {
            rule: "5. Read A once, and count every byte the single pass adds (its \
                   partial sums).",
            evidence: format!(
                "16384² float, cold: fused {} ({}), cuBLAS gemv ×2 {}",
                cold(big, "float", KernelVariant::Fused),
                fraction(big, "float", KernelVariant::Fused),
                cold(big, "float", KernelVariant::Cublas)
            ),
        },
        RuleRow {
            rule: "6. Streams hide kernels behind copies only when the kernels are short \
                   next to the copies.",
            evidence: format!(
                "16384² float end to end: pinned + fused {}, streams + fused {}, \
                 streams + thread per row {}",
                big_e2e(Strategy::PinnedFused),
                big_e2e(Strategy::StreamsFused),
                big_e2e(Strategy::StreamsThreadPerRow)
            ),
        },
        RuleRow {
            rule: "7. Do not count on unified memory without a prefetch to beat pageable \
                   copies; a prefetch turns its page faults into one bulk copy.",
            evidence: format!(
                "unified without prefetch beats pageable in every repetition at {} of \
                 {unified_sizes} sizes ({}); EXTRALARGE double, speedup over pageable: \
                 unified + prefetch {}",
                unified.len(),
                if unified.is_empty() { "none".into() } else { unified.join(", ") },
                r.e2e_speedup(xl, xe, Strategy::UnifiedPrefetch)
                    .map(|(m, _)| ratio(m, 1.0))
                    .unwrap_or_else(dash)
            ),
        },
    ];
    let ceilings = r.ceilings.meta();
    let keys = ceiling::with_meta(&[("l2", AFTER_COPY)], &ceilings);
    run.table("atax-playbook", "The playbook, measured", &keys, &rules)
}
