//! The host side: what pinning A costs, what the slides' 55 ms can be, and where unified
//! memory without a prefetch beats pageable memory.

use crate::harness::format::ratio;
use crate::harness::{Run, Stats};

use super::super::measure::{HostCosts, Results, Strategy};
use super::super::reference::{SLIDES_CLAIMS, SLIDES_PINNED_MS};
use super::{key, AFTER_COPY};

/// Picks one of the host costs.
type Pick = fn(&HostCosts) -> &Stats;

/// The rows the end-to-end table gives the host buffer of A at each size.
pub(super) const COST_ROWS: [(&str, Pick); 3] = [
    ("cost of A's buffer: new pages + first touch + unmap (pageable)", |c| {
        &c.pageable_alloc
    }),
    ("cost of pinning: cuMemHostAlloc + write + cuMemFreeHost", |c| &c.pinned_alloc),
    ("cost of pinning: cuMemHostRegister + cuMemHostUnregister", |c| &c.register),
];

#[derive(serde::Serialize)]
struct OneTimeRow {
    quantity: String,
    value: String,
    of_slides_time: String,
}

/// `atax-one-time`: the slides' pinned time for EXTRALARGE double next to what the same
/// size costs here, the transfers and the one-time costs of a program.
pub(super) fn one_time_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    // The slides' dataset, or in a short run the largest double matrix measured.
    let Some((d, elem)) = r
        .datasets()
        .into_iter()
        .filter(|(_, e)| *e == "double")
        .max_by_key(|(d, _)| (d.name == "EXTRALARGE", d.m * d.n))
    else {
        return Ok(());
    };
    let of = |ms: f64| ratio(ms, SLIDES_PINNED_MS);
    let ms_row = |quantity: String, s: &Stats| OneTimeRow {
        quantity,
        value: format!("{:.3} ms ({:.3}–{:.3})", s.median_ms, s.min_ms, s.max_ms),
        of_slides_time: of(s.median_ms),
    };
    let bytes = d.matrix_bytes(8);
    let mb = bytes as f64 / 1e6;
    let pinned_claim = SLIDES_CLAIMS
        .iter()
        .find(|c| c.slides_name == "Pinned Memory")
        .map(|c| c.speedup);
    let mut rows = vec![OneTimeRow {
        quantity: "slides: pinned version, EXTRALARGE double, their GPU".into(),
        value: format!("{SLIDES_PINNED_MS:.2} ms"),
        of_slides_time: of(SLIDES_PINNED_MS),
    }];
    if let Some(sp) = pinned_claim {
        rows.push(OneTimeRow {
            quantity: format!("slides: their first version, implied by their {sp:.2}×"),
            value: format!("{:.1} ms", SLIDES_PINNED_MS * sp),
            of_slides_time: of(SLIDES_PINNED_MS * sp),
        });
    }
    rows.push(OneTimeRow {
        quantity: format!("bandwidth at which {mb:.1} MB take the slides' time"),
        value: format!("{:.2} GB/s", bytes as f64 / (SLIDES_PINNED_MS * 1e-3) / 1e9),
        of_slides_time: "—".into(),
    });
    let here = key(&d, elem);
    if let Some(t) = r.transfer(d.name, elem) {
        rows.push(ms_row(format!("ours, {here}: H2D copy of A, pinned"), &t.pinned));
        rows.push(ms_row(
            format!("ours, {here}: H2D copy of A, pageable"),
            &t.pageable,
        ));
    }
    for s in [Strategy::PinnedBaseline, Strategy::PageableBaseline] {
        if let Some(e) = r.e2e(d.name, elem, s) {
            let what = format!("ours, {here}: end to end, {}", s.name());
            rows.push(ms_row(what, e.timing()));
        }
    }
    if let Some(c) = r.host_cost(d.name, elem) {
        for (what, pick) in COST_ROWS {
            rows.push(ms_row(format!("ours, {here}: {what}"), pick(c)));
        }
    }
    match &r.context {
        Ok(s) => rows.push(ms_row(
            "ours: a new CUDA context, cuCtxCreate + cuCtxDestroy".into(),
            s,
        )),
        Err(why) => rows.push(OneTimeRow {
            quantity: "ours: a new CUDA context, cuCtxCreate + cuCtxDestroy".into(),
            value: format!("not measured: {why}"),
            of_slides_time: "—".into(),
        }),
    }
    if let (Ok(ctx), Some(c), Some(e)) = (
        &r.context,
        r.host_cost(d.name, elem),
        r.e2e(d.name, elem, Strategy::PinnedBaseline),
    ) {
        let sum = ctx.median_ms + c.pinned_alloc.median_ms + e.timing().median_ms;
        rows.push(OneTimeRow {
            quantity: format!(
                "ours, {here}: context + cuMemHostAlloc of A + pinned end to end"
            ),
            value: format!("{sum:.3} ms"),
            of_slides_time: of(sum),
        });
    }
    let title = format!(
        "What the slides' pinned time can be: {here} here, host clock for the one-time \
         costs, CUDA events for the rest"
    );
    let keys = [
        ("l2", AFTER_COPY),
        (
            "headers",
            "quantity = quantity | value = median (fastest–slowest) | \
             of_slides_time = of the slides' 55.17 ms",
        ),
    ];
    run.table("atax-one-time", &title, &keys, &rows)
}

#[derive(serde::Serialize)]
struct UnifiedRow {
    dataset: String,
    pageable_ms: String,
    unified_ms: String,
    speedup_median: String,
    speedup_slides_method: String,
    verdict: &'static str,
}

/// `atax-unified`: unified memory without a prefetch against pageable memory, with the
/// baseline kernels, at every size: faster only where its slowest run beats pageable's
/// fastest.
pub(super) fn unified_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for (d, elem) in r.datasets() {
        let (Some(p), Some(u), Some((sp, sp_slides))) = (
            r.e2e(d.name, elem, Strategy::PageableBaseline),
            r.e2e(d.name, elem, Strategy::Unified),
            r.e2e_speedup(d.name, elem, Strategy::Unified),
        ) else {
            continue;
        };
        let (p, u) = (p.timing(), u.timing());
        let verdict = if u.max_ms < p.min_ms {
            "faster: unified's slowest run beats pageable's fastest"
        } else if u.min_ms > p.max_ms {
            "slower: unified's fastest run is slower than pageable's slowest"
        } else if u.median_ms < p.median_ms {
            "ranges overlap; faster by the median only"
        } else {
            "ranges overlap; slower by the median"
        };
        let range =
            |s: &Stats| format!("{:.3} ({:.3}–{:.3})", s.median_ms, s.min_ms, s.max_ms);
        rows.push(UnifiedRow {
            dataset: key(&d, elem),
            pageable_ms: range(p),
            unified_ms: range(u),
            speedup_median: ratio(sp, 1.0),
            speedup_slides_method: ratio(sp_slides, 1.0),
            verdict,
        });
    }
    let title =
        "Unified memory without prefetch against pageable memory, baseline kernels";
    let keys = [
        ("l2", AFTER_COPY),
        (
            "headers",
            "pageable_ms = pageable (ms) | unified_ms = unified, no prefetch (ms) | \
             speedup_median = speedup, median | \
             speedup_slides_method = speedup, slides' method",
        ),
        ("columns", "dataset | pageable_ms | unified_ms | speedup_median | verdict"),
    ];
    run.table("atax-unified", title, &keys, &rows)
}
