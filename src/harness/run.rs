//! A run's start-up and end, written once: every example is
//!
//! ```text
//! fn main() -> ExitCode {
//!     run::main::<Args>(&chapters::CEILINGS, |run, args| {
//!         let results = ceilings::measure(run, &args.settings(run))?;
//!         ceilings::report(run, &results)
//!     })
//! }
//! ```
//!
//! [`main`] parses the arguments (adding to `--help` what the run needs and where it writes),
//! checks them, opens the GPU if the chapter needs one, prints the device line, builds the
//! provenance from the binary's own name, profile and arguments, hands a [`Run`] to the
//! chapter, and turns the outcome into one message and an exit code:
//!
//! | exit code | meaning |
//! |-----------|---------|
//! | 0 | measured and verified |
//! | 1 | a result was wrong (verification failed) or the GPU reported an error |
//! | 2 | it could not run here: no GPU, driver, NVRTC, cuBLAS or NCCL, bad command-line input, or an output folder that cannot take the results or that another run is writing into |

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};

pub use super::args::{CommonArgs, Example, FullQuick, UsageError};
pub use super::chapter::Needs;
use super::chapter::{Chapter, Opens};
use super::gpu::{Gpu, GpuUnavailable};
pub use super::out_folder::{
    check_out, claim_out, holder_of, in_use, OutLock, LOCK_FILE, OUT_LOCK_ENV,
};
use super::plot::{self, Point, Spec};
use super::record::{self, Meta};
use super::verify::Mismatch;

/// One run of a chapter's example: its settings, its GPU (if it needs one), its provenance and
/// where it writes.
pub struct Run {
    pub chapter: &'static Chapter,
    gpu: Option<Gpu>,
    /// The provenance every record of this run carries.
    pub meta: Meta,
    /// Where the figures, tables and data go.
    pub out: PathBuf,
    pub quick: bool,
    pub seed: u64,
    reps: Option<u32>,
    /// The flags the reader gave (clap's ids, e.g. `ceiling_mib`): empty for the runs
    /// tests and redraws start.
    given: Vec<String>,
    /// Whether a figure or table was written (a one-chain answer writes nothing).
    wrote: std::cell::Cell<bool>,
    /// The output folder's lock, taken at the run's first write and held until it ends (a
    /// run that only answers on the console never creates or locks a folder).
    lock: std::cell::OnceCell<OutLock>,
    /// Whether what the run wrote stays when it is dropped without [`Run::commit`]: so for the
    /// runs tests and redraws make ([`offline`], [`quick_on_gpu`]); an example's run keeps its
    /// files only if it ends well.
    keep_on_drop: bool,
}

impl Drop for Run {
    fn drop(&mut self) {
        if self.keep_on_drop {
            if let Err(e) = self.commit() {
                eprintln!("error: {e:#}");
            }
        }
    }
}

impl Run {
    /// The GPU; a chapter that declared [`Needs::Cpu`] has none.
    pub fn gpu(&self) -> &Gpu {
        self.gpu.as_ref().expect("this chapter's registry entry says it needs no GPU")
    }

    /// Timed repetitions: `--reps`, else the chapter's default for this kind of run.
    pub fn reps(&self) -> usize {
        self.chapter.reps.or(self.reps, self.quick) as usize
    }

    /// Repetitions of a measurement whose own defaults differ from the chapter's: `--reps`,
    /// else `d`'s value for this kind of run.
    pub fn reps_or(&self, d: FullQuick<u32>) -> u32 {
        d.or(self.reps, self.quick)
    }

    /// Whether the reader gave the flag whose clap id is `id` (`ceiling_mib` for
    /// `--ceiling-mib`): such a size is refused if it does not fit, never scaled.
    pub fn gave(&self, id: &str) -> bool {
        self.given.iter().any(|g| g == id)
    }

    /// A setting's value: the reader's, else the default for this kind of run.
    pub fn pick<T: Copy + std::fmt::Display>(
        &self,
        given: Option<T>,
        d: FullQuick<T>,
    ) -> T {
        d.or(given, self.quick)
    }

    /// A progress bar in the style every example uses.
    pub fn progress(&self, steps: usize) -> ProgressBar {
        let bar = ProgressBar::new(steps as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .expect("a valid template"),
        );
        bar
    }

    /// Checks that `stem` is the chapter's to write, and that the run holds its folder.
    fn declared(&self, stem: &str) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.chapter.writes(stem),
            "{} writes `{stem}`, which its entry in cmbook::chapters does not list",
            self.chapter.example
        );
        if self.lock.get().is_none() {
            let _ = self.lock.set(claim_out(&self.out)?);
        }
        Ok(())
    }

    /// Keeps what the run wrote into its folder: called once it has ended well. A run that
    /// ends without this (an error, a panic, a kill) leaves the folder as it found it.
    pub fn commit(&self) -> anyhow::Result<()> {
        self.lock.get().map_or(Ok(()), OutLock::commit)
    }

    /// Writes the figure `stem` (SVG + CSV) into the run's folder with the run's provenance
    /// plus `extra`.
    pub fn figure(
        &self,
        stem: &str,
        extra: &[(&str, &str)],
        spec: &Spec,
        points: &[Point],
    ) -> anyhow::Result<()> {
        self.declared(stem)?;
        self.wrote.set(true);
        plot::write_figure(&self.out, stem, &self.meta_with(extra), spec, points)
    }

    /// Writes the table `stem` (Markdown + CSV) titled `title`.
    pub fn table<T: serde::Serialize>(
        &self,
        stem: &str,
        title: &str,
        extra: &[(&str, &str)],
        rows: &[T],
    ) -> anyhow::Result<()> {
        self.declared(stem)?;
        self.wrote.set(true);
        let meta = self.meta_with(extra).with("title", title);
        record::write_table(&self.out, stem, &meta, rows)
    }

    /// The run's provenance plus `extra` keys.
    pub fn meta_with(&self, extra: &[(&str, &str)]) -> Meta {
        extra.iter().fold(self.meta.clone(), |m, (k, v)| m.with(k, v))
    }
}

/// The build profile of this binary, as the provenance records it.
pub fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Memory this process can still allocate, and the limit that sets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailableMemory {
    pub bytes: u64,
    /// What sets it: `MemAvailable` (the machine), `RLIMIT_AS` or `RLIMIT_DATA` (this
    /// process's limits, as `ulimit -v` and `ulimit -d` set them) or `memory.max` (its
    /// cgroup's).
    pub limit: &'static str,
}

/// The memory this process can still allocate: the smallest of what the machine has
/// available (`MemAvailable` in `/proc/meminfo`), what is left under this process's
/// address-space and data limits, and what is left under its cgroup's `memory.max`. `None`
/// where none of them can be read (not Linux).
pub fn available_memory() -> Option<AvailableMemory> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let status = read("/proc/self/status").unwrap_or_default();
    let mut candidates = Vec::new();
    if let Some(kib) = read("/proc/meminfo").and_then(|m| kib_field(&m, "MemAvailable"))
    {
        candidates.push(AvailableMemory { bytes: kib * 1024, limit: "MemAvailable" });
    }
    #[cfg(unix)]
    for (resource, name, used) in [
        (libc::RLIMIT_AS, "RLIMIT_AS", "VmSize"),
        (libc::RLIMIT_DATA, "RLIMIT_DATA", "VmData"),
    ] {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes one rlimit into the struct it is given.
        if unsafe { libc::getrlimit(resource, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY
        {
            let used = kib_field(&status, used).unwrap_or(0) * 1024;
            let left = limit.rlim_cur.saturating_sub(used);
            candidates.push(AvailableMemory { bytes: left, limit: name });
        }
    }
    if let Some(left) = cgroup_memory_left(&read) {
        candidates.push(AvailableMemory { bytes: left, limit: "memory.max" });
    }
    candidates.into_iter().min_by_key(|a| a.bytes)
}

/// The value of a `Key:   1234 kB` line of `/proc/meminfo` or `/proc/self/status`, in KiB.
pub fn kib_field(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// What this process's cgroup (v2) lets it allocate beyond what it uses: `memory.max` less
/// `memory.current`; `None` without a limit.
fn cgroup_memory_left(read: &dyn Fn(&str) -> Option<String>) -> Option<u64> {
    let cgroups = read("/proc/self/cgroup")?;
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = format!("/sys/fs/cgroup{}", path.trim_end_matches('/'));
    let max: u64 = read(&format!("{dir}/memory.max"))?.trim().parse().ok()?;
    let current: u64 = read(&format!("{dir}/memory.current"))?.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

/// The example's name: this binary's file name.
pub fn example_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "unknown".into())
}

/// The command line as the provenance records it: `cargo run [--release] --example NAME --
/// ARGS`, from the binary's own name, its build profile and its arguments. `--out DIR` is left
/// out: where the files went says nothing about how they were measured.
pub fn command_line() -> String {
    // args_os: a path that is not UTF-8 is recorded as best it can be, never a panic.
    let args = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned());
    command_line_from(&example_name(), profile(), args)
}

/// `args` without `--out DIR` (or `--out=DIR`): where a run writes says nothing about
/// what it measured.
pub fn without_out(args: impl Iterator<Item = String>) -> Vec<String> {
    let mut kept = Vec::new();
    let mut skip_next = false;
    for a in args {
        if skip_next {
            skip_next = false;
        } else if a == "--out" {
            skip_next = true;
        } else if !a.starts_with("--out=") {
            kept.push(a);
        }
    }
    kept
}

/// [`command_line`] for given parts.
pub fn command_line_from(
    example: &str,
    profile: &str,
    args: impl Iterator<Item = String>,
) -> String {
    let kept = without_out(args);
    let release = if profile == "release" { " --release" } else { "" };
    let mut cmd = format!("cargo run{release} --example {example}");
    if !kept.is_empty() {
        cmd.push_str(" -- ");
        cmd.push_str(&kept.join(" "));
    }
    cmd
}

/// The build's own folder (`target/`), found from this binary's path
/// (`target/<profile>/examples/<name>`): a reader's measurements go there, outside version
/// control, unless they ask for another folder.
pub fn target_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent()?.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("target"))
}

/// A device or CPU name as a folder name: `NVIDIA H100 80GB HBM3` → `nvidia-h100-80gb-hbm3`.
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_string()
}

/// Where a run writes when `--out` is not given: `target/measured/<device>/`.
pub fn default_out(device: &str) -> PathBuf {
    target_dir().join("measured").join(slug(device))
}

/// The exit code for an error that ended an example: 2 for what keeps it from running here
/// (no GPU or library, bad input, and an I/O error, such as a folder or a disk that cannot
/// take the results: an error whose root cause is an I/O error), 1 for a wrong
/// result ([`Mismatch`]) and for anything else, a GPU error among them.
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    // csv's error keeps the I/O error it wraps to itself (it names no source).
    let io = |e: &(dyn std::error::Error + 'static)| {
        e.is::<std::io::Error>()
            || e.downcast_ref::<csv::Error>().is_some_and(csv::Error::is_io_error)
    };
    let is = |e: &(dyn std::error::Error + 'static)| {
        e.is::<GpuUnavailable>() || e.is::<UsageError>()
    };
    if err.chain().any(|e| e.is::<Mismatch>()) {
        1
    } else if err.chain().any(is) || io(err.root_cause()) {
        2
    } else {
        1
    }
}

/// The environment variable naming a file where an example that ends with an error also
/// writes its message: how `reproduce` learns why a chapter was skipped or failed.
pub const REASON_ENV: &str = "CMBOOK_REASON_FILE";

/// Runs `body` and turns its error into one message and an exit code.
pub fn finish(outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => {
            if !super::kernels::used().is_empty() {
                println!("{}", super::kernels::used_line());
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            if let Some(file) = std::env::var_os(REASON_ENV) {
                // Best effort: the message is printed below in any case.
                let _ = std::fs::write(file, format!("{err}"));
            }
            // Those messages are whole sentences; any other error (an I/O error among them)
            // is told with its causes.
            if err.downcast_ref::<Mismatch>().is_some()
                || err.downcast_ref::<UsageError>().is_some()
                || err.downcast_ref::<GpuUnavailable>().is_some()
            {
                eprintln!("error: {err}");
            } else {
                eprintln!("error: {err:#}");
            }
            ExitCode::from(exit_code_for(&err))
        }
    }
}

/// An example whose output goes to a reader that stops reading (`| head`) ends quietly, as
/// other command-line tools do, instead of panicking on its next line of output: Rust ignores
/// SIGPIPE, so that `println!` fails, and a failed `println!` panics.
pub fn end_quietly_on_a_closed_pipe() {
    // SAFETY: restores the default action of one signal, before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Parses `A` with `--help` completed from the chapter's entry; clap's own errors (bad
/// flags, `--help`) exit here, with clap's codes.
pub fn parse<A: Example>(chapter: &Chapter) -> A {
    parse_with_given::<A>(chapter).0
}

/// What `--help` ends with: what the chapter needs (the libraries, then the GPU, its memory
/// and how many) and where it writes.
pub fn after_help(chapter: &Chapter) -> String {
    let mut lines = vec![chapter.needs.help_line().to_string()];
    lines.extend(chapter.needs.gpu_line());
    lines.push(
        "Writes into target/measured/<device>/ unless --out DIR is given.".into(),
    );
    lines.join("\n")
}

/// [`parse`], and the ids of the flags the reader gave on the command line (a default is
/// not given): a size the reader chose is kept or refused, never changed to fit.
pub fn parse_with_given<A: Example>(chapter: &Chapter) -> (A, Vec<String>) {
    let reps = chapter.reps.help("Timed repetitions per measurement");
    let command =
        A::command().mut_arg("reps", |a| a.help(reps)).after_help(after_help(chapter));
    let mut matches = command.get_matches();
    let given = matches
        .ids()
        .filter(|id| {
            matches.value_source(id.as_str())
                == Some(clap::parser::ValueSource::CommandLine)
        })
        .map(|id| id.as_str().to_string())
        .collect();
    (A::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.exit()), given)
}

/// Opens what the run needs, and builds its provenance and output folder.
pub fn start(
    chapter: &'static Chapter,
    needs: Needs,
    common: &CommonArgs,
) -> anyhow::Result<Run> {
    let command = command_line();
    let (gpu, meta, device) = match needs.opens {
        Opens::Cpu => {
            let meta = Meta::for_cpu(&command);
            let cpu = meta.get("cpu").unwrap_or("cpu").to_string();
            (None, meta, cpu)
        }
        Opens::Gpu | Opens::GpuAndCublas | Opens::GpuAndNccl => {
            if needs.opens == Opens::GpuAndNccl {
                if !super::gpu::driver_present() {
                    return Err(GpuUnavailable::NoDriver.into());
                }
                if !super::gpu::nccl_present() {
                    return Err(GpuUnavailable::NoNccl.into());
                }
            }
            let gpu = Gpu::open(needs.opens == Opens::GpuAndCublas)?;
            println!("{}", gpu.info.line());
            let meta = Meta::for_gpu(&gpu.info, &command);
            let name = gpu.info.name.clone();
            (Some(gpu), meta, name)
        }
    };
    if cfg!(debug_assertions) {
        // After the checks: a run that cannot start says only why.
        eprintln!(
            "note: a debug build: CPU references and CPU timings run 10 to 100 times slower \
             than in the book; for a measurement, `cargo run --release --example {}`",
            chapter.example
        );
    }
    let out = common.out.clone().unwrap_or_else(|| default_out(&device));
    // Before anything is measured: a folder that cannot take the results, or that another
    // run is writing into, ends the run now rather than after minutes of measuring.
    check_out(&out)?;
    if let Some(holder) = holder_of(&out) {
        return Err(in_use(&out, &holder).into());
    }
    Ok(Run {
        chapter,
        gpu,
        meta: meta.with("profile", profile()),
        out,
        quick: common.quick,
        seed: common.seed,
        reps: common.reps,
        given: Vec::new(),
        wrote: std::cell::Cell::new(false),
        lock: std::cell::OnceCell::new(),
        keep_on_drop: false,
    })
}

/// Whether `a` and `b` are one folder (compared as canonical paths; a path that does not
/// exist is no folder).
pub fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Refuses a `--quick` run into `book`, the book's own figures folder
/// ([`super::compare::book_figures`]): quick-size data would replace the book's full-size
/// data there. A full run into it is how the book is updated.
pub fn quick_outside_the_book(
    out: &Path,
    book: Option<&Path>,
) -> Result<(), UsageError> {
    match book {
        Some(book) if same_folder(out, book) => Err(UsageError(format!(
            "--quick --out {}: that is the book's own figures folder, where a quick run's \
             data would replace the book's full-size data; give --quick another folder (a \
             full run into figures/ is how the book is updated)",
            out.display()
        ))),
        _ => Ok(()),
    }
}

/// A run that pretends an older GPU ([`super::gpu::PRETEND_ENV`]) measures this GPU under
/// another's name, and one that forces an NVRTC ([`super::toolchain::NVRTC_ENV`]) runs code
/// the book's runs did not: their data never goes into the book's own figures. `setting` is
/// the variable that is set.
pub fn setting_outside_the_book(
    setting: &str,
    out: &Path,
    book: Option<&Path>,
) -> Result<(), UsageError> {
    match book {
        Some(book) if same_folder(out, book) => Err(UsageError(format!(
            "{setting}: a run that pretends another GPU or forces another compiler cannot \
             write into the book's own figures ({}); give another --out",
            out.display()
        ))),
        _ => Ok(()),
    }
}

/// Prints the chapter's headline numbers and claims beside the book's, when the book's data
/// is at hand and this run did not write over it.
fn compare_with_book(chapter: &'static Chapter, out: &Path) {
    let Some(book) = super::compare::book_figures() else {
        println!(
            "(the book's figures/data was not found here: nothing to compare with)"
        );
        return;
    };
    if same_folder(out, &book) {
        println!("(this run rewrote the book's own data: nothing to compare with)");
        return;
    }
    let (headlines, claims) =
        super::compare::compare(std::slice::from_ref(chapter), out, &book);
    for line in super::compare::console(&headlines, &claims) {
        println!("{line}");
    }
}

/// A run of `chapter` that writes into `dir`, started as `--out dir` (with `--quick` where
/// `quick`, and `seed`) would start it.
fn start_in(
    chapter: &'static Chapter,
    needs: Needs,
    dir: &Path,
    quick: bool,
    seed: u64,
) -> anyhow::Result<Run> {
    let common = CommonArgs {
        out: Some(dir.to_path_buf()),
        quick,
        reps: None,
        seed,
        counters: false,
    };
    let mut run = start(chapter, needs, &common)?;
    run.keep_on_drop = true;
    Ok(run)
}

/// A run that opens no GPU and writes into `dir`: for drawing a chapter's figures and tables
/// from results that were not measured here (tests, redrawing).
pub fn offline(chapter: &'static Chapter, dir: &Path) -> anyhow::Result<Run> {
    start_in(chapter, Needs::Cpu, dir, false, 2024)
}

/// A run on the GPU at the chapter's `--quick` sizes, writing into `dir`: for the tests that
/// measure and report a whole chapter.
pub fn quick_on_gpu(
    chapter: &'static Chapter,
    dir: &Path,
    seed: u64,
) -> anyhow::Result<Run> {
    start_in(chapter, Needs::Gpu, dir, true, seed)
}

/// How the records a run of `chapter` wrote into `dir` differ in shape from the book's own
/// (under [`super::compare::book_figures`]): for every stem the chapter writes, each of
/// [`record::shape_differences`], and a build profile other than this binary's, each line
/// naming its stem. Empty when the run writes what the book holds.
pub fn shape_differences_from_book(
    chapter: &Chapter,
    dir: &Path,
) -> anyhow::Result<Vec<String>> {
    let book = super::compare::book_figures()
        .ok_or_else(|| anyhow::anyhow!("the book's figures/data was not found here"))?;
    let mut problems = Vec::new();
    for stem in chapter.writes {
        let file = format!("data/{stem}.csv");
        // A table of skips is the book's only where the book's GPU skipped something.
        if stem.ends_with(super::skipped::SUFFIX) && !book.join(&file).exists() {
            continue;
        }
        let ours = record::read_csv(&dir.join(&file))?;
        let theirs = record::read_csv(&book.join(&file))?;
        let shape = record::shape_differences(&ours, &theirs);
        problems.extend(shape.into_iter().map(|p| format!("{stem}: {p}")));
        if ours.meta.get("profile") != Some(profile()) {
            let ours = ours.meta.get("profile");
            problems.push(format!("{stem}: profile {ours:?}, not {:?}", profile()));
        }
    }
    Ok(problems)
}

/// The checks of an example's arguments made before a GPU is opened, each a refusal with exit
/// code 2: the example's own ([`Example::validate`]), a `--quick` run into the book's own
/// figures, and `--counters` where the chapter counts nothing or `ncu` is missing. Returns
/// whether this process is the parent of a `--counters` run (it starts the counting child).
pub fn check_before_gpu<A: Example>(
    chapter: &Chapter,
    args: &A,
) -> anyhow::Result<bool> {
    args.validate()?;
    let common = args.common();
    if let (true, Some(out)) = (common.quick, &common.out) {
        quick_outside_the_book(out, super::compare::book_figures().as_deref())?;
    }
    for setting in [super::gpu::PRETEND_ENV, super::toolchain::NVRTC_ENV] {
        if let (Some(_), Some(out)) = (std::env::var_os(setting), &common.out) {
            setting_outside_the_book(
                setting,
                out,
                super::compare::book_figures().as_deref(),
            )?;
        }
    }
    let parent =
        common.counters && std::env::var_os(super::counters::CHILD_ENV).is_none();
    if parent && chapter.counted.is_empty() {
        return Err(UsageError(format!(
            "--counters: {} marks no kernels to count (its registry entry lists no \
             counters)",
            chapter.example
        ))
        .into());
    }
    if parent && super::counters::find_ncu().is_none() {
        return Err(super::counters::ncu_missing().into());
    }
    Ok(parent)
}

/// The whole life of an example: parse, check, open, run `body`, report where it wrote,
/// exit with the right code.
pub fn main<A: Example>(
    chapter: &'static Chapter,
    body: impl FnOnce(&Run, A) -> anyhow::Result<()>,
) -> ExitCode {
    end_quietly_on_a_closed_pipe();
    let (args, given) = parse_with_given::<A>(chapter);
    finish((|| {
        let parent = check_before_gpu(chapter, &args)?;
        let mut run = match start(chapter, args.needs(chapter), args.common()) {
            Err(e) if e.downcast_ref::<GpuUnavailable>().is_some() => {
                return Err(match args.without_gpu() {
                    Some(hint) => UsageError(format!("{e}; {hint}")).into(),
                    None => e,
                })
            }
            other => other?,
        };
        run.given = given;
        if parent {
            super::counters::profile(&run, args.counters_part())?;
            return run.commit();
        }
        body(&run, args)?;
        if run.wrote.get() && !super::counters::is_counting_child() {
            println!(
                "all results verified; figures and data written to {} (the book's own are \
                 in figures/; --out figures updates them)",
                run.out.display()
            );
            compare_with_book(chapter, &run.out);
        }
        run.commit()
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> impl Iterator<Item = String> {
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>().into_iter()
    }

    #[test]
    fn command_line_is_observed_and_drops_the_output_folder() {
        assert_eq!(
            command_line_from("ceilings", "release", strs(&[])),
            "cargo run --release --example ceilings"
        );
        assert_eq!(
            command_line_from(
                "ceilings",
                "debug",
                strs(&["--out", "/tmp/x", "--quick", "--out=/y", "--reps", "5"])
            ),
            "cargo run --example ceilings -- --quick --reps 5"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code_for(&anyhow::Error::new(GpuUnavailable::NoDriver)), 2);
        assert_eq!(exit_code_for(&anyhow::Error::new(GpuUnavailable::NoNccl)), 2);
        assert_eq!(
            exit_code_for(&anyhow::Error::new(UsageError("n must be > 0".into()))),
            2
        );
        let mismatch = || Mismatch {
            kernel: "k".into(),
            size: "n".into(),
            index: 0,
            got: "a".into(),
            want: "b".into(),
            wrong: 1,
            total: 1,
        };
        assert_eq!(exit_code_for(&anyhow::Error::new(mismatch())), 1);
        assert_eq!(exit_code_for(&anyhow::anyhow!("CUDA_ERROR_ILLEGAL_ADDRESS")), 1);
        // An I/O error is the folder's or the disk's: the run could not be made here.
        let full = std::io::Error::from_raw_os_error(28); // ENOSPC
        let write = anyhow::Error::new(full).context("cannot write OUT/data/x.csv");
        assert_eq!(exit_code_for(&write), 2);
        let csv = csv::Error::from(std::io::Error::other("a read failed"));
        assert_eq!(exit_code_for(&anyhow::Error::new(csv).context("cannot read")), 2);
        // A wrong result stays a wrong result, whatever context it is given.
        let wrong = anyhow::Error::new(mismatch()).context("checking k");
        assert_eq!(exit_code_for(&wrong), 1);
        let usage = anyhow::Error::new(UsageError("bad".into())).context("parsing");
        assert_eq!(exit_code_for(&usage), 2);
    }

    #[test]
    fn memory_is_read_from_proc_lines_in_kib() {
        let meminfo = "MemTotal:       24000000 kB\nMemAvailable:    5000000 kB\n";
        assert_eq!(kib_field(meminfo, "MemAvailable"), Some(5_000_000));
        assert_eq!(kib_field(meminfo, "MemTotal"), Some(24_000_000));
        assert_eq!(kib_field(meminfo, "Mem"), None);
        assert_eq!(kib_field("VmSize:\t  1234 kB", "VmSize"), Some(1234));
        if cfg!(target_os = "linux") {
            let a =
                available_memory().expect("Linux says how much memory is available");
            assert!(a.bytes > 0, "{a:?}");
        }
    }

    #[test]
    fn a_quick_run_is_refused_only_into_the_books_own_figures() {
        let book = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let e = quick_outside_the_book(book.path(), Some(book.path())).unwrap_err().0;
        assert!(e.contains("another folder"), "{e}");
        // The same folder by another name is still the book's.
        let dotted = book.path().join(".");
        assert!(quick_outside_the_book(&dotted, Some(book.path())).is_err());
        assert!(quick_outside_the_book(other.path(), Some(book.path())).is_ok());
        assert!(
            quick_outside_the_book(&book.path().join("new"), Some(book.path())).is_ok()
        );
        assert!(quick_outside_the_book(book.path(), None).is_ok());
    }

    #[test]
    fn measurements_go_under_the_build_folder() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  AMD EPYC (tm) 7B13 "), "amd-epyc-tm-7b13");
        let out = default_out("NVIDIA H100 80GB HBM3");
        assert!(out.ends_with("measured/nvidia-h100-80gb-hbm3"), "{}", out.display());
        assert!(!out.starts_with(Path::new(env!("CARGO_MANIFEST_DIR")).join("figures")));
    }
}
