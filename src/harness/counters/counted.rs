//! What ncu counted for a case: the columns of `<chapter>-counters.csv`, declared once in
//! the invocation of `counted_table!` below with the ncu metrics they are summed from. The metric
//! list ncu is given, the [`Counted`] row and [`sum_case`] all follow from that table, so a
//! column cannot read a metric that ncu was not asked for.

use anyhow::Context;

use super::ncu::Launch;
use crate::harness::format::bytes;

/// Declares the counted metrics and the columns of a case's row. `metrics` names each ncu
/// metric once; in `columns`, each column's value is an expression of those names (each the
/// metric's values over the case's launches, a [`PerLaunch`]) and of the case itself (the
/// name given in `columns(…)`, a [`CaseLaunches`]).
macro_rules! counted_table {
    (
        metrics { $( $metric:ident = $ncu:literal, )+ }
        columns($case:ident) {
            $( $(#[$meta:meta])* $column:ident: $ty:ty = $value:expr, )+
        }
    ) => {
        /// The metrics the columns are summed from (ncu's names), in the table's order.
        pub const METRICS: &[&str] = &[$($ncu),+];

        /// What ncu counted for one case, summed over its launches: the row of
        /// `<chapter>-counters.csv`, its columns in the table's order.
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        pub struct Counted {
            $( $(#[$meta])* pub $column: $ty, )+
        }

        impl Counted {
            fn from_launches($case: &CaseLaunches) -> anyhow::Result<Counted> {
                $( let $metric = $case.metric($ncu)?; )+
                Ok(Counted { $( $column: $value, )+ })
            }
        }
    };
}

counted_table! {
    metrics {
        time = "gpu__time_duration.sum",
        clock = "sm__cycles_elapsed.avg.per_second",
        registers = "launch__registers_per_thread",
        dram_read = "dram__bytes_read.sum",
        dram_write = "dram__bytes_write.sum",
        l2_sectors = "lts__t_sectors.sum",
        l2_hits = "lts__t_sectors_lookup_hit.sum",
        l2_misses = "lts__t_sectors_lookup_miss.sum",
        ld_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        ld_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        st_requests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        st_sectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        shared_ld_wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        shared_ld_conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        shared_st_wavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        shared_st_conflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        warps_active = "sm__warps_active.avg.pct_of_peak_sustained_active",
        warps_possible = "sm__maximum_warps_per_active_cycle_pct",
        executed = "smsp__inst_executed.sum",
        issued = "smsp__inst_issued.sum",
        idc_requests = "idc__requests.sum",
        idc_misses = "idc__requests_lookup_miss.sum",
        ld_l1_hits = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
        ld_wavefronts = "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum",
        sm_active = "sm__cycles_active.avg",
        sm_elapsed = "sm__cycles_elapsed.avg",
        waves = "launch__waves_per_multiprocessor",
    }
    columns(case) {
        /// The label the chapter gave the case.
        case: String = case.label.to_string(),
        /// The kernels launched, each once, in the order of their first launch (`a + b`).
        kernels: String = case.kernel_names(),
        /// DRAM bytes read and written, as the table shows them (`537 MB + 1.05 MB`).
        dram: String =
            format!("{} + {}", bytes(dram_read.total()), bytes(dram_write.total())),
        launches: usize = case.count(),
        duration_us: f64 = r2(time.total() / 1e3),
        /// The SM clock, averaged over the launches weighted by their durations.
        sm_clock_mhz: f64 = (clock.mean_by(&time) / 1e6).round(),
        /// The most any launch used.
        registers_per_thread: f64 = registers.max(),
        dram_read_bytes: f64 = dram_read.total(),
        dram_write_bytes: f64 = dram_write.total(),
        l2_sectors: f64 = l2_sectors.total(),
        l2_hit_pct: f64 =
            r2(100.0 * ratio(l2_hits.total(), l2_hits.total() + l2_misses.total())),
        ld_requests: f64 = ld_requests.total(),
        ld_sectors: f64 = ld_sectors.total(),
        ld_sectors_per_request: f64 =
            r2(ratio(ld_sectors.total(), ld_requests.total())),
        st_requests: f64 = st_requests.total(),
        st_sectors: f64 = st_sectors.total(),
        st_sectors_per_request: f64 =
            r2(ratio(st_sectors.total(), st_requests.total())),
        shared_ld_wavefronts: f64 = shared_ld_wavefronts.total(),
        shared_ld_conflicts: f64 = shared_ld_conflicts.total(),
        shared_st_wavefronts: f64 = shared_st_wavefronts.total(),
        shared_st_conflicts: f64 = shared_st_conflicts.total(),
        /// Averaged over the launches weighted by their durations, as the clock.
        achieved_occupancy_pct: f64 = r2(warps_active.mean_by(&time)),
        theoretical_occupancy_pct: f64 = r2(warps_possible.mean_by(&time)),
        warp_instructions: f64 = executed.total(),
        /// The three largest stall reasons, `reason cycles-per-issue`, largest first.
        stall_1: String = case.stalls(&issued)?.nth(0),
        stall_2: String = case.stalls(&issued)?.nth(1),
        stall_3: String = case.stalls(&issued)?.nth(2),
        /// Requests to the SM's indexed constant cache (IDC), which serves `LDC`: constant
        /// loads whose address is computed at run time.
        #[serde(default)]
        idc_requests: f64 = idc_requests.total(),
        /// IDC requests that missed, as ncu counts them (its hit count is derived from the
        /// two, and goes negative when one request misses more than once).
        #[serde(default)]
        idc_misses: f64 = idc_misses.total(),
        /// Misses per request.
        #[serde(default)]
        idc_misses_per_request: f64 =
            r2(ratio(idc_misses.total(), idc_requests.total())),
        /// Every stall reason above 0.005 cycles per issue, largest first (`reason v; …`):
        /// for a reason that matters to one chapter and is not in the top three everywhere.
        #[serde(default)]
        stalls_all: String = case.stalls(&issued)?.at_least(0.005),
        /// Sectors of global loads that hit in L1 (the columns from here on are newer than
        /// some of the book's records, which read them as 0).
        #[serde(default)]
        ld_l1_hit_sectors: f64 = ld_l1_hits.total(),
        /// The share of global-load sectors L1 served, in percent.
        #[serde(default)]
        ld_l1_hit_pct: f64 =
            r2(100.0 * ratio(ld_l1_hits.total(), ld_sectors.total())),
        /// Wavefronts L1's tag stage sent on for global loads: one per pass a request
        /// needs, more than one where its lines or sectors cannot all be looked up at once.
        #[serde(default)]
        ld_wavefronts: f64 = ld_wavefronts.total(),
        #[serde(default)]
        ld_wavefronts_per_request: f64 =
            r2(ratio(ld_wavefronts.total(), ld_requests.total())),
        /// Cycles with work on the average SM, summed over the launches.
        #[serde(default)]
        sm_active_cycles: f64 = sm_active.total(),
        /// Those cycles as a share of the elapsed ones, in percent: below 100 when SMs sat
        /// idle (too few blocks, or a tail of the last wave).
        #[serde(default)]
        sm_active_pct: f64 =
            r2(100.0 * ratio(sm_active.total(), sm_elapsed.total())),
        /// Blocks launched per block the GPU holds at once (over the launches, weighted
        /// by their durations): a fractional last wave leaves SMs idle.
        #[serde(default)]
        waves_per_sm: f64 = r2(waves.mean_by(&time)),
    }
}

/// The warp-stall reasons counted, each as ncu's "warps stalled for this reason per issued
/// instruction" ([`stall_metric`]).
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

/// The whole `--metrics` list: the columns' metrics, then the stall reasons'.
pub fn metric_list() -> String {
    METRICS
        .iter()
        .map(|m| m.to_string())
        .chain(STALLS.iter().map(|r| stall_metric(r)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Sums `launches` (one case, marker excluded) into one row. Counts add; the clock,
/// occupancies and stall ratios are averaged, weighted by duration (clock, occupancy) or by
/// issued instructions (stalls).
pub fn sum_case(case: &str, launches: &[Launch]) -> anyhow::Result<Counted> {
    Counted::from_launches(&CaseLaunches { label: case, launches })
        .with_context(|| format!("counting case `{case}`"))
}

/// A case's launches, as the columns read them.
pub struct CaseLaunches<'a> {
    pub label: &'a str,
    pub launches: &'a [Launch],
}

impl CaseLaunches<'_> {
    /// One metric's values over the launches; an error if any launch lacks it.
    pub fn metric(&self, ncu: &str) -> anyhow::Result<PerLaunch> {
        self.launches
            .iter()
            .map(|l| l.get(ncu))
            .collect::<anyhow::Result<_>>()
            .map(PerLaunch)
    }

    pub fn count(&self) -> usize {
        self.launches.len()
    }

    /// The kernels' names, each once, in the order of their first launch, joined by ` + `.
    pub fn kernel_names(&self) -> String {
        let mut names: Vec<&str> = Vec::new();
        for l in self.launches {
            if !names.contains(&l.function()) {
                names.push(l.function());
            }
        }
        names.join(" + ")
    }

    /// The stall reasons, each weighted by the launches' issued instructions, largest first
    /// (reasons that tie keep [`STALLS`]' order).
    pub fn stalls(&self, issued: &PerLaunch) -> anyhow::Result<Stalls> {
        let mut stalls = STALLS
            .iter()
            .map(|r| Ok((self.metric(&stall_metric(r))?.mean_by(issued), *r)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        stalls.sort_by(|a, b| b.0.total_cmp(&a.0));
        Ok(Stalls(stalls))
    }
}

/// One metric's values over a case's launches, in launch order.
pub struct PerLaunch(Vec<f64>);

impl PerLaunch {
    pub fn total(&self) -> f64 {
        self.0.iter().sum()
    }

    /// The largest value (0 for no launch).
    pub fn max(&self) -> f64 {
        self.0.iter().copied().fold(0.0, f64::max)
    }

    /// The mean weighted by `weight`'s values for the same launches (0 when they sum to 0).
    pub fn mean_by(&self, weight: &PerLaunch) -> f64 {
        ratio(self.0.iter().zip(&weight.0).map(|(v, w)| v * w).sum(), weight.total())
    }
}

/// Stall reasons with their cycles per issued instruction, largest first.
pub struct Stalls(Vec<(f64, &'static str)>);

impl Stalls {
    /// The `i`-th largest, `reason v` (empty when it is 0 or there is none).
    pub fn nth(&self, i: usize) -> String {
        self.0
            .get(i)
            .filter(|s| s.0 > 0.0)
            .map(|(v, r)| format!("{r} {v:.2}"))
            .unwrap_or_default()
    }

    /// Every reason of at least `least`, `reason v; …`.
    pub fn at_least(&self, least: f64) -> String {
        self.0
            .iter()
            .filter(|s| s.0 >= least)
            .map(|(v, r)| format!("{r} {v:.2}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        0.0
    }
}

/// Two decimals, as the nearest f64 to the decimal (so a cell reads `88.91`).
fn r2(v: f64) -> f64 {
    format!("{v:.2}").parse::<f64>().unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::super::ncu::tests::fixture_launches;
    use super::*;

    #[test]
    fn sums_a_case_and_derives_ratios() {
        let launches = fixture_launches();
        let c = sum_case("saxpy", &launches[..1]).unwrap();
        // Two loads of 4 floats' worth of sectors per request: 128 bytes per warp = 4 sectors.
        assert_eq!(c.ld_sectors_per_request, 4.0);
        assert_eq!(c.st_sectors_per_request, 4.0);
        assert_eq!(c.kernels, "saxpy_probe");
        assert!(c.stall_1.starts_with("long_scoreboard"), "{}", c.stall_1);
        let t = sum_case("transpose", &launches[1..]).unwrap();
        // The unpadded 32×32 tile read down a column: 32 wavefronts per request.
        assert!(t.shared_ld_conflicts > 30.0 * 131_072.0, "{}", t.shared_ld_conflicts);
        let both = sum_case("both", &launches).unwrap();
        assert_eq!(both.launches, 2);
        assert_eq!(both.kernels, "saxpy_probe + transpose_probe");
        assert_eq!(both.dram_read_bytes, 33_558_528.0 + 16_782_336.0);
        // Weighted by duration (17.44 and 35.46 µs), not the plain mean of 77.96 and 87.20.
        assert_eq!(both.achieved_occupancy_pct, 84.15);
        // The L1 columns, from the fixture's stand-ins: a quarter of saxpy's sectors hit.
        assert_eq!((c.ld_l1_hit_sectors, c.ld_l1_hit_pct), (262_144.0, 25.0));
        assert_eq!(
            (c.ld_wavefronts_per_request, t.ld_wavefronts_per_request),
            (1.0, 2.0)
        );
        // Both launches: 262 144 hits of 1 572 864 sectors; active cycles summed, then
        // divided by the elapsed ones (70 000 of 75 000), not the mean of 80% and 100%.
        assert_eq!(both.ld_l1_hit_pct, 16.67);
        assert_eq!(both.sm_active_cycles, 70_000.0);
        assert_eq!((c.sm_active_pct, both.sm_active_pct), (80.0, 93.33));
        // Both probes launch 15.52 waves (the fixture's own value, not a stand-in).
        assert_eq!(both.waves_per_sm, 15.52);
    }

    #[test]
    fn a_case_missing_a_metric_is_refused_naming_it_the_launch_and_the_case() {
        let mut launches = fixture_launches();
        launches[1].values.remove("lts__t_sectors_lookup_miss.sum");
        let e = format!("{:#}", sum_case("both", &launches).unwrap_err());
        assert!(e.contains("counting case `both`"), "{e}");
        assert!(e.contains("lts__t_sectors_lookup_miss.sum"), "{e}");
        assert!(e.contains("launch 1 of `transpose_probe"), "{e}");
        let reason = "imc_miss";
        launches[0].values.remove(&stall_metric(reason));
        let e = format!("{:#}", sum_case("saxpy", &launches[..1]).unwrap_err());
        assert!(e.contains(&stall_metric(reason)), "{e}");
    }

    #[test]
    fn metric_list_names_every_column_metric_and_every_stall() {
        let list = metric_list();
        assert_eq!(list.split(',').count(), METRICS.len() + STALLS.len());
        assert!(list.contains(
            "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
        ));
        let mut unique: Vec<&str> = list.split(',').collect();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), METRICS.len() + STALLS.len(), "a metric listed twice");
    }
}
