//! Value axes: choosing an axis' range (ending near the data) and its ticks (as many round
//! numbers as fit without their labels colliding), on linear, log and byte axes.

use anyhow::bail;

use super::numbers::tick_labels;
use super::style::{em, width_of, F_TICK};
use super::types::Ticks;

/// The most ticks a linear rule generates: far more than any axis shows (it keeps at most 16).
const MAX_TICKS: f64 = 10_000.0;

/// A rule that generates tick values inside a range (data units).
#[derive(Debug, Clone)]
enum TickRule {
    Linear(f64),
    /// Mantissas per decade, every `n`th decade.
    Decades(&'static [f64], i32),
    /// Powers of two whose exponent is a multiple of `n`.
    Pow2(i32),
    Fixed(Vec<f64>),
}

impl TickRule {
    fn generate(&self, lo: f64, hi: f64) -> Vec<f64> {
        let eps = 1e-9 * (hi - lo).abs().max(hi.abs()).max(1e-300);
        let inside = |v: f64| v >= lo - eps && v <= hi + eps;
        match self {
            TickRule::Linear(step) => {
                let first = (lo / step - 1e-9).ceil();
                let last = (hi / step + 1e-9).floor();
                // A step far below the range (or a range beyond f64) would count ticks for
                // ever: such a rule has none, and a sparser one is chosen.
                if !(first.is_finite() && last.is_finite()) || last - first > MAX_TICKS
                {
                    return Vec::new();
                }
                (first as i64..=last as i64)
                    .map(|k| k as f64 * step)
                    .map(|v| if v.abs() < eps { 0.0 } else { v })
                    .collect()
            }
            TickRule::Decades(mantissas, every) => {
                // Every positive finite f64 lies within 10^±330: the clamp only bounds the
                // loop where a bound is not a positive finite number.
                let (d0, d1) = (
                    (lo.log10().floor() as i32).saturating_sub(1).max(-330),
                    (hi.log10().ceil() as i32).saturating_add(1).min(330),
                );
                let mut out = Vec::new();
                for d in d0..=d1 {
                    if d.rem_euclid(*every) != 0 {
                        continue;
                    }
                    for m in mantissas.iter() {
                        let v = m * 10f64.powi(d);
                        if inside(v) {
                            out.push(v);
                        }
                    }
                }
                out
            }
            TickRule::Pow2(every) => {
                // Every positive finite f64 lies within 2^±1100 (as above).
                let (k0, k1) = (
                    (lo.log2().floor() as i32).saturating_sub(1).max(-1100),
                    (hi.log2().ceil() as i32).saturating_add(1).min(1100),
                );
                (k0..=k1)
                    .filter(|k| k.rem_euclid(*every) == 0)
                    .map(|k| 2f64.powi(k))
                    .filter(|&v| inside(v))
                    .collect()
            }
            TickRule::Fixed(values) => {
                values.iter().copied().filter(|&v| inside(v)).collect()
            }
        }
    }

    fn step(&self) -> Option<f64> {
        match self {
            TickRule::Linear(s) => Some(*s),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Orient {
    Horizontal,
    Vertical,
}

/// A value axis: its range in plotted units (log10 of the value on a log axis), where it lies
/// on the page, and its ticks.
#[derive(Debug, Clone)]
pub(super) struct ValueAxis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
    /// Pixel positions of `lo` and `hi`.
    pub(super) p0: f64,
    pub(super) p1: f64,
    /// (value, label)
    pub(super) ticks: Vec<(f64, String)>,
}

impl ValueAxis {
    fn plotted(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }
    pub(super) fn px(&self, v: f64) -> f64 {
        self.p0
            + (self.plotted(v) - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)
    }
    /// The same axis moved `dx` pixels along its length.
    pub(super) fn shifted(&self, dx: f64) -> ValueAxis {
        let mut a = self.clone();
        a.p0 += dx;
        a.p1 += dx;
        a
    }
    pub(super) fn value_at(&self, plotted: f64) -> f64 {
        if self.log {
            10f64.powf(plotted)
        } else {
            plotted
        }
    }
}

/// What an axis needs to know to choose its range and ticks.
pub(super) struct AxisRequest<'a> {
    /// Every value it must show (data with spreads, reference lines).
    pub(super) values: Vec<f64>,
    pub(super) log: bool,
    pub(super) bytes: bool,
    /// Bars rise from zero.
    pub(super) from_zero: bool,
    pub(super) ticks: &'a Ticks,
    /// The distinct data values (for `Ticks::Data`).
    pub(super) data: Vec<f64>,
    pub(super) orient: Orient,
    /// Pixels kept free beyond the largest value (room for value labels).
    pub(super) headroom_px: f64,
    /// Whole numbers only (counts, offsets): no tick at 2.5.
    pub(super) integer: bool,
}

/// Round steps (1, 2, 2.5 and 5 times a power of ten) from a 60th of `span` up to `span`,
/// smallest first. They lie within three decades of the first, so the search ends whatever
/// `span` is; a span that is not a positive finite number has none.
fn nice_steps(span: f64) -> Vec<f64> {
    if !(span.is_finite() && span > 0.0) {
        return Vec::new();
    }
    let first = (span / 60.0).log10().floor() as i32;
    (first..=first.saturating_add(3))
        .flat_map(|e| [1.0, 2.0, 2.5, 5.0].map(|m| m * 10f64.powi(e)))
        .filter(|&s| s > span / 60.0 && s <= span * 1.01)
        .collect()
}

/// Chooses the range and ticks of an axis lying from pixel `p0` (low values) to `p1`.
pub(super) fn make_axis(
    req: &AxisRequest,
    p0: f64,
    p1: f64,
) -> anyhow::Result<ValueAxis> {
    let len = (p1 - p0).abs();
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for &v in &req.values {
        if !v.is_finite() {
            bail!("cannot plot {v}");
        }
        if req.log && v <= 0.0 {
            bail!("a log axis cannot show {v}");
        }
        let p = if req.log { v.log10() } else { v };
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if !lo.is_finite() {
        bail!("no finite values to plot");
    }
    let (least, most) = (lo, hi);
    if req.from_zero && !req.log {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if hi - lo < 1e-12 {
        let d = if req.log { 0.15 } else { hi.abs().max(1.0) * 0.1 };
        lo -= d;
        hi += d;
    }
    let data_hi = hi;
    let span = hi - lo;
    let pad = 0.04 * span;
    if !(req.from_zero && lo == 0.0 && !req.log) {
        lo -= pad;
    }
    hi += pad;
    if req.headroom_px > 0.0 && len > req.headroom_px * 2.0 {
        hi = hi.max(lo + (data_hi - lo) * len / (len - req.headroom_px));
    }
    let (dlo, dhi) = if req.log { (10f64.powf(lo), 10f64.powf(hi)) } else { (lo, hi) };
    // Finite values can still span more than an f64 holds once the axis is padded (-1e308 to
    // 1e308, or 1e-320 on a log axis): such a range has no pixel scale.
    if !((hi - lo).is_finite() && dlo.is_finite() && dhi.is_finite())
        || (req.log && dlo <= 0.0)
    {
        let shown = |p: f64| {
            let v = if req.log { 10f64.powf(p) } else { p };
            // 1e300 as `1e300`, not as three hundred digits.
            if v != 0.0 && !(1e-6..1e9).contains(&v.abs()) {
                format!("{v:e}")
            } else {
                format!("{v}")
            }
        };
        bail!(
            "values from {} to {} span too wide a range to draw",
            shown(least),
            shown(most)
        );
    }

    // Candidate rules, densest first.
    let dense = matches!(req.ticks, Ticks::Dense);
    let mut rules: Vec<TickRule> = Vec::new();
    match req.ticks {
        Ticks::List(v) => rules.push(TickRule::Fixed(v.clone())),
        Ticks::Data => {
            let mut d = req.data.clone();
            d.sort_by(f64::total_cmp);
            d.dedup();
            rules.push(TickRule::Fixed(d));
        }
        Ticks::Auto | Ticks::Dense => {
            if req.log && req.bytes {
                rules.extend([1, 2, 3, 4, 5, 10].map(TickRule::Pow2));
            } else if req.log {
                if dense {
                    rules.push(TickRule::Decades(
                        &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0],
                        1,
                    ));
                    rules.push(TickRule::Decades(&[1.0, 1.5, 2.0, 3.0, 5.0, 7.0], 1));
                    rules.push(TickRule::Decades(&[1.0, 2.0, 3.0, 5.0, 7.0], 1));
                }
                rules.push(TickRule::Decades(&[1.0, 2.0, 5.0], 1));
                rules.push(TickRule::Decades(&[1.0, 3.0], 1));
                rules.extend([1, 2, 3, 5].map(|n| TickRule::Decades(&[1.0], n)));
                // Less than a decade: round numbers on the log axis.
                if rules.iter().all(|r| r.generate(dlo, dhi).len() < 3) {
                    rules.extend(
                        nice_steps(dhi - dlo).into_iter().map(TickRule::Linear),
                    );
                }
            } else {
                rules.extend(
                    nice_steps(hi - lo)
                        .into_iter()
                        .filter(|s| !req.integer || s.fract() == 0.0)
                        .map(TickRule::Linear),
                );
            }
        }
    }
    let max_ticks = match (req.orient, dense) {
        (Orient::Vertical, false) => 9,
        (Orient::Vertical, true) => 16,
        (Orient::Horizontal, _) => 14,
    };
    let gap = match (req.orient, dense) {
        (Orient::Vertical, false) => 22.0,
        (Orient::Vertical, true) => 7.0,
        (Orient::Horizontal, _) => 18.0,
    };
    let place = |plo: f64, phi: f64, v: f64| {
        let p = if req.log { v.log10() } else { v };
        p0 + (p - plo) / (phi - plo) * (p1 - p0)
    };
    let extent = |label: &str| match req.orient {
        Orient::Horizontal => width_of(label, F_TICK),
        Orient::Vertical => em(F_TICK),
    };
    let fits = |values: &[f64], labels: &[String], plo: f64, phi: f64| {
        values.windows(2).zip(labels.windows(2)).all(|(v, l)| {
            let d = (place(plo, phi, v[1]) - place(plo, phi, v[0])).abs();
            d >= (extent(&l[0]) + extent(&l[1])) / 2.0 + gap
        })
    };
    let mut chosen: Option<(TickRule, Vec<f64>)> = None;
    for rule in &rules {
        let v = rule.generate(dlo, dhi);
        if v.len() < 2 && !matches!(rule, TickRule::Fixed(_)) {
            continue;
        }
        if v.len() > max_ticks && !matches!(rule, TickRule::Fixed(_)) {
            continue;
        }
        let labels = tick_labels(&v, rule.step(), req.bytes);
        if fits(&v, &labels, lo, hi) {
            chosen = Some((rule.clone(), v));
            break;
        }
    }
    let (rule, mut values) = match chosen {
        Some(c) => c,
        None => {
            // Nothing fits as a whole: the sparsest rule with two ticks, thinned below.
            let rule = rules
                .iter()
                .rev()
                .find(|r| r.generate(dlo, dhi).len() >= 2)
                .or(rules.last())
                .cloned()
                .unwrap_or(TickRule::Fixed(vec![]));
            let v = rule.generate(dlo, dhi);
            (rule, v)
        }
    };
    // End near the data: extend to the next tick beyond either end when it is close.
    let reach = 0.03 * (hi - lo);
    let (wlo, whi) = if req.log {
        (10f64.powf(lo - reach), 10f64.powf(hi + reach))
    } else {
        (lo - reach, hi + reach)
    };
    let wide = rule.generate(wlo, whi);
    let plotted = |v: f64| if req.log { v.log10() } else { v };
    if let Some(&next) =
        wide.iter().filter(|&&v| plotted(v) > hi + 1e-12).min_by(|a, b| a.total_cmp(b))
    {
        hi = plotted(next);
        values.push(next);
    }
    if !(req.from_zero && lo == 0.0) {
        if let Some(&prev) = wide
            .iter()
            .filter(|&&v| plotted(v) < lo - 1e-12)
            .max_by(|a, b| a.total_cmp(b))
        {
            lo = plotted(prev);
            values.insert(0, prev);
        }
    }
    values.sort_by(f64::total_cmp);
    values.dedup();
    let labels = tick_labels(&values, rule.step(), req.bytes);
    // Thin whatever still collides: keep a label only if it clears the last one kept.
    let mut ticks: Vec<(f64, String)> = Vec::new();
    for (v, l) in values.into_iter().zip(labels) {
        if let Some((pv, pl)) = ticks.last() {
            let d = (place(lo, hi, v) - place(lo, hi, *pv)).abs();
            if d < (extent(pl) + extent(&l)) / 2.0 + gap.min(10.0) {
                continue;
            }
        }
        ticks.push((v, l));
    }
    Ok(ValueAxis { lo, hi, log: req.log, p0, p1, ticks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(spec_axis: AxisRequest, len: f64) -> ValueAxis {
        make_axis(&spec_axis, len, 0.0).unwrap()
    }

    fn request<'a>(values: &[f64], log: bool, ticks: &'a Ticks) -> AxisRequest<'a> {
        AxisRequest {
            values: values.to_vec(),
            log,
            bytes: false,
            from_zero: false,
            ticks,
            data: values.to_vec(),
            orient: Orient::Vertical,
            headroom_px: 0.0,
            integer: false,
        }
    }

    #[test]
    fn axes_end_near_the_data() {
        // 1 … 1024 on a log axis used to run to 10 000: a decade past the data.
        let a = ticks(request(&[1.0, 1024.0], true, &Ticks::Auto), 700.0);
        assert!(a.hi < 1024f64.log10() + 0.2 && a.lo > -0.2, "{a:?}");
        assert!(a.ticks.iter().all(|(v, _)| *v >= 0.9 && *v <= 1500.0), "{a:?}");
        // 57 … 927 on a log axis: neither 10 nor 10 000 in range.
        let b = ticks(request(&[57.0, 927.0], true, &Ticks::Auto), 330.0);
        assert!(10f64.powf(b.lo) > 40.0 && 10f64.powf(b.hi) < 1300.0, "{b:?}");
        assert!(b.ticks.len() >= 3, "{b:?}");
        // Linear from zero: the top tick at most one step above the data.
        let mut r = request(&[0.0, 83.3], false, &Ticks::Auto);
        r.from_zero = true;
        let c = ticks(r, 330.0);
        assert!(c.lo == 0.0 && c.hi < 100.0, "{c:?}");
        // An explicit list is honoured inside the range.
        let list = Ticks::List(vec![
            10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0,
        ]);
        let d = ticks(request(&[14.5, 350.0], true, &list), 330.0);
        let labels: Vec<&str> = d.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert!(
            labels.contains(&"20")
                && labels.contains(&"150")
                && labels.contains(&"300"),
            "{labels:?}"
        );
    }

    #[test]
    fn byte_axes_read_in_binary_units() {
        let mut r = request(&[1024.0, 536870912.0], true, &Ticks::Auto);
        r.bytes = true;
        r.orient = Orient::Horizontal;
        let a = make_axis(&r, 0.0, 700.0).unwrap();
        let labels: Vec<&str> = a.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert!(labels.contains(&"1 KiB") && labels.contains(&"1 MiB"), "{labels:?}");
        assert!(labels.iter().all(|l| l.ends_with("iB")), "{labels:?}");
    }

    #[test]
    fn round_steps_are_found_for_every_span_and_end_for_any_other() {
        // The steps of an ordinary span, smallest first.
        assert_eq!(nice_steps(100.0), [2.0, 2.5, 5.0, 10.0, 20.0, 25.0, 50.0, 100.0]);
        for e in -320..=308 {
            let span = 10f64.powi(e) * 3.7;
            if span.is_finite() && span > 0.0 {
                let steps = nice_steps(span);
                assert!(!steps.is_empty(), "no step for {span}");
                assert!(steps.iter().all(|&s| s > span / 60.0 && s <= span * 1.01));
            }
        }
        for span in [0.0, -1.0, f64::INFINITY, f64::NAN, f64::MAX, f64::MIN_POSITIVE] {
            assert!(nice_steps(span).len() <= 16, "{span}");
        }
    }

    #[test]
    fn a_value_far_beyond_the_data_widens_the_axis_and_a_range_beyond_f64_is_refused() {
        for far in [1e30, 1e300, -1e300] {
            for from_zero in [false, true] {
                let mut r = request(&[1.0, 2.0, far], false, &Ticks::Auto);
                r.from_zero = from_zero;
                r.headroom_px = 20.0;
                let a = ticks(r, 330.0);
                assert!(a.lo <= far.min(1.0) && a.hi >= far.max(2.0), "{a:?}");
                assert!(a.ticks.len() <= 16, "{a:?}");
            }
        }
        for values in [[-1e308, 1e308], [f64::MAX, f64::MAX]] {
            let err = make_axis(&request(&values, false, &Ticks::Auto), 330.0, 0.0)
                .unwrap_err()
                .to_string();
            assert!(err.contains("too wide a range to draw"), "{err}");
        }
        let err =
            make_axis(&request(&[-1e308, 1e308], false, &Ticks::Auto), 330.0, 0.0)
                .unwrap_err()
                .to_string();
        assert_eq!(err, "values from -1e308 to 1e308 span too wide a range to draw");
        let err = make_axis(&request(&[1e-320, 1.0], true, &Ticks::Auto), 330.0, 0.0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("too wide a range to draw"), "{err}");
        // A log axis across nearly all of f64 is drawn, its decades thinned.
        let a = ticks(request(&[1e-280, 1e280], true, &Ticks::Auto), 330.0);
        assert!(a.ticks.len() >= 2 && a.ticks.len() <= 16, "{a:?}");
    }
}
