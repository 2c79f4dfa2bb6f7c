//! The book's diagrams: pictures of its ideas, each computed by the model the chapter's tests
//! already check (the sector arithmetic, the bank function, the table's index functions), so
//! that a diagram cannot say what the model does not. A few are composed instead from the
//! measured records of the folder they are written to (the memory hierarchy, the roofline
//! explained), as the measured rooflines are. Each diagram's shapes are its record
//! (`figures/data/<stem>.csv`, drawn by [`plot::draw_svg`]); `reproduce` writes them after a
//! measuring run, once the records exist, and alone with `--diagrams`, which needs no GPU.

use std::path::Path;

use crate::harness::plot::{self, Shape};
use crate::harness::record::Meta;
use crate::harness::run;

mod atax;
mod cmm;
mod coalescing;
mod glossary;
mod hierarchy;
mod hopper;
mod roofline;
mod tiling;

/// One diagram: its stem, title, the model that computed it, its panels per row and shapes.
#[derive(Debug)]
pub struct Diagram {
    pub stem: &'static str,
    pub title: String,
    /// The model, as a path in the crate (named in the footer).
    pub computed_by: &'static str,
    pub panel_columns: usize,
    pub shapes: Vec<Shape>,
    /// A diagram composed from measured records: the device they were measured on and the
    /// records it read (`composed_from`). None for a diagram computed from a model alone.
    pub provenance: Option<Meta>,
}

/// The diagrams computed from the chapters' models alone.
fn computed() -> Vec<Diagram> {
    vec![
        coalescing::sectors(),
        coalescing::banks(),
        coalescing::transpose(),
        cmm::layouts(),
        tiling::steps(),
        atax::patterns(),
        hopper::pipeline(),
        hopper::tma(),
        hopper::warp_tile(),
        glossary::warp(),
        glossary::sector(),
        glossary::bank_conflict(),
        glossary::tile(),
        glossary::occupancy(),
    ]
}

/// The diagrams composed from the records in `records` (the folder that holds `data/`), each
/// with its stem: an error says which record it lacks.
fn composed(records: &Path) -> Vec<(&'static str, anyhow::Result<Diagram>)> {
    vec![
        (hierarchy::STEM, hierarchy::compose(records)),
        (roofline::STEM, roofline::compose(records)),
        (glossary::BYTES_IN_FLIGHT_STEM, glossary::bytes_in_flight(records)),
    ]
}

/// Every diagram of the book, computed now; those composed from records only where
/// `records` holds what they need.
pub fn all(records: &Path) -> Vec<Diagram> {
    let composed = composed(records).into_iter().filter_map(|(_, d)| d.ok());
    computed().into_iter().chain(composed).collect()
}

/// The stems of [`all`], which `reproduce` writes (and
/// [`reproduce_writes`](super::reproduce_writes) knows).
pub const STEMS: &[&str] = &[
    "coalescing-diagram-sectors",
    "coalescing-diagram-banks",
    "coalescing-diagram-transpose",
    "cmm_diagonal-diagram-layouts",
    "tiling-diagram-steps",
    "atax-diagram-patterns",
    "hopper_memory-diagram-pipeline",
    "hopper_memory-diagram-tma",
    "hopper_memory-diagram-warptile",
    "glossary-diagram-warp",
    "glossary-diagram-sector",
    "glossary-diagram-bank-conflict",
    "glossary-diagram-tile",
    "glossary-diagram-occupancy",
    hierarchy::STEM,
    roofline::STEM,
    glossary::BYTES_IN_FLIGHT_STEM,
];

/// The glossary's own stem: its pictures' stems start with it, as a chapter's do with the
/// chapter's (the glossary page is `src/book/glossary.md`, no chapter's).
pub const GLOSSARY_STEM: &str = "glossary";

/// The provenance of a computed diagram: no GPU, no measurement.
pub fn meta(command: &str) -> Meta {
    Meta::for_cpu(command).with("gpu", "none (computed, not measured)")
}

/// Writes every diagram (CSV and SVG) into `dir`, those composed from records from the
/// records already in `dir`; returns how many. A composed diagram whose records are missing
/// (a reader's partial run) is not written, and one line says why.
pub fn write(dir: &Path, command: &str) -> anyhow::Result<usize> {
    let mut diagrams = computed();
    for (stem, d) in composed(dir) {
        match d {
            Ok(d) => diagrams.push(d),
            Err(e) => println!("{stem}: not written ({e:#})"),
        }
    }
    for d in &diagrams {
        let provenance = match &d.provenance {
            Some(p) => {
                p.clone().with("command", command).with("profile", run::profile())
            }
            None => meta(command),
        };
        let meta =
            plot::diagram_meta(provenance, &d.title, d.computed_by, d.panel_columns);
        plot::write_diagram(dir, d.stem, &meta, &d.shapes)?;
    }
    Ok(diagrams.len())
}

/// The book's own folder of records, which its committed diagrams were composed from.
#[cfg(test)]
fn book_figures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("figures")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::{draw_svg, layout_problems};
    use crate::harness::record;

    /// A folder whose `data/` holds made-up records, each `(stem, body)` under one made-up
    /// device's provenance, shaped as the chapters write them.
    pub(super) fn made_up_records(records: &[(&str, &str)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let device = "# gpu: Made-up GPU\n# compute_capability: 9.0\n# sms: 100\n\
                      # l2_mib: 40\n# driver: 1\n# cuda: 13.0\n# commit: fedcba\n";
        for (stem, body) in records {
            std::fs::write(data.join(format!("{stem}.csv")), format!("{device}{body}"))
                .unwrap();
        }
        tmp
    }

    /// The shapes of one panel of a diagram.
    pub(super) fn panel<'d>(d: &'d Diagram, name: &str) -> Vec<&'d Shape> {
        d.shapes.iter().filter(|s| s.panel == name).collect()
    }

    /// A diagram drawn through its CSV, as the book draws it.
    pub(super) fn drawn(d: &Diagram) -> String {
        let provenance = d.provenance.clone().unwrap_or_else(|| meta("cargo test"));
        let meta = plot::diagram_meta(
            provenance.with("commit", "abc"),
            &d.title,
            d.computed_by,
            d.panel_columns,
        );
        let text = record::to_csv_string(&meta, &d.shapes).unwrap();
        draw_svg(&record::parse_csv(&text).unwrap(), &format!("{}.csv", d.stem))
            .unwrap()
    }

    #[test]
    fn every_diagram_is_listed_reads_at_the_books_width_and_names_its_model() {
        let diagrams = all(&book_figures());
        let stems: Vec<&str> = diagrams.iter().map(|d| d.stem).collect();
        assert_eq!(stems, STEMS);
        for s in STEMS {
            assert!(super::super::reproduce_writes(s), "{s}");
            let chapter = s.split('-').next().unwrap();
            assert!(
                (chapter == GLOSSARY_STEM
                    && book_figures().join("../src/book/glossary.md").exists())
                    || super::super::ALL.iter().any(|c| c.example == chapter
                        || c.writes
                            .iter()
                            .any(|w| w.starts_with(&format!("{chapter}-")))),
                "{s} does not start with a chapter's stem nor the glossary's"
            );
        }
        for d in &diagrams {
            let svg = drawn(d);
            let problems = layout_problems(&svg);
            assert!(problems.is_empty(), "{}: {}", d.stem, problems.join("\n"));
            let footer = match &d.provenance {
                Some(_) => {
                    format!("drawn by {} from the measured records", d.computed_by)
                }
                None => format!("computed by {} (not measured)", d.computed_by),
            };
            assert!(svg.contains(&footer), "{}: no footer `{footer}`", d.stem);
            assert_eq!(svg, drawn(d), "{} is not drawn deterministically", d.stem);
        }
    }

    /// The committed diagrams are what the models compute today: a model that changed
    /// without its diagram being written again fails here.
    #[test]
    fn the_books_diagrams_are_what_the_models_compute() {
        let figures = Path::new(env!("CARGO_MANIFEST_DIR")).join("figures/data");
        for d in all(&book_figures()) {
            let rec =
                record::read_csv(&figures.join(format!("{}.csv", d.stem))).unwrap();
            assert_eq!(plot::shapes_of(&rec).unwrap(), d.shapes, "{}", d.stem);
            assert_eq!(rec.meta.get("title"), Some(d.title.as_str()), "{}", d.stem);
            assert_eq!(rec.meta.get("computed"), Some(d.computed_by), "{}", d.stem);
        }
    }
}
