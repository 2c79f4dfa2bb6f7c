//! What a program pays once, outside any transfer: the host buffer of A, pageable or
//! pinned (allocated pinned, or registered after the fact), and a CUDA context. Timed on
//! the host clock, since none of it is work on a stream.

use std::ffi::c_void;

use cudarc::driver::{result, sys};

use crate::harness::timing::time_host;
use crate::harness::{Gpu, Stats};

/// The host-side costs of A's buffer at one size, each the median of several repetitions.
#[derive(Debug, Clone)]
pub struct HostCosts {
    /// Fresh pageable pages (`mmap`), a write of every byte (the first touch that maps
    /// them), `munmap`: what `malloc` of a new buffer costs before its data is written.
    pub pageable_alloc: Stats,
    /// `cuMemHostAlloc` (flags 0), a write of every byte, `cuMemFreeHost`.
    pub pinned_alloc: Stats,
    /// `cuMemHostRegister` of a pageable buffer already written, then
    /// `cuMemHostUnregister`: what pinning costs a program whose A is already in memory.
    pub register: Stats,
}

/// Repetitions of the host-side measurements for a buffer of `bytes`: fewer for large
/// buffers, whose allocation alone takes a large fraction of a second.
pub fn host_reps(bytes: usize, reps: usize) -> usize {
    if bytes >= 256 << 20 {
        reps.clamp(1, 3)
    } else {
        reps.clamp(1, 10)
    }
}

/// Times the three ways of getting a host buffer of `bytes` for A.
pub fn measure_host_costs(
    gpu: &Gpu,
    bytes: usize,
    reps: usize,
) -> anyhow::Result<HostCosts> {
    let bytes = bytes.max(1);
    gpu.ctx.bind_to_thread()?;
    let pageable_alloc = time_host(1, reps, || fresh_pages_touched(bytes))?;
    let pinned_alloc = time_host(1, reps, || -> anyhow::Result<()> {
        // SAFETY: the buffer is written before it is read and freed once, here.
        unsafe {
            let p = result::malloc_host(bytes, 0)?;
            std::ptr::write_bytes(p as *mut u8, 1, bytes);
            std::hint::black_box(p);
            result::free_host(p)?;
        }
        Ok(())
    })?;
    let mut a = vec![1u8; bytes];
    let register = time_host(1, reps, || -> anyhow::Result<()> {
        let p = a.as_mut_ptr() as *mut c_void;
        // SAFETY: `a` outlives the registration, which ends before the closure returns.
        unsafe {
            sys::cuMemHostRegister_v2(p, bytes, 0).result()?;
            sys::cuMemHostUnregister(p).result()?;
        }
        Ok(())
    })?;
    Ok(HostCosts { pageable_alloc, pinned_alloc, register })
}

/// Times the creation and destruction of a new CUDA context on the run's GPU (the driver
/// is already initialised): a lower bound on what a program's first CUDA call pays.
pub fn measure_context_creation(gpu: &Gpu, reps: usize) -> anyhow::Result<Stats> {
    let device = gpu.ctx.cu_device();
    let stats = time_host(1, reps, || -> anyhow::Result<()> {
        // SAFETY: the device is the run's; the new context is current only until it is
        // destroyed, which pops it and leaves the run's context current again.
        unsafe {
            let ctx = crate::harness::toolchain::create_context(device)
                .map_err(anyhow::Error::msg)?;
            sys::cuCtxDestroy_v2(ctx).result()?;
        }
        Ok(())
    });
    // Whatever happened, the run's own context is the current one again.
    gpu.ctx.bind_to_thread()?;
    stats
}

// The C library's own mapping calls: `malloc` keeps freed blocks below 32 MiB mapped and
// hands them out again, so a `malloc` + `free` loop would time the first touch once only.
extern "C" {
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: i32,
        flags: i32,
        fd: i32,
        off: i64,
    ) -> *mut c_void;
    fn munmap(addr: *mut c_void, len: usize) -> i32;
}

/// `PROT_READ | PROT_WRITE` and `MAP_PRIVATE | MAP_ANONYMOUS` (Linux).
const PROT_RW: i32 = 0x1 | 0x2;
const MAP_PRIVATE_ANONYMOUS: i32 = 0x02 | 0x20;

/// Maps `bytes` of new anonymous (pageable) memory, writes every byte and unmaps it.
fn fresh_pages_touched(bytes: usize) -> anyhow::Result<()> {
    // SAFETY: a new private anonymous mapping of `bytes`, written inside its bounds and
    // unmapped once.
    unsafe {
        let p =
            mmap(std::ptr::null_mut(), bytes, PROT_RW, MAP_PRIVATE_ANONYMOUS, -1, 0);
        anyhow::ensure!(p as isize != -1, "mmap of {bytes} bytes failed");
        std::ptr::write_bytes(p as *mut u8, 1, bytes);
        std::hint::black_box(p);
        anyhow::ensure!(munmap(p, bytes) == 0, "munmap of {bytes} bytes failed");
    }
    Ok(())
}
