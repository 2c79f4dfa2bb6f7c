//! The host strategies: how A gets to the GPU and y back (pageable, pinned or managed memory,
//! one copy or row chunks on four streams) and which kernels run in between, each verified
//! against the CPU reference, then timed end to end.

use std::sync::Arc;

use cudarc::driver::sys::{CUdeviceptr, CUmemLocation, CUmemLocationType};
use cudarc::driver::{CudaStream, PinnedHostSlice, UnifiedSlice};

use super::kernels::{enqueue_variant, DeviceProblem, HostProblem, KernelVariant};
use super::{Plans, Skipped, STREAMS};
use crate::atax::datasets::Dataset;
use crate::atax::device::{Kernels, TmpKernel, YKernel};
use crate::atax::element::{address, Element};
use crate::harness::timing::Plan;
use crate::harness::verify::Report;
use crate::harness::{Gpu, Stats};

/// The largest managed allocation the chapter makes: asking for more managed memory than the
/// card has free can hang it, so the unified-memory strategies stop here.
pub const UNIFIED_CAP_BYTES: usize = 2 << 30;

/// How the data gets to the GPU and y back, and which kernels run in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The slides' first version: ordinary (pageable) host memory, baseline kernels.
    PageableBaseline,
    /// Pinned host memory, baseline kernels.
    PinnedBaseline,
    /// Managed memory that starts on the host; pages move on the kernels' faults.
    Unified,
    /// Managed memory prefetched to the device before the kernels (inside the timing).
    UnifiedPrefetch,
    /// Pinned A in row chunks on four streams, each chunk's copy overlapping the previous
    /// chunk's kernel 1; the baseline (uncoalesced) kernel 1.
    StreamsThreadPerRow,
    /// The same pipeline with the coalesced warp-per-row kernel 1.
    StreamsWarpPerRow,
    /// Pageable memory, tiled kernels.
    PageableTiled,
    /// Pinned memory, the fused kernel after the whole copy.
    PinnedFused,
    /// Pinned A in row chunks on four streams, the fused kernel on each chunk.
    StreamsFused,
}

impl Strategy {
    pub const ALL: [Strategy; 9] = [
        Self::PageableBaseline,
        Self::PinnedBaseline,
        Self::Unified,
        Self::UnifiedPrefetch,
        Self::StreamsThreadPerRow,
        Self::StreamsWarpPerRow,
        Self::PageableTiled,
        Self::PinnedFused,
        Self::StreamsFused,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::PageableBaseline => "pageable, baseline",
            Self::PinnedBaseline => "pinned, baseline",
            Self::Unified => "unified, no prefetch",
            Self::UnifiedPrefetch => "unified, prefetch",
            Self::StreamsThreadPerRow => "streams, thread per row",
            Self::StreamsWarpPerRow => "streams, warp per row",
            Self::PageableTiled => "pageable, tiled",
            Self::PinnedFused => "pinned, fused",
            Self::StreamsFused => "streams, fused",
        }
    }

    /// Whether the strategy copies from pinned host memory (and so pays for pinning once).
    pub fn pins_host_memory(self) -> bool {
        matches!(
            self,
            Self::PinnedBaseline
                | Self::StreamsThreadPerRow
                | Self::StreamsWarpPerRow
                | Self::PinnedFused
                | Self::StreamsFused
        )
    }

    fn uses_unified(self) -> bool {
        matches!(self, Self::Unified | Self::UnifiedPrefetch)
    }

    fn uses_fused(self) -> bool {
        matches!(self, Self::PinnedFused | Self::StreamsFused)
    }
}

/// One host strategy, verified and (when plans were given) timed end to end.
#[derive(Debug, Clone)]
pub struct EndToEndResult {
    pub d: Dataset,
    pub elem: &'static str,
    pub strategy: Strategy,
    pub check: Report,
    /// `(median of many, slides' method)`; L2 is whatever the copies left (warm).
    pub times: Option<(Stats, Stats)>,
}

/// Managed copies of the inputs and outputs.
struct UnifiedBuffers<T> {
    a: UnifiedSlice<T>,
    x: UnifiedSlice<T>,
    tmp: UnifiedSlice<T>,
    y: UnifiedSlice<T>,
}

/// Everything the host strategies use for one problem.
struct EndToEnd<'a, T: Element> {
    gpu: &'a Gpu,
    k: &'a Kernels<T>,
    p: &'a HostProblem<T>,
    dev: DeviceProblem<T>,
    /// Host views of the pinned A and y, taken once: a view taken inside the timed work would
    /// wait for the previous repetition's copy and put that wait inside the timing.
    a_host: &'a [T],
    y_host: &'a mut [T],
    pinned_x: PinnedHostSlice<T>,
    pageable_y: Vec<T>,
    unified: Option<UnifiedBuffers<T>>,
    streams: Vec<Arc<CudaStream>>,
}

/// Moves managed memory to the device (`to_device`) or to the host, on `s`.
fn prefetch(
    s: &CudaStream,
    ptr: CUdeviceptr,
    bytes: usize,
    to_device: bool,
    ordinal: i32,
) -> anyhow::Result<()> {
    let location = if to_device {
        CUmemLocation {
            type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal,
        }
    } else {
        CUmemLocation { type_: CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST, id: 0 }
    };
    // SAFETY: ptr and bytes describe a managed allocation alive for the call's duration.
    crate::harness::toolchain::prefetch_managed(ptr, bytes.max(1), location, s)
        .map_err(anyhow::Error::msg)
}

impl<T: Element> EndToEnd<'_, T> {
    fn elem_offset(ptr: CUdeviceptr, elems: usize) -> CUdeviceptr {
        ptr + (elems * T::BYTES) as CUdeviceptr
    }

    /// Enqueues the streamed pipeline on `s` and the chunk streams: x first, then for each row
    /// chunk its copy and its kernel on the chunk's stream; `s` waits for every chunk, then
    /// finishes y and copies it back.
    fn enqueue_streamed(
        &mut self,
        s: &Arc<CudaStream>,
        chunk_kernel: Option<TmpKernel>,
    ) -> anyhow::Result<()> {
        let (m, n) = (self.p.d.m, self.p.d.n);
        let ctx = &self.gpu.ctx;
        s.memcpy_htod(&self.p.x, &mut self.dev.x)?;
        let fork = ctx.new_event(None)?;
        fork.record(s)?;
        let blocks_per_chunk = (self.dev.fused_blocks / STREAMS as u32).max(1);
        let [a, x, tmp, partials] =
            [&self.dev.a, &self.dev.x, &self.dev.tmp, &self.dev.partials]
                .map(|b| address(b, s));
        let mut joins = Vec::with_capacity(STREAMS);
        for c in 0..STREAMS {
            let (r0, r1) = (c * m / STREAMS, (c + 1) * m / STREAMS);
            let cs = &self.streams[c];
            cs.wait(&fork)?; // x is on the device before any chunk's kernel reads it
            if r1 > r0 {
                let mut chunk = self.dev.a.slice_mut(r0 * n..r1 * n);
                cs.memcpy_htod(&self.a_host[r0 * n..r1 * n], &mut chunk)?;
                let a_chunk = Self::elem_offset(a, r0 * n);
                // SAFETY: the chunk's rows lie inside A and tmp; block ranges inside partials.
                unsafe {
                    match chunk_kernel {
                        Some(kernel) => self.k.launch_tmp(
                            cs,
                            kernel,
                            a_chunk,
                            x,
                            Self::elem_offset(tmp, r0),
                            (r1 - r0, n),
                        )?,
                        None => {
                            let part = Self::elem_offset(
                                partials,
                                c * blocks_per_chunk as usize * n,
                            );
                            self.k.launch_fused(
                                cs,
                                a_chunk,
                                x,
                                part,
                                (r1 - r0, n),
                                blocks_per_chunk.min((r1 - r0) as u32),
                            )?;
                        }
                    }
                }
            }
            let done = ctx.new_event(None)?;
            done.record(cs)?;
            joins.push(done);
        }
        for done in &joins {
            s.wait(done)?; // y needs every chunk's tmp (or partial y)
        }
        let y = address(&self.dev.y, s);
        // SAFETY: as above.
        unsafe {
            match chunk_kernel {
                Some(_) => {
                    self.k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))?
                }
                None => self.k.table.launch_reduce_partials(
                    s,
                    partials,
                    y,
                    self.chunk_partial_rows(blocks_per_chunk),
                    n,
                )?,
            }
        }
        s.memcpy_dtoh(&self.dev.y, &mut *self.y_host)?;
        Ok(())
    }

    /// Rows of `partials` the streamed fused pipeline fills: chunks with fewer rows than
    /// blocks launch one block per row and leave the rest of their rows unwritten, so those
    /// chunks get zeroed rows (see `zero_unused_partials`).
    fn chunk_partial_rows(&self, blocks_per_chunk: u32) -> u32 {
        blocks_per_chunk * STREAMS as u32
    }

    /// Zeroes the rows of `partials` the streamed fused pipeline does not write (outside timing).
    fn zero_unused_partials(&mut self) -> anyhow::Result<()> {
        let s = self.gpu.stream.clone();
        s.memset_zeros(&mut self.dev.partials)?;
        Ok(())
    }

    /// Enqueues `strategy` on `s`, leaving y in host memory.
    fn enqueue(
        &mut self,
        s: &Arc<CudaStream>,
        strategy: Strategy,
    ) -> anyhow::Result<()> {
        let (m, n) = (self.p.d.m, self.p.d.n);
        let k = self.k;
        match strategy {
            Strategy::PageableBaseline | Strategy::PageableTiled => {
                s.memcpy_htod(&self.p.a, &mut self.dev.a)?;
                s.memcpy_htod(&self.p.x, &mut self.dev.x)?;
                let [a, x, tmp, y] =
                    [&self.dev.a, &self.dev.x, &self.dev.tmp, &self.dev.y]
                        .map(|b| address(b, s));
                let (tk, yk) = if strategy == Strategy::PageableTiled {
                    (TmpKernel::TileShared, YKernel::TileShared)
                } else {
                    (TmpKernel::ThreadPerRow, YKernel::ThreadPerCol)
                };
                // SAFETY: DeviceProblem sized the buffers for (m, n).
                unsafe {
                    k.launch_tmp(s, tk, a, x, tmp, (m, n))?;
                    k.launch_y(s, yk, a, tmp, y, (m, n))?;
                }
                s.memcpy_dtoh(&self.dev.y, &mut self.pageable_y)?;
            }
            Strategy::PinnedBaseline | Strategy::PinnedFused => {
                s.memcpy_htod(self.a_host, &mut self.dev.a)?;
                let x_pinned = self.pinned_x.as_slice()?;
                s.memcpy_htod(x_pinned, &mut self.dev.x)?;
                let v = if strategy == Strategy::PinnedFused {
                    KernelVariant::Fused
                } else {
                    KernelVariant::Baseline
                };
                enqueue_variant(k, s, v, &self.dev, (m, n))?;
                s.memcpy_dtoh(&self.dev.y, &mut *self.y_host)?;
            }
            Strategy::Unified | Strategy::UnifiedPrefetch => {
                let u = self
                    .unified
                    .as_ref()
                    .expect("unified buffers exist when the strategy runs");
                let [a, x, tmp, y] = [&u.a, &u.x, &u.tmp, &u.y].map(|b| address(b, s));
                if strategy == Strategy::UnifiedPrefetch {
                    let ordinal = self.gpu.ctx.ordinal() as i32;
                    prefetch(s, a, m * n * T::BYTES, true, ordinal)?;
                    prefetch(s, x, n * T::BYTES, true, ordinal)?;
                }
                // SAFETY: the managed buffers hold m·n, n, m and n elements.
                unsafe {
                    k.launch_tmp(s, TmpKernel::ThreadPerRow, a, x, tmp, (m, n))?;
                    k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))?;
                }
                s.memcpy_dtoh(&u.y, &mut *self.y_host)?;
            }
            Strategy::StreamsThreadPerRow => {
                self.enqueue_streamed(s, Some(TmpKernel::ThreadPerRow))?
            }
            Strategy::StreamsWarpPerRow => {
                self.enqueue_streamed(s, Some(TmpKernel::WarpPerRow))?
            }
            Strategy::StreamsFused => self.enqueue_streamed(s, None)?,
        }
        Ok(())
    }

    /// The host y `strategy` leaves its result in.
    fn y(&self, strategy: Strategy) -> &[T] {
        match strategy {
            Strategy::PageableBaseline | Strategy::PageableTiled => &self.pageable_y,
            _ => &self.y_host[..],
        }
    }

    /// Poisons every y a strategy can write: NaN in the device y, the managed y and both host
    /// copies; and puts managed A and x back on the host.
    fn poison(&mut self) -> anyhow::Result<()> {
        let gpu = self.gpu;
        gpu.poison(&mut self.dev.y)?;
        if let Some(u) = &mut self.unified {
            gpu.poison(&mut u.y)?;
        }
        gpu.stream.synchronize()?;
        self.y_host.fill(nan::<T>());
        self.pageable_y.fill(nan::<T>());
        self.unified_to_host()
    }

    /// Puts managed A and x back on the host, as after the CPU wrote them (outside timing).
    fn unified_to_host(&self) -> anyhow::Result<()> {
        if let Some(u) = &self.unified {
            let s = &self.gpu.stream;
            prefetch(s, address(&u.a, s), u.a.num_bytes(), false, 0)?;
            prefetch(s, address(&u.x, s), u.x.num_bytes(), false, 0)?;
            s.synchronize()?;
        }
        Ok(())
    }
}

/// Verifies every host strategy on `p` and times it end to end under `plans` if given.
pub fn measure_end_to_end<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    p: &HostProblem<T>,
    plans: Option<Plans>,
) -> anyhow::Result<(Vec<EndToEndResult>, Vec<Skipped>)> {
    let (m, n) = (p.d.m, p.d.n);
    let a_bytes = m * n * T::BYTES;
    let dev = DeviceProblem::upload(gpu, k, p)?;
    // SAFETY (all three): written before they are read (A and x here, y by every strategy).
    let mut pinned_a = unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(m * n, 0)? };
    pinned_a.as_mut_slice()?.copy_from_slice(&p.a);
    let mut pinned_x = unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(n, 0)? };
    pinned_x.as_mut_slice()?.copy_from_slice(&p.x);
    let mut pinned_y = unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(n, 0)? };
    let (free, _) = gpu.ctx.mem_get_info()?;
    let unified_bytes = a_bytes + (2 * n + m) * T::BYTES;
    let unified = if unified_bytes <= UNIFIED_CAP_BYTES && 2 * unified_bytes < free {
        // SAFETY: every element is written below (A, x) or by the kernels (tmp, y) before it
        // is read.
        let mut a = unsafe { gpu.ctx.alloc_unified::<T>(m * n, true)? };
        a.as_mut_slice()?.copy_from_slice(&p.a);
        let mut x = unsafe { gpu.ctx.alloc_unified::<T>(n, true)? };
        x.as_mut_slice()?.copy_from_slice(&p.x);
        let tmp = unsafe { gpu.ctx.alloc_unified::<T>(m.max(1), true)? };
        let y = unsafe { gpu.ctx.alloc_unified::<T>(n, true)? };
        Some(UnifiedBuffers { a, x, tmp, y })
    } else {
        None
    };
    let streams =
        (0..STREAMS).map(|_| gpu.ctx.new_stream()).collect::<Result<Vec<_>, _>>()?;
    let mut e2e = EndToEnd {
        gpu,
        k,
        p,
        dev,
        a_host: pinned_a.as_slice()?,
        y_host: pinned_y.as_mut_slice()?,
        pinned_x,
        pageable_y: vec![T::default(); n],
        unified,
        streams,
    };

    let (mut results, mut skipped) = (Vec::new(), Vec::new());
    for strategy in Strategy::ALL {
        let why = if strategy.uses_unified() && e2e.unified.is_none() {
            Some(format!(
                "A is {:.2} GiB; managed memory is capped at {:.0} GiB and half the free \
                 memory",
                a_bytes as f64 / (1u64 << 30) as f64,
                UNIFIED_CAP_BYTES as f64 / (1u64 << 30) as f64
            ))
        } else if strategy.uses_fused() {
            KernelVariant::Fused.unsupported::<T>(n)
        } else {
            None
        };
        if let Some(why) = why {
            skipped.push(Skipped {
                d: p.d,
                elem: T::C_NAME,
                what: strategy.name(),
                why,
            });
            continue;
        }
        if strategy.uses_fused() {
            e2e.zero_unused_partials()?;
        }
        // Managed memory must start on the host at every repetition, outside the timing, so
        // those strategies are timed below, one repetition at a time.
        let timed_here = match plans {
            Some(plans) if !strategy.uses_unified() => vec![plans.warm, plans.slides],
            _ => Vec::new(),
        };
        let verified = gpu.verify_then_time(
            &mut e2e,
            |_, e2e| e2e.poison(),
            |s, e2e| e2e.enqueue(s, strategy),
            |_, e2e| p.check(strategy.name(), e2e.y(strategy)),
            &timed_here,
        )?;
        let times = match (plans, verified.times.as_slice()) {
            (None, _) => None,
            (Some(_), [median, slides]) => Some((median.clone(), slides.clone())),
            (Some(plans), _) => {
                let mut run = |plan: Plan| -> anyhow::Result<Stats> {
                    // Each repetition starts with A on the host, as in a fresh run.
                    let mut samples = Vec::with_capacity(plan.reps);
                    for rep in 0..plan.warmup + plan.reps {
                        e2e.unified_to_host()?;
                        let one = gpu.time(Plan::new(0, 1, plan.l2), |s| {
                            e2e.enqueue(s, strategy)
                        })?;
                        if rep >= plan.warmup {
                            samples.push(one.median_ms);
                        }
                    }
                    Stats::from_samples(&samples)
                        .ok_or_else(|| anyhow::anyhow!("no samples"))
                };
                Some((run(plans.warm)?, run(plans.slides)?))
            }
        };
        results.push(EndToEndResult {
            d: p.d,
            elem: T::C_NAME,
            strategy,
            check: verified.check,
            times,
        });
    }
    for s in &e2e.streams {
        s.synchronize()?;
    }
    Ok((results, skipped))
}

/// A NaN of type T (the host-side poison).
fn nan<T: Element>() -> T {
    // SAFETY: all-ones bytes are a NaN for f32 and f64, the only Element types.
    unsafe { std::mem::transmute_copy::<[u8; 8], T>(&[0xFF; 8]) }
}
