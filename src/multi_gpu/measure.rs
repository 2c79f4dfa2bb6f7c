//! What the chapter "Memory across GPUs" measures, in the order the chapter tells it: what
//! links the GPUs, copies between two of them by every path and between every pair by the copy
//! engines, the latency of one peer load, NCCL's collectives (and PyTorch's all-reduce) over
//! the first 2, 4, ... GPUs, and ATAX and the CMM batch split over 1, 2, 4, ... GPUs. With one
//! GPU it measures what one GPU can show and names the rest in one line.

pub use super::args::Settings;
use super::atax::{self, AtaxGpu, AtaxPoint, HostProblem};
use super::cmm::{self, CmmPoint};
use super::collectives::{self, CollectivePoint};
use super::devices::{self, PairInfo};
use super::nccl::{self, Collective, Comms};
use super::peer::{
    self, InFlightPoint, Latency, Pair, PairPoint, PeerKernels, PeerPoint,
};
use super::torch::{self, TorchReference};
use crate::harness::ceiling::{self, CopyKernel, CopyResult};
use crate::harness::timing::Plan;
use crate::harness::{FullQuick, Gpu, Run, UsageError, L2};

/// Bytes the latency chase walks through, in MiB: far beyond the L2 of the GPU.
pub const CHASE_MIB: FullQuick<u64> = FullQuick::new(256, 32);
/// Dependent loads per chase.
pub const CHASE_STEPS: FullQuick<u64> = FullQuick::new(20_000, 2_000);

const MIB: usize = 1 << 20;

/// One GPU of the run.
#[derive(Debug, Clone)]
pub struct Device {
    pub ordinal: usize,
    pub name: String,
    pub pci_bus_id: String,
    pub memory_gib: f64,
    pub sms: i32,
    pub l2_mib: usize,
}

/// Everything the chapter's figures and tables are drawn from.
pub struct Results {
    pub devices: Vec<Device>,
    pub nccl_version: String,
    pub pairs: Vec<PairInfo>,
    /// GPU 0's own copy ceiling (the copy kernel and `cuMemcpyDtoD`, L2 cold).
    pub local_copy: CopyResult,
    /// Every path between GPU 0 and GPU 1 at every size (empty with one GPU).
    pub peer: Vec<PeerPoint>,
    /// The copy kernels between GPU 0 and GPU 1 with fewer blocks, at the largest size.
    pub in_flight: Vec<InFlightPoint>,
    /// The copy engines between every pair of GPUs, at the largest size (empty with one).
    pub pair_copies: Vec<PairPoint>,
    /// Which GPU chased (the second, reading the first's memory, when there are two).
    pub chase_gpu: usize,
    pub latency: Vec<Latency>,
    /// Every collective at every size over the first 2, 4, ... GPUs and over all of them.
    pub collectives: Vec<CollectivePoint>,
    /// PyTorch's all-reduce, one sweep per number of GPUs it ran on.
    pub torch: Vec<TorchReference>,
    pub atax: Vec<AtaxPoint>,
    /// The CMM batch on the first 1, 2, 4, ... GPUs (empty where a GPU cannot run it).
    pub cmm: Vec<CmmPoint>,
    /// What this run could not measure, and why (one GPU, no peer access).
    pub skipped: Vec<String>,
}

impl Results {
    pub fn gpu_count(&self) -> usize {
        self.devices.len()
    }

    /// `2 × NVIDIA H200`, or the names one by one when they differ.
    pub fn gpus_line(&self) -> String {
        let first = &self.devices[0].name;
        if self.devices.iter().all(|d| &d.name == first) {
            format!("{} × {first}", self.devices.len())
        } else {
            self.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(" + ")
        }
    }

    /// The link between GPU 0 and GPU 1 as nvidia-smi names it, if known.
    pub fn link_01(&self) -> Option<&str> {
        self.pairs
            .iter()
            .find(|p| p.from == 0 && p.to == 1)
            .and_then(|p| p.link.as_deref())
    }
}

/// Verifies, then times, everything the chapter shows.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let first = run.gpu();
    let (reps, seed, quick) = (run.reps(), run.seed, run.quick);
    let available = devices::device_count()?;
    let count = match settings.gpus.map(|n| n as usize) {
        Some(n) if n > available => {
            return Err(UsageError(format!(
                "--gpus {n}: this machine has {available} CUDA GPU{}",
                if available == 1 { "" } else { "s" }
            ))
            .into())
        }
        Some(n) => n,
        None => available,
    };
    let cols = settings.atax_cols as usize;
    if crate::atax::device::fused_shape(cols, &[1, 2, 4, 8, 16]).is_none() {
        return Err(UsageError(format!(
            "--atax-cols {cols}: the fused kernel covers at most 16384 columns"
        ))
        .into());
    }
    let others = devices::open_others(count)?;
    for g in &others {
        println!("{}", g.info.line());
    }
    let gpus: Vec<&Gpu> = std::iter::once(first).chain(others.iter()).collect();
    let nccl_version = nccl::version()?;
    println!(
        "NCCL {nccl_version} ({}={})",
        nccl::NVLS_VARIABLE,
        std::env::var(nccl::NVLS_VARIABLE).unwrap_or_default()
    );
    let devices = gpus
        .iter()
        .enumerate()
        .map(|(i, g)| {
            Ok(Device {
                ordinal: i,
                name: g.info.name.clone(),
                pci_bus_id: devices::pci_bus_id(g)?,
                memory_gib: g.info.total_mem_bytes as f64 / (1u64 << 30) as f64,
                sms: g.info.sms,
                l2_mib: g.info.l2_bytes / MIB,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

    // Topology: what the driver says of every ordered pair; peer access where it can.
    let mut pairs = Vec::new();
    let mut peer_access_01 = count >= 2;
    for (i, a) in gpus.iter().enumerate() {
        for (j, b) in gpus.iter().enumerate() {
            if i != j {
                pairs.push(devices::pair_info((i, a), (j, b))?);
                let enabled = devices::enable_peer_access(a, b)?;
                if i < 2 && j < 2 {
                    peer_access_01 &= enabled;
                }
            }
        }
    }
    devices::read_links(&gpus, &mut pairs);

    let peer_max = settings.peer_mib as usize * MIB;
    let collective_sizes = collectives::sizes(settings.collective_mib as usize * MIB);
    let atax_rows = atax::row_sizes(settings.atax_rows as usize, count);
    let cmm_chains = settings.cmm_chains as usize;
    let cmm_n = cmm::CHAIN_N.pick(quick);
    // The collectives and PyTorch's all-reduce over the first 2, 4, ... GPUs and all of them.
    let ranks: Vec<usize> =
        atax::gpu_counts(count).into_iter().filter(|&k| k >= 2).collect();
    let cmm_need = gpus.iter().enumerate().find_map(|(i, g)| cmm::unmet_need(i, g));
    let mut skipped = Vec::new();
    let peer_sizes = if count >= 2 { peer::copy_sizes(peer_max) } else { Vec::new() };
    let pair_cases = peer::PairCopy::all(count).len();
    let cmm_steps =
        if cmm_need.is_none() { cmm::counts(count, cmm_chains).len() } else { 0 };
    let bar = run.progress(
        1 + peer_sizes.len() * peer::Path::ALL.len()
            + pair_cases
            + 3
            + ranks.len() * 3 * collective_sizes.len()
            + atax::gpu_counts(count).len() * atax_rows.len()
            + cmm_steps,
    );
    let mut step = |what: &str| {
        bar.set_message(what.to_string());
        bar.inc(1);
    };

    step("GPU 0's copy ceiling");
    let copy = CopyKernel::load(first)?;
    let local_copy = ceiling::measure_copy(
        first,
        &copy,
        peer_max,
        Plan::new(3, reps, L2::Cold),
        seed,
    )?;

    let kernels: Vec<PeerKernels> =
        gpus.iter().map(|g| PeerKernels::load(g)).collect::<Result<_, _>>()?;
    let (mut peer_points, mut in_flight, mut pair_copies) =
        (Vec::new(), Vec::new(), Vec::new());
    if count >= 2 {
        if !peer_access_01 {
            skipped.push(
                "the kernels that address the peer's memory and the peer-load latency (the \
                 driver reports no peer access between GPU 0 and GPU 1)"
                    .to_string(),
            );
        }
        let pair = Pair {
            a: gpus[0],
            b: gpus[1],
            kernels_a: &kernels[0],
            kernels_b: &kernels[1],
            peer_access: peer_access_01,
        };
        (peer_points, in_flight) =
            peer::measure_paths(&pair, &peer_sizes, reps, seed, &mut step)?;
        pair_copies = peer::measure_pairs(&gpus, peer_max, reps, seed, &mut step)?;
    }

    step("latency of one load");
    let chase_gpu = if count >= 2 { 1 } else { 0 };
    let chase_peer = if count >= 2 && peer_access_01 { Some(gpus[0]) } else { None };
    let latency = peer::measure_latency(
        gpus[chase_gpu],
        &kernels[chase_gpu],
        chase_peer,
        CHASE_MIB.pick(quick) as usize * MIB,
        CHASE_STEPS.pick(quick),
        reps.min(5),
        seed,
    )?;

    // PyTorch first, while this process holds no large buffer and no communicator: the
    // reader's CSVs, or the script started once per number of GPUs.
    let torch = if !settings.torch_reference.is_empty() {
        settings
            .torch_reference
            .iter()
            .map(|p| torch::read(p))
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(|e| UsageError(format!("--torch-reference: {e:#}")))?
    } else if settings.no_torch || ranks.is_empty() {
        Vec::new()
    } else {
        bar.set_message("torch.distributed's all-reduce (torch_reference.py)");
        let (found, missed) = torch::run_script(&ranks, settings.collective_mib, reps);
        skipped.extend(missed);
        found
    };

    let mut collective_points = Vec::new();
    let mut comms_all = None;
    for &k in &ranks {
        let comms = Comms::new(&gpus[..k])?;
        for c in Collective::ALL {
            collective_points.extend(collectives::measure(
                &gpus[..k],
                &comms,
                c,
                &collective_sizes,
                reps,
                seed,
                &mut step,
            )?);
        }
        if k == count {
            comms_all = Some(comms); // ATAX over every GPU reuses it
        }
    }

    step("ATAX: the inputs and the CPU's answers");
    let host = HostProblem::new(first, &atax_rows, cols, seed)?;
    let atax_kernels: Vec<AtaxGpu> =
        gpus.iter().map(|g| AtaxGpu::load(g)).collect::<Result<_, _>>()?;
    let atax_points = atax::measure(
        &gpus,
        &atax_kernels,
        comms_all.as_ref(),
        &host,
        &atax_rows,
        reps,
        &mut step,
    )?;
    drop(host);

    let cmm_points = match &cmm_need {
        Some(why) => {
            skipped.push(format!("the CMM batch split over the GPUs: {why}"));
            Vec::new()
        }
        None => cmm::measure(&gpus, cmm_chains, cmm_n, reps, seed, &mut step)?,
    };
    bar.finish_and_clear();

    if count < 2 {
        skipped.push(
            "copies between GPUs, the peer-load latency, the collectives, PyTorch's \
             all-reduce and ATAX and the CMM batch on several GPUs (they need a second GPU)"
                .to_string(),
        );
    }
    Ok(Results {
        devices,
        nccl_version,
        pairs,
        local_copy,
        peer: peer_points,
        in_flight,
        pair_copies,
        chase_gpu,
        latency,
        collectives: collective_points,
        torch,
        atax: atax_points,
        cmm: cmm_points,
        skipped,
    })
}
