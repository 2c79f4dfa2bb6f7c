//! Verify, then time: every kernel of `kernels/memory_spaces.cu` runs once on fresh random
//! input with its output poisoned, is compared with its CPU reference, and only then is timed.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};

use crate::harness::kernels::Module;
use crate::harness::stats::Rate;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Stats, Tolerance, UsageError};

use super::reference;
use super::{
    BLOCK, CHASE_CONST_MAX, HIST_BINS, KERNEL_FILE, LINE_ELEMENTS, SIGNAL_MAX,
    TILE_ROWS,
};

/// A verified, timed kernel: its times and the amount of work one run does (bytes, loads or
/// values, as the caller says).
#[derive(Debug, Clone)]
pub struct Timed {
    pub stats: Stats,
    pub amount: f64,
}

impl Timed {
    /// Work per second at the median, best and worst repetition.
    pub fn per_second(&self) -> Rate {
        self.stats.rate(self.amount)
    }
}

/// The three homes of the signal vector (and of the walks' table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VectorHome {
    /// `__constant__` memory, read through the constant cache.
    Constant,
    /// Global memory, plain loads.
    Global,
    /// Global memory through the read-only path (`const __restrict__` and `__ldg`).
    ReadOnly,
}

impl VectorHome {
    pub const ALL: [VectorHome; 3] =
        [VectorHome::Constant, VectorHome::Global, VectorHome::ReadOnly];

    pub fn label(self) -> &'static str {
        match self {
            VectorHome::Constant => "constant memory",
            VectorHome::Global => "global memory",
            VectorHome::ReadOnly => "read-only path (__ldg)",
        }
    }

    /// The signal kernel of `kernels/memory_spaces.cu`.
    pub fn signal_function(self) -> &'static str {
        match self {
            VectorHome::Constant => "apply_signal_const",
            VectorHome::Global => "apply_signal_global",
            VectorHome::ReadOnly => "apply_signal_readonly",
        }
    }

    /// The walk kernel of `kernels/memory_spaces.cu`.
    pub fn walk_function(self) -> &'static str {
        match self {
            VectorHome::Constant => "walk_const",
            VectorHome::Global => "walk_global",
            VectorHome::ReadOnly => "walk_readonly",
        }
    }
}

/// The stencil kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StencilKernel {
    Global,
    SharedStatic,
    SharedDynamic,
}

impl StencilKernel {
    pub const ALL: [StencilKernel; 3] = [
        StencilKernel::Global,
        StencilKernel::SharedStatic,
        StencilKernel::SharedDynamic,
    ];

    pub fn function(self) -> &'static str {
        match self {
            StencilKernel::Global => "stencil3_global",
            StencilKernel::SharedStatic => "stencil3_shared_static",
            StencilKernel::SharedDynamic => "stencil3_shared_dynamic",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            StencilKernel::Global => "three global loads",
            StencilKernel::SharedStatic => "shared tile, static",
            StencilKernel::SharedDynamic => "shared tile, dynamic",
        }
    }

    /// Dynamic shared memory the launch asks for: the tile and its two halo elements.
    pub fn dynamic_shared_bytes(self) -> u32 {
        match self {
            StencilKernel::SharedDynamic => (BLOCK + 2) * 4,
            _ => 0,
        }
    }
}

/// The histogram kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HistogramKernel {
    /// `counts_local[value & 15] += 1`: an index known only at run time.
    Local,
    /// Sixteen compare-and-adds with constant indices.
    Registers,
}

impl HistogramKernel {
    pub const ALL: [HistogramKernel; 2] =
        [HistogramKernel::Local, HistogramKernel::Registers];

    pub fn function(self) -> &'static str {
        match self {
            HistogramKernel::Local => "histogram_local",
            HistogramKernel::Registers => "histogram_registers",
        }
    }
}

/// Where a pointer chase keeps its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChaseSpace {
    /// A global buffer, one chain element per 128-byte line.
    Global,
    /// Copied into dynamic shared memory by the block, then followed by thread 0.
    Shared,
    /// `chase_const_next`, set from the host.
    Constant,
}

impl ChaseSpace {
    pub const ALL: [ChaseSpace; 3] =
        [ChaseSpace::Global, ChaseSpace::Shared, ChaseSpace::Constant];

    pub fn function(self) -> &'static str {
        match self {
            ChaseSpace::Global => "chase_global",
            ChaseSpace::Shared => "chase_shared",
            ChaseSpace::Constant => "chase_const",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            ChaseSpace::Global => "global (one element per 128-byte line)",
            ChaseSpace::Shared => "shared",
            ChaseSpace::Constant => "constant",
        }
    }

    /// `u32` elements between consecutive chain elements.
    pub fn stride(self) -> usize {
        match self {
            ChaseSpace::Global => LINE_ELEMENTS,
            ChaseSpace::Shared | ChaseSpace::Constant => 1,
        }
    }

    /// The largest footprint this space can hold: shared memory without the opt-in (48 KiB),
    /// the constant array's size; global memory is bounded by the device only.
    pub fn max_footprint(self) -> usize {
        match self {
            ChaseSpace::Global => usize::MAX,
            ChaseSpace::Shared => 48 * 1024,
            ChaseSpace::Constant => CHASE_CONST_MAX * 4,
        }
    }
}

/// Every kernel of the chapter, compiled once for this device.
pub struct Kernels {
    pub module: Module,
    pub signal: Vec<(VectorHome, CudaFunction)>,
    pub walk: Vec<(VectorHome, CudaFunction)>,
    pub stencil: Vec<(StencilKernel, CudaFunction)>,
    pub histogram: Vec<(HistogramKernel, CudaFunction)>,
    pub chase: Vec<(ChaseSpace, CudaFunction)>,
    pub bandwidth_shared: CudaFunction,
    pub bandwidth_registers: CudaFunction,
}

fn pick<K: PartialEq + Copy, V>(list: &[(K, V)], key: K) -> &V {
    &list
        .iter()
        .find(|(k, _)| *k == key)
        .expect("every kernel of the chapter is loaded")
        .1
}

impl Kernels {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let module = gpu.load(KERNEL_FILE)?;
        let each = |names: &[&'static str]| {
            names.iter().map(|n| module.function(n)).collect::<anyhow::Result<Vec<_>>>()
        };
        let signal = VectorHome::ALL
            .into_iter()
            .zip(each(&VectorHome::ALL.map(VectorHome::signal_function))?)
            .collect();
        let walk = VectorHome::ALL
            .into_iter()
            .zip(each(&VectorHome::ALL.map(VectorHome::walk_function))?)
            .collect();
        let stencil = StencilKernel::ALL
            .into_iter()
            .zip(each(&StencilKernel::ALL.map(StencilKernel::function))?)
            .collect();
        let histogram = HistogramKernel::ALL
            .into_iter()
            .zip(each(&HistogramKernel::ALL.map(HistogramKernel::function))?)
            .collect();
        let chase = ChaseSpace::ALL
            .into_iter()
            .zip(each(&ChaseSpace::ALL.map(ChaseSpace::function))?)
            .collect();
        let bandwidth_shared = module.function("bandwidth_shared")?;
        let bandwidth_registers = module.function("bandwidth_registers")?;
        Ok(Self {
            module,
            signal,
            walk,
            stencil,
            histogram,
            chase,
            bandwidth_shared,
            bandwidth_registers,
        })
    }

    /// The compiled function of a stencil kernel.
    pub fn stencil_function(&self, kernel: StencilKernel) -> &CudaFunction {
        pick(&self.stencil, kernel)
    }

    /// Blocks of [`BLOCK`] threads that fill every SM once when running `f`.
    pub fn resident_blocks(
        gpu: &Gpu,
        f: &CudaFunction,
        dynamic_shared: u32,
    ) -> anyhow::Result<u32> {
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
            BLOCK,
            dynamic_shared as usize,
            None,
        )?;
        Ok(gpu.info.sms as u32 * per_sm.max(1))
    }
}

// ANCHOR: set_constant
/// Writes `values` into the `__constant__` array `symbol` of the chapter's module, through
/// the module's global: the driver's address of the symbol, viewed as `len` elements.
fn set_constant<T: cudarc::driver::DeviceRepr>(
    gpu: &Gpu,
    kernels: &Kernels,
    symbol: &str,
    values: &[T],
) -> anyhow::Result<()> {
    let mut bytes = kernels.module.module.get_global(symbol, &gpu.stream)?;
    // SAFETY: the symbol is an array of plain T; transmute_mut refuses a view longer than it.
    let mut elements =
        unsafe { bytes.transmute_mut::<T>(values.len()) }.ok_or_else(|| {
            anyhow::anyhow!("`{symbol}` holds fewer than {} elements", values.len())
        })?;
    gpu.stream.memcpy_htod(values, &mut elements)?;
    Ok(())
}
// ANCHOR_END: set_constant

/// Sets `signal_const` (all [`SIGNAL_MAX`] floats).
pub fn set_signal_const(
    gpu: &Gpu,
    kernels: &Kernels,
    signal: &[f32],
) -> anyhow::Result<()> {
    anyhow::ensure!(
        signal.len() == SIGNAL_MAX,
        "signal_const holds {SIGNAL_MAX} floats, not {}",
        signal.len()
    );
    set_constant(gpu, kernels, "signal_const", signal)
}

/// The signal example's sizes: `matrices` matrices of `rows` × `m`, a vector of `m` floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalSize {
    pub rows: usize,
    pub m: usize,
    pub matrices: usize,
}

impl SignalSize {
    pub fn matrix_bytes(&self) -> usize {
        self.rows * self.m * self.matrices * 4
    }
}

/// Enqueues one signal kernel.
pub fn launch_signal(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    home: VectorHome,
    (matrices, signal_global): (&CudaSlice<f32>, &CudaSlice<f32>),
    result: &mut CudaSlice<f32>,
    size: SignalSize,
) -> anyhow::Result<()> {
    assert!(
        matrices.len() >= size.rows * size.m * size.matrices
            && result.len() >= size.rows * size.matrices
    );
    let cfg = LaunchConfig {
        grid_dim: ((size.rows as u32).div_ceil(BLOCK), size.matrices as u32, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (rows, m) = (size.rows as i32, size.m as i32);
    let f = pick(&kernels.signal, home);
    let mut launch = stream.launch_builder(f);
    launch.arg(matrices);
    if home != VectorHome::Constant {
        launch.arg(signal_global);
    }
    launch.arg(result).arg(&rows).arg(&m);
    // SAFETY: matches apply_signal_*(const float* matrices, [const float* signal,] float* result,
    // int rows, int m); the grid covers rows x matrices and the assert keeps every access inside.
    unsafe { launch.launch(cfg)? };
    Ok(())
}

// ANCHOR: measure_signal
/// Verifies, then times, the signal example with the vector in each home. The matrices are
/// streamed once; the vector is read once per matrix element, by every thread at once.
/// The amount of work is the matrix and result bytes.
pub fn measure_signal(
    gpu: &Gpu,
    kernels: &Kernels,
    size: SignalSize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<(VectorHome, Timed)>> {
    let SignalSize { rows, m, matrices: n_mat } = size;
    if !(1..=SIGNAL_MAX).contains(&m)
        || rows == 0
        || !(1..=65_535).contains(&n_mat)
        || rows > i32::MAX as usize
    {
        let limits = format!(
            "1 to {SIGNAL_MAX} vector elements, at least 1 row, 1 to 65535 matrices"
        );
        return Err(UsageError(format!(
            "the signal example needs {limits}, not {size:?}"
        ))
        .into());
    }
    gpu.ensure_fits(size.matrix_bytes() + rows * n_mat * 4, "the signal example")?;
    let signal_host = inputs::random_f32(SIGNAL_MAX, seed);
    let matrices_host = inputs::random_f32(rows * m * n_mat, seed + 1);
    let want = reference::apply_signal(&matrices_host, &signal_host, rows, m);
    set_signal_const(gpu, kernels, &signal_host)?;
    let signal_global = gpu.stream.clone_htod(&signal_host)?;
    let matrices = gpu.stream.clone_htod(&matrices_host)?;
    let mut result = gpu.stream.alloc_zeros::<f32>(rows * n_mat)?;
    // m products of numbers in [-1, 1), each rounded in f32: the error grows with m.
    let tolerance = Tolerance::new(1e-5 * m as f64, 1e-5);
    let mut timed = Vec::new();
    for home in VectorHome::ALL {
        let buffers = (&matrices, &signal_global);
        gpu.poison(&mut result)?;
        launch_signal(&gpu.stream, kernels, home, buffers, &mut result, size)?;
        let got = gpu.stream.clone_dtoh(&result)?;
        verify::check_close(
            home.signal_function(),
            &format!("{size:?}"),
            &got,
            &want,
            tolerance,
        )?;
        let stats = gpu.time(plan, |s| {
            launch_signal(s, kernels, home, buffers, &mut result, size)
        })?;
        timed.push((
            home,
            Timed { stats, amount: (size.matrix_bytes() + rows * n_mat * 4) as f64 },
        ));
    }
    Ok(timed)
}
// ANCHOR_END: measure_signal

/// One point of the divergent walk: the table's home, distinct addresses per warp-wide load,
/// and the time; the amount is the lane loads (`n × steps`).
#[derive(Debug, Clone)]
pub struct WalkPoint {
    pub home: VectorHome,
    pub distinct: u32,
    pub timed: Timed,
}

fn launch_walk(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    home: VectorHome,
    table: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    (distinct, steps): (u32, u32),
) -> anyhow::Result<()> {
    let n = out.len() as u64;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(n.div_ceil(BLOCK as u64))?, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (distinct, steps) = (distinct as i32, steps as i32);
    let f = pick(&kernels.walk, home);
    let mut launch = stream.launch_builder(f);
    if home != VectorHome::Constant {
        launch.arg(table);
    }
    launch.arg(out).arg(&n).arg(&distinct).arg(&steps);
    // SAFETY: matches walk_*([const float* table,] float* out, u64 n, int distinct, int steps);
    // every table index is masked to SIGNAL_MAX - 1 and table holds SIGNAL_MAX floats.
    unsafe { launch.launch(cfg)? };
    Ok(())
}

/// Verifies, then times, the walks of `n` threads, `steps` loads each, for every number of
/// distinct addresses per warp in `distincts` and every home of the table.
pub fn measure_walks(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    steps: u32,
    distincts: &[u32],
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<WalkPoint>> {
    if n == 0
        || steps == 0
        || steps > i32::MAX as u32
        || distincts.iter().any(|d| !(1..=32).contains(d))
    {
        return Err(UsageError(format!(
            "the walks need threads > 0, 1 to {} steps and 1 to 32 distinct addresses",
            i32::MAX
        ))
        .into());
    }
    let table_host = inputs::random_f32(SIGNAL_MAX, seed);
    set_signal_const(gpu, kernels, &table_host)?;
    let table = gpu.stream.clone_htod(&table_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
    let mut points = Vec::new();
    for &distinct in distincts {
        let want = reference::walk(&table_host, n, distinct, steps);
        for home in VectorHome::ALL {
            gpu.poison(&mut out)?;
            launch_walk(
                &gpu.stream,
                kernels,
                home,
                &table,
                &mut out,
                (distinct, steps),
            )?;
            let size = format!("n={n} steps={steps} distinct={distinct}");
            // The same additions in the same order as the reference: exact.
            verify::check_exact(
                home.walk_function(),
                &size,
                &gpu.stream.clone_dtoh(&out)?,
                &want,
            )?;
            let stats = gpu.time(plan, |s| {
                launch_walk(s, kernels, home, &table, &mut out, (distinct, steps))
            })?;
            points.push(WalkPoint {
                home,
                distinct,
                timed: Timed { stats, amount: n as f64 * steps as f64 },
            });
        }
    }
    Ok(points)
}

/// Enqueues one stencil kernel `f` (which is `kernel`) on `grid` blocks.
pub fn launch_stencil(
    stream: &Arc<CudaStream>,
    f: &CudaFunction,
    kernel: StencilKernel,
    grid: u32,
    a: &CudaSlice<f32>,
    b: &mut CudaSlice<f32>,
) -> anyhow::Result<()> {
    assert!(b.len() >= a.len());
    let n = a.len() as u64;
    let cfg = LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: kernel.dynamic_shared_bytes(),
    };
    // SAFETY: matches stencil3_*(const float* a, float* b, u64 n); BLOCK threads per block (the
    // static tile's size), and (BLOCK + 2) floats of dynamic shared memory for the dynamic tile.
    unsafe { stream.launch_builder(f).arg(a).arg(b).arg(&n).launch(cfg)? };
    Ok(())
}

// ANCHOR: measure_stencils
/// Verifies, then times, the three stencils on `n` random floats. The amount of work is the
/// useful bytes: every element read once and written once.
pub fn measure_stencils(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<(StencilKernel, Timed)>> {
    if n == 0 {
        return Err(UsageError("the stencil needs at least one element".into()).into());
    }
    gpu.ensure_fits(2 * n * 4, &format!("a stencil over {n} floats"))?;
    let a_host = inputs::random_f32(n, seed);
    let want = reference::stencil3(&a_host);
    let a = gpu.stream.clone_htod(&a_host)?;
    let mut b = gpu.stream.alloc_zeros::<f32>(n)?;
    let mut timed = Vec::new();
    for kernel in StencilKernel::ALL {
        let f = kernels.stencil_function(kernel);
        let needed = u32::try_from(n.div_ceil(BLOCK as usize)).unwrap_or(u32::MAX);
        let grid = Kernels::resident_blocks(gpu, f, kernel.dynamic_shared_bytes())?
            .min(needed);
        gpu.poison(&mut b)?;
        launch_stencil(&gpu.stream, f, kernel, grid, &a, &mut b)?;
        // Three additions in the reference's order: exact.
        verify::check_exact(
            kernel.function(),
            &format!("n={n}"),
            &gpu.stream.clone_dtoh(&b)?,
            &want,
        )?;
        let stats =
            gpu.time(plan, |s| launch_stencil(s, f, kernel, grid, &a, &mut b))?;
        timed.push((kernel, Timed { stats, amount: 8.0 * n as f64 }));
    }
    Ok(timed)
}
// ANCHOR_END: measure_stencils

/// A histogram kernel: what the compiler gave it, and its time. The amount is values counted.
#[derive(Debug, Clone)]
pub struct HistogramResult {
    pub kernel: HistogramKernel,
    pub registers_per_thread: i32,
    pub local_bytes_per_thread: i32,
    pub threads: usize,
    pub timed: Timed,
}

/// Verifies, then times, both histograms on `n` random values, with the same number of
/// threads (enough blocks to fill every SM for the hungrier of the two).
pub fn measure_histograms(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<HistogramResult>> {
    if n == 0 {
        return Err(UsageError("the histograms need at least one value".into()).into());
    }
    let mut blocks = u32::MAX;
    for kernel in HistogramKernel::ALL {
        blocks = blocks.min(Kernels::resident_blocks(
            gpu,
            pick(&kernels.histogram, kernel),
            0,
        )?);
    }
    let threads = (blocks * BLOCK) as usize;
    gpu.ensure_fits(
        n * 4 + HIST_BINS * threads * 4,
        &format!("histograms of {n} values"),
    )?;
    let values_host = reference::random_u32(n, seed);
    let want = reference::histograms(&values_host, threads);
    let values = gpu.stream.clone_htod(&values_host)?;
    let mut counts = gpu.stream.alloc_zeros::<u32>(HIST_BINS * threads)?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let n64 = n as u64;
    let mut results = Vec::new();
    for kernel in HistogramKernel::ALL {
        let f = pick(&kernels.histogram, kernel);
        let launch = |s: &Arc<CudaStream>,
                      counts: &mut CudaSlice<u32>|
         -> anyhow::Result<()> {
            // SAFETY: matches histogram_*(const unsigned* values, unsigned* counts, u64 n);
            // counts holds HIST_BINS entries for each of the grid's threads.
            unsafe {
                s.launch_builder(f).arg(&values).arg(counts).arg(&n64).launch(cfg)?
            };
            Ok(())
        };
        gpu.poison(&mut counts)?;
        launch(&gpu.stream, &mut counts)?;
        verify::check_exact(
            kernel.function(),
            &format!("n={n} threads={threads}"),
            &gpu.stream.clone_dtoh(&counts)?,
            &want,
        )?;
        let stats = gpu.time(plan, |s| launch(s, &mut counts))?;
        results.push(HistogramResult {
            kernel,
            registers_per_thread: f.num_regs()?,
            local_bytes_per_thread: f.local_size_bytes()?,
            threads,
            timed: Timed { stats, amount: n as f64 },
        });
    }
    Ok(results)
}

/// One pointer chase: where, over how many bytes, how many loads per repetition, and the
/// time of a repetition.
#[derive(Debug, Clone)]
pub struct ChaseResult {
    pub space: ChaseSpace,
    pub footprint_bytes: usize,
    pub steps: u64,
    pub stats: Stats,
}

impl ChaseResult {
    /// Nanoseconds per load at the median, fastest and slowest repetition.
    pub fn ns_per_load(&self) -> (f64, f64, f64) {
        let ns = |ms: f64| ms * 1e6 / self.steps as f64;
        (ns(self.stats.median_ms), ns(self.stats.min_ms), ns(self.stats.max_ms))
    }
}

fn launch_chase(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    space: ChaseSpace,
    next: &CudaSlice<u32>,
    position: &mut CudaSlice<u32>,
    steps: u64,
) -> anyhow::Result<()> {
    let f = pick(&kernels.chase, space);
    let one =
        LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: each matches its kernel's parameters; every value in the chain is an index of an
    // element of the chain (see reference::chain), so no load leaves it.
    unsafe {
        match space {
            ChaseSpace::Global => stream
                .launch_builder(f)
                .arg(next)
                .arg(position)
                .arg(&steps)
                .launch(one)?,
            ChaseSpace::Shared => {
                let len = next.len() as u32;
                let cfg = LaunchConfig {
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: len * 4,
                    ..one
                };
                stream
                    .launch_builder(f)
                    .arg(next)
                    .arg(&len)
                    .arg(position)
                    .arg(&steps)
                    .launch(cfg)?
            }
            ChaseSpace::Constant => {
                stream.launch_builder(f).arg(position).arg(&steps).launch(one)?
            }
        }
    };
    Ok(())
}

// ANCHOR: measure_chase
/// Verifies, then times, a chase over `footprint_bytes` in `space`: `steps` dependent loads
/// per repetition. A first walk passes through the whole footprint (or enough of it to fill
/// L2 twice), so what fits in a cache is in it; each launch continues where the last stopped.
pub fn measure_chase(
    gpu: &Gpu,
    kernels: &Kernels,
    space: ChaseSpace,
    footprint_bytes: usize,
    steps: u64,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<ChaseResult> {
    let stride = space.stride();
    let slots = footprint_bytes / (4 * stride);
    if slots < 2
        || footprint_bytes > space.max_footprint()
        || slots * stride > u32::MAX as usize
        || steps == 0
    {
        let why = format!(
            "a {} chase needs 2 to {} elements",
            space.label(),
            space.max_footprint() / (4 * stride)
        );
        return Err(UsageError(format!("{why} and at least one step, not {footprint_bytes} bytes and {steps} steps")).into());
    }
    gpu.ensure_fits(
        slots * stride * 4,
        &format!("a chase over {footprint_bytes} bytes"),
    )?;
    let next_host = reference::chain(slots, stride, seed);
    let next = gpu.stream.clone_htod(&next_host)?;
    if space == ChaseSpace::Constant {
        let mut padded = next_host.clone();
        padded.resize(CHASE_CONST_MAX, 0);
        set_constant(gpu, kernels, "chase_const_next", &padded)?;
    }
    let start = 0u32;
    let mut position = gpu.stream.clone_htod(&[start])?;
    let size = format!("{footprint_bytes} bytes, {slots} elements");

    // Correct before fast: a walk whose end differs from its start (its length is not a
    // multiple of the cycle's), so a kernel that never wrote its position fails too.
    let check_steps = if (steps.min(10_000)) % slots as u64 == 0 {
        steps.min(10_000) + 1
    } else {
        steps.min(10_000)
    };
    launch_chase(&gpu.stream, kernels, space, &next, &mut position, check_steps)?;
    let got = gpu.stream.clone_dtoh(&position)?;
    verify::check_exact(
        space.function(),
        &size,
        &got,
        &[reference::follow(&next_host, start, check_steps)],
    )?;

    let first_pass = slots.min(2 * gpu.info.l2_bytes / 128).max(1) as u64;
    launch_chase(&gpu.stream, kernels, space, &next, &mut position, first_pass)?;
    let stats = gpu
        .time(plan, |s| launch_chase(s, kernels, space, &next, &mut position, steps))?;

    // Every launch continued the same walk: its end is known.
    let total = check_steps + first_pass + (plan.warmup + plan.reps) as u64 * steps;
    let end = gpu.stream.clone_dtoh(&position)?;
    verify::check_exact(
        space.function(),
        &format!("{size}, after {total} steps"),
        &end,
        &[reference::follow(&next_host, start, total)],
    )?;
    Ok(ChaseResult { space, footprint_bytes, steps, stats })
}
// ANCHOR_END: measure_chase

/// The on-chip bandwidth kernels' results; each amount is bytes delivered to the threads
/// (4 per float added).
#[derive(Debug, Clone)]
pub struct OnChip {
    pub shared: Timed,
    pub registers: Timed,
    pub passes: u32,
}

/// Verifies, then times, `bandwidth_shared` and `bandwidth_registers` on enough blocks to fill
/// every SM, `passes` passes over 32 floats per thread.
pub fn measure_onchip(
    gpu: &Gpu,
    kernels: &Kernels,
    passes: u32,
    plan: Plan,
) -> anyhow::Result<OnChip> {
    if passes == 0 || passes > i32::MAX as u32 {
        return Err(UsageError(format!(
            "the on-chip kernels need 1 to {} passes",
            i32::MAX
        ))
        .into());
    }
    let mut timed = Vec::new();
    for (name, f) in [
        ("bandwidth_shared", &kernels.bandwidth_shared),
        ("bandwidth_registers", &kernels.bandwidth_registers),
    ] {
        let blocks = Kernels::resident_blocks(gpu, f, 0)?;
        let want = if name == "bandwidth_shared" {
            reference::bandwidth_shared(blocks, BLOCK, passes)
        } else {
            reference::bandwidth_registers(blocks, BLOCK, passes)
        };
        let mut out = gpu.stream.alloc_zeros::<f32>((blocks * BLOCK) as usize)?;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let passes_arg = passes as i32;
        let launch =
            |s: &Arc<CudaStream>, out: &mut CudaSlice<f32>| -> anyhow::Result<()> {
                // SAFETY: matches bandwidth_*(float* out, int passes); out holds one float per thread.
                unsafe { s.launch_builder(f).arg(out).arg(&passes_arg).launch(cfg)? };
                Ok(())
            };
        gpu.poison(&mut out)?;
        launch(&gpu.stream, &mut out)?;
        verify::check_exact(
            name,
            &format!("{blocks} blocks, {passes} passes"),
            &gpu.stream.clone_dtoh(&out)?,
            &want,
        )?;
        let stats = gpu.time(plan, |s| launch(s, &mut out))?;
        let bytes =
            blocks as f64 * BLOCK as f64 * passes as f64 * TILE_ROWS as f64 * 4.0;
        timed.push(Timed { stats, amount: bytes });
    }
    let registers = timed.pop().expect("two kernels timed");
    let shared = timed.pop().expect("two kernels timed");
    Ok(OnChip { shared, registers, passes })
}
