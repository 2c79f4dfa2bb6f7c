//! The output folder under hostile use, as a reader runs the examples: repeat runs of every
//! `reproduce` mode into one folder succeed, a run killed while writing leaves each file old or
//! new, a folder another run holds or one that cannot take results is refused (exit code 2)
//! before anything is measured, corrupted records are refused by file and line, and files that
//! are not the book's are left alone. Each case checks the exit code, the message and what the
//! folder holds afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{example, outcome, run_example, Outcome, ROOT};

/// `loop_permutation` with `args` and then the folder `out` (the last argument, `--out`'s).
fn loop_permutation(args: &[&str], out: &Path) -> Outcome {
    let mut all: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    all.push(out.as_os_str());
    run_example("loop_permutation", &all)
}

fn reproduce(out: &Path, mode: &[&str]) -> Outcome {
    outcome(
        Command::new(example("reproduce"))
            .arg("--out")
            .arg(out)
            .args(mode)
            .output()
            .unwrap(),
    )
}

/// Every file under `dir` (relative path → bytes).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                pending.push(p);
            } else {
                files.insert(
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    files
}

/// A copy of the book's `figures/` in a fresh folder.
fn copy_of_figures() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    for (rel, bytes) in snapshot(&Path::new(ROOT).join("figures")) {
        let to = out.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    (tmp, out)
}

fn assert_ok(o: &Outcome, what: &str) {
    assert_eq!(o.code, 0, "{what}: stdout {} stderr {}", o.stdout, o.stderr);
}

fn assert_refused(o: &Outcome, words: &[&str]) {
    assert_eq!(o.code, 2, "stdout {} stderr {}", o.stdout, o.stderr);
    assert!(
        o.stderr.starts_with("error:") && !o.stderr.contains("panicked"),
        "{}",
        o.stderr
    );
    for w in words {
        assert!(o.stderr.contains(w), "expected `{w}` in: {}", o.stderr);
    }
}

#[test]
fn every_sequence_of_reproduce_modes_into_one_folder_succeeds_and_redraws_exactly() {
    let (_tmp, out) = copy_of_figures();
    let before = snapshot(&out);
    for mode in [
        &["--compare"][..],
        &["--redraw-only"],
        &["--compare"],
        &["--compare"],
        &["--redraw-only"],
    ] {
        assert_ok(&reproduce(&out, mode), &format!("{mode:?}"));
    }
    let mut after = snapshot(&out);
    for own in cmbook::chapters::reproduce::OWN_FILES {
        assert!(after.remove(Path::new(own)).is_some(), "{own} was not written");
    }
    assert!(after == before, "a redraw changed the book's files");
    // The audit every test of the book's figures makes passes with the pages beside them.
    assert!(cmbook::harness::plot::audit_figures(&out).unwrap().is_empty());
    // The roofline composes into the same folder, after the comparison, and its audit passes.
    assert_ok(&reproduce(&out, &["--roofline"]), "--roofline after --compare");
    assert_ok(&reproduce(&out, &["--redraw-only"]), "--redraw-only after --roofline");
}

#[test]
fn a_measuring_reproduce_run_twice_into_one_folder_succeeds_under_its_lock() {
    // The one chapter a machine without a GPU measures; its example writes under the lock
    // reproduce holds, and the second run's audit and comparison replace the first's pages.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mine");
    for run in ["first", "second"] {
        let o = reproduce(&out, &["--quick", "--only", "loop_permutation"]);
        assert_ok(&o, &format!("the {run} measuring run"));
        assert!(o.stdout.contains("comparison written to"), "{}", o.stdout);
    }
    let md = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(md.starts_with("# Your GPU beside the book's"), "{md}");
    assert!(
        !out.join(cmbook::harness::run::LOCK_FILE).exists(),
        "the lock outlived the run"
    );
}

#[test]
fn files_that_are_not_the_books_records_are_left_alone() {
    let (_tmp, out) = copy_of_figures();
    std::fs::write(out.join("README.md"), "the reader's notes").unwrap();
    std::fs::write(out.join("data/README.csv"), "# gpu: mine\nnot,a\nrecord\n")
        .unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = reproduce(&out, &["--redraw-only"]);
    assert_ok(&o, "--redraw-only with the reader's files");
    assert!(
        o.stdout.contains(
            "note: left alone (not the book's records, or not regular files)"
        ) && o.stdout.contains("data/README.csv"),
        "{}",
        o.stdout
    );
    assert_eq!(
        std::fs::read_to_string(out.join("README.md")).unwrap(),
        "the reader's notes"
    );
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert_ok(&reproduce(&out, &["--compare"]), "--compare with the reader's files");
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_folder_is_refused_and_its_target_kept() {
    let (tmp, out) = copy_of_figures();
    let victim = tmp.path().join("victim.txt");
    std::fs::write(&victim, "outside").unwrap();
    let link = out.join("ceilings-copy.svg");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = reproduce(&out, &["--redraw-only"]);
    assert_refused(
        &o,
        &["refusing to write", "ceilings-copy.svg", "outside its folder"],
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "outside");
}

#[cfg(unix)]
#[test]
fn a_redraw_killed_while_writing_leaves_every_file_old_or_new() {
    let (_tmp, out) = copy_of_figures();
    let before = snapshot(&out);
    // A file-size limit of 4 KiB kills the process (SIGXFSZ) at its first write of a larger
    // file: as a kill at that moment would.
    let o = outcome(
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -f 4; exec \"$0\" --out \"$1\" --redraw-only")
            .arg(example("reproduce"))
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert_ne!(o.code, 0, "the limit did not stop the run: {}", o.stdout);
    let after = snapshot(&out);
    for (rel, bytes) in &before {
        assert!(after.get(rel) == Some(bytes), "{} is torn", rel.display());
    }
    // What is left besides the book's files is the killed run's temporary file and its lock
    // file, and the next run clears both.
    assert_ok(&reproduce(&out, &["--redraw-only"]), "the redraw after the kill");
    assert!(snapshot(&out) == before, "leftovers stayed after the next run");
}

/// How many times the fault-injection test kills a run.
const KILLS: u64 = 60;

/// A redraw killed with SIGKILL at [`KILLS`] seeded moments spread over its whole run: each
/// file is always whole (the folder's old file, the redraw's, or the run's own bookkeeping),
/// and once the next run has claimed the folder it holds exactly the old state or exactly the
/// new one.
#[cfg(unix)]
#[test]
fn a_run_killed_at_any_moment_leaves_the_folder_old_or_new() {
    use rand::{Rng, SeedableRng};
    let new = snapshot(&Path::new(ROOT).join("figures"));
    // The old state: the same records, their figures and tables stale (every other one) or
    // missing; a redraw turns it into the new state, the book's own files.
    let old: BTreeMap<PathBuf, Vec<u8>> = new
        .iter()
        .enumerate()
        .filter_map(|(i, (rel, bytes))| match (rel.starts_with("data"), i % 2) {
            (true, _) => Some((rel.clone(), bytes.clone())),
            (false, 0) => {
                Some((rel.clone(), format!("stale {}", rel.display()).into()))
            }
            (false, _) => None,
        })
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let put_old = || {
        let _ = std::fs::remove_dir_all(&out);
        for (rel, bytes) in &old {
            let to = out.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, bytes).unwrap();
        }
    };
    let redraw = || {
        Command::new(example("reproduce"))
            .arg("--out")
            .arg(&out)
            .arg("--redraw-only")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    // One whole run: how long the kills are spread over.
    put_old();
    let started = std::time::Instant::now();
    assert!(redraw().wait().unwrap().success());
    let whole = started.elapsed();
    assert!(
        snapshot(&out) == new,
        "an uninterrupted redraw did not make the new state"
    );
    let bookkeeping =
        |rel: &Path| rel.file_name().unwrap().to_string_lossy().starts_with(".cmbook");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    let (mut found_old, mut found_new, mut undone) = (0, 0, 0);
    for kill in 0..KILLS {
        put_old();
        let mut child = redraw();
        std::thread::sleep(whole.mul_f64(rng.gen_range(0.0..1.2)));
        let _ = child.kill();
        child.wait().unwrap();
        let left = snapshot(&out);
        for (rel, bytes) in &left {
            assert!(
                old.get(rel) == Some(bytes)
                    || new.get(rel) == Some(bytes)
                    || bookkeeping(rel),
                "kill {kill}: {} is neither the old file nor the new one",
                rel.display()
            );
        }
        undone += left.keys().any(|r| {
            r.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(cmbook::harness::undo::JOURNAL_PREFIX)
        }) as u32;
        // The next run's claim finds the killed run's journal and undoes it.
        drop(cmbook::harness::run::claim_out(&out).unwrap());
        let state = snapshot(&out);
        if state == old {
            found_old += 1;
        } else if state == new {
            found_new += 1;
        } else {
            let mixed: Vec<String> = state
                .iter()
                .filter(|(rel, bytes)| old.get(*rel) != Some(*bytes))
                .map(|(rel, _)| rel.display().to_string())
                .collect();
            panic!("kill {kill}: the folder is neither old nor new: {mixed:?}");
        }
    }
    println!(
        "{KILLS} kills over a {:.0} ms redraw: {found_old} found the folder old, {found_new} \
         new; {undone} of them had a half-done run to undo",
        whole.as_secs_f64() * 1e3
    );
    assert!(undone > 0, "no kill came while the run was writing");
}

#[test]
fn a_folder_another_run_holds_is_refused_with_its_process() {
    let (_tmp, out) = copy_of_figures();
    let before = snapshot(&out);
    let lock = cmbook::harness::run::claim_out(&out).unwrap();
    for mode in [&["--redraw-only"][..], &["--compare"], &["--roofline"]] {
        let o = reproduce(&out, mode);
        assert_refused(&o, &["is in use", &format!("process {}", std::process::id())]);
    }
    let o = loop_permutation(&["--quick", "--reps", "1", "--out"], &out);
    assert_refused(&o, &["is in use"]);
    drop(lock);
    assert!(snapshot(&out) == before, "a refused run changed the folder");
}

#[test]
fn an_output_folder_that_is_a_file_is_refused_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("results");
    std::fs::write(&file, "mine").unwrap();
    let o = loop_permutation(&["--out"], &file);
    assert_refused(&o, &["is a file, not a folder", "results"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[cfg(unix)]
#[test]
fn an_output_folder_whose_name_is_not_utf8_works() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join(std::ffi::OsStr::from_bytes(b"out-\xff"));
    let o = loop_permutation(&["--quick", "--reps", "1", "--out"], &out);
    assert_ok(&o, "a non-UTF-8 --out");
    assert!(out.join("data/tiling-traversal.csv").is_file());
    let rec = cmbook::harness::record::read_csv(&out.join("data/tiling-traversal.csv"))
        .unwrap();
    // The examples are built with the test binary's profile.
    let release = if cfg!(debug_assertions) { "" } else { " --release" };
    assert_eq!(
        rec.meta.get("command"),
        Some(
            format!(
                "cargo run{release} --example loop_permutation -- --quick --reps 1"
            )
            .as_str()
        )
    );
}

/// `figures/` with the headline record `stem` rewritten by `edit`.
fn figures_with(
    stem: &str,
    edit: impl Fn(&str) -> String,
) -> (tempfile::TempDir, PathBuf) {
    let (tmp, out) = copy_of_figures();
    let path = out.join("data").join(format!("{stem}.csv"));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(&text)).unwrap();
    (tmp, out)
}

#[test]
fn corrupted_headline_records_are_refused_by_file_and_line() {
    // The copy bandwidth headline: the median (second column) of this row.
    let summary = "ceilings-summary";
    let row = "\"device copy, copy kernel\",";
    let text = std::fs::read_to_string(
        Path::new(ROOT).join(format!("figures/data/{summary}.csv")),
    )
    .unwrap();
    let line = text.lines().position(|l| l.starts_with(row)).unwrap() + 1;
    let with_median = |bad: &'static str| {
        move |t: &str| {
            t.lines()
                .map(|l| match l.strip_prefix(row) {
                    Some(rest) => {
                        format!("{row}{bad},{}\n", rest.split_once(',').unwrap().1)
                    }
                    None => format!("{l}\n"),
                })
                .collect::<String>()
        }
    };
    for (bad, why) in [
        ("-3030", "is negative"),
        ("NaN", "not a finite number"),
        ("1e300", "beyond any plausible"),
    ] {
        let (_tmp, out) = figures_with(summary, with_median(bad));
        let where_ = format!("{summary}.csv, line {line}: column `median`: `{bad}`");
        for mode in ["--compare", "--redraw-only"] {
            assert_refused(&reproduce(&out, &[mode]), &[&where_, why]);
        }
        assert!(!out.join("compare.md").exists() && !out.join("compare.html").exists());
    }
    // Cut mid-row, and emptied: refused, naming the file.
    let cut = |t: &str| t[..t.find(row).unwrap() + row.len() + 2].to_string();
    let (_tmp, out) = figures_with(summary, cut);
    assert_refused(&reproduce(&out, &["--compare"]), &[&format!("{summary}.csv")]);
    let (_tmp, out) = figures_with(summary, |_| String::new());
    assert_refused(
        &reproduce(&out, &["--compare"]),
        &[&format!("{summary}.csv"), "no column"],
    );
}

#[test]
fn crlf_line_endings_and_a_byte_order_mark_compare_like_the_original() {
    let (_tmp, out) = copy_of_figures();
    for stem in
        cmbook::chapters::ALL.iter().flat_map(|c| c.headlines).map(|h| h.pick.stem)
    {
        let path = out.join("data").join(format!("{stem}.csv"));
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.starts_with('\u{feff}') {
            std::fs::write(&path, format!("\u{feff}{}", text.replace('\n', "\r\n")))
                .unwrap();
        }
    }
    let o = reproduce(&out, &["--compare"]);
    assert_ok(&o, "--compare on CRLF records with a BOM");
    let md = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(!md.contains("not measured"), "{md}");
    assert!(!md.contains("not comparable"), "{md}");
}

/// A `--quick` run's cost taken as the difference of two short timings can come out below
/// zero: that is noted, not refused, so that a second quick run into the folder succeeds; the
/// same value in a full run's record is refused by file and line.
#[test]
fn a_negative_difference_is_noise_in_a_quick_run_and_refused_in_a_full_one() {
    let path = Path::new(ROOT).join("figures/data/hopper_memory-ladder.csv");
    let book = std::fs::read_to_string(&path).unwrap();
    // The book's first rung, its median made negative: the headline's column.
    let (rec, lines) = cmbook::harness::record::read_csv_with_lines(&path).unwrap();
    let median = rec.column("median_ns").unwrap();
    let (first, line) = (&rec.rows[0], lines[0]);
    let at = line as usize - 1;
    let negative: String = book
        .lines()
        .enumerate()
        .map(|(i, l)| match i == at {
            true => l.replacen(&format!(",{},", first[median]), ",-8.00,", 1),
            false => l.to_string(),
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(negative, book, "line {line} holds no median {}", first[median]);
    let line = format!("line {line}");
    for (quick, command) in [
        (true, "# command: cargo run --release --example hopper_memory -- --quick"),
        (false, "# command: cargo run --release --example hopper_memory"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("data")).unwrap();
        let text: String = negative
            .lines()
            .map(|l| if l.starts_with("# command:") { command } else { l })
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(tmp.path().join("data/hopper_memory-ladder.csv"), text).unwrap();
        let checked =
            cmbook::harness::compare::check_records(cmbook::chapters::ALL, tmp.path());
        match (quick, checked) {
            (true, Ok(notes)) => {
                assert!(notes
                    .iter()
                    .any(|n| n.contains("is negative") && n.contains(&line)))
            }
            (false, Err(e)) => {
                assert!(e.0.contains(&line) && e.0.contains("is negative"), "{e}")
            }
            (quick, other) => panic!("quick = {quick}: {other:?}"),
        }
    }
}

/// The process ids whose parent is `parent` (from /proc).
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (name) state ppid ...`: the name may hold spaces and parentheses.
            let ppid: u32 =
                stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent).then_some(pid)
        })
        .collect()
}

/// Whether process `pid` is still running (not gone, not a zombie waiting for its parent).
#[cfg(target_os = "linux")]
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}

/// Waits up to 30 s for `what`.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed().as_secs() < 30, "waited 30 s for {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `reproduce` stopped by SIGTERM or SIGINT passes the signal on to the chapter it runs and
/// exits as the signal would have made it; killed outright (SIGKILL, which nothing can pass
/// on), its chapter is ended by the system. Either way no chapter goes on writing into the
/// folder, and the earlier results in it are intact.
#[cfg(target_os = "linux")]
#[test]
fn reproduce_passes_a_signal_on_to_its_chapter_and_leaves_no_orphan() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mine");
    let o = reproduce(&out, &["--quick", "--only", "loop_permutation"]);
    assert_ok(&o, "the earlier run");
    let before = snapshot(&out);
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGKILL] {
        // A full run: long enough (minutes) to be stopped in the middle of its chapter.
        let parent = Command::new(example("reproduce"))
            .args(["--only", "loop_permutation", "--out"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut chapter = Vec::new();
        wait_until("the chapter to start", || {
            chapter = children_of(parent.id());
            !chapter.is_empty()
        });
        // SAFETY: a signal to the process this test started and has not yet waited for.
        unsafe { libc::kill(parent.id() as i32, signal) };
        let output = parent.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        if signal == libc::SIGKILL {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(output.status.signal(), Some(libc::SIGKILL));
        } else {
            assert_eq!(output.status.code(), Some(128 + signal), "{stderr}");
            assert!(
                stderr.contains(&format!("interrupted by signal {signal}"))
                    && stderr.contains("loop_permutation"),
                "{stderr}"
            );
        }
        wait_until("the chapter to end with reproduce", || !running(chapter[0]));
        drop(cmbook::harness::run::claim_out(&out).unwrap());
        assert!(
            snapshot(&out) == before,
            "signal {signal}: the earlier results changed"
        );
    }
}

/// A measuring run carries on past a chapter that fails or cannot run, and ends with a table
/// of what ran, what was skipped and what failed, with each one's reason; its exit code is 1
/// because a chapter failed, and the chapters that ran keep their results. The chapters are
/// stand-ins beside a copy of `reproduce` (which runs the examples next to itself): one fails
/// as a wrong result does, the others cannot run here, and `loop_permutation` is the real one.
#[cfg(unix)]
#[test]
fn a_measuring_run_carries_on_past_a_failed_chapter_and_ends_with_a_table() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::copy(example("reproduce"), bin.join("reproduce")).unwrap();
    for c in cmbook::chapters::ALL {
        let script = match c.example {
            "loop_permutation" => format!("exec '{}' \"$@\"", example(c.example).display()),
            "ceilings" => "echo 'error: 3 of 100 results differ' >&2; \
                           printf '3 of 100 results differ' > \"$CMBOOK_REASON_FILE\"; exit 1"
                .to_string(),
            _ => "echo 'error: needs a GPU' >&2; printf 'needs a GPU' > \"$CMBOOK_REASON_FILE\"; \
                  exit 2"
                .to_string(),
        };
        let path = bin.join(c.example);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    let out = tmp.path().join("mine");
    let o = outcome(
        Command::new(bin.join("reproduce"))
            .args(["--quick", "--out"])
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert_eq!(o.code, 1, "{}{}", o.stdout, o.stderr);
    let row = |name: &str, what: &str, why: &str| {
        o.stdout.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words.first() == Some(&name)
                && words.get(1) == Some(&what)
                && l.contains(why)
        })
    };
    assert!(
        row("ceilings", "failed", "exit code 1: 3 of 100 results differ"),
        "{}",
        o.stdout
    );
    assert!(row("loop_permutation", "ran", " s"), "{}", o.stdout);
    assert!(row("atax", "skipped", "needs a GPU"), "{}", o.stdout);
    assert!(o.stderr.contains("ceilings failed"), "{}", o.stderr);
    assert!(out.join("data/tiling-traversal.csv").is_file());
    assert!(out.join("compare.md").is_file());
    assert!(!out.join(cmbook::harness::run::LOCK_FILE).exists());
}
