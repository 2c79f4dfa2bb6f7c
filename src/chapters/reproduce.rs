//! `reproduce`: every chapter's example run one after another (measuring, under the
//! sanitizers, or not at all: redrawing), the figure audit, and the comparison page. The
//! chapter list is [`super::ALL`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::chapters::{self, Chapter};
use crate::harness::chapter::{features_sentence, Feature, Opens};
use crate::harness::record;
use crate::harness::run::{self, Needs};
use crate::harness::UsageError;

/// compute-sanitizer's tools, each run on every GPU example.
pub const SANITIZER_TOOLS: &[&str] =
    &["memcheck", "racecheck", "initcheck", "synccheck"];

/// The files `reproduce` writes itself beside the records (the comparison page): declared
/// here so that the audit and a redraw know them for what they are, whatever ran before.
pub const OWN_FILES: &[&str] = record::COMPARISON_PAGES;

/// The stem of the table `reproduce --sanitize` writes.
pub const SANITIZER_STEM: &str = "sanitizer";

/// Whether `stem` is one of the book's records: a chapter's figure or table, or one that
/// `reproduce` composes. Any other CSV under `data/` is the reader's, and left alone.
pub fn is_book_record(stem: &str) -> bool {
    chapters::writer_of(stem).is_some() || chapters::reproduce_writes(stem)
}

/// Redraws the book's records under `dir` from their CSVs, saying which other CSVs it left
/// alone.
fn redraw(dir: &Path) -> anyhow::Result<usize> {
    let (count, ignored) = record::redraw_records(dir, is_book_record)?;
    if !ignored.is_empty() {
        println!(
            "note: left alone (not the book's records, or not regular files): {}",
            ignored.iter().map(|n| format!("data/{n}")).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(count)
}

/// What `reproduce` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub out: Option<PathBuf>,
    pub appendix_table: bool,
    pub compare: bool,
    pub roofline: bool,
    pub diagrams: bool,
    pub book: Option<PathBuf>,
    pub redraw_only: bool,
    pub quick: bool,
    pub only: Option<Vec<String>>,
    pub sanitize: bool,
    pub counters: bool,
    pub sanitizer: PathBuf,
    /// How many sanitizer runs go at once (each is one process on the same GPU; the tools
    /// spend most of their time on the CPU).
    pub jobs: usize,
}

/// Runs what `args` asks for.
pub fn reproduce(args: Options) -> anyhow::Result<()> {
    if args.appendix_table {
        print!("{}", chapters::appendix_table());
        return Ok(());
    }
    let out = args.out.clone().expect("clap requires --out");
    if (args.compare || args.redraw_only) && !out.join("data").is_dir() {
        let what = if args.compare { "compare" } else { "redraw from" };
        return Err(UsageError(format!(
            "{} has no data/ folder to {what}",
            out.display()
        ))
        .into());
    }
    if args.compare || args.roofline || args.diagrams || args.redraw_only {
        let lock = run::claim_out(&out)?;
        offline_mode(&args, &out)?;
        return lock.commit();
    }
    let chosen: Vec<&'static Chapter> = match &args.only {
        // Counting needs kernels: the CPU-only examples have none.
        None if args.counters => {
            chapters::ALL.iter().filter(|c| !c.counted.is_empty()).collect()
        }
        None => chapters::ALL.iter().collect(),
        Some(names) => {
            for n in names {
                if chapters::by_example(n).is_none() {
                    let known: Vec<&str> =
                        chapters::ALL.iter().map(|c| c.example).collect();
                    return Err(UsageError(format!(
                        "--only: no chapter example `{n}` (known: {})",
                        known.join(", ")
                    ))
                    .into());
                }
            }
            chapters::ALL
                .iter()
                .filter(|c| names.iter().any(|n| n == c.example))
                .collect()
        }
    };
    let here = std::env::current_exe()?;
    let dir = here.parent().unwrap_or(Path::new("."));
    let binaries: Vec<(&'static Chapter, PathBuf)> = chosen
        .into_iter()
        .map(|c| {
            (c, dir.join(format!("{}{}", c.example, std::env::consts::EXE_SUFFIX)))
        })
        .collect();
    for (c, path) in &binaries {
        if !path.exists() {
            return Err(UsageError(format!(
                "the example `{}` is not built next to this one ({}); run `cargo build \
                 --release --examples` first",
                c.example,
                path.display()
            ))
            .into());
        }
    }
    // The folder is this run's until it ends; the examples it starts write into it under
    // its lock.
    if args.sanitize {
        // The GPU first: a machine that cannot run the sanitizers gets no folder.
        let gpu = crate::harness::Gpu::open(false)?;
        let lock = run::claim_out(&out)?;
        sanitize(&args, &out, &binaries, gpu)?;
        return lock.commit();
    }
    if args.counters && crate::harness::counters::find_ncu().is_none() {
        return Err(crate::harness::counters::ncu_missing().into());
    }
    let lock = run::claim_out(&out)?;
    let signals = Forwarding::install();
    let bar = progress(binaries.len());
    let started = Instant::now();
    // Each chapter's one-line reason, when it cannot run or fails, comes back through a file.
    let reasons = tempfile::tempdir()?;
    let mut results: Vec<(&str, ChapterResult)> = Vec::new();
    for (c, path) in &binaries {
        if let Some(sig) = signals.received() {
            bar.finish_and_clear();
            drop(lock);
            return Err(interrupted(sig, c.example, Stopped::BeforeItStarted));
        }
        bar.set_message(c.example);
        let t = Instant::now();
        let reason_file = reasons.path().join(c.example);
        let mut cmd = Command::new(path);
        cmd.arg("--out")
            .arg(&out)
            .env(run::OUT_LOCK_ENV, &lock.dir)
            .env(run::REASON_ENV, &reason_file);
        if args.quick {
            cmd.arg("--quick");
        }
        if args.counters {
            cmd.arg("--counters");
        }
        dies_with_this_process(&mut cmd);
        let status = bar.suspend(|| signals.run(&mut cmd))?;
        // A chapter killed while writing left its journal: its changes are undone, so the
        // folder holds what the chapters before it wrote.
        let undone = crate::harness::undo::recover(&lock.dir)?;
        if let Some(sig) = signals.received() {
            bar.finish_and_clear();
            drop(lock);
            let stopped =
                if undone > 0 { Stopped::WhileWriting } else { Stopped::BeforeItWrote };
            return Err(interrupted(sig, c.example, stopped));
        }
        let why = || {
            let text = std::fs::read_to_string(&reason_file).unwrap_or_default();
            text.lines().next().unwrap_or("it said why above").to_string()
        };
        let result = match status.code() {
            Some(0) => ChapterResult::Ran(t.elapsed().as_secs_f64()),
            // Exit code 2: this machine lacks what the chapter needs (a second GPU's library,
            // cuBLAS, ...); the example has said what in one line. The rest can still run.
            Some(2) => ChapterResult::Skipped(why()),
            // A wrong result or a GPU error: the chapter's writes were undone; the others
            // still measure, and the run ends with exit code 1.
            Some(code) => ChapterResult::Failed(format!("exit code {code}: {}", why())),
            None => ChapterResult::Failed(format!("ended by a signal: {status}")),
        };
        bar.println(format!("{}: {}", c.example, result.short()));
        results.push((c.example, result));
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!("{}", results_table(&results));
    let ran =
        results.iter().filter(|(_, r)| matches!(r, ChapterResult::Ran(_))).count();
    let failed: Vec<&str> = results
        .iter()
        .filter(|(_, r)| matches!(r, ChapterResult::Failed(_)))
        .map(|(name, _)| *name)
        .collect();
    if ran == 0 && failed.is_empty() {
        return Err(UsageError(
            "no chapter could run on this machine (each said why above)".into(),
        )
        .into());
    }
    println!(
        "measured {ran} chapters in {:.0} s into {}",
        started.elapsed().as_secs_f64(),
        out.display()
    );
    let end = |lock: run::OutLock| -> anyhow::Result<()> {
        lock.commit()?;
        anyhow::ensure!(
            failed.is_empty(),
            "{} failed (see the table above); the other chapters' results are in {}",
            failed.join(", "),
            out.display()
        );
        Ok(())
    };
    if ran == 0 {
        return end(lock);
    }
    if args.counters {
        audit(&out)?;
        return end(lock);
    }
    // The roofline needs the ceilings of this run; it places whichever chapters ran.
    if out.join("data/ceilings-peaks.csv").exists() {
        super::roofline::write(&out)?;
    }
    super::diagrams::write(&out, DIAGRAMS_COMMAND)?;
    audit(&out)?;
    write_comparison(&out, None)?;
    end(lock)
}

/// How one chapter of a measuring run ended.
enum ChapterResult {
    /// Measured and verified, in this many seconds.
    Ran(f64),
    /// It cannot run on this machine, for this reason.
    Skipped(String),
    /// A wrong result or an error, as it said.
    Failed(String),
}

impl ChapterResult {
    fn short(&self) -> String {
        match self {
            ChapterResult::Ran(s) => format!("done in {s:.0} s"),
            ChapterResult::Skipped(why) => format!("skipped: {why}"),
            ChapterResult::Failed(why) => format!("failed: {why}"),
        }
    }
}

/// The table a measuring run ends with: each chapter, whether it ran, and why not.
fn results_table(results: &[(&str, ChapterResult)]) -> String {
    let width = results.iter().map(|(n, _)| n.len()).max().unwrap_or(7).max(7);
    let mut table = format!("{:<width$}  result   why\n", "chapter");
    for (name, result) in results {
        let (what, why) = match result {
            ChapterResult::Ran(s) => ("ran", format!("{s:.0} s")),
            ChapterResult::Skipped(why) => ("skipped", why.clone()),
            ChapterResult::Failed(why) => ("failed", why.clone()),
        };
        table.push_str(&format!("{name:<width$}  {what:<7}  {why}\n"));
    }
    table.trim_end().to_string()
}

/// The signal that stopped a run, as its exit code tells it (128 + the signal's number, as a
/// shell reports a process the signal killed).
#[derive(Debug)]
pub struct Interrupted(pub i32);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by signal {}", self.0)
    }
}

impl std::error::Error for Interrupted {}

/// How far the chapter `reproduce` was at had come when a signal stopped the run.
enum Stopped {
    BeforeItStarted,
    BeforeItWrote,
    WhileWriting,
}

fn interrupted(sig: i32, example: &str, stopped: Stopped) -> anyhow::Error {
    let what = match stopped {
        Stopped::BeforeItStarted => format!("stopped before {example}"),
        Stopped::BeforeItWrote => {
            format!("{example} was stopped before it wrote anything")
        }
        Stopped::WhileWriting => {
            format!("{example} was stopped and what it had written undone")
        }
    };
    anyhow::Error::new(Interrupted(sig)).context(format!(
        "{what}; the folder holds the chapters that finished before it"
    ))
}

/// [`run::finish`], except that a run a signal stopped exits as that signal would have made
/// it (128 + its number), as shells and schedulers expect.
pub fn finish(outcome: anyhow::Result<()>) -> std::process::ExitCode {
    let sig = outcome
        .as_ref()
        .err()
        .and_then(|e| e.downcast_ref::<Interrupted>())
        .map(|i| i.0);
    let code = run::finish(outcome);
    match sig {
        Some(sig) => std::process::ExitCode::from((128 + sig) as u8),
        None => code,
    }
}

/// A chapter's example that outlives `reproduce` (killed with SIGKILL, which cannot be
/// forwarded) would go on writing into a folder nobody holds: the kernel ends it with a SIGTERM
/// when this process dies.
fn dies_with_this_process(cmd: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: between fork and exec only async-signal-safe calls: prctl, getppid, _exit.
        let parent = unsafe { libc::getpid() };
        unsafe {
            cmd.pre_exec(move || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                // Died before the request was made: nobody would send it.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = cmd;
}

/// The process a run waits on, and the SIGINT or SIGTERM this process received: passed on to
/// the chapter's example, which stops the way it would have if the signal had reached it
/// directly, after which `reproduce` stops too.
static RUNNING_CHILD: std::sync::atomic::AtomicI32 =
    std::sync::atomic::AtomicI32::new(0);
static RECEIVED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn pass_on(sig: libc::c_int) {
    use std::sync::atomic::Ordering::SeqCst;
    RECEIVED.store(sig, SeqCst);
    let child = RUNNING_CHILD.load(SeqCst);
    if child > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, sig) };
    }
}

/// SIGINT and SIGTERM passed on to the running chapter for as long as this lives.
struct Forwarding {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Forwarding {
    fn install() -> Self {
        let mut previous = Vec::new();
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction with a handler that only stores atomics and calls
            // kill; SA_RESTART so that the wait for the child goes on.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = pass_on as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut old) == 0 {
                    previous.push((sig, old));
                }
            }
        }
        Forwarding { previous }
    }

    /// Runs `cmd` to its end, passing the signals on to it.
    fn run(&self, cmd: &mut Command) -> std::io::Result<std::process::ExitStatus> {
        use std::sync::atomic::Ordering::SeqCst;
        let mut child = cmd.spawn()?;
        RUNNING_CHILD.store(child.id() as i32, SeqCst);
        // A signal that came between the spawn and the store was not passed on.
        if let Some(sig) = self.received() {
            // SAFETY: the child has not been waited for, so its id is still its own.
            unsafe { libc::kill(child.id() as i32, sig) };
        }
        let status = child.wait();
        RUNNING_CHILD.store(0, SeqCst);
        status
    }

    fn received(&self) -> Option<i32> {
        match RECEIVED.load(std::sync::atomic::Ordering::SeqCst) {
            0 => None,
            sig => Some(sig),
        }
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        for (sig, old) in &self.previous {
            // SAFETY: restores the action saved by install.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// The command a diagram's record names: the one that computes the diagrams alone.
const DIAGRAMS_COMMAND: &str =
    "cargo run --release --example reproduce -- --out figures/ --diagrams";

/// `--compare`, `--roofline`, `--diagrams` or `--redraw-only`: no GPU, nothing measured.
fn offline_mode(args: &Options, out: &Path) -> anyhow::Result<()> {
    if args.compare {
        return write_comparison(out, args.book.clone());
    }
    if args.diagrams {
        let n = super::diagrams::write(out, DIAGRAMS_COMMAND)?;
        println!("computed {n} diagrams into {}", out.display());
        return audit(out);
    }
    if args.roofline {
        let n = super::roofline::write(out).map_err(|e| {
            UsageError(format!(
                "cannot compose the roofline in {}: {e:#}",
                out.display()
            ))
        })?;
        println!("composed {n} roofline figures and tables in {}", out.display());
        return audit(out);
    }
    check_headline_records(out)?;
    let count = redraw(out)
        .map_err(|e| UsageError(format!("cannot redraw {}: {e:#}", out.display())))?;
    println!("redrew {count} figures and tables in {}", out.display());
    audit(out)
}

/// The records in `dir` that the comparison reads, checked ([`compare::check_records`]).
fn check_headline_records(dir: &Path) -> anyhow::Result<()> {
    for note in crate::harness::compare::check_records(chapters::ALL, dir)? {
        println!("{note}");
    }
    Ok(())
}

/// Writes `dir/compare.md` and `dir/compare.html`: every chapter's headline numbers and
/// claims in `dir` beside the book's.
fn write_comparison(dir: &Path, book: Option<PathBuf>) -> anyhow::Result<()> {
    use crate::harness::compare;
    let book = match book.or_else(compare::book_figures) {
        Some(b) if b.join("data").is_dir() => b,
        Some(b) => {
            return Err(
                UsageError(format!("{} has no data/ folder", b.display())).into()
            )
        }
        None => {
            return Err(UsageError(
                "the book's figures/ was not found: give --book".into(),
            )
            .into())
        }
    };
    if !dir.join("data").is_dir() {
        return Err(UsageError(format!(
            "{} has no data/ folder to compare",
            dir.display()
        ))
        .into());
    }
    check_headline_records(dir)?;
    check_headline_records(&book)?;
    let (headlines, claims) = compare::compare(chapters::ALL, dir, &book);
    // The folder's own name: the page may be shared, and the path above it is the reader's.
    let name = dir
        .canonicalize()
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| dir.display().to_string());
    let quick = compare::was_quick(dir);
    let [md_name, html_name] = OWN_FILES else { unreachable!("two pages") };
    let skipped = crate::harness::skipped::read(dir, chapters::ALL);
    let md = compare::markdown(&headlines, &claims, &skipped, &name, quick);
    let html = compare::html(&headlines, &claims, &skipped, &name, quick);
    // Both pages are made before either is written, each replaced whole.
    record::write_atomic(&dir.join(md_name), md.as_bytes())?;
    record::write_atomic(&dir.join(html_name), html.as_bytes())?;
    for line in compare::console(&headlines, &claims) {
        println!("{line}");
    }
    for line in compare::console_skipped(&skipped) {
        println!("{line}");
    }
    println!(
        "comparison written to {} and compare.html",
        dir.join("compare.md").display()
    );
    Ok(())
}

fn progress(steps: usize) -> ProgressBar {
    let bar = ProgressBar::new(steps as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})")
            .expect("a valid template"),
    );
    bar
}

/// The audit of the book's records in `dir` ([`record::audit_records`]); the reader's own
/// files and [`OWN_FILES`] are not records.
fn audit(dir: &Path) -> anyhow::Result<()> {
    let problems = record::audit_records(dir, is_book_record)?;
    if !problems.is_empty() {
        anyhow::bail!("figures out of step with their data:\n{}", problems.join("\n"));
    }
    println!(
        "every figure and table in {} is exactly what its CSV draws, with full provenance",
        dir.display()
    );
    Ok(())
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct SanitizerRow {
    example: String,
    tool: String,
    arguments: String,
    kernels_used: String,
    errors: String,
    exit_code: i32,
}

/// The rows of `earlier` (the folder's sanitizer record before this run) that a run of part of
/// the examples keeps: those of the examples it did not run, and only when `earlier` was made
/// at the same clean commit on the same GPU, so that the table stays one commit's on one GPU.
/// With them, a note for the record's metadata that says where they come from.
fn earlier_sanitizer_rows(
    earlier: &record::Record,
    commit: &str,
    gpu: &str,
    ran: &[&str],
) -> anyhow::Result<Option<(Vec<SanitizerRow>, String)>> {
    let same = |key: &str, value: &str| earlier.meta.get(key) == Some(value);
    if commit.ends_with("-dirty") || !same("commit", commit) || !same("gpu", gpu) {
        return Ok(None);
    }
    let col = |name: &str| earlier.column(name);
    let (example, tool, arguments, kernels, errors, code) = (
        col("example")?,
        col("tool")?,
        col("arguments")?,
        col("kernels_used")?,
        col("errors")?,
        col("exit_code")?,
    );
    let mut kept = Vec::new();
    for r in earlier.rows.iter().filter(|r| !ran.contains(&r[example].as_str())) {
        kept.push(SanitizerRow {
            example: r[example].clone(),
            tool: r[tool].clone(),
            arguments: r[arguments].clone(),
            kernels_used: r[kernels].clone(),
            errors: r[errors].clone(),
            exit_code: r[code].parse()?,
        });
    }
    if kept.is_empty() {
        return Ok(None);
    }
    let mut examples: Vec<&str> = kept.iter().map(|r| r.example.as_str()).collect();
    examples.dedup();
    let note = format!(
        "{} from the run of {} at the same commit on the same GPU ({})",
        examples.join(", "),
        earlier.meta.get("date_utc").unwrap_or("?"),
        earlier.meta.get("command").unwrap_or("?")
    );
    Ok(Some((kept, note)))
}

/// The order of the table: the registry's examples, each with the tools in
/// [`SANITIZER_TOOLS`] order.
fn sanitizer_order(row: &SanitizerRow) -> (usize, usize) {
    let example = chapters::ALL.iter().position(|c| c.example == row.example);
    let tool = SANITIZER_TOOLS.iter().position(|t| *t == row.tool);
    (example.unwrap_or(usize::MAX), tool.unwrap_or(usize::MAX))
}

fn sanitize(
    args: &Options,
    out: &Path,
    binaries: &[(&'static Chapter, PathBuf)],
    gpu: crate::harness::Gpu,
) -> anyhow::Result<()> {
    use crate::harness::record::Meta;
    println!("{}", gpu.info.line());
    let checked: Vec<_> =
        binaries.iter().filter(|(c, _)| c.needs != Needs::Cpu).collect();
    let runs: Vec<(&'static Chapter, &PathBuf, &'static str)> = checked
        .iter()
        .flat_map(|(c, path)| SANITIZER_TOOLS.iter().map(move |&tool| (*c, path, tool)))
        .collect();
    let bar = progress(runs.len());
    let started = std::time::Instant::now();
    // The examples' own output under the sanitizers is thrown away: a folder of this run's,
    // removed at the end, so that two runs never write into one another's.
    let scratch_dir = tempfile::Builder::new().prefix("cmbook-sanitizer-").tempdir()?;
    let scratch = scratch_dir.path();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(args.jobs.max(1)).build()?;
    // Each run is its own process; the pool only decides how many overlap. Rows keep the
    // registry's order whatever order the runs finish in.
    let results: Vec<anyhow::Result<(SanitizerRow, Option<String>)>> =
        pool.install(|| {
            use rayon::prelude::*;
            runs.par_iter()
                .map(|&(c, path, tool)| {
                    let name = c.example;
                    let mut cmd = Command::new(&args.sanitizer);
                    cmd.arg("--tool").arg(tool);
                    if tool == "memcheck" {
                        cmd.args(["--leak-check", "full"]);
                    }
                    cmd.args(["--error-exitcode", "9"])
                        .arg(path)
                        .args(c.sanitizer_args)
                        .arg("--out")
                        .arg(scratch.join(format!("{name}-{tool}")));
                    let output = cmd.output().map_err(|e| {
                        UsageError(format!(
                            "cannot run {}: {e}",
                            args.sanitizer.display()
                        ))
                    })?;
                    let text = format!(
                        "{}{}",
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    );
                    let (errors, kernels) =
                        crate::harness::sanitizer::parse_output(tool, &text);
                    let code = output.status.code().unwrap_or(-1);
                    let failure = (errors != Some(0) || code != 0).then(|| {
                        let tail: Vec<&str> = text.lines().rev().take(15).collect();
                        format!(
                        "{name} under {tool}: exit code {code}, errors {errors:?}\n{}",
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    )
                    });
                    // Printed also when the bar is hidden (output not to a terminal), so
                    // that a log shows which runs ended and when.
                    let at = started.elapsed().as_secs();
                    bar.suspend(|| {
                        println!("{at:>5} s  {name} under {tool}: exit code {code}")
                    });
                    bar.inc(1);
                    Ok((
                        SanitizerRow {
                            example: name.to_string(),
                            tool: tool.to_string(),
                            arguments: c.sanitizer_args.join(" "),
                            kernels_used: kernels.map_or("?".into(), |k| k.to_string()),
                            errors: errors
                                .map_or("no summary".into(), |e| e.to_string()),
                            exit_code: code,
                        },
                        failure,
                    ))
                })
                .collect()
        });
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for r in results {
        let (row, failure) = r?;
        rows.push(row);
        failed.extend(failure);
    }
    bar.finish_and_clear();
    // A run of part of the examples (`--only`) keeps the other examples' rows of the same
    // commit and GPU: the table can be made in parts that each fit a machine's time.
    let ran: Vec<&str> = checked.iter().map(|(c, _)| c.example).collect();
    let earlier_path = out.join("data").join(format!("{SANITIZER_STEM}.csv"));
    let mut earlier_note = None;
    if args.only.is_some() && earlier_path.is_file() {
        let earlier = record::read_csv(&earlier_path)?;
        match earlier_sanitizer_rows(&earlier, env!("CMBOOK_GIT_COMMIT"), &gpu.info.name, &ran)? {
            Some((kept, note)) => {
                println!("kept from the folder's earlier table: {note}");
                rows.extend(kept);
                earlier_note = Some(note);
            }
            None => println!(
                "the folder's earlier table is not this commit's on this GPU: only this \
                 run's rows are written"
            ),
        }
    }
    rows.sort_by_key(sanitizer_order);
    let title =
        "Every chapter's example in its quick mode under each compute-sanitizer tool \
                 (memcheck with --leak-check full)";
    let meta = Meta::for_gpu(&gpu.info, &run::command_line())
        .with("profile", run::profile())
        .with("title", title)
        // Shown with plain headers, the commands as code, one tool in view (harness::table).
        .with("headers", "kernels_used = kernels used | exit_code = exit code")
        .with("code", "example | arguments")
        .with("fold", "tool = memcheck");
    let meta = match &earlier_note {
        Some(note) => meta.with("earlier_rows", note),
        None => meta,
    };
    record::write_table(out, SANITIZER_STEM, &meta, &rows)?;
    for r in &rows {
        println!(
            "{:<14} {:<10} kernels {:>3}  errors {:>3}  exit {}",
            r.example, r.tool, r.kernels_used, r.errors, r.exit_code
        );
    }
    if !failed.is_empty() {
        anyhow::bail!("compute-sanitizer found problems:\n{}", failed.join("\n\n"));
    }
    println!(
        "all {} runs clean; table written to {}",
        rows.len(),
        out.join("sanitizer.md").display()
    );
    Ok(())
}

/// The example names of the chapters whose needs pass `pick`, as `a, b and c`.
fn names(pick: impl Fn(&Needs) -> bool) -> String {
    let names: Vec<&str> =
        chapters::ALL.iter().filter(|c| pick(&c.needs)).map(|c| c.example).collect();
    match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => "none".into(),
    }
}

/// What `reproduce --help` ends with: what the chapters need, from their entries. A chapter
/// that cannot run here is skipped with its reason, and the others run.
pub fn needs_help() -> String {
    let all = chapters::ALL;
    let gpu: Vec<&Chapter> = all.iter().filter(|c| c.needs.gpu()).collect();
    let min_cc = gpu.iter().map(|c| c.needs.min_cc).max().unwrap_or((7, 0));
    let mut features: Vec<Feature> = Vec::new();
    for f in gpu.iter().flat_map(|c| c.needs.features) {
        if !features.contains(f) {
            features.push(*f);
        }
    }
    let sections = features_sentence(&features)
        .map(|s| format!(" ({s}; an older GPU skips them)"))
        .unwrap_or_default();
    let largest = |fitted: bool| {
        gpu.iter()
            .filter(|c| c.needs.fits_smaller == fitted)
            .max_by_key(|c| c.needs.memory.full)
            .map(|c| (c.example, c.needs.memory.full as f64 / (1u64 << 30) as f64))
    };
    let quick = gpu.iter().map(|c| c.needs.memory.quick).max().unwrap_or(0);
    let mut memory = match largest(false) {
        Some((name, gib)) => format!("{gib:.1} GiB of device memory ({name})"),
        None => "device memory".into(),
    };
    if let Some((name, gib)) = largest(true) {
        memory.push_str(&format!(
            "; {name} takes {gib:.1} GiB where it is free and lowers its sizes to fit \
             where not"
        ));
    }
    let gpus = gpu.iter().map(|c| c.needs.gpus).max().unwrap_or(1);
    format!(
        "Needs, for every chapter: a GPU of compute capability {}.{} or newer{sections}; \
         {memory}; {:.2} GiB with --quick; cuBLAS for {}; NCCL and {gpus} GPUs for {}. \
         Each example's --help says what its chapter needs; a chapter that cannot run \
         here is skipped with the reason.",
        min_cc.0,
        min_cc.1,
        quick as f64 / (1u64 << 30) as f64,
        names(|n| n.opens == Opens::GpuAndCublas),
        names(|n| n.opens == Opens::GpuAndNccl),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fit::{cards, usable_bytes};

    fn sanitizer_record(commit: &str, gpu: &str) -> record::Record {
        record::parse_csv(&format!(
            "# gpu: {gpu}\n# commit: {commit}\n# date_utc: 2026-01-02T03:04:05Z\n\
             # command: reproduce --sanitize --only atax\n\
             example,tool,arguments,kernels_used,errors,exit_code\n\
             ceilings,memcheck,--quick,6,0,0\nceilings,racecheck,--quick,6,0,0\n\
             atax,memcheck,--quick,9,0,0\n"
        ))
        .unwrap()
    }

    #[test]
    fn a_partial_sanitizer_run_keeps_only_the_same_commits_other_rows() {
        let earlier = sanitizer_record("abc123", "GPU X");
        let (kept, note) =
            earlier_sanitizer_rows(&earlier, "abc123", "GPU X", &["atax"])
                .unwrap()
                .unwrap();
        let examples: Vec<(&str, &str)> =
            kept.iter().map(|r| (r.example.as_str(), r.tool.as_str())).collect();
        assert_eq!(examples, [("ceilings", "memcheck"), ("ceilings", "racecheck")]);
        assert_eq!(kept[0].kernels_used, "6");
        assert!(
            note.starts_with("ceilings from the run of 2026-01-02T03:04:05Z"),
            "{note}"
        );
        // Another commit, another GPU, or an uncommitted tree: nothing is kept.
        for (commit, gpu) in
            [("def456", "GPU X"), ("abc123", "GPU Y"), ("abc123-dirty", "GPU X")]
        {
            let earlier = sanitizer_record(commit, "GPU X");
            assert!(earlier_sanitizer_rows(&earlier, "abc123", gpu, &["atax"])
                .unwrap()
                .is_none());
        }
        // Every example ran again: nothing earlier is kept.
        assert!(earlier_sanitizer_rows(
            &earlier,
            "abc123",
            "GPU X",
            &["atax", "ceilings"]
        )
        .unwrap()
        .is_none());
    }

    #[test]
    fn the_sanitizer_table_follows_the_registry_then_the_tools() {
        let row = |example: &str, tool: &str| SanitizerRow {
            example: example.into(),
            tool: tool.into(),
            arguments: String::new(),
            kernels_used: "1".into(),
            errors: "0".into(),
            exit_code: 0,
        };
        let mut rows = [
            row("atax", "synccheck"),
            row("ceilings", "racecheck"),
            row("atax", "memcheck"),
        ];
        rows.sort_by_key(sanitizer_order);
        let order: Vec<(&str, &str)> =
            rows.iter().map(|r| (r.example.as_str(), r.tool.as_str())).collect();
        assert_eq!(
            order,
            [("ceilings", "racecheck"), ("atax", "memcheck"), ("atax", "synccheck")]
        );
    }

    #[test]
    fn the_help_says_what_the_chapters_need_together() {
        let help = needs_help();
        assert!(help
            .starts_with("Needs, for every chapter: a GPU of compute capability 7.0"));
        for part in [
            "TMA and thread-block clusters sections need 9.0, cp.async sections 8.0",
            "4.1 GiB of device memory (multi_gpu)",
            "ceilings takes 8.0 GiB where it is free and lowers its sizes to fit",
            "cuBLAS for tiled_matmul, cmm_beyond and atax",
            "NCCL and 2 GPUs for multi_gpu",
        ] {
            assert!(help.contains(part), "{part}: {help}");
        }
    }

    #[test]
    fn every_chapter_runs_whole_on_8_16_24_and_80_gb_cards() {
        // Whole: at its default sizes, or at sizes lowered to fit where it declares that.
        // The L2 flush buffer and the reserve come off what is free first.
        for (card, free, l2) in cards::ALL {
            for c in chapters::ALL.iter().filter(|c| c.needs.gpu()) {
                let usable = usable_bytes(free, l2);
                assert!(
                    c.needs.memory.full <= usable || c.needs.fits_smaller,
                    "{}: {} bytes do not fit the {usable} usable on a {card} card",
                    c.example,
                    c.needs.memory.full
                );
                assert!(
                    c.needs.memory.quick <= usable,
                    "{} --quick on {card}",
                    c.example
                );
            }
        }
    }
}
