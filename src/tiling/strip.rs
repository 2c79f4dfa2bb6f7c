//! Tiling as strip-mining plus permutation, on the lecture's `D[i] += B[j][i]`.
//!
//! `B` is `m` rows of `n` floats (row-major), `D` has `n` floats. Every `D[i]` receives the
//! `B[j][i]` in increasing `j` in all three forms below, so the three give bit-identical `D`.
//! What changes is the reuse distance of `D[i]`: in the original nest a whole row of `B` and
//! all of `D` pass between two uses of `D[i]`; in the tiled nest only one strip of `s` floats.

use crate::harness::Stats;

// ANCHOR: forms
/// The original nest: `j` outer, `i` inner.
pub fn original(d: &mut [f32], b: &[f32], m: usize, n: usize) {
    for j in 0..m {
        for i in 0..n {
            d[i] += b[j * n + i];
        }
    }
}

/// Strip-mined: the `i` loop split into strips of `s`. Same iterations, same order.
pub fn strip_mined(d: &mut [f32], b: &[f32], m: usize, n: usize, s: usize) {
    for j in 0..m {
        for ii in (0..n).step_by(s) {
            for i in ii..(ii + s).min(n) {
                d[i] += b[j * n + i];
            }
        }
    }
}

/// Strip-mined, then the strip loop `ii` moved outside `j`: a strip of `D` stays in
/// cache while all `m` rows pass over it.
pub fn tiled(d: &mut [f32], b: &[f32], m: usize, n: usize, s: usize) {
    for ii in (0..n).step_by(s) {
        for j in 0..m {
            for i in ii..(ii + s).min(n) {
                d[i] += b[j * n + i];
            }
        }
    }
}
// ANCHOR_END: forms

/// Bytes that pass between memory and the cores when no reuse of `D` survives in the cache
/// (the original nest with `D` larger than the caches) and when all of it does (tiled with a
/// strip that fits): `B` once, plus `D` read and written `m` times or once.
pub fn predicted_bytes(m: usize, n: usize) -> (usize, usize) {
    (4 * (m * n + 2 * m * n), 4 * (m * n + 2 * n))
}

/// The problem the sweep measures: `m` rows of `n` floats, and the strip sizes it tries.
#[derive(Debug, Clone)]
pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub strips: Vec<usize>,
}

impl Problem {
    /// Full: `D` is 32 MiB (beyond L2, the size of a large L3), `B` 16 rows of it (512 MiB).
    pub fn new(quick: bool) -> Self {
        if quick {
            Self { m: 8, n: 1 << 16, strips: vec![256, 4096, 1 << 16] }
        } else {
            Self {
                m: 16,
                n: 1 << 23,
                strips: [6, 8, 10, 12, 14, 16, 18, 20, 22, 23]
                    .iter()
                    .map(|p| 1usize << p)
                    .collect(),
            }
        }
    }
}

/// The measurements of one problem.
#[derive(Debug, Clone)]
pub struct StripSweep {
    pub problem: Problem,
    pub original: Stats,
    /// `(strip, strip-mined, tiled)` for every strip size.
    pub points: Vec<(usize, Stats, Stats)>,
}

/// Times several pieces of work in turn: each of `reps` rounds runs every piece once,
/// in order, on the host clock, after `warmup` untimed rounds. A slow drift of the
/// machine (a clock change, another process) then falls on all pieces alike instead of
/// on whichever happened to be timed at that moment; one summary per piece.
pub fn time_round_robin(
    warmup: usize,
    reps: usize,
    pieces: &mut [&mut dyn FnMut()],
) -> anyhow::Result<Vec<Stats>> {
    assert!(reps > 0, "a measurement needs at least one repetition");
    let mut samples = vec![Vec::with_capacity(reps); pieces.len()];
    for round in 0..warmup + reps {
        for (piece, out) in pieces.iter_mut().zip(&mut samples) {
            let start = std::time::Instant::now();
            piece();
            let ms = start.elapsed().as_secs_f64() * 1e3;
            if round >= warmup {
                out.push(ms);
            }
        }
    }
    samples
        .iter()
        .map(|s| Stats::from_samples(s).ok_or_else(|| anyhow::anyhow!("no timings")))
        .collect()
}

/// Checks that the three forms agree at every strip size, then times them round robin:
/// every repetition runs the original and both forms at every strip size once.
pub fn measure(problem: Problem, reps: usize, seed: u64) -> anyhow::Result<StripSweep> {
    let (m, n) = (problem.m, problem.n);
    let b = crate::harness::inputs::random_f32(m * n, seed);
    let d0 = crate::harness::inputs::random_f32(n, seed + 1);
    let mut want = d0.clone();
    original(&mut want, &b, m, n);
    for &s in &problem.strips {
        for (name, form) in [
            ("strip-mined", strip_mined as fn(&mut [f32], &[f32], usize, usize, usize)),
            ("tiled", tiled),
        ] {
            let mut got = d0.clone();
            form(&mut got, &b, m, n, s);
            if got != want {
                anyhow::bail!(
                    "the {name} form with strip {s} differs from the original nest"
                );
            }
        }
    }
    // One D shared by every piece: each piece adds B into it, as the nest does.
    let d = std::cell::RefCell::new(d0);
    let b = &b;
    let mut first = || original(std::hint::black_box(&mut d.borrow_mut()), b, m, n);
    let mut forms: Vec<Box<dyn FnMut()>> = Vec::new();
    for &s in &problem.strips {
        let d = &d;
        forms.push(Box::new(move || {
            strip_mined(std::hint::black_box(&mut d.borrow_mut()), b, m, n, s)
        }));
        forms.push(Box::new(move || {
            tiled(std::hint::black_box(&mut d.borrow_mut()), b, m, n, s)
        }));
    }
    let mut pieces: Vec<&mut dyn FnMut()> = vec![&mut first];
    pieces.extend(forms.iter_mut().map(|f| &mut **f as &mut dyn FnMut()));
    let stats = time_round_robin(1, reps, &mut pieces)?;
    let points = problem
        .strips
        .iter()
        .zip(stats[1..].chunks(2))
        .map(|(&s, pair)| (s, pair[0].clone(), pair[1].clone()))
        .collect();
    Ok(StripSweep { problem, original: stats[0].clone(), points })
}

/// How two min-max ranges of timings compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Separation {
    /// `a`'s slowest repetition is faster than `b`'s fastest.
    Faster,
    /// `a`'s fastest repetition is slower than `b`'s slowest.
    Slower,
    /// The ranges overlap: the difference is within the noise of the measurement.
    Overlap,
}

impl Separation {
    pub fn of(a: &Stats, b: &Stats) -> Self {
        if a.max_ms < b.min_ms {
            Self::Faster
        } else if a.min_ms > b.max_ms {
            Self::Slower
        } else {
            Self::Overlap
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Faster => "faster (ranges apart)",
            Self::Slower => "slower (ranges apart)",
            Self::Overlap => "within noise (ranges overlap)",
        }
    }
}
