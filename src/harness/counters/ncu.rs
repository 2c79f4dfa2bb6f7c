//! Nsight Compute itself: where it is, its version, and its raw CSV read into launches.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::harness::run::UsageError;

/// One profiled launch from ncu's raw CSV: ncu's ID for it, its kernel's name and its
/// metrics' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub id: String,
    pub kernel: String,
    pub values: BTreeMap<String, f64>,
}

impl Launch {
    /// A metric's value; an error naming the metric and the launch when ncu reported none
    /// (a metric missing from the metric list must not read as zero).
    pub fn get(&self, metric: &str) -> anyhow::Result<f64> {
        self.values.get(metric).copied().with_context(|| {
            format!(
                "ncu reported no {metric} for launch {} of `{}`",
                self.id, self.kernel
            )
        })
    }

    /// The kernel's function name without its parameter list.
    pub fn function(&self) -> &str {
        let name = self.kernel.split('(').next().unwrap_or(&self.kernel);
        name.rsplit(' ').next().unwrap_or(name).trim()
    }
}

/// Parses ncu's `--csv --page raw` output: a header row of metric names, a row of units,
/// then one row per launch. Lines before the header (the program's own output, ncu's
/// `==PROF==` notes) are skipped; numbers may carry thousands separators. A cell that is no
/// number (a name, a block size, `n/a`) is left out of the launch's values.
pub fn parse_raw(text: &str) -> anyhow::Result<Vec<Launch>> {
    let start = text.find("\"ID\",").context(
        "no ncu raw CSV header (a line starting with \"ID\",) in the output",
    )?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(&text.as_bytes()[start..]);
    let headers = reader.headers()?.clone();
    let name_col = headers
        .iter()
        .position(|h| h == "Kernel Name")
        .context("ncu's CSV has no `Kernel Name` column")?;
    let mut launches = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row?;
        if i == 0 {
            continue; // the units row
        }
        let mut values = BTreeMap::new();
        for (h, cell) in headers.iter().zip(row.iter()) {
            let clean: String = cell.chars().filter(|&c| c != ',').collect();
            if let Ok(v) = clean.trim().parse::<f64>() {
                values.insert(h.to_string(), v);
            }
        }
        launches.push(Launch {
            id: row[0].to_string(),
            kernel: row[name_col].to_string(),
            values,
        });
    }
    Ok(launches)
}

/// Where ncu is: `CMBOOK_NCU`, else `ncu` on the PATH, else the CUDA toolkit's usual place.
pub fn find_ncu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CMBOOK_NCU") {
        return Some(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths).map(|d| d.join("ncu")).find(|p| p.is_file())
    });
    on_path.or_else(|| {
        let p = PathBuf::from("/usr/local/cuda/bin/ncu");
        p.is_file().then_some(p)
    })
}

/// ncu's version line (`Version 2025.3.1.0 …`), for the provenance.
pub fn ncu_version(ncu: &Path) -> String {
    std::process::Command::new(ncu)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find(|l| l.contains("Version"))
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Why a `--counters` run cannot start here (exit code 2).
pub fn ncu_missing() -> UsageError {
    UsageError(
        "no Nsight Compute: ncu was not found on the PATH or in /usr/local/cuda/bin (it \
         ships with the CUDA toolkit; CMBOOK_NCU=/path/to/ncu names another)"
            .into(),
    )
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// ncu 2025.3.1's `--csv --page raw` output on an H100 for two probe kernels, with the
    /// whole metric list ([`super::super::metric_list`]): `saxpy_probe` over 2²² floats
    /// (256 threads a block) and `transpose_probe`, a 2048² transpose through an unpadded
    /// 32×32 shared tile.
    pub(in super::super) const FIXTURE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/ncu-raw-h100.csv"
    ));

    /// The metrics of [`super::super::metric_list`] that ncu was not asked for when
    /// [`FIXTURE`] was recorded, with the value [`fixture_launches`] gives each of its two
    /// launches: made-up stand-ins that keep the fixture's real numbers apart from invented
    /// ones. Recording the fixture again with today's list empties this table (a test
    /// insists that it lists exactly the metrics the fixture lacks).
    pub(in super::super) const NEWER_THAN_FIXTURE: &[(&str, [f64; 2])] = &[
        // saxpy_probe: a quarter of its 1 048 576 load sectors hit; transpose_probe: none.
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", [262_144.0, 0.0]),
        // One tag-stage pass per request for saxpy_probe, two for transpose_probe.
        (
            "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum",
            [262_144.0, 262_144.0],
        ),
        // Active cycles of the average SM against its elapsed ones: 80% and 100%.
        ("sm__cycles_active.avg", [20_000.0, 50_000.0]),
        ("sm__cycles_elapsed.avg", [25_000.0, 50_000.0]),
    ];

    /// [`FIXTURE`]'s launches with the stand-ins of [`NEWER_THAN_FIXTURE`] added.
    pub(in super::super) fn fixture_launches() -> Vec<Launch> {
        let mut launches = parse_raw(FIXTURE).unwrap();
        for (metric, values) in NEWER_THAN_FIXTURE {
            for (launch, value) in launches.iter_mut().zip(values) {
                launch.values.insert(metric.to_string(), *value);
            }
        }
        launches
    }

    #[test]
    fn parses_a_real_ncu_raw_csv() {
        let launches = parse_raw(FIXTURE).unwrap();
        assert_eq!(launches.len(), 2);
        assert_eq!(launches[0].function(), "saxpy_probe");
        assert_eq!(launches[1].function(), "transpose_probe");
        assert_eq!((launches[0].id.as_str(), launches[1].id.as_str()), ("0", "1"));
        // 2^22 floats read twice (x and y): 32 MiB, thousands separators removed.
        assert_eq!(launches[0].get("dram__bytes_read.sum").unwrap(), 33_558_528.0);
        assert_eq!(
            launches[0].get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum").unwrap(),
            262_144.0
        );
        assert_eq!(launches[1].get("launch__grid_size").unwrap(), 4096.0);
    }

    #[test]
    fn every_metric_of_the_list_is_in_the_fixture_or_named_as_newer() {
        let launches = parse_raw(FIXTURE).unwrap();
        let list = super::super::metric_list();
        let newer = |m: &str| NEWER_THAN_FIXTURE.iter().any(|(n, _)| *n == m);
        for metric in list.split(',') {
            for l in &launches {
                assert_eq!(l.get(metric).is_err(), newer(metric), "{metric}");
            }
        }
        for (metric, _) in NEWER_THAN_FIXTURE {
            assert!(list.split(',').any(|m| m == *metric), "{metric} is not listed");
        }
        for l in fixture_launches() {
            for metric in list.split(',') {
                l.get(metric).unwrap();
            }
        }
    }

    #[test]
    fn a_metric_ncu_did_not_report_is_an_error_naming_it_and_the_launch() {
        let launches = parse_raw(FIXTURE).unwrap();
        // A cell that is no number (the block size) is not reported either.
        for metric in ["l1tex__t_bytes.sum", "Block Size"] {
            let e = launches[1].get(metric).unwrap_err().to_string();
            assert!(e.contains(metric), "{e}");
            assert!(e.contains("launch 1 of `transpose_probe(int"), "{e}");
        }
    }
}
