//! The book builds with mdBook 0.5, with no error or warning in its log, and every internal
//! link, image and include in the rendered HTML resolves.
//!
//! CI installs mdBook and sets `REQUIRE_MDBOOK=1`; elsewhere a missing `mdbook` is a loud skip.

use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn mdbook() -> Option<PathBuf> {
    let candidates = [std::env::var("MDBOOK").ok().map(PathBuf::from), Some(PathBuf::from("mdbook")), std::env::var("HOME").ok().map(|h| Path::new(&h).join(".cargo/bin/mdbook"))];
    for c in candidates.into_iter().flatten() {
        if Command::new(&c).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Some(c);
        }
    }
    if std::env::var("REQUIRE_MDBOOK").as_deref() == Ok("1") {
        panic!("REQUIRE_MDBOOK=1 but no mdbook binary was found (cargo install mdbook --version 0.5.4 --locked)");
    }
    eprintln!("SKIPPED: mdbook not found; install it (and set REQUIRE_MDBOOK=1 to make this an error)");
    None
}

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "html") {
            out.push(p);
        }
    }
}

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
    let result = Command::new(&mdbook).arg("build").arg("--dest-dir").arg(out.path()).arg(ROOT).output().unwrap();
    let log = format!("{}{}", String::from_utf8_lossy(&result.stdout), String::from_utf8_lossy(&result.stderr));
    assert!(result.status.success(), "mdbook build failed:\n{log}");
    let bad: Vec<&str> = log.lines().filter(|l| l.contains("ERROR") || l.contains("WARN")).collect();
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
            if r.is_empty() || r.starts_with('#') || r.contains("://") || r.starts_with("mailto:") || r.starts_with("javascript:") || r.starts_with("data:") {
                continue;
            }
            let path = r.split(['#', '?']).next().unwrap();
            if path.is_empty() {
                continue;
            }
            checked += 1;
            let target = page.parent().unwrap().join(path);
            if !target.exists() {
                broken.push(format!("{}: {r}", page.strip_prefix(out.path()).unwrap().display()));
            }
        }
    }
    eprintln!("book: {} pages, {checked} internal links and images checked", pages.len());
    assert!(checked > 0);
    assert!(broken.is_empty(), "broken internal references:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_in_summary_exists_and_every_chapter_is_listed() {
    let src = Path::new(ROOT).join("src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: Vec<String> = summary
        .match_indices("](")
        .map(|(i, _)| summary[i + 2..].split(')').next().unwrap().to_string())
        .collect();
    assert!(listed.len() >= 3, "{listed:?}");
    for file in &listed {
        assert!(src.join(file).exists(), "SUMMARY.md lists {file}, which does not exist");
    }
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") && name != "SUMMARY.md" {
            assert!(listed.contains(&name), "{name} is not listed in SUMMARY.md");
        }
    }
}
