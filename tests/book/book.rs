//! The book builds with mdBook 0.5 (its own library, in-process), with no error or warning in
//! its log; every internal link, image and include in the rendered HTML resolves; the rendered
//! book carries no Rust source; every include names an anchor that exists and every anchor in
//! the sources is included somewhere; the appendix's table is the chapter registry's.

use std::path::Path;

use crate::common::{book_root, build_book, chapters, html_files};
use cmbook::harness::includes;

/// Every `href="…"` and `src="…"` value in an HTML text.
fn references(html: &str) -> Vec<String> {
    let mut refs = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            if let Some(end) = rest.find('"') {
                refs.push(rest[..end].to_string());
            }
        }
    }
    refs
}

#[test]
fn the_book_builds_cleanly_and_every_internal_link_resolves() {
    let out = tempfile::tempdir().unwrap();
    let log = build_book(out.path());
    assert!(log.is_empty(), "mdbook logged errors or warnings:\n{}", log.join("\n"));

    let mut pages = Vec::new();
    html_files(out.path(), &mut pages);
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let html = std::fs::read_to_string(page).unwrap();
        if html.contains("{{#include") {
            broken.push(format!("{}: an unexpanded {{{{#include}}}}", page.display()));
        }
        for r in references(&html) {
            if r.is_empty()
                || r.starts_with('#')
                || r.contains("://")
                || r.starts_with("mailto:")
                || r.starts_with("javascript:")
                || r.starts_with("data:")
            {
                continue;
            }
            let path = r.split(['#', '?']).next().unwrap();
            if path.is_empty() {
                continue;
            }
            checked += 1;
            let target = page.parent().unwrap().join(path);
            if !target.exists() {
                broken.push(format!(
                    "{}: {r}",
                    page.strip_prefix(out.path()).unwrap().display()
                ));
            }
        }
    }
    // Offline: nothing the pages load (scripts, styles, images, fonts) may come from a network.
    let mut remote = Vec::new();
    for page in &pages {
        let html = std::fs::read_to_string(page).unwrap();
        for (i, _) in html
            .match_indices("src=\"http")
            .chain(html.match_indices("@import url(http"))
        {
            remote.push(format!(
                "{}: {}",
                page.display(),
                &html[i..(i + 80).min(html.len())]
            ));
        }
        for (i, _) in html.match_indices("<link ") {
            let tag = &html[i..html[i..].find('>').map_or(html.len(), |e| i + e)];
            if tag.contains("href=\"http") || tag.contains("href=\"//") {
                remote.push(format!("{}: {tag}", page.display()));
            }
        }
    }
    assert!(
        remote.is_empty(),
        "the book loads something from the network:\n{}",
        remote.join("\n")
    );
    let mut files = Vec::new();
    all_files(out.path(), &mut files);
    let sources: Vec<_> =
        files.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")).collect();
    assert!(sources.is_empty(), "the rendered book carries Rust sources: {sources:?}");
    eprintln!("book: {} pages, {checked} internal links and images checked, 0 remote resources", pages.len());
    assert!(checked > 0);
    assert!(broken.is_empty(), "broken internal references:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_in_summary_exists_and_every_chapter_is_listed() {
    let src = book_root().join("src/book");
    let listed = chapters();
    assert!(listed.len() >= 3, "{listed:?}");
    for file in &listed {
        assert!(
            src.join(file).exists(),
            "SUMMARY.md lists {file}, which does not exist"
        );
    }
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "SUMMARY.md" {
            assert!(listed.contains(&name), "{name} is not listed in SUMMARY.md");
        }
    }
}

fn all_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every source file that may hold `ANCHOR:` regions for the book.
fn anchored_sources() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for dir in ["src", "kernels", "examples"] {
        all_files(&book_root().join(dir), &mut files);
    }
    files.push(book_root().join("build.rs"));
    files.retain(|f| {
        f.extension().is_some_and(|e| e == "rs" || e == "cu" || e == "cuh")
    });
    files
}

#[test]
fn every_include_resolves_and_every_anchor_is_included() {
    let book = book_root().join("src/book");
    let mut included = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    let mut pages = Vec::new();
    all_files(&book, &mut pages);
    for page in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(page).unwrap();
        let (_, errors) = includes::expand(&text, page.parent().unwrap(), &mut |_| {});
        for e in errors {
            problems.push(format!("{}: {} ({})", page.display(), e.directive, e.why));
        }
        for inc in includes::includes_in(&text) {
            if let Some(anchor) = inc.anchor() {
                let file = page.parent().unwrap().join(&inc.path);
                if let Ok(file) = file.canonicalize() {
                    included.insert((file, anchor.to_string()));
                }
            }
        }
    }
    for file in anchored_sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        for anchor in includes::anchors_in(&text) {
            if !included.contains(&(file.canonicalize().unwrap(), anchor.clone())) {
                problems.push(format!(
                    "{}: ANCHOR `{anchor}` is included by no chapter",
                    file.strip_prefix(book_root()).unwrap().display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(included.len() > 50, "only {} anchors are included", included.len());
}

#[test]
fn the_appendix_table_is_the_chapter_registry() {
    let path = book_root().join("src/book/generated/chapters.md");
    let committed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        committed,
        cmbook::chapters::appendix_table(),
        "{} is stale: `cargo run --example reproduce -- --appendix-table > {}`",
        path.display(),
        path.display()
    );
    let appendix =
        std::fs::read_to_string(book_root().join("src/book/reproducing.md")).unwrap();
    assert!(appendix.contains("{{#include generated/chapters.md}}"));
    for c in cmbook::chapters::ALL {
        assert!(
            chapters().contains(&c.page.to_string()),
            "the registry's page {} is not in SUMMARY.md",
            c.page
        );
    }
}

/// The width of the book's code column, in characters: what rustfmt keeps the Rust sources
/// to (`rustfmt.toml`), and what a listing shows without scrolling sideways.
const CODE_COLUMN: usize = 88;

/// Every line a chapter includes from a source file (Rust or CUDA) fits the code column: a
/// longer one scrolls sideways on the page and cuts its comment mid-sentence.
#[test]
fn every_included_source_line_fits_the_code_column() {
    let book = book_root().join("src/book");
    let (mut long, mut seen) = (Vec::new(), 0);
    for chapter in chapters() {
        let text = std::fs::read_to_string(book.join(&chapter)).unwrap();
        for inc in includes::includes_in(&text) {
            if ![".rs", ".cu", ".cuh"].iter().any(|ext| inc.path.ends_with(ext)) {
                continue;
            }
            let body = std::fs::read_to_string(book.join(&inc.path)).unwrap();
            let selected = includes::select(&body, inc.selector.as_deref()).unwrap();
            for line in selected.lines() {
                seen += 1;
                let width = line.chars().count();
                if width > CODE_COLUMN {
                    long.push(format!("{chapter}: {} ({width}): {line}", inc.path));
                }
            }
        }
    }
    assert!(seen > 1000, "only {seen} included lines");
    assert!(
        long.is_empty(),
        "{} included lines are wider than {CODE_COLUMN} characters:\n{}",
        long.len(),
        long.join("\n")
    );
}

/// The pages of a built book a reader opens (every chapter and the print view), as
/// (file name, the text of its `<main>` element).
fn rendered_pages(out: &Path) -> Vec<(String, String)> {
    let log = build_book(out);
    assert!(log.is_empty(), "mdbook logged errors or warnings:\n{}", log.join("\n"));
    let mut pages = Vec::new();
    html_files(out, &mut pages);
    let mut mains: Vec<(String, String)> = pages
        .iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .filter(|(name, _)| name != "toc.html" && name != "404.html")
        .map(|(name, p)| {
            let html = std::fs::read_to_string(p).unwrap();
            let main = html
                .split_once("<main>")
                .and_then(|(_, rest)| rest.split_once("</main>"))
                .map(|(main, _)| main.to_string())
                .unwrap_or_else(|| panic!("{name} has no <main>"));
            (name, main)
        })
        .collect();
    mains.sort();
    mains
}

/// The contents of every `<tag …>…</tag>` element in `html` (not nested in itself), with
/// the opening tag.
fn elements<'a>(html: &'a str, tag: &str) -> Vec<(&'a str, &'a str)> {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut found = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        if !after.starts_with(['>', ' ']) {
            rest = after;
            continue;
        }
        let Some(gt) = after.find('>') else { break };
        let Some(end) = after.find(&close) else { break };
        found.push((&after[..gt], &after[gt + 1..end]));
        rest = &after[end + close.len()..];
    }
    found
}

/// `html` with every `<tag …>…</tag>` element removed.
fn without(html: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut kept = String::new();
    let mut rest = html;
    while let Some(start) = rest.find(&open) {
        kept.push_str(&rest[..start]);
        let after = &rest[start..];
        match after.find(&close) {
            Some(end) => rest = &after[end + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    kept.push_str(rest);
    kept
}

/// `html` without its tags, with the entities mdBook writes decoded.
fn text_of(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Typographic characters that smart punctuation makes of `--`, `---`, `'` and `"`: never
/// right inside code, where they stop a command or a flag from copying as typed.
const SMART: [char; 6] = ['–', '—', '‘', '’', '“', '”'];

/// What a rendered page shows wrongly: a table that rendered empty or as literal pipes, a
/// command or flag that smart punctuation rewrote, a console line that would copy its
/// prompt. `main` is the page's `<main>` element.
fn rendering_problems(page: &str, main: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (_, table) in elements(main, "table") {
        let headed =
            elements(table, "th").iter().any(|(_, th)| !text_of(th).trim().is_empty());
        let rows =
            elements(table, "tbody").iter().any(|(_, body)| body.contains("<tr"));
        if !headed || !rows {
            let start: String = text_of(table).chars().take(60).collect();
            problems
                .push(format!("{page}: a table without a header or rows: {start:?}"));
        }
    }
    for (_, p) in elements(main, "p") {
        let text = text_of(p);
        if text.lines().any(|l| l.trim_start().starts_with('|')) || text.contains("| |")
        {
            problems.push(format!("{page}: a Markdown table shown as text: {text:?}"));
        }
    }
    for (attrs, code) in elements(main, "code") {
        let text = text_of(code);
        if let Some(c) = text.chars().find(|c| SMART.contains(c)) {
            let line = text.lines().find(|l| l.contains(c)).unwrap_or_default();
            problems.push(format!("{page}: `{c}` inside code: {line:?}"));
        }
        if attrs.contains("language-console") {
            for line in text.lines().filter(|l| l.starts_with("$ ")) {
                problems
                    .push(format!("{page}: a console line with a prompt: {line:?}"));
            }
        }
    }
    // Outside code, a dash glued to a word after a space is a flag that smart punctuation
    // turned from `--quick` into `–quick`.
    let text = text_of(&without(main, "code"));
    let chars: Vec<char> = text.chars().collect();
    for (i, w) in chars.windows(3).enumerate() {
        let glued =
            (w[0].is_whitespace() || w[0] == '(') && (w[1] == '–' || w[1] == '—');
        if glued && w[2].is_ascii_alphabetic() {
            let around: String =
                chars[i.saturating_sub(30)..(i + 30).min(chars.len())].iter().collect();
            problems.push(format!("{page}: a flag outside code: {around:?}"));
        }
    }
    problems
}

/// Every page of the built book shows its tables whole (a header and rows, never literal
/// pipes or an empty header), its commands and flags as code that copies as typed (no en or
/// em dash, no curly quote inside code, no flag outside it) and its console blocks without
/// prompts.
#[test]
fn every_page_shows_its_tables_whole_and_its_commands_as_typed() {
    let out = tempfile::tempdir().unwrap();
    let pages = rendered_pages(out.path());
    let (mut problems, mut tables, mut codes) = (Vec::new(), 0, 0);
    for (page, main) in &pages {
        tables += elements(main, "table").len();
        codes += elements(main, "code").len();
        problems.extend(rendering_problems(page, main));
    }
    assert!(
        pages.len() >= 10 && tables > 30 && codes > 300,
        "{tables} tables, {codes} codes"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_rendering_checks_see_what_they_look_for() {
    let broken = "<p>| | |\n|</p>\
        <table><thead><tr><th></th></tr></thead><tbody></tbody></table>\
        <pre><code class=\"language-console\">$ cargo run -- –quick</code></pre>\
        <p>run it with –reps 2, from 1016–1024 — fine</p>";
    let problems = rendering_problems("t.html", broken);
    for what in
        ["shown as text", "without a header", "inside code", "prompt", "flag outside"]
    {
        assert!(problems.iter().any(|p| p.contains(what)), "{what}: {problems:?}");
    }
    assert_eq!(problems.len(), 5, "{problems:?}");
    let fine =
        "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody>\
        </table><p>1016–1024, min–max — and <code>--quick</code></p>";
    assert!(rendering_problems("t.html", fine).is_empty());
}

/// Each page of SUMMARY.md with the number its figures, tables and listings carry: the
/// introduction 0, the numbered chapters 1, 2, … in order (a page listed under a chapter
/// carries its chapter's number), the appendices A, B, … (the glossary, between them,
/// carries none).
fn chapter_numbers() -> Vec<(String, String)> {
    let summary =
        std::fs::read_to_string(book_root().join("src/book/SUMMARY.md")).unwrap();
    let (mut numbered, mut suffix, mut seen_list) = (0, 0u8, false);
    let mut out: Vec<(String, String)> = Vec::new();
    for line in summary.lines() {
        let Some((_, rest)) = line.split_once("](") else { continue };
        let page = rest.split(')').next().unwrap().to_string();
        let number = if line.starts_with("- ") {
            seen_list = true;
            numbered += 1;
            numbered.to_string()
        } else if line.trim_start().starts_with("- ") {
            out.last().expect("a nested page comes under a chapter").1.clone()
        } else if seen_list && line.contains("Appendix") {
            suffix += 1;
            char::from(b'A' + suffix - 1).to_string()
        } else if seen_list {
            // The glossary: no figures, tables or listings, and no letter of an appendix.
            "-".to_string()
        } else {
            "0".to_string()
        };
        out.push((page, number));
    }
    out
}

/// A chapter's prose: no fenced code, no include lines.
fn prose_lines(markdown: &str) -> Vec<&str> {
    let mut in_code = false;
    markdown
        .lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                in_code = !in_code;
                return false;
            }
            !in_code && !l.contains("{{#include")
        })
        .collect()
}

const KINDS: [&str; 3] = ["Figure", "Table", "Listing"];

/// The caption a line opens, if it opens one: `*Table 7.2: …`, `*Figure 5.1 (the paper's
/// Figure 5): …`, `Listing 1.3: …`, as (kind, number).
fn caption(line: &str) -> Option<(&'static str, String)> {
    let rest = line.strip_prefix('*').unwrap_or(line);
    let kind = KINDS.iter().find(|k| rest.starts_with(&format!("{k} ")))?;
    let after = &rest[kind.len() + 1..];
    let number: String =
        after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '.').collect();
    let tail = &after[number.len()..];
    let opens = tail.starts_with(':')
        || (tail.starts_with(" (") && tail.split_once("):").is_some());
    (opens && !number.is_empty()).then_some((*kind, number))
}

/// Every reference to a figure, table or listing in a chapter's prose: (kind, number as
/// written, the words before it).
fn references_in(line: &str) -> Vec<(&'static str, String, String)> {
    let mut found = Vec::new();
    for kind in KINDS {
        for (i, _) in line.match_indices(kind) {
            let mut rest = &line[i + kind.len()..];
            rest = rest.strip_prefix('s').unwrap_or(rest);
            let Some(mut rest) = rest.strip_prefix(' ') else { continue };
            let before = line[..i].to_string();
            // One number, or a list of them: `7.2 and 7.3`, `5.5 to 5.7`, `2.1, 2.2`.
            loop {
                let number: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '.')
                    .collect();
                let number = number.trim_end_matches('.').to_string();
                if number.is_empty()
                    || !number.chars().next().unwrap().is_ascii_alphanumeric()
                {
                    break;
                }
                if !number.chars().any(|c| c.is_ascii_digit()) {
                    break;
                }
                rest = &rest[number.len()..];
                found.push((kind, number, before.clone()));
                match [", ", " and ", " to ", "–"]
                    .iter()
                    .find(|s| rest.starts_with(**s))
                {
                    Some(sep)
                        if rest[sep.len()..]
                            .starts_with(|c: char| c.is_ascii_digit()) =>
                    {
                        rest = &rest[sep.len()..];
                    }
                    _ => break,
                }
            }
        }
    }
    found
}

/// Figures, tables and listings are numbered per chapter (Figure 5.3 is the third figure of
/// chapter 5), in order, and every reference names a caption that exists; an undotted
/// number is the paper's or the slides' own (`the paper's Table 1`, `its Figures 2 to 4`).
#[test]
fn captions_are_numbered_per_chapter_and_every_reference_resolves() {
    let book = book_root().join("src/book");
    let mut captions = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    let mut texts = Vec::new();
    // Counted per chapter, across its pages in reading order.
    let mut counts = std::collections::BTreeMap::new();
    for (page, chapter) in chapter_numbers() {
        let text = std::fs::read_to_string(book.join(&page)).unwrap();
        let mut previous = "";
        for line in prose_lines(&text) {
            if previous.trim().is_empty() {
                if let Some((kind, number)) = caption(line) {
                    let n = counts.entry((chapter.clone(), kind)).or_insert(0);
                    *n += 1;
                    let want = format!("{chapter}.{n}");
                    if number != want {
                        problems
                            .push(format!("{page}: {kind} {number} should be {want}"));
                    }
                    captions.insert((kind, number));
                }
            }
            previous = line;
        }
        texts.push((page, text));
    }
    let mut checked = 0;
    for (page, text) in &texts {
        // One line of prose per chapter, so that `the paper's` before a line break still
        // qualifies the number after it.
        let prose = prose_lines(text).join(" ");
        {
            for (kind, number, before) in references_in(&prose) {
                checked += 1;
                if !number.contains('.') {
                    let words: Vec<&str> = before.split_whitespace().collect();
                    let source = words.last().is_some_and(|w| {
                        let w = w.trim_start_matches(['(', '[', '"']);
                        ["paper's", "its", "their", "slides'", "lecture's"].contains(&w)
                    });
                    if !source {
                        problems.push(format!(
                            "{page}: `{kind} {number}` is not numbered per chapter \
                             (`{kind} <chapter>.{number}`), nor the paper's own"
                        ));
                    }
                } else if !captions.contains(&(kind, number.clone())) {
                    problems.push(format!("{page}: `{kind} {number}` has no caption"));
                }
            }
        }
    }
    assert!(
        captions.len() > 100 && checked > 200,
        "{} captions, {checked} references",
        captions.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_caption_checks_read_what_they_should() {
    assert_eq!(caption("*Table 7.2: kernel variants."), Some(("Table", "7.2".into())));
    assert_eq!(
        caption("*Figure 5.1 (the paper's Figures 5 and 7): milliseconds"),
        Some(("Figure", "5.1".into()))
    );
    assert_eq!(caption("Listing A.1: the registry."), Some(("Listing", "A.1".into())));
    assert_eq!(caption("Table 7.2 holds every kernel variant"), None);
    let refs =
        references_in("as Tables 7.2 and 7.3 show (Figure 5.1, its Figures 2 to 4).");
    let numbers: Vec<&str> = refs.iter().map(|(_, n, _)| n.as_str()).collect();
    assert_eq!(numbers, ["5.1", "2", "4", "7.2", "7.3"]);
    assert!(refs
        .iter()
        .any(|(k, n, b)| *k == "Figure" && n == "2" && b.ends_with("its ")));
}
