//! `reproduce`: every chapter's example run one after another (measuring, under the
//! sanitizers, or not at all: redrawing), the figure audit, and the comparison page. The
//! chapter list is [`super::ALL`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::chapters::{self, Chapter};
use crate::harness::record;
use crate::harness::run::{self, Needs};
use crate::harness::UsageError;

/// compute-sanitizer's tools, each run on every GPU example.
pub const SANITIZER_TOOLS: &[&str] =
    &["memcheck", "racecheck", "initcheck", "synccheck"];

/// The files `reproduce` writes itself beside the records (the comparison page): declared
/// here so that the audit and a redraw know them for what they are, whatever ran before.
pub const OWN_FILES: &[&str] = record::COMPARISON_PAGES;

/// Whether `stem` is one of the book's records: a chapter's figure or table, or one that
/// `reproduce` composes. Any other CSV under `data/` is the reader's, and left alone.
pub fn is_book_record(stem: &str) -> bool {
    chapters::writer_of(stem).is_some() || chapters::REPRODUCE_WRITES.contains(&stem)
}

/// Redraws the book's records under `dir` from their CSVs, saying which other CSVs it left
/// alone.
fn redraw(dir: &Path) -> anyhow::Result<usize> {
    let (count, ignored) = record::redraw_records(dir, is_book_record)?;
    if !ignored.is_empty() {
        println!(
            "note: left alone, as they are not the book's records: {}",
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
    if args.compare || args.roofline || args.redraw_only {
        let _lock = run::claim_out(&out)?;
        return offline_mode(&args, &out);
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
    let lock = run::claim_out(&out)?;
    if args.sanitize {
        return sanitize(&args, &out, &binaries);
    }
    let bar = progress(binaries.len());
    let started = Instant::now();
    let mut skipped = Vec::new();
    for (c, path) in &binaries {
        bar.set_message(c.example);
        let t = Instant::now();
        let mut cmd = Command::new(path);
        cmd.arg("--out").arg(&out).env(run::OUT_LOCK_ENV, &lock.dir);
        if args.quick {
            cmd.arg("--quick");
        }
        if args.counters {
            cmd.arg("--counters");
        }
        let status = bar.suspend(|| cmd.status())?;
        match status.code() {
            Some(0) => bar.println(format!(
                "{}: done in {:.0} s",
                c.example,
                t.elapsed().as_secs_f64()
            )),
            // Exit code 2: this machine lacks what the chapter needs (a second GPU's library,
            // cuBLAS, ...); the example has said what in one line. The rest can still run.
            Some(2) => {
                bar.println(format!(
                    "{}: skipped, it cannot run here (exit code 2)",
                    c.example
                ));
                skipped.push(c.example);
            }
            code => {
                let code = code.unwrap_or(1);
                return Err(anyhow::anyhow!("{} failed (exit code {code})", c.example));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if skipped.len() == binaries.len() {
        return Err(UsageError(format!(
            "no chapter could run on this machine (each said why above): {}",
            skipped.join(", ")
        ))
        .into());
    }
    println!(
        "measured {} chapters in {:.0} s into {}",
        binaries.len() - skipped.len(),
        started.elapsed().as_secs_f64(),
        out.display()
    );
    if !skipped.is_empty() {
        println!("skipped, as this machine cannot run them: {}", skipped.join(", "));
    }
    if args.counters {
        return audit(&out);
    }
    // The roofline needs the ceilings of this run; it places whichever chapters ran.
    if out.join("data/ceilings-peaks.csv").exists() {
        super::roofline::write(&out)?;
    }
    audit(&out)?;
    write_comparison(&out, None)
}

/// `--compare`, `--roofline` or `--redraw-only`: no GPU, nothing measured.
fn offline_mode(args: &Options, out: &Path) -> anyhow::Result<()> {
    if args.compare {
        return write_comparison(out, args.book.clone());
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
    let name = dir.display().to_string();
    let quick = compare::was_quick(dir);
    let [md_name, html_name] = OWN_FILES else { unreachable!("two pages") };
    let md = compare::markdown(&headlines, &claims, &name, quick);
    let html = compare::html(&headlines, &claims, &name, quick);
    // Both pages are made before either is written, each replaced whole.
    record::write_atomic(&dir.join(md_name), md.as_bytes())?;
    record::write_atomic(&dir.join(html_name), html.as_bytes())?;
    for line in compare::console(&headlines, &claims) {
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

#[derive(serde::Serialize)]
struct SanitizerRow {
    example: String,
    tool: &'static str,
    arguments: String,
    kernels_used: String,
    errors: String,
    exit_code: i32,
}

fn sanitize(
    args: &Options,
    out: &Path,
    binaries: &[(&'static Chapter, PathBuf)],
) -> anyhow::Result<()> {
    use crate::harness::record::Meta;
    let gpu = crate::harness::Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let checked: Vec<_> =
        binaries.iter().filter(|(c, _)| c.needs != Needs::Cpu).collect();
    let runs: Vec<(&'static Chapter, &PathBuf, &'static str)> = checked
        .iter()
        .flat_map(|(c, path)| SANITIZER_TOOLS.iter().map(move |&tool| (*c, path, tool)))
        .collect();
    let bar = progress(runs.len());
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
                    bar.println(format!("{name} under {tool}: exit code {code}"));
                    bar.inc(1);
                    Ok((
                        SanitizerRow {
                            example: name.to_string(),
                            tool,
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
    record::write_table(out, "sanitizer", &meta, &rows)?;
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
