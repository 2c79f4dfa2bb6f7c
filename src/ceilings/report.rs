//! Every figure and table of the chapter "Measuring a GPU", drawn from [`Results`].

use crate::harness::format::sig3;
use crate::harness::plot::{Point, Spec, Ticks};
use crate::harness::{Gpu, Run, Stats, L2};

use super::measure::Results;

const MIB: usize = 1 << 20;

#[derive(serde::Serialize)]
struct SummaryRow {
    ceiling: String,
    median: String,
    min: String,
    max: String,
    unit: String,
    measured_as: String,
}

fn rate_row(ceiling: &str, stats: &Stats, gb: f64, how: &str) -> SummaryRow {
    let r = stats.rate(gb);
    SummaryRow {
        ceiling: ceiling.into(),
        median: sig3(r.median),
        min: sig3(r.worst),
        max: sig3(r.best),
        unit: "GB/s".into(),
        measured_as: how.into(),
    }
}

fn micros_row(ceiling: &str, stats: &Stats, how: &str) -> SummaryRow {
    let us = |ms: f64| sig3(ms * 1e3);
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
fn device_rows(gpu: &Gpu) -> Vec<DeviceRow> {
    let i = &gpu.info;
    let kib = |b: usize| format!("{} KiB", b / 1024);
    let cc = i.capability();
    let gib = i.total_mem_bytes as f64 / (1u64 << 30) as f64;
    let driver =
        format!("{} (CUDA {}.{})", i.driver_release, i.driver_cuda.0, i.driver_cuda.1);
    vec![
        DeviceRow { property: "name", value: i.name.clone() },
        DeviceRow { property: "compute capability", value: cc },
        DeviceRow { property: "multiprocessors (SMs)", value: i.sms.to_string() },
        DeviceRow { property: "L2 cache", value: format!("{} MiB", i.l2_bytes / MIB) },
        DeviceRow { property: "device memory", value: format!("{gib:.1} GiB") },
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
        DeviceRow { property: "driver", value: driver },
        DeviceRow { property: "NVRTC", value: format!("{}.{}", i.nvrtc.0, i.nvrtc.1) },
    ]
}

/// Writes the chapter's figures and tables and prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let title = "The device, as the driver reports it";
    run.table("ceilings-device", title, &[], &device_rows(run.gpu()))?;

    let mut copy_points = Vec::new();
    for (l2, c) in &r.copies {
        let mib = c.bytes as f64 / MIB as f64;
        let bytes = 2.0 * c.bytes as f64;
        copy_points.push(Point::rate(
            &format!("copy kernel, L2 {l2}"),
            mib,
            &c.kernel,
            bytes,
            1e9,
        ));
        copy_points.push(Point::rate(
            &format!("cuMemcpyDtoD, L2 {l2}"),
            mib,
            &c.memcpy,
            bytes,
            1e9,
        ));
    }
    // A sweep lowered to fit this GPU says so in its records (the command line does not).
    let lowered = format!(
        "{} MiB, the default {} MiB lowered to fit this GPU's free memory",
        r.ceiling_mib.chosen, r.ceiling_mib.wanted
    );
    let sized: &[(&str, &str)] =
        if r.ceiling_mib.scaled() { &[("ceiling_mib", &lowered)] } else { &[] };
    run.figure(
        "ceilings-copy",
        &[&[("l2", "warm and cold series, as labelled")], sized].concat(),
        &Spec::line(
            "Device-to-device copy bandwidth (read + write)",
            "bytes copied (MiB)",
            "GB/s",
        )
        .log_x(),
        &copy_points,
    )?;

    let transfer_points: Vec<Point> = r
        .transfers
        .iter()
        .map(|(name, bytes, s)| {
            Point::rate(name, *bytes as f64 / MIB as f64, s, *bytes as f64, 1e9)
        })
        .collect();
    run.figure(
        "ceilings-transfer",
        &[("l2", "not applicable (host memory on one side)")],
        &Spec::line(
            "Host-device transfer bandwidth",
            "bytes transferred (MiB)",
            "GB/s",
        )
        .log_x()
        .x_ticks(Ticks::Data),
        &transfer_points,
    )?;

    let us = |name: &str, s: &Stats| {
        let (median, min, max) = (s.median_ms * 1e3, s.min_ms * 1e3, s.max_ms * 1e3);
        Point::new("µs per empty kernel", name, median, min, max)
    };
    let l = &r.launch;
    run.figure(
        "ceilings-launch",
        &[("l2", "not applicable"), ("batch", &r.batch.to_string())],
        &Spec::bar(
            "What an empty kernel launch costs",
            "how it was launched and timed",
            "µs per launch",
        ),
        &[
            us("back to back (GPU events)", &l.back_to_back),
            us("launch call (CPU clock)", &l.host_call),
            us("launch + synchronize (CPU clock)", &l.round_trip),
            us("CUDA graph node (GPU events)", &l.graph_node),
        ],
    )?;

    let (dram, best) = (r.dram(), r.best_l2());
    let read_write = |bytes: usize| 2.0 * bytes as f64 / 1e9;
    let at =
        |bytes: usize, l2: L2| format!("{} MiB, L2 {l2}, read + write", bytes / MIB);
    let in_dram = [
        ("device copy, copy kernel", &dram.kernel),
        ("device copy, cuMemcpyDtoD", &dram.memcpy),
        ("device copy, grid-stride kernel", &r.grid_stride),
    ];
    let mut rows: Vec<_> = in_dram
        .into_iter()
        .map(|(name, s)| {
            rate_row(name, s, read_write(dram.bytes), &at(dram.bytes, L2::Cold))
        })
        .collect();
    // The copy's two halves alone, on the same buffers: the ceilings of a kernel that
    // only reads or only writes.
    let once = |what: &str| format!("{} MiB, L2 cold, {what}", dram.bytes / MIB);
    rows.push(rate_row(
        "device read, read-only kernel",
        &dram.read,
        dram.read_bytes() as f64 / 1e9,
        &once("read only"),
    ));
    rows.push(rate_row(
        "device write, write-only kernel",
        &dram.write,
        dram.read_bytes() as f64 / 1e9,
        &once("write only"),
    ));
    rows.push(rate_row(
        "device copy, best L2-resident size",
        &best.kernel,
        read_write(best.bytes),
        &at(best.bytes, L2::Warm),
    ));
    for (name, (bytes, s)) in r.largest_transfers() {
        rows.push(rate_row(
            name,
            s,
            bytes as f64 / 1e9,
            &format!("{} MiB", bytes / MIB),
        ));
    }
    let batch = r.batch;
    rows.push(micros_row(
        "empty kernel, back to back",
        &l.back_to_back,
        &format!("events around {batch} launches"),
    ));
    rows.push(micros_row(
        "empty kernel, launch call",
        &l.host_call,
        &format!("CPU clock around {batch} launches"),
    ));
    rows.push(micros_row(
        "empty kernel, launch + synchronize",
        &l.round_trip,
        "CPU clock, one launch",
    ));
    rows.push(micros_row(
        "CUDA graph node",
        &l.graph_node,
        &format!("events around a graph of {batch} kernels"),
    ));
    let title = "The ceilings of this GPU (median, min and max over repetitions)";
    run.table(
        "ceilings-summary",
        title,
        &[&[("headers", "measured_as = measured as")], sized].concat(),
        &rows,
    )?;
    peaks_table(run, r)?;

    println!("{:<38} {:>9} {:>9} {:>9}  unit", "ceiling", "median", "min", "max");
    for r in &rows {
        println!(
            "{:<38} {:>9} {:>9} {:>9}  {} ({})",
            r.ceiling, r.median, r.min, r.max, r.unit, r.measured_as
        );
    }
    Ok(())
}

#[derive(serde::Serialize)]
struct PeakRow {
    ceiling: String,
    median: String,
    min: String,
    max: String,
    unit: &'static str,
    datasheet: String,
    measured_as: String,
}

/// `ceilings-peaks`: the ceilings a roofline needs, measured, beside the datasheet's.
fn peaks_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let p = &r.peaks;
    let sheet = crate::harness::roof::datasheet(&run.gpu().info.name);
    let cite = |v: Option<f64>| match (v, sheet) {
        (Some(v), Some((.., source))) => format!("{} ({source})", sig3(v)),
        _ => "–".into(),
    };
    let row = |ceiling: &str,
               rate: crate::harness::stats::Rate,
               unit: &'static str,
               scale: f64,
               datasheet: String,
               how: String| PeakRow {
        ceiling: ceiling.into(),
        median: sig3(rate.median / scale),
        min: sig3(rate.worst / scale),
        max: sig3(rate.best / scale),
        unit,
        datasheet,
        measured_as: how,
    };
    // Device memory: the faster of our copy kernel and the driver's, largest copy, L2 cold.
    let dram = r.dram();
    let (best, by) = dram.best();
    // The multiply-add ceilings, each beside its datasheet figure.
    let steps = format!("{} steps of 8 chains per thread, registers only", p.fma_iters);
    let fma = |ceiling: &str, rate, sheet_tflops: Option<f64>| {
        row(ceiling, rate, "TFLOP/s", 1e12, cite(sheet_tflops), steps.clone())
    };
    let rows = vec![
        fma("FP32 multiply-add", p.fp32.rate(), sheet.map(|s| s.0)),
        fma("FP64 multiply-add", p.fp64.rate(), sheet.map(|s| s.1)),
        row(
            "L2 read, inside one launch",
            p.l2.rate(),
            "GB/s",
            1e9,
            "–".into(),
            format!(
                "{} MiB read {} times, 16-byte loads past L1",
                p.l2_bytes >> 20,
                p.l2_passes
            ),
        ),
        row(
            "device memory, best copy",
            crate::harness::stats::Rate {
                median: best.median * 1e9,
                worst: best.worst * 1e9,
                best: best.best * 1e9,
            },
            "GB/s",
            1e9,
            cite(sheet.map(|s| s.2)),
            format!("{by}, {} MiB, L2 cold, read + write", dram.bytes >> 20),
        ),
    ];
    let title = "The roofline's ceilings: arithmetic and bandwidth this GPU reaches (median, min and max over repetitions), beside its datasheet";
    run.table(
        "ceilings-peaks",
        title,
        &[
            ("l2", "warm for the arithmetic and the L2 read; cold for device memory"),
            ("headers", "measured_as = measured as"),
        ],
        &rows,
    )
}
