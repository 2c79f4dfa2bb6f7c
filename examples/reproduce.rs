//! Re-measures every figure of the book on your GPU, or redraws them from their CSVs.
//!
//! ```console
//! $ cargo build --release --examples
//! $ cargo run --release --example reproduce -- --out my-gpu/          # every chapter, measured
//! $ cargo run --release --example reproduce -- --out figures/ --redraw-only   # no GPU needed
//! $ cargo run --release --example reproduce -- --out figures/ --sanitize      # compute-sanitizer
//! ```
//!
//! `--sanitize` runs every chapter's example in its quick mode under each compute-sanitizer tool
//! (memcheck with leak checking, racecheck, initcheck, synccheck) and writes the table
//! `sanitizer.md` (+ `data/sanitizer.csv`): example × tool → kernels used, errors.
//!
//! The measuring mode runs each chapter's example (built beside this one) with `--out DIR`,
//! one after another, and stops at the first that fails; each example verifies its own results.
//! Both modes end by checking that every figure and table in the folder is exactly what its CSV
//! draws and that every CSV carries its provenance.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use clap::Parser;
use cmbook::harness::{plot, run_main, UsageError};
use indicatif::{ProgressBar, ProgressStyle};

/// The chapters' examples, in the book's order.
const CHAPTERS: &[&str] = &[
    "ceilings",
    "memory_spaces",
    "coalescing",
    "loop_permutation",
    "tiled_matmul",
    "cmm_diagonal",
    "cmm_beyond",
    "atax",
];

/// Examples that run no kernel (nothing for compute-sanitizer to check).
const CPU_ONLY: &[&str] = &["loop_permutation"];

/// The arguments each example runs with under the sanitizers: small, because the tools slow
/// kernels down by one or two orders of magnitude.
fn sanitizer_args(example: &str) -> &'static [&'static str] {
    match example {
        "ceilings" => &[
            "--quick",
            "--max-copy-mib",
            "8",
            "--max-transfer-mib",
            "2",
            "--reps",
            "2",
        ],
        "atax" => {
            &["--quick", "--reps", "1", "--large-side", "257", "--ceiling-mib", "4"]
        }
        "tiled_matmul" => &["--quick", "--reps", "1", "--n", "64"],
        // n = 130: three tiles per side, so every tiled kernel runs, the min-plus one included.
        "cmm_beyond" => &["--quick", "--reps", "1", "--sizes", "130"],
        _ => &["--quick", "--reps", "1"],
    }
}

const SANITIZER_TOOLS: &[&str] = &["memcheck", "racecheck", "initcheck", "synccheck"];

#[derive(Parser, Debug)]
#[command(
    about = "Re-measure every figure of the book, or redraw them from their CSVs"
)]
struct Args {
    /// Folder that receives the figures, tables and data (created if needed).
    #[arg(long)]
    out: PathBuf,
    /// Redraw every SVG and table in --out from its CSV; measures nothing, needs no GPU.
    #[arg(long)]
    redraw_only: bool,
    /// Small sizes and few repetitions (passed on to every example).
    #[arg(long)]
    quick: bool,
    /// Only these chapters' examples (comma-separated), e.g. `--only ceilings,cmm_diagonal`.
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// Run every example under each compute-sanitizer tool instead of measuring, and write the
    /// table `sanitizer.md` into --out.
    #[arg(long, conflicts_with = "redraw_only")]
    sanitize: bool,
    /// The compute-sanitizer executable.
    #[arg(long, default_value = "compute-sanitizer")]
    sanitizer: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    run_main(|| run(args))
}

fn run(args: Args) -> anyhow::Result<()> {
    if args.redraw_only {
        let count = plot::redraw_all(&args.out).map_err(|e| {
            UsageError(format!("cannot redraw {}: {e:#}", args.out.display()))
        })?;
        println!("redrew {count} figures and tables in {}", args.out.display());
        return audit(&args.out);
    }
    let chapters: Vec<&str> = match &args.only {
        None => CHAPTERS.to_vec(),
        Some(names) => {
            for n in names {
                if !CHAPTERS.contains(&n.as_str()) {
                    return Err(UsageError(format!(
                        "--only: no chapter example `{n}` (known: {})",
                        CHAPTERS.join(", ")
                    ))
                    .into());
                }
            }
            CHAPTERS.iter().copied().filter(|c| names.iter().any(|n| n == c)).collect()
        }
    };
    let here = std::env::current_exe()?;
    let dir = here.parent().unwrap_or(Path::new("."));
    let binaries: Vec<(String, PathBuf)> = chapters
        .iter()
        .map(|c| {
            (c.to_string(), dir.join(format!("{c}{}", std::env::consts::EXE_SUFFIX)))
        })
        .collect();
    for (name, path) in &binaries {
        if !path.exists() {
            return Err(UsageError(format!("the example `{name}` is not built next to this one ({}); run `cargo build --release --examples` first", path.display())).into());
        }
    }
    std::fs::create_dir_all(&args.out)?;
    if args.sanitize {
        return sanitize(&args, &binaries);
    }
    let bar = ProgressBar::new(binaries.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})").unwrap(),
    );
    let started = Instant::now();
    for (name, path) in &binaries {
        bar.set_message(name.clone());
        let t = Instant::now();
        let mut cmd = Command::new(path);
        cmd.arg("--out").arg(&args.out);
        if args.quick {
            cmd.arg("--quick");
        }
        let status = bar.suspend(|| cmd.status())?;
        if !status.success() {
            // The example has printed its own one-line reason; keep its exit code's meaning.
            let code = status.code().unwrap_or(1);
            return Err(if code == 2 {
                UsageError(format!("{name} could not run (exit code 2)")).into()
            } else {
                anyhow::anyhow!("{name} failed (exit code {code})")
            });
        }
        bar.println(format!("{name}: done in {:.0} s", t.elapsed().as_secs_f64()));
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "measured {} chapters in {:.0} s into {}",
        binaries.len(),
        started.elapsed().as_secs_f64(),
        args.out.display()
    );
    audit(&args.out)
}

fn audit(dir: &Path) -> anyhow::Result<()> {
    let problems = plot::audit_figures(dir)?;
    if !problems.is_empty() {
        anyhow::bail!("figures out of step with their data:\n{}", problems.join("\n"));
    }
    println!("every figure and table in {} is exactly what its CSV draws, with full provenance", dir.display());
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

fn sanitize(args: &Args, binaries: &[(String, PathBuf)]) -> anyhow::Result<()> {
    use cmbook::harness::record::{self, Meta};
    let gpu = cmbook::harness::Gpu::open(false)?;
    println!("{}", gpu.info.line());
    let bar = ProgressBar::new(
        (binaries.len().saturating_sub(CPU_ONLY.len()) * SANITIZER_TOOLS.len()) as u64,
    );
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})").unwrap(),
    );
    let scratch = std::env::temp_dir().join("cmbook-sanitizer");
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (name, path) in
        binaries.iter().filter(|(name, _)| !CPU_ONLY.contains(&name.as_str()))
    {
        for &tool in SANITIZER_TOOLS {
            bar.set_message(format!("{name} under {tool}"));
            let mut cmd = Command::new(&args.sanitizer);
            cmd.arg("--tool").arg(tool);
            if tool == "memcheck" {
                cmd.args(["--leak-check", "full"]);
            }
            cmd.args(["--error-exitcode", "9"])
                .arg(path)
                .args(sanitizer_args(name))
                .arg("--out")
                .arg(scratch.join(format!("{name}-{tool}")));
            let output = cmd.output().map_err(|e| {
                UsageError(format!("cannot run {}: {e}", args.sanitizer.display()))
            })?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            let (errors, kernels) =
                cmbook::harness::sanitizer::parse_output(tool, &text);
            let code = output.status.code().unwrap_or(-1);
            if errors != Some(0) || code != 0 {
                failed.push(format!(
                    "{name} under {tool}: exit code {code}, errors {errors:?}\n{}",
                    text.lines()
                        .rev()
                        .take(15)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
            rows.push(SanitizerRow {
                example: name.clone(),
                tool,
                arguments: sanitizer_args(name).join(" "),
                kernels_used: kernels.map_or("?".into(), |k| k.to_string()),
                errors: errors.map_or("no summary".into(), |e| e.to_string()),
                exit_code: code,
            });
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let meta = Meta::for_gpu(&gpu.info, &cmbook::harness::cli::command_line("reproduce"))
        .with("title", "Every chapter's example in its quick mode under each compute-sanitizer tool (memcheck with --leak-check full)");
    record::write_table(&args.out, "sanitizer", &meta, &rows)?;
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
        args.out.join("sanitizer.md").display()
    );
    Ok(())
}
