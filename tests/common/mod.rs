//! Helpers shared by the test binaries: building the book in-process with mdBook's own
//! library (nothing to install), reading its table of contents, and opening the GPU.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cmbook::harness::Gpu;

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

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
        let mut book = mdbook_driver::MDBook::load(ROOT)
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

/// Device 0, with the driver and NVRTC checked first; a machine without them fails the test
/// with the one-line reason.
pub fn gpu() -> Gpu {
    Gpu::open(false).unwrap_or_else(|e| panic!("{e}"))
}

/// [`gpu`], with cuBLAS checked as well.
pub fn gpu_with_cublas() -> Gpu {
    Gpu::open(true).unwrap_or_else(|e| panic!("{e}"))
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
        std::fs::read_to_string(Path::new(ROOT).join("src/book/SUMMARY.md")).unwrap();
    summary
        .match_indices("](")
        .map(|(i, _)| summary[i + 2..].split(')').next().unwrap().to_string())
        .collect()
}
