//! The audit's table 4, two runs writing one folder at once: one of them holds the folder and
//! the other is refused, naming the process that holds it, or they come one after the other;
//! never a failure that blames the data, and the folder is consistent afterwards.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::{copy_figures, snapshot};
use crate::common::{example, outcome, ROOT};

fn start(name: &str, args: &[&str], out: &Path) -> Child {
    Command::new(example(name))
        .args(args)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Runs `a` and `b` at once `times` times into one folder made by `prepare`; each must succeed
/// or be refused as "in use" (exit code 2), and `check` must hold afterwards. Prints how often
/// one was refused.
fn pairs(
    what: &str,
    times: usize,
    a: (&str, &[&str]),
    b: (&str, &[&str]),
    prepare: impl Fn(&Path),
    check: impl Fn(&Path),
) {
    let mut refused = 0;
    for i in 0..times {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out");
        prepare(&out);
        let runs = [start(a.0, a.1, &out), start(b.0, b.1, &out)];
        for child in runs {
            let o = outcome(child.wait_with_output().unwrap());
            match o.code {
                0 => {}
                2 if o.stderr.starts_with("error:")
                    && o.stderr.contains("is in use") =>
                {
                    refused += 1
                }
                code => {
                    panic!("{what}, pair {i}: exit {code}: {}{}", o.stderr, o.stdout)
                }
            }
        }
        check(&out);
    }
    println!("audit, two runs at once: {what}: {times} pairs, {refused} runs refused as in use, none failed");
}

/// Every figure and table in `out` is what its CSV draws, and no run left its bookkeeping.
fn consistent(out: &Path) {
    assert!(cmbook::harness::record::audit_records(
        out,
        cmbook::chapters::reproduce::is_book_record
    )
    .unwrap()
    .is_empty());
    assert!(snapshot(out).keys().all(|k| !k.to_string_lossy().contains(".cmbook")));
}

#[test]
fn two_runs_into_one_folder_never_fail_on_each_other() {
    let quick: &[&str] = &["--quick", "--reps", "1"];
    let seed1 = [quick, &["--seed", "1"]].concat();
    let seed2 = [quick, &["--seed", "2"]].concat();
    pairs(
        "loop_permutation twice",
        40,
        ("loop_permutation", &seed1),
        ("loop_permutation", &seed2),
        |_| {},
        consistent,
    );
    let book = snapshot(&Path::new(ROOT).join("figures"));
    pairs(
        "--redraw-only twice",
        20,
        ("reproduce", &["--redraw-only"]),
        ("reproduce", &["--redraw-only"]),
        copy_figures,
        |out| {
            let now = snapshot(out);
            let book: Vec<_> = book
                .iter()
                .filter(|(k, _)| !k.to_string_lossy().contains(".cmbook"))
                .collect();
            assert!(
                now.iter().collect::<Vec<_>>() == book,
                "the redraws changed the figures"
            );
        },
    );
    pairs(
        "loop_permutation writing while --compare reads",
        60,
        ("loop_permutation", quick),
        ("reproduce", &["--compare"]),
        copy_figures,
        consistent,
    );
}
