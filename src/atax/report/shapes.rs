//! The fused passes beside cuBLAS at the large float shapes (the book's square, tall,
//! wide and odd ones), and the odd sides as allocated and pitched.

use crate::harness::ceiling;
use crate::harness::format::us;
use crate::harness::Run;

use super::super::datasets::{Dataset, LARGE_SQUARE};
use super::super::measure::{KernelResult, KernelVariant, Results};
use super::fastest;

/// The fused variants, in the order the chapter introduces them.
pub(super) const FUSED_VARIANTS: [KernelVariant; 4] = [
    KernelVariant::Fused,
    KernelVariant::FusedOnce,
    KernelVariant::FusedAtomic,
    KernelVariant::FusedCluster,
];

/// One large float shape: the fastest fused variant (cold median) and cuBLAS, if both ran.
pub(super) struct ShapeTimes<'r> {
    pub(super) d: Dataset,
    by_variant: Vec<(KernelVariant, &'r KernelResult)>,
}

impl<'r> ShapeTimes<'r> {
    fn cold_ms(&self, v: KernelVariant) -> Option<f64> {
        let found = self.by_variant.iter().find(|(w, _)| *w == v);
        found.map(|(_, k)| k.cold().median_ms)
    }
    fn best_fused(&self) -> Option<&'r KernelResult> {
        let fused = self.by_variant.iter().filter(|(v, _)| FUSED_VARIANTS.contains(v));
        fastest(fused.map(|(_, k)| *k), KernelResult::cold)
    }
    /// cuBLAS's time over the fastest fused variant's, both L2 cold.
    pub(super) fn speedup(&self) -> Option<f64> {
        Some(self.cold_ms(KernelVariant::Cublas)? / self.best_fused()?.cold().median_ms)
    }

    /// The cells every shape table shows: a variant's cold median (µs), the fastest fused
    /// variant's name, the speedup, and the fastest fused variant's fraction of the copy
    /// bandwidth; a dash for what did not run.
    fn cold_cell(&self, v: KernelVariant) -> String {
        self.cold_ms(v).map_or_else(|| "—".into(), us)
    }
    fn best_fused_cell(&self) -> &'static str {
        self.best_fused().map_or("—", |k| k.variant.name())
    }
    fn speedup_cell(&self) -> String {
        self.speedup().map_or_else(|| "—".into(), |x| format!("{x:.2}×"))
    }
    /// The fastest fused variant's fraction of the read ceiling and of the copy.
    fn best_of_cells(&self, r: &Results) -> (String, String) {
        self.best_fused().map_or_else(
            || ("—".into(), "—".into()),
            |k| {
                let ms = k.cold().median_ms;
                (r.of_read(k.bytes, ms), r.of_copy(k.bytes, ms))
            },
        )
    }
}

impl Results {
    /// The large float shapes: the book's square from the kernel measurements, then the
    /// tall, wide and odd ones.
    pub(super) fn large_shapes(&self) -> Vec<ShapeTimes<'_>> {
        let big = LARGE_SQUARE.name;
        let square =
            self.kernels.iter().filter(|k| k.d.name == big && k.elem == "float");
        by_shape(square.chain(&self.shapes))
    }
}

/// The timed fused passes and cuBLAS of `results`, by dataset in order of appearance.
pub(super) fn by_shape<'r>(
    results: impl Iterator<Item = &'r KernelResult>,
) -> Vec<ShapeTimes<'r>> {
    let mut shapes: Vec<ShapeTimes> = Vec::new();
    for k in results.filter(|k| k.times.is_some()) {
        let keep =
            FUSED_VARIANTS.contains(&k.variant) || k.variant == KernelVariant::Cublas;
        if !keep {
            continue;
        }
        match shapes.iter_mut().find(|s| s.d == k.d) {
            Some(s) => s.by_variant.push((k.variant, k)),
            None => {
                shapes.push(ShapeTimes { d: k.d, by_variant: vec![(k.variant, k)] })
            }
        }
    }
    shapes
}

#[derive(serde::Serialize)]
pub(super) struct ShapeRow {
    shape: String,
    fused_us: String,
    grid_barrier_us: String,
    atomics_us: String,
    cluster_us: String,
    cublas_us: String,
    best_fused: &'static str,
    speedup: String,
    best_of_read: String,
    best_of_copy: String,
}

/// `atax-shapes`: the fused variants and cuBLAS at every large float shape, L2 cold.
pub(super) fn shapes_table(run: &Run, r: &Results) -> anyhow::Result<()> {
    let rows: Vec<ShapeRow> = r
        .large_shapes()
        .iter()
        .map(|s| {
            let (best_of_read, best_of_copy) = s.best_of_cells(r);
            ShapeRow {
                shape: s.d.label(),
                fused_us: s.cold_cell(KernelVariant::Fused),
                grid_barrier_us: s.cold_cell(KernelVariant::FusedOnce),
                atomics_us: s.cold_cell(KernelVariant::FusedAtomic),
                cluster_us: s.cold_cell(KernelVariant::FusedCluster),
                cublas_us: s.cold_cell(KernelVariant::Cublas),
                best_fused: s.best_fused_cell(),
                speedup: s.speedup_cell(),
                best_of_read,
                best_of_copy,
            }
        })
        .collect();
    let headers = "fused_us = fused, two launches (µs) | grid_barrier_us = fused, grid \
                   barrier (µs) | atomics_us = fused, atomics (µs) | cluster_us = fused, \
                   cluster + atomics (µs) | cublas_us = cuBLAS gemv ×2 (µs) | \
                   best_fused = fastest fused | speedup = cuBLAS ÷ fastest | \
                   best_of_read = fastest, of read ceiling | \
                   best_of_copy = fastest, of copy";
    let columns = "shape | fused_us | grid_barrier_us | atomics_us | cluster_us | \
                   cublas_us | speedup | best_of_read";
    let title = "The fused passes and cuBLAS at large float shapes, L2 cold";
    cold_table(run, "atax-shapes", title, (headers, columns), r, &rows)
}

/// Writes the table `stem` of `rows`, all measured with L2 cold, its columns described
/// by `headers` and shown as `columns`, followed by `best_of_copy` where the run's read and
/// copy ceilings differ by more than 2%; the record says all three ceilings.
fn cold_table<R: serde::Serialize>(
    run: &Run,
    stem: &str,
    title: &str,
    (headers, columns): (&str, &str),
    r: &Results,
    rows: &[R],
) -> anyhow::Result<()> {
    let copy = if r.ceilings.read_apart_from_copy() { " | best_of_copy" } else { "" };
    let columns = format!("{columns}{copy}");
    let ceilings = r.ceilings.meta();
    let keys = [("l2", "cold"), ("headers", headers), ("columns", columns.as_str())];
    run.table(stem, title, &ceiling::with_meta(&keys, &ceilings), rows)
}

#[derive(serde::Serialize)]
pub(super) struct PitchedRow {
    shape: String,
    row_bytes: usize,
    fused_us: String,
    atomics_us: String,
    best_fused: &'static str,
    cublas_us: String,
    speedup: String,
    best_of_read: String,
    best_of_copy: String,
}

/// `atax-pitched`: the odd square shapes as allocated and pitched, the fastest fused pass
/// and cuBLAS, L2 cold; returns the console's summary line.
pub(super) fn pitched_table(run: &Run, r: &Results) -> anyhow::Result<String> {
    let shapes = by_shape(r.pitched.iter());
    let rows: Vec<PitchedRow> = shapes
        .iter()
        .map(|s| {
            let (best_of_read, best_of_copy) = s.best_of_cells(r);
            PitchedRow {
                shape: s.d.label(),
                row_bytes: s.d.n * 4,
                fused_us: s.cold_cell(KernelVariant::Fused),
                atomics_us: s.cold_cell(KernelVariant::FusedAtomic),
                best_fused: s.best_fused_cell(),
                cublas_us: s.cold_cell(KernelVariant::Cublas),
                speedup: s.speedup_cell(),
                best_of_read,
                best_of_copy,
            }
        })
        .collect();
    let headers = "row_bytes = bytes per row | fused_us = fused, two launches (µs) | \
                   atomics_us = fused, atomics (µs) | best_fused = fastest fused (every \
                   fused variant) | cublas_us = cuBLAS gemv ×2 (µs) | speedup = cuBLAS ÷ \
                   fastest fused | best_of_read = fastest fused, of read ceiling | \
                   best_of_copy = fastest fused, of copy";
    let columns =
        "shape | row_bytes | fused_us | atomics_us | best_fused | cublas_us | \
                   speedup | best_of_read";
    let title =
        "Odd sides as allocated and with rows pitched to whole 128-byte lines, \
                 float, L2 cold";
    cold_table(run, "atax-pitched", title, (headers, columns), r, &rows)?;
    let worst = |pitched: bool| {
        let of = shapes.iter().filter(|s| s.d.name.ends_with("pitched") == pitched);
        of.filter_map(|s| s.speedup()).min_by(f64::total_cmp)
    };
    Ok(match (worst(false), worst(true)) {
        (Some(plain), Some(pitched)) => format!(
            "odd sides: fastest fused vs cuBLAS gemv ×2 at worst {plain:.2}× as allocated, \
             {pitched:.2}× pitched ({} shapes)",
            shapes.len() / 2
        ),
        _ => "odd sides: no shape was timed both ways".to_string(),
    })
}
