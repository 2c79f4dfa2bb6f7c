//! The chapter's figures and tables, drawn from a run's [`Results`], and the summary the
//! example prints. Kept apart from the measuring so that a CPU test can draw them from
//! made-up results.

use crate::harness::format::{copy_ceiling_line, percent};
use crate::harness::kernels::KernelName;
use crate::harness::plot::Point;
use crate::harness::skipped::Skipped;
use crate::harness::Run;

use super::measure::{Measurement, Results};
use super::patterns::Pattern;
use super::reference::PARTICLE_BYTES;

mod access;
mod readonly;
mod transposes;

/// What the L2 held during every timed repetition of this chapter.
pub const L2_COLD: &str =
    "cold (a buffer twice the L2 size is read before every repetition)";

/// Whole percents, for the narrow per-pattern table.
fn whole_percent(fraction: f64) -> String {
    format!("{:.0}%", 100.0 * fraction)
}

fn whole(v: f64) -> String {
    format!("{v:.0}")
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
            "{}, {} bytes, median {:.0} GB/s",
            self.ceilings.copy_by, self.ceiling_bytes, self.ceiling.median
        )
    }

    /// The read-only and write-only ceilings measured beside the copy every fraction is
    /// taken of (every kernel of the chapter reads and writes): the record says them too.
    fn one_way_ceilings(&self) -> [(&'static str, String); 2] {
        let [_, read, write] = self.ceilings.meta();
        [read, write]
    }
}

/// Writes every figure and table of the chapter, then prints the summary.
pub fn report(run: &Run, r: &Results) -> anyhow::Result<()> {
    access::write_access(run, r)?;
    transposes::write_transposes(run, r)?;
    readonly::write_readonly(run, r)?;
    let skipped: Vec<Skipped> = r.skipped.iter().map(Skipped::section).collect();
    crate::harness::skipped::record(run, super::SKIPPED_STEM, &skipped)?;
    for line in summary(r)? {
        println!("{line}");
    }
    Ok(())
}

/// The lines the example prints once every figure and table is written.
pub fn summary(r: &Results) -> anyhow::Result<Vec<String>> {
    let mut lines = vec![
        copy_ceiling_line(r.ceiling.median, &format!("{} bytes", r.ceiling_bytes)),
        r.ceilings.line(),
    ];
    lines.push(format!(
        "{:<44} {:>8} {:>10} {:>10}",
        "pattern", "sectors", "predicted", "measured"
    ));
    for row in access::pattern_rows(r)? {
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
