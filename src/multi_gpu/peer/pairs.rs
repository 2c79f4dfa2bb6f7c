//! Copies between every pair of GPUs by the copy engines: each ordered pair one way, each pair
//! both ways at once, and each GPU sending to every other at once (on a board with NVLink
//! switches, the GPU's own links into the switches are what its copies share). Every copy is
//! verified byte for byte before it is timed.

use super::*;

/// Which copies run together, all of `bytes` bytes, each on a stream of its source GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairCopy {
    /// `from` → `to`.
    OneWay { from: usize, to: usize },
    /// `a` → `b` and `b` → `a` at the same time.
    BothWays { a: usize, b: usize },
    /// `from` → every GPU of `to` at the same time, one stream per destination.
    FanOut { from: usize, to: Vec<usize> },
}

impl PairCopy {
    /// Every (source, destination) copy the case runs at once.
    pub fn copies(&self) -> Vec<(usize, usize)> {
        match self {
            PairCopy::OneWay { from, to } => vec![(*from, *to)],
            PairCopy::BothWays { a, b } => vec![(*a, *b), (*b, *a)],
            PairCopy::FanOut { from, to } => to.iter().map(|&t| (*from, t)).collect(),
        }
    }

    /// The pairs to measure among `gpus` GPUs: every ordered pair one way, then every pair
    /// both ways, then, where there are three or more, each GPU to all others at once.
    pub fn all(gpus: usize) -> Vec<PairCopy> {
        let mut cases = Vec::new();
        for from in 0..gpus {
            for to in (0..gpus).filter(|&t| t != from) {
                cases.push(PairCopy::OneWay { from, to });
            }
        }
        for a in 0..gpus {
            for b in a + 1..gpus {
                cases.push(PairCopy::BothWays { a, b });
            }
        }
        if gpus >= 3 {
            for from in 0..gpus {
                let to = (0..gpus).filter(|&t| t != from).collect();
                cases.push(PairCopy::FanOut { from, to });
            }
        }
        cases
    }

    /// `GPU 0 → GPU 1`, `GPU 0 ↔ GPU 1`, `GPU 0 → GPUs 1, 2, 3`.
    pub fn name(&self) -> String {
        match self {
            PairCopy::OneWay { from, to } => format!("GPU {from} → GPU {to}"),
            PairCopy::BothWays { a, b } => format!("GPU {a} ↔ GPU {b}"),
            PairCopy::FanOut { from, to } => format!(
                "GPU {from} → GPUs {}",
                to.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// One case at one size: the time until every copy of it has arrived.
#[derive(Debug, Clone)]
pub struct PairPoint {
    pub copy: PairCopy,
    /// Bytes of each copy.
    pub bytes: usize,
    pub time: Stats,
}

impl PairPoint {
    /// Bytes that arrived per second, every copy of the case added, in GB/s (median, slowest
    /// and fastest repetition).
    pub fn gbps(&self) -> crate::harness::stats::Rate {
        self.time.rate((self.copy.copies().len() * self.bytes) as f64 / 1e9)
    }
}

/// Verifies, then times, every case of [`PairCopy::all`] among `gpus` at `bytes` bytes per
/// copy: each GPU holds one random source and one destination of `bytes` bytes; a fan-out
/// writes into each destination GPU's own buffer, so no two copies of a case share one.
pub fn measure_pairs(
    gpus: &[&Gpu],
    bytes: usize,
    reps: usize,
    seed: u64,
    mut progress: impl FnMut(&str),
) -> anyhow::Result<Vec<PairPoint>> {
    for g in gpus {
        g.ensure_fits(2 * bytes, "the pairwise copies' buffers")?;
    }
    let hosts: Vec<Vec<u8>> = (0..gpus.len())
        .map(|i| inputs::random_bytes(bytes, seed ^ (0x9A1 + i as u64)))
        .collect();
    let srcs: Vec<CudaSlice<u8>> = gpus
        .iter()
        .zip(&hosts)
        .map(|(g, h)| g.stream.clone_htod(h))
        .collect::<Result<_, _>>()?;
    // SAFETY: every destination is poisoned, then written, before it is read.
    let dsts: Vec<CudaSlice<u8>> = gpus
        .iter()
        .map(|g| unsafe { g.stream.alloc::<u8>(bytes) })
        .collect::<Result<_, _>>()?;
    // Streams for the copies a GPU issues at once (a fan-out issues one per destination).
    let mut streams: Vec<Vec<Arc<CudaStream>>> = Vec::new();
    for g in gpus {
        let mut own = vec![g.stream.clone()];
        for _ in 1..gpus.len().saturating_sub(1) {
            own.push(g.ctx.new_stream()?);
        }
        streams.push(own);
    }
    let all_streams: Vec<Arc<CudaStream>> = streams.iter().flatten().cloned().collect();
    let src_ptr = |i: usize| ptr(&srcs[i], &gpus[i].stream);
    let dst_ptr = |i: usize| ptr(&dsts[i], &gpus[i].stream);
    let mut points = Vec::new();
    for case in PairCopy::all(gpus.len()) {
        progress(&format!("copy engines, {}", case.name()));
        let copies = case.copies();
        // The k-th copy from a GPU goes on its k-th stream.
        let plan_streams: Vec<Arc<CudaStream>> = copies
            .iter()
            .enumerate()
            .map(|(k, &(from, _))| {
                let nth = copies[..k].iter().filter(|c| c.0 == from).count();
                streams[from][nth].clone()
            })
            .collect();
        let enqueue = || -> anyhow::Result<()> {
            for (&(from, to), s) in copies.iter().zip(&plan_streams) {
                // SAFETY: every buffer holds `bytes` bytes on its GPU.
                unsafe {
                    memcpy_peer(
                        s,
                        (gpus[to], dst_ptr(to)),
                        (gpus[from], src_ptr(from)),
                        bytes,
                    )?
                };
            }
            Ok(())
        };
        for &(_, to) in &copies {
            // SAFETY: the destination holds `bytes` bytes.
            unsafe { devices::poison(&gpus[to].stream, dst_ptr(to), bytes)? };
        }
        devices::synchronize(&all_streams)?;
        enqueue()?;
        devices::synchronize(&all_streams)?;
        let size = format!("{bytes} bytes");
        for &(from, to) in &copies {
            let got = gpus[to].stream.clone_dtoh(&dsts[to])?;
            verify::check_exact(&case.name(), &size, &got, &hosts[from])?;
        }
        let plan = Plan::new(2, reps, L2::Warm);
        let time = time_streams(&plan_streams, &[], plan, batch_for(bytes), enqueue)?;
        points.push(PairPoint { copy: case, bytes, time });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ordered_pair_once_each_pair_both_ways_and_one_fan_out() {
        let cases = PairCopy::all(4);
        let one_way = cases.iter().filter(|c| matches!(c, PairCopy::OneWay { .. }));
        assert_eq!(one_way.count(), 12);
        let both = cases.iter().filter(|c| matches!(c, PairCopy::BothWays { .. }));
        assert_eq!(both.count(), 6);
        let fan: Vec<Vec<(usize, usize)>> = cases
            .iter()
            .filter(|c| matches!(c, PairCopy::FanOut { .. }))
            .map(PairCopy::copies)
            .collect();
        assert_eq!(fan.len(), 4);
        assert_eq!(fan[0], [(0, 1), (0, 2), (0, 3)], "GPU 0 to every other");
        assert_eq!(fan[2], [(2, 0), (2, 1), (2, 3)]);
        let two = PairCopy::all(2);
        assert_eq!(two.len(), 3, "no fan-out with one peer");
        assert!(PairCopy::all(1).is_empty());
        assert_eq!(PairCopy::BothWays { a: 1, b: 2 }.copies(), [(1, 2), (2, 1)]);
        assert_eq!(cases[0].name(), "GPU 0 → GPU 1");
        assert_eq!(cases.last().unwrap().name(), "GPU 3 → GPUs 0, 1, 2");
    }

    #[test]
    fn a_case_counts_every_copy_that_arrived() {
        let time = Stats::from_samples(&[1.0]).unwrap();
        let fan = PairPoint {
            copy: PairCopy::FanOut { from: 0, to: vec![1, 2, 3] },
            bytes: 1_000_000_000,
            time,
        };
        assert_eq!(fan.gbps().median, 3000.0);
    }
}
