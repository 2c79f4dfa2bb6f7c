//! Build script: four jobs, the first three so that what runs is what the book shows.
//!
//! 1. The kernel registry: every `kernels/*.cu` becomes an `include_str!` entry, so the binaries
//!    are self-contained and a test can compile every kernel without a list kept by hand; every
//!    `kernels/*.cuh` (code the kernel files share) likewise, in a list of its own.
//! 2. Provenance known only at build time: the git commit and the cudarc version.
//! 3. The book's Rust snippets for skeptic, with mdBook's `{{#include}}` directives expanded
//!    first (skeptic does not expand them), so CI compiles exactly the code the reader sees.
//! 4. The tools the tests need (ptxas, nvdisasm, libcuda, libnvrtc, Chromium), probed on the
//!    loader path and `PATH`: a test whose tool is missing is compiled as ignored, with the
//!    reason, instead of passing unchecked.
//!
//! A build with nothing changed must compile nothing: every generated file is written only
//! when its content changes, the expanded chapters carry their sources' modification time
//! (skeptic declares them as inputs, and a file newer than the last run would re-run this
//! script every time), and every input is declared with `rerun-if-changed`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

#[path = "src/harness/includes.rs"]
#[allow(dead_code)]
mod includes;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    watch(&root.join("build.rs"));
    watch(&root.join("src/harness/includes.rs"));
    write_kernel_registry(&root, &out);
    emit_provenance(&root);
    expand_book_for_skeptic(&root, &out);
    probe_test_tools();
}

/// Tests that need a tool this machine lacks are compiled as ignored, with the reason, so
/// the test runner's own summary shows them as skipped instead of `ok` (`.ci/run`, which
/// installs every tool, fails if any test but the GPU ones is ignored).
fn probe_test_tools() {
    for var in
        ["PATH", "LD_LIBRARY_PATH", "CHROMIUM", "CMBOOK_PTXAS", "CMBOOK_NVDISASM"]
    {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(cmbook_no_nvrtc)");
    println!("cargo::rustc-check-cfg=cfg(cmbook_no_nvrtc12)");
    println!("cargo::rustc-check-cfg=cfg(cmbook_no_browser)");
    println!("cargo::rustc-check-cfg=cfg(cmbook_cuda_driver)");
    println!("cargo::rustc-check-cfg=cfg(cmbook_no_sass_tools)");
    let tool = |var: &str, name: &str| {
        std::env::var_os(var).is_some_and(|p| PathBuf::from(p).is_file())
            || on_path(name)
    };
    if !(tool("CMBOOK_PTXAS", "ptxas") && tool("CMBOOK_NVDISASM", "nvdisasm")) {
        println!("cargo:rustc-cfg=cmbook_no_sass_tools");
    }
    if library_on_loader_path("libcuda.so.1") {
        println!("cargo:rustc-cfg=cmbook_cuda_driver");
    }
    if !library_on_loader_path("libnvrtc.so.13") {
        println!("cargo:rustc-cfg=cmbook_no_nvrtc");
    }
    if !library_on_loader_path("libnvrtc.so.12") {
        println!("cargo:rustc-cfg=cmbook_no_nvrtc12");
    }
    let browsers = ["chromium", "chromium-browser", "google-chrome"];
    let named = std::env::var_os("CHROMIUM").map(PathBuf::from);
    if !named.is_some_and(|p| p.exists()) && !browsers.iter().any(|b| on_path(b)) {
        println!("cargo:rustc-cfg=cmbook_no_browser");
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| d.join(program).is_file())
    })
}

/// Whether the dynamic loader would find `name`: in `LD_LIBRARY_PATH` or in its cache.
fn library_on_loader_path(name: &str) -> bool {
    let in_path = std::env::var_os("LD_LIBRARY_PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| d.join(name).exists())
    });
    in_path
        || Command::new("ldconfig")
            .arg("-p")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(name))
        || Command::new("/sbin/ldconfig")
            .arg("-p")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(name))
}

fn watch(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}

/// Writes `path` only if its content differs, so an unchanged file keeps its timestamp.
fn write_if_changed(path: &Path, content: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(content) {
        fs::write(path, content)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}

fn write_kernel_registry(root: &Path, out: &Path) {
    let dir = root.join("kernels");
    watch(&dir);
    let names: Vec<String> = fs::read_dir(&dir)
        .expect("kernels/ must exist")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    // The kernel files, and apart from them the headers they share code through: a header
    // is never compiled on its own, only pasted into the files that include it.
    for (ext, registry) in
        [(".cu", "kernel_registry.rs"), (".cuh", "kernel_headers.rs")]
    {
        let mut files: Vec<&String> =
            names.iter().filter(|name| name.ends_with(ext)).collect();
        files.sort();
        let mut entries = String::from("&[\n");
        for name in files {
            let path = dir.join(name);
            watch(&path);
            entries.push_str(&format!(
                "    KernelSource {{ file: {name:?}, source: include_str!({:?}) }},\n",
                path.display().to_string()
            ));
        }
        entries.push(']');
        write_if_changed(&out.join(registry), &entries);
    }
}

fn emit_provenance(root: &Path) {
    // The commit the binary was built from; "-dirty" when tracked files had uncommitted
    // changes. HEAD moves on checkout, the index on commit and on `git add`.
    for p in [".git/HEAD", ".git/index"] {
        if root.join(p).exists() {
            watch(&root.join(p));
        }
    }
    let git = |args: &[&str]| {
        Command::new("git")
            // Never refresh (rewrite) the index: that would trigger this script again.
            .arg("--no-optional-locks")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(c) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{c}-dirty")
            } else {
                c
            }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=CMBOOK_GIT_COMMIT={commit}");

    // cudarc's version as resolved in Cargo.lock (the manifest only gives a range).
    let lock = root.join("Cargo.lock");
    watch(&lock);
    let text = fs::read_to_string(&lock).unwrap_or_default();
    let mut version = "unknown".to_string();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"cudarc\"" {
            if let Some(v) =
                lines.next().and_then(|l| l.trim().strip_prefix("version = "))
            {
                version = v.trim_matches('"').to_string();
            }
            break;
        }
    }
    println!("cargo:rustc-env=CMBOOK_CUDARC_VERSION={version}");
}

fn modified(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn expand_book_for_skeptic(root: &Path, out: &Path) {
    let book = root.join("src/book");
    watch(&book); // a chapter added or removed
    let dest = out.join("book-expanded");
    fs::create_dir_all(&dest).unwrap();
    let mut chapters: Vec<PathBuf> = fs::read_dir(&book)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "md") && !p.ends_with("SUMMARY.md")
        })
        .collect();
    chapters.sort();
    let mut expanded = Vec::new();
    for chapter in chapters {
        watch(&chapter);
        let mut newest = modified(&chapter);
        let text = fs::read_to_string(&chapter).unwrap();
        let (body, errors) = includes::expand(&text, &book, &mut |file| {
            watch(file);
            newest = newest.max(modified(file));
        });
        // A broken include must not stop the build (the examples that write the figures are
        // built by it); tests/book/book.rs fails on it with the chapter's name.
        for e in errors {
            println!("cargo:warning={}: {}: {}", chapter.display(), e.directive, e.why);
        }
        let target = dest.join(chapter.file_name().unwrap());
        write_if_changed(&target, &body);
        if let (Some(time), Ok(file)) =
            (newest, fs::File::options().write(true).open(&target))
        {
            file.set_modified(time).unwrap();
        }
        expanded.push(target);
    }
    skeptic::generate_doc_tests(&expanded);
}
