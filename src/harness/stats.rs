//! Summaries of repeated measurements.
//!
//! The book reports the **median** of many repetitions, with the **min** and **max** as error bars.
//! The median ignores the occasional slow repetition (a clock change, another process); the min
//! shows what the hardware can do; the spread says how far to trust a difference.

/// The summary of repeated timings, in milliseconds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    pub reps: usize,
}

impl Stats {
    /// Summarises samples; `None` for an empty slice or one holding a NaN.
    pub fn from_samples(samples: &[f64]) -> Option<Self> {
        if samples.is_empty() || samples.iter().any(|s| s.is_nan()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Self {
            median_ms: median,
            min_ms: sorted[0],
            max_ms: sorted[n - 1],
            mean_ms: sorted.iter().sum::<f64>() / n as f64,
            reps: n,
        })
    }

    /// The same summary divided by `count`: per launch of a batch of `count`.
    pub fn per(&self, count: usize) -> Stats {
        let per = |ms: f64| ms / count as f64;
        Stats {
            median_ms: per(self.median_ms),
            min_ms: per(self.min_ms),
            max_ms: per(self.max_ms),
            mean_ms: per(self.mean_ms),
            reps: self.reps,
        }
    }

    /// Turns a time into a rate: `amount` units of work (bytes, FLOPs) per second, for the
    /// median, the best (min time) and the worst (max time) repetition.
    pub fn rate(&self, amount: f64) -> Rate {
        Rate {
            median: amount / (self.median_ms * 1e-3),
            best: amount / (self.min_ms * 1e-3),
            worst: amount / (self.max_ms * 1e-3),
        }
    }
}

/// Work per second at the median, best and worst repetition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub median: f64,
    pub best: f64,
    pub worst: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = Stats::from_samples(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median_ms, s.min_ms, s.max_ms, s.reps), (2.0, 1.0, 3.0, 3));
        let s = Stats::from_samples(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median_ms, 2.5);
        assert_eq!(s.mean_ms, 2.5);
    }

    #[test]
    fn one_slow_outlier_moves_the_mean_not_the_median() {
        let s = Stats::from_samples(&[1.0, 1.0, 1.0, 1.0, 100.0]).unwrap();
        assert_eq!(s.median_ms, 1.0);
        assert!(s.mean_ms > 20.0);
        assert_eq!(s.max_ms, 100.0);
    }

    #[test]
    fn empty_or_nan_is_no_summary() {
        assert!(Stats::from_samples(&[]).is_none());
        assert!(Stats::from_samples(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn rate_uses_min_time_for_best() {
        let s = Stats::from_samples(&[1.0, 2.0, 4.0]).unwrap();
        let r = s.rate(1e9); // 1 GB
        assert_eq!(r.median, 0.5e12);
        assert_eq!(r.best, 1e12);
        assert_eq!(r.worst, 0.25e12);
    }
}
