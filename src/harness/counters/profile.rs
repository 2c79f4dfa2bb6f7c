//! The parent of a `--counters` run: runs the example again under ncu as a counting child,
//! then writes what ncu counted for each case beside the chapter's predictions.

use std::path::Path;

use anyhow::{bail, Context};

use super::report::{COUNTED_SHOWN, COUNTERS_SHOWN};
use super::{
    compare_rows, find_ncu, metric_list, ncu_missing, ncu_version, parse_raw,
    read_cases, split_cases, CHILD_ENV,
};
use crate::harness::chapter::Chapter;
use crate::harness::run::{self, Run};

/// The child's arguments: this run's, without `--counters` and `--out`, writing into `out`.
pub fn child_args(args: impl Iterator<Item = String>, out: &Path) -> Vec<String> {
    let mut kept = run::without_out(args.filter(|a| a != "--counters"));
    kept.push("--out".into());
    kept.push(out.display().to_string());
    kept
}

/// The stems a `--counters` run writes: `<page>-counters` and `<page>-counted`, named after
/// the chapter's page as every other stem is (`tiled_matmul` counts into `tiling-...`), or
/// for a part of the example that counts apart, `<page>-<part>-counters` and
/// `<page>-<part>-counted`; the registry must list them.
pub fn counters_stems(
    chapter: &Chapter,
    part: Option<&str>,
) -> anyhow::Result<(&'static str, &'static str)> {
    let page = chapter.page.trim_end_matches(".md");
    let listed = |suffix: &str| {
        let want = match part {
            Some(p) => format!("{page}-{p}-{suffix}"),
            None => format!("{page}-{suffix}"),
        };
        chapter.counted.iter().copied().find(|&s| s == want).ok_or_else(|| {
            anyhow::anyhow!(
                "{} counts into {want}, which its registry entry does not list",
                chapter.example
            )
        })
    };
    Ok((listed("counters")?, listed("counted")?))
}

/// The parent of a `--counters` run: runs this example under ncu as a counting child and
/// writes what ncu counted for each case, beside the chapter's predictions (into the stems
/// of [`counters_stems`] for `part`). ncu's log, the labels and the child's records go to a
/// temporary folder, removed when the run succeeds and kept (and named) when it fails.
pub fn profile(run: &Run, part: Option<&str>) -> anyhow::Result<()> {
    let stems = counters_stems(run.chapter, part)?;
    let ncu = find_ncu().ok_or_else(ncu_missing)?;
    let scratch = tempfile::Builder::new()
        .prefix(&format!("cmbook-counters-{}-", run.chapter.example))
        .tempdir()?;
    match count_under_ncu(run, &ncu, scratch.path(), stems) {
        Ok(()) => Ok(()),
        Err(e) => {
            let kept = scratch.keep();
            Err(e.context(format!(
                "ncu's log and the labels are kept in {}",
                kept.display()
            )))
        }
    }
}

/// Runs the counting child under `ncu` with its files in `scratch`, then writes both tables.
fn count_under_ncu(
    run: &Run,
    ncu: &Path,
    scratch: &Path,
    (counters_stem, counted_stem): (&str, &str),
) -> anyhow::Result<()> {
    let (labels, log) = (scratch.join("labels.tsv"), scratch.join("ncu.csv"));
    let exe = std::env::current_exe()?;
    let args = child_args(std::env::args().skip(1), &scratch.join("run"));
    println!(
        "counting under {} (one replay pass per metric group; minutes, not seconds)",
        ncu.display()
    );
    let status = std::process::Command::new(ncu)
        .args(["--csv", "--page", "raw", "--profile-from-start", "off"])
        .args(["--cache-control", "all", "--clock-control", "base"])
        .args(["--target-processes", "all", "--metrics", &metric_list()])
        .arg("--log-file")
        .arg(&log)
        .arg(&exe)
        .args(&args)
        .env(CHILD_ENV, &labels)
        .status()
        .with_context(|| format!("cannot start {}", ncu.display()))?;
    if !status.success() {
        bail!(
            "the counting run under ncu failed ({status}); its log: {}",
            log.display()
        );
    }
    let text = std::fs::read_to_string(&log)
        .with_context(|| format!("ncu wrote no CSV to {}", log.display()))?;
    let cases = read_cases(&labels)?;
    anyhow::ensure!(
        !cases.is_empty(),
        "{} marks no case to count",
        run.chapter.example
    );
    let counted = split_cases(&parse_raw(&text)?, &cases)?;
    let version = ncu_version(ncu);
    let child = run::command_line_from(
        run.chapter.example,
        run::profile(),
        args[..args.len() - 2].iter().cloned(),
    );
    let extra = [
        ("ncu", version.as_str()),
        ("clock_control", "base (ncu locks the SM clock at its base clock)"),
        ("cache_control", "all (caches flushed before each replay pass: cold L2)"),
        ("counted_run", child.as_str()),
    ];
    run.table(
        counters_stem,
        "Hardware counters of the chapter's key kernels",
        &extra_with(&extra, COUNTERS_SHOWN),
        &counted,
    )?;
    let rows = compare_rows(&cases, &counted);
    run.table(
        counted_stem,
        "Predicted and counted",
        &extra_with(&extra, COUNTED_SHOWN),
        &rows,
    )?;
    println!("{} cases counted", counted.len());
    Ok(())
}

fn extra_with<'a>(
    a: &[(&'a str, &'a str)],
    b: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    a.iter().chain(b).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry that counts its whole run and one part of it, and one that counts nothing.
    fn entry(example: &'static str, counted: &'static [&'static str]) -> Chapter {
        Chapter {
            example,
            page: Box::leak(format!("{example}.md").into_boxed_str()),
            title: "A chapter",
            needs: crate::harness::Needs::Gpu,
            reps: crate::harness::FullQuick::new(3, 1),
            writes: &[],
            counted,
            sanitizer_args: &[],
            note: "",
            headlines: &[],
            claims: &[],
            exercise: None,
        }
    }

    #[test]
    fn a_part_counts_into_its_own_listed_stems() {
        let atax = &entry(
            "atax",
            &[
                "atax-counters",
                "atax-counted",
                "atax-pitched-counters",
                "atax-pitched-counted",
            ],
        );
        assert_eq!(
            counters_stems(atax, None).unwrap(),
            ("atax-counters", "atax-counted")
        );
        assert_eq!(
            counters_stems(atax, Some("pitched")).unwrap(),
            ("atax-pitched-counters", "atax-pitched-counted")
        );
        let e = counters_stems(atax, Some("shapes")).unwrap_err().to_string();
        assert!(
            e.contains("atax-shapes-counters") && e.contains("does not list"),
            "{e}"
        );
        // An example whose page has another stem counts under the page's.
        let tiled = Chapter {
            page: "tiling.md",
            ..entry("tiled_matmul", &["tiling-counters", "tiling-counted"])
        };
        assert_eq!(
            counters_stems(&tiled, None).unwrap(),
            ("tiling-counters", "tiling-counted")
        );
        let e = counters_stems(&entry("loop_permutation", &[]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not list"), "{e}");
    }

    #[test]
    fn the_child_writes_elsewhere_and_does_not_count_again() {
        let args = ["--quick", "--counters", "--out", "figures", "--reps=3"];
        let got = child_args(args.iter().map(|s| s.to_string()), Path::new("/tmp/x"));
        assert_eq!(got, ["--quick", "--reps=3", "--out", "/tmp/x"]);
    }
}
