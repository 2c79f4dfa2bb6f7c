//! One chain, answered: `--dims 20,2,30,12,8` or `--matrices 500` (a random chain from
//! `--seed`). The CPU's table is the answer; unless `--cpu-only`, the paper's kernel with the
//! diagonal-major layout solves it too, every cell checked against the CPU's, and is timed.

use crate::cmm::dp::{self, DpTable};
use crate::cmm::error::GIB;
use crate::cmm::gpu::{CmmKernels, Kernel};
use crate::cmm::layout::Layout;
use crate::cmm::paren;
use crate::cmm::CmmError;
use crate::harness::run::{available_memory, AvailableMemory};
use crate::harness::timing::{time_host, Plan};
use crate::harness::{Run, Stats, UsageError, L2};

use super::measure::DIM_MAX;

/// The kernel that answers on the GPU.
pub const KERNEL: Kernel = Kernel::one_block(Layout::DiagonalMajor);
/// Timed GPU solves after the verified one.
pub const GPU_REPS: usize = 5;
/// Above this many matrices the CPU answers with all cores (rayon), below with one.
pub const SERIAL_MAX_N: usize = 2000;
/// Steps of the progress bar of a long CPU solve (per mille of its candidate splits).
pub const PROGRESS_STEPS: usize = 1000;
/// Up to this many matrices the optimal order is printed unless `--show-order` asks for it.
pub const SHOWN_ORDER_MAX_N: usize = 60;

/// The random chain of `--matrices n`: dimensions 1..=[`DIM_MAX`], from `seed`.
pub fn random_chain(matrices: usize, seed: u64) -> Vec<u32> {
    dp::random_dims(matrices, DIM_MAX, seed)
}

/// The one chain a run answers: `--dims`, else a random chain of `--matrices` from `seed`;
/// `None` for the chapter's measurements.
pub fn chain_of(
    dims: Option<&[u32]>,
    matrices: Option<u64>,
    seed: u64,
) -> Option<Vec<u32>> {
    match (dims, matrices) {
        (Some(dims), _) => Some(dims.to_vec()),
        (None, Some(n)) => Some(random_chain(n as usize, seed)),
        (None, None) => None,
    }
}

/// The checks of a run's arguments made before a GPU is opened: `--cpu-only` and
/// `--show-order` need a chain, and the chain must be one this run can answer
/// ([`check_chain`]) with the memory this process can have ([`check_memory`]).
pub fn check_args(
    chain: Option<&[u32]>,
    cpu_only: bool,
    show_order: bool,
) -> Result<(), UsageError> {
    match chain {
        Some(dims) => {
            let n = check_chain(dims, cpu_only)?;
            check_memory(n, host_bytes(n, cpu_only), available_memory())
        }
        None if cpu_only || show_order => Err(UsageError(
            "--cpu-only and --show-order answer --dims or --matrices; the measurements need \
             a GPU"
                .into(),
        )),
        None => Ok(()),
    }
}

fn usage(e: CmmError) -> UsageError {
    UsageError(e.to_string())
}

/// A lower bound on the optimal cost: every order ends with one product
/// `(A1..Ak)(Ak+1..An)` of cost `p0 pk pn`, so the optimum is at least `p0 pn min(p1..pn-1)`
/// (0 for a single matrix).
pub fn optimum_lower_bound(dims: &[u32]) -> u128 {
    if dims.len() < 3 {
        return 0;
    }
    let n = dims.len() - 1;
    let inner = *dims[1..n].iter().min().expect("two matrices or more");
    u128::from(dims[0]) * u128::from(inner) * u128::from(dims[n])
}

/// What can be refused before a GPU is opened (exit code 2): a chain that is no chain and,
/// unless `cpu_only`, one the GPU kernel cannot solve exactly. A chain whose optimum provably
/// does not fit in 64 bits is refused for that reason, since the CPU cannot answer it either.
pub fn check_chain(dims: &[u32], cpu_only: bool) -> Result<usize, UsageError> {
    let n = dp::validate_dims(dims).map_err(usage)?;
    if cpu_only {
        return Ok(n);
    }
    KERNEL.check(dims).map_err(|refused| {
        if optimum_lower_bound(dims) > u128::from(u64::MAX) {
            usage(CmmError::CostOverflow { i: 1, j: n })
        } else {
            refused
        }
    })
}

/// Host memory a solve of `n` matrices takes at its peak: the CPU's table
/// ([`DpTable::bytes`]) and, with the GPU, the kernel's table read back (its diagonal-major
/// buffers, then a second [`DpTable`]) to compare with it.
pub fn host_bytes(n: usize, cpu_only: bool) -> u128 {
    let table = DpTable::bytes(n);
    if cpu_only {
        table
    } else {
        let per_cell =
            (std::mem::size_of::<u64>() + std::mem::size_of::<u32>()) as u128;
        2 * table + per_cell * KERNEL.layout().dp_len(n) as u128
    }
}

/// Refuses (exit code 2), before anything is allocated, a solve of `n` matrices that needs
/// more than `available` bytes of memory: such a run would otherwise end in an allocation
/// failure, or in the kernel's out-of-memory killer.
pub fn check_memory(
    n: usize,
    needed: u128,
    available: Option<AvailableMemory>,
) -> Result<(), UsageError> {
    match available {
        Some(a) if needed > u128::from(a.bytes) => Err(UsageError(format!(
            "n = {n} matrices: the DP table needs {:.1} GiB of memory ({needed} bytes), and \
             this process can have {:.1} GiB ({}); give a shorter chain",
            needed as f64 / GIB,
            a.bytes as f64 / GIB,
            a.limit
        ))),
        _ => Ok(()),
    }
}

/// One chain's answer.
pub struct Solution {
    pub n: usize,
    pub table: DpTable,
    /// The CPU program that answered, and its time (one solve).
    pub cpu_program: String,
    pub cpu: Stats,
    /// The GPU kernel's label and its time, when it ran (its table equals the CPU's).
    pub gpu: Option<(String, Stats)>,
}

/// Solves `dims` on the CPU and, unless `cpu_only`, on the GPU: the GPU's table is checked
/// cell by cell against the CPU's, then timed.
pub fn solve(run: &Run, dims: &[u32], cpu_only: bool) -> anyhow::Result<Solution> {
    let n = check_chain(dims, cpu_only)?;
    let parallel = n > SERIAL_MAX_N;
    let cpu_program = if parallel {
        let threads = rayon::current_num_threads();
        format!("CPU DP, {threads} threads (rayon)")
    } else {
        "CPU serial DP".to_string()
    };
    // A long solve says up front what it takes, and shows how far it is.
    let bar = parallel.then(|| {
        println!(
            "n = {n} matrices on the {cpu_program}: a table of {:.1} GiB and {:.2e} candidate \
             splits to weigh",
            DpTable::bytes(n) as f64 / GIB,
            dp::candidates(n) as f64
        );
        let bar = run.progress(PROGRESS_STEPS);
        bar.set_message("of the candidate splits weighed (per mille)");
        bar
    });
    let mut table = None;
    let cpu = time_host(0, 1, || {
        let solved = match &bar {
            Some(bar) => dp::solve_parallel_reporting(dims, |fraction| {
                bar.set_position((fraction * PROGRESS_STEPS as f64) as u64)
            }),
            None => dp::solve_serial(dims),
        };
        table = Some(solved.map_err(usage)?);
        Ok(())
    })?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let table = table.expect("one solve");
    let gpu = if cpu_only {
        None
    } else {
        let kernels = CmmKernels::load(run.gpu())?;
        let mut p = kernels.prepare(KERNEL, dims)?;
        let plan = Plan::new(1, GPU_REPS, L2::Warm);
        let verified = kernels.verify_then_time(&mut p, &table, &[plan])?;
        Some((KERNEL.label(), verified.time().clone()))
    };
    Ok(Solution { n, table, cpu_program, cpu, gpu })
}

/// Prints the answer; the order in full when `show_order` or the chain is short.
pub fn print(s: &Solution, show_order: bool) {
    let order = paren::parenthesization(&s.table);
    let order = if show_order || s.n <= SHOWN_ORDER_MAX_N {
        order
    } else {
        format!("{} characters, not shown (--show-order prints it)", order.len())
    };
    let matrices = if s.n == 1 { "matrix" } else { "matrices" };
    let cpu_only = if s.gpu.is_none() { " (CPU only)" } else { "" };
    println!("n = {} {matrices}{cpu_only}", s.n);
    println!("optimal cost: {} scalar multiplications", s.table.optimal_cost());
    println!("optimal order: {order}");
    if let Some((label, stats)) = &s.gpu {
        println!(
            "GPU ({label}): every cell equals the CPU's; {:.3} ms (median of {GPU_REPS})",
            stats.median_ms
        );
    }
    println!("{}: {:.3} ms", s.cpu_program, s.cpu.median_ms);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::layout::MAX_N_FOR_I32_INDEX;

    #[test]
    fn chains_are_refused_for_the_right_reason() {
        assert_eq!(check_chain(&[20, 2, 30, 12, 8], false), Ok(4));
        assert!(check_chain(&[5], true).unwrap_err().0.contains("2 dimensions"));
        assert!(check_chain(&[3, 0, 4], false).unwrap_err().0.contains("zero"));
        // Past 64 bits on the GPU's bound but not for the CPU: the kernel's reason.
        let wide = [3_000_000u32, 3_000_000, 1, 3_000_000];
        assert!(check_chain(&wide, true).is_ok());
        let e = check_chain(&wide, false).unwrap_err().0;
        assert!(e.contains("cannot solve this chain exactly"), "{e}");
        // An optimum that cannot fit: refused as such, with or without a GPU's kernel.
        let huge = [4_000_000_000u32; 4];
        assert!(check_chain(&huge, false).unwrap_err().0.contains("does not fit"));
        let too_long = vec![1u32; MAX_N_FOR_I32_INDEX + 2];
        assert!(check_chain(&too_long, false).unwrap_err().0.contains("46339"));
    }

    #[test]
    fn a_chain_whose_table_cannot_fit_is_refused_saying_what_it_needs() {
        let twelve_bytes_a_cell = 12 * 46_340u128 * 46_340;
        assert_eq!(host_bytes(46_339, true), twelve_bytes_a_cell);
        assert!(host_bytes(46_339, false) > 2 * twelve_bytes_a_cell);
        let six_gib = AvailableMemory { bytes: 6 << 30, limit: "RLIMIT_AS" };
        let e = check_memory(46_339, twelve_bytes_a_cell, Some(six_gib)).unwrap_err().0;
        assert!(e.contains("24.0 GiB") && e.contains("6.0 GiB (RLIMIT_AS)"), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(check_memory(4, host_bytes(4, true), Some(six_gib)).is_ok());
        // Where nothing says how much there is, the allocation itself is the check.
        assert!(check_memory(46_339, twelve_bytes_a_cell, None).is_ok());
    }

    #[test]
    fn the_lower_bound_is_the_cheapest_last_product() {
        assert_eq!(optimum_lower_bound(&[7, 3]), 0);
        let dims = [20u32, 2, 30, 12, 8];
        assert_eq!(optimum_lower_bound(&dims), 20 * 2 * 8);
        let optimum = u128::from(dp::solve_serial(&dims).unwrap().optimal_cost());
        assert!(optimum_lower_bound(&dims) <= optimum);
        for seed in 0..20 {
            let dims = dp::random_dims(1 + seed as usize % 9, 50, seed);
            let optimum = u128::from(dp::solve_serial(&dims).unwrap().optimal_cost());
            assert!(optimum_lower_bound(&dims) <= optimum, "{dims:?}");
        }
    }
}
