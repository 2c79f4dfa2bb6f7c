//! The chapter's figures and tables, drawn from a run's [`Results`], and the summary the
//! example prints. Kept apart from the measuring so that a CPU test can draw them from
//! made-up results.

use crate::harness::kernels::KernelName;
use crate::harness::plot::{Point, Spec};
use crate::harness::Run;

use super::banks::{column_read_lanes, column_read_words, conflict_degree};
use super::measure::{fetch_model_fraction, Layout, Measurement, Results};
use super::patterns::{type_name, Pattern};
use super::reference::PARTICLE_BYTES;
use super::transpose::{tma_conflicts, warp_cost, TMA_LABEL};

/// What the L2 held during every timed repetition of this chapter.
pub const L2_COLD: &str =
    "cold (a buffer twice the L2 size is written before every repetition)";

fn percent(fraction: f64) -> String {
    format!("{:.1}%", 100.0 * fraction)
}

/// Whole percents, for the narrow per-pattern table.
fn whole_percent(fraction: f64) -> String {
    format!("{:.0}%", 100.0 * fraction)
}

fn whole(v: f64) -> String {
    format!("{v:.0}")
}

#[derive(serde::Serialize)]
struct PatternRow {
    pattern: String,
    #[serde(rename = "bytes asked")]
    requested: u64,
    #[serde(rename = "sectors (lines)")]
    sectors: String,
    #[serde(rename = "bytes moved")]
    moved: u64,
    efficiency: String,
    predicted: String,
    measured: String,
}

#[derive(serde::Serialize)]
struct TransposeRow {
    kernel: &'static str,
    threads: String,
    #[serde(rename = "elements per thread")]
    per_thread: u64,
    #[serde(rename = "sectors per warp: load, store")]
    sectors: String,
    #[serde(rename = "bank conflict: store, load")]
    conflicts: String,
    #[serde(rename = "GB/s median (min-max)")]
    gbps: String,
    #[serde(rename = "of copy")]
    of_copy: String,
}

#[derive(serde::Serialize)]
struct SideRow {
    side: usize,
    #[serde(rename = "rows starting on a sector")]
    aligned: String,
    kernel: &'static str,
    rows: String,
    #[serde(rename = "GB/s median (min-max)")]
    gbps: String,
    #[serde(rename = "best copy GB/s")]
    copy: String,
    #[serde(rename = "of best copy")]
    of_copy: String,
}

#[derive(serde::Serialize)]
struct BankRow {
    lane: String,
    #[serde(rename = "word (32-word rows)")]
    word: String,
    #[serde(rename = "bank (32-word rows)")]
    bank: String,
    #[serde(rename = "word (33-word rows)")]
    padded_word: String,
    #[serde(rename = "bank (33-word rows)")]
    padded_bank: String,
}

#[derive(serde::Serialize)]
struct SassRow {
    kernel: String,
    pointers: String,
    #[serde(rename = "LDG")]
    coherent: usize,
    #[serde(rename = "LDG.CONSTANT")]
    non_coherent: usize,
    #[serde(rename = "STG")]
    stores: usize,
    #[serde(rename = "loads before a store")]
    loads_before_a_store: usize,
}

#[derive(serde::Serialize)]
struct PtxRow {
    kernel: String,
    pointers: String,
    #[serde(rename = "ld.global")]
    coherent: usize,
    #[serde(rename = "ld.global.nc")]
    non_coherent: usize,
    #[serde(rename = "st.global")]
    stores: usize,
}

impl Results {
    /// The measurement of `pattern`: a stride-sweep point for offset 0, an offset-sweep point
    /// otherwise.
    fn measured(&self, pattern: &Pattern) -> anyhow::Result<&Measurement> {
        let found = match pattern {
            Pattern::Affine { offset: 0, .. } => self.strided.get(pattern),
            Pattern::Affine { .. } => self.misaligned.get(pattern),
            Pattern::DriftAos { record_bytes } if *record_bytes == PARTICLE_BYTES => {
                Some(&self.drift_aos)
            }
            Pattern::DriftAos { .. } => None,
            Pattern::DriftSoa => Some(&self.drift_soa),
        };
        found.ok_or_else(|| anyhow::anyhow!("`{}` was not measured", pattern.label()))
    }

    /// A measurement as a fraction of the ceiling: median, worst and best repetition.
    fn fraction_point(&self, series: &str, x: impl ToString, m: &Measurement) -> Point {
        let (r, c) = (m.gbps(), self.ceiling.median);
        Point::new(series, x, r.median / c, r.worst / c, r.best / c)
    }

    fn ceiling_note(&self) -> String {
        format!(
            "copy kernel, {} bytes, median {:.0} GB/s",
            self.ceiling_bytes, self.ceiling.median
        )
    }
}

/// `coalescing-transpose-sides` (figure) and `coalescing-transpose-pitch` (table): the
/// fastest transposes as fractions of the best copy of the same bytes, at the timed power
/// of two and at sides that are not multiples of 32, with packed and with pitched rows.
fn write_sides(run: &Run, r: &Results) -> anyhow::Result<()> {
    if r.sides.is_empty() {
        return Ok(());
    }
    let mut points = Vec::new();
    let mut rows = Vec::new();
    let n = r.transpose_n;
    let mut add = |side: usize, k: &'static str, layout: Layout, m: &Measurement, c| {
        let g = m.gbps();
        let (copy, by): (&crate::harness::stats::Rate, &str) = c;
        let series = format!("{k}, {layout}");
        let f = |v: f64| v / copy.median;
        points.push(Point::new(&series, side, f(g.median), f(g.worst), f(g.best)));
        rows.push(SideRow {
            side,
            aligned: aligned(layout, side),
            kernel: k,
            rows: layout.to_string(),
            gbps: format!("{} ({}-{})", whole(g.median), whole(g.worst), whole(g.best)),
            copy: format!("{} ({by})", whole(copy.median)),
            of_copy: percent(g.median / copy.median),
        });
    };
    let side_kernels = super::measure::SIDE_KERNELS;
    for (k, m) in r.transposes.iter().filter(|(k, _)| side_kernels.contains(k)) {
        let c = (&r.transpose_copy, r.transpose_copy_by);
        add(n, k.label(), Layout::Packed, m, c);
    }
    for side in &r.sides {
        for (k, layout, m) in &side.runs {
            add(side.side, k.label(), *layout, m, (&side.copy, side.copy_by));
        }
    }
    // The TMA transpose against the same copies; a layout it cannot address is a row
    // of the table that says why, and no bar.
    let mut refused = Vec::new();
    for t in &r.tma {
        let copy = if t.side == n {
            Some((&r.transpose_copy, r.transpose_copy_by))
        } else {
            r.sides.iter().find(|s| s.side == t.side).map(|s| (&s.copy, s.copy_by))
        };
        let Some(c) = copy else { continue };
        match &t.time {
            Ok(m) => add(t.side, TMA_LABEL, t.layout, m, c),
            Err(why) => refused.push(SideRow {
                side: t.side,
                aligned: aligned(t.layout, t.side),
                kernel: TMA_LABEL,
                rows: t.layout.to_string(),
                gbps: format!("not run: {why}"),
                copy: format!("{} ({})", whole(c.0.median), c.1),
                of_copy: "-".to_string(),
            }),
        }
    }
    rows.extend(refused);
    // Grouped by side as measured, packed rows before pitched ones (a stable sort).
    let order =
        |side: usize| r.sides.iter().position(|s| s.side == side).map(|i| i + 1);
    let packed = Layout::Packed.to_string();
    rows.sort_by_key(|row| {
        (if row.side == n { Some(0) } else { order(row.side) }, row.rows != packed)
    });
    let pitch = super::measure::PITCH_FLOATS;
    let note = format!(
        "rows packed (a row of n floats starts n floats after the last) or pitched to {pitch} floats ({} bytes); every fraction divides by the best copy of the same n² floats, measured in the same run",
        pitch * 4
    );
    run.figure(
        "coalescing-transpose-sides",
        &[("l2", L2_COLD), ("layouts", &note)],
        &Spec::bar(
            "The fastest transposes at sides that are not multiples of 32",
            "side (floats)",
            "fraction of the best copy (read + write)",
        ),
        &points,
    )?;
    run.table(
        "coalescing-transpose-pitch",
        "The fastest transposes with packed and pitched rows, L2 cold, as fractions of the best copy of the same bytes",
        &[("l2", L2_COLD), ("layouts", &note)],
        &rows,
    )
}

/// The share of rows that start on a 32-byte sector: "all" or "1 in k".
fn aligned(layout: Layout, side: usize) -> String {
    match layout.pitch(side) % 8 {
        0 => "all".to_string(),
        p => format!("1 in {}", 8 / gcd(p, 8)),
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Markdown code spans around qualifiers, so `__restrict__` is not read as emphasis.
fn code_unless_plain(qualifiers: &str) -> String {
    if qualifiers.starts_with("plain") {
        qualifiers.to_string()
    } else {
        format!("`{qualifiers}`")
    }
}

fn predicted_point(series: &str, x: impl ToString, fraction: f64) -> Point {
    Point::new(series, x, fraction, fraction, fraction)
}

/// The per-pattern table: one warp's first load computed, the whole kernel predicted and
/// measured.
fn pattern_rows(r: &Results) -> anyhow::Result<Vec<PatternRow>> {
    let mut rows = Vec::new();
    for pattern in Pattern::table() {
        let request = pattern.first_load();
        rows.push(PatternRow {
            pattern: pattern.label(),
            requested: request.requested_bytes,
            sectors: format!("{} ({})", request.sectors, request.lines),
            moved: request.moved_bytes(),
            efficiency: whole_percent(request.efficiency()),
            predicted: whole_percent(pattern.predicted_fraction()),
            measured: whole_percent(
                r.measured(&pattern)?.gbps().median / r.ceiling.median,
            ),
        });
    }
    Ok(rows)
}

/// Writes every figure and table of the chapter, then prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    let fraction = "fraction of the copy ceiling";
    let ceiling = r.ceiling_note();

    // Strides: measured and predicted, floats and doubles.
    let mut points = Vec::new();
    for elem_bytes in [4u64, 8] {
        let name = type_name(elem_bytes);
        for &stride in &r.strides {
            let pattern = Pattern::Affine { elem_bytes, stride, offset: 0 };
            points.push(r.fraction_point(
                &format!("{name}, measured"),
                stride,
                r.measured(&pattern)?,
            ));
        }
        for &stride in &r.strides {
            let pattern = Pattern::Affine { elem_bytes, stride, offset: 0 };
            points.push(predicted_point(
                &format!("{name}, predicted"),
                stride,
                pattern.predicted_fraction(),
            ));
        }
    }
    run.figure(
        "coalescing-stride",
        &[
            ("l2", L2_COLD),
            ("source_bytes", &r.sweep_bytes.to_string()),
            ("ceiling", &ceiling),
        ],
        &Spec::line(
            "Strided loads, contiguous stores: measured and predicted",
            "stride (elements)",
            fraction,
        )
        .log_x(),
        &points,
    )?;

    write_granularity_figure(run, r)?;

    // Misaligned starts: measured and both predictions.
    let offset_pattern = |offset| Pattern::Affine { elem_bytes: 4, stride: 1, offset };
    let mut points = Vec::new();
    for &offset in &r.offsets {
        let m = r
            .misaligned
            .get(&offset_pattern(offset))
            .ok_or_else(|| anyhow::anyhow!("offset {offset} was not measured"))?;
        points.push(r.fraction_point("measured", offset, m));
    }
    for &offset in &r.offsets {
        points.push(predicted_point(
            "predicted, sectors per request",
            offset,
            offset_pattern(offset).traffic().per_request_fraction(),
        ));
    }
    for &offset in &r.offsets {
        points.push(predicted_point(
            "predicted, distinct sectors",
            offset,
            offset_pattern(offset).traffic().dram_fraction(),
        ));
    }
    run.figure(
        "coalescing-offset",
        &[
            ("l2", L2_COLD),
            ("source_bytes", &r.offset_bytes.to_string()),
            ("ceiling", &ceiling),
        ],
        &Spec::line(
            "Float loads starting k elements after a 128-byte boundary",
            "start offset k (floats)",
            fraction,
        ),
        &points,
    )?;

    // Particles.
    let aos = Pattern::DriftAos { record_bytes: PARTICLE_BYTES };
    let mut points = Vec::new();
    // The struct of arrays first: the legend sits at the upper right.
    for (label, pattern) in [
        ("struct of arrays", Pattern::DriftSoa),
        ("array of structs (28-byte records)", aos),
    ] {
        points.push(r.fraction_point("measured", label, r.measured(&pattern)?));
        points.push(predicted_point(
            "predicted (distinct sectors)",
            label,
            pattern.predicted_fraction(),
        ));
    }
    run.figure(
        "coalescing-layout",
        &[
            ("l2", L2_COLD),
            ("particles", &r.particles.to_string()),
            ("ceiling", &ceiling),
        ],
        &Spec::bar(
            "Particle drift, positions updated: useful bytes per second",
            "layout",
            fraction,
        ),
        &points,
    )?;

    run.table(
        "coalescing-patterns",
        "One warp's first load, computed; the whole kernel predicted from distinct sectors and measured, as fractions of the copy ceiling (L2 cold)",
        &[("l2", L2_COLD), ("ceiling", &ceiling)],
        &pattern_rows(r)?,
    )?;

    // Transposes.
    let n = r.transpose_n;
    let copy = r.transpose_copy;
    let series = "GB/s, read + write";
    let mut points =
        vec![Point::new(series, "best copy", copy.median, copy.worst, copy.best)];
    let mut transpose_rows = Vec::new();
    // The per-warp model needs an interior tile; the counts do not depend on the size beyond it.
    let model_side = (n as u64).max(128);
    for (kernel, m) in &r.transposes {
        let g = m.gbps();
        points.push(Point::new(series, kernel.label(), g.median, g.worst, g.best));
        let cost = warp_cost(*kernel, model_side, model_side);
        let conflicts = match (cost.shared_store_conflict, cost.shared_load_conflict) {
            (Some(store), Some(load)) => format!("{store}-way, {load}-way"),
            _ => "no shared memory".to_string(),
        };
        transpose_rows.push(TransposeRow {
            kernel: kernel.label(),
            threads: format!("32 x {}", kernel.block_rows()),
            per_thread: kernel.elements_per_thread(),
            sectors: format!(
                "{}, {}",
                cost.global_load.sectors, cost.global_store.sectors
            ),
            conflicts,
            gbps: format!("{} ({}-{})", whole(g.median), whole(g.worst), whole(g.best)),
            of_copy: percent(g.median / copy.median),
        });
    }
    // The Hopper chapter's TMA transpose on the same matrix, when it ran.
    let tma_at_n = r
        .tma
        .iter()
        .find(|t| t.side == n && t.layout == Layout::Packed)
        .and_then(|t| t.time.as_ref().ok());
    if let Some(m) = tma_at_n {
        let g = m.gbps();
        points.push(Point::new(series, TMA_LABEL, g.median, g.worst, g.best));
        let (store, load) = tma_conflicts();
        transpose_rows.push(TransposeRow {
            kernel: TMA_LABEL,
            threads: "32 x 8".to_string(),
            per_thread: 4,
            sectors: "none: the TMA moves the tiles".to_string(),
            conflicts: format!("{store}-way, {load}-way"),
            gbps: format!("{} ({}-{})", whole(g.median), whole(g.worst), whole(g.best)),
            of_copy: percent(g.median / copy.median),
        });
    }
    let matrix = format!("{n} x {n} float, {} bytes each way", n * n * 4);
    run.figure(
        "coalescing-transpose",
        &[("l2", L2_COLD), ("matrix", &matrix)],
        &Spec::bar(
            &format!("Transpose of a {n} x {n} float matrix"),
            "kernel",
            "GB/s (read + write)",
        ),
        &points,
    )?;
    run.table(
        "coalescing-transpose-kernels",
        &format!("The transposes per warp (computed) and their bandwidth at {n} x {n}, L2 cold; best copy of the same bytes ({}): {} GB/s", r.transpose_copy_by, whole(copy.median)),
        &[("l2", L2_COLD), ("matrix", &matrix)],
        &transpose_rows,
    )?;
    write_sides(run, r)?;
    write_bank_table(run)?;

    // The read-only data path.
    let points: Vec<Point> = r
        .readonly
        .iter()
        .map(|(k, m)| r.fraction_point(k.qualifiers(), k.workload(), m))
        .collect();
    run.figure(
        "coalescing-readonly",
        &[
            ("l2", L2_COLD),
            ("elements", &r.readonly_n.to_string()),
            ("table_floats", &r.table_len.to_string()),
            ("ceiling", &ceiling),
        ],
        &Spec::bar(
            "Read-only data path: streamed bytes per second",
            "kernel",
            fraction,
        ),
        &points,
    )?;
    let ptx_rows: Vec<PtxRow> = r
        .ptx
        .iter()
        .map(|(k, c)| PtxRow {
            kernel: format!("`{}`", k.function()),
            pointers: code_unless_plain(k.qualifiers()),
            coherent: c.coherent_loads,
            non_coherent: c.non_coherent_loads,
            stores: c.stores,
        })
        .collect();
    run.table(
        "coalescing-readonly-ptx",
        &format!("Global loads and stores in the PTX of {}", r.compiled_by),
        &[
            ("source", "counted in the PTX of this run (no measurement)"),
            ("computed", "`coalescing::ptx` from the PTX that NVRTC writes"),
            ("headers", "ld.global = `ld.global` | ld.global.nc = `ld.global.nc` | st.global = `st.global`"),
        ],
        &ptx_rows,
    )?;

    if let Some((assembled_by, counts)) = &r.sass {
        let rows: Vec<SassRow> = counts
            .iter()
            .map(|(k, c)| SassRow {
                kernel: format!("`{}`", k.function()),
                pointers: code_unless_plain(k.qualifiers()),
                coherent: c.coherent_loads,
                non_coherent: c.non_coherent_loads,
                stores: c.stores,
                loads_before_a_store: c.loads_before_a_store,
            })
            .collect();
        run.table(
            "coalescing-readonly-sass",
            &format!("Global loads and stores in the machine code (SASS) of {assembled_by}"),
            &[
                ("source", "counted in the SASS of this run's PTX (no measurement)"),
                ("computed", "`coalescing::ptx::sass_census` on ptxas + nvdisasm output"),
                ("counted", "LDG = ordinary global loads; LDG.CONSTANT = non-coherent loads (ld.global.nc); loads before a store = the longest run of global loads with no global store between them"),
                ("headers", "LDG = `LDG.E` | LDG.CONSTANT = `LDG.E.CONSTANT` | STG = `STG.E`"),
            ],
            &rows,
        )?;
    }

    for line in summary(r)? {
        println!("{line}");
    }
    Ok(())
}

/// The lines the example prints once every figure and table is written.
pub fn summary(r: &Results) -> anyhow::Result<Vec<String>> {
    let mut lines = vec![format!(
        "copy ceiling: {:.0} GB/s ({} bytes, L2 cold)",
        r.ceiling.median, r.ceiling_bytes
    )];
    lines.push(format!(
        "{:<44} {:>8} {:>10} {:>10}",
        "pattern", "sectors", "predicted", "measured"
    ));
    for row in pattern_rows(r)? {
        lines.push(format!(
            "{:<44} {:>8} {:>10} {:>10}",
            row.pattern, row.sectors, row.predicted, row.measured
        ));
    }
    let (n, copy) = (r.transpose_n, r.transpose_copy);
    lines.push(format!(
        "transposes at {n} x {n}; best copy of the same bytes ({}): {} GB/s",
        r.transpose_copy_by,
        whole(copy.median)
    ));
    for (kernel, m) in &r.transposes {
        let g = m.gbps().median;
        lines.push(format!(
            "  {:<30} {:>6} GB/s {:>7} of copy",
            kernel.function(),
            whole(g),
            percent(g / copy.median)
        ));
    }
    for side in &r.sides {
        lines.push(format!(
            "at {0} x {0}; best copy ({1}): {2} GB/s",
            side.side,
            side.copy_by,
            whole(side.copy.median)
        ));
        for (kernel, layout, m) in &side.runs {
            let g = m.gbps().median;
            lines.push(format!(
                "  {:<30} {:<16} {:>6} GB/s {:>7} of copy",
                kernel.function(),
                layout.to_string(),
                whole(g),
                percent(g / side.copy.median)
            ));
        }
    }
    for t in &r.tma {
        let what = match &t.time {
            Ok(m) => format!("{:>6} GB/s", whole(m.gbps().median)),
            Err(why) => format!("not run: {why}"),
        };
        lines.push(format!(
            "  tma_transpose at {0} x {0}, {1}: {what}",
            t.side, t.layout
        ));
    }
    lines.push("read-only data path:".to_string());
    for (k, m) in &r.readonly {
        let g = m.gbps().median;
        lines.push(format!(
            "  {:<30} {:>6} GB/s {:>7} of the ceiling",
            k.function(),
            whole(g),
            percent(g / r.ceiling.median)
        ));
    }
    Ok(lines)
}

/// The float stride sweep under each L2 fetch granularity, beside what device memory would
/// move if it fetched blocks of that many bytes.
fn write_granularity_figure(run: &Run, r: &Results) -> anyhow::Result<()> {
    let g = &r.granularity;
    let mut points = Vec::new();
    for gr in &g.runs {
        for (stride, m) in &gr.points {
            points.push(r.fraction_point(
                &format!("limit {} B, measured", gr.requested),
                stride,
                m,
            ));
        }
    }
    for gr in &g.runs {
        for (stride, _) in &gr.points {
            points.push(predicted_point(
                &format!("{}-byte fetches, model", gr.requested),
                stride,
                fetch_model_fraction(4, *stride, gr.requested as u64),
            ));
        }
    }
    let in_force = g
        .runs
        .iter()
        .map(|gr| format!("{} B asked, {} B read back", gr.requested, gr.in_force))
        .collect::<Vec<_>>()
        .join("; ");
    let mut spec = Spec::line(
        "Strided float loads under each L2 fetch granularity limit",
        "stride (floats)",
        "fraction of the copy ceiling",
    )
    .log_x();
    for gr in &g.runs {
        spec = spec.dashed(&format!("{}-byte fetches, model", gr.requested));
    }
    run.figure(
        "coalescing-granularity",
        &[
            ("l2", L2_COLD),
            ("source_bytes", &r.sweep_bytes.to_string()),
            ("ceiling", &r.ceiling_note()),
            ("limit_before", &format!("{} B (restored after the sweep)", g.default)),
            ("limit_in_force", &in_force),
        ],
        &spec,
        &points,
    )
}

/// The banks of a warp reading column 0 of a 32 × 32 tile, unpadded and padded: computed.
fn write_bank_table(run: &Run) -> anyhow::Result<()> {
    let plain = column_read_lanes(32, 0);
    let padded = column_read_lanes(33, 0);
    let mut rows: Vec<BankRow> = plain
        .iter()
        .zip(&padded)
        .map(|(a, b)| BankRow {
            lane: a.lane.to_string(),
            word: a.word.to_string(),
            bank: a.bank.to_string(),
            padded_word: b.word.to_string(),
            padded_bank: b.bank.to_string(),
        })
        .collect();
    rows.push(BankRow {
        lane: "conflict degree".into(),
        word: String::new(),
        bank: format!("{}-way", conflict_degree(&column_read_words(32, 0))),
        padded_word: String::new(),
        padded_bank: format!("{}-way", conflict_degree(&column_read_words(33, 0))),
    });
    run.table(
        "coalescing-banks",
        "Computed, not measured: a warp reads column 0 of tile_shared, lane l reading tile_shared[l][0]",
        &[
            ("source", "computed by cmbook::coalescing::banks (no measurement)"),
            ("computed", "`coalescing::banks`"),
            ("fold", "4"),
        ],
        &rows,
    )
}
