//! The measurements every chapter divides by, shared so that each chapter measures its own
//! ceiling in the same run with the same code: the device copy and host↔device transfers.
//! The chapter "Measuring a GPU" explains them; the rest of the book uses them.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::kernels::{KernelName, KernelTable};
use super::stats::Rate;
use super::timing::Plan;
use super::{inputs, verify, Gpu, Stats, L2};

crate::kernel_names! {
    /// The kernels of `kernels/ceilings.cu`.
    pub enum CeilingKernel in "ceilings.cu" {
        /// `dst[i] = src[i]`: one 16-byte access per thread, one thread per float4.
        Copy => "copy_f32",
        /// The same copy as a grid-stride loop, four loads in flight per thread.
        CopyGridStride => "copy_f32_grid_stride",
        /// Does nothing: what a launch costs.
        Empty => "empty",
        /// Eight independent FMA chains per thread, in registers: the FP32 ceiling.
        FmaF32 => "fma_peak_f32",
        /// The same in double precision: the FP64 ceiling.
        FmaF64 => "fma_peak_f64",
        /// Repeated reads of an L2-resident buffer inside one launch: the L2 ceiling.
        L2Read => "l2_read",
        /// Reads one uint4 per thread and stores one XOR per block: the read ceiling.
        ReadOnly => "read_u32",
        /// Stores one uint4 per thread: the write ceiling.
        WriteOnly => "write_u32",
        /// Reads a never-written buffer: the L2 flush that leaves no dirty line.
        FlushRead => "flush_read",
    }
}

/// Threads per block of the copy kernel.
const COPY_BLOCK: u32 = 256;

/// The copy kernel (and its grid-stride variant), ready to launch.
pub struct CopyKernel {
    pub table: KernelTable<CeilingKernel>,
    /// Resident blocks of the grid-stride variant: enough to fill every SM.
    resident_grid: u32,
}

impl CopyKernel {
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let table = KernelTable::<CeilingKernel>::load(gpu)?;
        let f = table.get(CeilingKernel::CopyGridStride);
        let per_sm =
            f.occupancy_max_active_blocks_per_multiprocessor(COPY_BLOCK, 0, None)?;
        Ok(Self { table, resident_grid: (gpu.info.sms as u32) * per_sm.max(1) })
    }

    /// Enqueues `dst[..n] = src[..n]` on `stream`: one thread per float4.
    pub fn launch(
        &self,
        stream: &Arc<CudaStream>,
        src: &CudaSlice<f32>,
        dst: &mut CudaSlice<f32>,
        n: usize,
    ) -> anyhow::Result<()> {
        self.launch_as(CeilingKernel::Copy, stream, src, dst, n)
    }

    /// Enqueues the same copy through `kernel`: [`CeilingKernel::Copy`] (one thread per
    /// float4) or [`CeilingKernel::CopyGridStride`] (resident blocks only).
    pub fn launch_as(
        &self,
        kernel: CeilingKernel,
        stream: &Arc<CudaStream>,
        src: &CudaSlice<f32>,
        dst: &mut CudaSlice<f32>,
        n: usize,
    ) -> anyhow::Result<()> {
        let blocks = match kernel {
            CeilingKernel::Copy => {
                // One thread per float4, and at least the three threads of a tail.
                let threads = (n / 4).max(n % 4).max(1);
                let blocks = threads.div_ceil(COPY_BLOCK as usize);
                anyhow::ensure!(
                    blocks <= i32::MAX as usize,
                    "a copy of {n} floats is too large"
                );
                blocks as u32
            }
            CeilingKernel::CopyGridStride => {
                let blocks_needed =
                    n.div_ceil(4).div_ceil(COPY_BLOCK as usize).max(1) as u32;
                self.resident_grid.min(blocks_needed)
            }
            other => anyhow::bail!("`{}` is not a copy kernel", other.function()),
        };
        assert!(src.len() >= n && dst.len() >= n);
        let n64 = n as u64;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (COPY_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let f = self.table.get(kernel);
        // SAFETY: both kernels take (const float*, float*, unsigned long long); the grid
        // covers n as each kernel's launch rule requires.
        unsafe { stream.launch_builder(f).arg(src).arg(dst).arg(&n64).launch(cfg)? };
        Ok(())
    }
}

impl CopyKernel {
    /// The grid of `read_u32` and `write_u32` over `n_vec` 16-byte words: one thread each.
    pub fn read_write_config(n_vec: usize) -> anyhow::Result<LaunchConfig> {
        let blocks = n_vec.div_ceil(COPY_BLOCK as usize).max(1);
        anyhow::ensure!(
            blocks <= i32::MAX as usize,
            "a read of {n_vec} 16-byte words is too large"
        );
        Ok(LaunchConfig {
            grid_dim: (blocks as u32, 1, 1),
            block_dim: (COPY_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        })
    }

    /// Enqueues `read_u32` over the first `n_vec` 16-byte words of `src`; `block_xor` needs
    /// one word per block of [`Self::read_write_config`].
    pub fn launch_read(
        &self,
        stream: &Arc<CudaStream>,
        src: &CudaSlice<f32>,
        n_vec: usize,
        block_xor: &mut CudaSlice<u32>,
    ) -> anyhow::Result<()> {
        let cfg = Self::read_write_config(n_vec)?;
        assert!(src.len() >= 4 * n_vec && block_xor.len() >= cfg.grid_dim.0 as usize);
        let n64 = n_vec as u64;
        let f = self.table.get(CeilingKernel::ReadOnly);
        // SAFETY: read_u32 takes (const uint4*, unsigned long long, unsigned int*); src
        // holds 4 × n_vec floats and block_xor one word per block (asserted above).
        unsafe {
            stream.launch_builder(f).arg(src).arg(&n64).arg(block_xor).launch(cfg)?
        };
        Ok(())
    }

    /// Enqueues `write_u32`: word i of `dst` becomes i + `seed`, for i < 4 × `n_vec`.
    pub fn launch_write(
        &self,
        stream: &Arc<CudaStream>,
        dst: &mut CudaSlice<f32>,
        n_vec: usize,
        seed: u32,
    ) -> anyhow::Result<()> {
        let cfg = Self::read_write_config(n_vec)?;
        assert!(dst.len() >= 4 * n_vec);
        let n64 = n_vec as u64;
        let f = self.table.get(CeilingKernel::WriteOnly);
        // SAFETY: write_u32 takes (uint4*, unsigned long long, unsigned int); dst holds at
        // least 4 × n_vec words (asserted above).
        unsafe { stream.launch_builder(f).arg(dst).arg(&n64).arg(&seed).launch(cfg)? };
        Ok(())
    }

    /// Verifies, then times, the two halves of the copy on its buffers: `read_u32` over
    /// `src` (whose words are `host_src`'s bits) and `write_u32` into `dst`.
    pub fn measure_read_write(
        &self,
        gpu: &Gpu,
        src: &CudaSlice<f32>,
        dst: &mut CudaSlice<f32>,
        host_src: &[f32],
        plan: Plan,
    ) -> anyhow::Result<(Stats, Stats)> {
        let n_vec = host_src.len() / 4;
        let size = format!("{} bytes", n_vec * 16);
        let blocks = Self::read_write_config(n_vec)?.grid_dim.0 as usize;
        let mut block_xor = gpu.stream.alloc_zeros::<u32>(blocks)?;
        // The XOR of every word read, in any order: exact.
        let want = host_src[..n_vec * 4].iter().fold(0u32, |x, v| x ^ v.to_bits());
        let read = gpu.verify_then_time_output(
            &mut block_xor,
            |s, out| self.launch_read(s, src, n_vec, out),
            |got| {
                let x = got.iter().fold(0u32, |x, w| x ^ w);
                verify::check_exact("read_u32", &size, &[x], &[want])
            },
            &[plan],
        )?;
        let seed = 0x9E37_79B9u32;
        let write = gpu.verify_then_time(
            dst,
            |gpu, dst| gpu.poison(dst),
            |s, dst| self.launch_write(s, dst, n_vec, seed),
            |gpu, dst| {
                let got = gpu.stream.clone_dtoh(dst)?;
                // Word i holds i + seed (write_u32); compared as bits, never as floats.
                Ok(verify::check_exact_by(
                    "write_u32",
                    &size,
                    n_vec * 4,
                    |i| got[i].to_bits(),
                    |i| (i as u32).wrapping_add(seed),
                )?)
            },
            &[plan],
        )?;
        Ok((read.time().clone(), write.time().clone()))
    }
}

/// What [`measure_copy`] found for one size.
#[derive(Debug, Clone)]
pub struct CopyResult {
    pub bytes: usize,
    pub kernel: Stats,
    pub memcpy: Stats,
    /// The read-only stream over the same source (`read_u32`): the whole 16-byte words of
    /// it, [`CopyResult::read_bytes`].
    pub read: Stats,
    /// The write-only stream over the same destination (`write_u32`), same bytes.
    pub write: Stats,
}

impl CopyResult {
    /// Bandwidth in GB/s counting bytes read plus bytes written (2 × size), at the median,
    /// best and worst repetition, for the copy kernel.
    pub fn kernel_gbps(&self) -> Rate {
        self.kernel.rate(2.0 * self.bytes as f64 / 1e9)
    }
    pub fn memcpy_gbps(&self) -> Rate {
        self.memcpy.rate(2.0 * self.bytes as f64 / 1e9)
    }

    /// The bytes the read-only and the write-only streams move: the copy's, less a tail of
    /// fewer than 16 bytes.
    pub fn read_bytes(&self) -> usize {
        self.bytes / 16 * 16
    }

    /// Read bandwidth in GB/s of the read-only stream (bytes read once; its one 4-byte
    /// store per 4096 bytes read is not counted).
    pub fn read_gbps(&self) -> Rate {
        self.read.rate(self.read_bytes() as f64 / 1e9)
    }

    /// Write bandwidth in GB/s of the write-only stream.
    pub fn write_gbps(&self) -> Rate {
        self.write.rate(self.read_bytes() as f64 / 1e9)
    }

    // ANCHOR: best_copy
    /// The ceiling every chapter divides by: the faster (by median) of the copy
    /// kernel and `cuMemcpyDtoD`, and which of the two it was.
    pub fn best(&self) -> (Rate, &'static str) {
        let (stats, by) = self.best_stats();
        (stats.rate(2.0 * self.bytes as f64 / 1e9), by)
    }

    /// The timings of the faster of the two copies, and its name.
    pub fn best_stats(&self) -> (&Stats, &'static str) {
        if self.memcpy.median_ms < self.kernel.median_ms {
            (&self.memcpy, "cuMemcpyDtoD")
        } else {
            (&self.kernel, "copy kernel")
        }
    }

    /// The median of [`CopyResult::best`], in GB/s.
    pub fn best_gbps(&self) -> f64 {
        self.best().0.median
    }
    // ANCHOR_END: best_copy
}

/// How far apart the read-only and the copy ceilings must be for a table of a
/// read-dominated kernel to show its fraction of the copy beside its fraction of the read
/// ceiling: 2%.
pub const READ_COPY_APART: f64 = 0.02;

/// The three device-memory ceilings one [`measure_copy`] measured on the same buffers, as
/// medians in GB/s: what a chapter divides its kernels by, each by the one whose traffic
/// matches its own, and what each of its records says it measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceilings {
    /// Bytes of the copy's source (and of each stream).
    pub bytes: usize,
    /// The cache state they were measured in.
    pub l2: L2,
    /// The faster of the copy kernel and `cuMemcpyDtoD` (read + write), and which it was.
    pub copy: f64,
    pub copy_by: &'static str,
    /// The read-only stream (each byte once).
    pub read: f64,
    /// The write-only stream (each byte once).
    pub write: f64,
}

impl Ceilings {
    /// The medians of `r`, measured with L2 `l2`.
    pub fn of(r: &CopyResult, l2: L2) -> Self {
        let (copy, copy_by) = r.best();
        Self {
            bytes: r.bytes,
            l2,
            copy: copy.median,
            copy_by,
            read: r.read_gbps().median,
            write: r.write_gbps().median,
        }
    }

    /// Whether the read-only ceiling is more than [`READ_COPY_APART`] away from the copy:
    /// then a read-dominated kernel's fraction of the copy is shown beside its fraction of
    /// the read ceiling.
    pub fn read_apart_from_copy(&self) -> bool {
        (self.read / self.copy - 1.0).abs() > READ_COPY_APART
    }

    fn size(&self) -> String {
        if self.bytes.is_multiple_of(1 << 20) {
            format!("{} MiB", self.bytes >> 20)
        } else {
            format!("{} bytes", self.bytes)
        }
    }

    /// What every record divided by one of the ceilings carries, so that it says all three:
    /// `copy_ceiling`, `read_ceiling` and `write_ceiling`, each with how it was measured.
    pub fn meta(&self) -> [(&'static str, String); 3] {
        let (size, l2) = (self.size(), self.l2);
        [
            (
                "copy_ceiling",
                format!(
                    "{:.0} GB/s ({}, {size}, L2 {l2}, read + write)",
                    self.copy, self.copy_by
                ),
            ),
            (
                "read_ceiling",
                format!("{:.0} GB/s (read-only kernel, {size}, L2 {l2})", self.read),
            ),
            (
                "write_ceiling",
                format!("{:.0} GB/s (write-only kernel, {size}, L2 {l2})", self.write),
            ),
        ]
    }

    /// The line a chapter's summary prints: all three ceilings.
    pub fn line(&self) -> String {
        format!(
            "ceilings: copy {:.0} GB/s ({}), read-only {:.0} GB/s, write-only {:.0} GB/s \
             ({}, L2 {})",
            self.copy,
            self.copy_by,
            self.read,
            self.write,
            self.size(),
            self.l2
        )
    }
}

/// `extra` followed by `owned`, as the pairs a record's metadata is written from.
pub fn with_meta<'a>(
    extra: &[(&'a str, &'a str)],
    owned: &'a [(&'static str, String)],
) -> Vec<(&'a str, &'a str)> {
    let mut all = extra.to_vec();
    all.extend(owned.iter().map(|(k, v)| (*k, v.as_str())));
    all
}

// ANCHOR: measure_copy
/// Verifies, then times, a device-to-device copy of `bytes` bytes: our copy kernel and
/// the driver's `cuMemcpyDtoD`, under the same plan.
pub fn measure_copy(
    gpu: &Gpu,
    copy: &CopyKernel,
    bytes: usize,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<CopyResult> {
    let n = bytes / 4;
    gpu.ensure_fits(2 * n * 4, &format!("a copy of {bytes} bytes"))?;
    let host_src = inputs::random_f32(n, seed);
    let src = gpu.stream.clone_htod(&host_src)?;
    let mut dst = gpu.stream.alloc_zeros::<f32>(n)?;
    let size = format!("{bytes} bytes");
    let kernel = gpu.verify_then_time_output(
        &mut dst,
        |s, dst| copy.launch(s, &src, dst, n),
        |got| verify::check_exact("copy_f32", &size, got, &host_src),
        &[plan],
    )?;
    let memcpy = gpu.verify_then_time_output(
        &mut dst,
        |s, dst| Ok(s.memcpy_dtod(&src, dst)?),
        |got| verify::check_exact("cuMemcpyDtoD", &size, got, &host_src),
        &[plan],
    )?;
    let (read, write) =
        copy.measure_read_write(gpu, &src, &mut dst, &host_src, plan)?;
    Ok(CopyResult {
        bytes,
        kernel: kernel.times[0].clone(),
        memcpy: memcpy.times[0].clone(),
        read,
        write,
    })
}
// ANCHOR_END: measure_copy

/// Direction of a host↔device transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
}

/// Where the host side of a transfer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostMemory {
    /// Ordinary `Vec` memory: the driver copies it through a pinned staging buffer.
    Pageable,
    /// Page-locked (`cuMemHostAlloc` with flags 0 — *not* write-combined, so the CPU can also
    /// read it at full speed): the copy engine reads it directly.
    Pinned,
}

/// Times host↔device copies of `bytes` bytes, after checking a round trip is exact.
pub fn measure_transfer(
    gpu: &Gpu,
    bytes: usize,
    dir: Direction,
    host: HostMemory,
    plan: Plan,
    seed: u64,
) -> anyhow::Result<Stats> {
    gpu.ensure_fits(bytes, &format!("a transfer of {bytes} bytes"))?;
    let data = inputs::random_bytes(bytes, seed);
    let mut dev = gpu.stream.alloc_zeros::<u8>(bytes)?;
    let what = format!("{dir:?} {host:?}");
    match host {
        HostMemory::Pageable => {
            let mut back = vec![0u8; bytes];
            gpu.stream.memcpy_htod(&data, &mut dev)?;
            gpu.stream.memcpy_dtoh(&dev, &mut back)?;
            gpu.stream.synchronize()?;
            verify::check_exact(&what, &format!("{bytes} bytes"), &back, &data)?;
            match dir {
                Direction::HostToDevice => {
                    gpu.time(plan, |s| Ok(s.memcpy_htod(&data, &mut dev)?))
                }
                Direction::DeviceToHost => {
                    gpu.time(plan, |s| Ok(s.memcpy_dtoh(&dev, &mut back)?))
                }
            }
        }
        HostMemory::Pinned => {
            // SAFETY: the buffers are written below before anything reads them.
            let mut pinned =
                unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, 0)? };
            pinned.as_mut_slice()?.copy_from_slice(&data);
            let mut back = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(bytes, 0)? };
            back.as_mut_slice()?.fill(0);
            gpu.stream.memcpy_htod(&pinned, &mut dev)?;
            gpu.stream.memcpy_dtoh(&dev, &mut back)?;
            gpu.stream.synchronize()?;
            verify::check_exact(
                &what,
                &format!("{bytes} bytes"),
                back.as_slice()?,
                &data,
            )?;
            match dir {
                Direction::HostToDevice => {
                    gpu.time(plan, |s| Ok(s.memcpy_htod(&pinned, &mut dev)?))
                }
                Direction::DeviceToHost => {
                    gpu.time(plan, |s| Ok(s.memcpy_dtoh(&dev, &mut back)?))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceilings_say_how_they_were_measured_and_when_read_and_copy_are_apart() {
        let c = Ceilings {
            bytes: 4 << 30,
            l2: L2::Cold,
            copy: 3030.4,
            copy_by: "copy kernel",
            read: 3207.0,
            write: 3299.2,
        };
        assert!(c.read_apart_from_copy());
        assert!(!Ceilings { read: 3080.0, ..c }.read_apart_from_copy());
        assert!(Ceilings { read: 2900.0, ..c }.read_apart_from_copy());
        let meta = c.meta();
        assert_eq!(
            meta[0],
            (
                "copy_ceiling",
                "3030 GB/s (copy kernel, 4096 MiB, L2 cold, read + write)".into()
            )
        );
        assert_eq!(
            meta[1],
            ("read_ceiling", "3207 GB/s (read-only kernel, 4096 MiB, L2 cold)".into())
        );
        assert_eq!(
            meta[2],
            (
                "write_ceiling",
                "3299 GB/s (write-only kernel, 4096 MiB, L2 cold)".into()
            )
        );
        let odd = Ceilings { bytes: 1000, ..c };
        assert!(odd.line().ends_with("write-only 3299 GB/s (1000 bytes, L2 cold)"));
        assert_eq!(
            with_meta(&[("l2", "cold")], &meta[1..2]),
            [("l2", "cold"), ("read_ceiling", meta[1].1.as_str())]
        );
    }
}
