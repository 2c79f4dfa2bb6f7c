//! One GPU's memory seen from another: copies between two GPUs by every path the chapter
//! compares (the copy engines, a kernel that reads or writes the peer's memory, the host in
//! between), in one direction and both at once; the copy engines between every pair of GPUs;
//! and the latency of one load of the peer's memory. Every copy is verified byte for byte
//! before it is timed.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::devices::{self, memcpy_dtoh, memcpy_htod, memcpy_peer, time_streams};
use crate::harness::kernels::KernelTable;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Stats, L2};

crate::kernel_names! {
    /// The kernels of `kernels/multi_gpu.cu`.
    pub enum PeerKernel in "multi_gpu.cu" {
        /// A copy whose source or destination may be a peer's memory.
        Copy => "peer_copy",
        /// One thread following a chain of dependent loads.
        Chase => "peer_chase",
    }
}

/// Threads per block of the copy kernel.
pub const COPY_BLOCK: u32 = 256;
/// Loads of 16 bytes each thread of the copy kernel issues before its first store
/// (`PEER_LOADS` in `kernels/multi_gpu.cu`).
pub const PEER_LOADS: usize = 8;

/// Bytes one block of the copy kernel keeps in flight.
pub fn block_in_flight() -> usize {
    COPY_BLOCK as usize * PEER_LOADS * 16
}

/// Blocks of the in-flight sweep: 4, 8, 16, ... up to `full` (the grid that fills the GPU).
pub fn sweep_blocks(full: u32) -> Vec<u32> {
    let mut blocks: Vec<u32> = std::iter::successors(Some(4u32), |b| Some(b * 2))
        .take_while(|b| *b < full)
        .collect();
    blocks.push(full);
    blocks
}

/// The copy kernel with a given number of blocks, at the sweep's largest size.
#[derive(Debug, Clone)]
pub struct InFlightPoint {
    /// [`Path::KernelPush`] or [`Path::KernelPull`].
    pub path: Path,
    pub blocks: u32,
    pub bytes: usize,
    pub time: Stats,
}

impl InFlightPoint {
    /// Bytes the grid keeps in flight: blocks × threads × loads × 16.
    pub fn in_flight(&self) -> usize {
        self.blocks as usize * block_in_flight()
    }
}
/// Streams (of the sending GPU) the split copy-engine path spreads one copy over.
pub const COPY_STREAMS: usize = 4;
/// Chunks of the pipelined host-staged path.
pub const STAGING_CHUNKS: usize = 8;

/// The chapter's kernels on one GPU, the copy ready to fill every SM.
pub struct PeerKernels {
    pub table: KernelTable<PeerKernel>,
    grid: u32,
}

impl PeerKernels {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let table = KernelTable::<PeerKernel>::load(gpu)?;
        let f = table.get(PeerKernel::Copy);
        let per_sm =
            f.occupancy_max_active_blocks_per_multiprocessor(COPY_BLOCK, 0, None)?;
        Ok(Self { table, grid: gpu.info.sms as u32 * per_sm.max(1) })
    }

    /// Enqueues a copy of `bytes` bytes from `src` to `dst` (either may be a peer's memory,
    /// with peer access enabled) on `stream`, which must belong to this kernel's GPU, with
    /// enough blocks to fill every SM.
    ///
    /// # Safety
    /// Both addresses must hold `bytes` bytes and be reachable from this GPU.
    pub unsafe fn copy(
        &self,
        stream: &Arc<CudaStream>,
        src: CUdeviceptr,
        dst: CUdeviceptr,
        bytes: usize,
    ) -> anyhow::Result<()> {
        self.copy_with_blocks(stream, src, dst, bytes, self.grid)
    }

    /// Blocks that fill every SM of this GPU.
    pub fn full_grid(&self) -> u32 {
        self.grid
    }

    /// [`PeerKernels::copy`] with at most `blocks` blocks of [`COPY_BLOCK`] threads.
    ///
    /// # Safety
    /// As for [`PeerKernels::copy`].
    pub unsafe fn copy_with_blocks(
        &self,
        stream: &Arc<CudaStream>,
        src: CUdeviceptr,
        dst: CUdeviceptr,
        bytes: usize,
        blocks: u32,
    ) -> anyhow::Result<()> {
        let blocks_needed = bytes.div_ceil(16).div_ceil(COPY_BLOCK as usize).max(1);
        let cfg = LaunchConfig {
            grid_dim: (blocks.max(1).min(blocks_needed as u32), 1, 1),
            block_dim: (COPY_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let n = bytes as u64;
        stream
            .launch_builder(self.table.get(PeerKernel::Copy))
            .arg(&src)
            .arg(&dst)
            .arg(&n)
            .launch(cfg)?;
        Ok(())
    }

    /// Enqueues `steps` dependent loads along the chain at `next`, from and back to `position`.
    ///
    /// # Safety
    /// `next` must hold the chain (every value an index into it) and be reachable from this
    /// GPU; `position` one `u32` of this GPU.
    pub unsafe fn chase(
        &self,
        stream: &Arc<CudaStream>,
        next: CUdeviceptr,
        position: CUdeviceptr,
        steps: u64,
    ) -> anyhow::Result<()> {
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        stream
            .launch_builder(self.table.get(PeerKernel::Chase))
            .arg(&next)
            .arg(&position)
            .arg(&steps)
            .launch(one)?;
        Ok(())
    }
}

/// The ways of moving bytes from GPU `a` to GPU `b` (and back) the chapter compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// A copy within GPU a (`cuMemcpyDtoDAsync`): the reference.
    Local,
    /// `cuMemcpyPeerAsync` on a stream of a: the copy engines.
    CopyEngine,
    /// The same copy cut in [`COPY_STREAMS`] pieces on as many streams of a.
    CopyEngineStreams,
    /// A kernel on a reads its own memory and writes b's.
    KernelPush,
    /// A kernel on b reads a's memory and writes its own.
    KernelPull,
    /// a → page-locked host memory, then host → b, one after the other.
    HostStaged,
    /// The same in [`STAGING_CHUNKS`] chunks, b's upload of one chunk overlapping a's download
    /// of the next.
    HostStagedPipelined,
    /// `cuMemcpyPeerAsync` a → b and b → a at the same time.
    CopyEngineBothWays,
    /// A kernel on a writing b's memory and one on b writing a's, at the same time.
    KernelPushBothWays,
}

impl Path {
    pub const ALL: [Path; 9] = [
        Path::Local,
        Path::CopyEngine,
        Path::CopyEngineStreams,
        Path::KernelPush,
        Path::KernelPull,
        Path::HostStaged,
        Path::HostStagedPipelined,
        Path::CopyEngineBothWays,
        Path::KernelPushBothWays,
    ];

    pub fn name(self) -> String {
        match self {
            Path::Local => "one GPU, cuMemcpyDtoD".into(),
            Path::CopyEngine => "copy engine, one way".into(),
            Path::CopyEngineStreams => format!("copy engine, {COPY_STREAMS} streams"),
            Path::KernelPush => "kernel writes the peer".into(),
            Path::KernelPull => "kernel reads the peer".into(),
            Path::HostStaged => "through the host".into(),
            Path::HostStagedPipelined => {
                format!("through the host, {STAGING_CHUNKS} chunks")
            }
            Path::CopyEngineBothWays => "copy engine, both ways".into(),
            Path::KernelPushBothWays => "kernel writes, both ways".into(),
        }
    }

    /// How many copies of `bytes` cross between the GPUs (2 for both ways at once).
    pub fn directions(self) -> usize {
        match self {
            Path::CopyEngineBothWays | Path::KernelPushBothWays => 2,
            _ => 1,
        }
    }

    /// Whether the path needs peer access between the two GPUs.
    pub fn needs_peer_access(self) -> bool {
        matches!(self, Path::KernelPush | Path::KernelPull | Path::KernelPushBothWays)
    }
}

/// One path at one size: the time of one copy (both, for both ways).
#[derive(Debug, Clone)]
pub struct PeerPoint {
    pub path: Path,
    pub bytes: usize,
    pub time: Stats,
}

impl PeerPoint {
    /// Bytes that crossed per second, in GB/s (both directions added for both ways), at the
    /// median, the slowest and the fastest repetition.
    pub fn gbps(&self) -> crate::harness::stats::Rate {
        self.time.rate((self.path.directions() * self.bytes) as f64 / 1e9)
    }
}

/// 4 KiB, 16 KiB, ... (×4) up to `max`, and `max` itself.
pub fn copy_sizes(max: usize) -> Vec<usize> {
    let mut sizes: Vec<usize> = std::iter::successors(Some(4096usize), |s| Some(s * 4))
        .take_while(|s| *s <= max)
        .collect();
    if sizes.last() != Some(&max) {
        sizes.push(max);
    }
    sizes
}

/// Back-to-back copies per timed repetition: enough that a repetition lasts well beyond the
/// event's resolution at small sizes.
pub fn batch_for(bytes: usize) -> usize {
    ((64usize << 20) / bytes.max(1)).clamp(1, 100)
}

/// The buffers of a sweep between `a` and `b`: random sources on each, destinations on each,
/// and a page-locked staging buffer every context sees as page-locked.
struct Buffers {
    src_a: CudaSlice<u8>,
    dst_a: CudaSlice<u8>,
    src_b: CudaSlice<u8>,
    dst_b: CudaSlice<u8>,
    host_a: Vec<u8>,
    host_b: Vec<u8>,
    staging: cudarc::driver::PinnedHostSlice<u8>,
    staging_ptr: *mut u8,
}

fn ptr(s: &CudaSlice<u8>, stream: &CudaStream) -> CUdeviceptr {
    use cudarc::driver::DevicePtr;
    s.device_ptr(stream).0
}

/// Everything [`measure_paths`] needs about the pair.
pub struct Pair<'a> {
    pub a: &'a Gpu,
    pub b: &'a Gpu,
    pub kernels_a: &'a PeerKernels,
    pub kernels_b: &'a PeerKernels,
    /// Whether each GPU may address the other's memory.
    pub peer_access: bool,
}

/// Verifies, then times, every path at every size of `sizes` from `a` to `b`; then, at the
/// largest size, the copy kernels with fewer blocks than fill the GPU.
pub fn measure_paths(
    pair: &Pair,
    sizes: &[usize],
    reps: usize,
    seed: u64,
    mut progress: impl FnMut(&str),
) -> anyhow::Result<(Vec<PeerPoint>, Vec<InFlightPoint>)> {
    let (a, b) = (pair.a, pair.b);
    let max = *sizes.iter().max().expect("one size");
    a.ensure_fits(2 * max, "the peer copies' buffers")?;
    b.ensure_fits(2 * max, "the peer copies' buffers")?;
    let host_a = inputs::random_bytes(max, seed);
    let host_b = inputs::random_bytes(max, seed ^ 0xB);
    // SAFETY: every buffer below is written before it is read.
    let mut staging = unsafe {
        a.ctx.alloc_pinned_with_flags::<u8>(max, sys::CU_MEMHOSTALLOC_PORTABLE)?
    };
    let staging_ptr = staging.as_mut_ptr()?;
    let mut bufs = Buffers {
        src_a: a.stream.clone_htod(&host_a)?,
        dst_a: unsafe { a.stream.alloc::<u8>(max)? },
        src_b: b.stream.clone_htod(&host_b)?,
        dst_b: unsafe { b.stream.alloc::<u8>(max)? },
        host_a,
        host_b,
        staging,
        staging_ptr,
    };
    let extra: Vec<Arc<CudaStream>> =
        (1..COPY_STREAMS).map(|_| a.ctx.new_stream()).collect::<Result<_, _>>()?;
    let paths: Vec<Path> = Path::ALL
        .into_iter()
        .filter(|p| pair.peer_access || !p.needs_peer_access())
        .collect();
    let mut points = Vec::new();
    for &bytes in sizes {
        for &path in &paths {
            progress(&format!("{} {} KiB", path.name(), bytes >> 10));
            let streams: Vec<Arc<CudaStream>> = match path {
                Path::Local | Path::CopyEngine | Path::KernelPush => {
                    vec![a.stream.clone()]
                }
                Path::KernelPull => vec![b.stream.clone()],
                Path::CopyEngineStreams => std::iter::once(a.stream.clone())
                    .chain(extra.iter().cloned())
                    .collect(),
                _ => vec![a.stream.clone(), b.stream.clone()],
            };
            verify_path(pair, &mut bufs, &extra, None, path, bytes)?;
            let plan = Plan::new(2, reps, L2::Warm);
            let time = time_streams(&streams, &[], plan, batch_for(bytes), || {
                enqueue(pair, &bufs, &extra, None, path, bytes)
            })?;
            points.push(PeerPoint { path, bytes, time });
        }
    }
    // How many bytes in flight the link needs: the kernels with fewer and fewer blocks.
    let mut in_flight = Vec::new();
    if pair.peer_access {
        for path in [Path::KernelPull, Path::KernelPush] {
            let kernels =
                if path == Path::KernelPull { pair.kernels_b } else { pair.kernels_a };
            for blocks in sweep_blocks(kernels.full_grid()) {
                progress(&format!("{} with {blocks} blocks", path.name()));
                let sweep = Sweep { path, blocks };
                verify_path(pair, &mut bufs, &extra, Some(sweep), path, max)?;
                let stream =
                    if path == Path::KernelPull { &b.stream } else { &a.stream };
                let plan = Plan::new(2, reps, L2::Warm);
                let time =
                    time_streams(std::slice::from_ref(stream), &[], plan, 1, || {
                        enqueue(pair, &bufs, &extra, Some(sweep), path, max)
                    })?;
                in_flight.push(InFlightPoint { path, blocks, bytes: max, time });
            }
        }
    }
    if pair.peer_access && a.counting() {
        count_peer_kernels(pair, &bufs, max)?;
    }
    drop(bufs.staging);
    Ok((points, in_flight))
}

/// Under `--counters`: the copy kernel of the first GPU (the one ncu's cases are marked
/// on) writing the second GPU's memory, then reading it, each verified byte for byte. The
/// model: the first GPU's own device memory sees only its side of the copy — its source
/// read when it pushes, its destination written when it pulls — and its loads and stores
/// are 16 bytes a lane, 16 sectors a warp request, wherever the address points.
fn count_peer_kernels(pair: &Pair, bufs: &Buffers, bytes: usize) -> anyhow::Result<()> {
    use crate::harness::counters::{Case, Quantity};
    let (a, b) = (pair.a, pair.b);
    let (src_a, dst_a) = (ptr(&bufs.src_a, &a.stream), ptr(&bufs.dst_a, &a.stream));
    let (src_b, dst_b) = (ptr(&bufs.src_b, &b.stream), ptr(&bufs.dst_b, &b.stream));
    let size = format!("{bytes} bytes");
    let mib = bytes >> 20;
    // (label, source, destination, its GPU and buffer, what must arrive)
    let cases = [
        (
            format!("GPU 0's kernel writes GPU 1, {mib} MiB"),
            src_a,
            dst_b,
            b,
            &bufs.dst_b,
            &bufs.host_a,
        ),
        (
            format!("GPU 0's kernel reads GPU 1, {mib} MiB"),
            src_b,
            dst_a,
            a,
            &bufs.dst_a,
            &bufs.host_b,
        ),
    ];
    for (label, src, dst, dst_gpu, dst_buf, want) in cases {
        // SAFETY: every buffer holds at least `bytes` bytes; peer access is enabled.
        unsafe { devices::poison(&dst_gpu.stream, dst, bytes)? };
        devices::synchronize(&[a.stream.clone(), b.stream.clone()])?;
        let case = Case::new(label.clone())
            .predict(Quantity::DramBytes, bytes as f64)
            .predict(Quantity::LoadSectorsPerRequest, 16.0)
            .predict(Quantity::StoreSectorsPerRequest, 16.0);
        // SAFETY: as above.
        a.count(case, || unsafe { pair.kernels_a.copy(&a.stream, src, dst, bytes) })?;
        devices::synchronize(&[a.stream.clone(), b.stream.clone()])?;
        let got = dst_gpu.stream.clone_dtoh(&dst_buf.slice(0..bytes))?;
        verify::check_exact(&label, &size, &got, &want[..bytes])?;
    }
    Ok(())
}

/// The copy kernel of `path` launched with `blocks` blocks instead of the full grid.
#[derive(Debug, Clone, Copy)]
struct Sweep {
    path: Path,
    blocks: u32,
}

/// Poisons the destinations, runs `path` once, and compares every byte that arrived.
fn verify_path(
    pair: &Pair,
    bufs: &mut Buffers,
    extra: &[Arc<CudaStream>],
    sweep: Option<Sweep>,
    path: Path,
    bytes: usize,
) -> anyhow::Result<()> {
    let (a, b) = (pair.a, pair.b);
    // SAFETY: each destination holds at least `bytes` bytes.
    unsafe {
        devices::poison(&a.stream, ptr(&bufs.dst_a, &a.stream), bytes)?;
        devices::poison(&b.stream, ptr(&bufs.dst_b, &b.stream), bytes)?;
    }
    devices::synchronize(&[a.stream.clone(), b.stream.clone()])?;
    enqueue(pair, bufs, extra, sweep, path, bytes)?;
    devices::synchronize(&[a.stream.clone(), b.stream.clone()])?;
    devices::synchronize(extra)?;
    let size = format!("{bytes} bytes");
    let name = match sweep {
        Some(s) => format!("{} with {} blocks", path.name(), s.blocks),
        None => path.name(),
    };
    let (into_a, into_b) = match path {
        Path::Local => (true, false),
        Path::CopyEngineBothWays | Path::KernelPushBothWays => (true, true),
        _ => (false, true),
    };
    if into_b {
        let got = b.stream.clone_dtoh(&bufs.dst_b.slice(0..bytes))?;
        verify::check_exact(&name, &size, &got, &bufs.host_a[..bytes])?;
    }
    if into_a {
        let want = if path == Path::Local { &bufs.host_a } else { &bufs.host_b };
        let got = a.stream.clone_dtoh(&bufs.dst_a.slice(0..bytes))?;
        verify::check_exact(&name, &size, &got, &want[..bytes])?;
    }
    Ok(())
}

/// Enqueues one copy of `bytes` bytes by `path` (a → b; and b → a for both ways).
fn enqueue(
    pair: &Pair,
    bufs: &Buffers,
    extra: &[Arc<CudaStream>],
    sweep: Option<Sweep>,
    path: Path,
    bytes: usize,
) -> anyhow::Result<()> {
    let (a, b) = (pair.a, pair.b);
    let (src_a, dst_a) = (ptr(&bufs.src_a, &a.stream), ptr(&bufs.dst_a, &a.stream));
    let (src_b, dst_b) = (ptr(&bufs.src_b, &b.stream), ptr(&bufs.dst_b, &b.stream));
    let host = bufs.staging_ptr;
    if let Some(Sweep { path, blocks }) = sweep {
        let (k, s) = match path {
            Path::KernelPull => (pair.kernels_b, &b.stream),
            _ => (pair.kernels_a, &a.stream),
        };
        // SAFETY: as below.
        return unsafe { k.copy_with_blocks(s, src_a, dst_b, bytes, blocks) };
    }
    // SAFETY: every buffer holds at least `bytes` bytes (the sweep's largest size); peer
    // pointers are used by kernels only where peer access is enabled.
    unsafe {
        match path {
            Path::Local => {
                a.ctx.bind_to_thread()?;
                cudarc::driver::result::memcpy_dtod_async(
                    dst_a,
                    src_a,
                    bytes,
                    a.stream.cu_stream(),
                )?;
            }
            Path::CopyEngine => memcpy_peer(&a.stream, (b, dst_b), (a, src_a), bytes)?,
            Path::CopyEngineStreams => {
                let streams = std::iter::once(&a.stream).chain(extra);
                for (i, s) in streams.enumerate() {
                    let (lo, hi) = piece(bytes, COPY_STREAMS, i);
                    let at = lo as u64;
                    memcpy_peer(s, (b, dst_b + at), (a, src_a + at), hi - lo)?;
                }
            }
            Path::KernelPush => pair.kernels_a.copy(&a.stream, src_a, dst_b, bytes)?,
            Path::KernelPull => pair.kernels_b.copy(&b.stream, src_a, dst_b, bytes)?,
            Path::HostStaged => {
                memcpy_dtoh(&a.stream, host, src_a, bytes)?;
                b.stream.join(&a.stream)?; // b uploads once a's download is done
                memcpy_htod(&b.stream, dst_b, host, bytes)?;
            }
            Path::HostStagedPipelined => {
                for i in 0..STAGING_CHUNKS {
                    let (lo, hi) = piece(bytes, STAGING_CHUNKS, i);
                    let at = lo as u64;
                    memcpy_dtoh(&a.stream, host.add(lo), src_a + at, hi - lo)?;
                    b.stream.join(&a.stream)?; // chunk i is on the host
                    memcpy_htod(&b.stream, dst_b + at, host.add(lo), hi - lo)?;
                }
            }
            Path::CopyEngineBothWays => {
                memcpy_peer(&a.stream, (b, dst_b), (a, src_a), bytes)?;
                memcpy_peer(&b.stream, (a, dst_a), (b, src_b), bytes)?;
            }
            Path::KernelPushBothWays => {
                pair.kernels_a.copy(&a.stream, src_a, dst_b, bytes)?;
                pair.kernels_b.copy(&b.stream, src_b, dst_a, bytes)?;
            }
        }
    }
    Ok(())
}

/// Byte range `[lo, hi)` of piece `i` of `pieces` over `bytes`, cut at multiples of 256 bytes.
pub fn piece(bytes: usize, pieces: usize, i: usize) -> (usize, usize) {
    let cut =
        |k: usize| if k >= pieces { bytes } else { (bytes * k / pieces) / 256 * 256 };
    (cut(i), cut(i + 1))
}

mod latency;
mod pairs;
pub use latency::*;
pub use pairs::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_pieces_and_batches() {
        assert_eq!(copy_sizes(1 << 20), [4096, 16384, 65536, 262144, 1 << 20]);
        assert_eq!(copy_sizes(3 << 20).last(), Some(&(3 << 20)));
        let bytes = (1 << 20) + 4;
        let pieces: Vec<_> = (0..4).map(|i| piece(bytes, 4, i)).collect();
        assert_eq!(pieces[0].0, 0);
        assert_eq!(pieces[3].1, bytes);
        for w in pieces.windows(2) {
            assert_eq!(w[0].1, w[1].0);
            assert_eq!(w[1].0 % 256, 0);
        }
        assert_eq!(batch_for(4096), 100);
        assert_eq!(batch_for(1 << 30), 1);
    }

    #[test]
    fn both_ways_count_both_directions() {
        let time = Stats::from_samples(&[1.0]).unwrap();
        let one = PeerPoint {
            path: Path::CopyEngine,
            bytes: 1_000_000_000,
            time: time.clone(),
        };
        let two =
            PeerPoint { path: Path::CopyEngineBothWays, bytes: 1_000_000_000, time };
        assert_eq!(one.gbps().median, 1000.0);
        assert_eq!(two.gbps().median, 2000.0);
    }
}
