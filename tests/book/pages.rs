//! The shape every chapter shares, and the links into the glossary and the sources:
//! - a chapter is its own page and the pages listed under it in `SUMMARY.md`;
//! - its first page opens with the question it answers (`**The question.**`, a question
//!   mark), a one-paragraph answer (`**The answer, in short.**`) and "What you will learn";
//! - its last page ends with `## Summary`, `## Open questions` (a list), then `## Exercises`,
//!   numbered `Exercise N.1, N.2, …` with N the chapter's position in `SUMMARY.md`;
//! - a hedge ("hypothesis", "our guess", "not yet measured") stands only among the open
//!   questions: the prose states what the data show;
//! - every chapter has at least three exercises, one of them its kernel exercise;
//! - every term of `tests/book/terms.txt` links to its glossary entry where a chapter first
//!   uses it, and no sentence a reader was shown to be wrong (`tests/book/tripwires/`) comes
//!   back;
//! - every link to a fragment (`glossary.md#sector`, `introduction.md#seifi-2024`) lands on an
//!   id of the rendered page, and every glossary entry is linked from some chapter.

use std::collections::BTreeSet;

use crate::common::{book_root, build_book, chapters, numbered_chapters};
use cmbook::chapters::exercises;

fn page(name: &str) -> String {
    std::fs::read_to_string(book_root().join("src/book").join(name)).unwrap()
}

/// The paragraphs of a page's top, up to its first section: blank-line separated, trimmed.
fn opening_paragraphs(text: &str) -> Vec<String> {
    let top = text.split("\n## ").next().unwrap();
    top.split("\n\n")
        .map(|p| p.trim().replace('\n', " "))
        .filter(|p| !p.is_empty())
        .collect()
}

/// The text of a page's `## heading` section, up to the next `## ` heading.
fn section<'a>(text: &'a str, heading: &str) -> Option<&'a str> {
    let at = text.find(&format!("\n## {heading}\n"))?;
    let body = &text[at + heading.len() + 5..];
    Some(body.split("\n## ").next().unwrap())
}

/// A page's text as the checks of wording read it: fenced code, include lines and headings
/// blanked (each character a space, so that positions still match the page).
fn wording(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for line in text.split_inclusive('\n') {
        let fence = line.trim_start().starts_with("```");
        let blank =
            fence || in_code || line.starts_with('#') || line.contains("{{#include");
        if fence {
            in_code = !in_code;
        }
        if blank {
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Words that hedge: a guess the prose has not settled belongs among the open questions.
const HEDGES: [&str; 6] = [
    "hypothesis",
    "hypotheses",
    "our guess",
    "not yet measured",
    "not yet counted",
    "not settled",
];

#[test]
fn every_chapter_asks_teaches_and_ends_with_summary_open_questions_and_exercises() {
    let numbered = numbered_chapters();
    // Every first page of a chapter is a page of the chapter registry, and nothing else is.
    let mut pages: Vec<&str> = cmbook::chapters::ALL.iter().map(|c| c.page).collect();
    pages.dedup();
    let firsts: Vec<&str> = numbered.iter().map(|c| c.pages[0].as_str()).collect();
    assert_eq!(
        firsts, pages,
        "SUMMARY.md's numbered chapters and the registry's pages"
    );
    let mut problems = Vec::new();
    for chapter in &numbered {
        let (n, first_name) = (chapter.number, &chapter.pages[0]);
        let first = page(first_name);
        let opening = opening_paragraphs(&first);
        let title_then =
            |i: usize, lead: &str| opening.get(i).is_some_and(|p| p.starts_with(lead));
        if !(opening.first().is_some_and(|p| p.starts_with("# "))
            && title_then(1, "**The question.**")
            && opening[1].contains('?')
            && title_then(2, "**The answer, in short.**"))
        {
            problems.push(format!(
                "{first_name}: the title, then `**The question.** …?`, then \
                 `**The answer, in short.** …`"
            ));
        }
        match (first.find("**What you will learn**"), first.find("\n## ")) {
            (Some(learn), Some(section)) if learn < section => {}
            _ => problems.push(format!(
                "{first_name}: **What you will learn** comes before the first section"
            )),
        }
        let last_name = chapter.pages.last().unwrap();
        let last = page(last_name);
        let headings: Vec<&str> =
            last.lines().filter(|l| l.starts_with("## ")).collect();
        if headings.len() < 3
            || headings[headings.len() - 3..]
                != ["## Summary", "## Open questions", "## Exercises"]
        {
            problems.push(format!(
                "{last_name} must end with `## Summary`, `## Open questions`, `## Exercises`"
            ));
        }
        let open = section(&last, "Open questions").unwrap_or("");
        if !open.lines().any(|l| l.starts_with("- ")) {
            problems.push(format!("{last_name}: the open questions are a list"));
        }
        for name in &chapter.pages {
            let text = page(name);
            let outside = match section(&text, "Open questions") {
                Some(open) => text.replacen(open, "", 1),
                None => text.clone(),
            };
            let lower = wording(&outside).to_lowercase();
            for hedge in HEDGES.iter().filter(|h| lower.contains(*h)) {
                problems
                    .push(format!("{name}: \"{hedge}\" outside the open questions"));
            }
            if name != last_name && text.contains("**Exercise ") {
                problems.push(format!(
                    "{name}: exercises belong on the chapter's last page"
                ));
            }
        }
        let Some(at) = last.find("\n## Exercises") else { continue };
        let exercises = &last[at..];
        let labels: Vec<&str> = exercises
            .match_indices("**Exercise ")
            .map(|(at, _)| {
                let rest = &exercises[at + "**Exercise ".len()..];
                rest.split([' ', '*']).next().unwrap().trim_end_matches('.')
            })
            .collect();
        let expected: Vec<String> =
            (1..=labels.len()).map(|k| format!("{n}.{k}")).collect();
        if labels != expected {
            problems
                .push(format!("{last_name}: exercises {labels:?}, not {expected:?}"));
        }
        if labels.len() < 3 {
            problems.push(format!("{last_name} has {} exercises", labels.len()));
        }
        let kernel: Vec<_> =
            exercises::all().into_iter().filter(|e| e.page == first_name).collect();
        assert_eq!(kernel.len(), 1, "{first_name} has one kernel exercise");
        let id = kernel[0].id();
        if !id.starts_with(&format!("{n}.")) {
            problems.push(format!("kernel exercise {id} is not chapter {n}'s"));
        }
        if !exercises.contains(&format!("**Exercise {id} (a kernel to repair).**")) {
            problems
                .push(format!("{last_name}: kernel exercise {id} is not on the page"));
        }
        if !exercises.contains(&format!("--example exercises -- {id}")) {
            problems.push(format!(
                "{last_name}: exercise {id} does not say how to check it"
            ));
        }
    }
    assert!(!page("introduction.md").contains("**Exercise "));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `tests/book/terms.txt`: each glossary anchor with the forms a chapter writes its term in.
fn terms() -> Vec<(String, Vec<String>)> {
    let text =
        std::fs::read_to_string(book_root().join("tests/book/terms.txt")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (anchor, forms) = l.split_once(':').expect("`anchor: form, form`");
            let forms = forms.split(',').map(|f| f.trim().to_lowercase()).collect();
            (anchor.trim().to_string(), forms)
        })
        .collect()
}

/// Where `form` first stands in `text` as whole words (no letter, digit or `_` on either
/// side, and not a part of a Rust path such as `roofline::write`), case already folded by the
/// caller.
fn first_whole(text: &str, form: &str) -> Option<usize> {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(form).map(|(at, _)| at).find(|&at| {
        let (before, after) = (&text[..at], &text[at + form.len()..]);
        !word(before.chars().next_back())
            && !word(after.chars().next())
            && !before.ends_with("::")
            && !after.starts_with("::")
    })
}

/// A link's destinations blanked (`[text](·····)`), so that a file name such as
/// `figures/x-ptx.svg` is not read as a use of a term; positions are kept.
fn without_destinations(text: &str) -> String {
    let mut out: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i + 1 < out.len() {
        if out[i] == ']' && out[i + 1] == '(' {
            let mut j = i + 2;
            while j < out.len() && out[j] != ')' && out[j] != '\n' {
                out[j] = ' ';
                j += 1;
            }
            i = j;
        }
        i += 1;
    }
    out.into_iter().collect()
}

/// Whether byte `at` of `text` lies in the text of a link to `target`.
fn inside_link_to(text: &str, at: usize, target: &str) -> bool {
    let before = &text[..at];
    let Some(open) = before.rfind('[') else { return false };
    if before[open..].contains(']') {
        return false;
    }
    let Some(close) = text[at..].find("](") else { return false };
    !text[at..at + close].contains('[') && text[at + close + 2..].starts_with(target)
}

#[test]
fn every_term_links_to_its_glossary_entry_where_a_chapter_first_uses_it() {
    let glossary = page("glossary.md");
    let mut problems = Vec::new();
    let terms = terms();
    assert!(terms.len() >= 20, "{} terms", terms.len());
    for (anchor, _) in &terms {
        let has_entry =
            glossary.lines().filter_map(|l| l.strip_prefix("## ")).any(|h| {
                let id: String = h
                    .to_lowercase()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-')
                    .collect();
                id.replace(' ', "-") == *anchor
            });
        if !has_entry {
            problems.push(format!("the glossary has no entry `{anchor}`"));
        }
    }
    let mut checked = 0;
    for chapter in numbered_chapters() {
        // The chapter as one text, its pages in reading order; each page's name kept for
        // the message.
        let mut text = String::new();
        let mut starts = Vec::new();
        for name in &chapter.pages {
            starts.push((text.len(), name.clone()));
            text.push_str(&wording(&page(name)));
            text.push('\n');
        }
        let seen = without_destinations(&text).to_lowercase();
        for (anchor, forms) in &terms {
            let Some(at) = forms.iter().filter_map(|f| first_whole(&seen, f)).min()
            else {
                continue;
            };
            checked += 1;
            if !inside_link_to(&text, at, &format!("glossary.md#{anchor})")) {
                let (start, name) =
                    starts.iter().rev().find(|(s, _)| *s <= at).unwrap();
                let line = text[*start..at].matches('\n').count() + 1;
                let end = (at + 40).min(text.len());
                let shown = text.get(at..end).unwrap_or("").replace('\n', " ");
                problems.push(format!(
                    "{name}:{line}: first use of `{anchor}` (\"{shown}\") does not link \
                     to glossary.md#{anchor}"
                ));
            }
        }
    }
    assert!(checked > 50, "only {checked} first uses checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_term_checks_read_what_they_should() {
    let text = "A [sector](glossary.md#sector) of subsectors; see `long_scoreboard`.";
    let seen = without_destinations(text).to_lowercase();
    let at = first_whole(&seen, "sector").unwrap();
    assert!(inside_link_to(text, at, "glossary.md#sector)"));
    assert!(!inside_link_to(text, at, "glossary.md#sect)"));
    assert_eq!(first_whole(&seen, "sectors"), None, "subsectors is one word");
    assert_eq!(first_whole("see `cmbook::roofline::write`", "roofline"), None);
    let code = first_whole(&seen, "long_scoreboard").unwrap();
    assert!(!inside_link_to(text, code, "glossary.md#stall-reason)"));
    let image = without_destinations("![x](figures/a-ptx.svg) and PTX").to_lowercase();
    assert_eq!(first_whole(&image, "ptx"), Some(image.rfind("ptx").unwrap()));
    let page = "# T\n\n```rust\nlet sector = 1;\n```\n## A sector heading\n";
    assert_eq!(first_whole(&wording(page), "sector"), None);
}

/// `tests/book/tripwires/STEM.txt`: sentences a review showed to be wrong, one a line, that
/// must not come back to the pages of `STEM` (`STEM.md` and `STEM-*.md`).
#[test]
fn no_corrected_sentence_comes_back() {
    let dir = book_root().join("tests/book/tripwires");
    let pages = chapters();
    let (mut problems, mut wires) = (Vec::new(), 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let own: Vec<&String> = pages
            .iter()
            .filter(|p| {
                **p == format!("{stem}.md") || p.starts_with(&format!("{stem}-"))
            })
            .collect();
        assert!(!own.is_empty(), "{}: no page of the book is `{stem}`", path.display());
        let text = std::fs::read_to_string(&path).unwrap();
        for wire in
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            wires += 1;
            assert!(
                wire.split_whitespace().count() >= 3,
                "{}: `{wire}` is too short to name one sentence",
                path.display()
            );
            for name in &own {
                // Line breaks in the page are spaces to a reader.
                let prose = page(name).split_whitespace().collect::<Vec<_>>().join(" ");
                if prose.contains(wire) {
                    problems.push(format!("{name}: \"{wire}\" is back"));
                }
            }
        }
    }
    assert!(wires >= 30, "only {wires} tripwires");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
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
