//! A reader's GPU beside the book's: every chapter's headline numbers and claims, read from two
//! folders of records (the reader's run and the book's `figures/`), compared, and written as a
//! console table, a Markdown page and an HTML page, with every section the reader's GPU
//! could not run ([`super::skipped`]).
//!
//! What a headline or a claim is lives in each chapter's entry ([`Chapter`]) as data: a
//! [`Pick`] (written with [`pick!`](crate::pick)) names a CSV, the row (the last one matching a filter, so that a sweep gives its
//! largest size) and the column. Nothing here knows a chapter.

use std::path::{Path, PathBuf};

use super::args::UsageError;
use super::chapter::Chapter;
use super::record::{self, Record};
use super::skipped::{self, Recorded};
use super::table::{markdown_code, markdown_text};

/// One number in a record: the last row of `figures/data/<stem>.csv` whose columns equal
/// `filter`, column `column`. `key` names the columns (or, written `#name`, the metadata keys)
/// that say what was measured (a size, a dataset), shown beside the value so that numbers of
/// different sizes are never compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub stem: &'static str,
    pub filter: &'static [(&'static str, &'static str)],
    pub column: &'static str,
    pub key: &'static [&'static str],
}

/// A [`Pick`] as a constant: `pick!(stem, [(column, value), …], column, [key, …])`.
#[macro_export]
macro_rules! pick {
    ($stem:literal, [$(($c:literal, $v:literal)),*], $column:literal, [$($k:literal),*]) => {
        $crate::harness::compare::Pick {
            stem: $stem,
            filter: &[$(($c, $v)),*],
            column: $column,
            key: &[$($k),*],
        }
    };
}

/// A chapter's headline number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headline {
    pub what: &'static str,
    pub pick: Pick,
    pub unit: &'static str,
    /// Whether a larger value is better (bandwidth) or worse (time).
    pub higher_is_better: bool,
}

impl Headline {
    /// A headline where more is better (a bandwidth, a rate).
    pub const fn higher(what: &'static str, pick: Pick, unit: &'static str) -> Self {
        Self { what, pick, unit, higher_is_better: true }
    }

    /// A headline where less is better (a time, a latency).
    pub const fn lower(what: &'static str, pick: Pick, unit: &'static str) -> Self {
        Self { what, pick, unit, higher_is_better: false }
    }
}

/// A claim the chapter makes: `value(a) / value(b) >= at_least` (or `value(a) >= at_least`
/// without `b`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claim {
    pub text: &'static str,
    pub a: Pick,
    pub b: Option<Pick>,
    pub at_least: f64,
}

impl Claim {
    /// `value(a) / value(b) >= at_least`.
    pub const fn ratio(text: &'static str, a: Pick, b: Pick, at_least: f64) -> Self {
        Self { text, a, b: Some(b), at_least }
    }

    /// `value(a) >= at_least`.
    pub const fn at_least(text: &'static str, a: Pick, at_least: f64) -> Self {
        Self { text, a, b: None, at_least }
    }
}

/// A value found in a folder, with what it was measured at and on which device.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub value: f64,
    pub key: String,
    pub device: String,
}

/// The leading number of a table cell: `39.7x` → 39.7, `1.94× (1.02 of copy)` → 1.94,
/// `2,827` → 2827; `–`, `yes` or an empty cell → `None`.
pub fn leading_number(cell: &str) -> Option<f64> {
    let cell = cell.trim().replace(',', "");
    let end = cell
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || (i == 0 && c == '-')
                || c == 'e' && i > 0)
        })
        .map_or(cell.len(), |(i, _)| i);
    cell[..end].parse().ok().filter(|v: &f64| v.is_finite())
}

/// The largest magnitude a headline number may have: no time, bandwidth or rate the book
/// measures comes near it, and a value beyond it is a corrupted record, not a measurement.
pub const PLAUSIBLE_MAX: f64 = 1e12;

/// Why the cell `cell` of a headline's column cannot be a measurement in `unit`: not a finite
/// number, negative (no time, bandwidth or size is), above [`PLAUSIBLE_MAX`], or a percentage
/// outside 0–100. `None` where it is one, or where it holds no number at all (a dash, a word).
pub fn implausible(cell: &str, unit: &str) -> Option<String> {
    let plain = cell.trim().replace(',', "");
    let word = plain.trim_start_matches(['+', '-']).to_ascii_lowercase();
    if ["nan", "inf", "infinity"].contains(&word.as_str()) {
        return Some(format!("`{cell}` is not a finite number"));
    }
    if plain.parse::<f64>().is_ok_and(|v| !v.is_finite()) {
        return Some(format!("`{cell}` is too large to be a number here"));
    }
    let value = leading_number(cell)?;
    if value < 0.0 {
        Some(format!("`{cell}` is negative"))
    } else if value > PLAUSIBLE_MAX {
        Some(format!("`{cell}` is beyond any plausible {unit}"))
    } else if unit == "%" && value > 100.0 {
        Some(format!("`{cell}` is not a percentage (0–100)"))
    } else {
        None
    }
}

/// Checks the records in `dir` that the headlines and claims of `chapters` read, before
/// anything is compared: each must parse, have a header, and hold in every picked column only
/// plausible numbers ([`implausible`]). The first problem is named by its file and line; it is
/// bad input (exit code 2). A record that is absent is simply not measured; one whose columns
/// are not those a pick names (written by another version of the code) is not compared, and
/// the returned notes say so, one line each.
pub fn check_records(
    chapters: &[Chapter],
    dir: &Path,
) -> Result<Vec<String>, UsageError> {
    let mut picks: Vec<(&Pick, &str)> = Vec::new();
    for c in chapters {
        picks.extend(c.headlines.iter().map(|h| (&h.pick, h.unit)));
        for claim in c.claims {
            picks.push((&claim.a, ""));
            picks.extend(claim.b.as_ref().map(|b| (b, "")));
        }
    }
    let mut notes = Vec::new();
    for (pick, unit) in picks {
        let path = dir.join("data").join(format!("{}.csv", pick.stem));
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let shown = path.display();
        let (rec, lines) = record::read_csv_with_lines(&path)
            .map_err(|e| UsageError(format!("{shown}: {e:#}")))?;
        let missing = rec.meta.missing_provenance();
        if rec.header.iter().all(String::is_empty) {
            // A run's table with no rows has no header to write: every section behind it
            // was skipped on that GPU, so its numbers read "not measured". A file without
            // a run's provenance and rows is refused.
            if missing.is_empty() && rec.rows.is_empty() {
                continue;
            }
            return Err(UsageError(format!(
                "{shown}: no column header: the file is empty"
            )));
        }
        if !missing.is_empty() {
            return Err(UsageError(format!(
                "{shown} is not a record a run wrote: its provenance lacks {}",
                missing.join(", ")
            )));
        }
        let named = pick
            .filter
            .iter()
            .map(|(c, _)| *c)
            .chain([pick.column])
            .chain(pick.key.iter().copied().filter(|k| !k.starts_with('#')));
        if let Some(name) = named.into_iter().find(|n| rec.column(n).is_err()) {
            let note = format!(
                "note: {shown} has no column `{name}` (another version's record?): not compared"
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
            continue;
        }
        let column = rec.column(pick.column).map_err(|e| UsageError(e.to_string()))?;
        // A `--quick` run is a check that everything runs, not a measurement: a cost taken as
        // the difference of two short timings can come out below zero there. A negative value
        // of such a run is only noted; every other implausible value is refused.
        let quick = rec
            .meta
            .get("command")
            .is_some_and(|c| c.split_whitespace().any(|a| a == "--quick"));
        for (row, line) in rec.rows.iter().zip(&lines) {
            let cell = row.get(column).map_or("", String::as_str);
            if let Some(why) = implausible(cell, unit) {
                let at =
                    format!("{shown}, line {line}: column `{}`: {why}", pick.column);
                let noise = quick && leading_number(cell).is_some_and(|v| v < 0.0);
                if !noise {
                    return Err(UsageError(at));
                }
                notes.push(format!("note: {at} (a --quick run's noise)"));
            }
        }
    }
    Ok(notes)
}

fn device_of(rec: &Record) -> String {
    match (rec.meta.get("gpu"), rec.meta.get("cpu")) {
        (Some(g), Some(c)) if g.starts_with("none") => c.to_string(),
        (Some(g), _) => g.to_string(),
        (None, Some(c)) => c.to_string(),
        (None, None) => "unknown device".into(),
    }
}

/// Reads `pick` from the records in `dir` (a folder with `data/*.csv`).
pub fn find(dir: &Path, pick: &Pick) -> Option<Found> {
    let rec =
        record::read_csv(&dir.join("data").join(format!("{}.csv", pick.stem))).ok()?;
    let col = |name: &str| rec.column(name).ok();
    let filters: Vec<(usize, &str)> =
        pick.filter.iter().map(|(c, v)| Some((col(c)?, *v))).collect::<Option<_>>()?;
    let row =
        rec.rows.iter().rev().find(|r| filters.iter().all(|(i, v)| r[*i] == *v))?;
    let value = leading_number(&row[col(pick.column)?])?;
    let key = pick
        .key
        .iter()
        .map(|k| match k.strip_prefix('#') {
            // A metadata value up to its first colon: "Per-thread histograms of N values".
            Some(meta) => {
                rec.meta.get(meta).map(|v| v.split(':').next().unwrap_or(v).to_string())
            }
            // A bare number needs its column's name ("n 1024"); a phrase speaks for itself.
            None => {
                let v = &row[col(k)?];
                Some(if v.contains(' ') { v.clone() } else { format!("{k} {v}") })
            }
        })
        .collect::<Option<Vec<_>>>()?
        .join(", ");
    Some(Found { value, key, device: device_of(&rec) })
}

/// One headline, here and in the book.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineRow {
    pub chapter: &'static str,
    pub what: &'static str,
    pub unit: &'static str,
    pub theirs: Option<Found>,
    pub book: Option<Found>,
    pub higher_is_better: bool,
    /// Whether the reader's run recorded skips of this chapter ([`super::skipped`]): a
    /// number missing there was not measured on that GPU.
    pub chapter_skipped: bool,
}

/// What a headline or claim whose numbers a skipped section would have given says.
pub const NOT_MEASURED_HERE: &str = "not measured on this GPU";

impl HeadlineRow {
    /// theirs / book, when both measured the same thing.
    pub fn ratio(&self) -> Option<f64> {
        match (&self.theirs, &self.book) {
            (Some(t), Some(b)) if t.key == b.key && b.value != 0.0 => {
                Some(t.value / b.value)
            }
            _ => None,
        }
    }

    /// A few words on how the two stand.
    pub fn verdict(&self) -> String {
        match (&self.theirs, &self.book, self.ratio()) {
            (None, _, _) if self.chapter_skipped => NOT_MEASURED_HERE.into(),
            (None, _, _) => "not measured in this run".into(),
            (_, None, _) => "not in the book's data".into(),
            (Some(_), Some(_), None) => {
                "not comparable: measured at another size".into()
            }
            (_, _, Some(r)) => {
                let better = (r >= 1.0) == self.higher_is_better;
                let factor = if r >= 1.0 { r } else { 1.0 / r };
                if (factor - 1.0).abs() < 0.02 {
                    "the same (within 2%)".into()
                } else {
                    format!("{factor:.2}× {}", if better { "better" } else { "worse" })
                }
            }
        }
    }
}

/// Whether a claim holds in one folder: `None` when its numbers are not there (or the two
/// numbers of a ratio were measured at different sizes).
pub fn claim_holds(dir: &Path, claim: &Claim) -> Option<(bool, f64)> {
    let a = find(dir, &claim.a)?;
    let v = match &claim.b {
        Some(b) => {
            let b = find(dir, b)?;
            if a.key != b.key || b.value == 0.0 {
                return None;
            }
            a.value / b.value
        }
        None => a.value,
    };
    Some((v >= claim.at_least, v))
}

/// One claim, here and in the book.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRow {
    pub chapter: &'static str,
    pub text: &'static str,
    pub theirs: Option<(bool, f64)>,
    pub book: Option<(bool, f64)>,
    /// As [`HeadlineRow::chapter_skipped`].
    pub chapter_skipped: bool,
}

impl ClaimRow {
    /// Whether it holds on the reader's GPU, in words.
    pub fn on_their_gpu(&self) -> String {
        match self.theirs {
            None if self.chapter_skipped => NOT_MEASURED_HERE.into(),
            _ => holds(&self.theirs),
        }
    }
}

fn holds(v: &Option<(bool, f64)>) -> String {
    match v {
        None => "not measured".into(),
        Some((true, x)) => format!("holds ({x:.3})"),
        Some((false, x)) => format!("does not hold ({x:.3})"),
    }
}

/// Every headline and claim of `chapters`, read from `theirs` and `book`.
pub fn compare(
    chapters: &[Chapter],
    theirs: &Path,
    book: &Path,
) -> (Vec<HeadlineRow>, Vec<ClaimRow>) {
    let recorded = skipped::read(theirs, chapters);
    let mut headlines = Vec::new();
    let mut claims = Vec::new();
    for c in chapters {
        let chapter_skipped = skipped::any_of(&recorded, c.example);
        for h in c.headlines {
            headlines.push(HeadlineRow {
                chapter: c.example,
                what: h.what,
                unit: h.unit,
                theirs: find(theirs, &h.pick),
                book: find(book, &h.pick),
                higher_is_better: h.higher_is_better,
                chapter_skipped,
            });
        }
        for claim in c.claims {
            claims.push(ClaimRow {
                chapter: c.example,
                text: claim.text,
                theirs: claim_holds(theirs, claim),
                book: claim_holds(book, claim),
                chapter_skipped,
            });
        }
    }
    (headlines, claims)
}

fn value(f: &Option<Found>) -> String {
    match f {
        None => "–".into(),
        Some(f) if f.key.is_empty() => super::format::sig3(f.value),
        Some(f) => format!("{} ({})", super::format::sig3(f.value), f.key),
    }
}

fn devices(rows: &[HeadlineRow], theirs: bool) -> String {
    let mut names: Vec<String> = rows
        .iter()
        .filter_map(|r| if theirs { &r.theirs } else { &r.book }.as_ref())
        .map(|f| f.device.clone())
        .collect();
    names.sort();
    names.dedup();
    if names.is_empty() {
        "–".into()
    } else {
        names.join(", ")
    }
}

/// The lines an example prints at the end of its run.
pub fn console(headlines: &[HeadlineRow], claims: &[ClaimRow]) -> Vec<String> {
    let mut lines = vec![format!(
        "compared with the book (this run: {}; the book: {}):",
        devices(headlines, true),
        devices(headlines, false)
    )];
    let number = |f: &Option<Found>| {
        f.as_ref().map_or("–".into(), |f| super::format::sig3(f.value))
    };
    for h in headlines {
        // The size is named once where both runs measured the same, else for each.
        let key = |f: &Option<Found>| match f {
            Some(f) if !f.key.is_empty() => format!(" ({})", f.key),
            _ => String::new(),
        };
        let same = matches!((&h.theirs, &h.book), (Some(t), Some(b)) if t.key == b.key);
        let (at, here, book) = if same {
            (key(&h.theirs), String::new(), String::new())
        } else {
            (String::new(), key(&h.theirs), key(&h.book))
        };
        lines.push(format!(
            "  {}{at}: here {} {unit}{here}, book {} {unit}{book}: {}",
            h.what,
            number(&h.theirs),
            number(&h.book),
            h.verdict(),
            unit = h.unit
        ));
    }
    for c in claims {
        lines.push(format!(
            "  claim: {}: here {}; book {}",
            c.text,
            c.on_their_gpu(),
            holds(&c.book)
        ));
    }
    lines
}

/// The lines `reproduce --compare` adds to [`console`]'s: one per skip the run recorded.
pub fn console_skipped(skipped: &[Recorded]) -> Vec<String> {
    skipped
        .iter()
        .map(|s| {
            format!("  skipped: {}: {} ({}): {}", s.chapter, s.section, s.at, s.why)
        })
        .collect()
}

/// What a reader should know before reading the page: a `--quick` run measures other sizes.
pub fn caveat(quick: bool) -> &'static str {
    if quick {
        "This was a `--quick` run: its sizes are not the book's, so most numbers cannot be \
         compared, and a claim that depends on size may not hold at its small sizes."
    } else {
        "Numbers are compared only where both runs measured the same size."
    }
}

/// Whether any record of the run in `dir` was made with `--quick`. Only what can be a record
/// is read ([`record::record_files`]): a FIFO or a device under `data/` is not opened.
pub fn was_quick(dir: &Path) -> bool {
    let records = record::record_files(dir).map(|f| f.records).unwrap_or_default();
    records.iter().any(|(_, path)| {
        record::read_csv(path)
            .is_ok_and(|r| r.meta.get("command").is_some_and(|c| c.contains("--quick")))
    })
}

/// The comparison page, in Markdown.
pub fn markdown(
    headlines: &[HeadlineRow],
    claims: &[ClaimRow],
    skipped: &[Recorded],
    theirs: &str,
    quick: bool,
) -> String {
    let mut md = format!(
        "# Your GPU beside the book's\n\nYour run: {} on {}. The book: {}. {}\n\n\
         ## Headline numbers\n\n\
         | chapter | what | unit | yours | the book's | yours vs the book's |\n\
         |---|---|---|---|---|---|\n",
        markdown_code(theirs),
        markdown_text(&devices(headlines, true)),
        markdown_text(&devices(headlines, false)),
        caveat(quick)
    );
    for h in headlines {
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            h.chapter,
            h.what,
            h.unit,
            markdown_text(&value(&h.theirs)),
            markdown_text(&value(&h.book)),
            h.verdict()
        ));
    }
    md.push_str(
        "\n## The book's claims\n\nEach claim is a ratio (or a value) and the bound it must \
         reach; the number in parentheses is what it came to.\n\n\
         | chapter | claim | on your GPU | in the book |\n|---|---|---|---|\n",
    );
    for c in claims {
        md.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            c.chapter,
            c.text,
            c.on_their_gpu(),
            holds(&c.book)
        ));
    }
    md.push_str(&format!("\n## {SKIPPED_HEADING}\n\n"));
    if skipped.is_empty() {
        md.push_str(&format!("{NOTHING_SKIPPED}\n"));
    } else {
        md.push_str("| chapter | section | where | why |\n|---|---|---|---|\n");
        for s in skipped {
            md.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                s.chapter,
                markdown_text(&s.section),
                markdown_text(&s.at),
                markdown_text(&s.why)
            ));
        }
    }
    md
}

/// The heading of the pages' list of what the reader's run skipped.
pub const SKIPPED_HEADING: &str = "What your GPU could not run";

/// What the pages say where the run skipped nothing.
pub const NOTHING_SKIPPED: &str =
    "Nothing was skipped: every chapter in this folder ran all of its sections.";

/// Text from a record or a path as HTML text or an attribute value.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The same page as a self-contained HTML file a reader can open.
pub fn html(
    headlines: &[HeadlineRow],
    claims: &[ClaimRow],
    skipped: &[Recorded],
    theirs: &str,
    quick: bool,
) -> String {
    let row = |cells: &[String]| {
        format!(
            "<tr>{}</tr>\n",
            cells.iter().map(|c| format!("<td>{}</td>", escape(c))).collect::<String>()
        )
    };
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Your GPU beside the book's</title><style>\
         body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}\
         table{border-collapse:collapse;width:100%}td,th{border:1px solid #bbb;\
         padding:4px 8px;text-align:left;font-size:15px}th{background:#eee}\
         </style></head><body>\n<h1>Your GPU beside the book's</h1>\n",
    );
    h.push_str(&format!(
        "<p>Your run: <code>{}</code> on {}. The book: {}. {}</p>\n<h2>Headline numbers</h2>\n\
         <table><tr><th>chapter</th><th>what</th><th>unit</th><th>yours</th>\
         <th>the book's</th><th>yours vs the book's</th></tr>\n",
        escape(theirs),
        escape(&devices(headlines, true)),
        escape(&devices(headlines, false)),
        escape(&caveat(quick).replace('`', ""))
    ));
    for r in headlines {
        h.push_str(&row(&[
            r.chapter.into(),
            r.what.into(),
            r.unit.into(),
            value(&r.theirs),
            value(&r.book),
            r.verdict(),
        ]));
    }
    h.push_str(
        "</table>\n<h2>The book's claims</h2>\n<table><tr><th>chapter</th><th>claim</th>\
         <th>on your GPU</th><th>in the book</th></tr>\n",
    );
    for c in claims {
        h.push_str(&row(&[
            c.chapter.into(),
            c.text.into(),
            c.on_their_gpu(),
            holds(&c.book),
        ]));
    }
    h.push_str(&format!("</table>\n<h2>{}</h2>\n", escape(SKIPPED_HEADING)));
    if skipped.is_empty() {
        h.push_str(&format!("<p>{}</p>\n", escape(NOTHING_SKIPPED)));
    } else {
        h.push_str(
            "<table><tr><th>chapter</th><th>section</th><th>where</th><th>why</th></tr>\n",
        );
        for s in skipped {
            h.push_str(&row(&[
                s.chapter.into(),
                s.section.clone(),
                s.at.clone(),
                s.why.clone(),
            ]));
        }
        h.push_str("</table>\n");
    }
    h.push_str("</body></html>\n");
    h
}

/// The book's own `figures/` folder, where a reader's checkout has it.
pub fn book_figures() -> Option<PathBuf> {
    [
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("figures"),
        PathBuf::from("figures"),
    ]
    .into_iter()
    .find(|d| d.join("data").is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_from_table_cells() {
        assert_eq!(leading_number("39.7x"), Some(39.7));
        assert_eq!(leading_number("1.94× (1.02 of copy bandwidth)"), Some(1.94));
        assert_eq!(leading_number("2,827"), Some(2827.0));
        assert_eq!(leading_number("-3.5"), Some(-3.5));
        assert_eq!(leading_number("1.2e5"), Some(1.2e5));
        assert_eq!(leading_number("–"), None);
        assert_eq!(leading_number("yes"), None);
        assert_eq!(leading_number(""), None);
    }

    #[test]
    fn only_the_same_measurement_is_compared() {
        let found = |value: f64, key: &str| {
            Some(Found { value, key: key.into(), device: "GPU".into() })
        };
        let mut row = HeadlineRow {
            chapter: "c",
            what: "w",
            unit: "GB/s",
            theirs: found(2000.0, "n 1024"),
            book: found(1000.0, "n 1024"),
            higher_is_better: true,
            chapter_skipped: false,
        };
        assert_eq!(row.ratio(), Some(2.0));
        assert_eq!(row.verdict(), "2.00× better");
        row.higher_is_better = false;
        assert_eq!(row.verdict(), "2.00× worse");
        row.theirs = found(2000.0, "n 128");
        assert_eq!(row.ratio(), None);
        assert!(row.verdict().starts_with("not comparable"));
        let lines = console(std::slice::from_ref(&row), &[]);
        assert!(
            lines[1].contains("(n 128)") && lines[1].contains("(n 1024)"),
            "{lines:?}"
        );
        row.theirs = None;
        assert_eq!(row.verdict(), "not measured in this run");
        row.chapter_skipped = true;
        assert_eq!(row.verdict(), NOT_MEASURED_HERE);
    }

    #[test]
    fn only_plausible_numbers_pass() {
        for ok in ["1234.5", "0", "–", "yes", "", "39.7x", "1.2e5"] {
            assert_eq!(implausible(ok, "GB/s"), None, "{ok}");
        }
        for (bad, why) in [
            ("NaN", "not a finite number"),
            ("-inf", "not a finite number"),
            ("1e309", "too large"),
            ("-3030", "negative"),
            ("1e300", "beyond any plausible GB/s"),
        ] {
            let got = implausible(bad, "GB/s").unwrap_or_default();
            assert!(got.contains(why) && got.contains(bad), "{bad}: {got}");
        }
        assert!(implausible("100", "%").is_none());
        assert!(implausible("100.5", "%").unwrap().contains("percentage"));
    }

    #[test]
    fn text_from_the_device_and_the_path_is_escaped_on_both_pages() {
        let found = |key: &str| {
            Some(Found {
                value: 1.0,
                key: key.into(),
                device: "<img src=x onerror=alert(1)>".into(),
            })
        };
        let row = HeadlineRow {
            chapter: "c",
            what: "w",
            unit: "GB/s",
            theirs: found("x | y"),
            book: found("x | y"),
            higher_is_better: true,
            chapter_skipped: false,
        };
        let path = "out`<img src=z onerror=alert(2)>`\"'&";
        let md = markdown(std::slice::from_ref(&row), &[], &[], path, false);
        // The path's `<img` sits inside a code span, where HTML is shown, not run.
        assert_eq!(md.matches("<img").count(), 1, "{md}");
        assert!(md.contains("on &lt;img src=x onerror=alert(1)>."), "{md}");
        assert!(md.contains("``out`<img src=z onerror=alert(2)>`\"'&``"), "{md}");
        assert!(md.contains("| 1.00 (x \\| y) |"), "{md}");
        let html = html(std::slice::from_ref(&row), &[], &[], path, false);
        assert!(!html.contains("<img") && !html.contains("`\"'"), "{html}");
        assert!(html.contains("&quot;&#39;&amp;"), "{html}");
    }

    /// A reader's run on an older GPU, written by hand: one chapter measured its plain
    /// section and skipped its tiled one, another skipped nothing. The pages list the skip,
    /// and the headline and claim the skipped section would have given say so instead of
    /// "not measured in this run"; the other chapter's missing number still says that.
    #[test]
    fn a_run_that_skipped_a_section_shows_it_and_its_headline_was_not_measured_here() {
        use crate::harness::record::{write_csv, Meta};
        use crate::harness::skipped::{Skipped, EVERYWHERE};

        #[derive(serde::Serialize)]
        struct Row {
            n: usize,
            ms: f64,
        }
        let (theirs, book) =
            (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let meta = Meta::for_cpu("cargo run --release --example tiled");
        let data =
            |dir: &Path, stem: &str| dir.join("data").join(format!("{stem}.csv"));
        for dir in [theirs.path(), book.path()] {
            write_csv(&data(dir, "tiled-plain"), &meta, &[Row { n: 64, ms: 2.0 }])
                .unwrap();
        }
        write_csv(&data(book.path(), "tiled-tiled"), &meta, &[Row { n: 64, ms: 1.0 }])
            .unwrap();
        let why = "needs compute capability 8.0 (cp.async copies into shared memory); \
                   this GPU is 7.5";
        let skip =
            Skipped { section: "tiled".into(), at: EVERYWHERE.into(), why: why.into() };
        write_csv(&data(theirs.path(), "tiled-skipped"), &meta, &[skip]).unwrap();

        const TILED_MS: Pick = crate::pick!("tiled-tiled", [], "ms", ["n"]);
        const PLAIN_MS: Pick = crate::pick!("tiled-plain", [], "ms", ["n"]);
        const TILED_HEADLINES: &[Headline] = &[
            Headline::lower("plain", PLAIN_MS, "ms"),
            Headline::lower("tiled", TILED_MS, "ms"),
        ];
        const TILED_CLAIMS: &[Claim] =
            &[Claim::ratio("tiling helps", PLAIN_MS, TILED_MS, 1.0)];
        const OTHER_HEADLINES: &[Headline] =
            &[Headline::lower("x", crate::pick!("other-x", [], "ms", ["n"]), "ms")];
        let base = crate::harness::skipped::tests::chapter("tiled", &[]);
        let chapters = [
            Chapter {
                example: "tiled",
                writes: &["tiled-plain", "tiled-tiled", "tiled-skipped"],
                headlines: TILED_HEADLINES,
                claims: TILED_CLAIMS,
                ..base
            },
            Chapter {
                example: "other",
                writes: &["other-x", "other-skipped"],
                headlines: OTHER_HEADLINES,
                claims: &[],
                ..base
            },
        ];
        let (headlines, claims) = compare(&chapters, theirs.path(), book.path());
        let verdicts: Vec<String> =
            headlines.iter().map(HeadlineRow::verdict).collect();
        assert_eq!(
            verdicts,
            ["the same (within 2%)", NOT_MEASURED_HERE, "not measured in this run"]
        );
        assert_eq!(claims[0].on_their_gpu(), NOT_MEASURED_HERE);
        assert_eq!(holds(&claims[0].book), "holds (2.000)");

        let recorded = crate::harness::skipped::read(theirs.path(), &chapters);
        let md = markdown(&headlines, &claims, &recorded, "old-gpu", false);
        assert!(md.contains(&format!("## {SKIPPED_HEADING}")), "{md}");
        assert!(
            md.contains(&format!("| tiled | tiled | {EVERYWHERE} | {why} |")),
            "{md}"
        );
        assert!(md.contains(&format!("| tiled | tiling helps | {NOT_MEASURED_HERE} |")));
        let html = html(&headlines, &claims, &recorded, "old-gpu", false);
        assert!(html.contains(&format!("<td>{}</td>", escape(why))), "{html}");
        assert_eq!(
            console_skipped(&recorded),
            [format!("  skipped: tiled: tiled ({EVERYWHERE}): {why}")]
        );

        // Nothing recorded: the pages say that nothing was skipped.
        let md = markdown(&headlines, &claims, &[], "new-gpu", false);
        assert!(md.ends_with(&format!("{NOTHING_SKIPPED}\n")), "{md}");
    }
}
