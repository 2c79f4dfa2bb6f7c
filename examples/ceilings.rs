//! Chapter "Measuring a GPU": the ceilings every later chapter is measured against.
//!
//! `cargo run --release --example ceilings` measures, verifies and records
//! - device-to-device copy bandwidth from 1 MiB to 4 GiB, L2 warm and cold;
//! - host↔device bandwidth, pageable and pinned, 1 MiB to 1 GiB;
//! - the cost of an empty kernel launch (back to back, on the host, round trip, graph node);
//!
//! and writes `figures/ceilings-*.svg`, `figures/ceilings-summary.md` and their CSVs.

use std::process::ExitCode;

use clap::Parser;
use cmbook::ceilings::{self, CopyKernel, Direction, HostMemory};
use cmbook::harness::plot::{self, Point, Spec};
use cmbook::harness::record::{self, Meta};
use cmbook::harness::timing::Plan;
use cmbook::harness::{cli, run_main, CommonArgs, Gpu, Stats, UsageError, L2};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Parser, Debug)]
#[command(
    about = "Measure the GPU's ceilings: copy bandwidth, host<->device bandwidth, launch cost"
)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
    /// Largest device copy in MiB (the sweep doubles up to it, with half-steps).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    max_copy_mib: Option<u64>,
    /// Largest host<->device transfer in MiB.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    max_transfer_mib: Option<u64>,
}

const MIB: usize = 1 << 20;

/// 1 MiB, 1.5 MiB, 2 MiB, 3 MiB, ... up to `max_mib`: half-steps resolve the fall at the L2 size.
fn copy_sizes(max_mib: u64) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut s = 1usize;
    while (s as u64) <= max_mib {
        sizes.push(s * MIB);
        if ((s * 3 / 2) as u64) <= max_mib && s >= 2 {
            sizes.push(s * 3 / 2 * MIB);
        }
        s *= 2;
    }
    sizes
}

#[derive(serde::Serialize)]
struct SummaryRow {
    ceiling: String,
    median: String,
    min: String,
    max: String,
    unit: String,
    measured_as: String,
}

fn fmt3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn rate_row(ceiling: &str, stats: &Stats, gb: f64, how: &str) -> SummaryRow {
    let r = stats.rate(gb);
    SummaryRow {
        ceiling: ceiling.into(),
        median: fmt3(r.median),
        min: fmt3(r.worst),
        max: fmt3(r.best),
        unit: "GB/s".into(),
        measured_as: how.into(),
    }
}

fn micros_row(ceiling: &str, stats: &Stats, how: &str) -> SummaryRow {
    let us = |ms: f64| fmt3(ms * 1e3);
    SummaryRow {
        ceiling: ceiling.into(),
        median: us(stats.median_ms),
        min: us(stats.min_ms),
        max: us(stats.max_ms),
        unit: "µs".into(),
        measured_as: how.into(),
    }
}

#[derive(serde::Serialize)]
struct DeviceRow {
    property: &'static str,
    value: String,
}

/// The device as the driver reports it: the introduction's "hardware behind the figures".
fn write_device_table(
    gpu: &Gpu,
    meta: &Meta,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    let i = &gpu.info;
    let kib = |b: usize| format!("{} KiB", b / 1024);
    let rows = vec![
        DeviceRow { property: "name", value: i.name.clone() },
        DeviceRow {
            property: "compute capability",
            value: format!("{}.{}", i.compute_capability.0, i.compute_capability.1),
        },
        DeviceRow { property: "multiprocessors (SMs)", value: i.sms.to_string() },
        DeviceRow { property: "L2 cache", value: format!("{} MiB", i.l2_bytes / MIB) },
        DeviceRow {
            property: "device memory",
            value: format!("{:.1} GiB", i.total_mem_bytes as f64 / (1u64 << 30) as f64),
        },
        DeviceRow { property: "shared memory per SM", value: kib(i.shared_per_sm) },
        DeviceRow {
            property: "shared memory per block (opt-in)",
            value: kib(i.shared_per_block_optin),
        },
        DeviceRow {
            property: "32-bit registers per SM",
            value: i.registers_per_sm.to_string(),
        },
        DeviceRow { property: "constant memory", value: kib(i.constant_bytes) },
        DeviceRow {
            property: "max threads per block",
            value: i.max_threads_per_block.to_string(),
        },
        DeviceRow {
            property: "driver",
            value: format!(
                "{} (CUDA {}.{})",
                i.driver_release, i.driver_cuda.0, i.driver_cuda.1
            ),
        },
        DeviceRow { property: "NVRTC", value: format!("{}.{}", i.nvrtc.0, i.nvrtc.1) },
    ];
    record::write_table(
        out,
        "ceilings-device",
        &meta.clone().with("title", "The device, as the driver reports it"),
        &rows,
    )
}

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    let quick = args.common.quick;
    let max_copy = args.max_copy_mib.unwrap_or(if quick { 64 } else { 4096 });
    let max_transfer = args.max_transfer_mib.unwrap_or(if quick { 16 } else { 1024 });
    let reps = args.common.reps_or(30, 5);
    let gpu = Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let meta = Meta::for_gpu(&gpu.info, &cli::command_line("ceilings"));
    let out = &args.common.out;
    write_device_table(&gpu, &meta, out)?;
    if (2 * max_copy as usize * MIB) as u64 > gpu.info.total_mem_bytes as u64 {
        return Err(UsageError(format!(
            "--max-copy-mib {max_copy} needs {} MiB of device memory (source and destination); {} has {} MiB",
            2 * max_copy,
            gpu.info.name,
            gpu.info.total_mem_bytes / MIB
        ))
        .into());
    }

    let copy_sizes = copy_sizes(max_copy);
    let transfer_sizes: Vec<usize> = (0..)
        .map(|k| MIB << (2 * k))
        .take_while(|s| *s <= max_transfer as usize * MIB)
        .collect();
    let bar =
        ProgressBar::new((copy_sizes.len() * 2 + transfer_sizes.len() * 4 + 1) as u64);
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());

    // 1. Device copy bandwidth.
    let copy = CopyKernel::load(&gpu)?;
    let mut copy_points = Vec::new();
    let mut dram_kernel = None;
    let mut dram_memcpy = None;
    let mut best_l2: Option<(usize, Stats)> = None;
    for &bytes in &copy_sizes {
        for l2 in [L2::Warm, L2::Cold] {
            bar.set_message(format!("copy {} MiB, L2 {l2}", bytes / MIB));
            let r = ceilings::measure_copy(
                &gpu,
                &copy,
                bytes,
                Plan::new(3, reps, l2),
                args.common.seed,
            )?;
            let (k, m) = (r.kernel_gbps(), r.memcpy_gbps());
            copy_points.push(Point::new(
                &format!("copy kernel, L2 {l2}"),
                bytes as f64 / MIB as f64,
                k.median,
                k.worst,
                k.best,
            ));
            copy_points.push(Point::new(
                &format!("cuMemcpyDtoD, L2 {l2}"),
                bytes as f64 / MIB as f64,
                m.median,
                m.worst,
                m.best,
            ));
            if l2 == L2::Cold {
                dram_kernel = Some((bytes, r.kernel.clone()));
                dram_memcpy = Some((bytes, r.memcpy.clone()));
            } else if best_l2
                .as_ref()
                .is_none_or(|(b, s)| k.median > s.rate(2.0 * *b as f64 / 1e9).median)
            {
                best_l2 = Some((bytes, r.kernel.clone()));
            }
            bar.inc(1);
        }
    }
    plot::write_figure(
        out,
        "ceilings-copy",
        &meta.clone().with("l2", "warm and cold series, as labelled"),
        &Spec::line(
            "Device-to-device copy bandwidth (read + write)",
            "bytes copied (MiB)",
            "GB/s",
        )
        .log_x(),
        &copy_points,
    )?;

    // 2. Host<->device bandwidth.
    let mut transfer_points = Vec::new();
    let mut largest = std::collections::BTreeMap::new();
    for &bytes in &transfer_sizes {
        for dir in [Direction::HostToDevice, Direction::DeviceToHost] {
            for host in [HostMemory::Pageable, HostMemory::Pinned] {
                let name = format!(
                    "{} {}",
                    if dir == Direction::HostToDevice { "H2D" } else { "D2H" },
                    if host == HostMemory::Pinned { "pinned" } else { "pageable" }
                );
                bar.set_message(format!("{name} {} MiB", bytes / MIB));
                let s = ceilings::measure_transfer(
                    &gpu,
                    bytes,
                    dir,
                    host,
                    Plan::new(2, reps.min(20), L2::Warm),
                    args.common.seed,
                )?;
                let r = s.rate(bytes as f64 / 1e9);
                transfer_points.push(Point::new(
                    &name,
                    bytes as f64 / MIB as f64,
                    r.median,
                    r.worst,
                    r.best,
                ));
                largest.insert(name, (bytes, s));
                bar.inc(1);
            }
        }
    }
    plot::write_figure(
        out,
        "ceilings-transfer",
        &meta.clone().with("l2", "not applicable (host memory on one side)"),
        &Spec::line(
            "Host-device transfer bandwidth",
            "bytes transferred (MiB)",
            "GB/s",
        )
        .log_x(),
        &transfer_points,
    )?;

    // 3. Launch cost.
    bar.set_message("launch cost");
    let batch = if quick { 100 } else { 1000 };
    let launch = ceilings::measure_launch(&gpu, Plan::new(3, reps, L2::Warm), batch)?;
    bar.inc(1);
    bar.finish_and_clear();
    let us = |name: &str, s: &Stats| {
        Point::new(
            "µs per empty kernel",
            name,
            s.median_ms * 1e3,
            s.min_ms * 1e3,
            s.max_ms * 1e3,
        )
    };
    plot::write_figure(
        out,
        "ceilings-launch",
        &meta.clone().with("l2", "not applicable").with("batch", &batch.to_string()),
        &Spec::bar(
            "What an empty kernel launch costs",
            "how it was launched and timed",
            "µs per launch",
        ),
        &[
            us("back to back (GPU events)", &launch.back_to_back),
            us("launch call (CPU clock)", &launch.host_call),
            us("launch + synchronize (CPU clock)", &launch.round_trip),
            us("CUDA graph node (GPU events)", &launch.graph_node),
        ],
    )?;

    // 4. The summary table the chapter includes.
    let (db, dk) = dram_kernel.expect("at least one size");
    let (_, dm) = dram_memcpy.expect("at least one size");
    let (lb, lk) = best_l2.expect("at least one size");
    let mut rows = vec![
        rate_row(
            "device copy, copy kernel",
            &dk,
            2.0 * db as f64 / 1e9,
            &format!("{} MiB, L2 cold, read + write", db / MIB),
        ),
        rate_row(
            "device copy, cuMemcpyDtoD",
            &dm,
            2.0 * db as f64 / 1e9,
            &format!("{} MiB, L2 cold, read + write", db / MIB),
        ),
        rate_row(
            "device copy, best L2-resident size",
            &lk,
            2.0 * lb as f64 / 1e9,
            &format!("{} MiB, L2 warm, read + write", lb / MIB),
        ),
    ];
    for (name, (bytes, s)) in &largest {
        rows.push(rate_row(
            name,
            s,
            *bytes as f64 / 1e9,
            &format!("{} MiB", bytes / MIB),
        ));
    }
    rows.push(micros_row(
        "empty kernel, back to back",
        &launch.back_to_back,
        &format!("events around {batch} launches"),
    ));
    rows.push(micros_row(
        "empty kernel, launch call",
        &launch.host_call,
        &format!("CPU clock around {batch} launches"),
    ));
    rows.push(micros_row(
        "empty kernel, launch + synchronize",
        &launch.round_trip,
        "CPU clock, one launch",
    ));
    rows.push(micros_row(
        "CUDA graph node",
        &launch.graph_node,
        &format!("events around a graph of {batch} kernels"),
    ));
    record::write_table(
        out,
        "ceilings-summary",
        &meta.clone().with(
            "title",
            "The ceilings of this GPU (median, min and max over repetitions)",
        ),
        &rows,
    )?;

    println!("{:<38} {:>9} {:>9} {:>9}  unit", "ceiling", "median", "min", "max");
    for r in &rows {
        println!(
            "{:<38} {:>9} {:>9} {:>9}  {} ({})",
            r.ceiling, r.median, r.min, r.max, r.unit, r.measured_as
        );
    }
    println!("all results verified; figures and data written to {}", out.display());
    Ok(())
}
