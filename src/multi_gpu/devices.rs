//! Several GPUs in one process: opening them, peer access, what links each pair (as the CUDA
//! driver and `nvidia-smi` report it), raw copies between them, and timing work that spans
//! several streams or GPUs.

use std::sync::Arc;

use cudarc::driver::sys::{
    self, CUdevice_P2PAttribute as P2P, CUdevice_attribute as Attr,
};
use cudarc::driver::{result, CudaContext, CudaStream};

use crate::harness::timing::Plan;
use crate::harness::toolchain;
use crate::harness::{Gpu, Stats, L2};

/// How many CUDA devices the driver reports.
pub fn device_count() -> anyhow::Result<usize> {
    Ok(CudaContext::device_count()? as usize)
}

/// Opens devices `1..count` (device 0 is the run's own [`Gpu`]).
pub fn open_others(count: usize) -> anyhow::Result<Vec<Gpu>> {
    (1..count).map(|i| Ok(Gpu::open_ordinal(i, false)?)).collect()
}

/// The PCI address of a device as `nvidia-smi` writes it: `00000000:18:00.0`.
pub fn pci_bus_id(gpu: &Gpu) -> anyhow::Result<String> {
    let a = |k| gpu.ctx.attribute(k);
    Ok(format!(
        "{:08X}:{:02X}:{:02X}.0",
        a(Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)?,
        a(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)?,
        a(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)?
    ))
}

// ANCHOR: peer_access
/// Lets kernels on `from` address `to`'s memory directly. `Ok(false)` when the driver
/// says the pair cannot (then copies between them go through the host).
///
/// Two switches, because `to`'s memory comes from two allocators:
/// `cuCtxEnablePeerAccess` opens what `cuMemAlloc` returns, and the access list of
/// `to`'s memory pool opens what the stream-ordered allocator (`cuMemAllocAsync`, which
/// cudarc uses) returns. Without the second, a kernel on `from` that touches a buffer
/// of `to` stops with an illegal address.
pub fn enable_peer_access(from: &Gpu, to: &Gpu) -> anyhow::Result<bool> {
    let (from_dev, to_dev) = (from.ctx.cu_device(), to.ctx.cu_device());
    let mut can = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, from_dev, to_dev) }.result()?;
    if can == 0 {
        return Ok(false);
    }
    from.ctx.bind_to_thread()?;
    // SAFETY: both contexts are alive; the flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(to.ctx.cu_ctx(), 0) } {
        sys::CUresult::CUDA_SUCCESS
        | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
        e => anyhow::bail!("cuCtxEnablePeerAccess failed: {e:?}"),
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: from_dev,
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: `pool` is `to`'s current pool; the descriptor names one of our devices.
    unsafe {
        sys::cuDeviceGetMemPool(&mut pool, to_dev).result()?;
        sys::cuMemPoolSetAccess(pool, &access, 1).result()?;
    }
    Ok(true)
}
// ANCHOR_END: peer_access

// ANCHOR: p2p_attributes
/// What the CUDA driver says about the path from one GPU to another.
#[derive(Debug, Clone, PartialEq)]
pub struct PairInfo {
    pub from: usize,
    pub to: usize,
    /// `CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED`: kernels on `from` may address `to`.
    pub access: bool,
    /// `..._NATIVE_ATOMIC_SUPPORTED`: atomics on the peer's memory run over the link
    /// itself, which NVLink offers and PCIe peer paths do not.
    pub native_atomics: bool,
    /// `..._PERFORMANCE_RANK`: the driver's relative rank of the path (0 is the best).
    pub performance_rank: i32,
    /// The link as `nvidia-smi topo -m` names it, when nvidia-smi is at hand: `NV18`,
    /// a path over 18 NVLinks of each GPU (with NVLink switches, the links each GPU
    /// has into the switches, which all its paths share; not a cable between two);
    /// `PIX`, `PXB`, `PHB`, `NODE`, `SYS`: PCIe paths of growing length.
    pub link: Option<String>,
}

/// Reads the driver's peer attributes of the ordered pair (`from`, `to`).
pub fn pair_info(from: (usize, &Gpu), to: (usize, &Gpu)) -> anyhow::Result<PairInfo> {
    let get = |attribute: P2P| -> anyhow::Result<i32> {
        let mut v = 0;
        // SAFETY: writes one int; both devices exist.
        unsafe {
            sys::cuDeviceGetP2PAttribute(
                &mut v,
                attribute,
                from.1.ctx.cu_device(),
                to.1.ctx.cu_device(),
            )
        }
        .result()?;
        Ok(v)
    };
    Ok(PairInfo {
        from: from.0,
        to: to.0,
        access: get(P2P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED)? != 0,
        native_atomics: get(P2P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)? != 0,
        performance_rank: get(P2P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)?,
        link: None,
    })
}
// ANCHOR_END: p2p_attributes

/// The cells of `nvidia-smi topo -m`'s GPU matrix, by nvidia-smi's GPU index: `cells[i][j]` is
/// how GPU i reaches GPU j (`X` on the diagonal). Rows of NICs and the legend are left out.
pub fn parse_topo_matrix(text: &str) -> Vec<Vec<String>> {
    let clean = strip_escapes(text);
    let mut lines = clean.lines();
    let Some(header) = lines.find(|l| l.split_whitespace().any(is_gpu_name)) else {
        return Vec::new();
    };
    let gpus = header.split_whitespace().filter(|t| is_gpu_name(t)).count();
    lines
        .filter(|l| l.split_whitespace().next().is_some_and(is_gpu_name))
        .map(|l| l.split_whitespace().skip(1).take(gpus).map(str::to_string).collect())
        .filter(|row: &Vec<String>| row.len() == gpus)
        .collect()
}

fn is_gpu_name(token: &str) -> bool {
    token
        .strip_prefix("GPU")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // An ANSI escape: ESC [ ... letter.
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader` → (index, bus id).
pub fn parse_bus_ids(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .filter_map(|l| {
            let (i, bus) = l.split_once(',')?;
            Some((i.trim().parse().ok()?, bus.trim().to_ascii_uppercase()))
        })
        .collect()
}

/// What a cell of `nvidia-smi topo -m` means, in words.
pub fn describe_link(cell: &str) -> String {
    match cell {
        "X" => "itself".into(),
        "PIX" => "PCIe, one PCIe bridge".into(),
        "PXB" => "PCIe, several PCIe bridges".into(),
        "PHB" => "PCIe, through a CPU's host bridge".into(),
        "NODE" => "PCIe, between host bridges of one NUMA node".into(),
        "SYS" => "PCIe and the link between CPU sockets".into(),
        // nvidia-smi counts the NVLinks of each GPU the path uses. Behind NVLink switches
        // they are the GPU's links into the switches, shared by every peer it reaches.
        nv if nv.starts_with("NV") => match nv[2..].parse::<u32>() {
            Ok(1) => "NVLink, 1 link of each GPU".into(),
            Ok(k) => format!("NVLink, {k} links of each GPU"),
            Err(_) => nv.into(),
        },
        other => other.into(),
    }
}

/// Fills in `link` of every pair from nvidia-smi, matching CUDA's devices to nvidia-smi's by
/// PCI address (their orders may differ). Leaves `None` where nvidia-smi is missing.
pub fn read_links(gpus: &[&Gpu], pairs: &mut [PairInfo]) {
    let smi = |args: &[&str]| {
        std::process::Command::new("nvidia-smi")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let (Some(topo), Some(ids)) = (
        smi(&["topo", "-m"]),
        smi(&["--query-gpu=index,pci.bus_id", "--format=csv,noheader"]),
    ) else {
        return;
    };
    let cells = parse_topo_matrix(&topo);
    let ids = parse_bus_ids(&ids);
    let smi_index = |g: &Gpu| {
        let bus = pci_bus_id(g).ok()?;
        ids.iter().find(|(_, b)| *b == bus).map(|(i, _)| *i)
    };
    for p in pairs.iter_mut() {
        let (Some(i), Some(j)) = (smi_index(gpus[p.from]), smi_index(gpus[p.to]))
        else {
            continue;
        };
        p.link = cells.get(i).and_then(|row| row.get(j)).cloned();
    }
}

/// Enqueues a copy of `bytes` bytes from `src` (memory of `src_gpu`) to `dst` (memory of
/// `dst_gpu`) on `stream` with `cuMemcpyPeerAsync`: the copy engines move it, over the peer
/// link when there is one.
///
/// # Safety
/// Both addresses must hold `bytes` bytes on their devices.
pub unsafe fn memcpy_peer(
    stream: &CudaStream,
    (dst_gpu, dst): (&Gpu, sys::CUdeviceptr),
    (src_gpu, src): (&Gpu, sys::CUdeviceptr),
    bytes: usize,
) -> anyhow::Result<()> {
    stream.context().bind_to_thread()?;
    result::memcpy_peer_async(
        dst_gpu.ctx.cu_ctx(),
        dst,
        src_gpu.ctx.cu_ctx(),
        src,
        bytes,
        stream.cu_stream(),
    )?;
    Ok(())
}

/// Enqueues a host-to-device copy from page-locked host memory.
///
/// # Safety
/// `host` must be page-locked and hold `bytes` bytes; `dst` must hold as many.
pub unsafe fn memcpy_htod(
    stream: &CudaStream,
    dst: sys::CUdeviceptr,
    host: *const u8,
    bytes: usize,
) -> anyhow::Result<()> {
    stream.context().bind_to_thread()?;
    sys::cuMemcpyHtoDAsync_v2(dst, host.cast(), bytes, stream.cu_stream()).result()?;
    Ok(())
}

/// Enqueues a device-to-host copy into page-locked host memory.
///
/// # Safety
/// `host` must be page-locked and hold `bytes` bytes; `src` must hold as many.
pub unsafe fn memcpy_dtoh(
    stream: &CudaStream,
    host: *mut u8,
    src: sys::CUdeviceptr,
    bytes: usize,
) -> anyhow::Result<()> {
    stream.context().bind_to_thread()?;
    sys::cuMemcpyDtoHAsync_v2(host.cast(), src, bytes, stream.cu_stream()).result()?;
    Ok(())
}

/// Fills `bytes` bytes at `ptr` with `0xFF` on `stream` (the poison of the verify protocol).
///
/// # Safety
/// `ptr` must hold `bytes` bytes on the stream's device.
pub unsafe fn poison(
    stream: &CudaStream,
    ptr: sys::CUdeviceptr,
    bytes: usize,
) -> anyhow::Result<()> {
    stream.context().bind_to_thread()?;
    result::memset_d8_async(ptr, 0xFF, bytes, stream.cu_stream())?;
    Ok(())
}

/// Waits for every stream.
pub fn synchronize(streams: &[Arc<CudaStream>]) -> anyhow::Result<()> {
    for s in streams {
        s.synchronize()?;
    }
    Ok(())
}

/// Each GPU's timing stream.
pub fn streams_of(gpus: &[&Gpu]) -> Vec<Arc<CudaStream>> {
    gpus.iter().map(|g| g.stream.clone()).collect()
}

// ANCHOR: time_streams
/// Times work that spans several streams, on one GPU or several, with the events of the
/// first stream's GPU. Each repetition:
///
/// 1. (L2 cold) flushes the L2 of every GPU in `flush`, then makes the first stream
///    wait for every other (so no flush runs inside the timed region);
/// 2. records the start event on the first stream and makes every other stream wait for
///    it (a fork: none starts before the clock does);
/// 3. enqueues `work` `batch` times;
/// 4. makes the first stream wait for every other (a join) and records the stop event.
///
/// The stop event therefore fires when the slowest stream is done, and the sample is
/// the event-to-event time divided by `batch`.
pub fn time_streams(
    streams: &[Arc<CudaStream>],
    flush: &[&Gpu],
    plan: Plan,
    batch: usize,
    mut work: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Stats> {
    let (first, others) = streams.split_first().expect("at least one stream");
    for _ in 0..plan.warmup {
        work()?;
    }
    synchronize(streams)?;
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut pairs = Vec::with_capacity(plan.reps);
    for _ in 0..plan.reps {
        if plan.l2 == L2::Cold {
            for g in flush {
                // The flush's memset runs in the current context.
                g.ctx.bind_to_thread()?;
                g.flush_l2()?;
            }
        }
        for s in others {
            // Every flush and earlier repetition is done before the start.
            first.join(s)?;
        }
        let start = first.context().new_event(timing)?;
        let stop = first.context().new_event(timing)?;
        start.record(first)?;
        for s in others {
            s.join(first)?; // fork: no stream starts before the start event
        }
        for _ in 0..batch {
            work()?;
        }
        for s in others {
            first.join(s)?; // join: the stop event waits for the slowest stream
        }
        stop.record(first)?;
        pairs.push((start, stop));
    }
    synchronize(streams)?;
    let mut samples = Vec::with_capacity(pairs.len());
    for (start, stop) in &pairs {
        let ms =
            toolchain::event_elapsed_ms(start, stop).map_err(anyhow::Error::msg)?;
        samples.push(ms as f64 / batch as f64);
    }
    Stats::from_samples(&samples).ok_or_else(|| anyhow::anyhow!("no valid samples"))
}
// ANCHOR_END: time_streams

#[cfg(test)]
mod tests {
    use super::*;

    const TOPO: &str =
        "\u{1b}[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\u{1b}[0m
GPU0\t X \tNV18\tSYS\t0-31\t0\t\tN/A
GPU1\tNV18\t X \tSYS\t0-31\t0\t\tN/A
NIC0\tSYS\tSYS\t X \t\t\t\t

Legend:

  X    = Self
  NV#  = Connection traversing a bonded set of # NVLinks
";

    #[test]
    fn topo_matrix_is_read_by_gpu_index() {
        let cells = parse_topo_matrix(TOPO);
        assert_eq!(cells, [["X", "NV18"], ["NV18", "X"]]);
        assert!(parse_topo_matrix("No devices were found").is_empty());
    }

    #[test]
    fn bus_ids_and_link_words() {
        let ids = parse_bus_ids("0, 00000000:18:00.0\n1, 00000000:2a:00.0\n");
        assert_eq!(
            ids,
            [(0, "00000000:18:00.0".into()), (1, "00000000:2A:00.0".into())]
        );
        assert_eq!(describe_link("NV18"), "NVLink, 18 links of each GPU");
        assert_eq!(describe_link("NV1"), "NVLink, 1 link of each GPU");
        assert!(describe_link("PHB").starts_with("PCIe"));
        assert_eq!(describe_link("weird"), "weird");
    }
}
