//! What the chapter "Measuring a GPU" measures: device copy bandwidth from 1 MiB up (L2 warm
//! and cold, our kernel and `cuMemcpyDtoD`), host↔device bandwidth (pageable and pinned), and
//! what an empty launch costs, measured four ways.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaStream, LaunchConfig};

use super::args::Settings;
use super::peaks::{measure_fma, measure_l2_read, Peak, FMA_ITERS, L2_PASSES};
use crate::harness::ceiling::{self, CeilingKernel, CopyKernel, Direction, HostMemory};
use crate::harness::counters::{Case, Quantity};
use crate::harness::fit::{self, usable_bytes, Fit};
use crate::harness::kernels::KernelTable;
use crate::harness::timing::Plan;
use crate::harness::{Gpu, Run, Stats, UsageError, L2};

const MIB: usize = 1 << 20;

/// Everything the chapter's figures and tables are drawn from.
pub struct Results {
    /// Per copy size and L2 state: our kernel and `cuMemcpyDtoD`.
    pub copies: Vec<(L2, ceiling::CopyResult)>,
    /// The grid-stride copy kernel at the largest size, L2 cold.
    pub grid_stride: Stats,
    /// Per transfer name (`H2D pinned`, ...) and size.
    pub transfers: Vec<(String, usize, Stats)>,
    pub launch: LaunchCosts,
    /// Empty kernels per timed batch.
    pub batch: usize,
    /// FP32 and FP64 multiply-add rates and the L2's read rate inside one launch.
    pub peaks: Peaks,
    /// The largest copy in MiB: `--ceiling-mib`, or its default lowered to fit this GPU.
    pub ceiling_mib: Fit,
}

/// The ceilings a roofline needs beside device memory's.
#[derive(Debug, Clone)]
pub struct Peaks {
    pub fp32: Peak,
    pub fp64: Peak,
    pub l2: Peak,
    /// Bytes of the L2-resident buffer and passes over it per launch.
    pub l2_bytes: usize,
    pub l2_passes: u32,
    /// Multiply-add steps per chain and thread.
    pub fma_iters: u32,
}

impl Results {
    /// The largest cold copy: device memory's ceiling.
    pub fn dram(&self) -> &ceiling::CopyResult {
        &self.copies.iter().rev().find(|(l2, _)| *l2 == L2::Cold).expect("one size").1
    }

    /// The warm copy size with the highest median bandwidth: the L2-resident ceiling.
    pub fn best_l2(&self) -> &ceiling::CopyResult {
        let warm = self.copies.iter().filter(|(l2, _)| *l2 == L2::Warm).map(|(_, r)| r);
        warm.fold(None::<&ceiling::CopyResult>, |best, r| match best {
            Some(b) if b.kernel_gbps().median >= r.kernel_gbps().median => Some(b),
            _ => Some(r),
        })
        .expect("one size")
    }

    /// The largest transfer of each kind, by name.
    pub fn largest_transfers(&self) -> BTreeMap<&str, (usize, &Stats)> {
        let mut largest = BTreeMap::new();
        for (name, bytes, s) in &self.transfers {
            largest.insert(name.as_str(), (*bytes, s));
        }
        largest
    }
}

/// 1 MiB, 1.5 MiB, 2 MiB, 3 MiB, ... up to `max_mib`: half-steps resolve the fall at the L2 size.
pub fn copy_sizes(max_mib: u64) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut s = 1usize;
    while (s as u64) <= max_mib {
        sizes.push(s * MIB);
        if ((s * 3 / 2) as u64) <= max_mib && s >= 2 {
            sizes.push(s * 3 / 2 * MIB);
        }
        s *= 2;
    }
    sizes
}

/// The largest copy measures device memory, not the L2, only when its buffers are this many
/// times the L2 at least.
pub const BEYOND_L2: u64 = 8;

/// The largest copy of a run, in MiB: `wanted` (`--ceiling-mib` or its default) if source and
/// destination fit in the `free` bytes of a GPU with `l2_bytes` of L2; a default that does not
/// is lowered to the largest size of the sweep that does, if that is still [`BEYOND_L2`] times
/// the L2 (a `--quick` run has no such floor); one the reader `given` is refused.
pub fn fit_ceiling_mib(
    wanted: u64,
    given: bool,
    quick: bool,
    free: u64,
    l2_bytes: u64,
) -> Result<Fit, UsageError> {
    let steps: Vec<u64> =
        copy_sizes(wanted).iter().map(|&b| (b / MIB) as u64).collect();
    let floor = if quick { 1 } else { (BEYOND_L2 * l2_bytes).div_ceil(MIB as u64) };
    let both = |mib: u64| 2 * mib * MIB as u64;
    fit::fit(
        "--ceiling-mib",
        wanted,
        given,
        &steps,
        both,
        floor,
        usable_bytes(free, l2_bytes),
    )
}

/// Measures (verifying every copy and transfer first) everything the chapter shows.
pub fn measure(run: &Run, settings: &Settings) -> anyhow::Result<Results> {
    let gpu = run.gpu();
    let reps = run.reps();
    let (free, _) = gpu.ctx.mem_get_info()?;
    let ceiling_mib = fit_ceiling_mib(
        settings.ceiling_mib,
        run.gave("ceiling_mib"),
        run.quick,
        free as u64,
        gpu.info.l2_bytes as u64,
    )?;
    if ceiling_mib.scaled() {
        println!("{}", scaled_note(&ceiling_mib, free as u64));
    }
    let copy_sizes = copy_sizes(ceiling_mib.chosen);
    let transfer_sizes: Vec<usize> = (0..)
        .map(|k| MIB << (2 * k))
        .take_while(|s| *s <= settings.max_transfer_mib as usize * MIB)
        .collect();
    let bar = run.progress(copy_sizes.len() * 2 + transfer_sizes.len() * 4 + 2);

    let copy = CopyKernel::load(gpu)?;
    let mut copies = Vec::new();
    let largest = *copy_sizes.last().expect("one size");
    for &bytes in &copy_sizes {
        for l2 in [L2::Warm, L2::Cold] {
            bar.set_message(format!("copy {} MiB, L2 {l2}", bytes / MIB));
            if bytes == largest && l2 == L2::Cold {
                gpu.count_next(copy_case("copy_f32", bytes));
            }
            let plan = Plan::new(3, reps, l2);
            copies
                .push((l2, ceiling::measure_copy(gpu, &copy, bytes, plan, run.seed)?));
            bar.inc(1);
        }
    }
    let grid_stride = measure_grid_stride(run, &copy, largest)?;

    let mut transfers = Vec::new();
    for &bytes in &transfer_sizes {
        for dir in [Direction::HostToDevice, Direction::DeviceToHost] {
            for host in [HostMemory::Pageable, HostMemory::Pinned] {
                let name = format!(
                    "{} {}",
                    if dir == Direction::HostToDevice { "H2D" } else { "D2H" },
                    if host == HostMemory::Pinned { "pinned" } else { "pageable" }
                );
                bar.set_message(format!("{name} {} MiB", bytes / MIB));
                let plan = Plan::new(2, reps.min(20), L2::Warm);
                let s =
                    ceiling::measure_transfer(gpu, bytes, dir, host, plan, run.seed)?;
                transfers.push((name, bytes, s));
                bar.inc(1);
            }
        }
    }

    bar.set_message("launch cost");
    let batch = if run.quick { 100 } else { 1000 };
    let launch = measure_launch(gpu, Plan::new(3, reps, L2::Warm), batch)?;
    bar.inc(1);

    bar.set_message("FP32, FP64 and L2 ceilings");
    let table = KernelTable::<CeilingKernel>::load(gpu)?;
    let warm = Plan::new(2, reps, L2::Warm);
    let fma_iters = run.pick(None, FMA_ITERS);
    let fp32 = measure_fma(gpu, &table, false, fma_iters, warm)?;
    let fp64 = measure_fma(gpu, &table, true, fma_iters, warm)?;
    // A quarter of L2: resident in both of its halves, far from its capacity.
    let l2_bytes = (gpu.info.l2_bytes / 4) / 16 * 16;
    let l2_passes = run.pick(None, L2_PASSES);
    let l2 = measure_l2_read(gpu, &table, l2_bytes, l2_passes, warm, run.seed)?;
    bar.finish_and_clear();
    let peaks = Peaks { fp32, fp64, l2, l2_bytes, l2_passes, fma_iters };
    Ok(Results { copies, grid_stride, transfers, launch, batch, peaks, ceiling_mib })
}

/// The line a run prints, and its records keep, when the copy sweep was lowered to fit.
pub fn scaled_note(fit: &Fit, free: u64) -> String {
    format!(
        "note: copies up to {} MiB instead of {} MiB: source and destination of {} MiB do \
         not fit in the {} free on this GPU (--ceiling-mib sets the size)",
        fit.chosen,
        fit.wanted,
        fit.wanted,
        fit::gib(free)
    )
}

/// A copy of `bytes` as a counted case: every byte read once and written once, each warp
/// access 512 contiguous bytes (16 sectors of 32 bytes per request).
fn copy_case(kernel: &str, bytes: usize) -> Case {
    Case::new(format!("{kernel}, {} MiB", bytes / MIB))
        .predict(Quantity::DramBytes, 2.0 * bytes as f64)
        .predict(Quantity::LoadSectorsPerRequest, 16.0)
        .predict(Quantity::StoreSectorsPerRequest, 16.0)
}

/// Verifies, then times, the grid-stride copy kernel on `bytes` bytes, under the plan of
/// the cold copies it is compared with.
fn measure_grid_stride(
    run: &Run,
    copy: &CopyKernel,
    bytes: usize,
) -> anyhow::Result<Stats> {
    let (gpu, plan) = (run.gpu(), Plan::new(3, run.reps(), L2::Cold));
    let n = bytes / 4;
    let host = crate::harness::inputs::random_f32(n, run.seed);
    let src = gpu.stream.clone_htod(&host)?;
    let mut dst = gpu.stream.alloc_zeros::<f32>(n)?;
    gpu.count_next(copy_case("copy_f32_grid_stride", bytes));
    let size = format!("{bytes} bytes");
    let v = gpu.verify_then_time_output(
        &mut dst,
        |s, dst| copy.launch_as(CeilingKernel::CopyGridStride, s, &src, dst, n),
        |got| {
            crate::harness::verify::check_exact(
                "copy_f32_grid_stride",
                &size,
                got,
                &host,
            )
        },
        &[plan],
    )?;
    Ok(v.time().clone())
}

/// What one empty kernel costs, measured four ways (all in milliseconds per launch).
#[derive(Debug, Clone)]
pub struct LaunchCosts {
    /// GPU time per launch when launches are queued back to back (events around a batch).
    pub back_to_back: Stats,
    /// CPU time of the launch call itself (host clock around a batch, no synchronisation).
    pub host_call: Stats,
    /// One launch followed by a stream synchronisation, on the host clock: the round trip.
    pub round_trip: Stats,
    /// GPU time per node of a CUDA graph holding `batch` empty kernels.
    pub graph_node: Stats,
}

// ANCHOR: measure_launch
/// Measures launch costs with `batch` empty kernels per repetition.
pub fn measure_launch(
    gpu: &Gpu,
    plan: Plan,
    batch: usize,
) -> anyhow::Result<LaunchCosts> {
    let table = KernelTable::<CeilingKernel>::load(gpu)?;
    let empty = table.get(CeilingKernel::Empty);
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch = |s: &Arc<CudaStream>| -> anyhow::Result<()> {
        // SAFETY: empty() takes no parameters.
        unsafe { s.launch_builder(empty).launch(one)? };
        Ok(())
    };
    let back_to_back = gpu.time_batched(plan, batch, launch)?;

    let mut host_call = Vec::with_capacity(plan.reps);
    let mut round_trip = Vec::with_capacity(plan.reps);
    for _ in 0..plan.warmup {
        launch(&gpu.stream)?;
    }
    gpu.stream.synchronize()?;
    for _ in 0..plan.reps {
        let t = Instant::now();
        for _ in 0..batch {
            launch(&gpu.stream)?;
        }
        host_call.push(t.elapsed().as_secs_f64() * 1e3 / batch as f64);
        gpu.stream.synchronize()?;
        let t = Instant::now();
        launch(&gpu.stream)?;
        gpu.stream.synchronize()?;
        round_trip.push(t.elapsed().as_secs_f64() * 1e3);
    }

    // The same batch captured once into a graph, then replayed: one launch call
    // for `batch` nodes.
    gpu.stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    for _ in 0..batch {
        launch(&gpu.stream)?;
    }
    let graph = gpu
        .stream
        .end_capture(CUgraphInstantiate_flags(0))?
        .ok_or_else(|| anyhow::anyhow!("stream capture produced no graph"))?;
    let whole = gpu.time(plan, |_| Ok(graph.launch()?))?;
    let graph_node = whole.per(batch);

    let summary =
        |v: &[f64]| Stats::from_samples(v).ok_or_else(|| anyhow::anyhow!("no samples"));
    Ok(LaunchCosts {
        back_to_back,
        host_call: summary(&host_call)?,
        round_trip: summary(&round_trip)?,
        graph_node,
    })
}
// ANCHOR_END: measure_launch

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::fit::cards;

    #[test]
    fn the_copy_sweep_fits_8_16_24_and_80_gb_cards() {
        let defaults = Settings::with_defaults(false);
        let mut chosen = Vec::new();
        for (name, free, l2) in cards::ALL {
            let f =
                fit_ceiling_mib(defaults.ceiling_mib, false, false, free, l2).unwrap();
            // Source and destination fit beside the flush buffer and the reserve, and are
            // still far beyond the L2.
            assert!(
                2 * f.chosen * MIB as u64 <= usable_bytes(free, l2),
                "{name}: {f:?}"
            );
            assert!(f.chosen * MIB as u64 >= BEYOND_L2 * l2, "{name}: {f:?}");
            assert!(copy_sizes(f.chosen).last() == Some(&(f.chosen as usize * MIB)));
            let quick = Settings::with_defaults(true).ceiling_mib;
            assert!(!fit_ceiling_mib(quick, false, true, free, l2).unwrap().scaled());
            chosen.push(f.chosen);
        }
        assert_eq!(chosen, [3072, 4096, 4096, 4096]);
        let (_, free, l2) = cards::GB8;
        let note =
            scaled_note(&fit_ceiling_mib(4096, false, false, free, l2).unwrap(), free);
        assert_eq!(
            note,
            "note: copies up to 3072 MiB instead of 4096 MiB: source and destination of \
             4096 MiB do not fit in the 7.62 GiB free on this GPU (--ceiling-mib sets the \
             size)"
        );
    }

    #[test]
    fn a_ceiling_the_reader_gave_is_refused_where_it_does_not_fit() {
        let (_, free, l2) = cards::GB8;
        let e = fit_ceiling_mib(4096, true, false, free, l2).unwrap_err().0;
        assert!(e.starts_with("--ceiling-mib 4096 needs 8.00 GiB"), "{e}");
        assert!(e.ends_with("--ceiling-mib 3072 fits"), "{e}");
        assert_eq!(fit_ceiling_mib(2048, true, false, free, l2).unwrap().chosen, 2048);
        // A card too small for copies eight times its L2 is refused, not measured in L2.
        let e = fit_ceiling_mib(4096, false, false, 700 << 20, 40 << 20).unwrap_err().0;
        assert!(e.starts_with("--ceiling-mib: even 320, the smallest"), "{e}");
    }
}
