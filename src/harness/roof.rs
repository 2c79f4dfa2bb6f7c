//! The ceilings a roofline needs, read back from a run's `ceilings-peaks` record (the chapter
//! "Measuring a GPU" measures them), and the datasheet's figures beside them. Every chapter
//! that divides by a peak reads it here, from whichever folder holds the record.

use std::path::Path;

use anyhow::Context;

use super::compare::leading_number;
use super::record::{self, Meta, Record};

/// The ceilings of one GPU, in GFLOP/s and GB/s.
#[derive(Debug, Clone, PartialEq)]
pub struct Roof {
    pub fp32_gflops: f64,
    pub fp64_gflops: f64,
    pub l2_gbps: f64,
    pub dram_gbps: f64,
    /// The record the ceilings came from (its provenance names the device).
    pub meta: Meta,
}

impl Roof {
    /// The attainable rate at `intensity` FLOP/byte: the lower of the arithmetic peak
    /// and what device memory (or, for data that stays in L2, the L2) can feed.
    pub fn attainable(&self, intensity: f64, double: bool, l2_resident: bool) -> f64 {
        let peak = if double { self.fp64_gflops } else { self.fp32_gflops };
        let bandwidth = if l2_resident { self.l2_gbps } else { self.dram_gbps };
        peak.min(bandwidth * intensity)
    }
}

/// The record `data/<stem>.csv` of the folder `dir`.
pub fn read(dir: &Path, stem: &str) -> anyhow::Result<Record> {
    record::read_csv(&dir.join("data").join(format!("{stem}.csv")))
}

/// The cell of `row` in `column`.
pub fn cell<'a>(
    rec: &'a Record,
    row: &'a [String],
    column: &str,
) -> anyhow::Result<&'a str> {
    Ok(&row[rec.column(column)?])
}

/// The leading number of the cell of `row` in `column` (`39.7x` → 39.7).
pub fn number(rec: &Record, row: &[String], column: &str) -> anyhow::Result<f64> {
    let v = cell(rec, row, column)?;
    leading_number(v)
        .with_context(|| format!("`{v}` in column {column} is not a number"))
}

/// Reads the ceilings from `ceilings-peaks`.
pub fn read_roof(dir: &Path) -> anyhow::Result<Roof> {
    let rec = read(dir, "ceilings-peaks")?;
    let value = |name: &str| -> anyhow::Result<f64> {
        let row = rec
            .rows
            .iter()
            .find(|r| r[0] == name)
            .with_context(|| format!("ceilings-peaks has no row `{name}`"))?;
        number(&rec, row, "median")
    };
    Ok(Roof {
        fp32_gflops: value("FP32 multiply-add")? * 1e3,
        fp64_gflops: value("FP64 multiply-add")? * 1e3,
        l2_gbps: value("L2 read, inside one launch")?,
        dram_gbps: value("device memory, best copy")?,
        meta: rec.meta,
    })
}

/// A datasheet's figures for the devices the book has measured: FP32 and FP64 (without
/// tensor cores) in TFLOP/s and device memory in GB/s. Printed beside the measured ceilings,
/// never used in their place.
pub fn datasheet(device: &str) -> Option<(f64, f64, f64, &'static str)> {
    match device {
        "NVIDIA H100 80GB HBM3" => Some((67.0, 34.0, 3350.0, "H100 SXM5 datasheet")),
        d if d.starts_with("NVIDIA H200") => {
            Some((67.0, 34.0, 4800.0, "H200 SXM datasheet"))
        }
        _ => None,
    }
}
