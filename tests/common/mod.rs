//! Helpers shared by the book's tests: finding the mdBook binary and building the book.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The `mdbook` binary, or `None` (a loud skip) unless `REQUIRE_MDBOOK=1`.
pub fn mdbook() -> Option<PathBuf> {
    let candidates = [
        std::env::var("MDBOOK").ok().map(PathBuf::from),
        Some(PathBuf::from("mdbook")),
        std::env::var("HOME").ok().map(|h| Path::new(&h).join(".cargo/bin/mdbook")),
    ];
    for c in candidates.into_iter().flatten() {
        if Command::new(&c).arg("--version").output().is_ok_and(|o| o.status.success())
        {
            return Some(c);
        }
    }
    if std::env::var("REQUIRE_MDBOOK").as_deref() == Ok("1") {
        panic!("REQUIRE_MDBOOK=1 but no mdbook binary was found (cargo install mdbook --version 0.5.4 --locked)");
    }
    eprintln!("SKIPPED: mdbook not found; install it (and set REQUIRE_MDBOOK=1 to make this an error)");
    None
}

/// Builds the book into `dest`; returns mdBook's log.
pub fn build_book(mdbook: &Path, dest: &Path) -> String {
    let result = Command::new(mdbook)
        .arg("build")
        .arg("--dest-dir")
        .arg(dest)
        .arg(ROOT)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(result.status.success(), "mdbook build failed:\n{log}");
    log
}

/// Every `.html` file under `dir`.
pub fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "html") {
            out.push(p);
        }
    }
}

/// The chapter files SUMMARY.md lists, in order.
pub fn chapters() -> Vec<String> {
    let summary =
        std::fs::read_to_string(Path::new(ROOT).join("src/book/SUMMARY.md")).unwrap();
    summary
        .match_indices("](")
        .map(|(i, _)| summary[i + 2..].split(')').next().unwrap().to_string())
        .collect()
}
