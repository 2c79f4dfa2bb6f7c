//! Hardware counters: what a kernel did, not only how long it took.
//!
//! A chapter predicts bytes, sectors, hit rates and conflicts from its model; time alone
//! cannot say whether the prediction was right. Nsight Compute (`ncu`) reads the GPU's
//! performance counters for each kernel launch. `--counters` runs an example twice over:
//!
//! 1. the **parent** (the example as the reader started it) starts `ncu` on a **child** — the
//!    same binary with the same arguments — with profiling off from the start, one fixed
//!    metric set ([`METRICS`]), ncu's raw CSV written to a file;
//! 2. in the child, a chapter marks the launches worth counting with [`Gpu::count_next`]
//!    (a label and the chapter's predictions); [`Gpu::verify_then_time`] then wraps the
//!    verification launch of that work in `cuProfilerStart`/`cuProfilerStop`, preceded by one
//!    launch of the empty marker kernel, and appends the label to a file. Every other launch
//!    runs unprofiled; timed repetitions shrink to one (the child's timings are thrown away);
//! 3. the parent parses ncu's CSV ([`parse_raw`]), splits the launches at the markers, sums
//!    each case's counters ([`Counted`]) and writes `<chapter>-counters.csv` and the
//!    predicted-vs-counted table `<chapter>-counted`.
//!
//! ncu locks the SM clock at its base (`--clock-control base`) and flushes the caches before
//! each replay pass (`--cache-control all`): every counted launch starts with a cold L2, and
//! both settings are in the records' provenance.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::chapter::Chapter;
use super::gpu::Gpu;

/// The metrics every chapter counts (ncu's names).
pub const METRICS: &[&str] = &[
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "launch__registers_per_thread",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sectors.sum",
    "lts__t_sectors_lookup_hit.sum",
    "lts__t_sectors_lookup_miss.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "smsp__inst_executed.sum",
    "smsp__inst_issued.sum",
    "idc__requests.sum",
    "idc__requests_lookup_miss.sum",
];

/// The warp-stall reasons counted, each as ncu's "warps stalled for this reason per issued
/// instruction" (`smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`).
pub const STALLS: &[&str] = &[
    "long_scoreboard",
    "short_scoreboard",
    "barrier",
    "membar",
    "mio_throttle",
    "lg_throttle",
    "tex_throttle",
    "math_pipe_throttle",
    "wait",
    "not_selected",
    "selected",
    "drain",
    "no_instruction",
    "branch_resolving",
    "dispatch_stall",
    "imc_miss",
    "sleeping",
    "misc",
];

/// The ncu metric of one stall reason.
pub fn stall_metric(reason: &str) -> String {
    format!("smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio")
}

/// The whole `--metrics` list.
pub fn metric_list() -> String {
    METRICS
        .iter()
        .map(|m| m.to_string())
        .chain(STALLS.iter().map(|r| stall_metric(r)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The environment variable that makes a run a counting child: the file its labels go to.
pub const CHILD_ENV: &str = "CMBOOK_COUNTERS_LABELS";

/// The name of the marker kernel that opens every counted case.
pub const MARKER: &str = "empty";

// ANCHOR: quantity
/// What a chapter can predict and ncu can count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Quantity {
    /// Bytes read plus bytes written by device memory (DRAM).
    DramBytes,
    /// 32-byte sectors per global load request (one warp-wide load instruction).
    LoadSectorsPerRequest,
    /// 32-byte sectors per global store request.
    StoreSectorsPerRequest,
    /// Shared-memory bank conflicts (extra wavefronts), loads and stores together.
    BankConflicts,
    /// The share of L2 sector lookups that hit, in percent.
    L2HitPercent,
    /// Resident warps as a share of the SM's maximum, averaged over active cycles
    /// (percent).
    OccupancyPercent,
    /// Warp instructions executed.
    Instructions,
    /// Bytes global loads request from L1 (32 bytes per sector): what the loads ask
    /// for, before any cache.
    GlobalLoadBytes,
}
// ANCHOR_END: quantity

impl Quantity {
    pub const ALL: [Quantity; 8] = [
        Quantity::DramBytes,
        Quantity::LoadSectorsPerRequest,
        Quantity::StoreSectorsPerRequest,
        Quantity::BankConflicts,
        Quantity::L2HitPercent,
        Quantity::OccupancyPercent,
        Quantity::Instructions,
        Quantity::GlobalLoadBytes,
    ];

    /// The short name written into the labels file and the tables.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::DramBytes => "DRAM bytes",
            Quantity::LoadSectorsPerRequest => "sectors per load request",
            Quantity::StoreSectorsPerRequest => "sectors per store request",
            Quantity::BankConflicts => "shared bank conflicts",
            Quantity::L2HitPercent => "L2 hit rate (%)",
            Quantity::OccupancyPercent => "achieved occupancy (%)",
            Quantity::Instructions => "warp instructions",
            Quantity::GlobalLoadBytes => "global load bytes",
        }
    }

    pub fn from_name(name: &str) -> Option<Quantity> {
        Quantity::ALL.into_iter().find(|q| q.name() == name)
    }

    /// The counted value of this quantity.
    pub fn counted(self, c: &Counted) -> f64 {
        match self {
            Quantity::DramBytes => c.dram_read_bytes + c.dram_write_bytes,
            Quantity::LoadSectorsPerRequest => c.ld_sectors_per_request,
            Quantity::StoreSectorsPerRequest => c.st_sectors_per_request,
            Quantity::BankConflicts => c.shared_ld_conflicts + c.shared_st_conflicts,
            Quantity::L2HitPercent => c.l2_hit_pct,
            Quantity::OccupancyPercent => c.achieved_occupancy_pct,
            Quantity::Instructions => c.warp_instructions,
            Quantity::GlobalLoadBytes => 32.0 * c.ld_sectors,
        }
    }

    /// A value of this quantity as the tables show it.
    pub fn show(self, v: f64) -> String {
        match self {
            Quantity::DramBytes | Quantity::GlobalLoadBytes => super::format::bytes(v),
            Quantity::LoadSectorsPerRequest | Quantity::StoreSectorsPerRequest => {
                format!("{v:.2}")
            }
            Quantity::L2HitPercent | Quantity::OccupancyPercent => format!("{v:.1}"),
            Quantity::BankConflicts | Quantity::Instructions => format!("{v:.0}"),
        }
    }
}

/// A launch (or a run of launches) a chapter wants counted: its label and what the chapter's
/// model predicts for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub label: String,
    pub predictions: Vec<(Quantity, f64)>,
}

impl Case {
    pub fn new(label: impl Into<String>) -> Self {
        Self { label: label.into(), predictions: Vec::new() }
    }

    /// Adds a prediction.
    pub fn predict(mut self, q: Quantity, value: f64) -> Self {
        self.predictions.push((q, value));
        self
    }

    /// One line of the labels file: `label<TAB>quantity=value<TAB>…`.
    fn to_line(&self) -> String {
        let mut line = self.label.replace(['\t', '\n'], " ");
        for (q, v) in &self.predictions {
            line.push('\t');
            line.push_str(&format!("{}={v}", q.name()));
        }
        line
    }

    fn from_line(line: &str) -> anyhow::Result<Case> {
        let mut parts = line.split('\t');
        let mut case = Case::new(parts.next().unwrap_or_default());
        for p in parts {
            let (q, v) = p.split_once('=').context("a prediction without `=`")?;
            let q = Quantity::from_name(q)
                .with_context(|| format!("unknown quantity {q}"))?;
            case.predictions.push((q, v.parse()?));
        }
        Ok(case)
    }
}

/// The counting state of a child run: where labels go and the case waiting for its launch.
pub(crate) struct Counting {
    labels: PathBuf,
    pending: Option<Case>,
    marker: Option<super::kernels::KernelTable<super::ceiling::CeilingKernel>>,
}

impl Counting {
    /// The counting state if this process is a counting child.
    pub(crate) fn from_env() -> Option<Counting> {
        std::env::var_os(CHILD_ENV).map(|p| Counting {
            labels: PathBuf::from(p),
            pending: None,
            marker: None,
        })
    }
}

impl Gpu {
    /// Whether this run counts (it is the child of a `--counters` run).
    pub fn counting(&self) -> bool {
        self.counting.borrow().is_some()
    }

    /// Marks the next [`Gpu::verify_then_time`]'s work as a counted case (under
    /// `--counters`; otherwise nothing happens). Build the case only when
    /// [`Gpu::counting`] says so if its predictions cost anything.
    pub fn count_next(&self, case: Case) {
        if let Some(c) = self.counting.borrow_mut().as_mut() {
            assert!(
                c.pending.is_none(),
                "count_next(`{}`) before the previous case was launched",
                case.label
            );
            c.pending = Some(case);
        }
    }

    /// Counts `launch` as `case` under `--counters` (wrapped like a verification launch);
    /// otherwise just runs it. For work whose check comes after its timing (a pointer
    /// chase verified at its end), so the counted launch is the timed one.
    pub fn count(
        &self,
        case: Case,
        launch: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if self.counting() {
            self.count_case(&case, launch)
        } else {
            launch()
        }
    }

    /// Takes the case waiting for a launch, if any.
    pub fn take_counted_case(&self) -> Option<Case> {
        self.counting.borrow_mut().as_mut().and_then(|c| c.pending.take())
    }

    /// Runs `launch` (which enqueues the case's work) between `cuProfilerStart` and
    /// `cuProfilerStop`, after the marker launch, and records the case's label.
    pub fn count_case(
        &self,
        case: &Case,
        launch: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        {
            let mut guard = self.counting.borrow_mut();
            let c = guard.as_mut().expect("a counting run");
            if c.marker.is_none() {
                c.marker = Some(super::kernels::KernelTable::load(self)?);
            }
        }
        self.stream.synchronize()?;
        self.ctx.bind_to_thread()?;
        // SAFETY: the context is current on this thread; both calls take no arguments.
        unsafe { cudarc::driver::sys::cuProfilerStart() }.result()?;
        {
            let guard = self.counting.borrow();
            let table = guard.as_ref().and_then(|c| c.marker.as_ref()).expect("loaded");
            let f = table.get(super::ceiling::CeilingKernel::Empty);
            let cfg = cudarc::driver::LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: `empty()` takes no parameters.
            unsafe { self.stream.launch_builder(f).launch(cfg)? };
        }
        launch()?;
        self.stream.synchronize()?;
        // SAFETY: as above.
        unsafe { cudarc::driver::sys::cuProfilerStop() }.result()?;
        let path = self.counting.borrow().as_ref().expect("counting").labels.clone();
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
        writeln!(file, "{}", case.to_line())?;
        Ok(())
    }
}

/// One profiled launch from ncu's raw CSV: its kernel's name and its metrics' values.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    pub kernel: String,
    pub values: BTreeMap<String, f64>,
}

impl Launch {
    /// A metric's value (0 when ncu reported none, e.g. no shared memory was used).
    pub fn get(&self, metric: &str) -> f64 {
        self.values.get(metric).copied().unwrap_or(0.0)
    }

    /// The kernel's function name without its parameter list.
    pub fn function(&self) -> &str {
        let name = self.kernel.split('(').next().unwrap_or(&self.kernel);
        name.rsplit(' ').next().unwrap_or(name).trim()
    }
}

/// Parses ncu's `--csv --page raw` output: a header row of metric names, a row of units,
/// then one row per launch. Lines before the header (the program's own output, ncu's
/// `==PROF==` notes) are skipped; numbers may carry thousands separators.
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
        launches.push(Launch { kernel: row[name_col].to_string(), values });
    }
    Ok(launches)
}

/// What ncu counted for one case, summed over its launches: the row of
/// `<chapter>-counters.csv`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Counted {
    pub case: String,
    pub kernels: String,
    /// DRAM bytes read and written, as the table shows them (`537 MB + 1.05 MB`).
    pub dram: String,
    pub launches: usize,
    pub duration_us: f64,
    pub sm_clock_mhz: f64,
    pub registers_per_thread: f64,
    pub dram_read_bytes: f64,
    pub dram_write_bytes: f64,
    pub l2_sectors: f64,
    pub l2_hit_pct: f64,
    pub ld_requests: f64,
    pub ld_sectors: f64,
    pub ld_sectors_per_request: f64,
    pub st_requests: f64,
    pub st_sectors: f64,
    pub st_sectors_per_request: f64,
    pub shared_ld_wavefronts: f64,
    pub shared_ld_conflicts: f64,
    pub shared_st_wavefronts: f64,
    pub shared_st_conflicts: f64,
    pub achieved_occupancy_pct: f64,
    pub theoretical_occupancy_pct: f64,
    pub warp_instructions: f64,
    /// The three largest stall reasons, `reason cycles-per-issue`, largest first.
    pub stall_1: String,
    pub stall_2: String,
    pub stall_3: String,
    /// Requests to the SM's indexed constant cache (IDC), which serves `LDC`: constant
    /// loads whose address is computed at run time.
    #[serde(default)]
    pub idc_requests: f64,
    /// IDC requests that missed, as ncu counts them (its hit count is derived from the
    /// two, and goes negative when one request misses more than once).
    #[serde(default)]
    pub idc_misses: f64,
    /// Misses per request.
    #[serde(default)]
    pub idc_misses_per_request: f64,
    /// Every stall reason above 0.005 cycles per issue, largest first (`reason v; …`): for
    /// a reason that matters to one chapter and is not in the top three everywhere.
    #[serde(default)]
    pub stalls_all: String,
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Sums `launches` (one case, marker excluded) into one row. Counts add; the clock,
/// occupancies and stall ratios are averaged, weighted by duration (clock, occupancy) or by
/// issued instructions (stalls).
pub fn sum_case(case: &str, launches: &[Launch]) -> Counted {
    let total = |m: &str| launches.iter().map(|l| l.get(m)).sum::<f64>();
    let weighted = |m: &str, w: &str| {
        ratio(launches.iter().map(|l| l.get(m) * l.get(w)).sum(), total(w))
    };
    let mut names: Vec<&str> = Vec::new();
    for l in launches {
        if !names.contains(&l.function()) {
            names.push(l.function());
        }
    }
    let (hit, miss) = (
        total("lts__t_sectors_lookup_hit.sum"),
        total("lts__t_sectors_lookup_miss.sum"),
    );
    let (ld_req, ld_sec) = (
        total("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
        total("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    );
    let (st_req, st_sec) = (
        total("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
        total("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    );
    let time = "gpu__time_duration.sum";
    let mut stalls: Vec<(f64, &str)> = STALLS
        .iter()
        .map(|r| (weighted(&stall_metric(r), "smsp__inst_issued.sum"), *r))
        .collect();
    stalls.sort_by(|a, b| b.0.total_cmp(&a.0));
    let stall = |i: usize| {
        stalls
            .get(i)
            .filter(|s| s.0 > 0.0)
            .map(|(v, r)| format!("{r} {v:.2}"))
            .unwrap_or_default()
    };
    let idc_miss = total("idc__requests_lookup_miss.sum");
    let (dram_read, dram_write) =
        (total("dram__bytes_read.sum"), total("dram__bytes_write.sum"));
    // Two decimals, as the nearest f64 to the decimal (so a cell reads `88.91`).
    let r2 = |v: f64| format!("{v:.2}").parse::<f64>().unwrap_or(v);
    Counted {
        case: case.to_string(),
        kernels: names.join(" + "),
        dram: format!(
            "{} + {}",
            super::format::bytes(dram_read),
            super::format::bytes(dram_write)
        ),
        launches: launches.len(),
        duration_us: r2(total(time) / 1e3),
        sm_clock_mhz: (weighted("sm__cycles_elapsed.avg.per_second", time) / 1e6)
            .round(),
        registers_per_thread: launches
            .iter()
            .map(|l| l.get("launch__registers_per_thread"))
            .fold(0.0, f64::max),
        dram_read_bytes: dram_read,
        dram_write_bytes: dram_write,
        l2_sectors: total("lts__t_sectors.sum"),
        l2_hit_pct: r2(100.0 * ratio(hit, hit + miss)),
        ld_requests: ld_req,
        ld_sectors: ld_sec,
        ld_sectors_per_request: r2(ratio(ld_sec, ld_req)),
        st_requests: st_req,
        st_sectors: st_sec,
        st_sectors_per_request: r2(ratio(st_sec, st_req)),
        shared_ld_wavefronts: total(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        ),
        shared_ld_conflicts: total(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        ),
        shared_st_wavefronts: total(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        ),
        shared_st_conflicts: total(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        ),
        achieved_occupancy_pct: r2(weighted(
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            time,
        )),
        theoretical_occupancy_pct: r2(weighted(
            "sm__maximum_warps_per_active_cycle_pct",
            time,
        )),
        warp_instructions: total("smsp__inst_executed.sum"),
        stall_1: stall(0),
        stall_2: stall(1),
        stall_3: stall(2),
        idc_requests: total("idc__requests.sum"),
        idc_misses: idc_miss,
        idc_misses_per_request: r2(ratio(idc_miss, total("idc__requests.sum"))),
        stalls_all: stalls
            .iter()
            .filter(|s| s.0 >= 0.005)
            .map(|(v, r)| format!("{r} {v:.2}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// Splits the profiled launches at the marker launches and pairs each run of launches with
/// its case, in order.
pub fn split_cases(
    launches: &[Launch],
    cases: &[Case],
) -> anyhow::Result<Vec<Counted>> {
    let mut groups: Vec<Vec<Launch>> = Vec::new();
    for l in launches {
        if l.function() == MARKER {
            groups.push(Vec::new());
        } else if let Some(g) = groups.last_mut() {
            g.push(l.clone());
        } else {
            bail!("ncu profiled `{}` before the first case's marker", l.kernel);
        }
    }
    if groups.len() != cases.len() {
        bail!(
            "ncu counted {} cases but the run labelled {}: the counts cannot be matched",
            groups.len(),
            cases.len()
        );
    }
    let mut out = Vec::with_capacity(cases.len());
    for (case, g) in cases.iter().zip(&groups) {
        if g.is_empty() {
            bail!("case `{}` launched no kernel", case.label);
        }
        out.push(sum_case(&case.label, g));
    }
    Ok(out)
}

/// A row of the predicted-vs-counted table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PredictedVsCounted {
    pub case: String,
    pub quantity: String,
    pub predicted: String,
    pub counted: String,
    /// Counted divided by predicted (empty when the prediction is zero).
    pub counted_over_predicted: String,
    pub predicted_value: f64,
    pub counted_value: f64,
}

/// One row per prediction of every case.
pub fn compare_rows(cases: &[Case], counted: &[Counted]) -> Vec<PredictedVsCounted> {
    let mut rows = Vec::new();
    for (case, c) in cases.iter().zip(counted) {
        for &(q, predicted) in &case.predictions {
            let got = q.counted(c);
            rows.push(PredictedVsCounted {
                case: case.label.clone(),
                quantity: q.name().to_string(),
                predicted: q.show(predicted),
                counted: q.show(got),
                counted_over_predicted: if predicted != 0.0 {
                    format!("{:.2}", got / predicted)
                } else {
                    String::new()
                },
                predicted_value: predicted,
                counted_value: got,
            });
        }
    }
    rows
}

/// Reads the labels a counting child wrote.
pub fn read_cases(path: &Path) -> anyhow::Result<Vec<Case>> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().filter(|l| !l.is_empty()).map(Case::from_line).collect()
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
pub fn ncu_missing() -> super::run::UsageError {
    super::run::UsageError(
        "no Nsight Compute: ncu was not found on the PATH or in /usr/local/cuda/bin (it \
         ships with the CUDA toolkit; CMBOOK_NCU=/path/to/ncu names another)"
            .into(),
    )
}

/// The child's arguments: this run's, without `--counters` and `--out`, writing into `out`.
pub fn child_args(args: impl Iterator<Item = String>, out: &Path) -> Vec<String> {
    let mut kept = super::run::without_out(args.filter(|a| a != "--counters"));
    kept.push("--out".into());
    kept.push(out.display().to_string());
    kept
}

/// The stems a `--counters` run writes: the registry's first two (`<example>-counters`,
/// `<example>-counted`), or for a part of the example that counts apart,
/// `<example>-<part>-counters` and `<example>-<part>-counted`, which the registry must list.
pub fn counters_stems(
    chapter: &Chapter,
    part: Option<&str>,
) -> anyhow::Result<(&'static str, &'static str)> {
    let listed = |suffix: &str| {
        let want = match part {
            Some(p) => format!("{}-{p}-{suffix}", chapter.example),
            None => format!("{}-{suffix}", chapter.example),
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
/// of [`counters_stems`] for `part`).
pub fn profile(run: &super::Run, part: Option<&str>) -> anyhow::Result<()> {
    let (counters_stem, counted_stem) = counters_stems(run.chapter, part)?;
    let ncu = find_ncu().ok_or_else(ncu_missing)?;
    let scratch = std::env::temp_dir().join(format!(
        "cmbook-counters-{}-{}",
        run.chapter.example,
        std::process::id()
    ));
    std::fs::create_dir_all(&scratch)?;
    let (labels, log) = (scratch.join("labels.tsv"), scratch.join("ncu.csv"));
    let _ = std::fs::remove_file(&labels);
    let exe = std::env::current_exe()?;
    let args = child_args(std::env::args().skip(1), &scratch.join("run"));
    println!(
        "counting under {} (one replay pass per metric group; minutes, not seconds)",
        ncu.display()
    );
    let status = std::process::Command::new(&ncu)
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
    let version = ncu_version(&ncu);
    let child = super::run::command_line_from(
        run.chapter.example,
        super::run::profile(),
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
    let _ = std::fs::remove_dir_all(&scratch);
    println!("{} cases counted", counted.len());
    Ok(())
}

/// How the counters table is shown (the other columns stay in its CSV).
const COUNTERS_SHOWN: &[(&str, &str)] = &[
    (
        "columns",
        "case | dram | l2_hit_pct | ld_sectors_per_request | st_sectors_per_request | \
         achieved_occupancy_pct | stall_1",
    ),
    (
        "headers",
        "case = case | dram = DRAM read + written | l2_hit_pct = L2 hit (%) | \
         ld_sectors_per_request = sectors / load | st_sectors_per_request = sectors / store | \
         achieved_occupancy_pct = occupancy (%) | stall_1 = top stall",
    ),
];

/// How the predicted-vs-counted table is shown.
const COUNTED_SHOWN: &[(&str, &str)] = &[
    ("columns", "case | quantity | predicted | counted | counted_over_predicted"),
    (
        "headers",
        "case = case | quantity = quantity | predicted = predicted | counted = counted | \
         counted_over_predicted = counted ÷ predicted",
    ),
];

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
            page: "page.md",
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
        let e = counters_stems(&entry("loop_permutation", &[]), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not list"), "{e}");
    }

    const FIXTURE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/ncu-raw-h100.csv"
    ));

    #[test]
    fn parses_a_real_ncu_raw_csv() {
        let launches = parse_raw(FIXTURE).unwrap();
        assert_eq!(launches.len(), 2);
        assert_eq!(launches[0].function(), "saxpy_probe");
        assert_eq!(launches[1].function(), "transpose_probe");
        // 2^22 floats read twice (x and y): 32 MiB, thousands separators removed.
        assert_eq!(launches[0].get("dram__bytes_read.sum"), 33_559_040.0);
        assert_eq!(
            launches[0].get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
            262_144.0
        );
        assert_eq!(launches[1].get("launch__grid_size"), 4096.0);
    }

    #[test]
    fn sums_a_case_and_derives_ratios() {
        let launches = parse_raw(FIXTURE).unwrap();
        let c = sum_case("saxpy", &launches[..1]);
        // Two loads of 4 floats' worth of sectors per request: 128 bytes per warp = 4 sectors.
        assert_eq!(c.ld_sectors_per_request, 4.0);
        assert_eq!(c.st_sectors_per_request, 4.0);
        assert_eq!(c.kernels, "saxpy_probe");
        assert!(c.stall_1.starts_with("long_scoreboard"), "{}", c.stall_1);
        let t = sum_case("transpose", &launches[1..]);
        // The unpadded 32×32 tile read down a column: 32 wavefronts per request.
        assert!(t.shared_ld_conflicts > 30.0 * 131_072.0, "{}", t.shared_ld_conflicts);
        let both = sum_case("both", &launches);
        assert_eq!(both.launches, 2);
        assert_eq!(both.kernels, "saxpy_probe + transpose_probe");
        assert_eq!(both.dram_read_bytes, 33_559_040.0 + 16_782_336.0);
    }

    #[test]
    fn cases_are_split_at_markers_and_mismatches_refused() {
        let launches = parse_raw(FIXTURE).unwrap();
        let marker = Launch { kernel: "empty()".into(), values: BTreeMap::new() };
        let seq =
            vec![marker.clone(), launches[0].clone(), marker, launches[1].clone()];
        let cases = vec![
            Case::new("saxpy").predict(Quantity::LoadSectorsPerRequest, 4.0),
            Case::new("transpose").predict(Quantity::BankConflicts, 0.0),
        ];
        let counted = split_cases(&seq, &cases).unwrap();
        assert_eq!(counted[1].kernels, "transpose_probe");
        let rows = compare_rows(&cases, &counted);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].counted_over_predicted, "1.00");
        assert_eq!(rows[1].counted_over_predicted, "", "no ratio to a zero prediction");
        assert!(split_cases(&seq, &cases[..1]).is_err());
        assert!(split_cases(&launches, &cases).is_err(), "no marker before the first");
    }

    #[test]
    fn labels_round_trip() {
        let case = Case::new("transpose 8192\u{b2}")
            .predict(Quantity::DramBytes, 536_870_912.0)
            .predict(Quantity::L2HitPercent, 0.5);
        assert_eq!(Case::from_line(&case.to_line()).unwrap(), case);
    }

    #[test]
    fn the_child_writes_elsewhere_and_does_not_count_again() {
        let args = ["--quick", "--counters", "--out", "figures", "--reps=3"];
        let got = child_args(args.iter().map(|s| s.to_string()), Path::new("/tmp/x"));
        assert_eq!(got, ["--quick", "--reps=3", "--out", "/tmp/x"]);
    }

    #[test]
    fn both_tables_render_from_their_records() {
        let launches = parse_raw(FIXTURE).unwrap();
        let marker = Launch { kernel: "empty()".into(), values: BTreeMap::new() };
        let seq = vec![marker, launches[0].clone()];
        let cases = vec![Case::new("saxpy").predict(Quantity::DramBytes, 3.0e7)];
        let counted = split_cases(&seq, &cases).unwrap();
        let dir = std::env::temp_dir()
            .join(format!("cmbook-counters-{}", std::process::id()));
        for (stem, shown) in
            [("x-counters", COUNTERS_SHOWN), ("x-counted", COUNTED_SHOWN)]
        {
            let meta = shown
                .iter()
                .fold(super::super::record::Meta::default(), |m, (k, v)| m.with(k, v));
            if stem == "x-counters" {
                super::super::record::write_table(&dir, stem, &meta, &counted).unwrap();
            } else {
                let rows = compare_rows(&cases, &counted);
                super::super::record::write_table(&dir, stem, &meta, &rows).unwrap();
            }
            let md = std::fs::read_to_string(dir.join(format!("{stem}.md"))).unwrap();
            assert!(md.contains("saxpy"), "{md}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn metric_list_names_every_stall() {
        let list = metric_list();
        assert_eq!(list.split(',').count(), METRICS.len() + STALLS.len());
        assert!(list.contains(
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
        ));
    }
}
