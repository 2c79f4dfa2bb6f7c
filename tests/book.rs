//! The book builds with mdBook 0.5, with no error or warning in its log, and every internal
//! link, image and include in the rendered HTML resolves.
//!
//! CI installs mdBook and sets `REQUIRE_MDBOOK=1`; elsewhere a missing `mdbook` is a loud skip.

mod common;

use std::path::Path;

use common::{build_book, chapters, html_files, mdbook, ROOT};

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
    let Some(mdbook) = mdbook() else { return };
    let out = tempfile::tempdir().unwrap();
    let log = build_book(&mdbook, out.path());
    let bad: Vec<&str> =
        log.lines().filter(|l| l.contains("ERROR") || l.contains("WARN")).collect();
    assert!(bad.is_empty(), "mdbook logged errors or warnings:\n{}", bad.join("\n"));

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
