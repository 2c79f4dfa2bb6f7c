//! What `loop_permutation` measures: a row-major array updated in row order and in column
//! order, from 4 KiB to 256 MiB, and `D[i] += B[j][i]` in its original, strip-mined and tiled
//! forms over strip sizes. Every pair of orders is checked to give identical results first;
//! the timings then take turns (round robin), so that a drift of the machine during the run
//! falls on every series alike.

use crate::harness::{FullQuick, Run};
use crate::tiling::strip::{self, StripSweep};
use crate::tiling::traversal::{self, TraversalPoint};

/// Elements one timed repetition of a traversal touches at the least: small arrays are swept
/// repeatedly so that one sample lasts long enough to time.
pub const MIN_ELEMENTS: FullQuick<usize> = FullQuick::new(1 << 24, 1 << 16);

/// The sizes of one run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Sides of the square arrays the traversal sweep updates.
    pub sides: Vec<usize>,
    /// See [`MIN_ELEMENTS`].
    pub min_elements: usize,
    /// The strip-mining problem and its strip sizes.
    pub strip: strip::Problem,
}

impl Settings {
    /// The book's sizes, or the small ones of `--quick`.
    pub fn new(quick: bool) -> Self {
        Self {
            sides: traversal::sweep_sides(quick),
            min_elements: MIN_ELEMENTS.pick(quick),
            strip: strip::Problem::new(quick),
        }
    }
}

/// Everything the CPU half's figures are drawn from.
pub struct Results {
    pub traversal: Vec<TraversalPoint>,
    pub strip: StripSweep,
    /// Timed repetitions of every measurement (each a round in which every order, or
    /// every form at every strip size, runs once: see [`strip::time_round_robin`]).
    pub reps: usize,
}

/// Checks, then times, both traversal orders at every side and the three forms of the
/// strip-mining example at every strip size.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let reps = run.reps();
    let bar = run.progress(settings.sides.len() + 1);
    let mut points = Vec::new();
    for &n in &settings.sides {
        bar.set_message(format!("traversal, n = {n}"));
        points.push(traversal::measure(n, reps, settings.min_elements)?);
        bar.inc(1);
    }
    bar.set_message("D[i] += B[j][i]");
    let sweep = strip::measure(settings.strip.clone(), reps, run.seed)?;
    bar.finish_and_clear();
    Ok(Results { traversal: points, strip: sweep, reps })
}
