//! What the chapter "Asynchronous memory on Hopper" measures. Every kernel's output is
//! checked against the CPU (exactly: the kernels move, add integers or multiply once)
//! before it is timed.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::reference;
use super::HopperKernel as K;
use crate::harness::counters::{Case, Quantity};
use crate::harness::inputs::random_f32;
use crate::harness::kernels::KernelName;
use crate::harness::kernels::KernelTable;
use crate::harness::launch::{self, Args, L2Access, L2Limits, L2Window};
use crate::harness::timing::Plan;
use crate::harness::verify::check_exact;
use crate::harness::{FullQuick, Gpu, Run, Stats, L2};

/// MiB of the streamed array (read once, written once) in the cp.async and L2 sections.
pub const STREAM_MIB: FullQuick<u64> = FullQuick::new(512, 8);
/// MiB of the lookup table that fits the persisting part of L2 (capped by the device).
pub const LOOKUP_MIB: FullQuick<u64> = FullQuick::new(24, 2);

const MIB: usize = 1 << 20;

/// The chapter's sections; `--section` picks some (default: all).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Section {
    /// Barriers of a block, a cluster and the grid; a kernel boundary; a graph node.
    Ladder,
    /// The L2 access-policy window on a table looked up while a stream flows past, and on
    /// a table read again after a stream.
    L2,
    /// All-reduces in a cluster through distributed shared memory or through L2.
    Dsmem,
    /// cp.async with 1 to 4 stages: bytes in flight against bandwidth.
    Stages,
    /// The TMA: tiled copy and transpose, beside the padded-tile transpose.
    Tma,
    /// FP32 matrix multiply with 2 to 4 cp.async stages, beside step 6 and cuBLAS.
    Sgemm,
}

/// The sizes of one run.
#[derive(Debug, Clone)]
pub struct Settings {
    pub sections: Vec<Section>,
    pub stream_mib: u64,
    pub lookup_mib: u64,
    /// Matrix sides of the TMA section (square matrices).
    pub sides: Vec<usize>,
}

/// One rung of the synchronisation ladder: the cost of one barrier (or boundary).
#[derive(Debug, Clone)]
pub struct Rung {
    pub what: String,
    pub who: String,
    /// Milliseconds per barrier.
    pub per: Stats,
    pub how: String,
}

/// One run of the lookup workload.
#[derive(Debug, Clone)]
pub struct LookupRun {
    pub table_bytes: usize,
    pub window: Option<L2Window>,
    pub time: Stats,
}

/// One all-reduce measurement: cluster size, path, milliseconds per round.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub cluster: u32,
    pub dsmem: bool,
    pub per_round: Stats,
}

/// One streaming run: stages, blocks of 128 threads per SM, time.
#[derive(Debug, Clone)]
pub struct StageRun {
    pub stages: u32,
    pub blocks_per_sm: u32,
    pub time: Stats,
}

/// One copy or transpose of a square matrix.
#[derive(Debug, Clone)]
pub struct MatrixRun {
    pub side: usize,
    pub kernel: &'static str,
    pub pitch: usize,
    /// The time, or why the kernel could not run with this layout.
    pub time: Result<Stats, String>,
}

/// Registers and instructions of a kernel.
#[derive(Debug, Clone)]
pub struct KernelCode {
    pub kernel: &'static str,
    pub registers: i32,
    pub sass: Option<crate::harness::sass::Function>,
}

/// Everything the chapter's tables and figures are drawn from.
#[derive(Default)]
pub struct Results {
    pub ladder: Vec<Rung>,
    pub lookups: Vec<LookupRun>,
    pub l2_limits: Option<L2Limits>,
    /// The table read, streamed past and read again ([`super::l2`]), and its stream's
    /// bytes (read once, written once).
    pub rereads: Vec<super::l2::RereadRun>,
    pub reread_stream_bytes: usize,
    pub stream_bytes: usize,
    pub exchanges: Vec<Exchange>,
    pub exchange_rounds: u32,
    pub stages: Vec<StageRun>,
    pub matrices: Vec<MatrixRun>,
    pub code: Vec<KernelCode>,
    /// The error a shape the device refuses produced (the cluster check's demonstration).
    pub refused_cluster: Option<String>,
    /// Cluster sizes the device refused for a kernel, and why (not measured).
    pub skipped: Vec<String>,
    /// The matrix multiplies timed, the sizes only checked, and the kernels' code.
    pub sgemm: Vec<super::sgemm::SgemmRun>,
    pub sgemm_checked: Vec<(usize, usize, usize)>,
    pub sgemm_code: Vec<super::sgemm::SgemmCode>,
}

/// Whether the device runs clusters of `cluster` blocks of `f` with `cfg`; if not, the
/// reason goes into `skipped` and the size is left out of the measurement.
fn cluster_runs(
    gpu: &Gpu,
    f: &cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    cluster: u32,
    skipped: &mut Vec<String>,
) -> bool {
    match launch::max_active_clusters(gpu, f, cfg, (cluster, 1, 1)) {
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

/// Measures the chosen sections.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let table = KernelTable::<K>::load(gpu)?;
    let mut r = Results::default();
    let reps = run.reps();
    for &section in &settings.sections {
        match section {
            Section::Ladder => ladder(run, &table, &mut r)?,
            Section::L2 => {
                l2(run, &table, settings, &mut r)?;
                super::l2::reread(run, &table, &mut r)?;
            }
            Section::Dsmem => dsmem(run, &table, &mut r)?,
            Section::Stages => stages(gpu, &table, settings, reps, run.seed, &mut r)?,
            Section::Tma => tma(gpu, &table, settings, reps, run.seed, &mut r)?,
            Section::Sgemm => super::sgemm::measure(run, &mut r)?,
        }
    }
    Ok(r)
}

fn cfg(grid: u32, block: u32, shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: shared,
    }
}

/// Verifies that `launch(iters)` leaves `errors` all zero at `lo` and `2 lo` rounds, then
/// times both: the cost of one barrier is the difference over the `2 lo` extra barriers
/// (two per round), so the launch itself cancels out.
fn per_barrier(
    gpu: &Gpu,
    blocks: usize,
    lo: i32,
    plan: Plan,
    mut launch: impl FnMut(&Arc<CudaStream>, i32, &mut CudaSlice<u32>) -> anyhow::Result<()>,
    name: &str,
) -> anyhow::Result<Stats> {
    let mut errors = gpu.stream.alloc_zeros::<u32>(blocks)?;
    let zeros = vec![0u32; blocks];
    let mut times = Vec::new();
    for iters in [lo, 2 * lo] {
        let v = gpu.verify_then_time_output(
            &mut errors,
            |s, e| launch(s, iters, e),
            |got| check_exact(name, &format!("{iters} rounds"), got, &zeros),
            &[plan],
        )?;
        times.push(v.time().clone());
    }
    let (short, long) = (&times[0], &times[1]);
    let barriers = 2.0 * lo as f64;
    let per = |ms: f64| (ms - short.median_ms) / barriers;
    Ok(Stats {
        median_ms: per(long.median_ms),
        min_ms: per(long.min_ms),
        max_ms: per(long.max_ms),
        mean_ms: per(long.mean_ms),
        reps: long.reps,
    })
}

fn ladder(run: &Run, table: &KernelTable<K>, r: &mut Results) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let sms = gpu.info.sms as u32;
    let plan = Plan::new(2, run.reps(), L2::Warm);
    let how = |lo: i32| format!("{lo} vs {} rounds of 2 barriers, difference", 2 * lo);
    let lo_block = if run.quick { 20 } else { 20_000 };
    for threads in [256u32, 1024] {
        let f = table.get(K::LadderBlock);
        let per = per_barrier(
            gpu,
            sms as usize,
            lo_block,
            plan,
            |s, iters, e| {
                // SAFETY: ladder_block(int iters, unsigned* errors[grid]).
                unsafe {
                    s.launch_builder(f)
                        .arg(&iters)
                        .arg(e)
                        .launch(cfg(sms, threads, 0))?
                };
                Ok(())
            },
            "ladder_block",
        )?;
        r.ladder.push(Rung {
            what: "__syncthreads".into(),
            who: format!("{threads} threads (one block)"),
            per,
            how: how(lo_block),
        });
    }
    let lo_cluster = if run.quick { 10 } else { 5_000 };
    for cluster in [2u32, 4, 8, 16] {
        let f = table.get(K::LadderCluster);
        let grid = sms / cluster * cluster;
        if !cluster_runs(gpu, f, cfg(grid, 256, 0), cluster, &mut r.skipped) {
            continue;
        }
        let per = per_barrier(
            gpu,
            grid as usize,
            lo_cluster,
            plan,
            |_, iters, e| {
                let args = Args::new().value(iters).buf_mut(e, gpu);
                // SAFETY: ladder_cluster(int iters, unsigned* errors[grid]).
                unsafe {
                    launch::launch_cluster(
                        gpu,
                        f,
                        cfg(grid, 256, 0),
                        (cluster, 1, 1),
                        args,
                    )
                }
            },
            "ladder_cluster",
        )?;
        r.ladder.push(Rung {
            what: "cluster barrier".into(),
            who: format!("{cluster} blocks of 256 threads"),
            per,
            how: how(lo_cluster),
        });
    }
    // A shape the device must refuse: the wrapper says so instead of launching.
    let f = table.get(K::LadderCluster);
    r.refused_cluster =
        launch::max_active_clusters(gpu, f, cfg(sms / 32 * 32, 256, 0), (32, 1, 1))
            .err()
            .map(|e| e.to_string());

    let lo_grid = if run.quick { 4 } else { 500 };
    let f = table.get(K::LadderGrid);
    let capacity = launch::cooperative_capacity(gpu, f, 256, 0)? as u32;
    for grid in [sms, capacity] {
        let mut bar = gpu.stream.alloc_zeros::<u32>(2)?;
        let mut slots = gpu.stream.alloc_zeros::<u32>(grid as usize)?;
        let per = per_barrier(
            gpu,
            grid as usize,
            lo_grid,
            plan,
            |_, iters, e| {
                let args = Args::new()
                    .value(iters)
                    .buf_mut(&mut bar, gpu)
                    .buf_mut(&mut slots, gpu)
                    .buf_mut(e, gpu);
                // SAFETY: ladder_grid(int iters, unsigned* bar[2], slots[grid], errors[grid]).
                unsafe { launch::launch_cooperative(gpu, f, cfg(grid, 256, 0), args) }
            },
            "ladder_grid",
        )?;
        r.ladder.push(Rung {
            what: "grid barrier".into(),
            who: format!("{grid} blocks of 256 threads ({} per SM)", grid / sms),
            per,
            how: how(lo_grid),
        });
    }

    // The rungs above a barrier: the ceilings chapter's own measurement of a launch.
    let batch = if run.quick { 10 } else { 1000 };
    let launches = crate::ceilings::measure::measure_launch(gpu, plan, batch)?;
    let per_launch = format!("events around {batch} empty kernels");
    r.ladder.push(Rung {
        what: "kernel boundary".into(),
        who: "the whole GPU (next launch on one stream)".into(),
        per: launches.back_to_back,
        how: per_launch.clone(),
    });
    r.ladder.push(Rung {
        what: "CUDA graph node".into(),
        who: "the whole GPU (next node of one graph)".into(),
        per: launches.graph_node,
        how: per_launch,
    });
    Ok(())
}

fn l2(
    run: &Run,
    table: &KernelTable<K>,
    settings: &Settings,
    r: &mut Results,
) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let limits = L2Limits::query(gpu)?;
    r.l2_limits = Some(limits);
    let stream_bytes = settings.stream_mib as usize * MIB;
    r.stream_bytes = stream_bytes;
    let n = stream_bytes / 4;
    let n4 = n / 4;
    let stream_host = random_f32(n, run.seed);
    let stream = gpu.stream.clone_htod(&stream_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
    // A table that fits the persisting carve-out, and one twice the size of L2.
    let fits = (settings.lookup_mib as usize * MIB).min(limits.max_persisting);
    let big = 2 * gpu.info.l2_bytes;
    let f = table.get(K::Lookup);
    let plan = Plan::new(2, run.reps(), L2::Warm);
    for table_bytes in [fits, big] {
        let len = table_bytes / 4;
        let table_host = random_f32(len, run.seed + 1);
        let want = reference::lookup(&table_host, &stream_host);
        let lookups = gpu.stream.clone_htod(&table_host)?;
        let window_bytes = table_bytes.min(limits.max_window);
        let persisting = limits.max_persisting;
        let ratio = (persisting as f64 / window_bytes as f64).min(1.0) as f32;
        let window = L2Window {
            bytes: window_bytes,
            hit_ratio: ratio,
            hit: L2Access::Persisting,
            persisting,
        };
        for with_window in [false, true] {
            let guard =
                if with_window { Some(gpu.l2_window(&lookups, window)?) } else { None };
            let label = format!(
                "l2_lookup, table {} MiB, {}",
                table_bytes / MIB,
                if with_window { "persisting window" } else { "no window" }
            );
            // The model: the stream is read and written once; the table costs nothing.
            gpu.count_next(
                Case::new(label.clone())
                    .predict(Quantity::DramBytes, 2.0 * stream_bytes as f64),
            );
            let grid = n4.div_ceil(256) as u32;
            let len32 = len as u32;
            let n4i = n4 as i64;
            let v = gpu.verify_then_time_output(
                &mut out,
                |s, o| {
                    // SAFETY: l2_lookup(table, table_len, stream, out, n4).
                    unsafe {
                        s.launch_builder(f)
                            .arg(&lookups)
                            .arg(&len32)
                            .arg(&stream)
                            .arg(o)
                            .arg(&n4i)
                            .launch(cfg(grid, 256, 0))?
                    };
                    Ok(())
                },
                |got| check_exact("l2_lookup", &label, got, &want),
                &[plan],
            )?;
            if let Some(g) = guard {
                g.reset()?;
            }
            r.lookups.push(LookupRun {
                table_bytes,
                window: with_window.then_some(window),
                time: v.time().clone(),
            });
        }
    }
    Ok(())
}

fn dsmem(run: &Run, table: &KernelTable<K>, r: &mut Results) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let sms = gpu.info.sms as u32;
    let per_block = 4099usize; // not a multiple of the block: the loop's tail runs
    let lo: u32 = if run.quick { 4 } else { 2_000 };
    r.exchange_rounds = lo;
    let plan = Plan::new(2, run.reps(), L2::Warm);
    for cluster in [2u32, 4, 8, 16] {
        let grid = sms / cluster * cluster;
        let fs = [table.get(K::ExchangeDsmem), table.get(K::ExchangeGlobal)];
        if !fs
            .iter()
            .all(|f| cluster_runs(gpu, f, cfg(grid, 256, 0), cluster, &mut r.skipped))
        {
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
            let mut times = Vec::new();
            for rounds in [lo, 2 * lo] {
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
                        unsafe {
                            launch::launch_cluster(
                                gpu,
                                f,
                                cfg(grid, 256, 0),
                                (cluster, 1, 1),
                                args,
                            )
                        }
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
                times.push(v.time().clone());
            }
            let (short, long) = (&times[0], &times[1]);
            let per = |ms: f64| (ms - short.median_ms) / lo as f64;
            r.exchanges.push(Exchange {
                cluster,
                dsmem,
                per_round: Stats {
                    median_ms: per(long.median_ms),
                    min_ms: per(long.min_ms),
                    max_ms: per(long.max_ms),
                    mean_ms: per(long.mean_ms),
                    reps: long.reps,
                },
            });
        }
    }
    Ok(())
}

fn stages(
    gpu: &Gpu,
    table: &KernelTable<K>,
    settings: &Settings,
    reps: usize,
    seed: u64,
    r: &mut Results,
) -> anyhow::Result<()> {
    let bytes = settings.stream_mib as usize * MIB;
    // Not a multiple of the grid: the last grid-stride round is partial.
    let n = bytes / 4 - 4 * 1000;
    let n4 = n / 4;
    r.stream_bytes = bytes;
    let host = random_f32(n, seed + 7);
    let a = 1.5f32;
    let want: Vec<f32> = host.iter().map(|x| a * x).collect();
    let input = gpu.stream.clone_htod(&host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
    let plan = Plan::new(2, reps, L2::Cold);
    let sms = gpu.info.sms as u32;
    for (stages, k) in
        [(1u32, K::Stages1), (2, K::Stages2), (3, K::Stages3), (4, K::Stages4)]
    {
        let f = table.get(k);
        for blocks_per_sm in [1u32, 2, 4, 8] {
            let shared = stages * 128 * 16;
            let grid = sms * blocks_per_sm;
            let n4i = n4 as i64;
            if stages == 2 && blocks_per_sm == 2 {
                gpu.count_next(
                    Case::new(format!(
                        "stream_cp_async_{stages}, {blocks_per_sm} blocks per SM"
                    ))
                    .predict(Quantity::DramBytes, 2.0 * (n * 4) as f64),
                );
            }
            let v = gpu.verify_then_time_output(
                &mut out,
                |s, o| {
                    // SAFETY: stream_cp_async_S(in, out, n4, a); shared = S * 128 * 16.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&input)
                            .arg(o)
                            .arg(&n4i)
                            .arg(&a)
                            .launch(cfg(grid, 128, shared))?
                    };
                    Ok(())
                },
                |got| check_exact(&k.function(), &format!("{n} floats"), got, &want),
                &[plan],
            )?;
            r.stages.push(StageRun { stages, blocks_per_sm, time: v.time().clone() });
        }
    }
    Ok(())
}

fn tma(
    gpu: &Gpu,
    table: &KernelTable<K>,
    settings: &Settings,
    reps: usize,
    seed: u64,
    r: &mut Results,
) -> anyhow::Result<()> {
    let plan = Plan::new(2, reps, L2::Cold);
    let largest = settings.sides.iter().copied().max().unwrap_or(0);
    for &side in &settings.sides {
        let pitched = reference::round_up(side, 32);
        // Allocated once at the largest pitch; each layout uses its own pitch.
        let len = side * pitched;
        let dense = random_f32(side * side, seed + side as u64);
        let want_t = reference::transpose(&dense, side, side);
        let mut layouts: Vec<(&'static str, usize)> = Vec::new();
        for (kernel, pitch) in [
            ("copy_pitched", pitched),
            ("tma_copy", pitched),
            ("tma_copy", side),
            ("transpose_padded", side),
            ("transpose_padded", pitched),
            ("tma_transpose", pitched),
            ("tma_transpose", side),
        ] {
            if !layouts.contains(&(kernel, pitch)) {
                layouts.push((kernel, pitch));
            }
        }
        for (kernel, pitch) in layouts {
            let mut host = vec![0f32; len];
            for row in 0..side {
                host[row * pitch..row * pitch + side]
                    .copy_from_slice(&dense[row * side..][..side]);
            }
            let input = gpu.stream.clone_htod(&host)?;
            let mut out = gpu.stream.alloc_zeros::<f32>(len)?;
            let transposes = kernel.contains("transpose");
            let want = if transposes { &want_t } else { &dense };
            let grid = side.div_ceil(32) as u32;
            let c2 = |block: (u32, u32, u32)| LaunchConfig {
                grid_dim: (grid, grid, 1),
                block_dim: block,
                shared_mem_bytes: 0,
            };
            let (si, pi) = (side as i32, pitch as i32);
            let k = match kernel {
                "copy_pitched" => K::CopyPitched,
                "tma_copy" => K::TmaCopy,
                "transpose_padded" => K::TransposePadded,
                _ => K::TmaTranspose,
            };
            // The maps: a pitch that is not a multiple of 16 bytes is refused here.
            let maps = if kernel.starts_with("tma") {
                match super::tma::maps(
                    gpu,
                    k,
                    &input,
                    &out,
                    (side, side),
                    (pitch, pitch),
                ) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        r.matrices.push(MatrixRun {
                            side,
                            kernel,
                            pitch,
                            time: Err(e.to_string()),
                        });
                        continue;
                    }
                }
            } else {
                None
            };
            let label = format!("{kernel}, side {side}, pitch {pitch}");
            if side == largest && pitch == pitched && transposes {
                // Padded tile: no conflicts. Swizzled tile: each warp's column read of a
                // 32 x 32 tile hits 8 banks 4 times (3 extra wavefronts), 4 reads per warp,
                // 8 warps per tile; its row writes are conflict-free.
                let tiles = (grid as f64) * (grid as f64);
                let conflicts =
                    if kernel == "tma_transpose" { 96.0 * tiles } else { 0.0 };
                gpu.count_next(
                    Case::new(label.clone())
                        .predict(Quantity::DramBytes, 2.0 * (side * side * 4) as f64)
                        .predict(Quantity::BankConflicts, conflicts),
                );
            }
            let f = table.get(k);
            let v = gpu.verify_then_time_output(
                &mut out,
                |s, o| {
                    match (k, &maps) {
                        (K::TmaCopy | K::TmaTranspose, Some(maps)) => {
                            // `o` is written through the map `dst`, encoded over it.
                            super::tma::launch(s, table, k, maps, (side, side))?;
                        }
                        (K::TransposePadded, _) => {
                            // SAFETY: transpose_padded(in, out, rows, cols, in_pitch, out_pitch).
                            unsafe {
                                s.launch_builder(f)
                                    .arg(&input)
                                    .arg(o)
                                    .arg(&si)
                                    .arg(&si)
                                    .arg(&pi)
                                    .arg(&pi)
                                    .launch(c2((32, 8, 1)))?
                            };
                        }
                        _ => {
                            // SAFETY: copy_pitched(in, out, rows, cols, pitch).
                            unsafe {
                                s.launch_builder(f)
                                    .arg(&input)
                                    .arg(o)
                                    .arg(&si)
                                    .arg(&si)
                                    .arg(&pi)
                                    .launch(c2((32, 8, 1)))?
                            };
                        }
                    }
                    Ok(())
                },
                |got| {
                    let dense_got = reference::unpitch(got, side, side, pitch);
                    check_exact(kernel, &label, &dense_got, want)
                },
                &[plan],
            )?;
            r.matrices.push(MatrixRun {
                side,
                kernel,
                pitch,
                time: Ok(v.time().clone()),
            });
        }
    }
    // What each kernel is made of: registers from the driver, instructions from SASS.
    let tools = crate::harness::sass::Tools::find();
    let sass = match &tools {
        Some(t) => Some(t.disassemble(table.ptx("hopper_tma.cu"), "sm_90")?),
        None => None,
    };
    for k in [K::CopyPitched, K::TmaCopy, K::TransposePadded, K::TmaTranspose] {
        r.code.push(KernelCode {
            kernel: match k {
                K::CopyPitched => "copy_pitched",
                K::TmaCopy => "tma_copy",
                K::TransposePadded => "transpose_padded",
                _ => "tma_transpose",
            },
            registers: table.get(k).num_regs()?,
            sass: sass.as_ref().and_then(|s| s.function(&k.function()).cloned()),
        });
    }
    Ok(())
}
