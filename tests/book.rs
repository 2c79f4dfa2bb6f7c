//! The book builds with mdBook 0.5 (its own library, in-process), with no error or warning in
//! its log; every internal link, image and include in the rendered HTML resolves; the rendered
//! book carries no Rust source; every include names an anchor that exists and every anchor in
//! the sources is included somewhere; the appendix's table is the chapter registry's.

mod common;

use std::path::Path;

use cmbook::harness::includes;
use common::{build_book, chapters, html_files, ROOT};

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
    let src = Path::new(ROOT).join("src/book");
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
        all_files(&Path::new(ROOT).join(dir), &mut files);
    }
    files.push(Path::new(ROOT).join("build.rs"));
    files.retain(|f| f.extension().is_some_and(|e| e == "rs" || e == "cu"));
    files
}

#[test]
fn every_include_resolves_and_every_anchor_is_included() {
    let book = Path::new(ROOT).join("src/book");
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
                    file.strip_prefix(ROOT).unwrap().display()
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(included.len() > 50, "only {} anchors are included", included.len());
}

#[test]
fn the_appendix_table_is_the_chapter_registry() {
    let path = Path::new(ROOT).join("src/book/generated/chapters.md");
    let committed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        committed,
        cmbook::chapters::appendix_table(),
        "{} is stale: `cargo run --example reproduce -- --appendix-table > {}`",
        path.display(),
        path.display()
    );
    let appendix =
        std::fs::read_to_string(Path::new(ROOT).join("src/book/reproducing.md"))
            .unwrap();
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
    let book = Path::new(ROOT).join("src/book");
    let (mut long, mut seen) = (Vec::new(), 0);
    for chapter in chapters() {
        let text = std::fs::read_to_string(book.join(&chapter)).unwrap();
        for inc in includes::includes_in(&text) {
            if !(inc.path.ends_with(".rs") || inc.path.ends_with(".cu")) {
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
