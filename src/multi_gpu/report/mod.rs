//! Every figure and table of the chapter "Memory across GPUs", drawn from [`Results`].

use crate::harness::format::{percent, ratio, sig3};
use crate::harness::plot::{Axis, PanelBy, Point, Spec};
use crate::harness::Run;

use super::measure::Results;
use super::nccl::Collective;
use super::peer::{ChaseTarget, Path, PeerPoint};

mod atax;
mod collectives;
mod peer;
mod scaling;
mod targets;
pub mod topology;

use self::atax::report_atax;
use self::collectives::report_collectives;
use self::peer::{report_latency, report_peer};
use self::scaling::{
    report_internode, report_pairs, report_scaling, report_topology_diagram,
};
use self::targets::report_targets;

const MIB: usize = 1 << 20;

/// A size in the units a reader reads: `8 B`, `64 KiB`, `1024 MiB`.
pub fn size_text(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} B")
    }
}

/// What every record of the run says about where it was measured, beyond the harness's
/// provenance: both GPUs, NCCL, multicast off, the link.
fn provenance(r: &Results) -> Vec<(&'static str, String)> {
    let gpus = r
        .devices
        .iter()
        .map(|d| format!("{}: {} ({})", d.ordinal, d.name, d.pci_bus_id))
        .collect::<Vec<_>>()
        .join("; ");
    let mut v = vec![
        ("gpu", r.gpus_line()),
        ("gpus", gpus),
        ("nccl", format!("{} (loaded through cudarc)", r.nccl_version)),
        (
            "nccl_nvls_enable",
            std::env::var(super::nccl::NVLS_VARIABLE)
                .unwrap_or_else(|_| "unset".into()),
        ),
    ];
    v.push((
        "link",
        match r.link_01() {
            Some(cell) => format!(
                "GPU 0 to GPU 1: {cell} ({}), as nvidia-smi topo -m reports it",
                super::devices::describe_link(cell)
            ),
            None if r.gpu_count() < 2 => "one GPU".into(),
            None => "not reported (nvidia-smi not found)".into(),
        },
    ));
    v
}

fn with<'a>(
    base: &'a [(&'static str, String)],
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    base.iter().map(|(k, v)| (*k, v.as_str())).chain(extra.iter().copied()).collect()
}

/// `meta` followed by the keys that say how a table is shown.
fn shown<'a>(
    meta: &[(&'a str, &'a str)],
    keys: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    [meta, keys].concat()
}

/// How `multi_gpu-devices` is shown (see `harness::table`): the PCI address as code, since
/// it is what `nvidia-smi` prints and what the chapter matches devices by.
const DEVICES_SHOWN: [(&str, &str); 2] =
    [("headers", "memory = device memory | L2 = L2 cache"), ("code", "PCI address")];

/// How `multi_gpu-topology` is shown: nvidia-smi's name of the link as code.
const TOPOLOGY_SHOWN: [(&str, &str); 2] = [
    (
        "headers",
        "from = from GPU | to = to GPU | performance rank = performance rank (0 is best) | \
         nvidia-smi = `nvidia-smi topo -m`",
    ),
    ("code", "nvidia-smi"),
];

/// `meta` and one more key.
fn plus<'a>(
    meta: &[(&'a str, &'a str)],
    key: &'a str,
    value: &'a str,
) -> Vec<(&'a str, &'a str)> {
    meta.iter().copied().chain(std::iter::once((key, value))).collect()
}

#[derive(serde::Serialize)]
struct DeviceRow {
    #[serde(rename = "GPU")]
    gpu: usize,
    name: String,
    #[serde(rename = "PCI address")]
    pci: String,
    memory: String,
    #[serde(rename = "SMs")]
    sms: i32,
    #[serde(rename = "L2")]
    l2: String,
}

#[derive(serde::Serialize)]
struct PairRow {
    from: usize,
    to: usize,
    #[serde(rename = "peer access")]
    access: &'static str,
    #[serde(rename = "native atomics")]
    atomics: &'static str,
    #[serde(rename = "performance rank")]
    rank: i32,
    #[serde(rename = "nvidia-smi")]
    smi: String,
    link: String,
}

#[derive(serde::Serialize)]
struct PathRow {
    path: String,
    size: String,
    #[serde(rename = "GB/s")]
    median: String,
    min: String,
    max: String,
    #[serde(rename = "of the copy engine, one way")]
    of_copy_engine: String,
}

#[derive(serde::Serialize)]
struct LatencyRow {
    #[serde(rename = "GPU loads from")]
    target: String,
    footprint: String,
    #[serde(rename = "dependent loads")]
    steps: u64,
    #[serde(rename = "ns per load")]
    median: String,
    min: String,
    max: String,
}

#[derive(serde::Serialize)]
struct CollectiveRow {
    #[serde(rename = "GPUs")]
    gpus: usize,
    collective: &'static str,
    size: String,
    #[serde(rename = "µs")]
    us: String,
    #[serde(rename = "algbw GB/s")]
    algbw: String,
    #[serde(rename = "busbw GB/s")]
    busbw: String,
}

#[derive(serde::Serialize)]
struct TorchRow {
    #[serde(rename = "GPUs")]
    gpus: usize,
    size: String,
    #[serde(rename = "cudarc µs")]
    ours_us: String,
    #[serde(rename = "torch µs")]
    torch_us: String,
    #[serde(rename = "cudarc busbw GB/s")]
    ours: String,
    #[serde(rename = "torch busbw GB/s")]
    torch: String,
    #[serde(rename = "cudarc / torch")]
    ratio: String,
}

#[derive(serde::Serialize)]
struct AtaxRow {
    #[serde(rename = "GPUs")]
    gpus: usize,
    matrix: String,
    #[serde(rename = "MiB")]
    mib: usize,
    #[serde(rename = "kernels µs")]
    kernels: String,
    #[serde(rename = "all-reduce µs")]
    all_reduce: String,
    #[serde(rename = "kernels + all-reduce µs")]
    combined: String,
    #[serde(rename = "all-reduce share")]
    share: String,
    #[serde(rename = "speedup, kernels")]
    speedup_kernels: String,
    #[serde(rename = "speedup, with all-reduce")]
    speedup_combined: String,
    #[serde(rename = "end to end ms")]
    end_to_end: String,
    #[serde(rename = "speedup, end to end")]
    speedup_end_to_end: String,
}

#[derive(serde::Serialize)]
struct TargetRow {
    target: String,
    required: String,
    measured: String,
    met: &'static str,
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The fastest copy kernel at the largest size, over the full grid and the in-flight sweep:
/// (what it was, GB/s).
fn best_kernel(r: &Results) -> Option<(String, f64)> {
    let full = [Path::KernelPush, Path::KernelPull]
        .into_iter()
        .filter_map(|p| at_largest(&r.peer, p))
        .map(|p| (format!("{}, every SM", p.path.name()), p.gbps().median));
    let swept = r.in_flight.iter().map(|p| {
        (
            format!("{}, {} blocks", p.path.name(), p.blocks),
            p.time.rate(p.bytes as f64 / 1e9).median,
        )
    });
    full.chain(swept).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// The largest size of the peer sweep and the point of `path` there.
fn at_largest(points: &[PeerPoint], path: Path) -> Option<&PeerPoint> {
    let max = points.iter().map(|p| p.bytes).max()?;
    points.iter().find(|p| p.path == path && p.bytes == max)
}

/// The sizes the collectives' table lists: 8 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB and the
/// largest.
fn listed(bytes: usize, largest: usize) -> bool {
    bytes == largest
        || [8, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20].contains(&bytes)
}

/// Writes the chapter's figures and tables and prints its numbers.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let base = provenance(r);
    let meta = with(&base, &[]);

    let devices: Vec<DeviceRow> = r
        .devices
        .iter()
        .map(|d| DeviceRow {
            gpu: d.ordinal,
            name: d.name.clone(),
            pci: d.pci_bus_id.clone(),
            memory: format!("{:.1} GiB", d.memory_gib),
            sms: d.sms,
            l2: format!("{} MiB", d.l2_mib),
        })
        .collect();
    run.table(
        "multi_gpu-devices",
        "The GPUs of this run",
        &shown(&meta, &DEVICES_SHOWN),
        &devices,
    )?;
    println!("NCCL {}; {}", r.nccl_version, r.gpus_line());

    if !r.pairs.is_empty() {
        let rows: Vec<PairRow> = r
            .pairs
            .iter()
            .map(|p| PairRow {
                from: p.from,
                to: p.to,
                access: yes(p.access),
                atomics: yes(p.native_atomics),
                rank: p.performance_rank,
                smi: p.link.clone().unwrap_or_else(|| "–".into()),
                link: p
                    .link
                    .as_deref()
                    .map(super::devices::describe_link)
                    .unwrap_or_else(|| "–".into()),
            })
            .collect();
        let title = "What links the GPUs: the CUDA driver's peer attributes (cuDeviceGetP2PAttribute) \
                     and nvidia-smi topo -m";
        run.table("multi_gpu-topology", title, &shown(&meta, &TOPOLOGY_SHOWN), &rows)?;
        for p in &rows {
            println!(
                "GPU {} -> GPU {}: peer access {}, native atomics {}, rank {}, {} ({})",
                p.from, p.to, p.access, p.atomics, p.rank, p.smi, p.link
            );
        }
        report_topology_diagram(run, &meta)?;
    }

    report_peer(run, r, &meta)?;
    report_pairs(run, r, &meta)?;
    report_latency(run, r, &meta)?;
    report_collectives(run, r, &base)?;
    report_internode(run, r, &meta)?;
    report_atax(run, r, &meta)?;
    report_scaling(run, r, &meta)?;
    report_targets(run, r, &meta)?;
    for s in &r.skipped {
        println!("skipped: {s}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_a_reader_reads_them() {
        assert_eq!(size_text(8), "8 B");
        assert_eq!(size_text(65536), "64 KiB");
        assert_eq!(size_text(1 << 30), "1024 MiB");
        assert_eq!(size_text(1000), "1000 B");
        assert!(listed(8, 1 << 30) && listed(1 << 30, 1 << 30) && !listed(16, 1 << 30));
    }

    /// The book's tables were drawn with the keys this module writes, right before the
    /// title, in the same order: a change to how a table is shown changes the committed
    /// records too.
    #[test]
    fn the_books_tables_carry_the_keys_the_report_writes() {
        let tables: [(&str, &[(&str, &str)]); 7] = [
            ("multi_gpu-devices", &DEVICES_SHOWN),
            ("multi_gpu-topology", &TOPOLOGY_SHOWN),
            ("multi_gpu-peer-summary", &peer::PEER_SUMMARY_SHOWN),
            ("multi_gpu-latency", &peer::LATENCY_SHOWN),
            ("multi_gpu-collectives-table", &collectives::COLLECTIVES_SHOWN),
            ("multi_gpu-torch", &collectives::TORCH_SHOWN),
            ("multi_gpu-atax-table", &atax::ATAX_SHOWN),
        ];
        for (stem, keys) in tables {
            let record = crate::harness::record::book_record(stem);
            let meta: Vec<(&str, &str)> =
                record.meta.0.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let title = meta.iter().position(|(k, _)| *k == "title").unwrap();
            assert!(title >= keys.len(), "{stem}");
            assert_eq!(&meta[title - keys.len()..title], keys, "{stem}");
        }
    }
}
