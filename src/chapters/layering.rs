//! The crate's floors, checked on its source: the harness imports nothing of the crate outside
//! itself; a chapter imports the harness, itself, and another chapter only where it extends
//! that chapter by design ([`EXTENSIONS`]); only this top floor lists or imports every chapter.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The chapter imports that are part of the design: (importer, imported, why).
const EXTENSIONS: &[(&str, &str, &str)] = &[
    (
        "hopper_memory",
        "tiling",
        "its SGEMM ladder extends the tiled matrix multiply's steps",
    ),
    ("multi_gpu", "atax", "it splits the ATAX chapter's fused pass across GPUs"),
    (
        "multi_gpu",
        "cmm",
        "it splits the CMM beyond chapter's batch of chains across GPUs",
    ),
    (
        "memory_spaces",
        "ceilings",
        "it re-measures chapter 1's L2 read ceiling in its own run",
    ),
    (
        "hopper_memory",
        "ceilings",
        "its ladder starts from chapter 1's launch-cost measurement",
    ),
];

/// The top-level modules `lib.rs` declares.
fn top_modules(src: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level modules that `text` (a file of module `own`) names: every `crate::<m>`, and
/// `super::<m>` where `super` is the crate root (in a top-level module's own file).
fn named_modules(text: &str, top: &[String], super_is_root: bool) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut look = |prefix: &str| {
        for (i, _) in text.match_indices(prefix) {
            let before = text[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue; // `$crate::` names the crate from a macro, `foo_crate::` another crate
            }
            let rest = &text[i + prefix.len()..];
            let name: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if top.contains(&name) {
                named.insert(name);
            }
        }
    };
    look("crate::");
    if super_is_root {
        look("super::");
    }
    named
}

/// Every crossing between top-level modules that the floors forbid, one line each.
fn violations(src: &Path) -> Vec<String> {
    let top = top_modules(src);
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).expect("under src/");
        let parts: Vec<String> =
            rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.len() == 1 && parts[0] == "lib.rs" {
            continue;
        }
        let own = parts[0].trim_end_matches(".rs").to_string();
        let super_is_root =
            parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod.rs");
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        for other in named_modules(&text, &top, super_is_root) {
            if other == own
                || other == "harness" && own != "harness"
                || own == "chapters"
            {
                continue;
            }
            let allowed =
                EXTENSIONS.iter().any(|&(from, to, _)| from == own && to == other);
            if own == "harness" {
                found.push(format!(
                    "src/{}: the harness names `{other}`",
                    rel.display()
                ));
            } else if !allowed {
                found.push(format!(
                    "src/{}: chapter `{own}` names `{other}`",
                    rel.display()
                ));
            }
        }
    }
    found
}

#[test]
fn the_harness_imports_only_itself_and_chapters_only_their_extensions() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(found.is_empty(), "imports across the floors:\n{}", found.join("\n"));
}

#[test]
fn every_extension_is_still_used() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let top = top_modules(&src);
    for &(from, to, why) in EXTENSIONS {
        let mut files = Vec::new();
        rust_files(&src.join(from), &mut files);
        let uses = files.iter().any(|f| {
            let text = std::fs::read_to_string(f).expect("a readable source file");
            named_modules(&text, &top, f.ends_with(format!("{from}/mod.rs")))
                .contains(to)
        });
        assert!(
            uses,
            "`{from}` no longer imports `{to}` ({why}): remove the extension"
        );
    }
}

#[test]
fn a_forbidden_import_is_found() {
    let top: Vec<String> =
        ["harness", "atax", "tiling", "chapters"].map(String::from).into();
    let text = "use crate::harness::Gpu;\nuse crate::atax::device; // $crate::tiling\n";
    assert_eq!(
        named_modules(text, &top, false).into_iter().collect::<Vec<_>>(),
        ["atax", "harness"]
    );
    assert!(named_modules("use super::tiling::x;", &top, true).contains("tiling"));
    assert!(named_modules("use super::tiling::x;", &top, false).is_empty());
}
