//! Records: CSV files that say where their numbers came from.
//!
//! Every CSV under `figures/data/` starts with `# key: value` lines — the provenance (GPU,
//! compute capability, driver and CUDA versions, cudarc version, git commit, UTC date, command)
//! and, for a figure, how to draw it — followed by an ordinary CSV table. A figure or a table in
//! the book is always re-derived from such a file, never typed.

use std::path::Path;

use anyhow::Context;

pub use super::atomic::{write_atomic, COMPARISON_PAGES, TEMP_PREFIX, TEMP_SUFFIX};
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
            .with("compute_capability", &info.capability())
            .with("sms", &info.sms.to_string())
            .with("l2_mib", &format!("{:.0}", info.l2_bytes as f64 / (1 << 20) as f64))
            .with("driver", &info.driver_release)
            .with(
                "cuda",
                &format!(
                    "{}.{} (driver API), NVRTC {}",
                    info.driver_cuda.0,
                    info.driver_cuda.1,
                    info.nvrtc_line()
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

/// The metadata key that declares how many rows a record holds. It frames the file rather
/// than describing it: the writer adds it last, and the reader checks it and takes it out of
/// [`Record::meta`], so no figure, table or footer ever shows it.
pub const ROWS_KEY: &str = "rows";

/// Serialises `rows` as CSV text preceded by the metadata lines, the last of which declares
/// how many rows follow ([`ROWS_KEY`]): a file cut at a line boundary then reads as cut.
pub fn to_csv_string<T: serde::Serialize>(
    meta: &Meta,
    rows: &[T],
) -> anyhow::Result<String> {
    let mut text = String::new();
    for (k, v) in meta.0.iter().filter(|(k, _)| k != ROWS_KEY) {
        text.push_str(&format!("# {k}: {v}\n"));
    }
    text.push_str(&format!("# {ROWS_KEY}: {}\n", rows.len()));
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
    write_atomic(path, to_csv_string(meta, rows)?.as_bytes())
}

/// Parses a record from text. A UTF-8 byte-order mark and CRLF line endings are read as
/// what they are (an editor's habits), not as part of the first key or of the values. Where
/// the metadata declares a row count ([`ROWS_KEY`]), a record holding another is refused.
pub fn parse_csv(text: &str) -> anyhow::Result<Record> {
    Ok(parse_csv_with_lines(text)?.0)
}

/// [`parse_csv`], with the line of the file (counted from 1) each row starts on, so that a
/// bad value can be named by its line.
pub fn parse_csv_with_lines(text: &str) -> anyhow::Result<(Record, Vec<u64>)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut meta = Meta::default();
    let mut body_start = 0;
    let mut meta_lines = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let Some(rest) = line.strip_prefix("# ") else { break };
        let (k, v) = rest
            .split_once(": ")
            .with_context(|| format!("bad metadata line `{line}`"))?;
        meta.0.push((k.to_string(), v.to_string()));
        body_start += raw.len();
        meta_lines += 1;
    }
    let body = &text.as_bytes()[body_start.min(text.len())..];
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(body);
    let header = reader.headers()?.iter().map(str::to_string).collect();
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    // Line breaks are counted once, from where the previous row started: rows come in order.
    let (mut counted_to, mut newlines) = (0usize, 0u64);
    for row in reader.records() {
        let row = row?;
        // A record's position may sit on the line ending before it: its line is the one of
        // its first character, counted from the bytes (a quoted field may span lines).
        let mut start = row.position().map_or(0, |p| p.byte() as usize).min(body.len());
        while start < body.len() && matches!(body[start], b'\r' | b'\n') {
            start += 1;
        }
        let start = start.max(counted_to);
        newlines +=
            body[counted_to..start].iter().filter(|&&b| b == b'\n').count() as u64;
        counted_to = start;
        lines.push(meta_lines + newlines + 1);
        rows.push(row.iter().map(str::to_string).collect());
    }
    if let Some(at) = meta.0.iter().position(|(k, _)| k == ROWS_KEY) {
        // A record this book wrote ends with a line break: one that does not was cut in the
        // middle of its last row, which may still have all its fields.
        anyhow::ensure!(
            text.ends_with('\n'),
            "it ends in the middle of a line: the file was cut"
        );
        let (_, declared) = meta.0.remove(at);
        let count = declared.parse::<usize>().with_context(|| {
            format!("`# {ROWS_KEY}: {declared}` is not a count of rows")
        })?;
        anyhow::ensure!(
            rows.len() == count,
            "{} rows found where `# {ROWS_KEY}: {count}` declares {count}: the file was cut \
             or rows were added",
            rows.len()
        );
    }
    Ok((Record { meta, header, rows }, lines))
}

/// Reads a record from `path`.
/// The book's committed record `stem` (`figures/data/<stem>.csv`), for the tests that hold
/// it to the code that writes it.
#[cfg(test)]
pub fn book_record(stem: &str) -> Record {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("figures/data")
        .join(format!("{stem}.csv"));
    read_csv(&path).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()))
}

pub fn read_csv(path: &Path) -> anyhow::Result<Record> {
    Ok(read_csv_with_lines(path)?.0)
}

/// [`read_csv`] with each row's line ([`parse_csv_with_lines`]).
pub fn read_csv_with_lines(path: &Path) -> anyhow::Result<(Record, Vec<u64>)> {
    let text = read_text(path, MAX_RECORD_BYTES)?;
    parse_csv_with_lines(&text)
        .with_context(|| format!("{} is not a record", path.display()))
}

/// The largest record read, in bytes. The book's largest CSV (`atax-counters.csv`) holds under
/// 90 KiB, so 16 MiB leaves room for sweeps 180 times as long; a larger file was not written
/// by a chapter, and drawing it would take minutes and write an SVG of hundreds of MiB.
pub const MAX_RECORD_BYTES: u64 = 16 << 20;

/// Opens `path` (following links) if it is a regular file, with its size. A FIFO would block
/// a read until a writer came, a device would never end: they are refused on the opened file
/// itself, which is opened without waiting for a writer, so nothing can swap it in between.
fn open_regular(path: &Path) -> anyhow::Result<(std::fs::File, u64)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let kind =
        file.metadata().with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(kind.is_file(), "{} is not a regular file", path.display());
    Ok((file, kind.len()))
}

/// The text of the regular file at `path`, refused before it is read when it holds more than
/// `cap` bytes; the read stops at `cap` whatever the file does meanwhile, so no file can
/// exhaust memory.
pub fn read_text(path: &Path, cap: u64) -> anyhow::Result<String> {
    use std::io::Read;
    let (file, len) = open_regular(path)?;
    let too_big = |len: u64| {
        anyhow::anyhow!(
            "{} is {len} bytes, more than the {cap} a record may hold",
            path.display()
        )
    };
    if len > cap {
        return Err(too_big(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes)
        .with_context(|| format!("{} is not UTF-8 text", path.display()))
}

/// Whether the file at `path` holds exactly `expected`: a file of another size (or not a
/// regular file) is never read, so comparing costs at most `expected`'s length.
fn holds_exactly(path: &Path, expected: &str) -> anyhow::Result<bool> {
    use std::io::Read;
    let (file, len) = open_regular(path)?;
    if len != expected.len() as u64 {
        return Ok(false);
    }
    let mut bytes = Vec::with_capacity(expected.len());
    file.take(len + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(bytes == expected.as_bytes())
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
    let md = markdown_table(&record, &format!("figures/data/{stem}.csv"))?;
    write_atomic(&dir.join(format!("{stem}.md")), md.as_bytes())
}

/// The CSVs under a folder's `data/`, sorted by name, as [`record_files`] finds them.
#[derive(Debug, Default)]
pub struct RecordFiles {
    /// (stem, path) of each CSV that can be a record.
    pub records: Vec<(String, std::path::PathBuf)>,
    /// Each other CSV entry, named with why it was left alone: `zz.csv (not a regular file)`.
    pub left_alone: Vec<String>,
}

/// The CSVs under `dir/data/` that can be records: regular files, and links to regular files
/// inside `dir`. The others (a FIFO, a device, a folder, a link that leads out of `dir` or
/// nowhere) are never opened, only named.
pub fn record_files(dir: &Path) -> anyhow::Result<RecordFiles> {
    let data = dir.join("data");
    let inside: Vec<std::path::PathBuf> =
        [dir, data.as_path()].iter().filter_map(|d| d.canonicalize().ok()).collect();
    let mut found = Vec::new();
    let mut left_alone = Vec::new();
    for entry in std::fs::read_dir(&data)
        .with_context(|| format!("cannot read {}", data.display()))?
    {
        let entry = entry?;
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "csv") {
            continue;
        }
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned())
        else {
            continue;
        };
        let kind = entry.file_type()?;
        let why = if kind.is_file() {
            None
        } else if kind.is_symlink() {
            match path.canonicalize() {
                Err(_) => Some("a link that leads nowhere"),
                Ok(t) if !inside.iter().any(|d| t.starts_with(d)) => {
                    Some("a link out of the folder")
                }
                Ok(t) if !t.is_file() => Some("a link to something not a regular file"),
                Ok(_) => None,
            }
        } else {
            Some("not a regular file")
        };
        match why {
            None => found.push((stem, path)),
            Some(why) => left_alone.push(format!("{stem}.csv ({why})")),
        }
    }
    found.sort();
    left_alone.sort();
    Ok(RecordFiles { records: found, left_alone })
}

/// [`audit_figures`](super::plot::audit_figures) for the records `is_record` accepts by stem: the CSVs it refuses are
/// not read, and an SVG or table whose stem it refuses (a reader's own `README.md`, the
/// comparison page) needs no CSV.
pub fn audit_records(
    dir: &Path,
    is_record: impl Fn(&str) -> bool,
) -> anyhow::Result<Vec<String>> {
    let mut problems = Vec::new();
    let mut stems = Vec::new();
    for (stem, path) in record_files(dir)?.records {
        if !is_record(&stem) {
            continue;
        }
        let name = format!("{stem}.csv");
        let rec = match read_csv(&path) {
            Ok(r) => r,
            Err(e) => {
                problems.push(format!("{name}: {e:#}"));
                continue;
            }
        };
        let missing = rec.meta.missing_provenance();
        if !missing.is_empty() {
            problems.push(format!("{name}: provenance lacks {}", missing.join(", ")));
        }
        let (own, other) =
            if rec.meta.get("plot").is_some() { ("svg", "md") } else { ("md", "svg") };
        if dir.join(format!("{stem}.{other}")).exists() {
            problems.push(format!("{stem}.{other} shares its stem with a {own} record: one CSV per figure or table"));
        }
        if rec.meta.get("plot").is_some() {
            let svg = dir.join(format!("{stem}.svg"));
            match super::plot::draw_svg(&rec, &name) {
                Ok(drawn) => match holds_exactly(&svg, &drawn) {
                    Ok(true) => {}
                    Ok(false) => problems.push(format!(
                        "{stem}.svg differs from what {name} draws (stale or hand-edited)"
                    )),
                    Err(e) if svg.exists() => problems.push(format!("{e:#}")),
                    Err(_) => problems.push(format!("{stem}.svg is missing")),
                },
                Err(_) if !svg.exists() => problems.push(format!("{stem}.svg is missing")),
                Err(e) => problems.push(format!("{name} cannot be drawn: {e:#}")),
            }
        } else {
            let md = dir.join(format!("{stem}.md"));
            match markdown_table(&rec, &format!("figures/data/{name}")) {
                Ok(drawn) => match holds_exactly(&md, &drawn) {
                    Ok(true) => {}
                    Ok(false) => problems.push(format!(
                        "{stem}.md differs from the table {name} renders (stale or hand-edited)"
                    )),
                    Err(e) if md.exists() => problems.push(format!("{e:#}")),
                    Err(_) => problems.push(format!("{stem}.md is missing")),
                },
                Err(_) if !md.exists() => problems.push(format!("{stem}.md is missing")),
                Err(e) => {
                    problems.push(format!("{name} cannot be shown as a table: {e:#}"))
                }
            }
        }
        stems.push(stem);
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_page = path.file_name().is_some_and(|n| {
            COMPARISON_PAGES.iter().any(|p| n == std::ffi::OsStr::new(p))
        });
        let is_output =
            !is_page && path.extension().is_some_and(|e| e == "svg" || e == "md");
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        if is_output
            && stem
                .as_deref()
                .is_some_and(|s| is_record(s) && !stems.iter().any(|k| k == s))
        {
            problems.push(format!("{} has no CSV under data/", path.display()));
        }
    }
    Ok(problems)
}

/// Redraws the figures and tables under `dir` whose stems `is_record` accepts, and returns how
/// many, with the names of the CSVs it left alone (those that are not regular files with why,
/// see [`record_files`]). Every record is read and drawn before anything is written, so a bad
/// CSV leaves the folder as it was; each file is then replaced whole ([`write_atomic`]).
pub fn redraw_records(
    dir: &Path,
    is_record: impl Fn(&str) -> bool,
) -> anyhow::Result<(usize, Vec<String>)> {
    let mut drawn = Vec::new();
    let RecordFiles { records, left_alone: mut ignored } = record_files(dir)?;
    for (stem, path) in records {
        if !is_record(&stem) {
            ignored.push(format!("{stem}.csv"));
            continue;
        }
        let rec = read_csv(&path)?;
        let name = format!("{stem}.csv");
        let missing = rec.meta.missing_provenance();
        anyhow::ensure!(
            missing.is_empty(),
            "{} is not a record a run wrote: its provenance lacks {}",
            path.display(),
            missing.join(", ")
        );
        if rec.meta.get("plot").is_some() {
            let svg = super::plot::draw_svg(&rec, &name)
                .with_context(|| format!("cannot draw {}", path.display()))?;
            drawn.push((dir.join(format!("{stem}.svg")), svg));
        } else {
            let md = markdown_table(&rec, &format!("figures/data/{name}"))
                .with_context(|| {
                    format!("cannot show {} as a table", path.display())
                })?;
            drawn.push((dir.join(format!("{stem}.md")), md));
        }
    }
    for (path, text) in &drawn {
        write_atomic(path, text.as_bytes())?;
    }
    ignored.sort();
    Ok((drawn.len(), ignored))
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
    fn a_record_cut_at_a_line_boundary_reads_as_cut() {
        let rows = [
            Row { size_bytes: 1, gb_per_s: 2.0, what: "x" },
            Row { size_bytes: 3, gb_per_s: 4.0, what: "y\nz" },
            Row { size_bytes: 5, gb_per_s: 6.0, what: "w" },
        ];
        let text = to_csv_string(&meta(), &rows).unwrap();
        // Declared last among the metadata, counted in records (a quoted field may hold a
        // line break), and never part of what the record says.
        assert!(
            text.contains("# title: Copy bandwidth\n# rows: 3\nsize_bytes,"),
            "{text}"
        );
        assert_eq!(parse_csv(&text).unwrap().meta, meta());
        assert_eq!(to_csv_string(&meta().with(ROWS_KEY, "9"), &rows).unwrap(), text);
        let cut = text.strip_suffix("5,6.0,w\n").unwrap();
        let err = format!("{:#}", parse_csv(cut).unwrap_err());
        assert!(err.starts_with("2 rows found where `# rows: 3` declares 3"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.csv");
        std::fs::write(&path, format!("{text}1,2.0,x\n")).unwrap();
        let err = format!("{:#}", read_csv(&path).unwrap_err());
        assert!(err.contains("cut.csv is not a record: 4 rows found where"), "{err}");
        let err = format!(
            "{:#}",
            parse_csv(&text.replace("rows: 3", "rows: many")).unwrap_err()
        );
        assert!(err.contains("`# rows: many` is not a count of rows"), "{err}");
        // A record written before rows were counted reads as it always did.
        let uncounted = text.replace("# rows: 3\n", "");
        assert_eq!(parse_csv(&uncounted).unwrap(), parse_csv(&text).unwrap());
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

    #[test]
    fn crlf_line_endings_and_a_byte_order_mark_read_as_the_same_record() {
        let rows = [
            Row { size_bytes: 1, gb_per_s: 2.0, what: "x" },
            Row { size_bytes: 3, gb_per_s: 4.0, what: "y" },
        ];
        let text = to_csv_string(&meta(), &rows).unwrap();
        let plain = parse_csv(&text).unwrap();
        let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        assert_eq!(parse_csv(&crlf).unwrap(), plain);
        // Rows are numbered by their line in the file, after the metadata (with the row
        // count the writer adds) and the header.
        let (_, lines) = parse_csv_with_lines(&crlf).unwrap();
        let first = meta().0.len() as u64 + 3;
        assert_eq!(lines, [first, first + 1]);
    }

    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_is_read_as_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("zz.csv");
        mkfifo(&fifo);
        let err = read_csv(&fifo).unwrap_err().to_string();
        assert!(err.contains("is not a regular file"), "{err}");
        let err = read_csv(dir.path()).unwrap_err().to_string();
        assert!(err.contains("is not a regular file"), "{err}");
    }

    #[cfg(unix)]
    fn mkfifo(path: &Path) {
        let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    }

    #[test]
    fn a_file_over_the_cap_is_refused_before_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.csv");
        // Sparse: its size is what is refused, without a byte of it being read.
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_RECORD_BYTES + 1).unwrap();
        let err = format!("{:#}", read_csv(&big).unwrap_err());
        assert!(
            err.contains("big.csv is 16777217 bytes, more than the 16777216"),
            "{err}"
        );
        // At the cap it is read.
        file.set_len(MAX_RECORD_BYTES).unwrap();
        if let Err(e) = read_csv(&big) {
            assert!(!format!("{e:#}").contains("bytes, more than"), "{e:#}");
        }
        // A device is never read, however it is reached.
        let zero = dir.path().join("zero.csv");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let err = format!("{:#}", read_csv(&zero).unwrap_err());
        assert!(err.contains("zero.csv is not a regular file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_inside_the_folder_are_redrawn_and_the_rest_is_named() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let rows = [Row { size_bytes: 1, gb_per_s: 2.0, what: "x" }];
        write_table(dir.path(), "a-table", &meta(), &rows).unwrap();
        let data = dir.path().join("data");
        mkfifo(&data.join("fifo.csv"));
        std::fs::create_dir(data.join("folder.csv")).unwrap();
        symlink("/dev/zero", data.join("zero.csv")).unwrap();
        symlink(data.join("fifo.csv"), data.join("inner.csv")).unwrap();
        symlink(data.join("gone.csv"), data.join("dangling.csv")).unwrap();
        let theirs = outside.path().join("theirs.csv");
        std::fs::write(&theirs, to_csv_string(&meta(), &rows).unwrap()).unwrap();
        symlink(&theirs, data.join("out.csv")).unwrap();
        symlink(data.join("a-table.csv"), data.join("b-link.csv")).unwrap();
        let (count, ignored) = redraw_records(dir.path(), |_| true).unwrap();
        assert_eq!(count, 2);
        assert_eq!(
            ignored,
            [
                "dangling.csv (a link that leads nowhere)",
                "fifo.csv (not a regular file)",
                "folder.csv (not a regular file)",
                "inner.csv (a link to something not a regular file)",
                "out.csv (a link out of the folder)",
                "zero.csv (a link out of the folder)",
            ]
        );
        assert!(audit_records(dir.path(), |_| true).unwrap().is_empty());
        // The audit compares a table with what its CSV renders without waiting on a FIFO.
        std::fs::remove_file(dir.path().join("b-link.md")).unwrap();
        mkfifo(&dir.path().join("b-link.md"));
        let problems = audit_records(dir.path(), |_| true).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].ends_with("b-link.md is not a regular file"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_redraw_reads_and_draws_every_record_before_it_writes_any() {
        let dir = tempfile::tempdir().unwrap();
        let rows = [Row { size_bytes: 1, gb_per_s: 2.0, what: "x" }];
        write_table(dir.path(), "a-good", &meta(), &rows).unwrap();
        std::fs::write(dir.path().join("a-good.md"), "kept as it was").unwrap();
        // Sorted after the good one, and cut mid-row.
        let cut = to_csv_string(&meta(), &rows).unwrap().replace("1,2.0,x", "1,2.0");
        std::fs::write(dir.path().join("data/b-cut.csv"), cut).unwrap();
        assert!(redraw_records(dir.path(), |_| true).is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a-good.md")).unwrap(),
            "kept as it was"
        );
        assert!(!dir.path().join("b-cut.md").exists());
        // A CSV the caller does not count as a record is left alone, and named.
        std::fs::write(dir.path().join("data/README.csv"), "not, a record").unwrap();
        std::fs::write(dir.path().join("README.md"), "the reader's notes").unwrap();
        let (count, ignored) =
            redraw_records(dir.path(), |stem| stem.starts_with("a-")).unwrap();
        assert_eq!(
            (count, ignored),
            (1, vec!["README.csv".to_string(), "b-cut.csv".to_string()])
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("README.md")).unwrap(),
            "the reader's notes"
        );
        assert!(audit_records(dir.path(), |stem| stem.starts_with("a-"))
            .unwrap()
            .is_empty());
    }
}
