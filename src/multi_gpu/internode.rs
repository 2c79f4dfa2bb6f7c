//! On paper: what a second node would change. An alpha–beta model, fitted to the all-reduce
//! measured within the node, predicts the all-reduce over two such nodes joined by InfiniBand,
//! whose link is an assumption ([`IB_GBPS`], [`IB_ALPHA_US`]), not a measurement.
//!
//! The model of one step of a collective over one link is `t = alpha + bytes / beta`. A ring
//! all-reduce of `S` bytes over `G` GPUs takes `2 (G - 1)` steps of `S / G` bytes each (a
//! reduce-scatter, then an all-gather):
//!
//! ```text
//! t_node(S) = 2 (G - 1) (alpha + S / (G beta))
//! ```
//!
//! a line in `S`, fitted to the measured times. Over two nodes of `G` GPUs each, with one NIC
//! per GPU, the all-reduce is taken in three parts: a reduce-scatter within each node, leaving
//! each GPU `S / G` bytes of its node's sum; an all-reduce of that part between the GPU and its
//! counterpart in the other node (a ring of two: two steps of `S / (2 G)` bytes over
//! InfiniBand); an all-gather within each node:
//!
//! ```text
//! t_two(S) = 2 (G - 1) (alpha + S / (G beta)) + 2 (alpha_ib + S / (2 G beta_ib))
//! ```

use super::collectives::CollectivePoint;
use super::nccl::Collective;

/// The assumed InfiniBand link of each GPU: NDR, 400 Gb/s in each direction, 50 GB/s.
pub const IB_GBPS: f64 = 50.0;
/// The assumed cost of one step over InfiniBand whatever its size, µs: a message through the
/// NIC, one switch and the NIC of the other node, with NCCL's network thread on both ends.
pub const IB_ALPHA_US: f64 = 5.0;
/// What the assumed link is, as the tables say it.
pub const IB_NAME: &str = "InfiniBand NDR, one 400 Gb/s NIC per GPU (assumed)";

// ANCHOR: model
/// One link of the model: the fixed cost of a step and the bandwidth of one direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub alpha_us: f64,
    pub beta_gbps: f64,
}

impl Link {
    /// Seconds for one step of `bytes` bytes: t = alpha + bytes / beta.
    pub fn step_s(self, bytes: f64) -> f64 {
        self.alpha_us * 1e-6 + bytes / (self.beta_gbps * 1e9)
    }
}

/// Seconds of a ring all-reduce of `bytes` over `gpus` GPUs of one node: a
/// reduce-scatter and an all-gather, 2 (G - 1) steps of `bytes / G` each.
pub fn one_node_s(link: Link, gpus: usize, bytes: f64) -> f64 {
    let g = gpus as f64;
    2.0 * (g - 1.0) * link.step_s(bytes / g)
}

/// Seconds of the all-reduce of `bytes` over two nodes of `gpus` GPUs each: the
/// reduce-scatter and the all-gather within each node, and between them each GPU's
/// part (`bytes / G`) all-reduced with its counterpart in the other node over
/// `between`: a ring of two, two steps of half the part.
pub fn two_nodes_s(node: Link, between: Link, gpus: usize, bytes: f64) -> f64 {
    let part = bytes / gpus as f64;
    one_node_s(node, gpus, bytes) + 2.0 * between.step_s(part / 2.0)
}
// ANCHOR_END: model

/// The assumed link between the nodes.
pub const INFINIBAND: Link = Link { alpha_us: IB_ALPHA_US, beta_gbps: IB_GBPS };

/// `(a, b)` of the line `t = a + b x` through `(x, t)` with the least squared relative
/// error: every size counts alike, a byte as much as a gigabyte.
pub fn fit_line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    // Weighted least squares, weights 1 / t^2, on x scaled to at most 1 (sizes span nine
    // decades; their squares would not keep the small ones' weight).
    let scale = points.iter().map(|p| p.0.abs()).fold(0.0, f64::max);
    if scale == 0.0 {
        return None;
    }
    let (mut sw, mut sx, mut st, mut sxx, mut sxt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, t) in points.iter().filter(|(_, t)| *t > 0.0) {
        let x = x / scale;
        let w = 1.0 / (t * t);
        sw += w;
        sx += w * x;
        st += w * t;
        sxx += w * x * x;
        sxt += w * x * t;
    }
    let det = sw * sxx - sx * sx;
    if points.len() < 2 || det.abs() <= f64::EPSILON * sw * sxx {
        return None;
    }
    let b = (sw * sxt - sx * st) / det;
    let a = (st - b * sx) / sw;
    Some((a, b / scale))
}

/// The NVLink step of the model fitted to the all-reduce over `gpus` GPUs among `points`
/// (median times): `None` with fewer than two GPUs or two sizes, or a fit without a positive
/// fixed cost and bandwidth.
pub fn fit_node(points: &[CollectivePoint], gpus: usize) -> Option<Link> {
    if gpus < 2 {
        return None;
    }
    let xy: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.collective == Collective::AllReduce && p.ranks == gpus)
        .map(|p| (p.bytes as f64, p.time.median_ms * 1e-3))
        .collect();
    let (a, b) = fit_line(&xy)?;
    let steps = 2.0 * (gpus as f64 - 1.0);
    // a = steps alpha, b = steps / (G beta).
    let link =
        Link { alpha_us: a / steps * 1e6, beta_gbps: steps / (gpus as f64 * b) / 1e9 };
    (link.alpha_us > 0.0 && link.beta_gbps > 0.0).then_some(link)
}

/// One size of the model's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub bytes: usize,
    /// The all-reduce measured over the node's GPUs, s.
    pub measured_s: f64,
    /// The model of it, s.
    pub one_node_s: f64,
    /// The model over two nodes, s.
    pub two_nodes_s: f64,
}

impl Prediction {
    /// Bus bandwidth, GB/s, of an all-reduce of this size taking `s` over `ranks` GPUs.
    pub fn busbw(&self, s: f64, ranks: usize) -> f64 {
        self.bytes as f64 / s / 1e9 * Collective::AllReduce.bus_factor(ranks)
    }
}

/// The model at the measured sizes of the all-reduce over `gpus` GPUs.
pub fn predict(points: &[CollectivePoint], gpus: usize, node: Link) -> Vec<Prediction> {
    points
        .iter()
        .filter(|p| p.collective == Collective::AllReduce && p.ranks == gpus)
        .map(|p| {
            let s = p.bytes as f64;
            Prediction {
                bytes: p.bytes,
                measured_s: p.time.median_ms * 1e-3,
                one_node_s: one_node_s(node, gpus, s),
                two_nodes_s: two_nodes_s(node, INFINIBAND, gpus, s),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Stats;

    fn all_reduce(ranks: usize, bytes: usize, s: f64) -> CollectivePoint {
        CollectivePoint {
            collective: Collective::AllReduce,
            ranks,
            bytes,
            time: Stats::from_samples(&[s * 1e3]).unwrap(),
        }
    }

    #[test]
    fn the_fit_finds_the_link_that_made_the_times() {
        let link = Link { alpha_us: 6.0, beta_gbps: 350.0 };
        let points: Vec<CollectivePoint> = (3..31)
            .map(|p| 1usize << p)
            .map(|b| all_reduce(4, b, one_node_s(link, 4, b as f64)))
            .collect();
        let fitted = fit_node(&points, 4).unwrap();
        assert!((fitted.alpha_us - 6.0).abs() < 1e-6, "{fitted:?}");
        assert!((fitted.beta_gbps - 350.0).abs() < 1e-6, "{fitted:?}");
        assert!(fit_node(&points, 2).is_none(), "no all-reduce over 2 GPUs here");
        assert!(fit_node(&points, 1).is_none());
    }

    #[test]
    fn a_second_node_adds_two_infiniband_steps_of_a_part() {
        let nv = Link { alpha_us: 10.0, beta_gbps: 400.0 };
        let s = (1u64 << 30) as f64;
        let extra = two_nodes_s(nv, INFINIBAND, 4, s) - one_node_s(nv, 4, s);
        // Two steps of S / 8 bytes at 50 GB/s plus two fixed costs.
        let want = 2.0 * (IB_ALPHA_US * 1e-6 + s / 8.0 / 50e9);
        assert!((extra - want).abs() < 1e-12, "{extra} vs {want}");
        // Tiny messages: the second node costs its two fixed costs.
        let tiny = two_nodes_s(nv, INFINIBAND, 4, 8.0) - one_node_s(nv, 4, 8.0);
        assert!((tiny - 2.0 * IB_ALPHA_US * 1e-6).abs() < 1e-9);
    }

    #[test]
    fn the_line_fit_refuses_what_it_cannot_fit() {
        assert!(fit_line(&[(1.0, 2.0)]).is_none());
        assert!(fit_line(&[(1.0, 2.0), (1.0, 3.0)]).is_none());
        let (a, b) = fit_line(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).unwrap();
        assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12);
    }
}
