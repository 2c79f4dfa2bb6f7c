//! The audit's table 1, bad command-line input: every example's `--help`, every GPU example
//! without a GPU, every numeric flag of every example with each kind of bad value, the chain
//! solver's inputs, output folders that cannot take results, and `reproduce`'s modes.

use std::ffi::OsString;
use std::path::Path;

use cmbook::chapters::ALL;
use cmbook::harness::Needs;

use super::{copy_figures, run_all, Case, Folder};
use crate::common::{run_example, ROOT};

/// Every example a reader can run.
fn examples() -> Vec<&'static str> {
    let mut all: Vec<&'static str> = ALL.iter().map(|c| c.example).collect();
    all.extend(["exercises", "reproduce"]);
    all
}

/// The flags of `example` that take a number, read from its `--help` (a flag with a value
/// whose name is not a folder, a list or a choice).
fn numeric_flags(example: &str) -> Vec<String> {
    let help = run_example(example, &["--help"]).stdout;
    help.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let flag = words.find(|w| w.starts_with("--"))?.trim_end_matches(',');
            let value = words.next()?;
            let numeric = value.starts_with('<')
                && ![
                    "<DIR>",
                    "<OUT>",
                    "<ONLY>",
                    "<PART>",
                    "<SANITIZER>",
                    "<DIMS>",
                    "<CSV>",
                ]
                .contains(&value);
            numeric.then(|| flag.to_string())
        })
        .collect()
}

/// The folder exists no more than it did before: a refused run creates nothing.
fn no_folder(f: &Folder) -> Result<(), String> {
    if f.out.exists() {
        Err(format!("{} was created", f.out.display()))
    } else {
        Ok(())
    }
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for e in examples() {
        cases
            .push(Case::new("--help", e, &["--help"]).ok(&["Usage:"]).after(no_folder));
    }
    // Every GPU example on a machine without a GPU: one line, nothing written.
    for c in ALL.iter().filter(|c| c.needs != Needs::Cpu) {
        cases.push(
            Case::new(
                "a GPU example without a GPU",
                c.example,
                &["--quick", "--out", "{out}"],
            )
            .refused(&["no CUDA driver"])
            .after(no_folder),
        );
    }
    cases.push(
        Case::new("an exercise without a GPU", "exercises", &["1.4"])
            .refused(&["no CUDA driver"]),
    );
    // Each numeric flag with each kind of bad value; `--flag=value` so that a value starting
    // with `-` is a value, not a flag. The message names the flag.
    for e in examples() {
        for flag in numeric_flags(e) {
            let seed = flag == "--seed";
            let mut bad = vec![
                "18446744073709551616",
                "1e30",
                "abc",
                "",
                "NaN",
                "inf",
                "-1",
                "-inf",
            ];
            if !seed {
                bad.extend(["0", "18446744073709551615"]);
            }
            for value in bad {
                let arg = format!("{flag}={value}");
                cases.push(
                    Case::new(
                        format!("{flag} {value:?}"),
                        e,
                        &[arg.as_str(), "--out", "{out}"],
                    )
                    .refused(&[flag.as_str()])
                    .after(no_folder),
                );
            }
        }
    }
    // Repeated, unknown and stray arguments.
    let lp = "loop_permutation";
    for (what, args, words) in [
        ("--quick twice", vec!["--quick", "--quick"], "--quick"),
        ("--out twice", vec!["--out", "{out}", "--out", "{out}"], "--out"),
        ("--reps twice", vec!["--reps", "2", "--reps", "3"], "--reps"),
        ("--seed twice", vec!["--seed", "2", "--seed", "3"], "--seed"),
        ("an unknown flag", vec!["--frobnicate"], "--frobnicate"),
        ("a stray argument", vec!["stray"], "stray"),
        ("--out empty", vec!["--out", ""], "--out"),
        ("--out= empty", vec!["--out="], "--out"),
        ("--counters on a chapter with no kernels", vec!["--counters"], "counters"),
    ] {
        cases.push(Case::new(what, lp, &args).refused(&[words]).after(no_folder));
    }
    for (what, e, args, words) in [
        ("--part bogus", "cmm_beyond", vec!["--part", "bogus"], "--part"),
        ("--part bogus", "cmm_diagonal", vec!["--part", "bogus"], "--part"),
        ("--part bogus", "atax", vec!["--part", "bogus"], "--part"),
        ("an exercise that does not exist", "exercises", vec!["99.9"], "99.9"),
        ("an empty exercise", "exercises", vec![""], "exercise"),
    ] {
        cases.push(Case::new(what, e, &args).refused(&[words]));
    }
    // The chain solver: chains it cannot solve are refused with the reason.
    let cmm = "cmm_diagonal";
    for (dims, words) in [
        ("5", "2 dimensions"),
        ("3,0,4", "zero"),
        ("3,-1,4", "-1"),
        ("2,,3", "--dims"),
        ("2, 3", "--dims"),
        ("2.5,3", "--dims"),
        ("4294967296,2,3", "--dims"),
        ("4294967295,4294967295,4294967295", "does not fit"),
        ("4294967295,2,4294967295,2,4294967295", "does not fit"),
    ] {
        let args = ["--cpu-only", "--dims", dims];
        cases.push(Case::new(format!("--dims {dims}"), cmm, &args).refused(&[words]));
    }
    // Chains whose optimum fits although their candidates overflow: answered exactly (the
    // optimum by hand: one order's products).
    for (dims, cost) in [
        ("4000000000,1,4000000000,1", "8000000000"),
        ("1,4000000000,1,4000000000", "8000000000"),
        ("5,7", "0"),
    ] {
        let args = ["--cpu-only", "--dims", dims];
        let words = format!("optimal cost: {cost}");
        cases.push(
            Case::new(format!("--dims {dims}"), cmm, &args).ok(&[words.as_str()]),
        );
    }
    cases.push(
        Case::new("one matrix", cmm, &["--cpu-only", "--matrices", "1"])
            .ok(&["optimal cost: 0"]),
    );
    for (what, args, words) in [
        (
            "--dims and --matrices",
            vec!["--dims", "2,3", "--matrices", "5"],
            "--matrices",
        ),
        ("--cpu-only alone", vec!["--cpu-only"], "--dims"),
        ("--show-order alone", vec!["--show-order"], "--dims"),
        ("--matrices 46340", vec!["--matrices", "46340"], "46339"),
        (
            "--dims twice",
            vec!["--cpu-only", "--dims", "2,3", "--dims", "4,5"],
            "--dims",
        ),
        (
            "--part with --dims",
            vec!["--cpu-only", "--dims", "2,3,4", "--part", "stride"],
            "--part",
        ),
    ] {
        cases.push(Case::new(what, cmm, &args).refused(&[words]));
    }
    let many: String =
        (0..46341).map(|i| (2 + i % 7).to_string()).collect::<Vec<_>>().join(",");
    cases.push(
        Case::new("--dims with 46341 values", cmm, &["--dims", many.as_str()])
            .refused(&["46339"]),
    );
    cases.push(
        Case::new(
            "--cpu-only with a table larger than the memory",
            cmm,
            &["--cpu-only", "--matrices", "46339"],
        )
        // 4 GiB of address space: the 24 GiB table cannot fit, whatever the machine has.
        .shell("ulimit -v 4194304")
        .refused(&["memory"]),
    );
    // Output folders that cannot take results: refused before anything is measured.
    let quick = ["--quick", "--reps", "1", "--out"];
    fn with<'a>(quick: &[&'a str], out: &'a str) -> Vec<&'a str> {
        quick.iter().copied().chain([out]).collect()
    }
    for (what, out, words, prepare) in [
        ("--out a file", "{root}/file", "is a file", file_at as fn(&Folder)),
        ("--out under a file", "{root}/file/sub", "not a folder", file_at),
        ("--out /dev/full", "/dev/full", "/dev/full", nothing),
        ("--out /dev/null", "/dev/null", "/dev/null", nothing),
        ("--out a symlink loop", "{root}/loop", "loop", symlink_loop),
        ("--out a dangling symlink", "{root}/dangling", "leads nowhere", dangling),
    ] {
        cases.push(
            Case::new(what, lp, &with(&quick, out))
                .prepare(prepare)
                .refused(&[words])
                .after(root_unchanged),
        );
    }
    cases.push(
        Case::new(
            "--out with spaces and Unicode",
            lp,
            &with(&quick, "{root}/my results ü"),
        )
        .ok(&["written to"])
        .after(|f| written(&f.root.join("my results ü"))),
    );
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        let mut args: Vec<OsString> = quick.iter().map(OsString::from).collect();
        let case = Case::new("--out not UTF-8", lp, &[]).ok(&["written to"]);
        // The folder's name is made in `prepare`'s root; the argument is its absolute path.
        let odd = OsString::from_vec(b"out-\xff".to_vec());
        args.push(odd.clone());
        cases.push(case.os_args(args).after(move |f| written(&f.root.join(&odd))));
    }
    cases.extend(reproduce_cases());
    cases
}

fn nothing(_: &Folder) {}

fn file_at(f: &Folder) {
    std::fs::write(f.root.join("file"), "mine").unwrap();
}

fn symlink_loop(f: &Folder) {
    std::os::unix::fs::symlink(f.root.join("loop"), f.root.join("loop")).unwrap();
}

fn dangling(f: &Folder) {
    std::os::unix::fs::symlink(f.root.join("nowhere"), f.root.join("dangling"))
        .unwrap();
}

/// The case's root folder holds what `prepare` put there and nothing else.
fn root_unchanged(f: &Folder) -> Result<(), String> {
    let names: Vec<String> = std::fs::read_dir(&f.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !["file", "loop", "dangling"].contains(&n.as_str()))
        .collect();
    match std::fs::read_to_string(f.root.join("file")) {
        Ok(t) if t != "mine" => {
            return Err("the file given as --out was changed".into())
        }
        _ => {}
    }
    if names.is_empty() {
        Ok(())
    } else {
        Err(format!("created {names:?}"))
    }
}

/// A run wrote its records into `dir` and left no bookkeeping behind.
fn written(dir: &Path) -> Result<(), String> {
    let files = super::snapshot(dir);
    let stray: Vec<_> =
        files.keys().filter(|k| k.to_string_lossy().contains(".cmbook")).collect();
    if !files.contains_key(Path::new("data/tiling-traversal.csv")) || !stray.is_empty()
    {
        return Err(format!(
            "expected the records and nothing else, found {:?}",
            files.keys()
        ));
    }
    Ok(())
}

fn reproduce_cases() -> Vec<Case> {
    let r = "reproduce";
    let figures = |f: &Folder| copy_figures(&f.out);
    let mut cases = Vec::new();
    for (what, args, words) in [
        ("no --out", vec!["--quick"], "--out"),
        (
            "--appendix-table with --out",
            vec!["--appendix-table", "--out", "{out}"],
            "--appendix-table",
        ),
        ("--only bogus", vec!["--out", "{out}", "--only", "bogus"], "bogus"),
        ("--only empty", vec!["--out", "{out}", "--only", ""], "--only"),
        ("--jobs alone", vec!["--out", "{out}", "--jobs", "2"], "--sanitize"),
        (
            "--compare with --redraw-only",
            vec!["--out", "{out}", "--compare", "--redraw-only"],
            "--redraw-only",
        ),
        (
            "--redraw-only with --roofline",
            vec!["--out", "{out}", "--redraw-only", "--roofline"],
            "--roofline",
        ),
        ("--book alone", vec!["--out", "{out}", "--book", "{root}"], "--compare"),
        (
            "--book with --redraw-only",
            vec!["--out", "{out}", "--redraw-only", "--book", "{root}"],
            "--book",
        ),
        (
            "--book a missing folder",
            vec!["--out", "{out}", "--compare", "--book", "{root}/missing"],
            "missing",
        ),
        (
            "--sanitize without a GPU",
            vec!["--out", "{out}", "--sanitize"],
            "no CUDA driver",
        ),
        (
            "--compare on a missing folder",
            vec!["--out", "{root}/missing", "--compare"],
            "missing",
        ),
        (
            "--redraw-only on a folder without data/",
            vec!["--out", "{root}", "--redraw-only"],
            "data/",
        ),
    ] {
        cases.push(Case::new(what, r, &args).prepare(figures).refused(&[words]));
    }
    // --counters without Nsight Compute: one refusal, before any chapter starts.
    cases.push(
        Case::new("--counters without ncu", r, &["--out", "{out}", "--counters"])
            .prepare(figures)
            .shell("export PATH=/nonexistent")
            .refused(&["ncu"]),
    );
    // Were it not refused, the quick run would write into the checkout: the file-size limit
    // of 0 stops it at its first byte, so that a failing case cannot change the book.
    let book = format!("{ROOT}/figures");
    cases.push(
        Case::new(
            "--quick into the book's own figures/",
            r,
            &["--quick", "--out", book.as_str()],
        )
        .shell("ulimit -f 0")
        .refused(&["figures"]),
    );
    cases.push(
        Case::new(
            "--sanitize without a GPU, into a new folder",
            r,
            &["--out", "{out}", "--sanitize"],
        )
        .refused(&["no CUDA driver"])
        .after(no_folder),
    );
    cases
}

#[test]
fn bad_command_lines_are_refused_clearly_and_good_ones_answered() {
    run_all(&cases(), "command lines");
}
