//! All-reduce, all-gather and reduce-scatter through NCCL over message sizes from bytes to
//! GiB, each verified against the CPU before it is timed, reported the way nccl-tests reports
//! them: the time of one collective, algorithm bandwidth (size / time) and bus bandwidth
//! (algorithm bandwidth × [`Collective::bus_factor`]).

use cudarc::driver::CudaSlice;

use super::devices::{self, streams_of, time_streams};
use super::nccl::{element_count, Collective, Comms};
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Stats, Tolerance, L2};

/// One collective at one size.
#[derive(Debug, Clone)]
pub struct CollectivePoint {
    pub collective: Collective,
    pub ranks: usize,
    /// nccl-tests' size: the all-reduce buffer, the all-gather's result, the reduce-scatter's
    /// input, in bytes.
    pub bytes: usize,
    pub time: Stats,
}

impl CollectivePoint {
    /// Size over time, GB/s (median, slowest, fastest repetition).
    pub fn algbw(&self) -> crate::harness::stats::Rate {
        self.time.rate(self.bytes as f64 / 1e9)
    }

    /// [`CollectivePoint::algbw`] × the bus factor.
    pub fn busbw(&self) -> crate::harness::stats::Rate {
        let f = self.collective.bus_factor(self.ranks);
        let r = self.algbw();
        crate::harness::stats::Rate {
            median: r.median * f,
            best: r.best * f,
            worst: r.worst * f,
        }
    }
}

/// 8 B, 16 B, ... (×2) up to `max` bytes.
pub fn sizes(max: usize) -> Vec<usize> {
    std::iter::successors(Some(8usize), |s| Some(s * 2))
        .take_while(|s| *s <= max)
        .collect()
}

/// Collectives per timed repetition (nccl-tests' `-n`), after as many untimed ones.
pub const ITERS: usize = 20;

// ANCHOR: expected
/// What rank `rank` must hold after `collective` over `inputs` (one buffer per rank,
/// each the rank's send buffer), computed in f64.
pub fn expected(collective: Collective, inputs: &[Vec<f32>], rank: usize) -> Vec<f64> {
    let ranks = inputs.len();
    match collective {
        Collective::AllReduce => (0..inputs[0].len())
            .map(|i| inputs.iter().map(|v| v[i] as f64).sum())
            .collect(),
        Collective::AllGather => inputs.iter().flatten().map(|&x| x as f64).collect(),
        Collective::ReduceScatter => {
            let part = inputs[0].len() / ranks;
            (rank * part..(rank + 1) * part)
                .map(|i| inputs.iter().map(|v| v[i] as f64).sum())
                .collect()
        }
    }
}
// ANCHOR_END: expected

/// Sums of `ranks` floats in [-1, 1) agree with the f64 sum within a few roundings.
pub fn tolerance(ranks: usize) -> Tolerance {
    let eps = f32::EPSILON as f64;
    Tolerance::new(4.0 * ranks as f64 * eps, 4.0 * eps)
}

/// Verifies, then times, `collective` over every GPU of `comms` at every size of `sizes`.
pub fn measure(
    gpus: &[&Gpu],
    comms: &Comms,
    collective: Collective,
    sizes: &[usize],
    reps: usize,
    seed: u64,
    mut progress: impl FnMut(&str),
) -> anyhow::Result<Vec<CollectivePoint>> {
    let ranks = comms.ranks();
    anyhow::ensure!(ranks == gpus.len());
    let streams = streams_of(gpus);
    let mut points = Vec::new();
    for &bytes in sizes {
        progress(&format!("{} {bytes} B", collective.name()));
        let count = element_count(bytes, ranks);
        let (send_n, recv_n) = collective.counts(count, ranks);
        for g in gpus {
            g.ensure_fits(4 * (send_n + recv_n), "a collective's buffers")?;
        }
        let host: Vec<Vec<f32>> = (0..ranks)
            .map(|r| inputs::random_f32(send_n, seed ^ (bytes as u64) << 8 ^ r as u64))
            .collect();
        let send: Vec<CudaSlice<f32>> = gpus
            .iter()
            .zip(&host)
            .map(|(g, h)| g.stream.clone_htod(h))
            .collect::<Result<_, _>>()?;
        let mut recv: Vec<CudaSlice<f32>> = gpus
            .iter()
            .map(|g| unsafe { g.stream.alloc::<f32>(recv_n) })
            .collect::<Result<_, _>>()?;
        for (g, r) in gpus.iter().zip(recv.iter_mut()) {
            g.ctx.bind_to_thread()?; // NCCL may have left another GPU current
            g.poison(r)?;
        }
        comms.enqueue(collective, &send, &mut recv)?;
        devices::synchronize(&streams)?;
        let size = format!("{bytes} bytes over {ranks} GPUs");
        // All-reduce and all-gather leave the same result on every rank: computed once.
        let same = matches!(collective, Collective::AllReduce | Collective::AllGather)
            .then(|| expected(collective, &host, 0));
        for (rank, (g, r)) in gpus.iter().zip(&recv).enumerate() {
            let got = g.stream.clone_dtoh(r)?;
            let want = match &same {
                Some(w) => std::borrow::Cow::Borrowed(w),
                None => std::borrow::Cow::Owned(expected(collective, &host, rank)),
            };
            let what = format!("NCCL {} (rank {rank})", collective.name());
            verify::check_close(&what, &size, &got, &want[..], tolerance(ranks))?;
        }
        drop(host);
        let plan = Plan::new(1, reps, L2::Warm);
        let time = time_streams(&streams, &[], plan, ITERS, || {
            comms.enqueue(collective, &send, &mut recv)
        })?;
        points.push(CollectivePoint { collective, ranks, bytes: count * 4, time });
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_results_of_each_collective() {
        let inputs = vec![vec![1.0f32, 2.0, 3.0, 4.0], vec![10.0, 20.0, 30.0, 40.0]];
        assert_eq!(
            expected(Collective::AllReduce, &inputs, 1),
            [11.0, 22.0, 33.0, 44.0]
        );
        assert_eq!(expected(Collective::ReduceScatter, &inputs, 0), [11.0, 22.0]);
        assert_eq!(expected(Collective::ReduceScatter, &inputs, 1), [33.0, 44.0]);
        let gathered = expected(Collective::AllGather, &[vec![1.0], vec![2.0]], 0);
        assert_eq!(gathered, [1.0, 2.0]);
    }

    #[test]
    fn sizes_double_from_eight_bytes() {
        assert_eq!(sizes(64), [8, 16, 32, 64]);
        assert_eq!(sizes(1 << 30).len(), 28);
    }

    #[test]
    fn bus_bandwidth_of_a_two_gpu_all_reduce_is_its_algorithm_bandwidth() {
        let p = CollectivePoint {
            collective: Collective::AllReduce,
            ranks: 2,
            bytes: 1_000_000_000,
            time: Stats::from_samples(&[4.0]).unwrap(),
        };
        assert_eq!(p.algbw().median, 250.0);
        assert_eq!(p.busbw().median, 250.0);
    }
}
