//! Every measured number a chapter quotes in its prose comes from the data.
//!
//! A "measured number" is a number followed by a unit of time, bandwidth or ratio (`ms`, `µs`,
//! `ns`, `GB/s`, `TB/s`, `G reads/s`, `×`, `%`, `times`). Each must equal, at the precision it is
//! written with, a number in one of the CSVs under `figures/data/` — a cell, a number inside a
//! text cell, that number in other units (×1000, ÷1000, ×100 for a fraction as a percentage), or
//! the ratio of two numbers of the same CSV (for speedups and percentage changes) — or a number
//! printed in the sources themselves, which the crate keeps in `src/cmm/paper.rs` and
//! `src/atax/` as constants. Code blocks and included files are not prose and are skipped.
//! A typed number that disagrees with its data fails here.

use crate::common::book_root;

/// Every number written in `text` (digits with an optional decimal part).
fn numbers_in(text: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit()
            || (c == '.' && !current.is_empty() && !current.contains('.'))
        {
            current.push(c);
        } else {
            if let Ok(v) = current.trim_end_matches('.').parse::<f64>() {
                out.push(v);
            }
            current.clear();
        }
    }
    out
}

/// The prose of a chapter: no fenced code, no include lines, no HTML comments.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || line.contains("{{#include") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

const UNITS: &[&str] =
    &["ms", "µs", "ns", "GB/s", "TB/s", "G reads/s", "×", "%", "times"];

/// `(text as written, value, decimals)` of every number followed by a measurement unit.
fn quoted_measurements(prose: &str) -> Vec<(String, f64, usize)> {
    let mut found = Vec::new();
    let chars: Vec<(usize, char)> = prose.char_indices().collect();
    let mut i = 0;
    while i < chars.len() {
        let (start, c) = chars[i];
        let preceded_by_word = i > 0
            && (chars[i - 1].1.is_alphanumeric()
                || chars[i - 1].1 == '_'
                || chars[i - 1].1 == '^');
        if c.is_ascii_digit() && !preceded_by_word {
            let mut j = i;
            while j < chars.len()
                && (chars[j].1.is_ascii_digit()
                    || (chars[j].1 == '.'
                        && j + 1 < chars.len()
                        && chars[j + 1].1.is_ascii_digit()))
            {
                j += 1;
            }
            let end = if j < chars.len() { chars[j].0 } else { prose.len() };
            let number = &prose[start..end];
            let rest = prose[end..].trim_start_matches(' ');
            if UNITS.iter().any(|u| {
                rest.starts_with(u)
                    && !rest[u.len()..].starts_with(|c: char| c.is_alphabetic())
            }) {
                let decimals = number.split('.').nth(1).map_or(0, str::len);
                found.push((
                    format!(
                        "{number} {}",
                        rest.chars().take(10).collect::<String>().trim_end()
                    ),
                    number.parse().unwrap(),
                    decimals,
                ));
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    found
}

/// What a quoted number may equal, per CSV: its numbers in the units prose uses, and ratios.
struct Sources {
    per_file: Vec<Vec<f64>>,
    constants: Vec<f64>,
}

impl Sources {
    fn load() -> Self {
        let mut per_file = Vec::new();
        for entry in std::fs::read_dir(book_root().join("figures/data")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "csv") {
                let text = std::fs::read_to_string(&path).unwrap();
                let body: String = text
                    .lines()
                    .filter(|l| !l.starts_with('#'))
                    .collect::<Vec<_>>()
                    .join("\n");
                let mut values = numbers_in(&body);
                values.retain(|v| *v != 0.0);
                values.sort_by(f64::total_cmp);
                values.dedup();
                per_file.push(values);
            }
        }
        let mut constants = Vec::new();
        for file in [
            "src/cmm/paper.rs",
            "src/atax/report/mod.rs",
            "src/atax/datasets.rs",
            "src/atax/mod.rs",
        ] {
            if let Ok(text) = std::fs::read_to_string(book_root().join(file)) {
                constants.extend(numbers_in(&text));
            }
        }
        Self { per_file, constants }
    }

    /// Whether a quoted `value` (written with `decimals` decimals) is in the data. A time or a
    /// bandwidth must be a recorded number (in ms, µs or ns); a ratio (`×`, `times`, `%`) may
    /// also be the ratio of two numbers of one CSV.
    fn explains(&self, value: f64, decimals: usize, is_ratio: bool) -> bool {
        let tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
        let near = |candidate: f64| (candidate - value).abs() <= tolerance;
        let scaled = |v: f64| {
            if is_ratio {
                vec![v, v * 100.0]
            } else {
                vec![v, v * 1e3, v / 1e3]
            }
        };
        if self.constants.iter().copied().any(near) {
            return true;
        }
        self.per_file.iter().any(|values| {
            values.iter().any(|&v| scaled(v).into_iter().any(near))
                || (is_ratio
                    && values.iter().any(|&a| {
                        values.iter().any(|&b| {
                            let r = a / b;
                            near(r)
                                || near(100.0 * (r - 1.0))
                                || near(100.0 * (1.0 - r))
                        })
                    }))
        })
    }
}

#[test]
fn every_quoted_measurement_is_in_the_data() {
    let sources = Sources::load();
    let mut checked = 0;
    let mut unexplained = Vec::new();
    for entry in std::fs::read_dir(book_root().join("src/book")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") || path.ends_with("SUMMARY.md") {
            continue;
        }
        let text = prose(&std::fs::read_to_string(&path).unwrap());
        for (quoted, value, decimals) in quoted_measurements(&text) {
            checked += 1;
            let is_ratio = ["×", "%", "times"].iter().any(|u| {
                quoted.split_whitespace().nth(1).is_some_and(|w| w.starts_with(u))
            });
            if !sources.explains(value, decimals, is_ratio) {
                unexplained.push(format!(
                    "{}: \"{quoted}\"",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    eprintln!("quoted numbers: {checked} checked against the CSVs");
    assert!(
        checked > 20,
        "only {checked} quoted measurements found: is the scanner broken?"
    );
    assert!(
        unexplained.is_empty(),
        "numbers in the text that no CSV (or source constant) explains:\n{}",
        unexplained.join("\n")
    );
}

#[test]
fn the_scanner_finds_what_a_reader_reads_as_a_measurement() {
    let found = quoted_measurements("It took 102.1 ms, or 3.96× less; 5 GB/s and 40 µs. Listing 4 and n = 1024 are not measurements.");
    let values: Vec<(f64, usize)> = found.iter().map(|(_, v, d)| (*v, *d)).collect();
    assert_eq!(values, [(102.1, 1), (3.96, 2), (5.0, 0), (40.0, 0)]);
    assert!(
        prose("a\n```rust\nlet x = 5 ms;\n```\nb 7 ms\n").contains("b 7 ms")
            && !prose("```\n5 ms\n```\n").contains('5')
    );
}

#[test]
fn a_typed_number_that_disagrees_with_the_data_is_caught() {
    let sources = Sources { per_file: vec![vec![102.1193, 4.569]], constants: vec![] };
    assert!(sources.explains(102.1, 1, false));
    assert!(sources.explains(102119.3, 1, false)); // the same time in µs
    assert!(sources.explains(22.35, 2, true)); // 102.1193 / 4.569, a speedup
    assert!(!sources.explains(22.35, 2, false)); // but not a time
    assert!(!sources.explains(103.5, 1, false));
    assert!(!sources.explains(7.77, 2, true));
}
