//! Helpers shared by the book's tests: building the book in-process with mdBook's own
//! library (nothing to install), and reading its table of contents.
#![allow(dead_code)] // each test file uses a different part of this module

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A tracing subscriber that keeps every mdBook message at WARN or above: mdBook logs a
/// mistyped key, a missing file or a broken include as an ERROR and still builds.
struct Collect(Arc<Mutex<Vec<String>>>);

struct Message(String);

impl tracing::field::Visit for Message {
    fn record_debug(
        &mut self,
        field: &tracing::field::Field,
        value: &dyn std::fmt::Debug,
    ) {
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        self.0.push_str(&format!("{}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for Collect {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut m = Message(String::new());
        event.record(&mut m);
        let level = event.metadata().level();
        self.0.lock().unwrap().push(format!(
            "{level} {}: {}",
            event.metadata().target(),
            m.0
        ));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Builds the book into `dest` with mdBook's library; returns every WARN and ERROR it
/// logged. A failed build panics with mdBook's error.
pub fn build_book(dest: &Path) -> Vec<String> {
    let messages = Arc::new(Mutex::new(Vec::new()));
    let collect = Collect(messages.clone());
    tracing::subscriber::with_default(collect, || {
        let mut book = mdbook_driver::MDBook::load(ROOT)
            .unwrap_or_else(|e| panic!("mdBook could not load the book: {e:#}"));
        book.config.build.build_dir = dest.to_path_buf();
        book.build()
            .unwrap_or_else(|e| panic!("mdBook could not build the book: {e:#}"));
    });
    let log = messages.lock().unwrap().clone();
    log
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
