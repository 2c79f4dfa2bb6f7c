//! The L2 section: a table looked up while a stream flows past it, without and with a
//! persisting window; and where the window might pay: a table read, a stream that pushes
//! everything out of L2, and the table read again (`l2_reread`), in one kernel; and one
//! pass over the table after L2 was flushed between launches. Table sizes on both sides
//! of the persisting carve-out, without a window and with windows over the table.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};

use super::measure::{cfg, LookupRun, Results, Settings};
use super::reference;
use super::HopperKernel as K;
use crate::harness::counters::{Case, Quantity};
use crate::harness::inputs::random_f32;
use crate::harness::kernels::KernelTable;
use crate::harness::launch::{L2Access, L2Limits, L2Window};
use crate::harness::timing::Plan;
use crate::harness::verify::{check_exact, Mismatch, Report};
use crate::harness::{FullQuick, Gpu, Run, Stats, L2};

/// MiB of the stream between the table's two passes (read once and written once).
pub const REREAD_STREAM_MIB: FullQuick<u64> = FullQuick::new(64, 4);

const MIB: usize = 1 << 20;
/// Threads per block of `l2_reread`, and its blocks per SM (all resident at once).
const THREADS: usize = 256;
const BLOCKS_PER_SM: usize = 8;

/// Table sizes of the sweep, in MiB (each table is 48 bytes short of it, so no size is a
/// multiple of the grid's stride).
pub fn table_mibs(quick: bool) -> Vec<usize> {
    if quick {
        vec![1, 3]
    } else {
        vec![8, 16, 24, 30, 36, 48, 72, 100]
    }
}

/// The table sizes whose launches `--counters` counts (one inside the carve-out, one
/// beyond it).
const COUNTED_MIB: [usize; 2] = [24, 48];

/// The two uses of a table measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reuse {
    /// One kernel: the table, the stream, the table again; repetitions back to back.
    Fused,
    /// One pass over the table per launch, a buffer twice the L2 read between
    /// launches (outside the timed region): only persisting lines can survive it.
    AfterFlush,
}

impl Reuse {
    pub fn label(self) -> &'static str {
        match self {
            Reuse::Fused => "read, stream, read again",
            Reuse::AfterFlush => "one read after a flush",
        }
    }
}

/// One run of `l2_reread`: the use, the table's size, the window over it (if any), the
/// time.
#[derive(Debug, Clone)]
pub struct RereadRun {
    pub reuse: Reuse,
    pub table_bytes: usize,
    pub window: Option<L2Window>,
    pub time: Stats,
}

/// The lookup workload: a stream flows past a table looked up at every element, the
/// table once small enough for the persisting carve-out and once twice the size of L2,
/// each without and with a persisting window over it.
pub fn lookup(
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
            let time = windowed(
                gpu,
                &lookups,
                with_window.then_some(window),
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
                plan,
            )?;
            r.lookups.push(LookupRun {
                table_bytes,
                window: with_window.then_some(window),
                time,
            });
        }
    }
    Ok(())
}

/// Sets `window` (if any) over `table` on the timing stream, verifies `launch` (its
/// output checked by `check`) and times it under `plan`; then resets the window, so the
/// next run finds L2 as it was before.
fn windowed<T, U: DeviceRepr + Default + Clone + Unpin>(
    gpu: &Gpu,
    table: &CudaSlice<T>,
    window: Option<L2Window>,
    out: &mut CudaSlice<U>,
    launch: impl FnMut(&Arc<CudaStream>, &mut CudaSlice<U>) -> anyhow::Result<()>,
    check: impl FnOnce(&[U]) -> Result<Report, Mismatch>,
    plan: Plan,
) -> anyhow::Result<Stats> {
    let guard = match window {
        Some(w) => Some(gpu.l2_window(table, w)?),
        None => None,
    };
    let v = gpu.verify_then_time_output(out, launch, check, &[plan])?;
    if let Some(g) = guard {
        g.reset()?;
    }
    Ok(v.time().clone())
}

/// The windows a table of `bytes` is run with: none; the carve-out at its maximum with
/// its share of the table marked persisting (hit ratio 1 when the table fits); for a
/// table that fits, a carve-out of the table's size (whole MiB); for a larger table, the
/// whole table marked persisting anyway (hit ratio 1).
pub fn windows(bytes: usize, limits: L2Limits) -> Vec<Option<L2Window>> {
    let max = limits.max_persisting;
    let window = |hit_ratio: f32, persisting: usize| L2Window {
        bytes: bytes.min(limits.max_window),
        hit_ratio,
        hit: L2Access::Persisting,
        persisting,
    };
    let share = (max as f64 / bytes as f64).min(1.0) as f32;
    let mut out = vec![None, Some(window(share, max))];
    let sized = bytes.div_ceil(MIB) * MIB;
    if sized < max {
        out.push(Some(window(1.0, sized)));
    } else if share < 1.0 {
        out.push(Some(window(1.0, max)));
    }
    out
}

/// Verifies, then times, `l2_reread` in both uses at every table size of the sweep,
/// without and with windows; each window is reset (persisting lines back to normal,
/// carve-out 0) before the next run.
pub fn reread(
    run: &Run,
    table: &KernelTable<K>,
    r: &mut Results,
) -> anyhow::Result<()> {
    let gpu = run.gpu();
    let limits = L2Limits::query(gpu)?;
    r.l2_limits = Some(limits);
    let stream_bytes = REREAD_STREAM_MIB.pick(run.quick) as usize * MIB - 5 * 16;
    r.reread_stream_bytes = stream_bytes;
    let blocks = gpu.info.sms as usize * BLOCKS_PER_SM;
    let f = table.get(K::Reread);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    for reuse in [Reuse::Fused, Reuse::AfterFlush] {
        let (n4s, twice, l2) = match reuse {
            Reuse::Fused => (stream_bytes / 16, 1i32, L2::Warm),
            Reuse::AfterFlush => (0, 0, L2::Cold),
        };
        let stream_host: Vec<u32> =
            random_f32(4 * n4s, run.seed + 11).iter().map(|x| x.to_bits()).collect();
        // A buffer of no bytes cannot be allocated: after a flush the kernel gets one
        // uint4 it never reads.
        let padded = if n4s == 0 { vec![0u32; 4] } else { stream_host.clone() };
        let stream = gpu.stream.clone_htod(&padded)?;
        let mut out = gpu.stream.alloc_zeros::<u32>(4 * n4s + blocks)?;
        let plan = Plan::new(2, run.reps(), l2);
        for mib in table_mibs(run.quick) {
            let table_bytes = mib * MIB - 48;
            let n4t = table_bytes / 16;
            let seed = run.seed + 12 + mib as u64;
            let words: Vec<u32> =
                random_f32(4 * n4t, seed).iter().map(|x| x.to_bits()).collect();
            let shape = (blocks, THREADS);
            let want = reference::reread(&words, &stream_host, shape, twice != 0);
            let lookups = gpu.stream.clone_htod(&words)?;
            for window in windows(table_bytes, limits) {
                let label = format!(
                    "l2_reread, {}, table {mib} MiB, {}",
                    reuse.label(),
                    describe(window)
                );
                if COUNTED_MIB.contains(&mib) && (reuse == Reuse::Fused || mib == 24) {
                    gpu.count_next(Case::new(label.clone()).predict(
                        Quantity::DramBytes,
                        dram_model(reuse, table_bytes, 16 * n4s, window),
                    ));
                }
                let (n4t_i, n4s_i) = (n4t as i64, n4s as i64);
                let time = windowed(
                    gpu,
                    &lookups,
                    window,
                    &mut out,
                    |s, o| {
                        // SAFETY: l2_reread(table, n4t, in, out, n4s, twice); out holds
                        // 4 n4s words of stream and one word per block.
                        unsafe {
                            s.launch_builder(f)
                                .arg(&lookups)
                                .arg(&n4t_i)
                                .arg(&stream)
                                .arg(o)
                                .arg(&n4s_i)
                                .arg(&twice)
                                .launch(cfg)?
                        };
                        Ok(())
                    },
                    |got| check_exact("l2_reread", &label, got, &want),
                    plan,
                )?;
                r.rereads.push(RereadRun { reuse, table_bytes, window, time });
            }
        }
    }
    Ok(())
}

/// Device-memory bytes the model predicts for one counted launch (ncu starts each with
/// a cold L2): the stream read and written; the table read once per pass, less what the
/// window keeps for the second pass — the share it marks persisting, at most the
/// carve-out. After a flush the one pass reads the whole table (ncu's flush, like ours,
/// is assumed to spare nothing).
fn dram_model(reuse: Reuse, table: usize, stream: usize, w: Option<L2Window>) -> f64 {
    match reuse {
        Reuse::AfterFlush => table as f64,
        Reuse::Fused => {
            let kept = w.map_or(0.0, |w| {
                (w.hit_ratio as f64 * table as f64).min(w.persisting as f64)
            });
            2.0 * (table + stream) as f64 - kept
        }
    }
}

/// A window in words: "no window" or "persisting window, hit ratio 0.65, carve-out
/// 31.2 MiB".
pub fn describe(window: Option<L2Window>) -> String {
    match window {
        None => "no window".into(),
        Some(w) => format!(
            "persisting window, hit ratio {:.2}, carve-out {:.1} MiB",
            w.hit_ratio,
            w.persisting as f64 / MIB as f64
        ),
    }
}
