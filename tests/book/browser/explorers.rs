//! The explorers of chapter 3 (`src/book/explorers.js`) in a real browser, against the Rust
//! models they draw. A script injected into a copy of each explorer's page sets the
//! explorer's form controls, case after case, as a reader would (a value, then an `input`
//! event), and writes what the page then shows into the DOM: every number under the drawing
//! and, from the drawing itself, each lane's tooltip and what it is drawn in (sectors moved,
//! lines, the bank column a lane stands under). The test computes the same cases with
//! `coalescing::sectors` and `coalescing::banks` and names the inputs of every mismatch; an
//! input outside the model's (a negative stride, a column past the tile) must be refused with
//! a reason and no number. A screenshot of each explorer in the light and the navy theme is
//! saved beside the book's.

use std::collections::BTreeSet;

use super::{
    headless_each, report_counts, screenshot_job, session, unescape_html, Job, Session,
};
use crate::common::chapters;
use cmbook::coalescing::banks::{
    bank_of, column_read_words, conflict_degree, row_read_words,
};
use cmbook::coalescing::sectors::Access;

/// One set of inputs of the sectors explorer.
#[derive(Debug, Clone, Copy)]
struct SectorsCase {
    elem_bytes: u64,
    stride: u64,
    offset: u64,
}

/// One set of inputs of the banks explorer: lane `l` reads `tile[l][index]` (a column read)
/// or `tile[index][l]` (a row read) of a tile of `row_words` words per row.
#[derive(Debug, Clone, Copy)]
struct BanksCase {
    row_words: u64,
    column: bool,
    index: u64,
}

/// Every element size, with unit, power-of-two and odd strides (0: every lane on one
/// element; 1024: every lane on its own line), and offsets that start on a line, inside a
/// sector, and one sector and a bit past a line.
fn sectors_cases() -> Vec<SectorsCase> {
    let mut cases = Vec::new();
    for elem_bytes in [1, 2, 4, 8, 16] {
        for stride in [0, 1, 2, 3, 4, 5, 7, 8, 17, 32, 33, 1024] {
            for offset in [0, 1, 7, 9, 33, 4096] {
                cases.push(SectorsCase { elem_bytes, stride, offset });
            }
        }
    }
    cases
}

/// Every tile width from 1 to 64 words (31, 32 and 33 among them), each read down its first,
/// middle and last column and along two rows.
fn banks_cases() -> Vec<BanksCase> {
    let mut cases = Vec::new();
    for row_words in 1..=64 {
        for index in BTreeSet::from([0, row_words / 2, row_words - 1]) {
            cases.push(BanksCase { row_words, column: true, index });
        }
        for index in [0, 5] {
            cases.push(BanksCase { row_words, column: false, index });
        }
    }
    cases
}

/// Injected into the `<head>` of a copy of the explorer's page. After load (the explorers
/// are built by then), sets each case's controls in the order given, reads the numbers and
/// the drawing, and writes one line per case into `<pre id="cmbook-explorer">`: tab-separated
/// `key=value` fields, `lane=` once per lane. `EXPLORER`, `CASES` and `READ` are filled in.
const DRIVER: &str = r#"<script>
window.addEventListener('load', function () { setTimeout(function () {
  var out = [];
  try {
    var root = document.querySelector('.explorer[data-explorer="EXPLORER"]');
    var read = READ;
    CASES.forEach(function (c, i) {
      var fields = ['case=' + i];
      Object.keys(c).forEach(function (name) {
        var control = root.querySelector('[name="' + name + '"]');
        control.value = String(c[name]);
        if (control.value !== String(c[name])) fields.push('refused=' + name);
        control.dispatchEvent(new Event('input', { bubbles: true }));
      });
      fields.push('message=' + root.querySelector('.explorer-message').textContent);
      root.querySelectorAll('output[data-quantity]').forEach(function (o) {
        fields.push(o.dataset.quantity + '=' + o.textContent);
      });
      read(root, fields);
      out.push(fields.join('\t'));
    });
  } catch (e) { out.push('error=' + e); }
  var pre = document.createElement('pre');
  pre.id = 'cmbook-explorer';
  pre.textContent = out.join('\n');
  document.body.appendChild(pre);
}, 300); });
</script>"#;

/// The sectors explorer's drawing: the sectors drawn as moved, the line rows, and each
/// lane's tooltip.
const READ_SECTORS: &str = r#"function (root, fields) {
  fields.push('touched=' + root.querySelectorAll('.explorer-sector.explorer-touched').length);
  fields.push('rows=' + root.querySelectorAll('.explorer-line').length);
  root.querySelectorAll('rect.explorer-lane').forEach(function (r) {
    fields.push('lane=' + r.querySelector('title').textContent);
  });
}"#;

/// The banks explorer's drawing: each lane's tooltip, and the bank number printed over the
/// column the lane is drawn in.
const READ_BANKS: &str = r#"function (root, fields) {
  root.querySelectorAll('.explorer-cell').forEach(function (g) {
    var x = g.querySelector('text').getAttribute('x');
    var head = root.querySelector('[data-bank-column][x="' + x + '"]');
    fields.push('lane=' + g.querySelector('title').textContent + ' | under bank ' + (head ? head.textContent : 'none'));
  });
}"#;

/// What the page showed for one case: its fields in order.
type Shown = Vec<(String, String)>;

fn field<'a>(shown: &'a Shown, key: &str) -> Option<&'a str> {
    shown.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

fn lanes(shown: &Shown) -> Vec<&str> {
    shown.iter().filter(|(k, _)| k == "lane").map(|(_, v)| v.as_str()).collect()
}

/// The lines of `<pre id="cmbook-explorer">` in a dumped DOM, each split into its fields.
fn parse_shown(dom: &str) -> Result<Vec<Shown>, String> {
    let text = dom
        .split("<pre id=\"cmbook-explorer\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .map(unescape_html)
        .ok_or("the page did not report (no report in the DOM)")?;
    let cases: Vec<Shown> = text
        .lines()
        .map(|line| {
            line.split('\t')
                .map(|f| {
                    let (k, v) = f.split_once('=').unwrap_or((f, ""));
                    (k.to_string(), v.to_string())
                })
                .collect()
        })
        .collect();
    if let Some(error) = cases.iter().find_map(|c| field(c, "error")) {
        return Err(format!("the driver stopped: {error}"));
    }
    Ok(cases)
}

/// The explorer's controls as the driver sets them, in this order.
fn sectors_controls(c: &SectorsCase) -> String {
    format!(
        "{{\"elem_bytes\":{},\"stride\":{},\"offset\":{}}}",
        c.elem_bytes, c.stride, c.offset
    )
}

fn banks_controls(c: &BanksCase) -> String {
    let access = if c.column { "column" } else { "row" };
    format!(
        "{{\"row_words\":{},\"access\":\"{access}\",\"index\":{}}}",
        c.row_words, c.index
    )
}

/// One case the driver sets: its inputs as a mismatch names them, the explorer's controls
/// as a JSON object (set in its key order), and what the page must then show.
struct Case {
    inputs: String,
    controls: String,
    expected: Expected,
}

/// What the page must show for a case.
enum Expected {
    /// What `coalescing::sectors` computes for these inputs.
    Sectors(SectorsCase),
    /// What `coalescing::banks` computes for these inputs.
    Banks(BanksCase),
    /// A refusal: a message saying why, "–" for each of these quantities, and no lane drawn,
    /// where the page could otherwise show a number the model was never asked for.
    Refused(&'static [&'static str]),
}

impl Expected {
    fn mismatches(&self, shown: &Shown) -> Vec<String> {
        match self {
            Expected::Sectors(c) => sectors_mismatches(c, shown),
            Expected::Banks(c) => banks_mismatches(c, shown),
            Expected::Refused(quantities) => {
                let mut problems = Vec::new();
                if field(shown, "message").is_none_or(str::is_empty) {
                    problems
                        .push("the page gives no reason for refusing it".to_string());
                }
                for q in *quantities {
                    if field(shown, q) != Some("–") {
                        problems
                            .push(format!("{q}: the page shows {:?}", field(shown, q)));
                    }
                }
                if !lanes(shown).is_empty() {
                    problems.push(format!("{} lanes drawn", lanes(shown).len()));
                }
                problems
            }
        }
    }
}

/// Inputs an explorer must refuse, each as (what, controls).
fn refused_cases(
    inputs: &[(&str, &str)],
    quantities: &'static [&'static str],
) -> Vec<Case> {
    inputs
        .iter()
        .map(|&(what, controls)| Case {
            inputs: format!("refused input ({what})"),
            controls: controls.to_string(),
            expected: Expected::Refused(quantities),
        })
        .collect()
}

/// The sectors explorer's cases: every case of [`sectors_cases`], then inputs it refuses.
fn sectors_explorer_cases() -> Vec<Case> {
    let mut cases: Vec<Case> = sectors_cases()
        .into_iter()
        .map(|c| Case {
            inputs: format!("{c:?}"),
            controls: sectors_controls(&c),
            expected: Expected::Sectors(c),
        })
        .collect();
    cases.extend(refused_cases(
        &[
            ("a negative stride", r#"{"elem_bytes":4,"stride":"-1","offset":0}"#),
            ("a fractional stride", r#"{"elem_bytes":4,"stride":"2.5","offset":0}"#),
            ("an empty stride", r#"{"elem_bytes":8,"stride":"","offset":0}"#),
            (
                "a stride past the form's 1024",
                r#"{"elem_bytes":4,"stride":1025,"offset":0}"#,
            ),
            (
                "an offset past the form's 4096",
                r#"{"elem_bytes":2,"stride":1,"offset":4097}"#,
            ),
            (
                "an offset in exponent notation",
                r#"{"elem_bytes":4,"stride":1,"offset":"1e3"}"#,
            ),
        ],
        &["sectors", "lines", "requested", "moved", "efficiency"],
    ));
    cases
}

/// The banks explorer's cases: every case of [`banks_cases`], then inputs it refuses.
fn banks_explorer_cases() -> Vec<Case> {
    let mut cases: Vec<Case> = banks_cases()
        .into_iter()
        .map(|c| Case {
            inputs: format!("{c:?}"),
            controls: banks_controls(&c),
            expected: Expected::Banks(c),
        })
        .collect();
    cases.extend(refused_cases(
        &[
            ("a tile of no width", r#"{"row_words":0,"access":"column","index":0}"#),
            ("a tile wider than 64", r#"{"row_words":65,"access":"column","index":0}"#),
            ("a fractional width", r#"{"row_words":"31.5","access":"row","index":0}"#),
            (
                "a column past the tile",
                r#"{"row_words":31,"access":"column","index":31}"#,
            ),
            ("a column past 63", r#"{"row_words":64,"access":"column","index":64}"#),
            ("a negative row", r#"{"row_words":32,"access":"row","index":"-2"}"#),
        ],
        &["degree", "banks"],
    ));
    cases
}

/// Compares `shown` (a field of the page) with `expected`, adding a line naming `what`.
fn expect(problems: &mut Vec<String>, what: &str, shown: Option<&str>, expected: &str) {
    if shown != Some(expected) {
        problems
            .push(format!("{what}: the page shows {shown:?}, the model {expected:?}"));
    }
}

/// What the page showed for one sectors case against `coalescing::sectors`.
fn sectors_mismatches(c: &SectorsCase, shown: &Shown) -> Vec<String> {
    let access = Access::strided(c.elem_bytes, c.stride, c.offset);
    let model = access.warp_footprint(0);
    let mut problems = Vec::new();
    expect(&mut problems, "message", field(shown, "message"), "");
    expect(
        &mut problems,
        "sectors",
        field(shown, "sectors"),
        &model.sectors.to_string(),
    );
    expect(&mut problems, "lines", field(shown, "lines"), &model.lines.to_string());
    expect(
        &mut problems,
        "bytes asked",
        field(shown, "requested"),
        &model.requested_bytes.to_string(),
    );
    expect(
        &mut problems,
        "bytes moved",
        field(shown, "moved"),
        &model.moved_bytes().to_string(),
    );
    // The page shows the efficiency as a percentage with one decimal: it agrees when it is
    // the model's fraction rounded to that decimal, either way at an exact half.
    let percent = 100.0 * model.efficiency();
    let shown_percent = field(shown, "efficiency")
        .and_then(|e| e.strip_suffix('%'))
        .filter(|e| e.split_once('.').is_some_and(|(_, d)| d.len() == 1))
        .and_then(|e| e.parse::<f64>().ok());
    if !shown_percent.is_some_and(|p| (p - percent).abs() <= 0.05 + 1e-9) {
        problems.push(format!(
            "efficiency: the page shows {:?}, the model {percent}% (shown to one decimal)",
            field(shown, "efficiency")
        ));
    }
    expect(
        &mut problems,
        "sectors drawn as moved",
        field(shown, "touched"),
        &model.sectors.to_string(),
    );
    expect(
        &mut problems,
        "lines drawn",
        field(shown, "rows"),
        &model.lines.to_string(),
    );
    let expected_lanes: Vec<String> = access
        .warp_addresses(0)
        .iter()
        .enumerate()
        .map(|(lane, a)| format!("lane {lane}: bytes {a}–{}", a + c.elem_bytes - 1))
        .collect();
    if lanes(shown) != expected_lanes {
        problems.push(format!(
            "lanes drawn: the page shows {:?}, the model {expected_lanes:?}",
            lanes(shown)
        ));
    }
    problems
}

/// What the page showed for one banks case against `coalescing::banks`.
fn banks_mismatches(c: &BanksCase, shown: &Shown) -> Vec<String> {
    let words = if c.column {
        column_read_words(c.row_words, c.index)
    } else {
        row_read_words(c.row_words, c.index)
    };
    let banks: BTreeSet<u64> = words.iter().map(|&w| bank_of(w)).collect();
    let mut problems = Vec::new();
    expect(&mut problems, "message", field(shown, "message"), "");
    expect(
        &mut problems,
        "conflict degree",
        field(shown, "degree"),
        &conflict_degree(&words).to_string(),
    );
    expect(
        &mut problems,
        "banks used",
        field(shown, "banks"),
        &banks.len().to_string(),
    );
    let expected_lanes: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(lane, &w)| {
            let bank = bank_of(w);
            format!("lane {lane}: word {w}, bank {bank} | under bank {bank}")
        })
        .collect();
    if lanes(shown) != expected_lanes {
        problems.push(format!(
            "lanes drawn: the page shows {:?}, the model {expected_lanes:?}",
            lanes(shown)
        ));
    }
    problems
}

/// The page (a file name of the built book) that holds the explorer `name`: exactly one
/// chapter page does.
fn page_with(book: &std::path::Path, name: &str) -> String {
    let placed = format!("data-explorer=\"{name}\"");
    let pages: Vec<String> = chapters()
        .iter()
        .map(|c| c.replace(".md", ".html"))
        .filter(|p| std::fs::read_to_string(book.join(p)).unwrap().contains(&placed))
        .collect();
    assert_eq!(
        pages.len(),
        1,
        "the {name} explorer should be on one chapter page: {pages:?}"
    );
    pages.into_iter().next().unwrap()
}

/// A copy of `page` with `head` inserted at the top of its `<head>`, as a `file://` URL.
fn copy_with(book: &std::path::Path, page: &str, file: &str, head: &str) -> String {
    let html = std::fs::read_to_string(book.join(page)).unwrap();
    std::fs::write(
        book.join(file),
        html.replacen("<head>", &format!("<head>{head}"), 1),
    )
    .unwrap();
    format!("file://{}", book.join(file).display())
}

#[test]
#[cfg_attr(
    cmbook_no_browser,
    ignore = "needs Chromium on PATH (apt-get install chromium, or CHROMIUM=path); found none at build time"
)]
fn the_explorers_show_what_the_rust_models_compute() {
    let Session { browser, book, profile, shots } = session();
    let sectors = sectors_explorer_cases();
    let banks = banks_explorer_cases();
    assert!(sectors.len() >= 50 && banks.len() >= 50);

    let sectors_page = page_with(book.path(), "sectors");
    let banks_page = page_with(book.path(), "banks");
    let driver = |name: &str, cases: &[Case], read: &str| {
        let controls: Vec<&str> = cases.iter().map(|c| c.controls.as_str()).collect();
        DRIVER
            .replace("EXPLORER", name)
            .replace("CASES", &format!("[{}]", controls.join(",")))
            .replace("READ", read)
    };
    let dump = |url: String| Job {
        url,
        extra: vec!["--window-size=1280,2000".to_string(), "--dump-dom".to_string()],
    };
    let mut jobs = vec![
        dump(copy_with(
            book.path(),
            &sectors_page,
            "cmbook-explorer-sectors.html",
            &driver("sectors", &sectors, READ_SECTORS),
        )),
        dump(copy_with(
            book.path(),
            &banks_page,
            "cmbook-explorer-banks.html",
            &driver("banks", &banks, READ_BANKS),
        )),
    ];

    // Each explorer at the top of its page (the text before it hidden: headless screenshots
    // do not scroll), in the reader's stored theme.
    let mut pngs = Vec::new();
    for (name, page) in [("sectors", &sectors_page), ("banks", &banks_page)] {
        for (theme, mdbook_theme) in [("light", "light"), ("dark", "navy")] {
            let head = format!(
                "<script>try {{ localStorage.setItem('mdbook-theme', '{mdbook_theme}'); }} catch (e) {{}}\
                 document.addEventListener('DOMContentLoaded', function () {{\
                 var b = document.querySelector('.explorer[data-explorer=\"{name}\"]'); if (!b) return;\
                 while (b.parentElement && b.parentElement.tagName !== 'MAIN') b = b.parentElement;\
                 for (var e = b.previousElementSibling; e; e = e.previousElementSibling) e.style.display = 'none';\
                 }});</script>"
            );
            let file = format!("cmbook-explorer-{name}-{theme}.html");
            let png = shots.join(format!("explorer-{name}-{theme}.png"));
            jobs.push(screenshot_job(
                copy_with(book.path(), page, &file, &head),
                &png,
                1000,
            ));
            pngs.push(png);
        }
    }

    let outputs = headless_each(&browser, profile.path(), &jobs);
    let mut failures = Vec::new();
    // Cases the page showed exactly as the model computes them, per explorer.
    let mut agreed = [0, 0];
    for (i, (name, cases)) in
        [("sectors", &sectors), ("banks", &banks)].into_iter().enumerate()
    {
        let shown = match parse_shown(&outputs[i]) {
            Ok(shown) => shown,
            Err(e) => {
                failures.push(format!("{name} explorer: {e}"));
                continue;
            }
        };
        if shown.len() != cases.len() {
            failures.push(format!(
                "{name} explorer: {} cases reported of {}",
                shown.len(),
                cases.len()
            ));
        }
        for page in &shown {
            let index: usize =
                field(page, "case").and_then(|n| n.parse().ok()).unwrap();
            let case = &cases[index];
            let mut problems = case.expected.mismatches(page);
            if let Some(refused) = field(page, "refused") {
                problems.push(format!("the control {refused} refused its value"));
            }
            if problems.is_empty() {
                agreed[i] += 1;
            }
            failures.extend(
                problems
                    .iter()
                    .map(|p| format!("{name} explorer, {}: {p}", case.inputs)),
            );
        }
    }
    for png in &pngs {
        assert!(png.exists(), "no screenshot was written: {}", png.display());
    }
    report_counts(&format!(
        "browser: the explorers against the Rust models (refused inputs included): sectors right in {} of {} cases, banks in {} of {}; {} screenshots in {}",
        agreed[0],
        sectors.len(),
        agreed[1],
        banks.len(),
        pngs.len(),
        shots.display()
    ));
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
