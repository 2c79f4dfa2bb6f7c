//! The reliability audit of the examples under hostile use (no GPU), case by case: every row of
//! its tables (bad command lines, faults, hostile or corrupted data, two runs at once) is a case
//! here, run as a reader runs the examples, each with a time limit. A case states the exit code
//! and the words its message must hold, and what the folder must hold afterwards. The test
//! classifies every outcome as the audit did and prints its count line: inputs tried, clear
//! refusals, panics, silent wrong results, data lost or corrupted, hangs.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{example, outcome, Outcome, ROOT};

mod command_lines;
mod faults;
mod hostile_data;
mod two_runs;

/// Longer than any case needs (the slowest, a redraw of the book's figures, takes about a
/// second); a case that runs longer hangs.
const HANG: Duration = Duration::from_secs(60);

/// What a case must end with.
pub enum Expect {
    /// Exit code 0, stdout holding these words.
    Ok(Vec<String>),
    /// Exit code 2, one clear message (`error: ...`) holding these words.
    Refused(Vec<String>),
    /// Stopped by this signal, which the case sends or provokes (a good input, interrupted).
    Stopped(i32),
    /// Either answered (exit code 0) or refused clearly (exit code 2): an input at the edge
    /// of what makes sense, which must neither panic nor hang.
    Either,
}

/// What the case's folder must hold afterwards, given what it held before.
pub type After = Box<dyn Fn(&Folder) -> Result<(), String> + Sync>;

/// A case's scratch folder: `root/out` is the output folder the case writes into, prepared
/// before the run; `before` is what it held then.
pub struct Folder {
    pub root: PathBuf,
    pub out: PathBuf,
    pub before: BTreeMap<PathBuf, Vec<u8>>,
}

pub struct Case {
    /// The audit's row, as its table names it.
    pub what: String,
    pub example: &'static str,
    /// Arguments; `{out}` and `{root}` stand for the case's folders.
    pub args: Vec<OsString>,
    /// Fills the case's folder before the run.
    pub prepare: Box<dyn Fn(&Folder) + Sync>,
    /// Whether the input is bad (to be refused) or good (to be answered).
    pub expect: Expect,
    pub after: After,
    /// Runs the example under `sh -c` with this prefix (a resource limit).
    pub shell: Option<&'static str>,
    /// Sends this signal after this long.
    pub kill_after: Option<(Duration, i32)>,
}

impl Case {
    pub fn new(what: impl Into<String>, example: &'static str, args: &[&str]) -> Case {
        Case {
            what: what.into(),
            example,
            args: args.iter().map(OsString::from).collect(),
            prepare: Box::new(|_| {}),
            expect: Expect::Ok(Vec::new()),
            after: unchanged(),
            shell: None,
            kill_after: None,
        }
    }

    pub fn answered_or_refused(mut self) -> Case {
        self.expect = Expect::Either;
        self
    }

    pub fn stopped(mut self, signal: i32) -> Case {
        self.expect = Expect::Stopped(signal);
        self
    }

    pub fn kill_after(mut self, after: Duration, signal: i32) -> Case {
        self.kill_after = Some((after, signal));
        self.stopped(signal)
    }

    pub fn os_args(mut self, args: Vec<OsString>) -> Case {
        self.args = args;
        self
    }

    pub fn refused(mut self, words: &[&str]) -> Case {
        self.expect = Expect::Refused(words.iter().map(|w| w.to_string()).collect());
        self
    }

    pub fn ok(mut self, words: &[&str]) -> Case {
        self.expect = Expect::Ok(words.iter().map(|w| w.to_string()).collect());
        self
    }

    pub fn prepare(mut self, f: impl Fn(&Folder) + Sync + 'static) -> Case {
        self.prepare = Box::new(f);
        self
    }

    pub fn after(
        mut self,
        f: impl Fn(&Folder) -> Result<(), String> + Sync + 'static,
    ) -> Case {
        self.after = Box::new(f);
        self
    }

    pub fn shell(mut self, prefix: &'static str) -> Case {
        self.shell = Some(prefix);
        self
    }
}

/// The folder holds what it held before the run, byte for byte.
pub fn unchanged() -> After {
    Box::new(|f: &Folder| {
        let now = snapshot(&f.out);
        if now == f.before {
            return Ok(());
        }
        let changed: Vec<String> = now
            .keys()
            .chain(f.before.keys())
            .filter(|k| now.get(*k) != f.before.get(*k))
            .map(|k| k.display().to_string())
            .collect();
        Err(format!("the folder changed: {changed:?}"))
    })
}

/// The folder, once the next run has claimed it (and so undone what an interrupted run
/// changed), holds what it held before this case's run.
pub fn unchanged_once_claimed() -> After {
    Box::new(|f: &Folder| {
        drop(cmbook::harness::run::claim_out(&f.out).map_err(|e| e.to_string())?);
        unchanged()(f)
    })
}

/// Every file under `dir` (relative path → bytes); nothing when `dir` does not exist. Only
/// regular files are read (a FIFO or a link to a device is named, not read).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                pending.push(p);
            } else if meta.is_file() {
                files.insert(rel, std::fs::read(&p).unwrap());
            } else {
                let target = std::fs::read_link(&p).map(|t| t.display().to_string());
                files.insert(rel, format!("not a file: {target:?}").into_bytes());
            }
        }
    }
    files
}

/// Copies the book's `figures/` into `to` (its records, figures and tables: not a lock or a
/// temporary file a run may have there at this moment).
pub fn copy_figures(to: &Path) {
    for (rel, bytes) in snapshot(&Path::new(ROOT).join("figures")) {
        if rel.to_string_lossy().contains(".cmbook") {
            continue;
        }
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
}

/// How a case ended, as the audit classified outcomes.
#[derive(Debug, PartialEq, Eq, Clone, Copy, PartialOrd, Ord)]
pub enum Verdict {
    /// A bad input refused with exit code 2 and one clear message.
    ClearRefusal,
    /// A good input answered as expected.
    Answered,
    Panic,
    /// A bad input accepted, or a good one refused or answered wrongly.
    SilentWrong,
    /// The message or exit code is not the one documented (a refusal, but not a clear one).
    Unclear,
    DataLost,
    Hang,
}

fn run_case(case: &Case) -> (Verdict, String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let mut folder = Folder { out: root.join("out"), root, before: BTreeMap::new() };
    (case.prepare)(&folder);
    folder.before = snapshot(&folder.out);
    let fill = |a: &OsString| -> OsString {
        let s = a.to_string_lossy();
        if s.contains("{out}") || s.contains("{root}") {
            let out = folder.out.to_string_lossy();
            let root = folder.root.to_string_lossy();
            OsString::from(s.replace("{out}", &out).replace("{root}", &root))
        } else {
            a.clone()
        }
    };
    let args: Vec<OsString> = case.args.iter().map(fill).collect();
    let mut cmd = match case.shell {
        Some(prefix) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("{prefix}; exec \"$0\" \"$@\""))
                .arg(example(case.example));
            c
        }
        None => Command::new(example(case.example)),
    };
    let child = cmd
        .args(&args)
        .current_dir(&folder.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = done.send(());
        out
    });
    let started = Instant::now();
    if let Some((after, signal)) = case.kill_after {
        if finished.recv_timeout(after).is_err() {
            // SAFETY: the child has not been reaped (its waiter is still waiting).
            unsafe { libc::kill(pid as i32, signal) };
        }
    }
    if finished.recv_timeout(HANG.saturating_sub(started.elapsed())).is_err() {
        // SAFETY: the child has not been reaped (its waiter is still waiting).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let _ = waiter.join();
        return (Verdict::Hang, format!("no end after {:?}", started.elapsed()));
    }
    let raw = waiter.join().unwrap().unwrap();
    let signal = {
        use std::os::unix::process::ExitStatusExt;
        raw.status.signal()
    };
    let o: Outcome = outcome(raw);
    let told = format!(
        "exit {} {signal:?}; stderr: {}; stdout: {}",
        o.code,
        o.stderr.trim(),
        tail(&o.stdout)
    );
    let stopped_as_told =
        matches!(case.expect, Expect::Stopped(s) if signal == Some(s));
    if o.code == 101 || o.code == 134 || o.stderr.contains("panicked") {
        return (Verdict::Panic, told);
    }
    if signal.is_some() && !stopped_as_told {
        return (Verdict::Panic, told);
    }
    let verdict = match &case.expect {
        Expect::Refused(words) => match o.code {
            0 => Verdict::SilentWrong,
            2 if o.stderr.starts_with("error:")
                && words.iter().all(|w| o.stderr.contains(w.as_str())) =>
            {
                Verdict::ClearRefusal
            }
            _ => Verdict::Unclear,
        },
        Expect::Either => match o.code {
            0 => Verdict::Answered,
            2 if o.stderr.starts_with("error:") => Verdict::ClearRefusal,
            _ => Verdict::Unclear,
        },
        Expect::Stopped(_) if stopped_as_told => Verdict::Answered,
        Expect::Stopped(_) => Verdict::SilentWrong,
        Expect::Ok(words) => {
            if o.code == 0 && words.iter().all(|w| o.stdout.contains(w.as_str())) {
                Verdict::Answered
            } else {
                Verdict::SilentWrong
            }
        }
    };
    match (case.after)(&folder) {
        Err(e) => (Verdict::DataLost, format!("{e}; {told}")),
        Ok(()) => (verdict, told),
    }
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// Runs every case (two at a time), prints one line per case that failed and the count line,
/// and fails if any case did not end as it must.
pub fn run_all(cases: &[Case], what: &str) {
    use rayon::prelude::*;
    let results: Vec<(Verdict, String)> = cases.par_iter().map(run_case).collect();
    let mut counts: BTreeMap<Verdict, usize> = BTreeMap::new();
    let mut failed = Vec::new();
    for (case, (verdict, told)) in cases.iter().zip(&results) {
        *counts.entry(*verdict).or_default() += 1;
        if !matches!(verdict, Verdict::ClearRefusal | Verdict::Answered) {
            failed.push(format!(
                "{verdict:?}: {} {} [{}] -> {told}",
                case.example,
                case.what,
                case.args
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
    }
    let n = |v: Verdict| counts.get(&v).copied().unwrap_or(0);
    let bad = cases.iter().filter(|c| matches!(c.expect, Expect::Refused(_))).count();
    println!(
        "audit, {what}: inputs tried: {} ({bad} bad, {} good), clear refusals: {}, answered as \
         expected: {}, panics: {}, silent wrong results: {}, unclear refusals: {}, data lost \
         or corrupted: {}, hangs: {}",
        cases.len(),
        cases.len() - bad,
        n(Verdict::ClearRefusal),
        n(Verdict::Answered),
        n(Verdict::Panic),
        n(Verdict::SilentWrong),
        n(Verdict::Unclear),
        n(Verdict::DataLost),
        n(Verdict::Hang),
    );
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n{}",
        failed.len(),
        cases.len(),
        failed.join("\n")
    );
}
