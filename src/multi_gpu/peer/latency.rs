//! The latency of one dependent load, from the GPU's own memory, a peer's, or the host's: a
//! pointer chase through a single cycle.

use super::*;

/// Where the chased memory lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChaseTarget {
    /// The chasing GPU's own memory.
    Own,
    /// The other GPU's memory, through peer access.
    Peer,
    /// Page-locked host memory mapped into the GPU's address space.
    Host,
}

impl ChaseTarget {
    pub fn name(self) -> &'static str {
        match self {
            ChaseTarget::Own => "its own memory",
            ChaseTarget::Peer => "the peer GPU's memory",
            ChaseTarget::Host => "page-locked host memory",
        }
    }
}

/// The latency of one load: `ns_per_load` at the median of the repetitions.
#[derive(Debug, Clone)]
pub struct Latency {
    pub target: ChaseTarget,
    pub footprint: usize,
    pub steps: u64,
    pub time: Stats,
}

impl Latency {
    /// Nanoseconds per dependent load (median, min, max).
    pub fn ns(&self) -> (f64, f64, f64) {
        let per = |ms: f64| ms * 1e6 / self.steps as f64;
        (per(self.time.median_ms), per(self.time.min_ms), per(self.time.max_ms))
    }
}

/// Bytes between two nodes of the chase: two 128-byte lines, so that no two loads share a
/// line (or the line next to it, which a prefetcher might bring).
pub const CHASE_STRIDE: usize = 256;

// ANCHOR: chase_chain
/// A chain through `footprint` bytes: one node every [`CHASE_STRIDE`] bytes, visited in
/// a random order that forms one cycle through every node (Sattolo's shuffle), so a
/// walk never revisits a node before it has seen them all. `next[i]` is the index of
/// the node after node `i`.
pub fn chase_chain(footprint: usize, seed: u64) -> Vec<u32> {
    let per_node = CHASE_STRIDE / 4;
    let nodes = (footprint / CHASE_STRIDE).max(2);
    let mut order: Vec<u32> = (0..nodes as u32).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    order[1..].shuffle(&mut rng); // node 0 first, the rest in random order: one cycle
    let mut next = vec![0u32; nodes * per_node];
    for (k, &node) in order.iter().enumerate() {
        let after = order[(k + 1) % nodes];
        next[node as usize * per_node] = after * per_node as u32;
    }
    next
}
// ANCHOR_END: chase_chain

/// Where a walk of `steps` steps from index 0 ends.
pub fn walk(next: &[u32], steps: u64) -> u32 {
    (0..steps).fold(0u32, |p, _| next[p as usize])
}

/// Verifies, then times, the chase from `gpu` through its own memory, `peer`'s (if given,
/// with peer access enabled) and page-locked host memory.
pub fn measure_latency(
    gpu: &Gpu,
    kernels: &PeerKernels,
    peer: Option<&Gpu>,
    footprint: usize,
    steps: u64,
    reps: usize,
    seed: u64,
) -> anyhow::Result<Vec<Latency>> {
    let chain = chase_chain(footprint, seed);
    let bytes = chain.len() * 4;
    let want = walk(&chain, steps);
    let mut results = Vec::new();
    let mut position = gpu.stream.alloc_zeros::<u32>(1)?;
    let own = gpu.stream.clone_htod(&chain)?;
    let on_peer = peer.map(|p| p.stream.clone_htod(&chain)).transpose()?;
    // SAFETY: written right below, before any kernel reads it.
    let mut host = unsafe {
        gpu.ctx.alloc_pinned_with_flags::<u32>(
            chain.len(),
            sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP,
        )?
    };
    host.as_mut_slice()?.copy_from_slice(&chain);
    let mut host_dev: CUdeviceptr = 0;
    gpu.ctx.bind_to_thread()?;
    // SAFETY: the pointer is a mapped page-locked allocation of this process.
    unsafe {
        sys::cuMemHostGetDevicePointer_v2(&mut host_dev, host.as_mut_ptr()?.cast(), 0)
    }
    .result()?;
    let mut targets = vec![(ChaseTarget::Own, ptr32(&own, &gpu.stream))];
    if let (Some(p), Some(buf)) = (peer, &on_peer) {
        targets.push((ChaseTarget::Peer, ptr32(buf, &p.stream)));
    }
    targets.push((ChaseTarget::Host, host_dev));
    for (target, next) in targets {
        let pos = ptr32(&position, &gpu.stream);
        gpu.stream.memcpy_htod(&[0u32], &mut position)?;
        // SAFETY: `next` holds the chain, reachable from `gpu`; `pos` one u32 of it.
        unsafe { kernels.chase(&gpu.stream, next, pos, steps)? };
        let got = gpu.stream.clone_dtoh(&position)?;
        let what = format!("peer_chase through {}", target.name());
        verify::check_exact(
            &what,
            &format!("{bytes} bytes, {steps} steps"),
            &got,
            &[want],
        )?;
        let plan = Plan::new(1, reps, L2::Warm);
        let time =
            time_streams(std::slice::from_ref(&gpu.stream), &[], plan, 1, || unsafe {
                kernels.chase(&gpu.stream, next, pos, steps)
            })?;
        results.push(Latency { target, footprint: bytes, steps, time });
    }
    Ok(results)
}

fn ptr32(s: &CudaSlice<u32>, stream: &CudaStream) -> CUdeviceptr {
    use cudarc::driver::DevicePtr;
    s.device_ptr(stream).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_one_cycle_through_every_node() {
        let next = chase_chain(64 * CHASE_STRIDE, 3);
        let mut seen = std::collections::BTreeSet::new();
        let mut p = 0u32;
        for _ in 0..64 {
            assert!(seen.insert(p), "node {p} visited twice");
            assert_eq!(p as usize % (CHASE_STRIDE / 4), 0);
            p = next[p as usize];
        }
        assert_eq!(p, 0, "the walk is back at its start after every node");
        assert_eq!(walk(&next, 64), 0);
    }
}
