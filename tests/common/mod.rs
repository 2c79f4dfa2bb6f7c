//! Helpers shared by the test binaries: building the book in-process with mdBook's own
//! library (nothing to install), reading its table of contents, and opening the GPU.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::cell::RefCell;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use cmbook::harness::Gpu;

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The checkout whose book the checks of the book read: this one, or the one that
/// `CMBOOK_BOOK_ROOT` names, so that an editor's work tree can be checked with tests built
/// once, without compiling anything there.
pub fn book_root() -> &'static Path {
    static BOOK_ROOT: LazyLock<PathBuf> = LazyLock::new(|| {
        std::env::var_os("CMBOOK_BOOK_ROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(ROOT))
    });
    &BOOK_ROOT
}

/// One numbered chapter of `SUMMARY.md`: its number (its position, chapter 1 first) and its
/// pages in reading order (the chapter's own page, then the pages listed under it).
#[derive(Debug, Clone)]
pub struct ChapterPages {
    pub number: usize,
    pub pages: Vec<String>,
}

/// The numbered chapters of `SUMMARY.md`: a list item at the margin opens a chapter, an
/// indented one is a page of the chapter above it.
pub fn numbered_chapters() -> Vec<ChapterPages> {
    let summary =
        std::fs::read_to_string(book_root().join("src/book/SUMMARY.md")).unwrap();
    let mut out: Vec<ChapterPages> = Vec::new();
    for line in summary.lines() {
        let Some((_, rest)) = line.split_once("](") else { continue };
        let page = rest.split(')').next().unwrap().to_string();
        if line.starts_with("- [") {
            out.push(ChapterPages { number: out.len() + 1, pages: vec![page] });
        } else if line.trim_start().starts_with("- [") {
            out.last_mut()
                .expect("a nested page comes under a chapter")
                .pages
                .push(page);
        }
    }
    out
}

/// Builds the book into `dest` with mdBook's library; returns every WARN and ERROR it
/// logged (mdBook logs a mistyped key, a missing file or a broken include as an ERROR and
/// still builds), one message a line. A failed build panics with mdBook's error.
pub fn build_book(dest: &Path) -> Vec<String> {
    // An unnamed temporary file: `&File` writes, so an `Arc<File>` is a writer the
    // subscriber can share, and the log is read back from the same file afterwards.
    let log = Arc::new(tempfile::tempfile().unwrap());
    let collect = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::WARN)
        .with_writer(log.clone())
        .with_ansi(false)
        .without_time()
        .finish();
    tracing::subscriber::with_default(collect, || {
        let mut book = mdbook_driver::MDBook::load(book_root())
            .unwrap_or_else(|e| panic!("mdBook could not load the book: {e:#}"));
        book.config.build.build_dir = dest.to_path_buf();
        book.build()
            .unwrap_or_else(|e| panic!("mdBook could not build the book: {e:#}"));
    });
    let mut text = String::new();
    let mut file = &*log;
    file.seek(SeekFrom::Start(0)).unwrap();
    file.read_to_string(&mut text).unwrap();
    text.lines().map(str::to_string).collect()
}

/// The GPU tests of one binary share one process, and CUDA state is the process's: a graph
/// being captured on one thread is invalidated by another thread's allocation, and contexts
/// opened by many threads at once can fail to open. A test therefore holds this lock from
/// opening the GPU until its thread ends, so the GPU tests run one at a time (when each file
/// was its own binary, only the tests of one file shared a process). Measured on an H200, `--ignored --skip two_gpus`: 26 to 35 s with this lock; 45 s and three failures
/// without it.
static ONE_GPU_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

thread_local! {
    static HOLDS_THE_GPU: RefCell<Option<MutexGuard<'static, ()>>> =
        const { RefCell::new(None) };
}

/// Waits until no other test uses the GPU; held until this test's thread ends (a test that
/// opens several GPUs, or one twice, takes it once).
fn wait_for_the_gpu() {
    HOLDS_THE_GPU.with(|held| {
        let mut held = held.borrow_mut();
        if held.is_none() {
            // A test that failed while holding it leaves it poisoned; the next may still run.
            *held = Some(
                ONE_GPU_TEST_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner),
            );
        }
    });
}

/// Device `ordinal`, once no other test uses the GPU, with the driver and NVRTC (and, when
/// `need_cublas`, cuBLAS) checked first; a machine without them fails the test with the
/// one-line reason.
pub fn gpu_ordinal(ordinal: usize, need_cublas: bool) -> Gpu {
    wait_for_the_gpu();
    Gpu::open_ordinal(ordinal, need_cublas).unwrap_or_else(|e| panic!("{e}"))
}

/// Device 0 (see [`gpu_ordinal`]).
pub fn gpu() -> Gpu {
    gpu_ordinal(0, false)
}

/// Device 0 with cuBLAS checked as well (see [`gpu_ordinal`]).
pub fn gpu_with_cublas() -> Gpu {
    gpu_ordinal(0, true)
}

/// Every `.html` file under `dir`.
pub fn html_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            html_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "html") {
            out.push(p);
        }
    }
}

/// The chapter files SUMMARY.md lists, in order.
pub fn chapters() -> Vec<String> {
    let summary =
        std::fs::read_to_string(book_root().join("src/book/SUMMARY.md")).unwrap();
    summary
        .match_indices("](")
        .map(|(i, _)| summary[i + 2..].split(')').next().unwrap().to_string())
        .collect()
}

/// An example as `cargo test` builds it, beside the test binary
/// (`target/<profile>/examples/<name>`).
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is not built (cargo test builds the examples)",
        path.display()
    );
    path
}

/// How an example ended: its exit code and what it printed.
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// The outcome of a finished example; the one line a debug build prints first (that its
/// timings are not the book's) is dropped from stderr, since `cargo test` builds the examples
/// in debug.
pub fn outcome(out: std::process::Output) -> Outcome {
    let stderr = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("note: a debug build"))
        .map(|l| format!("{l}\n"))
        .collect();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into(),
        stderr,
    }
}

/// Runs the example `name` with `args`.
pub fn run_example<S: AsRef<std::ffi::OsStr>>(name: &str, args: &[S]) -> Outcome {
    outcome(std::process::Command::new(example(name)).args(args).output().unwrap())
}
