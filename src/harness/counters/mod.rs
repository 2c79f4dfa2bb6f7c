//! Hardware counters: what a kernel did, not only how long it took.
//!
//! A chapter predicts bytes, sectors, hit rates and conflicts from its model; time alone
//! cannot say whether the prediction was right. Nsight Compute (`ncu`) reads the GPU's
//! performance counters for each kernel launch. `--counters` runs an example twice over:
//!
//! 1. the **parent** (the example as the reader started it) starts `ncu` on a **child** — the
//!    same binary with the same arguments — with profiling off from the start, one fixed
//!    metric set ([`metric_list`]), ncu's raw CSV written to a file ([`profile()`]);
//! 2. in the child, a chapter marks the launches worth counting with [`Gpu::count_next`]
//!    (a label and the chapter's predictions); [`Gpu::verify_then_time`] then wraps the
//!    verification launch of that work in `cuProfilerStart`/`cuProfilerStop`, preceded by one
//!    launch of the empty marker kernel, and appends the label to a file ([`child`]). Every
//!    other launch runs unprofiled; timed repetitions shrink to one (the child's timings are
//!    thrown away);
//! 3. the parent parses ncu's CSV ([`parse_raw`]), splits the launches at the markers, sums
//!    each case's counters ([`Counted`]) and writes `<chapter>-counters.csv` and the
//!    predicted-vs-counted table `<chapter>-counted` ([`report`](mod@report)).
//!
//! What is counted is declared in two tables: the columns of `<chapter>-counters.csv`, each
//! with the ncu metrics it is summed from ([`counted`]), and the quantities a chapter can
//! predict, each with its value from those columns and its format ([`quantities`]). The
//! metric list, the summing and the tables follow from them.
//!
//! ncu locks the SM clock at its base (`--clock-control base`) and flushes the caches before
//! each replay pass (`--cache-control all`): every counted launch starts with a cold L2, and
//! both settings are in the records' provenance.
//!
//! [`Gpu::count_next`]: super::gpu::Gpu::count_next
//! [`Gpu::verify_then_time`]: super::gpu::Gpu::verify_then_time

pub mod case;
pub mod child;
pub mod counted;
pub mod ncu;
pub mod profile;
pub mod quantities;
pub mod report;

pub use case::{read_cases, Case};
pub(crate) use child::Counting;
pub use counted::{metric_list, stall_metric, sum_case, Counted, METRICS, STALLS};
pub use ncu::{find_ncu, ncu_missing, ncu_version, parse_raw, Launch};
pub use profile::{child_args, counters_stems, profile};
pub use quantities::Quantity;
pub use report::{compare_rows, split_cases, PredictedVsCounted};

/// The environment variable that makes a run a counting child: the file its labels go to.
pub const CHILD_ENV: &str = "CMBOOK_COUNTERS_LABELS";

/// Whether this process is the counting child of a `--counters` run.
pub fn is_counting_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// The name of the marker kernel that opens every counted case.
pub const MARKER: &str = "empty";
