//! mdBook's `{{#include}}` directive, expanded the way mdBook expands it.
//!
//! Two users: `build.rs` hands the expanded chapters to skeptic (which does not expand
//! includes itself), so CI compiles exactly the code a reader sees; and the book's tests check
//! that every included anchor exists and every anchor in the sources is included. This file
//! uses nothing but `std`, because `build.rs` compiles it on its own (`#[path]`).

use std::path::{Path, PathBuf};

/// One `{{#include path[:selector]}}` directive found in a chapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Include {
    /// The path as written, relative to the chapter's folder.
    pub path: String,
    /// `None` for the whole file, else an anchor name or a `from:to` line range.
    pub selector: Option<String>,
}

impl Include {
    /// The anchor this directive selects, if it selects one (not a whole file, not lines).
    pub fn anchor(&self) -> Option<&str> {
        self.selector
            .as_deref()
            .filter(|s| !s.chars().all(|c| c.is_ascii_digit() || c == ':'))
    }
}

/// Every include directive of a chapter's text, in order.
pub fn includes_in(text: &str) -> Vec<Include> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{#include ") {
        let Some(len) = rest[start..].find("}}") else { break };
        let spec = rest[start + "{{#include ".len()..start + len].trim();
        let mut parts = spec.splitn(2, ':');
        found.push(Include {
            path: parts.next().unwrap_or_default().to_string(),
            selector: parts.next().map(str::to_string),
        });
        rest = &rest[start + len + 2..];
    }
    found
}

/// The names of the `ANCHOR:` regions of a source file, in order: lines that are a comment
/// holding `ANCHOR: name` and nothing after the name.
pub fn anchors_in(body: &str) -> Vec<String> {
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    body.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("//")?.trim_start();
            let name = rest.strip_prefix("ANCHOR:")?.trim();
            is_name(name).then(|| name.to_string())
        })
        .collect()
}

/// Why an include could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeError {
    pub directive: String,
    pub why: String,
}

/// The text an include selects from `body` (marker lines dropped, as mdBook drops them).
pub fn select(body: &str, selector: Option<&str>) -> Result<String, String> {
    let is_marker = |l: &str| l.contains("ANCHOR:") || l.contains("ANCHOR_END:");
    let keep = |lines: &[&str]| {
        lines.iter().copied().filter(|l| !is_marker(l)).collect::<Vec<_>>().join("\n")
    };
    let lines: Vec<&str> = body.lines().collect();
    match selector {
        None => Ok(keep(&lines)),
        Some(sel) if sel.chars().all(|c| c.is_ascii_digit() || c == ':') => {
            let mut ends = sel.splitn(2, ':');
            let from = ends.next().and_then(|s| s.parse::<usize>().ok()).unwrap_or(1);
            let to = ends
                .next()
                .and_then(|s| s.parse::<usize>().ok())
                .unwrap_or(lines.len());
            let to = to.min(lines.len());
            Ok(keep(&lines[from.saturating_sub(1).min(to)..to]))
        }
        Some(anchor) => {
            let line_of = |marker: String| {
                lines.iter().position(|l| l.trim_end().ends_with(&marker))
            };
            let begin = line_of(format!("ANCHOR: {anchor}"))
                .ok_or_else(|| format!("no `ANCHOR: {anchor}`"))?;
            let end = line_of(format!("ANCHOR_END: {anchor}"))
                .ok_or_else(|| format!("no `ANCHOR_END: {anchor}`"))?;
            if end <= begin {
                return Err(format!("`ANCHOR_END: {anchor}` comes before its start"));
            }
            Ok(keep(&lines[begin + 1..end]))
        }
    }
}

/// Expands every include of `text` relative to `base`. Each file read is reported to
/// `on_file` (build.rs turns them into `rerun-if-changed` lines); each directive that cannot
/// be expanded is left in place and reported in the error list.
pub fn expand(
    text: &str,
    base: &Path,
    on_file: &mut dyn FnMut(&Path),
) -> (String, Vec<IncludeError>) {
    let mut out = String::with_capacity(text.len());
    let mut errors = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{#include ") {
        let Some(len) = rest[start..].find("}}") else { break };
        let directive = &rest[start..start + len + 2];
        out.push_str(&rest[..start]);
        let include = includes_in(directive).remove(0);
        let file: PathBuf = base.join(&include.path);
        on_file(&file);
        let expanded = std::fs::read_to_string(&file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))
            .and_then(|body| select(&body, include.selector.as_deref()));
        match expanded {
            Ok(body) => out.push_str(&body),
            Err(why) => {
                errors.push(IncludeError { directive: directive.to_string(), why });
                out.push_str(directive);
            }
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "a\n// ANCHOR: one\nb\nc\n// ANCHOR_END: one\nd\n";

    #[test]
    fn anchors_lines_and_whole_files() {
        assert_eq!(select(SOURCE, Some("one")).unwrap(), "b\nc");
        assert_eq!(select(SOURCE, Some("2:3")).unwrap(), "b");
        assert_eq!(select(SOURCE, None).unwrap(), "a\nb\nc\nd");
        assert!(select(SOURCE, Some("two")).unwrap_err().contains("ANCHOR: two"));
        assert_eq!(anchors_in(SOURCE), ["one"]);
        assert!(anchors_in("let s = \"// ANCHOR: x\";\n").is_empty());
    }

    #[test]
    fn directives_are_found_and_a_missing_file_is_reported() {
        let text = "x {{#include ../k.cu:one}} y {{#include figures/t.md}}";
        let found = includes_in(text);
        assert_eq!(
            found[0],
            Include { path: "../k.cu".into(), selector: Some("one".into()) }
        );
        assert_eq!(found[0].anchor(), Some("one"));
        assert_eq!(found[1].selector, None);
        let dir = std::env::temp_dir().join("cmbook-no-such-folder");
        let mut seen = Vec::new();
        let (out, errors) = expand(text, &dir, &mut |p| seen.push(p.to_path_buf()));
        assert_eq!((errors.len(), seen.len()), (2, 2));
        assert!(out.contains("{{#include ../k.cu:one}}"), "left in place: {out}");
    }
}
