//! The shape every chapter page shares, and the links into the glossary and the sources:
//! - every chapter opens with "What you will learn" and ends with `## Summary`, then
//!   `## Exercises`, numbered `Exercise N.1, N.2, …` with N its position in `SUMMARY.md`;
//! - every chapter has at least three exercises, one of them its kernel exercise;
//! - every link to a fragment (`glossary.md#sector`, `introduction.md#seifi-2024`) lands on an
//!   id of the rendered page, and every glossary entry is linked from some chapter.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{build_book, chapters, ROOT};
use cmbook::chapters::exercises;

/// The numbered chapters: the list items of `SUMMARY.md`, in order (chapter 1 first).
fn numbered_chapters() -> Vec<String> {
    let summary =
        std::fs::read_to_string(Path::new(ROOT).join("src/book/SUMMARY.md")).unwrap();
    summary
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- ["))
        .map(|l| l.split("](").nth(1).unwrap().trim_end_matches(')').to_string())
        .collect()
}

fn page(name: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join("src/book").join(name)).unwrap()
}

#[test]
fn every_chapter_opens_with_what_it_teaches_and_ends_with_summary_and_exercises() {
    let numbered = numbered_chapters();
    // Every page of the chapter registry is a numbered chapter, and nothing else is.
    let mut pages: Vec<&str> = cmbook::chapters::ALL.iter().map(|c| c.page).collect();
    pages.dedup();
    assert_eq!(
        numbered, pages,
        "SUMMARY.md's numbered chapters and the registry's pages"
    );
    for (i, name) in numbered.iter().enumerate() {
        let n = i + 1;
        let text = page(name);
        let learn = text.find("**What you will learn**").unwrap_or_else(|| {
            panic!("{name} does not say what it teaches (**What you will learn**)")
        });
        let first_section = text.find("\n## ").unwrap();
        assert!(
            learn < first_section,
            "{name}: the list comes before the first section"
        );
        let headings: Vec<&str> =
            text.lines().filter(|l| l.starts_with("## ")).collect();
        assert_eq!(
            headings[headings.len() - 2..],
            ["## Summary", "## Exercises"],
            "{name} must end with a summary, then the exercises"
        );
        let exercises = &text[text.find("\n## Exercises").unwrap()..];
        let labels: Vec<&str> = exercises
            .match_indices("**Exercise ")
            .map(|(at, _)| {
                let rest = &exercises[at + "**Exercise ".len()..];
                rest.split([' ', '*']).next().unwrap().trim_end_matches('.')
            })
            .collect();
        let expected: Vec<String> =
            (1..=labels.len()).map(|k| format!("{n}.{k}")).collect();
        assert_eq!(labels, expected, "{name}: exercises numbered by chapter, in order");
        assert!(labels.len() >= 3, "{name} has {} exercises", labels.len());
        let kernel: Vec<_> =
            exercises::all().into_iter().filter(|e| e.page == name).collect();
        assert_eq!(kernel.len(), 1, "{name} has one kernel exercise");
        let id = kernel[0].id();
        assert!(
            id.starts_with(&format!("{n}.")),
            "kernel exercise {id} is not chapter {n}'s"
        );
        assert!(
            exercises.contains(&format!("**Exercise {id} (a kernel to repair).**")),
            "{name}: kernel exercise {id} is not on the page"
        );
        assert!(
            exercises.contains(&format!("--example exercises -- {id}")),
            "{name}: exercise {id} does not say how to check it"
        );
    }
    assert!(!page("introduction.md").contains("**Exercise "));
}

/// Every `id="…"` in an HTML text.
fn ids(html: &str) -> BTreeSet<String> {
    html.match_indices("id=\"")
        .filter_map(|(at, _)| html[at + 4..].split('"').next().map(str::to_string))
        .collect()
}

#[test]
fn every_fragment_link_lands_and_every_glossary_entry_is_used() {
    let out = tempfile::tempdir().unwrap();
    let log = build_book(out.path());
    assert!(log.is_empty(), "{}", log.join("\n"));
    let html = |name: &str| {
        std::fs::read_to_string(out.path().join(name.replace(".md", ".html"))).unwrap()
    };
    let mut broken = Vec::new();
    let mut glossary_used = BTreeSet::new();
    let mut checked = 0;
    for name in chapters() {
        let text = html(&name);
        for (at, _) in text.match_indices("href=\"") {
            let href = text[at + 6..].split('"').next().unwrap();
            let Some((file, fragment)) = href.split_once('#') else { continue };
            if href.contains("://") || fragment.is_empty() {
                continue;
            }
            let target = if file.is_empty() {
                name.clone()
            } else {
                file.replace(".html", ".md")
            };
            if !chapters().contains(&target) {
                continue;
            }
            checked += 1;
            if !ids(&html(&target)).contains(fragment) {
                broken.push(format!("{name}: {href}"));
            }
            if target == "glossary.md" && name != "glossary.md" {
                glossary_used.insert(fragment.to_string());
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to fragments that do not exist:\n{}",
        broken.join("\n")
    );
    assert!(checked > 100, "only {checked} fragment links checked");
    let entries: Vec<String> = page("glossary.md")
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| {
            h.to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-')
                .collect::<String>()
                .replace(' ', "-")
        })
        .collect();
    let unused: Vec<_> =
        entries.iter().filter(|e| !glossary_used.contains(*e)).collect();
    assert!(unused.is_empty(), "glossary entries no chapter links to: {unused:?}");
}
