//! The L2 window where it pays: a table read, a stream that pushes everything out of L2,
//! and the table read again (`l2_reread`), at table sizes on both sides of the
//! persisting carve-out, without a window and with one over the table.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::measure::Results;
use super::reference;
use super::HopperKernel as K;
use crate::harness::counters::{Case, Quantity};
use crate::harness::inputs::random_f32;
use crate::harness::kernels::KernelTable;
use crate::harness::launch::{L2Access, L2Limits, L2Window};
use crate::harness::timing::Plan;
use crate::harness::verify::check_exact;
use crate::harness::{FullQuick, Run, Stats, L2};

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

/// One run of `l2_reread`: the table's size, the window over it (if any), the time.
#[derive(Debug, Clone)]
pub struct RereadRun {
    pub table_bytes: usize,
    pub window: Option<L2Window>,
    pub time: Stats,
}

/// The windows a table of `bytes` is run with: none; the carve-out's share of the table
/// (hit ratio 1 when the table fits); and, for a table larger than the carve-out, the
/// whole table marked persisting anyway (hit ratio 1).
pub fn windows(bytes: usize, limits: L2Limits) -> Vec<Option<L2Window>> {
    let persisting = limits.max_persisting;
    let window = |hit_ratio: f32| L2Window {
        bytes: bytes.min(limits.max_window),
        hit_ratio,
        hit: L2Access::Persisting,
        persisting,
    };
    let share = (persisting as f64 / bytes as f64).min(1.0) as f32;
    let mut out = vec![None, Some(window(share))];
    if share < 1.0 {
        out.push(Some(window(1.0)));
    }
    out
}

/// Verifies, then times, `l2_reread` at every table size of the sweep, without and with
/// windows; each window is reset (persisting lines back to normal, carve-out 0) before the
/// next run.
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
    let n4s = stream_bytes / 16;
    let stream_host: Vec<u32> =
        random_f32(4 * n4s, run.seed + 11).iter().map(|x| x.to_bits()).collect();
    let stream = gpu.stream.clone_htod(&stream_host)?;
    let blocks = gpu.info.sms as usize * BLOCKS_PER_SM;
    let mut out = gpu.stream.alloc_zeros::<u32>(4 * n4s + blocks)?;
    let f = table.get(K::Reread);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (THREADS as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    // Back to back: each repetition finds L2 as the last one left it.
    let plan = Plan::new(2, run.reps(), L2::Warm);
    for mib in table_mibs(run.quick) {
        let table_bytes = mib * MIB - 48;
        let n4t = table_bytes / 16;
        let words: Vec<u32> = random_f32(4 * n4t, run.seed + 12 + mib as u64)
            .iter()
            .map(|x| x.to_bits())
            .collect();
        let want = reference::reread(&words, &stream_host, blocks, THREADS);
        let lookups = gpu.stream.clone_htod(&words)?;
        for window in windows(table_bytes, limits) {
            let guard = match window {
                Some(w) => Some(gpu.l2_window(&lookups, w)?),
                None => None,
            };
            let label = format!("l2_reread, table {mib} MiB, {}", describe(window));
            if COUNTED_MIB.contains(&mib) {
                // Under ncu L2 starts cold: both passes would read the table from device
                // memory; the model says the window spares the second pass the bytes the
                // carve-out can hold of the share it marks persisting.
                let kept = window.map_or(0.0, |w| {
                    (w.hit_ratio as f64 * table_bytes as f64).min(w.persisting as f64)
                });
                let dram = 2.0 * (table_bytes + stream_bytes) as f64 - kept;
                gpu.count_next(
                    Case::new(label.clone()).predict(Quantity::DramBytes, dram),
                );
            }
            let (n4t_i, n4s_i) = (n4t as i64, n4s as i64);
            let v = gpu.verify_then_time_output(
                &mut out,
                |s, o| {
                    // SAFETY: l2_reread(table, n4t, in, out, n4s); out holds 4 n4s words
                    // of stream and one word per block.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&lookups)
                            .arg(&n4t_i)
                            .arg(&stream)
                            .arg(o)
                            .arg(&n4s_i)
                            .launch(cfg)?
                    };
                    Ok(())
                },
                |got| check_exact("l2_reread", &label, got, &want),
                &[plan],
            )?;
            if let Some(g) = guard {
                g.reset()?;
            }
            r.rereads.push(RereadRun { table_bytes, window, time: v.time().clone() });
        }
    }
    Ok(())
}

/// A window in words: "no window" or "persisting, hit ratio 0.65".
pub fn describe(window: Option<L2Window>) -> String {
    match window {
        None => "no window".into(),
        Some(w) => format!("persisting window, hit ratio {:.2}", w.hit_ratio),
    }
}
