//! Verify, then time: every kernel of `kernels/coalescing.cu` is checked against its CPU
//! reference (output poisoned first, exact comparison) before any repetition is timed.

use std::fmt::Debug;
use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};

use crate::harness::kernels::{self, Module};
use crate::harness::stats::Rate;
use crate::harness::timing::Plan;
use crate::harness::{inputs, verify, Gpu, Stats, UsageError};

use super::readonly::ReadOnlyKernel;
use super::reference::{self, Particle, ParticlesSoa, DRIFT_DT, PARTICLE_BYTES};
use super::transpose::TransposeKernel;
use super::KERNEL_FILE;

/// Threads per block of the one-dimensional kernels.
pub const BLOCK: u32 = 256;
/// `LOADS_IN_FLIGHT` of `affine_read`: elements per thread per round.
const AFFINE_PER_THREAD: usize = 8;
/// `PARTICLES_PER_THREAD` of the drift kernels.
const DRIFT_PER_THREAD: usize = 4;
/// Bytes the drift must move per particle: six 4-byte loads and three 4-byte stores.
pub const DRIFT_USEFUL_BYTES: u64 = 36;

/// A kernel that strides over its data with a grid of resident blocks: enough blocks of
/// [`BLOCK`] threads to fill every SM once, fewer when the data is small.
pub struct GridStrideKernel {
    pub name: &'static str,
    pub f: CudaFunction,
    pub resident_blocks: u32,
}

impl GridStrideKernel {
    fn new(gpu: &Gpu, module: &Module, name: &'static str) -> anyhow::Result<Self> {
        let f = module.function(name)?;
        let per_sm =
            f.occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)?;
        Ok(Self { name, f, resident_blocks: gpu.info.sms as u32 * per_sm.max(1) })
    }

    /// The launch configuration for `n` elements, `per_thread` of them per thread and round.
    pub fn config(&self, n: usize, per_thread: usize) -> LaunchConfig {
        let needed = n.div_ceil(per_thread * BLOCK as usize).max(1);
        let blocks =
            self.resident_blocks.min(u32::try_from(needed).unwrap_or(u32::MAX));
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// Every kernel of the chapter, compiled once for this device.
pub struct Kernels {
    pub affine_f32: GridStrideKernel,
    pub affine_f64: GridStrideKernel,
    pub drift_aos: GridStrideKernel,
    pub drift_soa: GridStrideKernel,
    transposes: Vec<(TransposeKernel, CudaFunction)>,
    readonly: Vec<(ReadOnlyKernel, CudaFunction)>,
    /// The PTX NVRTC produced for `kernels/coalescing.cu` (what [`super::ptx::census`] reads).
    pub ptx: String,
}

impl Kernels {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let ptx = kernels::compile(KERNEL_FILE, &gpu.info.arch())?;
        let ptx_text = ptx.to_src();
        let module = gpu.ctx.load_module(ptx).map_err(|e| {
            anyhow::anyhow!(
                "kernels/{KERNEL_FILE}: the driver could not load the PTX ({e:?})"
            )
        })?;
        let module =
            Module { file: KERNEL_FILE.to_string(), module, ptx: ptx_text.clone() };
        let transposes = TransposeKernel::ALL
            .iter()
            .map(|&k| Ok((k, module.function(k.function())?)))
            .collect::<anyhow::Result<_>>()?;
        let readonly = ReadOnlyKernel::ALL
            .iter()
            .map(|&k| Ok((k, module.function(k.function())?)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            affine_f32: GridStrideKernel::new(gpu, &module, "affine_read_f32")?,
            affine_f64: GridStrideKernel::new(gpu, &module, "affine_read_f64")?,
            drift_aos: GridStrideKernel::new(gpu, &module, "drift_aos")?,
            drift_soa: GridStrideKernel::new(gpu, &module, "drift_soa")?,
            transposes,
            readonly,
            ptx: ptx_text,
        })
    }

    pub fn transpose(&self, kernel: TransposeKernel) -> &CudaFunction {
        &self
            .transposes
            .iter()
            .find(|(k, _)| *k == kernel)
            .expect("every transpose kernel is loaded")
            .1
    }

    pub fn readonly(&self, kernel: ReadOnlyKernel) -> &CudaFunction {
        &self
            .readonly
            .iter()
            .find(|(k, _)| *k == kernel)
            .expect("every read-only kernel is loaded")
            .1
    }
}

/// One verified, timed kernel: its times and the bytes it must move.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub stats: Stats,
    /// Bytes the algorithm moves (reads plus writes of the elements it uses).
    pub useful_bytes: u64,
}

impl Measurement {
    /// Useful bytes per second, in GB/s, at the median, best and worst repetition.
    pub fn gbps(&self) -> Rate {
        self.stats.rate(self.useful_bytes as f64 / 1e9)
    }
}

/// The element types of the affine read.
pub trait Element:
    DeviceRepr + ValidAsZeroBits + Copy + PartialEq + Debug + Send + Sync + 'static
{
    /// `n` seeded random elements.
    fn random(n: usize, seed: u64) -> Vec<Self>;
    /// The `affine_read_*` kernel for this type.
    fn affine_kernel(kernels: &Kernels) -> &GridStrideKernel;
}

impl Element for f32 {
    fn random(n: usize, seed: u64) -> Vec<Self> {
        inputs::random_f32(n, seed)
    }
    fn affine_kernel(kernels: &Kernels) -> &GridStrideKernel {
        &kernels.affine_f32
    }
}

impl Element for f64 {
    fn random(n: usize, seed: u64) -> Vec<Self> {
        inputs::random_f64(n, seed)
    }
    fn affine_kernel(kernels: &Kernels) -> &GridStrideKernel {
        &kernels.affine_f64
    }
}

/// Enqueues `dst[i] = src[offset + i stride]` for `i < n`.
pub fn launch_affine_read<T: Element>(
    stream: &Arc<CudaStream>,
    kernel: &GridStrideKernel,
    src: &CudaSlice<T>,
    dst: &mut CudaSlice<T>,
    (n, stride, offset): (usize, usize, usize),
) -> anyhow::Result<()> {
    assert!(dst.len() >= n, "dst holds {} elements, {n} needed", dst.len());
    assert!(
        n == 0 || offset + (n - 1) * stride < src.len(),
        "the last load would leave src"
    );
    let cfg = kernel.config(n, AFFINE_PER_THREAD);
    let (n, stride, offset) = (n as u64, stride as u64, offset as u64);
    // SAFETY: matches affine_read_*(const T* src, T* dst, u64 n, u64 stride, u64 offset); the
    // asserts keep every access inside the buffers.
    unsafe {
        stream
            .launch_builder(&kernel.f)
            .arg(src)
            .arg(dst)
            .arg(&n)
            .arg(&stride)
            .arg(&offset)
            .launch(cfg)?
    };
    Ok(())
}

// ANCHOR: measure_affine_read
/// Verifies the affine read at `stride` and `offset` over the whole of `src` (which
/// holds `src_host`), then times it. `dst` and `got` must hold the `n` elements it
/// writes.
pub fn measure_affine_read<T: Element>(
    gpu: &Gpu,
    kernels: &Kernels,
    (src, src_host): (&CudaSlice<T>, &[T]),
    (dst, got): (&mut CudaSlice<T>, &mut [T]),
    (stride, offset): (usize, usize),
    plan: Plan,
) -> anyhow::Result<Measurement> {
    let kernel = T::affine_kernel(kernels);
    let n = reference::affine_read_len(src_host.len(), stride, offset);
    let what = (n, stride, offset);

    // Correct before fast: poison, run once, compare every element with the CPU.
    gpu.poison(dst)?;
    launch_affine_read(&gpu.stream, kernel, src, dst, what)?;
    gpu.stream.memcpy_dtoh(&dst.slice(..n), &mut got[..n])?;
    gpu.stream.synchronize()?;
    let want = reference::affine_read(src_host, n, stride, offset);
    let size = format!("n={n} stride={stride} offset={offset}");
    verify::check_exact(kernel.name, &size, &got[..n], &want)?;

    let stats = gpu.time(plan, |s| launch_affine_read(s, kernel, src, dst, what))?;
    let useful_bytes = 2 * (n * std::mem::size_of::<T>()) as u64; // read + written
    Ok(Measurement { stats, useful_bytes })
}
// ANCHOR_END: measure_affine_read

/// The buffers of an affine-read sweep over one source array: allocated, filled and checked
/// for room once, then measured at every stride and offset.
pub struct AffineSweep<T: Element> {
    pub src_host: Vec<T>,
    pub src: CudaSlice<T>,
    pub dst: CudaSlice<T>,
    pub got: Vec<T>,
}

impl<T: Element> AffineSweep<T> {
    /// A source of `len` random elements and room for a unit-stride read of all of them.
    pub fn new(gpu: &Gpu, len: usize, seed: u64) -> anyhow::Result<Self> {
        let bytes = len * std::mem::size_of::<T>();
        gpu.ensure_fits(
            2 * bytes,
            &format!("an affine-read sweep over {bytes} bytes"),
        )?;
        let src_host = T::random(len, seed);
        let src = gpu.stream.clone_htod(&src_host)?;
        let dst = gpu.stream.alloc_zeros::<T>(len)?;
        Ok(Self { src_host, src, dst, got: vec![zeroed_element::<T>(); len] })
    }

    /// [`measure_affine_read`] on these buffers.
    pub fn measure(
        &mut self,
        gpu: &Gpu,
        kernels: &Kernels,
        stride: usize,
        offset: usize,
        plan: Plan,
    ) -> anyhow::Result<Measurement> {
        measure_affine_read(
            gpu,
            kernels,
            (&self.src, &self.src_host),
            (&mut self.dst, &mut self.got),
            (stride, offset),
            plan,
        )
    }
}

/// An all-zero element: what the host buffer holds before the first download.
fn zeroed_element<T: Element>() -> T {
    // SAFETY: `ValidAsZeroBits` says all-zero bytes are a valid T.
    unsafe { std::mem::zeroed() }
}

/// Enqueues the array-of-structs drift.
pub fn launch_drift_aos(
    stream: &Arc<CudaStream>,
    kernel: &GridStrideKernel,
    particles: &mut CudaSlice<Particle>,
    dt: f32,
) -> anyhow::Result<()> {
    let n = particles.len();
    let cfg = kernel.config(n, DRIFT_PER_THREAD);
    let n = n as u64;
    // SAFETY: matches drift_aos(Particle* particles, u64 n, float dt); n is the buffer's length.
    unsafe {
        stream.launch_builder(&kernel.f).arg(particles).arg(&n).arg(&dt).launch(cfg)?
    };
    Ok(())
}

/// The particles as device arrays, one per field.
pub struct DeviceSoa {
    pub x: CudaSlice<f32>,
    pub y: CudaSlice<f32>,
    pub z: CudaSlice<f32>,
    pub vx: CudaSlice<f32>,
    pub vy: CudaSlice<f32>,
    pub vz: CudaSlice<f32>,
    pub mass: CudaSlice<f32>,
}

impl DeviceSoa {
    pub fn upload(gpu: &Gpu, p: &ParticlesSoa) -> anyhow::Result<Self> {
        let up = |v: &Vec<f32>| gpu.stream.clone_htod(v);
        Ok(Self {
            x: up(&p.x)?,
            y: up(&p.y)?,
            z: up(&p.z)?,
            vx: up(&p.vx)?,
            vy: up(&p.vy)?,
            vz: up(&p.vz)?,
            mass: up(&p.mass)?,
        })
    }
}

/// Enqueues the struct-of-arrays drift.
pub fn launch_drift_soa(
    stream: &Arc<CudaStream>,
    kernel: &GridStrideKernel,
    p: &mut DeviceSoa,
    dt: f32,
) -> anyhow::Result<()> {
    let n = p.x.len();
    assert!([p.y.len(), p.z.len(), p.vx.len(), p.vy.len(), p.vz.len()]
        .iter()
        .all(|&l| l == n));
    let cfg = kernel.config(n, DRIFT_PER_THREAD);
    let n = n as u64;
    // SAFETY: matches drift_soa(x, y, z, vx, vy, vz, u64 n, float dt); every array holds n.
    unsafe {
        stream
            .launch_builder(&kernel.f)
            .arg(&mut p.x)
            .arg(&mut p.y)
            .arg(&mut p.z)
            .arg(&p.vx)
            .arg(&p.vy)
            .arg(&p.vz)
            .arg(&n)
            .arg(&dt)
            .launch(cfg)?
    };
    Ok(())
}

/// Verifies, then times, both drifts on `particles`. The update is in place, so nothing can
/// be poisoned; the inputs make every position change (see `reference::random_particles`),
/// so a position the kernel did not write fails the exact comparison just the same.
pub fn measure_drifts(
    gpu: &Gpu,
    kernels: &Kernels,
    particles: &ParticlesSoa,
    plan: Plan,
) -> anyhow::Result<(Measurement, Measurement)> {
    let n = particles.len();
    gpu.ensure_fits(
        2 * n * PARTICLE_BYTES as usize,
        &format!("{n} particles in both layouts"),
    )?;
    let size = format!("n={n}");
    let useful_bytes = DRIFT_USEFUL_BYTES * n as u64;

    let aos_host = particles.to_aos();
    let mut aos = gpu.stream.clone_htod(&aos_host)?;
    launch_drift_aos(&gpu.stream, &kernels.drift_aos, &mut aos, DRIFT_DT)?;
    verify::check_exact(
        "drift_aos",
        &size,
        &gpu.stream.clone_dtoh(&aos)?,
        &reference::drift_aos(&aos_host, DRIFT_DT),
    )?;
    let aos_stats = gpu
        .time(plan, |s| launch_drift_aos(s, &kernels.drift_aos, &mut aos, DRIFT_DT))?;
    drop(aos);

    let mut soa = DeviceSoa::upload(gpu, particles)?;
    launch_drift_soa(&gpu.stream, &kernels.drift_soa, &mut soa, DRIFT_DT)?;
    let (x, y, z) = reference::drift_soa(particles, DRIFT_DT);
    for (name, dev, want) in [
        ("drift_soa x", &soa.x, &x),
        ("drift_soa y", &soa.y, &y),
        ("drift_soa z", &soa.z, &z),
        ("drift_soa vx (read only)", &soa.vx, &particles.vx),
        ("drift_soa vy (read only)", &soa.vy, &particles.vy),
        ("drift_soa vz (read only)", &soa.vz, &particles.vz),
    ] {
        verify::check_exact(name, &size, &gpu.stream.clone_dtoh(dev)?, want)?;
    }
    let soa_stats = gpu
        .time(plan, |s| launch_drift_soa(s, &kernels.drift_soa, &mut soa, DRIFT_DT))?;
    Ok((
        Measurement { stats: aos_stats, useful_bytes },
        Measurement { stats: soa_stats, useful_bytes },
    ))
}

/// Enqueues one transpose kernel (or the tile-shaped copy) on a `rows` × `cols` input.
pub fn launch_transpose(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    kernel: TransposeKernel,
    input: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    (rows, cols): (usize, usize),
) -> anyhow::Result<()> {
    assert!(input.len() >= rows * cols && out.len() >= rows * cols);
    let (gx, gy) = kernel.grid(rows as u64, cols as u64);
    let cfg = LaunchConfig {
        grid_dim: (gx, gy, 1),
        block_dim: (32, kernel.block_rows() as u32, 1),
        shared_mem_bytes: 0,
    };
    let (rows, cols) = (rows as u64, cols as u64);
    // SAFETY: matches (const float* in, float* out, u64 rows, u64 cols); every access checks
    // its row and column against rows and cols.
    unsafe {
        stream
            .launch_builder(kernels.transpose(kernel))
            .arg(input)
            .arg(out)
            .arg(&rows)
            .arg(&cols)
            .launch(cfg)?
    };
    Ok(())
}

/// The largest side the transposes accept: the grid's y dimension holds at most 65535 tiles.
pub const MAX_TRANSPOSE_SIDE: usize = 65_535 * 32;

// ANCHOR: measure_transposes
/// Verifies each kernel of `which` on a random `rows` × `cols` matrix against the
/// CPU (output poisoned first), and times it right after when `plan` is given.
pub fn measure_transposes(
    gpu: &Gpu,
    kernels: &Kernels,
    which: &[TransposeKernel],
    (rows, cols): (usize, usize),
    plan: Option<Plan>,
    seed: u64,
) -> anyhow::Result<Vec<(TransposeKernel, Option<Measurement>)>> {
    let fits = |side| (1..=MAX_TRANSPOSE_SIDE).contains(&side);
    if !fits(rows) || !fits(cols) {
        let why =
            format!("a transpose needs 1 to {MAX_TRANSPOSE_SIDE} rows and columns");
        return Err(UsageError(format!("{why}, not {rows} x {cols}")).into());
    }
    gpu.ensure_fits(2 * rows * cols * 4, &format!("a {rows} x {cols} transpose"))?;
    let input_host = inputs::random_f32(rows * cols, seed);
    let transposed = reference::transpose(&input_host, rows, cols);
    let input = gpu.stream.clone_htod(&input_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(rows * cols)?;
    let size = format!("{rows} x {cols}");
    let mut results = Vec::new();
    for &kernel in which {
        let launch = |s: &Arc<CudaStream>, out: &mut CudaSlice<f32>| {
            launch_transpose(s, kernels, kernel, &input, out, (rows, cols))
        };
        gpu.poison(&mut out)?;
        launch(&gpu.stream, &mut out)?;
        let want = if kernel.transposes() { &transposed } else { &input_host };
        let got = gpu.stream.clone_dtoh(&out)?;
        verify::check_exact(kernel.function(), &size, &got, want)?;
        let measurement = match plan {
            Some(plan) => Some(Measurement {
                stats: gpu.time(plan, |s| launch(s, &mut out))?,
                useful_bytes: 2 * (rows * cols * 4) as u64, // each element read, written
            }),
            None => None,
        };
        results.push((kernel, measurement));
    }
    Ok(results)
}
// ANCHOR_END: measure_transposes

/// Enqueues one read-only-section kernel. A copy reads `src` (passed as `table`) and ignores
/// `index`; a gather reads both.
pub fn launch_readonly(
    stream: &Arc<CudaStream>,
    kernels: &Kernels,
    kernel: ReadOnlyKernel,
    (table, index): (&CudaSlice<f32>, &CudaSlice<u32>),
    out: &mut CudaSlice<f32>,
) -> anyhow::Result<()> {
    let n = out.len();
    let blocks =
        u32::try_from(n.div_ceil(kernel.per_thread() * BLOCK as usize).max(1))?;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let f = kernels.readonly(kernel);
    let n64 = n as u64;
    if kernel.is_gather() {
        assert!(index.len() >= n);
        // SAFETY: matches gather*(const float* table, const unsigned* index, float* out, u64 n);
        // every index is below table.len() (checked by the caller, see measure_readonly).
        unsafe {
            stream
                .launch_builder(f)
                .arg(table)
                .arg(index)
                .arg(out)
                .arg(&n64)
                .launch(cfg)?
        };
    } else {
        assert!(table.len() >= n);
        // SAFETY: matches copy_*(const float* src, float* dst, u64 n).
        unsafe { stream.launch_builder(f).arg(table).arg(out).arg(&n64).launch(cfg)? };
    }
    Ok(())
}

/// Verifies, then times, every kernel of the read-only section on `n` elements; the gathers
/// read a table of `table_len` floats at random indices. Useful bytes count the streamed
/// arrays only (4 bytes read from `src` or `index`, 4 written to `out`, per element): the
/// table reads are the reuse a cache should absorb.
pub fn measure_readonly(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    table_len: u32,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Vec<(ReadOnlyKernel, Measurement)>> {
    if n == 0 || table_len == 0 {
        return Err(UsageError(
            "the read-only section needs n > 0 and a table of at least one float"
                .into(),
        )
        .into());
    }
    gpu.ensure_fits(
        3 * n * 4 + table_len as usize * 4,
        &format!("the read-only kernels on {n} elements"),
    )?;
    let src_host = inputs::random_f32(n, seed);
    let table_host = inputs::random_f32(table_len as usize, seed + 1);
    let index_host = reference::random_indices(n, table_len, seed + 2);
    let gathered = reference::gather(&table_host, &index_host);
    let src = gpu.stream.clone_htod(&src_host)?;
    let table = gpu.stream.clone_htod(&table_host)?;
    let index = gpu.stream.clone_htod(&index_host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
    let mut results = Vec::new();
    for kernel in ReadOnlyKernel::ALL {
        let (first, want) =
            if kernel.is_gather() { (&table, &gathered) } else { (&src, &src_host) };
        gpu.poison(&mut out)?;
        launch_readonly(&gpu.stream, kernels, kernel, (first, &index), &mut out)?;
        verify::check_exact(
            kernel.function(),
            &format!("n={n}"),
            &gpu.stream.clone_dtoh(&out)?,
            want,
        )?;
        let stats = gpu.time(plan, |s| {
            launch_readonly(s, kernels, kernel, (first, &index), &mut out)
        })?;
        results.push((kernel, Measurement { stats, useful_bytes: 8 * n as u64 }));
    }
    Ok(results)
}
