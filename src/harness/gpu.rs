//! Opening the GPU without surprises.
//!
//! cudarc loads `libcuda` and `libcublas` at run time and *panics* when one is missing, and
//! NVRTC must suit the driver ([`super::toolchain`]). So we look for each library first and
//! turn its absence into [`GpuUnavailable`], which [`crate::harness::run::main`] prints as one
//! line before exiting with code 2.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attr;
use cudarc::driver::{CudaContext, CudaStream};

use super::toolchain::{self, Target};

/// Why no measurement can run on this machine. Printed as one line; exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuUnavailable {
    /// `libcuda.so` (the NVIDIA driver) was not found on the loader path.
    NoDriver,
    /// The driver loaded but reports no CUDA device (or refused to initialise).
    NoDevice(String),
    /// The driver is older than the book supports (CUDA 12.0); the text says which it is.
    OldDriver(String),
    /// No NVRTC (the run-time compiler) this driver runs and that compiles for this GPU; the
    /// text says what to install.
    NoNvrtc(String),
    /// cuBLAS was not found (only examples that compare with cuBLAS need it).
    NoCublas,
    /// NCCL (`libnccl.so`) was not found (only the example that spans several GPUs needs it).
    NoNccl,
    /// A setting of the environment that cannot be met, said in full.
    Setting(String),
    /// A kernel file needs a newer GPU than this one (its `// Needs:` line).
    TooOld { file: String, need: (u32, u32), have: (u32, u32), why: String },
}

impl fmt::Display for GpuUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDriver => write!(
                f,
                "no CUDA driver: libcuda.so was not found (install the NVIDIA driver for CUDA 12.0 or newer)"
            ),
            Self::OldDriver(why) => write!(f, "driver too old: {why}"),
            Self::NoDevice(why) => write!(f, "no CUDA GPU: the driver is installed but {why}"),
            Self::NoNvrtc(why) => write!(f, "{why}"),
            Self::NoCublas => write!(
                f,
                "no cuBLAS: libcublas.so.13 or .so.12 was not found (pip install nvidia-cublas \
                 on a CUDA 13 driver, nvidia-cublas-cu12 on a CUDA 12 driver, or the toolkit)"
            ),
            Self::NoNccl => write!(
                f,
                "no NCCL: libnccl.so was not found (install NCCL, e.g. the libnccl2 package, or put \
                 a link named libnccl.so to its libnccl.so.2 in a folder on LD_LIBRARY_PATH)"
            ),
            Self::Setting(why) => write!(f, "{why}"),
            Self::TooOld { file, need, have, why } => write!(
                f,
                "kernels/{file} needs compute capability {}.{} ({why}); this GPU is {}.{}",
                need.0, need.1, have.0, have.1
            ),
        }
    }
}

impl std::error::Error for GpuUnavailable {}

/// The environment variable with which a run on a newer GPU behaves as one on an older GPU
/// would, e.g. `CMBOOK_PRETEND_CC=8.6`: kernels are compiled for that capability (the driver
/// compiles the PTX for the real device) and every check of what the GPU can run answers as for
/// it. For testing what a reader with that GPU sees; such a run never writes into the book's
/// figures, and its provenance says it pretended.
pub const PRETEND_ENV: &str = "CMBOOK_PRETEND_CC";

/// The capability [`PRETEND_ENV`] asks for, checked against the device's own `real`: a
/// `major.minor` from 7.0 up to the device's. Not set: `None`.
pub fn pretended_capability(
    value: Option<&str>,
    real: (i32, i32),
) -> Result<Option<(i32, i32)>, GpuUnavailable> {
    let Some(value) = value else { return Ok(None) };
    let bad =
        |why: &str| GpuUnavailable::Setting(format!("{PRETEND_ENV}={value}: {why}"));
    let (major, minor) =
        value.trim().split_once('.').ok_or_else(|| bad("not a capability like 8.6"))?;
    let cc: (i32, i32) = (
        major.parse().map_err(|_| bad("not a capability like 8.6"))?,
        minor.parse().map_err(|_| bad("not a capability like 8.6"))?,
    );
    if cc < (7, 0) {
        return Err(bad("the book's kernels need compute capability 7.0 or newer"));
    }
    if cc > real {
        return Err(bad(&format!(
            "a run can only pretend to be an older GPU than this one ({}.{})",
            real.0, real.1
        )));
    }
    Ok(Some(cc))
}

/// The shared memory a GPU of capability `cc` offers, in bytes: what one block may opt in
/// to, and what one SM holds (the CUDA programming guide's table of compute capabilities).
/// A run that pretends `cc` plans with these, not with the real device's.
pub fn shared_memory_of(cc: (i32, i32)) -> (usize, usize) {
    const KIB: usize = 1024;
    match cc {
        (7, 0) | (7, 2) => (96 * KIB, 96 * KIB),
        (7, 5) => (64 * KIB, 64 * KIB),
        (8, 0) => (163 * KIB, 164 * KIB),
        (8, 7) => (163 * KIB, 164 * KIB),
        (9, 0) | (10, _) => (227 * KIB, 228 * KIB),
        // 8.6, 8.9, 12.x: the consumer GPUs.
        _ => (99 * KIB, 100 * KIB),
    }
}

/// Whether the NVIDIA driver's library can be loaded (under a name cudarc looks for).
pub fn driver_present() -> bool {
    // SAFETY: this only tries to dlopen the candidate names; nothing is called.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// The CUDA version the driver supports, e.g. `(13, 0)`; call only after [`driver_present`].
pub fn driver_cuda_version() -> (i32, i32) {
    let mut version = 0i32;
    // SAFETY: writes one int; needs no initialised driver.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) };
    (version / 1000, (version % 1000) / 10)
}

/// Whether a driver of CUDA version `driver` is one the book runs on.
pub fn check_driver(driver: (i32, i32)) -> Result<(), GpuUnavailable> {
    toolchain::nvrtc_majors(driver, None).map(drop).map_err(GpuUnavailable::OldDriver)
}

/// Whether cuBLAS for this driver can be loaded: found where readers keep it and loaded
/// before cudarc asks for it, or on the loader path under a name cudarc looks for.
pub fn cublas_present(driver: (i32, i32)) -> bool {
    // SAFETY: `is_culib_present` only tries to dlopen the candidate names.
    toolchain::preload_cublas(driver)
        || unsafe { cudarc::cublas::sys::is_culib_present() }
}

/// Whether NCCL can be loaded under a name cudarc looks for (`libnccl.so`, ...).
pub fn nccl_present() -> bool {
    // SAFETY: this only tries to dlopen the candidate names; nothing is called.
    unsafe { cudarc::nccl::sys::is_culib_present() }
}

/// What the figures' provenance and the device line say about the device.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub name: String,
    /// The capability every decision uses: the device's, or the older one a run pretends to
    /// have ([`PRETEND_ENV`]).
    pub compute_capability: (i32, i32),
    /// The device's own capability, where the run pretends another.
    pub pretended_on: Option<(i32, i32)>,
    pub sms: i32,
    pub l2_bytes: usize,
    pub total_mem_bytes: usize,
    pub max_threads_per_block: i32,
    pub shared_per_block_optin: usize,
    pub shared_per_sm: usize,
    pub registers_per_sm: i32,
    pub constant_bytes: usize,
    /// The CUDA version the driver supports, e.g. 13.0.
    pub driver_cuda: (i32, i32),
    /// The kernel module's release, e.g. "580.159.04", when the OS says it.
    pub driver_release: String,
    pub nvrtc: (i32, i32),
    /// How kernels are compiled for this device, e.g. `sm_90 machine code`, and with which
    /// NVRTC where a setting forced it.
    pub compiled_as: String,
}

impl DeviceInfo {
    /// `compute_90` for a compute-capability 9.0 device: what NVRTC compiles for (PTX, which
    /// the driver compiles for the device; so a pretended older capability runs on a newer GPU).
    pub fn arch(&self) -> String {
        format!("compute_{}{}", self.compute_capability.0, self.compute_capability.1)
    }

    /// The compute capability as the provenance records it: `9.0`, or `8.0 (pretended on a
    /// 9.0 device)`.
    pub fn capability(&self) -> String {
        let (major, minor) = self.compute_capability;
        match self.pretended_on {
            Some((a, b)) => format!("{major}.{minor} (pretended on a {a}.{b} device)"),
            None => format!("{major}.{minor}"),
        }
    }

    /// NVRTC's version and what it compiles to: `13.0, sm_90 machine code`.
    pub fn nvrtc_line(&self) -> String {
        format!("{}.{}, {}", self.nvrtc.0, self.nvrtc.1, self.compiled_as)
    }

    /// The one line every example prints first.
    pub fn line(&self) -> String {
        format!(
            "GPU: {} | cc {} | {} SMs | L2 {:.0} MiB | {:.1} GiB | driver {} (CUDA {}.{}) | NVRTC {}",
            self.name,
            self.capability(),
            self.sms,
            self.l2_bytes as f64 / (1 << 20) as f64,
            self.total_mem_bytes as f64 / (1u64 << 30) as f64,
            self.driver_release,
            self.driver_cuda.0,
            self.driver_cuda.1,
            self.nvrtc_line()
        )
    }
}

/// An open device: its context, the stream every example times on, and what it is.
pub struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub stream: Arc<CudaStream>,
    pub info: DeviceInfo,
    /// How this device's kernels are compiled.
    pub target: Target,
    /// The buffer [`Gpu::flush_l2`] reads and its kernel, made on first use.
    pub(crate) l2_flush: RefCell<Option<super::timing::L2Flush>>,
    /// Set in the child of a `--counters` run: see [`super::counters`].
    pub(crate) counting: RefCell<Option<super::counters::Counting>>,
}

impl Gpu {
    /// Opens device 0 after checking that the driver and NVRTC exist (and cuBLAS if asked).
    pub fn open(need_cublas: bool) -> Result<Self, GpuUnavailable> {
        Self::open_ordinal(0, need_cublas)
    }

    /// Opens device `ordinal` (0, 1, ...), with the same checks as [`Gpu::open`].
    pub fn open_ordinal(
        ordinal: usize,
        need_cublas: bool,
    ) -> Result<Self, GpuUnavailable> {
        if !driver_present() {
            return Err(GpuUnavailable::NoDriver);
        }
        let driver = driver_cuda_version();
        check_driver(driver)?;
        let count = CudaContext::device_count().map_err(|e| {
            GpuUnavailable::NoDevice(format!("cuInit/cuDeviceGetCount failed ({e:?})"))
        })?;
        if count == 0 {
            return Err(GpuUnavailable::NoDevice("it reports 0 CUDA devices".into()));
        }
        if ordinal >= count as usize {
            return Err(GpuUnavailable::NoDevice(format!(
                "it reports {count} CUDA devices, so there is no device {ordinal}"
            )));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| {
            GpuUnavailable::NoDevice(format!(
                "device {ordinal} could not be opened ({e:?})"
            ))
        })?;
        let mut info = read_info(&ctx).map_err(|e| {
            GpuUnavailable::NoDevice(format!(
                "device {ordinal} could not be queried ({e:?})"
            ))
        })?;
        let pretend = std::env::var(PRETEND_ENV).ok();
        let pretended =
            pretended_capability(pretend.as_deref(), info.compute_capability)?;
        let real = info.compute_capability;
        if let Some(cc) = pretended {
            info.pretended_on = Some(real);
            info.compute_capability = cc;
            let (per_block, per_sm) = shared_memory_of(cc);
            info.shared_per_block_optin = info.shared_per_block_optin.min(per_block);
            info.shared_per_sm = info.shared_per_sm.min(per_sm);
        }
        let chosen = toolchain::choose_for_device(driver, real, pretended)
            .map_err(GpuUnavailable::NoNvrtc)?;
        let target = chosen.target.expect("a device's toolchain has a target");
        info.nvrtc = chosen.nvrtc.facts.version;
        info.compiled_as = match &chosen.forced {
            Some(setting) => {
                format!(
                    "{} (NVRTC forced by {}={setting})",
                    target.describe(),
                    toolchain::NVRTC_ENV
                )
            }
            None => target.describe(),
        };
        if need_cublas && !cublas_present(driver) {
            return Err(GpuUnavailable::NoCublas);
        }
        // A stream of our own (not the legacy default stream) so graphs can capture on it.
        let stream = ctx.new_stream().map_err(|e| {
            GpuUnavailable::NoDevice(format!("no stream could be created ({e:?})"))
        })?;
        // The examples time one stream and synchronise themselves: cudarc's per-buffer event
        // tracking would add event records to every launch we time.
        unsafe { ctx.disable_event_tracking() };
        Ok(Self {
            ctx,
            stream,
            info,
            target,
            l2_flush: RefCell::new(None),
            counting: RefCell::new(super::counters::Counting::from_env()),
        })
    }
}

impl Gpu {
    /// Refuses a request for more device memory than is free, before allocating anything.
    pub fn ensure_fits(&self, bytes_needed: usize, what: &str) -> anyhow::Result<()> {
        let (free, _total) = self.ctx.mem_get_info()?;
        // Leave room for the context, modules and the L2 flush buffer.
        let usable = free.saturating_sub(super::fit::RESERVED_BYTES as usize);
        if bytes_needed > usable {
            return Err(super::run::UsageError(format!(
                "{what} needs {:.2} GiB of device memory but only {:.2} GiB is free on {}",
                bytes_needed as f64 / (1u64 << 30) as f64,
                usable as f64 / (1u64 << 30) as f64,
                self.info.name
            ))
            .into());
        }
        Ok(())
    }
}

fn read_info(
    ctx: &Arc<CudaContext>,
) -> Result<DeviceInfo, cudarc::driver::DriverError> {
    let attr = |a: Attr| ctx.attribute(a);
    Ok(DeviceInfo {
        name: ctx.name()?,
        compute_capability: ctx.compute_capability()?,
        pretended_on: None,
        sms: attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        l2_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
        total_mem_bytes: ctx.total_mem()?,
        max_threads_per_block: attr(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        shared_per_block_optin: attr(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )? as usize,
        shared_per_sm: attr(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        )? as usize,
        registers_per_sm: attr(
            Attr::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        )?,
        constant_bytes: attr(Attr::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY)? as usize,
        driver_cuda: driver_cuda_version(),
        driver_release: driver_release(),
        // Filled in once NVRTC is chosen.
        nvrtc: (0, 0),
        compiled_as: String::new(),
    })
}

/// The NVIDIA kernel module's version as Linux reports it, e.g. "580.159.04".
fn driver_release() -> String {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| parse_driver_release(&text))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Picks the version out of `/proc/driver/nvidia/version`'s first line.
pub fn parse_driver_release(text: &str) -> Option<String> {
    let first = text.lines().next()?;
    first
        .split_whitespace()
        .find(|w| {
            w.split('.').count() >= 2
                && w.split('.')
                    .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_run_may_pretend_only_an_older_capability_from_7_0_up() {
        let h100 = (9, 0);
        assert_eq!(pretended_capability(None, h100).unwrap(), None);
        assert_eq!(pretended_capability(Some("8.6"), h100).unwrap(), Some((8, 6)));
        assert_eq!(pretended_capability(Some("9.0"), h100).unwrap(), Some((9, 0)));
        for (bad, why) in [
            ("10.0", "only pretend to be an older GPU than this one (9.0)"),
            ("6.1", "7.0 or newer"),
            ("eight", "not a capability like 8.6"),
            ("8", "not a capability like 8.6"),
        ] {
            let err = pretended_capability(Some(bad), h100).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("{PRETEND_ENV}={bad}: ")) && err.contains(why),
                "{err}"
            );
        }
    }
    use super::*;

    #[test]
    fn a_pretended_gpu_has_its_own_shared_memory() {
        assert_eq!(shared_memory_of((7, 5)), (64 << 10, 64 << 10));
        assert_eq!(shared_memory_of((8, 6)).0, 99 << 10);
        assert_eq!(shared_memory_of((8, 9)).0, 99 << 10);
        assert_eq!(shared_memory_of((8, 0)).0, 163 << 10);
        // The H100's own attribute: 227 KiB.
        assert_eq!(shared_memory_of((9, 0)).0, 232_448);
        assert_eq!(shared_memory_of((12, 0)).0, 99 << 10);
    }

    #[test]
    fn drivers_from_cuda_12_0_are_accepted_and_older_ones_named() {
        for ok in [(12, 0), (12, 2), (12, 8), (13, 0), (13, 1)] {
            assert_eq!(check_driver(ok), Ok(()), "{ok:?}");
        }
        let old = check_driver((11, 8)).unwrap_err().to_string();
        assert!(
            old.starts_with("driver too old: this driver is for CUDA 11.8"),
            "{old}"
        );
        assert!(!old.contains('\n'));
    }

    #[test]
    fn messages_are_one_line_and_name_the_library() {
        for (e, word) in [
            (GpuUnavailable::NoDriver, "libcuda"),
            (GpuUnavailable::NoNvrtc(toolchain::no_nvrtc((12, 4), &[])), "nvrtc-cu12"),
            (GpuUnavailable::NoCublas, "libcublas"),
            (GpuUnavailable::NoNccl, "libnccl"),
            (
                GpuUnavailable::NoDevice("it reports 0 CUDA devices".into()),
                "0 CUDA devices",
            ),
        ] {
            let text = e.to_string();
            assert!(!text.contains('\n'), "{text}");
            assert!(text.contains(word), "{text}");
        }
    }

    #[test]
    fn driver_release_is_read_from_proc_text() {
        let text = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\nGCC version: gcc 12\n";
        assert_eq!(parse_driver_release(text).as_deref(), Some("580.159.04"));
        assert_eq!(parse_driver_release("garbage"), None);
    }
}
