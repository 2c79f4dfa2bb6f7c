//! Build script: three jobs, all so that what runs is what the book shows.
//!
//! 1. The kernel registry: every `kernels/*.cu` becomes an `include_str!` entry, so the binaries are
//!    self-contained and a test can compile every kernel without a list anyone must keep by hand.
//! 2. Provenance known only at build time: the git commit and the cudarc version from Cargo.lock.
//! 3. The book's Rust snippets for skeptic, with mdBook's `{{#include}}` directives expanded first
//!    (skeptic does not expand them), so CI compiles exactly the code the reader sees.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());

    write_kernel_registry(&root, &out);
    emit_provenance(&root);
    expand_book_for_skeptic(&root, &out);
}

fn write_kernel_registry(root: &Path, out: &Path) {
    let dir = root.join("kernels");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<String> = fs::read_dir(&dir)
        .expect("kernels/ must exist")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".cu"))
        .collect();
    files.sort();
    let mut registry = String::from("&[\n");
    for name in &files {
        let path = dir.join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        registry.push_str(&format!(
            "    KernelSource {{ file: {name:?}, source: include_str!({:?}) }},\n",
            path.display().to_string()
        ));
    }
    registry.push(']');
    fs::write(out.join("kernel_registry.rs"), registry).unwrap();
}

fn emit_provenance(root: &Path) {
    // The commit the binary was built from; "-dirty" when the work tree had uncommitted changes.
    for p in [".git/HEAD", ".git/index"] {
        if root.join(p).exists() {
            println!("cargo:rerun-if-changed={}", root.join(p).display());
        }
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .map(|s| !s.is_empty())
                .unwrap_or(false);
            if dirty {
                format!("{c}-dirty")
            } else {
                c
            }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=CMBOOK_GIT_COMMIT={commit}");

    // cudarc's version as resolved in Cargo.lock (the manifest only gives a range).
    let lock = root.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = fs::read_to_string(&lock).unwrap_or_default();
    let mut version = "unknown".to_string();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"cudarc\"" {
            if let Some(v) =
                lines.next().and_then(|l| l.trim().strip_prefix("version = "))
            {
                version = v.trim_matches('"').to_string();
            }
            break;
        }
    }
    println!("cargo:rustc-env=CMBOOK_CUDARC_VERSION={version}");
}

// ANCHOR: expand_includes
/// Expands `{{#include path}}`, `{{#include path:anchor}}` and `{{#include path:from:to}}`
/// (1-based lines, either end optional) the way mdBook does, relative to `base`.
fn expand_includes(text: &str, base: &Path) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{#include ") {
        let end = start + rest[start..].find("}}").expect("unterminated {{#include");
        out.push_str(&rest[..start]);
        let spec = rest[start + "{{#include ".len()..end].trim();
        let mut parts = spec.splitn(2, ':');
        let file = base.join(parts.next().unwrap());
        println!("cargo:rerun-if-changed={}", file.display());
        match fs::read_to_string(&file) {
            Ok(body) => out.push_str(&select(&body, parts.next(), spec)),
            // A missing file must not stop the build (the examples that write the figures are
            // built by it); tests/book.rs and tests/figures.rs fail on it instead.
            Err(e) => println!(
                "cargo:warning={{{{#include {spec}}}}}: cannot read {}: {e}",
                file.display()
            ),
        }
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

fn select(body: &str, selector: Option<&str>, spec: &str) -> String {
    let is_marker = |l: &str| l.contains("ANCHOR:") || l.contains("ANCHOR_END:");
    let keep = |lines: Vec<&str>| {
        let kept: Vec<&str> = lines.into_iter().filter(|l| !is_marker(l)).collect();
        kept.join("\n")
    };
    let lines: Vec<&str> = body.lines().collect();
    match selector {
        None => keep(lines),
        Some(sel) if sel.chars().all(|c| c.is_ascii_digit() || c == ':') => {
            let mut ends = sel.splitn(2, ':');
            let from = ends.next().and_then(|s| s.parse::<usize>().ok()).unwrap_or(1);
            let to = ends
                .next()
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(lines.len());
            keep(lines[from.saturating_sub(1)..to.min(lines.len())].to_vec())
        }
        Some(anchor) => {
            let begin = lines
                .iter()
                .position(|l| l.trim_end().ends_with(&format!("ANCHOR: {anchor}")))
                .unwrap_or_else(|| {
                    panic!("{{{{#include {spec}}}}}: no ANCHOR: {anchor}")
                });
            let end = lines
                .iter()
                .position(|l| l.trim_end().ends_with(&format!("ANCHOR_END: {anchor}")))
                .unwrap_or_else(|| {
                    panic!("{{{{#include {spec}}}}}: no ANCHOR_END: {anchor}")
                });
            keep(lines[begin + 1..end].to_vec())
        }
    }
}
// ANCHOR_END: expand_includes

fn expand_book_for_skeptic(root: &Path, out: &Path) {
    let src = root.join("src");
    let dest = out.join("book-expanded");
    fs::create_dir_all(&dest).unwrap();
    let mut chapters: Vec<PathBuf> = fs::read_dir(&src)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "md") && !p.ends_with("SUMMARY.md")
        })
        .collect();
    chapters.sort();
    let mut expanded = Vec::new();
    for chapter in chapters {
        println!("cargo:rerun-if-changed={}", chapter.display());
        let text = fs::read_to_string(&chapter).unwrap();
        let target = dest.join(chapter.file_name().unwrap());
        fs::write(&target, expand_includes(&text, &src)).unwrap();
        expanded.push(target);
    }
    skeptic::generate_doc_tests(&expanded);
}
