//! No figure can drift from its data: every committed SVG and table is exactly what its CSV
//! draws, every CSV carries its provenance, and everything the book shows exists.

use cmbook::harness::plot;

use crate::common::book_root;

#[test]
fn every_figure_and_table_is_redrawn_identically_from_its_csv() {
    let problems = plot::audit_figures(&book_root().join("figures")).unwrap();
    assert!(
        problems.is_empty(),
        "figures out of step with their data:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_hand_edited_figure_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let figures = book_root().join("figures");
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let mut copied = 0;
    for entry in std::fs::read_dir(figures.join("data")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, dir.path().join("data").join(p.file_name().unwrap()))
            .unwrap();
        copied += 1;
    }
    assert!(copied > 0, "the book has no figure data");
    assert_eq!(plot::redraw_all(dir.path()).unwrap(), copied);
    assert!(plot::audit_figures(dir.path()).unwrap().is_empty());
    let svg = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "svg"))
        .unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    std::fs::write(
        &svg,
        text.replacen("GB/s", "TB/s", 1).replacen("µs", "ms", 1) + " ",
    )
    .unwrap();
    let problems = plot::audit_figures(dir.path()).unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("hand-edited"));
}

#[test]
fn everything_the_chapters_reference_under_figures_exists() {
    let src = book_root().join("src/book");
    let mut missing = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, _) in text.match_indices("figures/") {
            let rest = &text[i..];
            let end =
                rest.find(|c: char| ")\"} \n:`,".contains(c)).unwrap_or(rest.len());
            let target = &rest[..end];
            if target.ends_with('/') {
                continue; // a folder named in prose
            }
            seen += 1;
            if !src.join(target).exists() {
                missing.push(format!(
                    "{}: {target}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(seen > 0, "no chapter shows a figure");
    assert!(missing.is_empty(), "referenced but missing:\n{}", missing.join("\n"));
}

/// Every committed figure reads at the book's width: no text under 11 px when the 860-px SVG
/// is shown 750 px wide, no text over another text or over a data mark, none outside the
/// figure (text boxes estimated from DejaVu Sans' advance widths, the widest usual font).
#[test]
fn every_figure_is_legible_at_the_books_width() {
    let figures = book_root().join("figures");
    let mut problems = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(&figures).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        seen += 1;
        let svg = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        problems.extend(
            plot::layout_problems(&svg).into_iter().map(|p| format!("{name}: {p}")),
        );
    }
    assert!(seen > 0, "no figures");
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn every_figure_is_written_by_the_example_the_registry_names() {
    use cmbook::chapters;
    let figures = book_root().join("figures");
    let mut stems = Vec::new();
    for entry in std::fs::read_dir(figures.join("data")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "csv") {
            stems.push(p.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    for stem in &stems {
        assert!(
            chapters::writer_of(stem).is_some() || chapters::reproduce_writes(stem),
            "figures/data/{stem}.csv: no example in src/chapters/ writes it"
        );
    }
    for c in chapters::ALL {
        // A table of what a run skipped is the book's only where its own GPU skipped
        // something (ATAX's widest shapes); on a GPU that lacks nothing it says so and need
        // not be kept.
        let skips = |s: &&&str| s.ends_with(cmbook::harness::skipped::SUFFIX);
        for stem in c.writes.iter().filter(|s| !skips(s)) {
            assert!(
                stems.contains(&stem.to_string()),
                "{} writes {stem}, which the book lacks",
                c.example
            );
        }
    }
}

/// Every table of the book reads without its CSV: plain-English headers (no raw column name
/// such as `median_ms`), a flag or command in a cell shown as code (so that it copies as
/// typed), and one line under it saying where its numbers come from — "Computed by …" for a
/// table that code computed, "Measured on …" for the others, the rest of the provenance in
/// its tooltip.
#[test]
fn every_table_has_plain_headers_code_for_commands_and_one_source_line() {
    use cmbook::harness::record;
    let figures = book_root().join("figures");
    let (mut problems, mut tables) = (Vec::new(), 0);
    for entry in std::fs::read_dir(figures.join("data")).unwrap() {
        let path = entry.unwrap().path();
        let rec = record::read_csv(&path).unwrap();
        if rec.meta.get("plot").is_some() {
            continue;
        }
        tables += 1;
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let md = record::markdown_table(&rec, &format!("figures/data/{name}")).unwrap();
        let outside_code = |cell: &str| -> String {
            cell.split('`').step_by(2).collect::<Vec<_>>().join(" ")
        };
        let mut headers_seen = false;
        for line in md.lines().filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        {
            let cells: Vec<&str> =
                line.trim_matches('|').split(" | ").map(str::trim).collect();
            if !headers_seen {
                headers_seen = true;
                for h in cells.iter().filter(|h| outside_code(h).contains('_')) {
                    problems.push(format!("{name}: header `{h}` is a raw column name"));
                }
                continue;
            }
            for cell in cells {
                let text = outside_code(cell);
                if text.split_whitespace().any(|w| w.starts_with("--")) {
                    problems.push(format!("{name}: a flag outside code: {cell}"));
                }
            }
        }
        let source_lines = md.matches("<small title=\"").count();
        let computed = rec.meta.get("computed").is_some();
        let says = if computed { "\">Computed by " } else { "\">Measured on " };
        if source_lines != 1 || !md.contains(says) {
            problems.push(format!(
                "{name}: its line under the table should start `{says}`"
            ));
        }
    }
    assert!(tables > 20, "only {tables} tables");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
