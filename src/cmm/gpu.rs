//! Running the CMM kernels: choose a kernel, check its preconditions, launch it, verify the
//! whole table against the CPU, time it.

use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{
    CudaFunction, CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use super::dp::{gpu_safe_bound, gpu_safe_bound_u32, validate_dims, DpTable};
use super::layout::{Layout, MAX_N_FOR_I32_INDEX};
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::timing::Plan;
use crate::harness::{Gpu, Mismatch, Stats, UsageError, Verified};

/// Width of the costs a kernel stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CostWidth {
    U64,
    U32,
}

crate::kernel_names! {
    /// The `extern "C"` functions of `kernels/cmm_rowmajor.cu`, `cmm_diagonal.cu`,
    /// `cmm_cell_per_thread.cu` and `cmm_block_per_cell.cu`.
    pub enum CmmKernel {
        in "cmm_rowmajor.cu" {
            RowMajorOneBlockU64 => "cmm_rowmajor_oneblock_u64",
            RowMajorOneBlockU32 => "cmm_rowmajor_oneblock_u32",
        }
        in "cmm_diagonal.cu" {
            DiagonalOneBlockU64 => "cmm_diagonal_oneblock_u64",
            DiagonalOneBlockU32 => "cmm_diagonal_oneblock_u32",
            DiagonalOneBlockIndexedU64 => "cmm_diagonal_oneblock_indexed_u64",
        }
        in "cmm_cell_per_thread.cu" {
            RowMajorCellPerThread => "cmm_rowmajor_cell_per_thread_u64",
            DiagonalCellPerThread => "cmm_diagonal_cell_per_thread_u64",
        }
        in "cmm_block_per_cell.cu" {
            RowMajorBlockPerCell => "cmm_rowmajor_block_per_cell_u64",
            DiagonalBlockPerCell => "cmm_diagonal_block_per_cell_u64",
            RowMajorPersistent => "cmm_rowmajor_persistent_u64",
            DiagonalPersistent => "cmm_diagonal_persistent_u64",
            BarriersOnly => "cmm_persistent_barriers_only",
            LaunchOnly => "cmm_launch_only",
        }
    }
}

/// Every CMM kernel the book runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// The paper's version: one block, `__syncthreads()` between diagonals. `indexed` (only for
    /// the diagonal-major layout) recomputes the index of every load instead of stepping pointers.
    OneBlock { layout: Layout, cost: CostWidth, indexed: bool },
    /// Section 7.1, many blocks: one launch per diagonal, one thread per cell.
    CellPerThread { layout: Layout, block: u32 },
    /// Section 7.1, several threads per cell: one launch per diagonal, one block per cell.
    BlockPerCell { layout: Layout, block: u32 },
    /// The cells of [`Kernel::BlockPerCell`] in one cooperative launch: the blocks loop over
    /// the diagonals and meet at a grid barrier between them.
    Persistent { layout: Layout, block: u32 },
    /// No cell: the `n - 1` launches of [`Kernel::BlockPerCell`] with nothing to do (the
    /// launches' own cost). Computes no table, so it is timed, never verified.
    LaunchOnly { block: u32 },
    /// No cell: the `n - 1` grid barriers of [`Kernel::Persistent`] (the barriers' own cost).
    /// Computes no table, so it is timed, never verified.
    BarriersOnly { block: u32 },
}

impl Kernel {
    /// The paper's baseline and its data-layout version, 8-byte costs.
    pub const fn one_block(layout: Layout) -> Self {
        Kernel::OneBlock { layout, cost: CostWidth::U64, indexed: false }
    }

    pub fn layout(&self) -> Layout {
        match *self {
            Kernel::OneBlock { layout, .. }
            | Kernel::CellPerThread { layout, .. }
            | Kernel::BlockPerCell { layout, .. }
            | Kernel::Persistent { layout, .. } => layout,
            Kernel::LaunchOnly { .. } | Kernel::BarriersOnly { .. } => Layout::RowMajor,
        }
    }

    pub fn cost_width(&self) -> CostWidth {
        match *self {
            Kernel::OneBlock { cost, .. } => cost,
            _ => CostWidth::U64,
        }
    }

    /// The `extern "C"` function this kernel launches (its file is
    /// [`KernelName::file`]). A row-major kernel has no indexed form.
    pub fn function(&self) -> CmmKernel {
        use CostWidth::*;
        use Layout::*;
        match *self {
            Kernel::OneBlock { layout: RowMajor, cost: U64, .. } => {
                CmmKernel::RowMajorOneBlockU64
            }
            Kernel::OneBlock { layout: RowMajor, cost: U32, .. } => {
                CmmKernel::RowMajorOneBlockU32
            }
            Kernel::OneBlock { layout: DiagonalMajor, cost: U64, indexed: false } => {
                CmmKernel::DiagonalOneBlockU64
            }
            Kernel::OneBlock { layout: DiagonalMajor, cost: U64, indexed: true } => {
                CmmKernel::DiagonalOneBlockIndexedU64
            }
            Kernel::OneBlock { layout: DiagonalMajor, cost: U32, .. } => {
                CmmKernel::DiagonalOneBlockU32
            }
            Kernel::CellPerThread { layout: RowMajor, .. } => {
                CmmKernel::RowMajorCellPerThread
            }
            Kernel::CellPerThread { layout: DiagonalMajor, .. } => {
                CmmKernel::DiagonalCellPerThread
            }
            Kernel::BlockPerCell { layout: RowMajor, .. } => {
                CmmKernel::RowMajorBlockPerCell
            }
            Kernel::BlockPerCell { layout: DiagonalMajor, .. } => {
                CmmKernel::DiagonalBlockPerCell
            }
            Kernel::Persistent { layout: RowMajor, .. } => {
                CmmKernel::RowMajorPersistent
            }
            Kernel::Persistent { layout: DiagonalMajor, .. } => {
                CmmKernel::DiagonalPersistent
            }
            Kernel::LaunchOnly { .. } => CmmKernel::LaunchOnly,
            Kernel::BarriersOnly { .. } => CmmKernel::BarriersOnly,
        }
    }

    /// A label for tables and figures.
    pub fn label(&self) -> String {
        let width =
            |c: CostWidth| if c == CostWidth::U64 { "8-byte" } else { "4-byte" };
        match *self {
            Kernel::OneBlock { layout, cost, indexed } => {
                format!(
                    "one block, {}, {}{}",
                    layout.name(),
                    width(cost),
                    if indexed { ", index per load" } else { "" }
                )
            }
            Kernel::CellPerThread { layout, block } => format!(
                "launch per diagonal, thread per cell (B={block}), {}",
                layout.name()
            ),
            Kernel::BlockPerCell { layout, block } => format!(
                "launch per diagonal, block per cell (B={block}), {}",
                layout.name()
            ),
            Kernel::Persistent { layout, block } => format!(
                "one cooperative launch, grid barrier per diagonal, block per cell \
                 (B={block}), {}",
                layout.name()
            ),
            Kernel::LaunchOnly { block } => {
                format!("launch per diagonal, no work (B={block})")
            }
            Kernel::BarriersOnly { block } => {
                format!("one cooperative launch, grid barriers only (B={block})")
            }
        }
    }

    /// How a per-diagonal kernel is launched on diagonal `d` (1 to n - 1) of a chain of `n`
    /// matrices, whose `n - d` cells it computes: a thread per cell in blocks of `block`, or a
    /// block of `block` threads per cell. `None` for the one-block kernels, launched once.
    pub fn diagonal_launch(&self, n: usize, d: usize) -> Option<LaunchConfig> {
        let cells = (n - d) as u32;
        let (blocks, block) = match *self {
            Kernel::OneBlock { .. }
            | Kernel::Persistent { .. }
            | Kernel::BarriersOnly { .. } => return None,
            Kernel::CellPerThread { block, .. } => (cells.div_ceil(block), block),
            Kernel::BlockPerCell { block, .. } | Kernel::LaunchOnly { block } => {
                (cells, block)
            }
        };
        Some(LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    /// Refuses a chain this kernel cannot solve exactly, before anything is allocated.
    pub fn check(&self, dims: &[u32]) -> Result<usize, UsageError> {
        let n = validate_dims(dims).map_err(|e| UsageError(e.to_string()))?;
        if n > MAX_N_FOR_I32_INDEX {
            return Err(UsageError(format!(
                "n = {n} matrices is too many: the kernels index the table with 32-bit \
                 ints, so n <= {MAX_N_FOR_I32_INDEX}"
            )));
        }
        let bound = match self.cost_width() {
            CostWidth::U64 => gpu_safe_bound(dims),
            CostWidth::U32 => gpu_safe_bound_u32(dims),
        };
        bound.map_err(|e| {
            UsageError(format!("{} cannot solve this chain exactly: {e}", self.label()))
        })?;
        Ok(n)
    }
}

/// Costs on the device, in the kernel's width.
pub enum CostBuffer {
    U64(CudaSlice<u64>),
    U32(CudaSlice<u32>),
}

/// One chain on the device: its dimensions and the kernel's tables.
pub struct Problem {
    pub kernel: Kernel,
    pub n: usize,
    pub dims: CudaSlice<u32>,
    pub cost: CostBuffer,
    pub split: CudaSlice<u32>,
    /// The grid barrier's two words (arrivals, generation) for the cooperative kernels.
    pub barrier: CudaSlice<u32>,
}

/// The CMM kernels, compiled and loaded once.
pub struct CmmKernels<'g> {
    gpu: &'g Gpu,
    table: KernelTable<CmmKernel>,
}

impl<'g> CmmKernels<'g> {
    pub fn load(gpu: &'g Gpu) -> anyhow::Result<Self> {
        Ok(Self { gpu, table: KernelTable::load(gpu)? })
    }

    /// Uploads `dims` and allocates the tables for `kernel` (after checking it can solve them).
    pub fn prepare(&self, kernel: Kernel, dims: &[u32]) -> anyhow::Result<Problem> {
        let n = kernel.check(dims)?;
        let cells = kernel.layout().dp_len(n);
        let cost_bytes = if kernel.cost_width() == CostWidth::U64 { 8 } else { 4 };
        self.gpu.ensure_fits(
            cells * (cost_bytes + 4) + dims.len() * 4,
            &format!("the DP table of n = {n} matrices"),
        )?;
        let s = &self.gpu.stream;
        let cost = match kernel.cost_width() {
            CostWidth::U64 => CostBuffer::U64(s.alloc_zeros::<u64>(cells)?),
            CostWidth::U32 => CostBuffer::U32(s.alloc_zeros::<u32>(cells)?),
        };
        Ok(Problem {
            kernel,
            n,
            dims: s.clone_htod(dims)?,
            cost,
            split: s.alloc_zeros::<u32>(cells)?,
            barrier: s.alloc_zeros::<u32>(2)?,
        })
    }

    /// The grid of a cooperative kernel of `block` threads for a chain of `n` matrices: as
    /// many blocks as can be resident at once (occupancy of the persistent kernel times the
    /// SMs; a cooperative launch larger than that is refused), but no more than the longest
    /// diagonal has cells. [`Kernel::BarriersOnly`] gets the persistent kernel's grid, so it
    /// prices the barriers that kernel pays.
    pub fn cooperative_grid(&self, block: u32, n: usize) -> anyhow::Result<u32> {
        let f = self.table.get(CmmKernel::RowMajorPersistent);
        let per_sm =
            f.occupancy_max_active_blocks_per_multiprocessor(block, 0, None)?;
        anyhow::ensure!(per_sm > 0, "a block of {block} threads cannot be resident");
        let resident = per_sm * self.gpu.info.sms as u32;
        Ok(resident.min(n.saturating_sub(1).max(1) as u32))
    }

    /// Enqueues one complete solve of `p` on `stream`: one launch for the one-block kernels,
    /// `n - 1` launches (one per diagonal, in order) for the others.
    pub fn enqueue(
        &self,
        stream: &Arc<CudaStream>,
        p: &mut Problem,
    ) -> anyhow::Result<()> {
        let f = self.table.get(p.kernel.function());
        let n = p.n as i32;
        match p.kernel {
            Kernel::OneBlock { .. } => {
                // The paper's <<<1, n>>>; past 1024 threads the kernel's rows loop.
                let threads = (p.n as u32).clamp(1, 1024);
                let cfg = LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: 0,
                };
                launch(stream, f, cfg, p, n, None)?;
            }
            Kernel::Persistent { block, .. } | Kernel::BarriersOnly { block } => {
                let cfg = LaunchConfig {
                    grid_dim: (self.cooperative_grid(block, p.n)?, 1, 1),
                    block_dim: (block, 1, 1),
                    shared_mem_bytes: 0,
                };
                let mut b = stream.launch_builder(f);
                b.arg(&p.dims);
                match &mut p.cost {
                    CostBuffer::U64(c) => b.arg(c),
                    CostBuffer::U32(c) => b.arg(c),
                };
                b.arg(&mut p.split).arg(&n).arg(&mut p.barrier);
                // SAFETY: (dims, cost, split, n, barrier), as the kernels' header lists them;
                // the grid is no larger than what can be resident at once.
                unsafe { b.launch_cooperative(cfg)? };
            }
            kernel => {
                for d in 1..p.n {
                    let cfg =
                        kernel.diagonal_launch(p.n, d).expect("a per-diagonal kernel");
                    launch(stream, f, cfg, p, n, Some(d as i32))?;
                }
            }
        }
        Ok(())
    }

    /// Fills the tables with poison, except the main diagonal (cost 0, split 0) that the
    /// per-diagonal kernels do not write; the one-block kernels get poison everywhere.
    pub fn poison(&self, p: &mut Problem) -> anyhow::Result<()> {
        let layout = p.kernel.layout();
        let cells = layout.dp_len(p.n);
        let writes_diagonal = matches!(p.kernel, Kernel::OneBlock { .. });
        anyhow::ensure!(
            !matches!(
                p.kernel,
                Kernel::LaunchOnly { .. } | Kernel::BarriersOnly { .. }
            ),
            "{} computes no table: time it, there is nothing to verify",
            p.kernel.label()
        );
        let mut split = vec![u32::MAX; cells];
        let mut cost64 = vec![u64::MAX; cells];
        if !writes_diagonal {
            for i in 1..=p.n {
                split[layout.dp_index(p.n, i, i)] = 0;
                cost64[layout.dp_index(p.n, i, i)] = 0;
            }
        }
        let s = &self.gpu.stream;
        s.memcpy_htod(&split, &mut p.split)?;
        match &mut p.cost {
            CostBuffer::U64(c) => s.memcpy_htod(&cost64, c)?,
            CostBuffer::U32(c) => {
                let cost32: Vec<u32> = cost64.iter().map(|&v| v as u32).collect();
                s.memcpy_htod(&cost32, c)?
            }
        }
        Ok(())
    }

    /// Reads the kernel's tables back as a [`DpTable`].
    pub fn read_back(&self, p: &Problem) -> anyhow::Result<DpTable> {
        let s = &self.gpu.stream;
        let cost: Vec<u64> = match &p.cost {
            CostBuffer::U64(c) => s.clone_dtoh(c)?,
            CostBuffer::U32(c) => s.clone_dtoh(c)?.into_iter().map(u64::from).collect(),
        };
        let split = s.clone_dtoh(&p.split)?;
        Ok(DpTable::from_layout(p.kernel.layout(), p.n, &cost, &split)?)
    }

    /// Compares the tables of `p` with the CPU's, cell by cell; `what` names the kernel.
    fn check(&self, what: &str, p: &Problem, cpu: &DpTable) -> anyhow::Result<DpTable> {
        let gpu_table = self.read_back(p)?;
        check_table(what, p.n, cpu, &gpu_table, |i, j| {
            p.kernel.layout().dp_index(p.n, i, j)
        })?;
        Ok(gpu_table)
    }

    /// Correct before fast, through [`Gpu::verify_then_time`]: poisons the tables, solves once,
    /// compares every cell (cost and split) with the CPU's table — a difference is a
    /// [`Mismatch`] naming the kernel, n and the cell — and only then times complete solves
    /// under each of `plans` (table resident on the GPU; no transfers).
    pub fn verify_then_time(
        &self,
        p: &mut Problem,
        cpu: &DpTable,
        plans: &[Plan],
    ) -> anyhow::Result<Verified<DpTable>> {
        let what = p.kernel.function().function();
        self.gpu.verify_then_time(
            p,
            |_, p| self.poison(p),
            |s, p| self.enqueue(s, p),
            |_, p| self.check(&what, p, cpu),
            plans,
        )
    }

    /// [`CmmKernels::verify_then_time`] without timing: the table the kernel computed, every
    /// cell equal to the CPU's.
    pub fn solve_verified(
        &self,
        p: &mut Problem,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        Ok(self.verify_then_time(p, cpu, &[])?.check)
    }

    /// Times complete solves of `p` (table resident on the GPU; no transfers). Only for a
    /// problem [`CmmKernels::solve_verified`] has checked, when the plan depends on that check
    /// (how long it took).
    pub fn time(&self, p: &mut Problem, plan: Plan) -> anyhow::Result<Stats> {
        self.gpu.time(plan, |s| self.enqueue(s, p))
    }

    /// Captures one complete solve of `p` into a CUDA graph: replaying it launches all the
    /// per-diagonal kernels with one call, without the CPU issuing each launch.
    pub fn capture(&self, p: &mut Problem) -> anyhow::Result<CudaGraph> {
        capture_graph(&self.gpu.stream, |s| self.enqueue(s, p))
    }

    /// Like [`CmmKernels::verify_then_time`], through a graph from [`CmmKernels::capture`]:
    /// each solve is one launch of the graph.
    pub fn verify_then_time_graph(
        &self,
        p: &mut Problem,
        graph: &CudaGraph,
        cpu: &DpTable,
        plans: &[Plan],
    ) -> anyhow::Result<Verified<DpTable>> {
        let what = format!("{} (CUDA graph)", p.kernel.function().function());
        self.gpu.verify_then_time(
            p,
            |_, p| self.poison(p),
            |_, _| Ok(graph.launch()?),
            |_, p| self.check(&what, p, cpu),
            plans,
        )
    }

    /// [`CmmKernels::verify_then_time_graph`] without timing.
    pub fn solve_verified_graph(
        &self,
        p: &mut Problem,
        graph: &CudaGraph,
        cpu: &DpTable,
    ) -> anyhow::Result<DpTable> {
        Ok(self.verify_then_time_graph(p, graph, cpu, &[])?.check)
    }

    /// The paper's end-to-end view, on the host clock: allocate the tables, copy the
    /// dimensions in, solve, copy the cost and split tables out. Returns milliseconds.
    ///
    /// Timed here rather than with [`crate::harness::timing::time_host`]: the clock stops when
    /// the tables are on the host, before the device buffers are freed, as in the paper, where
    /// a value returned to `time_host` would be dropped (and the buffers freed) inside the
    /// timed region.
    pub fn end_to_end_ms(&self, kernel: Kernel, dims: &[u32]) -> anyhow::Result<f64> {
        let t = Instant::now();
        let mut p = self.prepare(kernel, dims)?;
        self.enqueue(&self.gpu.stream.clone(), &mut p)?;
        let _table = self.read_back(&p)?; // clone_dtoh synchronises
        Ok(t.elapsed().as_secs_f64() * 1e3)
    }

    /// Host milliseconds that enqueueing one complete solve of `p` takes (for the
    /// per-diagonal kernels, the `n - 1` launches), timed from an idle GPU; it then waits for
    /// the GPU, so each call starts from an idle GPU and an empty queue.
    pub fn enqueue_ms(&self, p: &mut Problem) -> anyhow::Result<f64> {
        let s = self.gpu.stream.clone();
        s.synchronize()?;
        let t = Instant::now();
        self.enqueue(&s, p)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        s.synchronize()?;
        Ok(ms)
    }

    /// Solves `k` independent problems either one after another on one stream, or each on its
    /// own stream (the paper's Section 7.2); returns the time for all of them.
    pub fn time_many(
        &self,
        problems: &mut [Problem],
        streams: Option<&[Arc<CudaStream>]>,
        plan: Plan,
    ) -> anyhow::Result<Stats> {
        let gpu = self.gpu;
        gpu.time(plan, |main| {
            match streams {
                None => {
                    for p in problems.iter_mut() {
                        self.enqueue(main, p)?;
                    }
                }
                Some(streams) => {
                    // Fork: every stream waits for the start event's position on the main
                    // stream; join: the main stream waits for all of them before the stop event.
                    let fork = gpu.timing_event()?;
                    fork.record(main)?;
                    for (p, s) in problems.iter_mut().zip(streams.iter().cycle()) {
                        s.wait(&fork)?;
                        self.enqueue(s, p)?;
                    }
                    for s in streams {
                        main.join(s)?;
                    }
                }
            }
            Ok(())
        })
    }
}

fn launch(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    cfg: LaunchConfig,
    p: &mut Problem,
    n: i32,
    d: Option<i32>,
) -> anyhow::Result<()> {
    let mut b = stream.launch_builder(f);
    b.arg(&p.dims);
    match &mut p.cost {
        CostBuffer::U64(c) => b.arg(c),
        CostBuffer::U32(c) => b.arg(c),
    };
    b.arg(&mut p.split).arg(&n);
    if let Some(d) = d.as_ref() {
        b.arg(d);
    }
    // SAFETY: the argument lists match the kernels' headers: (dims, cost, split, n[, d]).
    unsafe { b.launch(cfg)? };
    Ok(())
}

/// Compares a table a kernel computed with the CPU's, cell by cell (cost and split); the first
/// difference becomes a [`Mismatch`] naming `kernel`, `n`, the cell and its buffer `index`.
pub(crate) fn check_table(
    kernel: &str,
    n: usize,
    cpu: &DpTable,
    got: &DpTable,
    index: impl Fn(usize, usize) -> usize,
) -> Result<(), Mismatch> {
    match cpu.difference_from(got) {
        None => Ok(()),
        Some(diff) => Err(Mismatch {
            kernel: kernel.to_string(),
            size: format!("n={n}"),
            index: index(diff.i, diff.j),
            got: format!(
                "cost {} split {} in cell M[{}][{}]",
                diff.got_cost, diff.got_split, diff.i, diff.j
            ),
            want: format!("cost {} split {}", diff.expected_cost, diff.expected_split),
            wrong: count_differences(cpu, got),
            total: super::layout::triangle_len(n),
        }),
    }
}

fn count_differences(a: &DpTable, b: &DpTable) -> usize {
    let n = a.n();
    (1..=n)
        .flat_map(|i| (i..=n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            a.cost(i, j) != b.cost(i, j) || a.split(i, j) != b.split(i, j)
        })
        .count()
}

/// Captures what `enqueue` puts on `stream` into a CUDA graph (thread-local capture): one
/// launch of the graph then replays every kernel. The capture is ended even when
/// `enqueue` fails, and that failure is the error returned.
pub fn capture_graph(
    stream: &Arc<CudaStream>,
    enqueue: impl FnOnce(&Arc<CudaStream>) -> anyhow::Result<()>,
) -> anyhow::Result<CudaGraph> {
    let s = stream.clone();
    s.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
    let enqueued = enqueue(&s);
    // End the capture even after an error.
    let graph = s.end_capture(CUgraphInstantiate_flags(0))?;
    enqueued?;
    graph.ok_or_else(|| anyhow::anyhow!("stream capture produced no graph"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_variant_names_a_function_of_the_table() {
        let mut named = Vec::new();
        for layout in Layout::ALL {
            for cost in [CostWidth::U64, CostWidth::U32] {
                for indexed in [false, true] {
                    named.push(Kernel::OneBlock { layout, cost, indexed }.function());
                }
            }
            named.push(Kernel::CellPerThread { layout, block: 128 }.function());
            named.push(Kernel::BlockPerCell { layout, block: 32 }.function());
            named.push(Kernel::Persistent { layout, block: 32 }.function());
        }
        named.push(Kernel::LaunchOnly { block: 32 }.function());
        named.push(Kernel::BarriersOnly { block: 32 }.function());
        named.sort_by_key(|k| k.function());
        named.dedup();
        let mut all = CmmKernel::all();
        all.sort_by_key(|k| k.function());
        assert_eq!(
            named, all,
            "every function is reachable from a Kernel, and only those"
        );
        for k in CmmKernel::all() {
            let file = crate::harness::kernels::source(k.file())
                .unwrap_or_else(|| panic!("{} is not a kernel file", k.file()));
            assert!(
                file.source.contains(&format!("void {}(", k.function())),
                "{} does not define {}",
                k.file(),
                k.function()
            );
        }
    }
}
