//! Records: CSV files that say where their numbers came from.
//!
//! Every CSV under `figures/data/` starts with `# key: value` lines — the provenance (GPU,
//! compute capability, driver and CUDA versions, cudarc version, git commit, UTC date, command)
//! and, for a figure, how to draw it — followed by an ordinary CSV table. A figure or a table in
//! the book is always re-derived from such a file, never typed.

use std::path::Path;

use anyhow::Context;

use super::gpu::DeviceInfo;

/// Every key that says where and how a record was made (the rest say what it holds and how
/// to draw it): first the eight every record must carry ([`REQUIRED_KEYS`]), then those it
/// carries where they apply.
pub const PROVENANCE_KEYS: &[&str] = &[
    "gpu",
    "compute_capability",
    "driver",
    "cuda",
    "cudarc",
    "commit",
    "date_utc",
    "command",
    "sms",
    "l2_mib",
    "cpu",
    "profile",
];

/// The keys every record must carry: the first eight of [`PROVENANCE_KEYS`].
pub const REQUIRED_KEYS: &[&str] = PROVENANCE_KEYS.split_at(8).0;

/// Ordered `key: value` metadata of a record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta(pub Vec<(String, String)>);

impl Meta {
    /// The provenance of a GPU run.
    pub fn for_gpu(info: &DeviceInfo, command: &str) -> Self {
        Meta::default()
            .with("gpu", &info.name)
            .with(
                "compute_capability",
                &format!("{}.{}", info.compute_capability.0, info.compute_capability.1),
            )
            .with("sms", &info.sms.to_string())
            .with("l2_mib", &format!("{:.0}", info.l2_bytes as f64 / (1 << 20) as f64))
            .with("driver", &info.driver_release)
            .with(
                "cuda",
                &format!(
                    "{}.{} (driver API), NVRTC {}.{}",
                    info.driver_cuda.0, info.driver_cuda.1, info.nvrtc.0, info.nvrtc.1
                ),
            )
            .with_build(command)
    }

    /// The provenance of a run that used no GPU (the CPU-only chapters).
    pub fn for_cpu(command: &str) -> Self {
        Meta::default()
            .with("gpu", "none (CPU-only measurement)")
            .with("compute_capability", "n/a")
            .with("cpu", &cpu_model())
            .with("driver", "n/a")
            .with("cuda", "n/a")
            .with_build(command)
    }

    fn with_build(self, command: &str) -> Self {
        self.with("cudarc", env!("CMBOOK_CUDARC_VERSION"))
            .with("commit", env!("CMBOOK_GIT_COMMIT"))
            .with(
                "date_utc",
                &chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            )
            .with("command", command)
    }

    /// Adds or replaces a key. Values are kept on one line.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        let value = value.replace(['\n', '\r'], " ");
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The required keys this record lacks.
    pub fn missing_provenance(&self) -> Vec<&'static str> {
        REQUIRED_KEYS
            .iter()
            .copied()
            .filter(|k| self.get(k).is_none_or(str::is_empty))
            .collect()
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// A record read back: its metadata, column names and rows (as text, exactly as written).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub meta: Meta,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Record {
    /// The index of column `name`.
    pub fn column(&self, name: &str) -> anyhow::Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("no column `{name}` (have {:?})", self.header))
    }
}

/// Serialises `rows` as CSV text preceded by the metadata lines.
pub fn to_csv_string<T: serde::Serialize>(
    meta: &Meta,
    rows: &[T],
) -> anyhow::Result<String> {
    let mut text = String::new();
    for (k, v) in &meta.0 {
        text.push_str(&format!("# {k}: {v}\n"));
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    text.push_str(std::str::from_utf8(&writer.into_inner()?)?);
    Ok(text)
}

/// Writes a record to `path`, creating its folder.
pub fn write_csv<T: serde::Serialize>(
    path: &Path,
    meta: &Meta,
    rows: &[T],
) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, to_csv_string(meta, rows)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Parses a record from text.
pub fn parse_csv(text: &str) -> anyhow::Result<Record> {
    let mut meta = Meta::default();
    let mut body_start = 0;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# ") else { break };
        let (k, v) = rest
            .split_once(": ")
            .with_context(|| format!("bad metadata line `{line}`"))?;
        meta.0.push((k.to_string(), v.to_string()));
        body_start += line.len() + 1;
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(&text.as_bytes()[body_start.min(text.len())..]);
    let header = reader.headers()?.iter().map(str::to_string).collect();
    let mut rows = Vec::new();
    for row in reader.records() {
        rows.push(row?.iter().map(str::to_string).collect());
    }
    Ok(Record { meta, header, rows })
}

/// Reads a record from `path`.
pub fn read_csv(path: &Path) -> anyhow::Result<Record> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    parse_csv(&text).with_context(|| format!("{} is not a record", path.display()))
}

/// Renders a record as the Markdown table a chapter includes, with the line saying where its
/// numbers come from below it (see [`super::table`] for the metadata that shapes it).
/// `data_link` is how the chapter links to the CSV.
pub fn markdown_table(record: &Record, data_link: &str) -> anyhow::Result<String> {
    super::table::markdown(record, data_link)
}

/// Writes `dir/data/<stem>.csv` and the table `dir/<stem>.md` rendered from that file.
pub fn write_table<T: serde::Serialize>(
    dir: &Path,
    stem: &str,
    meta: &Meta,
    rows: &[T],
) -> anyhow::Result<()> {
    let csv_path = dir.join("data").join(format!("{stem}.csv"));
    write_csv(&csv_path, meta, rows)?;
    let record = read_csv(&csv_path)?;
    std::fs::write(
        dir.join(format!("{stem}.md")),
        markdown_table(&record, &format!("figures/data/{stem}.csv"))?,
    )?;
    Ok(())
}

/// How a record written by a new run differs in shape from the book's record of the same
/// name: its own metadata keys (in order), its columns, and how its figure is drawn. Values
/// measured by the run (and titles that name its sizes) may differ; the shape may not.
pub fn shape_differences(ours: &Record, book: &Record) -> Vec<String> {
    let own = |r: &Record| -> Vec<String> {
        r.meta
            .0
            .iter()
            .map(|(k, _)| k.clone())
            .filter(|k| !PROVENANCE_KEYS.contains(&k.as_str()))
            .collect()
    };
    let mut problems = Vec::new();
    if own(ours) != own(book) {
        problems.push(format!(
            "metadata keys {:?}, the book's {:?}",
            own(ours),
            own(book)
        ));
    }
    if ours.header != book.header {
        problems
            .push(format!("columns {:?}, the book's {:?}", ours.header, book.header));
    }
    for key in ["plot", "x_label", "y_label", "x_log", "y_log"] {
        if ours.meta.get(key) != book.meta.get(key) {
            problems.push(format!(
                "`{key}` {:?}, the book's {:?}",
                ours.meta.get(key),
                book.meta.get(key)
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Row {
        size_bytes: u64,
        gb_per_s: f64,
        what: &'static str,
    }

    fn meta() -> Meta {
        let mut m = Meta::default();
        for k in REQUIRED_KEYS {
            m = m.with(k, &format!("value of {k}"));
        }
        m.with("title", "Copy bandwidth")
    }

    #[test]
    fn csv_round_trip_keeps_metadata_and_rows() {
        let rows = [
            Row { size_bytes: 1 << 20, gb_per_s: 1234.5, what: "copy, kernel" },
            Row { size_bytes: 2 << 20, gb_per_s: 2000.0, what: "memcpy" },
        ];
        let text = to_csv_string(&meta(), &rows).unwrap();
        let rec = parse_csv(&text).unwrap();
        assert_eq!(rec.meta, meta());
        assert_eq!(rec.header, ["size_bytes", "gb_per_s", "what"]);
        assert_eq!(rec.rows[0], ["1048576", "1234.5", "copy, kernel"]);
        assert_eq!(rec.rows.len(), 2);
        assert!(rec.meta.missing_provenance().is_empty());
        assert_eq!(rec.column("gb_per_s").unwrap(), 1);
    }

    #[test]
    fn missing_provenance_is_reported() {
        let m = Meta::default().with("gpu", "x").with("command", "");
        let missing = m.missing_provenance();
        assert!(
            missing.contains(&"commit")
                && missing.contains(&"command")
                && !missing.contains(&"gpu")
        );
    }

    #[test]
    fn values_stay_on_one_line() {
        let m = Meta::default().with("command", "a\nb");
        assert_eq!(m.get("command"), Some("a b"));
    }

    #[test]
    fn markdown_table_has_header_rows_and_provenance() {
        let rows = [Row { size_bytes: 1, gb_per_s: 2.0, what: "x" }];
        let rec = parse_csv(&to_csv_string(&meta(), &rows).unwrap()).unwrap();
        let md = markdown_table(&rec, "figures/data/t.csv").unwrap();
        assert!(
            md.starts_with(
                "| size_bytes | gb_per_s | what |\n|---|---|---|\n| 1 | 2.0 | x |\n"
            ),
            "{md}"
        );
        assert!(
            md.contains("value of gpu") && md.contains("[t.csv](figures/data/t.csv)"),
            "{md}"
        );
    }
}
