//! The audit's table 2, faults: runs stopped by a signal or by a full disk over a folder that
//! holds earlier results, repeat runs of every mode into one folder, and a folder that holds
//! the reader's own files. (A redraw killed at many moments, and `reproduce` stopped while its
//! chapter runs, are the fault-injection tests of `output_folder`.)

use std::time::Duration;

use super::{copy_figures, run_all, unchanged, unchanged_once_claimed, Case, Folder};
use crate::common::run_example;

/// A full disk, as far as the run can tell: writes past 4 KiB fail with "File too large"
/// (the size limit's signal is ignored, so the write returns the error instead). The
/// chapter's CSVs fit; its figures do not.
const DISK_FULL: &str = "trap '' XFSZ; ulimit -f 8";

/// A complete folder of earlier results: a quick run of the one chapter that needs no GPU.
fn earlier_results(f: &Folder) {
    let o = run_example(
        "loop_permutation",
        &[&["--quick", "--out"][..], &[f.out.to_str().unwrap()]].concat(),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
}

fn figures(f: &Folder) {
    copy_figures(&f.out);
}

/// The folder is a consistent set of records: every figure and table exactly what its CSV
/// draws, and no bookkeeping of an interrupted run left.
fn consistent(f: &Folder) -> Result<(), String> {
    let problems = cmbook::harness::record::audit_records(
        &f.out,
        cmbook::chapters::reproduce::is_book_record,
    )
    .map_err(|e| e.to_string())?;
    let stray: Vec<_> = super::snapshot(&f.out)
        .into_keys()
        .filter(|k| k.to_string_lossy().contains(".cmbook"))
        .collect();
    if problems.is_empty() && stray.is_empty() {
        Ok(())
    } else {
        Err(format!("{problems:?} {stray:?}"))
    }
}

fn cases() -> Vec<Case> {
    let lp = "loop_permutation";
    let r = "reproduce";
    let full = ["--out", "{out}"];
    let quick = ["--quick", "--out", "{out}"];
    let mut cases = Vec::new();
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        cases.push(
            Case::new(
                format!("signal {signal} 1 s into a full run over earlier results"),
                lp,
                &full,
            )
            .prepare(earlier_results)
            .kill_after(Duration::from_secs(1), signal)
            .after(|f| unchanged_once_claimed()(f)),
        );
    }
    cases.push(
        Case::new("a quick re-run killed at its first large write", lp, &quick)
            .prepare(earlier_results)
            .shell("ulimit -f 8")
            .stopped(libc::SIGXFSZ)
            .after(|f| unchanged_once_claimed()(f)),
    );
    cases.push(
        Case::new(
            "--redraw-only after a killed re-run",
            r,
            &["--out", "{out}", "--redraw-only"],
        )
        .prepare(|f| {
            earlier_results(f);
            let args = ["-c", "ulimit -f 8; exec \"$0\" --quick --out \"$1\""];
            let killed = std::process::Command::new("sh")
                .args(args)
                .arg(crate::common::example("loop_permutation"))
                .arg(&f.out)
                .output()
                .unwrap();
            assert!(!killed.status.success());
        })
        .ok(&["redrew"])
        .after(consistent),
    );
    for (what, example, args) in [
        ("a quick run on a full disk", lp, &quick[..]),
        ("--redraw-only on a full disk", r, &["--out", "{out}", "--redraw-only"][..]),
        ("--compare on a full disk", r, &["--out", "{out}", "--compare"][..]),
    ] {
        let prepare =
            if example == lp { earlier_results as fn(&Folder) } else { figures };
        cases.push(
            Case::new(what, example, args)
                .prepare(prepare)
                .shell(DISK_FULL)
                .refused(&["cannot write", "File too large"])
                .after(|f| unchanged()(f)),
        );
    }
    cases.push(
        Case::new(
            "reproduce --quick twice",
            r,
            &["--quick", "--only", lp, "--out", "{out}"],
        )
        .prepare(|f| {
            let o = run_example(
                "reproduce",
                &[
                    "--quick",
                    "--only",
                    "loop_permutation",
                    "--out",
                    f.out.to_str().unwrap(),
                ],
            );
            assert_eq!(o.code, 0, "{}", o.stderr);
        })
        .ok(&["comparison written to"])
        .after(consistent),
    );
    for then in ["--redraw-only", "--roofline", "--compare"] {
        cases.push(
            Case::new(format!("--compare, then {then}"), r, &["--out", "{out}", then])
                .ok(&[if then == "--compare" {
                    "comparison written"
                } else {
                    "every figure and table"
                }])
                .prepare(|f| {
                    copy_figures(&f.out);
                    let o = run_example(
                        "reproduce",
                        &["--out", f.out.to_str().unwrap(), "--compare"],
                    );
                    assert_eq!(o.code, 0, "{}", o.stderr);
                })
                .after(consistent),
        );
    }
    // The reader's own files beside the records: left as they are, and said so.
    cases.push(
        Case::new(
            "a folder with the reader's own files",
            r,
            &["--out", "{out}", "--redraw-only"],
        )
        .prepare(|f| {
            copy_figures(&f.out);
            std::fs::write(f.out.join("notes.txt"), "mine").unwrap();
            std::fs::write(f.out.join("README.md"), "my notes").unwrap();
            std::fs::write(f.out.join("data/other.csv"), "a,b\n1,2\n").unwrap();
            std::fs::write(f.out.join("data/README.csv"), "# gpu: mine\nx\n1\n")
                .unwrap();
        })
        .ok(&["left alone", "data/README.csv", "data/other.csv"])
        .after(|f| {
            let same = |name: &str, text: &str| {
                std::fs::read_to_string(f.out.join(name)).ok().as_deref() == Some(text)
            };
            let kept = same("notes.txt", "mine")
                && same("README.md", "my notes")
                && same("data/other.csv", "a,b\n1,2\n")
                && !f.out.join("other.md").exists();
            if kept {
                consistent(f)
            } else {
                Err("the reader's files were changed".into())
            }
        }),
    );
    cases
}

#[test]
fn a_fault_leaves_earlier_results_intact_and_repeat_runs_succeed() {
    run_all(&cases(), "faults");
}
