//! The chapter's figures and tables, drawn from a run's [`Results`], and the summary the
//! example prints. Kept apart from the measuring so that a CPU test can draw them from
//! made-up results.

use crate::harness::ceiling::with_meta;
use crate::harness::format::{copy_ceiling_line, mib};
use crate::harness::kernels::KernelName;
use crate::harness::plot::{Axis, Point, Spec, Ticks};
use crate::harness::stats::Rate;
use crate::harness::Run;

use super::measure::{ChaseSpace, MemoryKernel, Results, VectorHome, WalkSpacing};

/// The L1 capacity the latency figure marks: stated, not measured (the H100's L1 and shared
/// memory share 256 KiB per SM; the L2 line comes from the driver's `l2_mib`).
const L1_KIB: &str =
    "256 (stated, not measured: on the H100 the L1 cache and shared memory share 256 KiB per SM)";

/// The L2 states, as each figure's `l2` key states them.
pub const L2_COLD: &str =
    "cold (a buffer twice the L2 size is read before every repetition)";
pub const L2_WARM_TABLE: &str =
    "warm (the 32 KiB table stays in the caches between repetitions)";
pub const L2_STENCIL: &str =
    "cold for the large array, warm for the L2-resident one (see the series names)";
pub const L2_CHASE: &str = "warm (a first walk passes through the footprint; each repetition continues the same walk)";
pub const L2_BANDWIDTH: &str =
    "cold for the DRAM read; warm for the L2 read, which keeps its buffer in L2; the on-chip kernels touch device memory only for their output";

/// The bars of the signal and stencil figures that are ceilings measured beside the
/// kernels, not kernels of the chapter: the copy, and for the signal example, whose bytes
/// are nearly all reads, the read-only kernel.
pub const CEILING_BARS: [&str; 2] = ["copy kernel", "read-only kernel"];

#[derive(serde::Serialize)]
struct HistogramRow {
    kernel: String,
    #[serde(rename = "registers per thread")]
    registers: i32,
    #[serde(rename = "local bytes per thread")]
    local: i32,
    threads: usize,
    #[serde(rename = "ms median (min-max)")]
    ms: String,
    #[serde(rename = "G values per s")]
    rate: String,
}

#[derive(serde::Serialize)]
struct SassRow {
    kernel: String,
    #[serde(rename = "instructions per trip")]
    instructions: usize,
    #[serde(rename = "FFMA + FADD")]
    adds: usize,
    #[serde(rename = "LDG")]
    global_loads: usize,
    #[serde(rename = "LDC")]
    constant_loads: usize,
    #[serde(rename = "ULDC")]
    uniform_constant_loads: usize,
}

fn gb_point(series: &str, x: &str, r: Rate) -> Point {
    Point::new(series, x, r.median / 1e9, r.worst / 1e9, r.best / 1e9)
}

fn stencil_series(r: &Results) -> (String, String) {
    (
        format!("L2 cold, {} floats", r.stencil_cold_n),
        format!("L2 warm, {} floats", r.stencil_warm_n),
    )
}

fn histogram_rows(r: &Results) -> Vec<HistogramRow> {
    r.histograms
        .iter()
        .map(|h| {
            let st = &h.timed.stats;
            HistogramRow {
                kernel: format!("`{}`", MemoryKernel::Histogram(h.kernel).function()),
                registers: h.registers_per_thread,
                local: h.local_bytes_per_thread,
                threads: h.threads,
                ms: format!("{:.3} ({:.3}-{:.3})", st.median_ms, st.min_ms, st.max_ms),
                rate: format!("{:.1}", h.timed.per_second().median / 1e9),
            }
        })
        .collect()
}

/// The points of the bandwidth figure: bytes per second each space delivers.
fn bandwidth_points(r: &Results) -> anyhow::Result<Vec<Point>> {
    let walk = |home: VectorHome, distinct: u32| -> anyhow::Result<Rate> {
        let w = r
            .walks
            .iter()
            .find(|w| w.home == home && w.distinct == distinct)
            .ok_or_else(|| anyhow::anyhow!("the walk from {} with {distinct} addresses per warp was not measured", home.label()))?;
        let loads = w.timed.per_second();
        Ok(Rate {
            median: 4.0 * loads.median,
            best: 4.0 * loads.best,
            worst: 4.0 * loads.worst,
        })
    };
    let series = "GB/s delivered";
    Ok(vec![
        gb_point(series, "global, DRAM (read)", r.read_cold),
        gb_point(series, "global, L2 (read, one launch)", r.l2_read.2),
        gb_point(series, "shared", r.onchip.shared.per_second()),
        gb_point(series, "constant, 1 address", walk(VectorHome::Constant, 1)?),
        gb_point(series, "constant, 32 addresses", walk(VectorHome::Constant, 32)?),
        gb_point(series, "registers", r.onchip.registers.per_second()),
    ])
}

/// The constant-memory walk with three spacings: the time of one warp-wide load relative to
/// the same walk with one address, beside `k` addresses served one after another.
fn write_spacing_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let mut points = Vec::new();
    for spacing in WalkSpacing::ALL {
        let of = |d: u32| {
            r.spaced_walks.iter().find(|p| p.spacing == spacing && p.distinct == d)
        };
        let one = of(1)
            .ok_or_else(|| {
                anyhow::anyhow!("the spaced walk with one address was not measured")
            })?
            .timed
            .per_second()
            .median;
        for p in r.spaced_walks.iter().filter(|p| p.spacing == spacing) {
            let g = p.timed.per_second();
            points.push(Point::new(
                spacing.label(),
                p.distinct,
                one / g.median,
                one / g.best,
                one / g.worst,
            ));
        }
    }
    let model = "k addresses, k turns";
    let mut distincts: Vec<u32> = r.spaced_walks.iter().map(|p| p.distinct).collect();
    distincts.sort_unstable();
    distincts.dedup();
    for &k in &distincts {
        points.push(Point::new(model, k, k as f64, k as f64, k as f64));
    }
    run.figure(
        "memory_spaces-constant-spacing",
        &[
            ("l2", L2_WARM_TABLE),
            ("threads", &r.walk_threads.to_string()),
            ("steps", &r.walk_steps.to_string()),
            ("kernel", "walk_const_spaced (the same machine code at every point)"),
        ],
        &Spec::line(
            "Constant memory: time of a warp load against distinct addresses",
            "distinct addresses per warp load (k)",
            "time per warp load / time with one address",
        )
        .log_x()
        .log_y()
        .dashed(model)
        .x_ticks(Ticks::Data),
        &points,
    )
}

/// The main loop of the signal and walk kernels in machine code, counted.
fn write_sass_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let Some((assembled_by, census)) = &r.sass else { return Ok(()) };
    let rows: Vec<SassRow> = census
        .iter()
        .map(|c| SassRow {
            kernel: format!("`{}`", c.kernel.function()),
            instructions: c.instructions,
            adds: c.adds,
            global_loads: c.global_loads,
            constant_loads: c.constant_loads,
            uniform_constant_loads: c.uniform_constant_loads,
        })
        .collect();
    run.table(
        "memory_spaces-sass",
        &format!("One trip of each kernel's main loop in machine code (SASS), {assembled_by}"),
        &[
            ("source", "counted in the SASS of this run's PTX (no measurement)"),
            ("computed", "`memory_spaces::measure::loop_census` on ptxas + nvdisasm output"),
            ("counted", "the loop with the most loads; FFMA + FADD = elements per trip; LDC and ULDC count loads from the __constant__ bank c[0x3] only (LDC: an address per lane; ULDC: one per warp, uniform datapath)"),
            ("headers", "LDG = `LDG` | LDC = `LDC` | ULDC = `ULDC` | FFMA + FADD = `FFMA` + `FADD`"),
        ],
        &rows,
    )
}

/// Writes every figure and table of the chapter, then prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    // 1. The map.
    run.table(
        "memory_spaces-map",
        "The memory spaces of a CUDA kernel, with this GPU's capacities",
        &[
            ("source", "capacities read from the device at run time; the other columns after the CUDA C++ Programming Guide"),
            ("columns", "space | declared as | {scope}; {lifetime} = scope; lifetime | where | cached | kernel threads | host | this GPU has"),
        ],
        &r.map,
    )?;

    // 2a. The signal example.
    let series = "GB/s (matrices read + results written)";
    // The signal's bytes are nearly all reads: its ceiling is the read-only kernel's, the
    // copy beside it.
    let mut points = vec![
        gb_point(series, CEILING_BARS[0], r.copy_cold.1),
        gb_point(series, CEILING_BARS[1], r.read_cold),
    ];
    for (home, t) in &r.signal {
        points.push(gb_point(series, home.label(), t.per_second()));
    }
    let s = r.signal_size;
    let size = format!(
        "{} matrices of {} x {} floats ({}), a vector of {} floats",
        s.matrices,
        s.rows,
        s.m,
        mib(s.matrix_bytes(), 1),
        s.m
    );
    let ceilings = r.ceilings_cold.meta();
    run.figure(
        "memory_spaces-signal",
        &with_meta(
            &[
                ("l2", L2_COLD),
                ("size", &size),
                ("copy_bytes", &r.copy_cold.0.to_string()),
            ],
            &ceilings,
        ),
        &Spec::bar(
            "One vector applied to many matrices: where the vector lives",
            "where the vector lives",
            "GB/s",
        ),
        &points,
    )?;

    // 2b. The divergent walk.
    let points: Vec<Point> = r
        .walks
        .iter()
        .map(|w| {
            let g = w.timed.per_second();
            Point::new(
                w.home.label(),
                w.distinct,
                g.median / 1e9,
                g.worst / 1e9,
                g.best / 1e9,
            )
        })
        .collect();
    run.figure(
        "memory_spaces-divergent",
        &[
            ("l2", L2_WARM_TABLE),
            ("threads", &r.walk_threads.to_string()),
            ("steps", &r.walk_steps.to_string()),
        ],
        &Spec::line(
            "Reading a 32 KiB table: distinct addresses per warp-wide load",
            "distinct addresses per warp load",
            "billion lane reads per s",
        )
        .log_x()
        .log_y()
        // The read-only path lies on top of global memory: dashed, so both stay visible.
        .dashed("read-only path (__ldg)")
        .x_ticks(Ticks::Data),
        &points,
    )?;

    write_spacing_figure(run, r)?;
    write_sass_table(run, r)?;

    // 3. The stencils.
    let (cold_series, warm_series) = stencil_series(r);
    let mut points = Vec::new();
    for (series, copy, stencils) in [
        (&cold_series, r.copy_cold.1, &r.stencil_cold),
        (&warm_series, r.copy_warm.1, &r.stencil_warm),
    ] {
        points.push(gb_point(series, CEILING_BARS[0], copy));
        for (k, t) in stencils {
            points.push(gb_point(series, k.label(), t.per_second()));
        }
    }
    let copy_bytes = format!("cold {}, warm {}", r.copy_cold.0, r.copy_warm.0);
    // The stencils read and write alike: the copy is their ceiling; the record also says
    // the read-only and write-only ceilings of both arrays.
    let (cold, warm) = (&r.ceilings_cold, &r.ceilings_warm);
    let one_way = [
        (
            "read_ceiling",
            format!(
                "{:.0} GB/s cold, {:.0} GB/s warm (read-only kernel)",
                cold.read, warm.read
            ),
        ),
        (
            "write_ceiling",
            format!(
                "{:.0} GB/s cold, {:.0} GB/s warm (write-only kernel)",
                cold.write, warm.write
            ),
        ),
    ];
    run.figure(
        "memory_spaces-stencil",
        &with_meta(&[("l2", L2_STENCIL), ("copy_bytes", &copy_bytes)], &one_way),
        &Spec::bar(
            "Three-point stencil: caches or a shared tile",
            "kernel",
            "GB/s (useful bytes read + written)",
        ),
        &points,
    )?;

    // 4. Registers against local memory.
    run.table(
        "memory_spaces-registers",
        &format!(
            "Per-thread histograms of {} values: the compiler's registers and local bytes per thread (function attributes) and the measured time, L2 cold",
            r.histogram_n
        ),
        &[("l2", L2_COLD)],
        &histogram_rows(r),
    )?;

    // 5a. Latency.
    let mut points = Vec::new();
    for space in ChaseSpace::ALL {
        for c in r.chases.iter().filter(|c| c.space == space) {
            let (median, fastest, slowest) = c.ns_per_load();
            points.push(Point::new(
                space.label(),
                c.footprint_bytes,
                median,
                fastest,
                slowest,
            ));
        }
    }
    let steps: Vec<String> = r
        .chases
        .iter()
        .map(|c| c.steps)
        .collect::<std::collections::BTreeSet<_>>()
        .iter()
        .map(u64::to_string)
        .collect();
    run.figure(
        "memory_spaces-latency",
        &[
            ("l2", L2_CHASE),
            ("loads_per_repetition", &steps.join(", ")),
            ("l1_kib", L1_KIB),
        ],
        &Spec::line(
            "Latency of one dependent load against the footprint",
            "footprint",
            "ns per load",
        )
        .log_x()
        .log_y()
        .ref_line(Axis::X, "l1_kib KiB", "L1 ≤ {}")
        .ref_line(Axis::X, "l2_mib MiB", "L2 {}")
        .x_bytes()
        .y_ticks(Ticks::List(vec![
            10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0,
        ])),
        &points,
    )?;

    // 5b. Bandwidth of each space.
    let copy_bytes = format!(
        "DRAM read-only kernel {}; L2 read {} x {} passes",
        r.copy_cold.0, r.l2_read.0, r.l2_read.1
    );
    run.figure(
        "memory_spaces-bandwidth",
        &with_meta(
            &[
                ("l2", L2_BANDWIDTH),
                ("copy_bytes", &copy_bytes),
                ("onchip_passes", &r.onchip.passes.to_string()),
            ],
            &ceilings,
        ),
        // The spaces span two decades: dots on a log axis, never bars.
        &Spec::dot("Bytes per second each space delivers, whole GPU", "space", "GB/s")
            .log_y(),
        &bandwidth_points(r)?,
    )?;

    for line in summary(r)? {
        println!("{line}");
    }
    Ok(())
}

/// The lines the example prints once every figure and table is written.
pub fn summary(r: &Results) -> anyhow::Result<Vec<String>> {
    let mut lines = vec![
        copy_ceiling_line(r.copy_cold.1.median / 1e9, &mib(r.copy_cold.0, 1)),
        r.ceilings_cold.line(),
    ];
    for (home, t) in &r.signal {
        lines.push(format!(
            "signal, vector in {:<26} {:>7.0} GB/s",
            home.label(),
            t.per_second().median / 1e9
        ));
    }
    for w in r.walks.iter().filter(|w| w.distinct == 1 || w.distinct == 32) {
        lines.push(format!(
            "walk, {:<26} {:>2} addresses per warp: {:>8.1} G reads/s",
            w.home.label(),
            w.distinct,
            w.timed.per_second().median / 1e9
        ));
    }
    let (cold_series, warm_series) = stencil_series(r);
    for (label, stencils) in
        [(&cold_series, &r.stencil_cold), (&warm_series, &r.stencil_warm)]
    {
        for (k, t) in stencils {
            lines.push(format!(
                "stencil, {label}, {:<22} {:>7.0} GB/s",
                k.label(),
                t.per_second().median / 1e9
            ));
        }
    }
    for row in histogram_rows(r) {
        lines.push(format!(
            "{:<24} {:>3} registers {:>4} local bytes {:>10} ms",
            row.kernel, row.registers, row.local, row.ms
        ));
    }
    for c in &r.chases {
        lines.push(format!(
            "chase, {:<40} {:>11} bytes: {:>7.1} ns per load",
            c.space.label(),
            c.footprint_bytes,
            c.ns_per_load().0
        ));
    }
    for p in bandwidth_points(r)? {
        lines.push(format!("bandwidth, {:<24} {:>9.0} GB/s", p.x, p.y));
    }
    Ok(lines)
}
