//! PyTorch's all-reduce as `torch_reference.py` (beside this file) records it: the reference
//! the chapter compares NCCL through cudarc with, on the same machine and in the same command.

use std::path::Path;

use crate::harness::record::{self, Meta};

/// One size of PyTorch's all-reduce sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct TorchPoint {
    pub ranks: usize,
    pub bytes: usize,
    /// Microseconds per all-reduce: median, fastest and slowest repetition.
    pub time_us: (f64, f64, f64),
    pub busbw_gbps: f64,
}

/// What `torch_reference.py` wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct TorchReference {
    pub meta: Meta,
    pub points: Vec<TorchPoint>,
}

impl TorchReference {
    /// The torch and NCCL versions, for the records' provenance.
    pub fn versions(&self) -> String {
        format!(
            "torch {}, NCCL {}",
            self.meta.get("torch").unwrap_or("?"),
            self.meta.get("nccl").unwrap_or("?")
        )
    }

    /// The point of `bytes` bytes, if PyTorch measured that size.
    pub fn at(&self, bytes: usize) -> Option<&TorchPoint> {
        self.points.iter().find(|p| p.bytes == bytes)
    }
}

/// Parses the CSV text `torch_reference.py` writes.
pub fn parse(text: &str) -> anyhow::Result<TorchReference> {
    let rec = record::parse_csv(text)?;
    let col = |name: &str| rec.column(name);
    let (c, r, b) = (col("collective")?, col("ranks")?, col("bytes")?);
    let (t, lo, hi, bus) =
        (col("time_us")?, col("time_us_min")?, col("time_us_max")?, col("busbw_gbps")?);
    let mut points = Vec::new();
    for row in &rec.rows {
        anyhow::ensure!(row[c] == "all-reduce", "unexpected collective `{}`", row[c]);
        let num = |i: usize| -> anyhow::Result<f64> {
            row[i].parse::<f64>().map_err(|e| anyhow::anyhow!("`{}`: {e}", row[i]))
        };
        points.push(TorchPoint {
            ranks: row[r].parse()?,
            bytes: row[b].parse()?,
            time_us: (num(t)?, num(lo)?, num(hi)?),
            busbw_gbps: num(bus)?,
        });
    }
    anyhow::ensure!(!points.is_empty(), "no measurements");
    Ok(TorchReference { meta: rec.meta, points })
}

/// Reads the CSV at `path`.
pub fn read(path: &Path) -> anyhow::Result<TorchReference> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    parse(&text).map_err(|e| {
        anyhow::anyhow!("{} is not torch_reference.py's CSV: {e}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "# gpu: 2 × NVIDIA H200
# torch: 2.11.0+cu130
# nccl: 2.28.9 (the NCCL that torch loaded)
collective,ranks,bytes,time_us,time_us_min,time_us_max,algbw_gbps,busbw_gbps
all-reduce,2,8,20.100,19.000,25.000,0.000,0.000
all-reduce,2,1073741824,3283.000,3270.000,3300.000,327.060,327.060
";

    #[test]
    fn the_scripts_csv_is_read() {
        let t = parse(CSV).unwrap();
        assert_eq!(t.points.len(), 2);
        let p = t.at(1 << 30).unwrap();
        assert_eq!((p.ranks, p.busbw_gbps), (2, 327.06));
        assert_eq!(p.time_us, (3283.0, 3270.0, 3300.0));
        assert!(t.versions().contains("2.28.9"));
        assert!(parse("collective,ranks\n").is_err());
        assert!(parse(&CSV.replace("all-reduce,2,8", "all-gather,2,8")).is_err());
    }
}
