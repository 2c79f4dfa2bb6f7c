//! A reader's run beside the book's, from two committed folders of records: the book's
//! `figures/` and the records of a `reproduce --quick` run on an H100
//! (`tests/data/compare-quick-h100/`, the files the registry's headlines and claims read).

use std::path::Path;
use std::process::Command;

use cmbook::chapters::ALL;
use cmbook::harness::compare;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn book() -> std::path::PathBuf {
    Path::new(ROOT).join("figures")
}

fn quick() -> std::path::PathBuf {
    Path::new(ROOT).join("tests/data/compare-quick-h100")
}

#[test]
fn every_headline_is_in_the_books_data_and_every_claim_holds_there() {
    let (headlines, claims) = compare::compare(ALL, &book(), &book());
    assert!(headlines.len() >= 2 * ALL.len() - 1, "{} headlines", headlines.len());
    for h in &headlines {
        assert!(
            h.book.is_some(),
            "{} / {}: not found in figures/data",
            h.chapter,
            h.what
        );
        assert_eq!(h.verdict(), "the same (within 2%)", "{h:?}");
    }
    assert!(claims.len() >= ALL.len());
    for c in &claims {
        assert!(matches!(c.book, Some((true, _))), "the book's own claim fails: {c:?}");
    }
}

#[test]
fn a_quick_run_is_compared_only_where_the_sizes_match() {
    let (headlines, claims) = compare::compare(ALL, &quick(), &book());
    let row = |what: &str| headlines.iter().find(|h| h.what == what).unwrap();
    // 64 MiB against 4096 MiB: the numbers are shown, not compared.
    let copy = row("device copy, copy kernel");
    assert!(copy.theirs.is_some() && copy.ratio().is_none(), "{copy:?}");
    assert!(copy.verdict().starts_with("not comparable"), "{copy:?}");
    assert_eq!(
        row("tiled DP, whole table, n = 1024").verdict(),
        "not measured in this run"
    );
    // Claims are checked on each side's own data.
    let claim = |text: &str| claims.iter().find(|c| c.text.starts_with(text)).unwrap();
    assert!(matches!(claim("4 chains on 4 streams").theirs, Some((true, _))));
    let matmul = claim("the best tiled step reaches");
    assert!(matches!(matmul.theirs, Some((false, v)) if v < 80.0), "{matmul:?}");
    assert!(matches!(matmul.book, Some((true, v)) if v > 80.0), "{matmul:?}");
    assert!(compare::was_quick(&quick()) && !compare::was_quick(&book()));
    let md = compare::markdown(&headlines, &claims, &[], "my-gpu", true);
    assert!(md.contains("This was a `--quick` run") && md.contains("| atax |"), "{md}");
    assert!(md.contains("NVIDIA H100 80GB HBM3"));
    let html = compare::html(&headlines, &claims, &[], "<my gpu>", true);
    assert!(html.contains("&lt;my gpu&gt;") && !html.contains("<my gpu>"));
    assert_eq!(html.matches("<tr>").count(), headlines.len() + claims.len() + 2);
}

#[test]
fn reproduce_writes_the_comparison_page_without_a_gpu() {
    let exe = std::env::current_exe().unwrap();
    let reproduce = exe.parent().unwrap().parent().unwrap().join("examples/reproduce");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    for entry in std::fs::read_dir(quick().join("data")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, dir.path().join("data").join(p.file_name().unwrap()))
            .unwrap();
    }
    let out = Command::new(reproduce)
        .arg("--out")
        .arg(dir.path())
        .arg("--compare")
        .arg("--book")
        .arg(book())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(dir.path().join("compare.md")).unwrap();
    assert!(md.starts_with("# Your GPU beside the book's"), "{md}");
    assert!(dir.path().join("compare.html").exists());
}

/// A table with no rows (every section behind it skipped on the reader's GPU) has provenance
/// and `# rows: 0` but no header: its headlines read "not measured", while a file that is
/// merely empty is still refused.
#[test]
fn a_table_whose_sections_were_all_skipped_is_not_measured_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    for f in std::fs::read_dir(quick().join("data")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), data.join(f.file_name())).unwrap();
    }
    let targets = data.join("cmm-beyond-targets.csv");
    let text = std::fs::read_to_string(&targets).unwrap();
    let meta: String = text
        .lines()
        .filter(|l| l.starts_with("# ") && !l.starts_with("# rows:"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&targets, format!("{meta}# rows: 0\n")).unwrap();
    compare::check_records(ALL, dir.path()).unwrap();
    let (headlines, _) = compare::compare(ALL, dir.path(), &book());
    let tiled =
        headlines.iter().find(|h| h.what == "tiled DP, whole table, n = 1024").unwrap();
    assert_eq!(tiled.verdict(), "not measured in this run");
    std::fs::write(&targets, "").unwrap();
    let refused = compare::check_records(ALL, dir.path()).unwrap_err().to_string();
    assert!(refused.contains("no column header: the file is empty"), "{refused}");
}
