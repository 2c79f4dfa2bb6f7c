//! The kernel registry and NVRTC compilation.
//!
//! `build.rs` lists every `kernels/*.cu` and embeds it with `include_str!`, so a release binary
//! carries its kernels and a new file is registered by existing. Compilation happens at run time
//! for the device's own `compute_XY`; a failure names the file and carries NVRTC's log.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions, Ptx};

use super::gpu::Gpu;

/// One kernel file, embedded in the binary.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// The file name under `kernels/`, e.g. `ceilings.cu`.
    pub file: &'static str,
    /// Its full text.
    pub source: &'static str,
}

/// Every `kernels/*.cu`, sorted by name.
pub const ALL: &[KernelSource] =
    include!(concat!(env!("OUT_DIR"), "/kernel_registry.rs"));

/// The embedded source of `kernels/<file>`.
pub fn source(file: &str) -> Option<&'static KernelSource> {
    ALL.iter().find(|k| k.file == file)
}

/// A kernel file that NVRTC rejected (or that is not in the registry).
#[derive(Debug)]
pub struct KernelCompileError {
    pub file: String,
    pub arch: String,
    /// NVRTC's own log, verbatim.
    pub log: String,
}

impl fmt::Display for KernelCompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "NVRTC could not compile kernels/{} for {}:\n{}",
            self.file,
            self.arch,
            self.log.trim_end()
        )
    }
}

impl std::error::Error for KernelCompileError {}

/// The options every kernel is compiled with: C++17, line info (so compute-sanitizer reports
/// source lines), and the device's own virtual architecture.
pub fn options(arch: &str) -> CompileOptions {
    CompileOptions {
        // CompileOptions wants a `&'static str`; an arch string is tiny and lives for the program.
        arch: Some(Box::leak(arch.to_string().into_boxed_str())),
        options: vec!["--std=c++17".into(), "--generate-line-info".into()],
        name: None,
        ..Default::default()
    }
}

/// Compiles NVRTC source text to PTX. `file` names the source in errors.
pub fn compile_source(
    file: &str,
    source: &str,
    arch: &str,
) -> Result<Ptx, KernelCompileError> {
    let mut opts = options(arch);
    opts.name = Some(file.to_string());
    compile_ptx_with_opts(source, opts).map_err(|e| KernelCompileError {
        file: file.to_string(),
        arch: arch.to_string(),
        log: match e {
            CompileError::CompileError { log, .. } => {
                log.to_string_lossy().into_owned()
            }
            other => format!("{other:?}"),
        },
    })
}

/// Compiles one registered kernel file.
pub fn compile(file: &str, arch: &str) -> Result<Ptx, KernelCompileError> {
    let k = source(file).ok_or_else(|| KernelCompileError {
        file: file.to_string(),
        arch: arch.to_string(),
        log: format!(
            "no such file in the kernel registry (known: {})",
            names().join(", ")
        ),
    })?;
    compile_source(k.file, k.source, arch)
}

/// The registered file names.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|k| k.file).collect()
}

/// A compiled, loaded kernel file whose functions can be looked up by name.
pub struct Module {
    pub file: String,
    pub module: Arc<CudaModule>,
}

impl Module {
    /// Looks up `extern "C" __global__` function `name`; the error names file and function.
    /// Every function looked up is recorded in [`used`], so a run can say which kernels it ran.
    pub fn function(&self, name: &str) -> anyhow::Result<CudaFunction> {
        let f = self.module.load_function(name).map_err(|e| {
            anyhow::anyhow!("kernels/{}: no function `{}` ({e:?})", self.file, name)
        })?;
        USED.lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(format!("{}:{}", self.file, name));
        Ok(f)
    }
}

/// `file:function` of every kernel this process looked up, for the run's closing line.
static USED: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The kernels this process has looked up so far (`file:function`, sorted).
pub fn used() -> Vec<String> {
    USED.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect()
}

/// The line a successful run ends with: how many kernels it used, and which.
pub fn used_line() -> String {
    let used = used();
    format!("kernels used: {} ({})", used.len(), used.join(", "))
}

impl Gpu {
    /// Compiles `kernels/<file>` for this device and loads it.
    pub fn load(&self, file: &str) -> anyhow::Result<Module> {
        let ptx = compile(file, &self.info.arch())?;
        let module = self.ctx.load_module(ptx).map_err(|e| {
            anyhow::anyhow!("kernels/{file}: the driver could not load the PTX ({e:?})")
        })?;
        Ok(Module { file: file.to_string(), module })
    }
}
