//! The compiler, found and chosen at run time for the reader's driver.
//!
//! NVRTC writes its own toolkit's PTX version, and a driver loads PTX only up to its own CUDA
//! version: PTX from NVRTC 13.0 says `.version 9.0`, which no CUDA 12 driver accepts. Machine
//! code (a CUBIN for the device's own `sm_XY`) has no such gate within a major version, so
//! kernels are compiled to machine code by an NVRTC whose major version the driver runs: 13
//! on a CUDA 13 driver (12 where 13 is missing or cannot target the GPU), 12 on a CUDA 12
//! driver. Compiling for the real architecture also turns an instruction the GPU lacks into
//! a compile error with the assembler's sentence, instead of a failed module load.
//!
//! NVRTC is loaded here by its versioned name, from the loader path, the CUDA toolkit's
//! usual folders or the `nvidia-*` wheels of the active Python, so that `pip install` is
//! enough. cuBLAS is found the same way and loaded before cudarc asks for it.
//!
//! Three driver entry points the book calls changed within CUDA 12 (cudarc's CUDA 13
//! bindings call the new ones, which older drivers lack): [`event_elapsed_ms`],
//! [`prefetch_managed`] and [`create_context`] call whichever this driver has.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::driver::sys::{
    CUcontext, CUdevice, CUdeviceptr, CUevent, CUmemLocation, CUresult, CUstream,
};
use cudarc::driver::{CudaEvent, CudaStream};

/// Forces one NVRTC: `12`, `13`, or the path of a `libnvrtc.so.*`. For testing what a
/// reader with only that NVRTC sees; recorded in the provenance, and such a run never
/// writes into the book's figures.
pub const NVRTC_ENV: &str = "CMBOOK_NVRTC";

/// The oldest driver the book runs on: CUDA 12.0.
pub const OLDEST_DRIVER: (i32, i32) = (12, 0);

/// How a kernel file is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Machine code for `sm_XY` (the number is `10 * major + minor`), loaded as it is.
    Machine(u32),
    /// PTX for `compute_XY`, which the driver compiles for the device it loads on: how a
    /// run pretends an older GPU, and the way to a GPU newer than the NVRTC at hand.
    Ptx(u32),
}

impl Target {
    /// The `--gpu-architecture` value: `sm_90` or `compute_90`.
    pub fn arch(self) -> String {
        match self {
            Target::Machine(cc) => format!("sm_{cc}"),
            Target::Ptx(cc) => format!("compute_{cc}"),
        }
    }

    /// Reads `sm_90` or `compute_90`.
    pub fn parse(arch: &str) -> Option<Self> {
        let number = |s: &str| s.parse::<u32>().ok().filter(|&n| n >= 10);
        if let Some(n) = arch.strip_prefix("sm_") {
            number(n).map(Target::Machine)
        } else {
            arch.strip_prefix("compute_").and_then(number).map(Target::Ptx)
        }
    }

    /// What the provenance says: `sm_90 machine code` or `compute_80 PTX, compiled by the
    /// driver`.
    pub fn describe(self) -> String {
        match self {
            Target::Machine(_) => format!("{} machine code", self.arch()),
            Target::Ptx(_) => format!("{} PTX, compiled by the driver", self.arch()),
        }
    }
}

/// `(8, 6)` → 86.
pub fn cc_number(cc: (i32, i32)) -> u32 {
    (cc.0.max(0) * 10 + cc.1.max(0)) as u32
}

/// What one NVRTC library can do, as the choice needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NvrtcFacts {
    pub version: (i32, i32),
    /// The architectures it compiles for, e.g. `[75, 80, …, 120]`.
    pub archs: Vec<u32>,
}

/// How to compile for a device of capability `device` under a driver of CUDA version
/// `driver` with this NVRTC, or why it cannot. `pretend` is the older capability a run
/// pretends to have (PTX for it, compiled by the driver for the real device).
pub fn plan_target(
    nvrtc: &NvrtcFacts,
    driver: (i32, i32),
    device: (i32, i32),
    pretend: Option<(i32, i32)>,
) -> Result<Target, String> {
    let (major, minor) = nvrtc.version;
    if major > driver.0 {
        return Err(format!(
            "NVRTC {major}.{minor} needs a driver for CUDA {major}.0 or newer; this driver is \
             for CUDA {}.{}",
            driver.0, driver.1
        ));
    }
    // PTX is loaded only by a driver at least as new as the NVRTC that wrote it.
    let ptx_loads = (major, minor) <= driver;
    let ptx_refused = |cc: u32| {
        format!(
            "NVRTC {major}.{minor} writes PTX for compute_{cc} that this driver (CUDA {}.{}) \
             cannot load; use an NVRTC no newer than the driver",
            driver.0, driver.1
        )
    };
    let unknown = |cc: u32| {
        format!(
            "NVRTC {major}.{minor} cannot compile for compute capability {}.{} (it knows {})",
            cc / 10,
            cc % 10,
            list_archs(&nvrtc.archs)
        )
    };
    if let Some(cc) = pretend.map(cc_number) {
        if !nvrtc.archs.contains(&cc) {
            return Err(unknown(cc));
        }
        return if ptx_loads { Ok(Target::Ptx(cc)) } else { Err(ptx_refused(cc)) };
    }
    let cc = cc_number(device);
    if nvrtc.archs.contains(&cc) {
        return Ok(Target::Machine(cc));
    }
    // A GPU newer than this NVRTC: PTX for the newest architecture it knows below the GPU's
    // own, which the driver compiles for the device.
    match nvrtc.archs.iter().copied().filter(|&a| a < cc).max() {
        Some(older) if cc > nvrtc.archs.iter().copied().max().unwrap_or(0) => {
            if ptx_loads {
                Ok(Target::Ptx(older))
            } else {
                Err(ptx_refused(older))
            }
        }
        _ => Err(unknown(cc)),
    }
}

fn list_archs(archs: &[u32]) -> String {
    match (archs.first(), archs.last()) {
        (Some(first), Some(last)) => format!("sm_{first} to sm_{last}"),
        _ => "none".into(),
    }
}

/// The NVRTC major versions worth trying for a driver of CUDA version `driver`, best first,
/// or why the driver is too old. `forced` is a major version the reader asked for.
pub fn nvrtc_majors(
    driver: (i32, i32),
    forced: Option<u32>,
) -> Result<Vec<u32>, String> {
    if driver < OLDEST_DRIVER {
        return Err(format!(
            "this driver is for CUDA {}.{}; the book needs a driver for CUDA 12.0 or newer \
             (release 525 or newer; 580 or newer for CUDA 13)",
            driver.0, driver.1
        ));
    }
    let runnable: Vec<u32> =
        [13u32, 12].into_iter().filter(|&m| m as i32 <= driver.0).collect();
    match forced {
        None => Ok(runnable),
        Some(m) if runnable.contains(&m) => Ok(vec![m]),
        Some(m) => Err(format!(
            "{NVRTC_ENV}={m}: NVRTC {m} needs a driver for CUDA {m}.0 or newer; this driver \
             is for CUDA {}.{}",
            driver.0, driver.1
        )),
    }
}

/// What [`NVRTC_ENV`] asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forced {
    Major(u32),
    Path(PathBuf),
}

/// Reads [`NVRTC_ENV`]: `12`, `13` or the path of an existing file.
pub fn forced_nvrtc(value: Option<&str>) -> Result<Option<Forced>, String> {
    let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    match value {
        "12" => Ok(Some(Forced::Major(12))),
        "13" => Ok(Some(Forced::Major(13))),
        path if Path::new(path).is_file() => Ok(Some(Forced::Path(path.into()))),
        other => Err(format!(
            "{NVRTC_ENV}={other}: give 12, 13 or the path of a libnvrtc.so file"
        )),
    }
}

/// The folders where readers keep CUDA libraries, in the order they are tried after the
/// loader's own path: the toolkit (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda*`,
/// `/opt/cuda`), then the `nvidia-*` wheels of the active Python environments.
pub fn library_folders(major: u32) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(PathBuf::from))
        .collect();
    roots.push("/usr/local/cuda".into());
    let mut versioned: Vec<PathBuf> = glob_dirs(Path::new("/usr/local"), |name| {
        name.starts_with(&format!("cuda-{major}"))
    });
    versioned.sort();
    versioned.reverse();
    roots.extend(versioned);
    roots.push("/opt/cuda".into());
    let mut folders: Vec<PathBuf> = roots
        .iter()
        .flat_map(|r| {
            [r.join("lib64"), r.join("lib"), r.join("targets/x86_64-linux/lib")]
        })
        .collect();
    for site in python_site_packages() {
        folders.extend(wheel_folders(&site, major));
    }
    folders.dedup();
    folders
}

/// Where the NVIDIA wheels put their libraries under a `site-packages`: one folder per
/// component for CUDA 12 (`nvidia/cuda_nvrtc/lib`, `nvidia/cublas/lib`), one shared folder
/// for CUDA 13 (`nvidia/cu13/lib`).
pub fn wheel_folders(site_packages: &Path, major: u32) -> Vec<PathBuf> {
    let nvidia = site_packages.join("nvidia");
    if major >= 13 {
        vec![nvidia.join(format!("cu{major}/lib"))]
    } else {
        vec![nvidia.join("cuda_nvrtc/lib"), nvidia.join("cublas/lib")]
    }
}

fn glob_dirs(parent: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    std::fs::read_dir(parent)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| keep(&e.file_name().to_string_lossy()))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// The `site-packages` folders of the active Python: a virtual or conda environment named
/// by the environment, the user's, and the interpreter's own (asked once, if `python3`
/// exists).
fn python_site_packages() -> Vec<PathBuf> {
    static FOUND: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let mut found = Vec::new();
            for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
                if let Some(prefix) = std::env::var_os(var) {
                    for lib in glob_dirs(&PathBuf::from(prefix).join("lib"), |n| {
                        n.starts_with("python3")
                    }) {
                        found.push(lib.join("site-packages"));
                    }
                }
            }
            let asked = std::process::Command::new("python3")
                .args([
                    "-c",
                    "import site; print('\\n'.join(site.getsitepackages() + \
                     [site.getusersitepackages()]))",
                ])
                .stderr(std::process::Stdio::null())
                .output();
            if let Ok(out) = asked {
                found.extend(
                    String::from_utf8_lossy(&out.stdout)
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                        .map(PathBuf::from),
                );
            }
            found.dedup();
            found
        })
        .clone()
}

/// Opens the first of `name` on the loader path, then `<folder>/name` for each folder.
fn open_library(
    name: &str,
    folders: &[PathBuf],
) -> Option<(libloading::Library, String)> {
    // SAFETY: loading a CUDA library runs only its initialisers.
    if let Ok(lib) = unsafe { libloading::Library::new(name) } {
        return Some((lib, name.to_string()));
    }
    folders.iter().map(|f| f.join(name)).filter(|p| p.is_file()).find_map(|p| {
        // SAFETY: as above.
        unsafe { libloading::Library::new(&p) }
            .ok()
            .map(|lib| (lib, p.display().to_string()))
    })
}

/// An NVRTC library, loaded.
pub struct Nvrtc {
    lib: libloading::Library,
    /// Where it was loaded from: a file name the loader found, or a path.
    pub location: String,
    pub facts: NvrtcFacts,
}

impl fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Nvrtc")
            .field("location", &self.location)
            .field("facts", &self.facts)
            .finish()
    }
}

type Program = *mut std::ffi::c_void;

/// One NVRTC entry point, looked up by name (every one used here exists since CUDA 11.2).
macro_rules! nvrtc_fn {
    ($lib:expr, $name:literal, fn($($arg:ty),* $(,)?)) => {{
        // SAFETY: the signature is NVRTC's own, unchanged since CUDA 11.2.
        let f: libloading::Symbol<unsafe extern "C" fn($($arg),*) -> c_int> =
            unsafe { $lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{} has no {}: {e}", stringify!($lib), $name))?;
        f
    }};
}

/// A compiled kernel file: its PTX (always: chapters read and count it) and, when compiled
/// for a real architecture, the machine code that is loaded.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub ptx: String,
    pub cubin: Option<Vec<u8>>,
    pub target: Target,
}

impl Nvrtc {
    /// Loads the NVRTC at `location` (a file name for the loader, or a path) and asks it what
    /// it is.
    fn open(lib: libloading::Library, location: String) -> Result<Self, String> {
        let facts = {
            let (mut major, mut minor) = (0, 0);
            let version = nvrtc_fn!(lib, "nvrtcVersion", fn(*mut c_int, *mut c_int));
            // SAFETY: writes two ints.
            unsafe { version(&mut major, &mut minor) };
            let count = nvrtc_fn!(lib, "nvrtcGetNumSupportedArchs", fn(*mut c_int));
            let list = nvrtc_fn!(lib, "nvrtcGetSupportedArchs", fn(*mut c_int));
            let mut n = 0;
            // SAFETY: writes one int, then that many.
            unsafe { count(&mut n) };
            let mut archs = vec![0 as c_int; n.max(0) as usize];
            unsafe { list(archs.as_mut_ptr()) };
            let archs =
                archs.into_iter().filter(|&a| a > 0).map(|a| a as u32).collect();
            NvrtcFacts { version: (major, minor), archs }
        };
        Ok(Self { lib, location, facts })
    }

    /// Finds NVRTC `major` on the loader path or in [`library_folders`].
    pub fn find(major: u32) -> Option<Self> {
        let (lib, location) =
            open_library(&format!("libnvrtc.so.{major}"), &library_folders(major))?;
        Self::open(lib, location).ok()
    }

    /// Loads the NVRTC at `path`.
    pub fn at(path: &Path) -> Result<Self, String> {
        // SAFETY: as in `open_library`.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| {
            format!("{}: not a library NVRTC can be loaded from ({e})", path.display())
        })?;
        Self::open(lib, path.display().to_string())
    }

    /// Compiles `source` (named `name` in errors and line info) for `target`; the error is
    /// NVRTC's log.
    pub fn compile(
        &self,
        name: &str,
        source: &str,
        target: Target,
    ) -> Result<Compiled, String> {
        let lib = &self.lib;
        let create = nvrtc_fn!(
            lib,
            "nvrtcCreateProgram",
            fn(
                *mut Program,
                *const c_char,
                *const c_char,
                c_int,
                *const *const c_char,
                *const *const c_char,
            )
        );
        let compile = nvrtc_fn!(
            lib,
            "nvrtcCompileProgram",
            fn(Program, c_int, *const *const c_char)
        );
        let log_size =
            nvrtc_fn!(lib, "nvrtcGetProgramLogSize", fn(Program, *mut usize));
        let log = nvrtc_fn!(lib, "nvrtcGetProgramLog", fn(Program, *mut c_char));
        let ptx_size = nvrtc_fn!(lib, "nvrtcGetPTXSize", fn(Program, *mut usize));
        let ptx = nvrtc_fn!(lib, "nvrtcGetPTX", fn(Program, *mut c_char));
        let cubin_size = nvrtc_fn!(lib, "nvrtcGetCUBINSize", fn(Program, *mut usize));
        let cubin = nvrtc_fn!(lib, "nvrtcGetCUBIN", fn(Program, *mut c_char));
        let destroy = nvrtc_fn!(lib, "nvrtcDestroyProgram", fn(*mut Program));

        let text = CString::new(source).map_err(|_| "the source holds a NUL byte")?;
        let c_name = CString::new(name).map_err(|_| "the name holds a NUL byte")?;
        let options: Vec<CString> = [
            format!("--gpu-architecture={}", target.arch()),
            "--std=c++17".into(),
            "--generate-line-info".into(),
        ]
        .into_iter()
        .map(|o| CString::new(o).expect("no NUL"))
        .collect();
        let option_ptrs: Vec<*const c_char> =
            options.iter().map(|o| o.as_ptr()).collect();
        let mut program: Program = std::ptr::null_mut();
        // SAFETY: every pointer is a live NUL-terminated string or null with count 0; the
        // program is destroyed on every path below.
        let status = unsafe {
            create(
                &mut program,
                text.as_ptr(),
                c_name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if status != 0 {
            return Err(format!("nvrtcCreateProgram failed ({status})"));
        }
        let bytes_of = |size: &dyn Fn(&mut usize) -> c_int,
                        get: &dyn Fn(*mut c_char) -> c_int|
         -> Option<Vec<u8>> {
            let mut n = 0usize;
            if size(&mut n) != 0 || n == 0 {
                return None;
            }
            let mut buf = vec![0u8; n];
            (get(buf.as_mut_ptr().cast()) == 0).then_some(buf)
        };
        let result = (|| {
            // SAFETY: the program is live; the buffers are as long as NVRTC said.
            let status = unsafe {
                compile(program, option_ptrs.len() as c_int, option_ptrs.as_ptr())
            };
            let log_text =
                bytes_of(&|n| unsafe { log_size(program, n) }, &|b| unsafe {
                    log(program, b)
                })
                .map(|b| c_text(&b))
                .unwrap_or_default();
            if status != 0 {
                return Err(if log_text.trim().is_empty() {
                    format!("NVRTC error {status}")
                } else {
                    log_text
                });
            }
            let ptx_text =
                bytes_of(&|n| unsafe { ptx_size(program, n) }, &|b| unsafe {
                    ptx(program, b)
                })
                .map(|b| c_text(&b))
                .ok_or("NVRTC returned no PTX")?;
            let machine = match target {
                Target::Machine(_) => Some(
                    bytes_of(&|n| unsafe { cubin_size(program, n) }, &|b| unsafe {
                        cubin(program, b)
                    })
                    .ok_or("NVRTC returned no machine code")?,
                ),
                Target::Ptx(_) => None,
            };
            Ok(Compiled { ptx: ptx_text, cubin: machine, target })
        })();
        // SAFETY: created above, destroyed once.
        unsafe { destroy(&mut program) };
        result
    }
}

/// NUL-terminated bytes as text.
fn c_text(bytes: &[u8]) -> String {
    CStr::from_bytes_until_nul(bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

/// The NVRTC this process compiles with, and how it compiles for the device.
#[derive(Debug)]
pub struct Toolchain {
    pub nvrtc: Nvrtc,
    /// How kernels are compiled for the open device; `None` where no device was opened (the
    /// CPU tests name their architecture themselves).
    pub target: Option<Target>,
    /// [`NVRTC_ENV`]'s value where it chose the NVRTC.
    pub forced: Option<String>,
}

static CHOSEN: OnceLock<Toolchain> = OnceLock::new();

/// Chooses NVRTC for a device of capability `device` (pretending `pretend`) under a driver
/// of CUDA version `driver`: the newest major version the driver runs that can compile for
/// the device. Once per process; the error is one line saying what to install.
pub fn choose_for_device(
    driver: (i32, i32),
    device: (i32, i32),
    pretend: Option<(i32, i32)>,
) -> Result<&'static Toolchain, String> {
    if let Some(chosen) = CHOSEN.get() {
        return Ok(chosen);
    }
    let env = std::env::var(NVRTC_ENV).ok();
    let forced = forced_nvrtc(env.as_deref())?;
    let mut refusals = Vec::new();
    let candidates: Vec<Nvrtc> = match &forced {
        Some(Forced::Path(path)) => vec![Nvrtc::at(path)?],
        Some(Forced::Major(m)) => nvrtc_majors(driver, Some(*m))?
            .into_iter()
            .filter_map(Nvrtc::find)
            .collect(),
        None => {
            nvrtc_majors(driver, None)?.into_iter().filter_map(Nvrtc::find).collect()
        }
    };
    for nvrtc in candidates {
        match plan_target(&nvrtc.facts, driver, device, pretend) {
            Ok(target) => {
                let chosen = Toolchain {
                    nvrtc,
                    target: Some(target),
                    forced: forced.as_ref().and(env.clone()),
                };
                return Ok(CHOSEN.get_or_init(|| chosen));
            }
            Err(why) => refusals.push(format!("{} ({why})", nvrtc.location)),
        }
    }
    Err(no_nvrtc(driver, &refusals))
}

/// The one line a reader without a usable NVRTC gets: what to install for this driver.
pub fn no_nvrtc(driver: (i32, i32), refusals: &[String]) -> String {
    let install = if driver.0 >= 13 {
        "pip install nvidia-cuda-nvrtc==13.0.* (or the CUDA 13 toolkit)"
    } else {
        "pip install nvidia-cuda-nvrtc-cu12 (or the CUDA 12 toolkit)"
    };
    if refusals.is_empty() {
        format!(
            "no NVRTC found for this driver (CUDA {}.{}): {install}",
            driver.0, driver.1
        )
    } else {
        format!(
            "no NVRTC here can compile for this GPU: {}; {install}",
            refusals.join("; ")
        )
    }
}

/// The NVRTC for work with no device (the CPU tests): the one [`NVRTC_ENV`] names, else the
/// newest found. `None` where there is none.
pub fn without_device() -> Option<&'static Toolchain> {
    if let Some(chosen) = CHOSEN.get() {
        return Some(chosen);
    }
    let env = std::env::var(NVRTC_ENV).ok();
    let nvrtc = match forced_nvrtc(env.as_deref()).ok()? {
        Some(Forced::Path(path)) => Nvrtc::at(&path).ok()?,
        Some(Forced::Major(m)) => Nvrtc::find(m)?,
        None => Nvrtc::find(13).or_else(|| Nvrtc::find(12))?,
    };
    let forced = env.filter(|v| !v.trim().is_empty());
    Some(CHOSEN.get_or_init(|| Toolchain { nvrtc, target: None, forced }))
}

/// The toolchain chosen so far, if any.
pub fn chosen() -> Option<&'static Toolchain> {
    CHOSEN.get()
}

/// cuBLAS for this driver (13 on a CUDA 13 driver, else 12), loaded before cudarc looks for
/// it: cudarc then finds it by its versioned name, wherever it lies. `false` if none.
pub fn preload_cublas(driver: (i32, i32)) -> bool {
    static KEPT: OnceLock<Option<libloading::Library>> = OnceLock::new();
    KEPT.get_or_init(|| {
        [13u32, 12].into_iter().filter(|&m| m as i32 <= driver.0).find_map(|m| {
            open_library(&format!("libcublas.so.{m}"), &library_folders(m)).map(|l| l.0)
        })
    })
    .is_some()
}

/// The milliseconds between two recorded events, through `cuEventElapsedTime_v2` where the
/// driver has it (CUDA 12.8 and newer) and `cuEventElapsedTime` before: cudarc's CUDA 13
/// bindings call only the first, which older drivers lack.
pub fn event_elapsed_ms(start: &CudaEvent, end: &CudaEvent) -> Result<f32, String> {
    type Elapsed = unsafe extern "C" fn(*mut f32, CUevent, CUevent) -> CUresult;
    static FOUND: OnceLock<Option<Elapsed>> = OnceLock::new();
    let f = FOUND
        .get_or_init(|| {
            driver_symbol::<Elapsed>(b"cuEventElapsedTime_v2\0")
                .or_else(|| driver_symbol::<Elapsed>(b"cuEventElapsedTime\0"))
        })
        .ok_or("the driver has no cuEventElapsedTime")?;
    let mut ms = 0f32;
    // SAFETY: both events were created and recorded by the caller, and have completed.
    let status = unsafe { f(&mut ms, start.cu_event(), end.cu_event()) };
    match status {
        CUresult::CUDA_SUCCESS => Ok(ms),
        other => Err(format!("cuEventElapsedTime: {other:?}")),
    }
}

/// Prefetches `bytes` of managed memory at `ptr` to `location` on `stream`, through
/// `cuMemPrefetchAsync_v2` where the driver has it (CUDA 12.2 and newer) and the older
/// entry point, which takes a device ordinal (`-1`: the host), before.
pub fn prefetch_managed(
    ptr: CUdeviceptr,
    bytes: usize,
    location: CUmemLocation,
    stream: &CudaStream,
) -> Result<(), String> {
    let stream = stream.cu_stream();
    type V2 = unsafe extern "C" fn(
        CUdeviceptr,
        usize,
        CUmemLocation,
        c_uint,
        CUstream,
    ) -> CUresult;
    type V1 = unsafe extern "C" fn(CUdeviceptr, usize, c_int, CUstream) -> CUresult;
    static FOUND: OnceLock<(Option<V2>, Option<V1>)> = OnceLock::new();
    let (v2, v1) = FOUND.get_or_init(|| {
        (
            driver_symbol::<V2>(b"cuMemPrefetchAsync_v2\0"),
            driver_symbol::<V1>(b"cuMemPrefetchAsync\0"),
        )
    });
    // SAFETY: the caller passes a managed allocation of at least `bytes` and a live stream.
    let status = unsafe {
        match (v2, v1) {
            (Some(f), _) => f(ptr, bytes, location, 0, stream),
            (None, Some(f)) => {
                let device = match location.type_ {
                    cudarc::driver::sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST => -1,
                    _ => location.id,
                };
                f(ptr, bytes, device, stream)
            }
            (None, None) => return Err("the driver has no cuMemPrefetchAsync".into()),
        }
    };
    match status {
        CUresult::CUDA_SUCCESS => Ok(()),
        other => Err(format!("cuMemPrefetchAsync: {other:?}")),
    }
}

/// Creates a context on `device` and makes it current, through `cuCtxCreate_v4` where the
/// driver has it (CUDA 12.5 and newer) and `cuCtxCreate_v2` before.
pub fn create_context(device: CUdevice) -> Result<CUcontext, String> {
    type V4 =
        unsafe extern "C" fn(*mut CUcontext, *mut c_void, c_uint, CUdevice) -> CUresult;
    type V2 = unsafe extern "C" fn(*mut CUcontext, c_uint, CUdevice) -> CUresult;
    static FOUND: OnceLock<(Option<V4>, Option<V2>)> = OnceLock::new();
    let (v4, v2) = FOUND.get_or_init(|| {
        (
            driver_symbol::<V4>(b"cuCtxCreate_v4\0"),
            driver_symbol::<V2>(b"cuCtxCreate_v2\0"),
        )
    });
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle; no creation parameters are passed.
    let status = unsafe {
        match (v4, v2) {
            (Some(f), _) => f(&mut ctx, std::ptr::null_mut(), 0, device),
            (None, Some(f)) => f(&mut ctx, 0, device),
            (None, None) => return Err("the driver has no cuCtxCreate".into()),
        }
    };
    match status {
        CUresult::CUDA_SUCCESS => Ok(ctx),
        other => Err(format!("cuCtxCreate: {other:?}")),
    }
}

/// A function of the driver library cudarc loaded, if the driver has it.
fn driver_symbol<T: Copy>(name: &[u8]) -> Option<T> {
    // SAFETY: the caller names the symbol's true C signature as `T`; the library stays loaded
    // for the process (cudarc keeps it in a static).
    unsafe { cudarc::driver::sys::culib().get::<T>(name).ok().map(|s| *s) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nvrtc(version: (i32, i32), archs: &[u32]) -> NvrtcFacts {
        NvrtcFacts { version, archs: archs.to_vec() }
    }

    const ARCHS_13_0: &[u32] = &[75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];
    const ARCHS_12_4: &[u32] =
        &[50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];
    const ARCHS_12_8: &[u32] =
        &[50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 120];

    #[test]
    fn a_driver_is_given_the_nvrtc_majors_it_runs_newest_first() {
        assert_eq!(nvrtc_majors((13, 0), None).unwrap(), [13, 12]);
        assert_eq!(nvrtc_majors((12, 2), None).unwrap(), [12]);
        assert_eq!(nvrtc_majors((13, 1), Some(12)).unwrap(), [12]);
        let old = nvrtc_majors((11, 8), None).unwrap_err();
        assert!(
            old.contains("CUDA 11.8") && old.contains("CUDA 12.0 or newer"),
            "{old}"
        );
        let forced = nvrtc_majors((12, 8), Some(13)).unwrap_err();
        assert!(forced.starts_with("CMBOOK_NVRTC=13: NVRTC 13 needs"), "{forced}");
    }

    #[test]
    fn machine_code_for_the_device_when_nvrtc_knows_it() {
        // H100 on its CUDA 13 driver, and the same with NVRTC 12 (machine code has no PTX
        // version gate, so a 12.8 NVRTC is fine on a 12.2 driver too).
        assert_eq!(
            plan_target(&nvrtc((13, 0), ARCHS_13_0), (13, 0), (9, 0), None),
            Ok(Target::Machine(90))
        );
        assert_eq!(
            plan_target(&nvrtc((12, 8), ARCHS_12_8), (12, 2), (8, 6), None),
            Ok(Target::Machine(86))
        );
        // The V100 needs NVRTC 12: 13 has no sm_70.
        let v100 = plan_target(&nvrtc((13, 0), ARCHS_13_0), (13, 0), (7, 0), None);
        assert!(v100
            .unwrap_err()
            .contains("cannot compile for compute capability 7.0"));
        assert_eq!(
            plan_target(&nvrtc((12, 4), ARCHS_12_4), (13, 0), (7, 0), None),
            Ok(Target::Machine(70))
        );
    }

    #[test]
    fn a_gpu_newer_than_nvrtc_gets_ptx_if_the_driver_loads_it() {
        // RTX 5090 (12.0) with NVRTC 12.4: PTX for sm_90, compiled by a 12.8 driver.
        assert_eq!(
            plan_target(&nvrtc((12, 4), ARCHS_12_4), (12, 8), (12, 0), None),
            Ok(Target::Ptx(90))
        );
        // The same NVRTC under a 12.2 driver: its PTX would be refused, so say so.
        let refused = plan_target(&nvrtc((12, 4), ARCHS_12_4), (12, 2), (12, 0), None);
        assert!(refused.unwrap_err().contains("cannot load"));
    }

    #[test]
    fn a_pretended_gpu_gets_ptx_for_it_and_nvrtc_must_know_it() {
        assert_eq!(
            plan_target(&nvrtc((13, 0), ARCHS_13_0), (13, 0), (9, 0), Some((8, 6))),
            Ok(Target::Ptx(86))
        );
        let v100 =
            plan_target(&nvrtc((13, 0), ARCHS_13_0), (13, 0), (9, 0), Some((7, 0)));
        assert!(v100.is_err());
        assert_eq!(
            plan_target(&nvrtc((12, 8), ARCHS_12_8), (13, 0), (9, 0), Some((7, 0))),
            Ok(Target::Ptx(70))
        );
    }

    #[test]
    fn nvrtc_newer_than_the_driver_is_refused() {
        let e = plan_target(&nvrtc((13, 0), ARCHS_13_0), (12, 8), (9, 0), None)
            .unwrap_err();
        assert!(e.contains("needs a driver for CUDA 13.0"), "{e}");
    }

    #[test]
    fn the_forcing_variable_takes_a_major_or_a_file() {
        assert_eq!(forced_nvrtc(None), Ok(None));
        assert_eq!(forced_nvrtc(Some(" ")), Ok(None));
        assert_eq!(forced_nvrtc(Some("12")), Ok(Some(Forced::Major(12))));
        let e = forced_nvrtc(Some("/no/such/libnvrtc.so")).unwrap_err();
        assert!(e.starts_with("CMBOOK_NVRTC=/no/such/libnvrtc.so: give 12, 13"), "{e}");
    }

    #[test]
    fn targets_read_and_write_their_arch() {
        for t in [Target::Machine(90), Target::Ptx(75), Target::Machine(120)] {
            assert_eq!(Target::parse(&t.arch()), Some(t));
        }
        assert_eq!(Target::parse("sm_"), None);
        assert_eq!(Target::parse("compute_x"), None);
        assert_eq!(
            Target::Ptx(80).describe(),
            "compute_80 PTX, compiled by the driver"
        );
    }

    #[test]
    fn wheels_are_looked_for_in_their_own_layout() {
        let site = Path::new("/venv/lib/python3.12/site-packages");
        assert_eq!(wheel_folders(site, 13), [site.join("nvidia/cu13/lib")]);
        assert!(wheel_folders(site, 12).contains(&site.join("nvidia/cuda_nvrtc/lib")));
    }

    #[test]
    fn the_install_line_fits_the_driver() {
        assert!(no_nvrtc((13, 0), &[]).contains("nvidia-cuda-nvrtc==13.0"));
        assert!(no_nvrtc((12, 4), &[]).contains("nvidia-cuda-nvrtc-cu12"));
    }
}
