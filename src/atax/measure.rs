//! Verify, then time: every kernel variant and every host strategy computes y for fresh random
//! inputs (outputs poisoned first), is compared with the CPU reference, and only then timed.

use std::sync::Arc;

use cudarc::driver::sys::{CUdeviceptr, CUmemLocation, CUmemLocationType};
use cudarc::driver::{CudaSlice, CudaStream, PinnedHostSlice, UnifiedSlice};

use crate::harness::timing::Plan;
use crate::harness::verify::{self, Report};
use crate::harness::{Gpu, Stats, L2};

use super::datasets::{bytes_moved, Dataset};
use super::device::{address, Element, Kernels, TmpKernel, YKernel};
use super::reference::{self, Reference};

/// The largest managed allocation the chapter makes: asking for more managed memory than the
/// card has free can hang it, so the unified-memory strategies stop here.
pub const UNIFIED_CAP_BYTES: usize = 2 << 30;

/// Row chunks (and streams) of the streamed strategies, as in the slides.
pub const STREAMS: usize = 4;

/// The plans every measurement runs under.
#[derive(Debug, Clone, Copy)]
pub struct Plans {
    /// The chapter's number: median of many, L2 warm.
    pub warm: Plan,
    /// The same, L2 flushed before each repetition.
    pub cold: Plan,
    /// The slides' method: one warm-up, five runs, their mean.
    pub slides: Plan,
}

impl Plans {
    pub fn new(reps: usize) -> Self {
        Self {
            warm: Plan::new(3, reps, L2::Warm),
            cold: Plan::new(3, reps, L2::Cold),
            slides: Plan::new(1, 5, L2::Warm),
        }
    }
}

/// One way of computing y on data already in device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KernelVariant {
    /// The slides' two kernels: thread per row (uncoalesced), thread per column.
    Baseline,
    /// The baseline with x in `__constant__` memory.
    XConst,
    /// Transpose A, then a coalesced kernel 1 on Aᵀ and the baseline kernel 2.
    TransposeThenTwoKernels,
    /// The same with Aᵀ already made: the two kernels alone.
    PreTransposed,
    /// Warp per row for kernel 1, thread per column for kernel 2.
    WarpPerRow,
    /// Both kernels with shared-memory tiles.
    Tiled,
    /// One pass over A, then the reduction of the blocks' partial y.
    Fused,
    /// cuBLAS, two gemv calls.
    Cublas,
}

impl KernelVariant {
    pub const ALL: [KernelVariant; 8] = [
        Self::Baseline,
        Self::XConst,
        Self::TransposeThenTwoKernels,
        Self::PreTransposed,
        Self::WarpPerRow,
        Self::Tiled,
        Self::Fused,
        Self::Cublas,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::Baseline => "baseline",
            Self::XConst => "x in constant",
            Self::TransposeThenTwoKernels => "transpose + kernels",
            Self::PreTransposed => "pre-transposed",
            Self::WarpPerRow => "warp per row",
            Self::Tiled => "tiled",
            Self::Fused => "fused",
            Self::Cublas => "cuBLAS gemv ×2",
        }
    }

    /// Times the variant must move A between device memory and the SMs: the transpose reads
    /// and writes it once more.
    pub fn passes_over_a(self) -> u64 {
        match self {
            Self::Fused => 1,
            Self::TransposeThenTwoKernels => 4,
            _ => 2,
        }
    }

    /// Why this variant cannot run at `n` columns of `T`, if it cannot.
    pub fn unsupported<T: Element>(self, n: usize) -> Option<String> {
        match self {
            Self::XConst if n > T::X_CONST_CAPACITY => Some(format!(
                "x needs {} bytes; __constant__ memory holds 64 KB ({} {}s)",
                n * T::BYTES,
                T::X_CONST_CAPACITY,
                T::C_NAME
            )),
            Self::Fused
                if super::device::fused_shape(n, T::FUSED_COLUMNS_PER_THREAD)
                    .is_none() =>
            {
                let most = 1024
                    * T::FUSED_COLUMNS_PER_THREAD.last().copied().unwrap_or(1) as usize;
                Some(format!("the fused kernel keeps a row in registers: at most {most} {} columns", T::C_NAME))
            }
            _ => None,
        }
    }
}

/// A problem on the host: inputs and the reference result.
pub struct HostProblem<T: Element> {
    pub d: Dataset,
    pub a: Vec<T>,
    pub x: Vec<T>,
    pub reference: Reference,
}

impl<T: Element> HostProblem<T> {
    pub fn new(d: Dataset, seed: u64) -> Self {
        let a = T::random(d.m * d.n, seed);
        let x = T::random(d.n, seed ^ 0x5EED);
        let reference = reference::atax(&a, &x, d.m, d.n);
        Self { d, a, x, reference }
    }

    /// Compares a downloaded y with the reference.
    pub fn check(&self, what: &str, y: &[T]) -> anyhow::Result<Report> {
        let tol = self.reference.tolerance(T::EPS, self.d.m, self.d.n);
        let name = format!("{what} ({})", T::C_NAME);
        Ok(verify::check_close(&name, &self.d.label(), y, &self.reference.y, tol)?)
    }
}

/// The device buffers of one problem.
pub struct DeviceProblem<T: Element> {
    pub a: CudaSlice<T>,
    pub at: CudaSlice<T>,
    pub x: CudaSlice<T>,
    pub tmp: CudaSlice<T>,
    pub y: CudaSlice<T>,
    pub partials: CudaSlice<T>,
    /// Blocks of the fused kernel (rows of `partials`); 0 when no instance covers n.
    pub fused_blocks: u32,
}

impl<T: Element> DeviceProblem<T> {
    pub fn upload(
        gpu: &Gpu,
        k: &Kernels<T>,
        p: &HostProblem<T>,
    ) -> anyhow::Result<Self> {
        let (m, n) = (p.d.m, p.d.n);
        let fused_blocks =
            if k.fused_shape(n).is_some() { k.fused_blocks(m, n)? } else { 0 };
        // The streamed fused pipeline gives each of its STREAMS chunks at least one row.
        let partial_rows = (fused_blocks as usize).max(STREAMS);
        let bytes = (2 * m * n + 2 * n + m + partial_rows * n) * T::BYTES;
        gpu.ensure_fits(bytes, &format!("ATAX at {} ({})", p.d.label(), T::C_NAME))?;
        Ok(Self {
            a: gpu.stream.clone_htod(&p.a)?,
            at: gpu.stream.alloc_zeros(m * n)?,
            x: gpu.stream.clone_htod(&p.x)?,
            tmp: gpu.stream.alloc_zeros(m.max(1))?,
            y: gpu.stream.alloc_zeros(n)?,
            partials: gpu.stream.alloc_zeros((partial_rows * n).max(1))?,
            fused_blocks,
        })
    }
}

// ANCHOR: enqueue_variant
/// Enqueues one kernel variant on `s`: y = Aᵀ(A·x) from the buffers of `dev`.
pub fn enqueue_variant<T: Element>(
    k: &Kernels<T>,
    s: &Arc<CudaStream>,
    v: KernelVariant,
    dev: &DeviceProblem<T>,
    (m, n): (usize, usize),
) -> anyhow::Result<()> {
    let [a, at, x, tmp, y, partials] =
        [&dev.a, &dev.at, &dev.x, &dev.tmp, &dev.y, &dev.partials]
            .map(|b| address(b, s));
    // SAFETY: DeviceProblem::upload sized every buffer for (m, n) and fused_blocks.
    unsafe {
        match v {
            KernelVariant::Baseline => {
                k.launch_tmp(s, TmpKernel::ThreadPerRow, a, x, tmp, (m, n))?;
                k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))
            }
            KernelVariant::XConst => {
                k.launch_tmp(s, TmpKernel::ThreadPerRowXConst, a, x, tmp, (m, n))?;
                k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))
            }
            KernelVariant::TransposeThenTwoKernels | KernelVariant::PreTransposed => {
                if v == KernelVariant::TransposeThenTwoKernels {
                    k.launch_transpose(s, a, at, (m, n))?;
                }
                k.launch_tmp(s, TmpKernel::FromTransposed, at, x, tmp, (m, n))?;
                k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))
            }
            KernelVariant::WarpPerRow => {
                k.launch_tmp(s, TmpKernel::WarpPerRow, a, x, tmp, (m, n))?;
                k.launch_y(s, YKernel::ThreadPerCol, a, tmp, y, (m, n))
            }
            KernelVariant::Tiled => {
                k.launch_tmp(s, TmpKernel::TileShared, a, x, tmp, (m, n))?;
                k.launch_y(s, YKernel::TileShared, a, tmp, y, (m, n))
            }
            KernelVariant::Fused => {
                k.launch_fused(s, a, x, partials, (m, n), dev.fused_blocks)?;
                k.launch_reduce_partials(s, partials, y, dev.fused_blocks, n)
            }
            KernelVariant::Cublas => k.launch_cublas(s, a, x, tmp, y, (m, n)),
        }
    }
}
// ANCHOR_END: enqueue_variant

/// One kernel variant, verified and (when plans were given) timed.
#[derive(Debug, Clone)]
pub struct KernelResult {
    pub d: Dataset,
    pub elem: &'static str,
    pub variant: KernelVariant,
    pub check: Report,
    /// `(warm, cold, slides' method)`.
    pub times: Option<(Stats, Stats, Stats)>,
    /// Least bytes moved (see [`bytes_moved`]).
    pub bytes: u64,
}

/// A variant that could not run at a size, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub d: Dataset,
    pub elem: &'static str,
    pub what: &'static str,
    pub why: String,
}

/// Verifies every kernel variant on `p` and times it under `plans` if given.
pub fn measure_kernels<T: Element>(
    gpu: &Gpu,
    k: &Kernels<T>,
    p: &HostProblem<T>,
    plans: Option<Plans>,
) -> anyhow::Result<(Vec<KernelResult>, Vec<Skipped>)> {
    let mut dev = DeviceProblem::upload(gpu, k, p)?;
    let mn = (p.d.m, p.d.n);
    let (mut results, mut skipped) = (Vec::new(), Vec::new());
    for v in KernelVariant::ALL {
        if let Some(why) = v.unsupported::<T>(p.d.n) {
            skipped.push(Skipped { d: p.d, elem: T::C_NAME, what: v.name(), why });
            continue;
        }
        if v == KernelVariant::XConst {
            k.upload_x_const(&gpu.stream, &p.x)?;
        }
        // Correct before fast: poison every output (Aᵀ too, for the variant that makes it).
        gpu.poison(&mut dev.y)?;
        gpu.poison(&mut dev.tmp)?;
        gpu.poison(&mut dev.partials)?;
        if v == KernelVariant::TransposeThenTwoKernels {
            gpu.poison(&mut dev.at)?;
        }
        enqueue_variant(k, &gpu.stream, v, &dev, mn)?;
        let check = p.check(v.name(), &gpu.stream.clone_dtoh(&dev.y)?)?;
        let times = match plans {
            Some(plans) => {
                let run = |plan| gpu.time(plan, |s| enqueue_variant(k, s, v, &dev, mn));
                Some((run(plans.warm)?, run(plans.cold)?, run(plans.slides)?))
            }
            None => None,
        };
        results.push(KernelResult {
            d: p.d,
            elem: T::C_NAME,
            variant: v,
            check,
            times,
            bytes: bytes_moved(p.d, T::BYTES, v.passes_over_a()),
        });
    }
    Ok((results, skipped))
}

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
    unsafe {
        cudarc::driver::result::mem_prefetch_async(
            ptr,
            bytes.max(1),
            location,
            s.cu_stream(),
        )?
    };
    Ok(())
}

impl<T: Element> EndToEnd<'_, T> {
    fn elem_offset(ptr: CUdeviceptr, elems: usize) -> CUdeviceptr {
        ptr + (elems * T::BYTES) as CUdeviceptr
    }

    // ANCHOR: enqueue_streamed
    /// Enqueues the streamed pipeline on `s` and the chunk streams: x first, then for each row
    /// chunk its copy and its kernel on the chunk's stream; `s` waits for every chunk, then
    /// finishes y and copies it back.
    fn enqueue_streamed(
        &mut self,
        s: &Arc<CudaStream>,
        a_host: &[T],
        y_host: &mut [T],
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
                cs.memcpy_htod(&a_host[r0 * n..r1 * n], &mut chunk)?;
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
                None => self.k.launch_reduce_partials(
                    s,
                    partials,
                    y,
                    self.chunk_partial_rows(blocks_per_chunk),
                    n,
                )?,
            }
        }
        s.memcpy_dtoh(&self.dev.y, y_host)?;
        Ok(())
    }
    // ANCHOR_END: enqueue_streamed

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
        a_pinned: &[T],
        y_pinned: &mut [T],
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
                s.memcpy_htod(a_pinned, &mut self.dev.a)?;
                let x_pinned = self.pinned_x.as_slice()?;
                s.memcpy_htod(x_pinned, &mut self.dev.x)?;
                let v = if strategy == Strategy::PinnedFused {
                    KernelVariant::Fused
                } else {
                    KernelVariant::Baseline
                };
                enqueue_variant(k, s, v, &self.dev, (m, n))?;
                s.memcpy_dtoh(&self.dev.y, y_pinned)?;
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
                s.memcpy_dtoh(&u.y, y_pinned)?;
            }
            Strategy::StreamsThreadPerRow => self.enqueue_streamed(
                s,
                a_pinned,
                y_pinned,
                Some(TmpKernel::ThreadPerRow),
            )?,
            Strategy::StreamsWarpPerRow => self.enqueue_streamed(
                s,
                a_pinned,
                y_pinned,
                Some(TmpKernel::WarpPerRow),
            )?,
            Strategy::StreamsFused => {
                self.enqueue_streamed(s, a_pinned, y_pinned, None)?
            }
        }
        Ok(())
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
    let pinned_y = unsafe { gpu.ctx.alloc_pinned_with_flags::<T>(n, 0)? };
    let (free, _) = gpu.ctx.mem_get_info()?;
    let unified_bytes = a_bytes + (2 * n + m) * T::BYTES;
    let unified = if unified_bytes <= UNIFIED_CAP_BYTES && 2 * unified_bytes < free {
        // SAFETY: every element is written below (A, x) or by the kernels (tmp, y) before it is read.
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
    let mut pinned_y = pinned_y;
    // The pinned buffers' host views, taken once: a view taken inside the timed work would wait
    // for the previous repetition's copy and put that wait inside the timing.
    let a_host = pinned_a.as_slice()?;
    let y_host = pinned_y.as_mut_slice()?;
    let mut e2e = EndToEnd {
        gpu,
        k,
        p,
        dev,
        pinned_x,
        pageable_y: vec![T::default(); n],
        unified,
        streams,
    };

    let (mut results, mut skipped) = (Vec::new(), Vec::new());
    for strategy in Strategy::ALL {
        if strategy.uses_unified() && e2e.unified.is_none() {
            let why = format!("A is {:.2} GiB; managed memory is capped at {:.0} GiB and half the free memory", a_bytes as f64 / (1u64 << 30) as f64, UNIFIED_CAP_BYTES as f64 / (1u64 << 30) as f64);
            skipped.push(Skipped {
                d: p.d,
                elem: T::C_NAME,
                what: strategy.name(),
                why,
            });
            continue;
        }
        if strategy.uses_fused() {
            if let Some(why) = KernelVariant::Fused.unsupported::<T>(n) {
                skipped.push(Skipped {
                    d: p.d,
                    elem: T::C_NAME,
                    what: strategy.name(),
                    why,
                });
                continue;
            }
            e2e.zero_unused_partials()?;
        }
        {
            // Poison: NaN in the device y and in both host copies of y.
            gpu.poison(&mut e2e.dev.y)?;
            if let Some(u) = &mut e2e.unified {
                gpu.poison(&mut u.y)?;
            }
            gpu.stream.synchronize()?;
            y_host.fill(f64_nan::<T>());
            e2e.pageable_y.fill(f64_nan::<T>());
            e2e.unified_to_host()?;
            let s = gpu.stream.clone();
            e2e.enqueue(&s, strategy, a_host, y_host)?;
            s.synchronize()?;
            let got: &[T] = if strategy == Strategy::PageableBaseline
                || strategy == Strategy::PageableTiled
            {
                &e2e.pageable_y
            } else {
                &*y_host
            };
            let check = p.check(strategy.name(), got)?;
            let times = match plans {
                None => None,
                Some(plans) => {
                    let mut run = |plan: Plan| -> anyhow::Result<Stats> {
                        if !strategy.uses_unified() {
                            return gpu.time(plan, |s| {
                                e2e.enqueue(s, strategy, a_host, y_host)
                            });
                        }
                        // Each repetition starts with A on the host, as in a fresh run.
                        let mut samples = Vec::with_capacity(plan.reps);
                        for rep in 0..plan.warmup + plan.reps {
                            e2e.unified_to_host()?;
                            let one = gpu.time(Plan::new(0, 1, plan.l2), |s| {
                                e2e.enqueue(s, strategy, a_host, y_host)
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
                check,
                times,
            });
        }
    }
    for s in &e2e.streams {
        s.synchronize()?;
    }
    Ok((results, skipped))
}

/// A NaN of type T (the host-side poison).
fn f64_nan<T: Element>() -> T {
    // SAFETY: all-ones bytes are a NaN for f32 and f64, the only Element types.
    unsafe { std::mem::transmute_copy::<[u8; 8], T>(&[0xFF; 8]) }
}

/// Host↔device ceilings for A's size, measured with the chapter's ceilings functions.
pub fn a_transfer_ms(
    gpu: &Gpu,
    bytes: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<(Stats, Stats)> {
    use crate::harness::ceiling::{measure_transfer, Direction, HostMemory};
    let pinned = measure_transfer(
        gpu,
        bytes.max(1),
        Direction::HostToDevice,
        HostMemory::Pinned,
        plan,
        seed,
    )?;
    let pageable = measure_transfer(
        gpu,
        bytes.max(1),
        Direction::HostToDevice,
        HostMemory::Pageable,
        plan,
        seed + 1,
    )?;
    Ok((pinned, pageable))
}
