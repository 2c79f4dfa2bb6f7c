//! What a run could not measure on its GPU, recorded the same way by every chapter: one
//! table, `<prefix>-skipped` (a stem the chapter lists in its `writes`), with a row per thing
//! skipped: which section, where it would have run, and why (columns `section`, `where`,
//! `why`). The comparison page reads these
//! tables back ([`read`]) to show every skip of a run, and to say "not measured on this GPU"
//! of a headline or claim whose numbers a skipped section would have given.

use std::path::Path;

use super::chapter::Chapter;
use super::record;
use super::run::Run;
use super::sections::Skip;

/// The rest of every stem that holds skips: `atax-skipped`, `cmm-beyond-skipped`.
pub const SUFFIX: &str = "-skipped";

/// What the table says where nothing was skipped.
pub const NOTHING_SKIPPED: &str =
    "Nothing was skipped: everything the run measures ran on this GPU at every size.";

/// Where a section of the chapter's plan would have run: wherever the chapter measures it.
pub const EVERYWHERE: &str = "every size";

/// One thing a run did not measure, as its row of a `<prefix>-skipped` table.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The section or variant, as the skip line names it: `cluster pass`.
    pub section: String,
    /// Where it would have run: a dataset and a type, or [`EVERYWHERE`] (column `where`).
    #[serde(rename = "where")]
    pub at: String,
    /// The need this GPU does not meet, or the limit the size is past.
    pub why: String,
}

impl Skipped {
    /// A section of the chapter's [`super::sections::Plan`], skipped everywhere.
    pub fn section(skip: &Skip) -> Self {
        Self {
            section: skip.section.into(),
            at: EVERYWHERE.into(),
            why: skip.why.clone(),
        }
    }
}

/// Writes `stem` (which ends in [`SUFFIX`]) with one row per entry of `skipped`; an empty
/// table says that nothing was skipped.
pub fn record(run: &Run, stem: &str, skipped: &[Skipped]) -> anyhow::Result<()> {
    anyhow::ensure!(stem.ends_with(SUFFIX), "`{stem}` is not a `…{SUFFIX}` stem");
    let title = "What could not run, and why";
    run.table(stem, title, &[("l2", "n/a"), ("empty", NOTHING_SKIPPED)], skipped)
}

/// A skip read back from a run's folder, with the chapter that recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The chapter's example: `cmm_beyond`.
    pub chapter: &'static str,
    pub section: String,
    pub at: String,
    pub why: String,
}

/// Every skip recorded in `dir/data/` by the chapters of `chapters`, in their order and each
/// table's. A chapter that did not run has no table and adds nothing; so does a table that
/// cannot be read or lacks one of the columns (the comparison's check of the records says
/// what is wrong with a damaged one).
pub fn read(dir: &Path, chapters: &[Chapter]) -> Vec<Recorded> {
    let mut out = Vec::new();
    for c in chapters {
        for stem in c.writes.iter().filter(|s| s.ends_with(SUFFIX)) {
            let path = dir.join("data").join(format!("{stem}.csv"));
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            let Ok(rec) = record::read_csv(&path) else { continue };
            let (Ok(section), Ok(at), Ok(why)) =
                (rec.column("section"), rec.column("where"), rec.column("why"))
            else {
                continue;
            };
            let cell =
                |row: &[String], i: usize| row.get(i).cloned().unwrap_or_default();
            out.extend(rec.rows.iter().map(|row| Recorded {
                chapter: c.example,
                section: cell(row, section),
                at: cell(row, at),
                why: cell(row, why),
            }));
        }
    }
    out
}

/// Whether `chapter` recorded any skip in `skipped`.
pub fn any_of(skipped: &[Recorded], chapter: &str) -> bool {
    skipped.iter().any(|s| s.chapter == chapter)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::harness::record::{write_csv, Meta};

    /// An entry that writes `writes` and claims nothing, for tests of what reads a folder.
    pub(crate) fn chapter(
        example: &'static str,
        writes: &'static [&'static str],
    ) -> Chapter {
        Chapter {
            example,
            page: "test.md",
            title: "test",
            needs: crate::harness::run::Needs::Cpu,
            reps: crate::harness::run::FullQuick::new(1, 1),
            writes,
            counted: &[],
            sanitizer_args: &[],
            note: "",
            headlines: &[],
            claims: &[],
            exercise: None,
        }
    }

    fn write(dir: &Path, stem: &str, rows: &[Skipped]) {
        let meta =
            Meta::for_cpu("cargo run --release --example test").with("l2", "n/a");
        write_csv(&dir.join("data").join(format!("{stem}.csv")), &meta, rows).unwrap();
    }

    #[test]
    fn every_recorded_skip_is_read_back_with_its_chapter_in_the_chapters_order() {
        let dir = tempfile::tempdir().unwrap();
        let cmm = [Skipped {
            section: "tiled program, 32-bit min-plus".into(),
            at: EVERYWHERE.into(),
            why: "needs compute capability 8.0 (cp.async copies into shared memory); \
                  this GPU is 7.5"
                .into(),
        }];
        let atax = [
            Skipped::section(&Skip {
                section: "cluster pass",
                why: "needs compute capability 9.0 (thread-block clusters); this GPU is 8.0"
                    .into(),
            }),
            Skipped {
                section: "fused".into(),
                at: "wide 8192×32768, float".into(),
                why: "the fused kernel keeps a row in registers".into(),
            },
        ];
        write(dir.path(), "cmm-beyond-skipped", &cmm);
        write(dir.path(), "atax-skipped", &atax);
        // An empty table (nothing skipped) and a chapter that did not run add nothing.
        write(dir.path(), "coalescing-skipped", &[]);
        let chapters = [
            chapter("atax", &["atax-kernels", "atax-skipped"]),
            chapter("coalescing", &["coalescing-skipped"]),
            chapter("cmm_beyond", &["cmm-beyond-targets", "cmm-beyond-skipped"]),
            chapter("hopper_memory", &["hopper-memory-skipped"]),
        ];
        let read = read(dir.path(), &chapters);
        let seen: Vec<(&str, &str, &str)> = read
            .iter()
            .map(|r| (r.chapter, r.section.as_str(), r.at.as_str()))
            .collect();
        assert_eq!(
            seen,
            [
                ("atax", "cluster pass", EVERYWHERE),
                ("atax", "fused", "wide 8192×32768, float"),
                ("cmm_beyond", "tiled program, 32-bit min-plus", EVERYWHERE),
            ]
        );
        assert!(read[0].why.starts_with("needs compute capability 9.0"));
        assert!(any_of(&read, "cmm_beyond") && !any_of(&read, "coalescing"));
    }

    #[test]
    fn a_table_without_the_columns_of_skips_is_not_read_as_one() {
        let dir = tempfile::tempdir().unwrap();
        #[derive(serde::Serialize)]
        struct Other {
            dataset: &'static str,
            why: &'static str,
        }
        let meta = Meta::for_cpu("cargo run --release --example test");
        let path = dir.path().join("data").join("atax-skipped.csv");
        write_csv(&path, &meta, &[Other { dataset: "large", why: "too big" }]).unwrap();
        assert!(read(dir.path(), &[chapter("atax", &["atax-skipped"])]).is_empty());
    }
}
