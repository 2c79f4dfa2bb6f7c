//! The Markdown table a chapter includes, drawn from its CSV alone.
//!
//! How a table is shown is part of its record, in metadata keys (never in its rows), so a
//! table is redrawn from its CSV exactly as a figure is. Every key is optional:
//!
//! - `headers`: `column = header | column = header …`, the plain-English header of each
//!   column, with its unit (`median_ms = median (ms)`).
//! - `columns`: `entry | entry …`, the columns shown and their order. An entry is a column's
//!   name, or a template followed by ` = header`, in which `{column}` stands for that column's
//!   cell (`{median_ms} ({min_ms}–{max_ms}) = ms, median (min–max)`). The columns left out stay
//!   in the CSV, and the line under the table names them.
//! - `code`: `column | column …`, columns whose cells are commands, flags or identifiers: they
//!   are shown as code, so they copy exactly as written.
//! - `fold`: `N` shows the first N rows and folds the others into a `<details>` element;
//!   `column = value | value …` shows the rows whose `column` holds one of the values and folds
//!   the others (a value that no row holds keeps nothing, so a reader's run at other sizes
//!   still renders). Whatever the key says, a page shows at most [`MAX_SHOWN_ROWS`] rows
//!   inline: a longer table reads as data, not as text, and the rest is folded.
//! - `computed`: what computed the table (`cmm::layout`), for a table that is not a
//!   measurement: the line under it says "Computed by", not "Measured on".
//! - `empty`: the sentence shown instead of the table when the record has no rows.
//!
//! A key that names a column the record does not have is an error, so a renamed column cannot
//! silently drop out of the book.

use std::collections::BTreeSet;

use anyhow::{bail, Context};

use super::record::{Meta, Record};

/// The most rows a table shows on the page; the others are folded under "Show the other …".
pub const MAX_SHOWN_ROWS: usize = 12;

/// A number as the CSV's writer meant it: a float sum that came out as
/// `56.169999999999995` is shown as `56.17` (twelve significant digits are more than any
/// measurement here carries); every other cell is shown as written.
fn without_float_noise(cell: &str) -> std::borrow::Cow<'_, str> {
    let decimals = cell.split_once('.').map_or(0, |(_, d)| d.len());
    match cell.parse::<f64>() {
        Ok(v) if decimals > 9 && v.is_finite() && !cell.contains(['e', 'E']) => {
            let rounded = format!("{:.*e}", 11, v);
            let short = rounded.parse::<f64>().map(|r| r.to_string());
            match short {
                Ok(s) if s.len() < cell.len() => std::borrow::Cow::Owned(s),
                _ => std::borrow::Cow::Borrowed(cell),
            }
        }
        _ => std::borrow::Cow::Borrowed(cell),
    }
}

/// Text from a record (a cell, a header, a device name) as Markdown text in a table cell or a
/// line: no raw HTML or autolink (mdBook passes HTML through), no entity, no link,
/// no `|` that splits a row, no line break that ends it. Only a `<` or `&` that could open a tag or an entity is
/// escaped (`p <= 64` stays as written): HTML needs a letter, `/`, `!` or `?` after `<`, an
/// entity a letter or `#` after `&`.
pub fn markdown_text(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    // The end of the code span the text is in (a backtick run closed by one of the same
    // length): inside one, brackets are shown as they are and make no link.
    let mut code_until = 0;
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        if c == '`' && i >= code_until && (i == 0 || chars[i - 1] != '`') {
            let run = chars[i..].iter().take_while(|&&c| c == '`').count();
            code_until = closing_run(&chars, i + run, run).unwrap_or(0);
        }
        match c {
            '<' if next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?') => {
                out.push_str("&lt;")
            }
            '&' if next.is_ascii_alphabetic() || next == '#' => out.push_str("&amp;"),
            '|' => out.push_str("\\|"),
            // A link, `[text](javascript:…)`, outside a code span.
            '[' | ']' if i >= code_until => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Where the run of exactly `run` backticks that closes a code span opened before `from` ends,
/// if there is one.
fn closing_run(chars: &[char], from: usize, run: usize) -> Option<usize> {
    let mut i = from;
    while i < chars.len() {
        if chars[i] == '`' {
            let len = chars[i..].iter().take_while(|&&c| c == '`').count();
            if len == run {
                return Some(i + len);
            }
            i += len;
        } else {
            i += 1;
        }
    }
    None
}

/// Text as a Markdown code span that no backtick in it can close early: fenced by one more
/// backtick than its longest run of them, padded with a space where it starts or ends with
/// one. Inside a code span HTML is shown, not run.
pub fn markdown_code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A link's destination with every byte outside the characters a path needs
/// percent-encoded, so that a file's name cannot end the link or open HTML.
fn link_target(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z'
            | b'A'..=b'Z'
            | b'0'..=b'9'
            | b'-'
            | b'_'
            | b'.'
            | b'~'
            | b'/' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Splits a `a | b | c` metadata value into its trimmed, non-empty parts.
fn parts(value: &str) -> impl Iterator<Item = &str> {
    value.split(" | ").map(str::trim).filter(|p| !p.is_empty())
}

/// One shown column: where its cells come from and its header.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    /// A column of the CSV, by index.
    Column(usize),
    /// Literal text and columns (`{name}`), in order.
    Template(Vec<Piece>),
}

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Column(usize),
}

#[derive(Debug, Clone, PartialEq)]
struct Shown {
    source: Source,
    header: String,
}

/// How the rows are split between the table and its folded part.
#[derive(Debug, Clone, PartialEq)]
enum Fold {
    None,
    After(usize),
    Keep { column: usize, values: Vec<String> },
}

/// A record's table as its metadata asks it to be shown.
#[derive(Debug, Clone, PartialEq)]
struct View {
    /// The header of every column of the CSV, plain English where `headers` gives one.
    headers: Vec<String>,
    shown: Vec<Shown>,
    hidden: Vec<String>,
    code: BTreeSet<usize>,
    fold: Fold,
}

fn column_of(record: &Record, name: &str, key: &str) -> anyhow::Result<usize> {
    record.column(name).with_context(|| format!("metadata key `{key}`"))
}

/// `name = value` split at its first ` = `.
fn assignment<'a>(entry: &'a str, key: &str) -> anyhow::Result<(&'a str, &'a str)> {
    entry
        .split_once(" = ")
        .map(|(a, b)| (a.trim(), b.trim()))
        .with_context(|| format!("`{entry}` in `{key}` is not `name = value`"))
}

fn template(record: &Record, text: &str) -> anyhow::Result<Vec<Piece>> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').with_context(|| {
            format!("unclosed `{{` in the column template `{text}`")
        })?;
        if open > 0 {
            pieces.push(Piece::Text(rest[..open].to_string()));
        }
        pieces.push(Piece::Column(column_of(
            record,
            &rest[open + 1..open + close],
            "columns",
        )?));
        rest = &rest[open + close + 1..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_string()));
    }
    Ok(pieces)
}

impl View {
    fn of(record: &Record) -> anyhow::Result<View> {
        let meta = &record.meta;
        let mut headers: Vec<String> = record.header.clone();
        if let Some(value) = meta.get("headers") {
            for entry in parts(value) {
                let (name, header) = assignment(entry, "headers")?;
                headers[column_of(record, name, "headers")?] = header.to_string();
            }
        }
        let shown: Vec<Shown> = match meta.get("columns") {
            None => (0..record.header.len())
                .map(|i| Shown {
                    source: Source::Column(i),
                    header: headers[i].clone(),
                })
                .collect(),
            Some(value) => parts(value)
                .map(|entry| {
                    if entry.contains('{') {
                        let (text, header) =
                            entry.rsplit_once(" = ").with_context(|| {
                                format!(
                                    "the column template `{entry}` has no ` = header`"
                                )
                            })?;
                        Ok(Shown {
                            source: Source::Template(template(record, text.trim())?),
                            header: header.trim().to_string(),
                        })
                    } else {
                        let i = column_of(record, entry, "columns")?;
                        Ok(Shown {
                            source: Source::Column(i),
                            header: headers[i].clone(),
                        })
                    }
                })
                .collect::<anyhow::Result<_>>()?,
        };
        let used: BTreeSet<usize> = shown
            .iter()
            .flat_map(|s| match &s.source {
                Source::Column(i) => vec![*i],
                Source::Template(pieces) => pieces
                    .iter()
                    .filter_map(|p| match p {
                        Piece::Column(i) => Some(*i),
                        Piece::Text(_) => None,
                    })
                    .collect(),
            })
            .collect();
        let hidden = (0..record.header.len())
            .filter(|i| !used.contains(i))
            .map(|i| headers[i].clone())
            .collect();
        let code = match meta.get("code") {
            None => BTreeSet::new(),
            Some(value) => parts(value)
                .map(|name| column_of(record, name, "code"))
                .collect::<anyhow::Result<_>>()?,
        };
        let fold = match meta.get("fold") {
            None => Fold::None,
            Some(value) => match value.trim().parse::<usize>() {
                Ok(n) => Fold::After(n),
                Err(_) => {
                    let (name, values) = assignment(value, "fold")?;
                    let column = column_of(record, name, "fold")?;
                    let values = parts(values).map(str::to_string).collect();
                    Fold::Keep { column, values }
                }
            },
        };
        Ok(View { headers, shown, hidden, code, fold })
    }

    fn cell(&self, row: &[String], column: usize) -> String {
        let text = &*without_float_noise(&row[column]);
        if self.code.contains(&column) && !text.is_empty() {
            // A GFM table splits its rows at `|` before it finds code spans.
            markdown_code(text).replace('|', "\\|")
        } else {
            markdown_text(text)
        }
    }

    fn line(&self, row: &[String]) -> String {
        let cells: Vec<String> = self
            .shown
            .iter()
            .map(|s| match &s.source {
                Source::Column(i) => self.cell(row, *i),
                Source::Template(pieces) => pieces
                    .iter()
                    .map(|p| match p {
                        Piece::Text(t) => markdown_text(t),
                        Piece::Column(i) => self.cell(row, *i),
                    })
                    .collect(),
            })
            .collect();
        format!("| {} |\n", cells.join(" | "))
    }

    fn table(&self, rows: &[&Vec<String>]) -> String {
        let headers: Vec<String> =
            self.shown.iter().map(|s| markdown_text(&s.header)).collect();
        let mut md =
            format!("| {} |\n|{}\n", headers.join(" | "), "---|".repeat(headers.len()));
        for row in rows {
            md.push_str(&self.line(row));
        }
        md
    }
}

/// Text for an HTML attribute's double-quoted value.
fn attribute_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace(['\n', '\r'], " ")
}

/// The line under every table: where its numbers come from, and its data file. What a
/// reader needs to read the table is shown (the GPU, or what computed it); the rest of the
/// provenance (driver, CUDA, cudarc, commit, date), which the CSV keeps in full, is the
/// line's tooltip, so that it does not stand between the table and the text.
fn source_line(meta: &Meta, data_link: &str, hidden: &[String]) -> String {
    let get = |k: &str| meta.get(k).unwrap_or("?").to_string();
    let (origin, detail) = if let Some(what) = meta.get("computed") {
        (
            format!("Computed by {} (not measured)", markdown_text(what)),
            format!("commit {}, {}", get("commit"), get("date_utc")),
        )
    } else if let Some(cpu) = meta.get("cpu") {
        (
            format!("Measured on {} (CPU only)", markdown_text(cpu)),
            format!("commit {}, {}", get("commit"), get("date_utc")),
        )
    } else {
        (
            format!("Measured on {}", markdown_text(&get("gpu"))),
            format!(
                "cc {}, driver {}, CUDA {}, cudarc {}, commit {}, {}",
                get("compute_capability"),
                get("driver"),
                get("cuda"),
                get("cudarc"),
                get("commit"),
                get("date_utc")
            ),
        )
    };
    let file = markdown_text(data_link.rsplit('/').next().unwrap_or(data_link));
    let more = match hidden.len() {
        0 => String::new(),
        1 => ", with one more column".to_string(),
        n => format!(", with {n} more columns"),
    };
    let detail = match hidden.len() {
        0 => detail,
        _ => format!("{detail}; also in the data: {}", hidden.join(", ")),
    };
    let target = link_target(data_link);
    format!(
        "<small title=\"{}\">{origin}. Data{more}: [{file}]({target})</small>\n",
        attribute_text(&detail)
    )
}

/// Renders a record as the Markdown a chapter includes: the table (its first rows, the others
/// folded where the record asks), then one line saying where its numbers come from. The
/// chapter's caption, above the include, is the table's only caption. `data_link` is how the
/// chapter links to the CSV.
pub fn markdown(record: &Record, data_link: &str) -> anyhow::Result<String> {
    let meta = &record.meta;
    if record.rows.is_empty() || record.header.is_empty() {
        let sentence =
            markdown_text(meta.get("empty").unwrap_or("This run recorded no rows."));
        return Ok(format!("{sentence}\n\n{}", source_line(meta, data_link, &[])));
    }
    if let Some(row) = record.rows.iter().find(|r| r.len() != record.header.len()) {
        bail!(
            "a row has {} cells for {} columns: {row:?}",
            row.len(),
            record.header.len()
        );
    }
    let view = View::of(record)?;
    let (mut kept, mut folded): (Vec<_>, Vec<_>) = match &view.fold {
        Fold::None => (record.rows.iter().collect(), Vec::new()),
        Fold::After(n) => {
            let n = (*n).min(record.rows.len());
            (record.rows[..n].iter().collect(), record.rows[n..].iter().collect())
        }
        Fold::Keep { column, values } => {
            record.rows.iter().partition(|r| values.contains(&r[*column]))
        }
    };
    if kept.len() > MAX_SHOWN_ROWS {
        // The rows past the cap go first in the fold, so the folded table keeps the order.
        let over = kept.split_off(MAX_SHOWN_ROWS);
        folded = over.into_iter().chain(folded).collect();
    }
    let mut md = String::new();
    if !kept.is_empty() {
        md.push_str(&view.table(&kept));
        md.push('\n');
    }
    if !folded.is_empty() {
        let what = match &view.fold {
            Fold::Keep { column, .. } => {
                let mut seen: Vec<&str> = Vec::new();
                for r in &folded {
                    if !seen.contains(&r[*column].as_str()) {
                        seen.push(&r[*column]);
                    }
                }
                let seen: Vec<String> = seen.iter().map(|v| markdown_text(v)).collect();
                format!(
                    " ({}: {})",
                    markdown_text(&view.headers[*column]),
                    seen.join(", ")
                )
            }
            _ => String::new(),
        };
        let rows = match (kept.is_empty(), folded.len()) {
            (true, n) => format!("all {n} rows"),
            (false, 1) => "the other row".to_string(),
            (false, n) => format!("the other {n} rows"),
        };
        md.push_str(&format!(
            "<details>\n<summary>Show {rows}{what}</summary>\n\n{}\n</details>\n\n",
            view.table(&folded)
        ));
    }
    md.push_str(&source_line(meta, data_link, &view.hidden));
    Ok(md)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_link_in_text_is_shown_not_followed_and_code_spans_keep_their_brackets() {
        assert_eq!(
            markdown_text("[z](javascript:alert(4))"),
            "\\[z\\](javascript:alert(4))"
        );
        assert_eq!(markdown_text("`t[N]` or [a](b)"), "`t[N]` or \\[a\\](b)");
        // A backtick that opens no code span (none closes it) protects nothing.
        assert_eq!(markdown_text("x ` [z](j)"), "x ` \\[z\\](j)");
        assert_eq!(markdown_text("``a`[b]``"), "``a`[b]``");
    }
    use super::*;
    use crate::harness::record::parse_csv;

    const PROVENANCE: &str =
        "# gpu: Test GPU\n# compute_capability: 9.0\n# driver: 1\n\
        # cuda: 13.0\n# cudarc: 0.19\n# commit: abc\n# date_utc: today\n# command: x\n";

    fn record(keys: &str, body: &str) -> Record {
        parse_csv(&format!("{PROVENANCE}{keys}{body}")).unwrap()
    }

    fn render(keys: &str, body: &str) -> String {
        markdown(&record(keys, body), "figures/data/t.csv").unwrap()
    }

    const BODY: &str = "dataset,median_ms,min_ms,max_ms,arguments\n\
        MINI,1.5,1.0,2.0,--quick --reps 2\nLARGE,3.5,3.0,4.0,--quick\nHUGE,9.0,8.0,10.0,\n";

    #[test]
    fn plain_headers_templates_and_code_cells() {
        let md = render(
            "# headers: dataset = dataset | median_ms = median (ms) | arguments = arguments\n\
             # columns: dataset | {median_ms} ({min_ms}–{max_ms}) = ms, median (min–max) | arguments\n\
             # code: arguments\n",
            BODY,
        );
        assert!(
            md.starts_with(
                "| dataset | ms, median (min–max) | arguments |\n|---|---|---|\n\
                 | MINI | 1.5 (1.0–2.0) | `--quick --reps 2` |\n"
            ),
            "{md}"
        );
        assert!(md.contains("| HUGE | 9.0 (8.0–10.0) |  |\n"), "{md}");
        assert!(!md.contains("<details>"));
        assert!(md.contains(">Measured on Test GPU. Data: "), "{md}");
        assert!(md.contains("<small title=\"cc 9.0, driver "), "{md}");
        assert!(md.ends_with("Data: [t.csv](figures/data/t.csv)</small>\n"), "{md}");
    }

    #[test]
    fn columns_left_out_are_named_under_the_table() {
        let md = render(
            "# headers: median_ms = median (ms) | arguments = command-line arguments\n\
             # columns: dataset | median_ms\n",
            BODY,
        );
        assert!(md.starts_with("| dataset | median (ms) |\n"), "{md}");
        assert!(
            md.contains("Data, with 3 more columns: [t.csv]")
                && md.contains(
                    "also in the data: min_ms, max_ms, command-line arguments\">"
                ),
            "{md}"
        );
    }

    #[test]
    fn rows_fold_by_count_or_by_value() {
        let md = render("# fold: 1\n", BODY);
        let (shown, folded) = md.split_once("<details>").unwrap();
        assert!(shown.contains("| MINI |") && !shown.contains("| LARGE |"), "{md}");
        assert!(folded
            .starts_with("\n<summary>Show the other 2 rows</summary>\n\n| dataset |"));
        assert!(folded.contains("| LARGE |") && folded.contains("</details>"), "{md}");

        let md =
            render("# headers: dataset = size\n# fold: dataset = LARGE | HUGE\n", BODY);
        let (shown, folded) = md.split_once("<details>").unwrap();
        assert!(shown.contains("| LARGE |") && shown.contains("| HUGE |"), "{md}");
        assert!(!shown.contains("| MINI |"), "{md}");
        assert!(folded.contains("<summary>Show the other row (size: MINI)</summary>"));

        // A value no row holds (a run at other sizes) keeps nothing in view.
        for keys in ["# fold: 0\n", "# fold: dataset = TINY\n"] {
            let md = render(keys, BODY);
            assert!(md.starts_with("<details>\n<summary>Show all 3 rows"), "{md}");
        }
    }

    #[test]
    fn no_page_shows_more_than_twelve_rows_whatever_the_fold() {
        let body: String = std::iter::once("n,v\n".to_string())
            .chain((0..30).map(|i| format!("{i},{}\n", i % 2)))
            .collect();
        for keys in ["", "# fold: 20\n", "# fold: v = 0 | 1\n"] {
            let md = render(keys, &body);
            let (shown, folded) = md.split_once("<details>").unwrap();
            let rows = |t: &str| t.lines().filter(|l| l.starts_with("| ")).count() - 1;
            assert_eq!(rows(shown), MAX_SHOWN_ROWS, "{keys}: {md}");
            assert_eq!(rows(folded), 30 - MAX_SHOWN_ROWS, "{keys}: {md}");
            // The fold keeps the rows' order.
            assert!(folded.contains("| 12 | 0 |\n| 13 | 1 |"), "{keys}: {md}");
        }
    }

    #[test]
    fn float_sums_are_shown_as_written_not_as_their_binary_noise() {
        assert_eq!(without_float_noise("56.169999999999995"), "56.17");
        assert_eq!(without_float_noise("1.5600000000000003"), "1.56");
        assert_eq!(without_float_noise("0.1234567891"), "0.1234567891");
        for kept in ["3039.5", "1e-12", "17580224", "n/a", "0.30000000000000004x"] {
            assert_eq!(without_float_noise(kept), kept);
        }
    }

    #[test]
    fn a_computed_table_says_so() {
        let md = render("# computed: `cmm::layout`\n", "a,b\n1,2\n");
        assert!(
            md.contains(">Computed by `cmm::layout` (not measured). Data: "),
            "{md}"
        );
        assert!(md.contains("<small title=\"commit abc"), "{md}");
        assert!(!md.contains("Measured on"), "{md}");
    }

    #[test]
    fn an_empty_record_is_a_sentence_not_a_broken_table() {
        let md = render("# empty: Nothing was skipped.\n", "");
        assert!(md.starts_with("Nothing was skipped.\n\n<small title="), "{md}");
        assert!(md.contains(">Measured on "), "{md}");
        assert!(!md.contains('|'), "{md}");
        let md = render("", "a,b\n");
        assert!(md.starts_with("This run recorded no rows."), "{md}");
    }

    #[test]
    fn keys_that_name_a_missing_column_are_errors() {
        for keys in [
            "# headers: nope = x\n",
            "# columns: dataset | nope\n",
            "# columns: {nope} = x\n",
            "# columns: {dataset}\n",
            "# code: nope\n",
            "# fold: nope = MINI\n",
            "# headers: dataset\n",
        ] {
            assert!(
                markdown(&record(keys, BODY), "t.csv").is_err(),
                "{keys} was accepted"
            );
        }
    }

    #[test]
    fn pipes_in_cells_do_not_split_them() {
        let md = render("# code: b\n", "a,b\nx|y,p|q\n");
        assert!(md.contains("| x\\|y | `p\\|q` |"), "{md}");
    }

    #[test]
    fn text_from_data_cannot_open_html_or_split_a_row() {
        let md = render(
            "# code: b\n",
            "a,b\n\"<img src=x onerror=alert(3)> &amp; p <= 64\",\"x ``|`` y\"\n",
        );
        assert!(
            md.contains("| &lt;img src=x onerror=alert(3)> &amp;amp; p <= 64 | ```x ``\\|`` y``` |"),
            "{md}"
        );
        let gpu = "Test GPU";
        let hostile =
            format!("{PROVENANCE}a\n1\n").replace(gpu, "<script>alert(1)</script>|x");
        let md =
            markdown(&parse_csv(&hostile).unwrap(), "figures/data/x<img src=y>.csv")
                .unwrap();
        assert!(!md.contains("<script") && !md.contains("<img"), "{md}");
        assert!(
            md.contains("Measured on &lt;script>alert(1)&lt;/script>\\|x")
                && md.contains(
                    "[x&lt;img src=y>.csv](figures/data/x%3Cimg%20src%3Dy%3E.csv)"
                ),
            "{md}"
        );
    }

    #[test]
    fn a_code_span_is_fenced_longer_than_any_backtick_run_in_it() {
        assert_eq!(markdown_code("ls"), "`ls`");
        assert_eq!(markdown_code("a`b"), "``a`b``");
        assert_eq!(markdown_code("`x``"), "``` `x`` ```");
        assert_eq!(markdown_code("a\nb"), "`a b`");
    }
}
