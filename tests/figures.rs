//! No figure can drift from its data: every committed SVG and table is exactly what its CSV
//! draws, every CSV carries its provenance, and everything the book shows exists.

use std::path::Path;

use cmbook::harness::plot;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn every_figure_and_table_is_redrawn_identically_from_its_csv() {
    let problems = plot::audit_figures(&Path::new(ROOT).join("figures")).unwrap();
    assert!(
        problems.is_empty(),
        "figures out of step with their data:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_hand_edited_figure_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let figures = Path::new(ROOT).join("figures");
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
    let src = Path::new(ROOT).join("src/book");
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
    let figures = Path::new(ROOT).join("figures");
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
    let figures = Path::new(ROOT).join("figures");
    let mut stems = Vec::new();
    for entry in std::fs::read_dir(figures.join("data")).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "csv") {
            stems.push(p.file_stem().unwrap().to_string_lossy().into_owned());
        }
    }
    for stem in &stems {
        assert!(
            chapters::writer_of(stem).is_some()
                || chapters::REPRODUCE_WRITES.contains(&&**stem),
            "figures/data/{stem}.csv: no example in src/chapters.rs writes it"
        );
    }
    for c in chapters::ALL {
        for stem in c.writes {
            assert!(
                stems.contains(&stem.to_string()),
                "{} writes {stem}, which the book lacks",
                c.example
            );
        }
    }
}
