//! The synchronisation sections: the ladder of barriers (a block, a cluster, the grid,
//! each alone and with a round's write and check; a kernel boundary, a graph node) and the all-reduces in a cluster through distributed
//! shared memory or through L2.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};

use super::{cfg, Exchange, Results, Rung, Timed};
use crate::harness::inputs::random_f32;
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::launch::{self, Args};
use crate::harness::timing::Plan;
use crate::harness::verify::check_exact;
use crate::harness::{FullQuick, Gpu, Run, Stats, L2};
use crate::hopper_memory::reference;
use crate::hopper_memory::HopperKernel as K;

/// Whether the device runs `grid` blocks of 256 threads of `f` in clusters of `cluster`;
/// if not, the reason goes into `skipped` and the size is left out of the measurement.
fn cluster_runs(
    gpu: &Gpu,
    f: &CudaFunction,
    (grid, cluster): (u32, u32),
    skipped: &mut Vec<String>,
) -> bool {
    match launch::max_active_clusters(gpu, f, cfg(grid, 256, 0), (cluster, 1, 1)) {
        Ok(n) if n > 0 => true,
        Ok(_) => {
            skipped.push(format!("clusters of {cluster}: no cluster fits"));
            false
        }
        Err(e) => {
            skipped.push(format!("clusters of {cluster}: {e}"));
            false
        }
    }
}

/// Launches `f` on `grid` blocks of 256 threads in clusters of `cluster`: every
/// cluster kernel of the chapter's sections.
///
/// # Safety
/// `args` must be `f`'s parameters, each buffer as large as `f` reads or writes it.
unsafe fn launch_clusters(
    gpu: &Gpu,
    f: &CudaFunction,
    (grid, cluster): (u32, u32),
    args: Args<'_>,
) -> anyhow::Result<()> {
    launch::launch_cluster(gpu, f, cfg(grid, 256, 0), (cluster, 1, 1), args)
}

/// The cost of one of `extra` events that a run of `rounds[1]` rounds has over one of
/// `rounds[0]`, each verified, then timed, by `time`: each statistic of the long run
/// less the short run's median, over `extra`.
fn per_extra<R>(
    [short, long]: [R; 2],
    extra: f64,
    mut time: impl FnMut(R) -> anyhow::Result<Stats>,
) -> anyhow::Result<Stats> {
    let short = time(short)?;
    let long = time(long)?;
    let per = |ms: f64| (ms - short.median_ms) / extra;
    Ok(Stats {
        median_ms: per(long.median_ms),
        min_ms: per(long.min_ms),
        max_ms: per(long.max_ms),
        mean_ms: per(long.mean_ms),
        reps: long.reps,
    })
}

/// The launch of a ladder kernel: (stream, passes of its loop, its output).
type BarrierLaunch<'a> = Box<
    dyn FnMut(&Arc<CudaStream>, i32, &mut CudaSlice<u32>) -> anyhow::Result<()> + 'a,
>;

/// One barrier of the ladder: its kernel, who waits at it, the blocks of its grid and how
/// to launch it.
struct Barrier<'a> {
    kernel: K,
    who: String,
    blocks: u32,
    launch: BarrierLaunch<'a>,
}

/// What a ladder kernel times.
struct Form {
    /// Which barrier.
    barrier: &'static str,
    /// What its loop holds besides the barrier.
    timed: Timed,
    /// Barriers one pass of its loop crosses.
    per_pass: i32,
    /// Passes of the shorter run (a full run's, a quick run's): the two forms of a rung
    /// cross the same number of barriers, and fewer where a barrier costs more.
    passes: FullQuick<i32>,
}

impl Barrier<'_> {
    fn form(&self) -> Form {
        let (barrier, timed, per_pass, passes) = match self.kernel {
            K::LadderBlock => ("__syncthreads", Timed::SharedRound, 2, (20_000, 20)),
            K::BarrierBlock => ("__syncthreads", Timed::Alone, 1, (40_000, 40)),
            K::LadderCluster => ("cluster barrier", Timed::DsmemRound, 2, (5_000, 10)),
            K::BarrierCluster => ("cluster barrier", Timed::Alone, 1, (10_000, 20)),
            K::BarrierClusterRelaxed => {
                ("cluster barrier, relaxed arrive", Timed::Alone, 1, (10_000, 20))
            }
            K::LadderGrid => ("grid barrier", Timed::GlobalRound, 2, (500, 4)),
            K::BarrierGrid => ("grid barrier", Timed::Alone, 1, (1_000, 8)),
            other => unreachable!("{other:?} is not a kernel of the ladder"),
        };
        let passes = FullQuick::new(passes.0, passes.1);
        Form { barrier, timed, per_pass, passes }
    }
}

/// Verifies that `launch(passes)` leaves `out` as it should at `lo` and `2 lo` passes,
/// then times both: the cost of one barrier is the difference over the `lo` extra passes'
/// barriers, so the launch itself cancels out. A round leaves every block's count of
/// failed checks, 0; a barrier alone, every block's count of passes.
fn per_barrier(
    gpu: &Gpu,
    blocks: usize,
    (lo, form): (i32, &Form),
    plan: Plan,
    mut launch: impl FnMut(&Arc<CudaStream>, i32, &mut CudaSlice<u32>) -> anyhow::Result<()>,
    name: &str,
) -> anyhow::Result<Stats> {
    let mut out = gpu.stream.alloc_zeros::<u32>(blocks)?;
    let extra = f64::from(form.per_pass) * f64::from(lo);
    per_extra([lo, 2 * lo], extra, |passes| {
        let (want, size) = match form.timed {
            Timed::Alone => (passes as u32, format!("{passes} barriers")),
            _ => (0, format!("{passes} rounds")),
        };
        let want = vec![want; blocks];
        let v = gpu.verify_then_time_output(
            &mut out,
            |s, o| launch(s, passes, o),
            |got| check_exact(name, &size, got, &want),
            &[plan],
        )?;
        Ok(v.time().clone())
    })
}

/// The barriers of a block (256 and 1024 threads), of every cluster size the device
/// runs (with `clusters`: a GPU from 9.0), and of the grid (one block per SM, and as many
/// as fit): each alone, then with the round's write and check (the cluster barrier also
/// alone with a relaxed arrival).
fn barriers<'a>(
    run: &'a Run,
    table: &'a KernelTable<K>,
    clusters: bool,
    r: &mut Results,
) -> anyhow::Result<Vec<Barrier<'a>>> {
    let gpu = run.gpu();
    let sms = gpu.info.sms as u32;
    let mut barriers = Vec::new();
    for threads in [256u32, 1024] {
        for kernel in [K::BarrierBlock, K::LadderBlock] {
            let f = table.get(kernel);
            barriers.push(Barrier {
                kernel,
                who: format!("{threads} threads (one block)"),
                blocks: sms,
                launch: Box::new(move |s, passes, out| {
                    // SAFETY: ladder_block(int iters, unsigned* errors[grid]) and
                    // barrier_block(int iters, unsigned* passed[grid]).
                    unsafe {
                        s.launch_builder(f)
                            .arg(&passes)
                            .arg(out)
                            .launch(cfg(sms, threads, 0))?
                    };
                    Ok(())
                }),
            });
        }
    }
    let cluster_sizes: &[u32] = if clusters { &[2, 4, 8, 16] } else { &[] };
    for &cluster in cluster_sizes {
        let grid = sms / cluster * cluster;
        for kernel in [K::BarrierCluster, K::BarrierClusterRelaxed, K::LadderCluster] {
            let f = table.get(kernel);
            if !cluster_runs(gpu, f, (grid, cluster), &mut r.skipped) {
                continue;
            }
            barriers.push(Barrier {
                kernel,
                who: format!("{cluster} blocks of 256 threads"),
                blocks: grid,
                launch: Box::new(move |_, passes, out| {
                    let args = Args::new().value(passes).buf_mut(out, gpu);
                    // SAFETY: ladder_cluster(int iters, unsigned* errors[grid]) and
                    // barrier_cluster[_relaxed](int iters, unsigned* passed[grid]).
                    unsafe { launch_clusters(gpu, f, (grid, cluster), args) }
                }),
            });
        }
    }
    // A shape the device must refuse: the wrapper says so instead of launching.
    if clusters {
        let f = table.get(K::LadderCluster);
        r.refused_cluster =
            launch::max_active_clusters(gpu, f, cfg(sms / 32 * 32, 256, 0), (32, 1, 1))
                .err()
                .map(|e| e.to_string());
    }

    // Both grid kernels run at the same sizes: the smaller of their capacities.
    let mut capacity = u32::MAX;
    for kernel in [K::BarrierGrid, K::LadderGrid] {
        let f = table.get(kernel);
        capacity = capacity.min(launch::cooperative_capacity(gpu, f, 256, 0)? as u32);
    }
    for grid in [sms, capacity] {
        for kernel in [K::BarrierGrid, K::LadderGrid] {
            let f = table.get(kernel);
            let mut bar = gpu.stream.alloc_zeros::<u32>(2)?;
            let mut slots = match kernel {
                K::LadderGrid => Some(gpu.stream.alloc_zeros::<u32>(grid as usize)?),
                _ => None,
            };
            barriers.push(Barrier {
                kernel,
                who: format!("{grid} blocks of 256 threads ({} per SM)", grid / sms),
                blocks: grid,
                launch: Box::new(move |_, passes, out| {
                    let mut args = Args::new().value(passes).buf_mut(&mut bar, gpu);
                    if let Some(slots) = slots.as_mut() {
                        args = args.buf_mut(slots, gpu);
                    }
                    let args = args.buf_mut(out, gpu);
                    // SAFETY: ladder_grid(int iters, unsigned* bar[2], slots[grid],
                    // errors[grid]) and barrier_grid(int iters, unsigned* bar[2],
                    // passed[grid]).
                    unsafe {
                        launch::launch_cooperative(gpu, f, cfg(grid, 256, 0), args)
                    }
                }),
            });
        }
    }
    Ok(barriers)
}

/// The ladder: every barrier of [`barriers`] (the cluster barriers with `clusters`), then
/// a kernel boundary and a graph node.
pub(super) fn ladder(
    run: &Run,
    table: &KernelTable<K>,
    clusters: bool,
    r: &mut Results,
) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let plan = Plan::new(2, run.reps(), L2::Warm);
    for mut b in barriers(run, table, clusters, r)? {
        let form = b.form();
        let lo = form.passes.pick(run.quick);
        let name = b.kernel.function();
        let per = per_barrier(
            gpu,
            b.blocks as usize,
            (lo, &form),
            plan,
            &mut b.launch,
            &name,
        )?;
        let how = match form.per_pass {
            1 => format!("{lo} vs {} barriers, difference", 2 * lo),
            n => format!("{lo} vs {} rounds of {n} barriers, difference", 2 * lo),
        };
        r.ladder.push(Rung {
            barrier: form.barrier.into(),
            timed: form.timed,
            who: b.who,
            per,
            how,
        });
    }

    // The rungs above a barrier: the ceilings chapter's own measurement of a launch.
    let batch = if run.quick { 10 } else { 1000 };
    let launches = crate::ceilings::measure::measure_launch(gpu, plan, batch)?;
    let per_launch = format!("events around {batch} empty kernels");
    r.ladder.push(Rung {
        barrier: "kernel boundary".into(),
        timed: Timed::EmptyKernels,
        who: "the whole GPU (next launch on one stream)".into(),
        per: launches.back_to_back,
        how: per_launch.clone(),
    });
    r.ladder.push(Rung {
        barrier: "CUDA graph node".into(),
        timed: Timed::EmptyKernels,
        who: "the whole GPU (next node of one graph)".into(),
        per: launches.graph_node,
        how: per_launch,
    });
    Ok(())
}

/// The all-reduces of every cluster size the device runs, through distributed shared
/// memory and through L2: the cost of one round is the difference of `lo` and `2 lo`
/// rounds.
pub(super) fn dsmem(
    run: &Run,
    table: &KernelTable<K>,
    r: &mut Results,
) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let sms = gpu.info.sms as u32;
    let per_block = 4099usize; // not a multiple of the block: the loop's tail runs
    let lo: u32 = if run.quick { 4 } else { 2_000 };
    r.exchange_rounds = lo;
    let plan = Plan::new(2, run.reps(), L2::Warm);
    for cluster in [2u32, 4, 8, 16] {
        let grid = sms / cluster * cluster;
        let fs = [table.get(K::ExchangeDsmem), table.get(K::ExchangeGlobal)];
        if !fs.iter().all(|f| cluster_runs(gpu, f, (grid, cluster), &mut r.skipped)) {
            continue;
        }
        let words: Vec<u32> =
            random_f32(grid as usize * per_block, run.seed + cluster as u64)
                .iter()
                .map(|x| x.to_bits())
                .collect();
        let input = gpu.stream.clone_htod(&words)?;
        let mut slots = gpu.stream.alloc_zeros::<u32>(grid as usize)?;
        let mut out = gpu.stream.alloc_zeros::<u32>(grid as usize)?;
        for dsmem in [true, false] {
            let f = table.get(if dsmem { K::ExchangeDsmem } else { K::ExchangeGlobal });
            let name = if dsmem { "exchange_dsmem" } else { "exchange_global" };
            let per_round = per_extra([lo, 2 * lo], lo as f64, |rounds| {
                let want =
                    reference::exchange(&words, per_block, cluster as usize, rounds);
                let (pb, rd) = (per_block as i32, rounds as i32);
                let v = gpu.verify_then_time_output(
                    &mut out,
                    |_, o| {
                        let mut args = Args::new().buf(&input, gpu).value(pb).value(rd);
                        if !dsmem {
                            args = args.buf_mut(&mut slots, gpu);
                        }
                        let args = args.buf_mut(o, gpu);
                        // SAFETY: exchange_dsmem(in, per_block, rounds, out) and
                        // exchange_global(in, per_block, rounds, slots, out).
                        unsafe { launch_clusters(gpu, f, (grid, cluster), args) }
                    },
                    |got| {
                        check_exact(
                            name,
                            &format!("cluster {cluster}, {rounds} rounds"),
                            got,
                            &want,
                        )
                    },
                    &[plan],
                )?;
                Ok(v.time().clone())
            })?;
            r.exchanges.push(Exchange { cluster, dsmem, per_round });
        }
    }
    Ok(())
}
