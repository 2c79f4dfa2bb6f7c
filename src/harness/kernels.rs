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
    /// The PTX the module was loaded from (the coalescing chapter counts its instructions).
    pub ptx: String,
}

impl Module {
    /// Looks up `extern "C" __global__` function `name`; the error names file and function.
    /// Every function looked up is recorded in [`used`], so a run can say which kernels it ran.
    pub fn function(&self, name: &str) -> anyhow::Result<CudaFunction> {
        let f = self.module.load_function(name).map_err(|e| {
            anyhow::anyhow!("kernels/{}: no function `{}` ({e:?})", self.file, name)
        })?;
        mark_used(&self.file, name);
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

fn mark_used(file: &str, function: &str) {
    USED.lock().unwrap_or_else(|p| p.into_inner()).insert(format!("{file}:{function}"));
}

impl Gpu {
    /// Compiles `kernels/<file>` for this device and loads it, keeping the PTX.
    pub fn load(&self, file: &str) -> anyhow::Result<Module> {
        let ptx = compile(file, &self.info.arch())?;
        let text = ptx.to_src();
        let module = self.ctx.load_module(ptx).map_err(|e| {
            anyhow::anyhow!("kernels/{file}: the driver could not load the PTX ({e:?})")
        })?;
        Ok(Module { file: file.to_string(), module, ptx: text })
    }
}

// ANCHOR: kernel_name
/// The functions of the book's kernel files, named by a Rust enum instead of a string:
/// a chapter says `table.get(TransposeKernel::PaddedTile)`, never `"transpose_padded"`.
/// [`kernel_names!`](crate::kernel_names) writes the enum and this impl from one list.
pub trait KernelName: Copy + Eq + std::hash::Hash + fmt::Debug + 'static {
    /// Every function a chapter loads, in the order its tables list them.
    fn all() -> Vec<Self>;
    /// The file under `kernels/` that defines this function.
    fn file(self) -> &'static str;
    /// The `extern "C" __global__` name.
    fn function(self) -> String;
}
// ANCHOR_END: kernel_name

/// Writes an enum of kernel functions and its [`KernelName`] impl:
///
/// ```
/// cmbook::kernel_names! {
///     /// The kernels of `kernels/ceilings.cu`.
///     pub enum Ceiling in "ceilings.cu" {
///         /// `dst[i] = src[i]`, four loads in flight per thread.
///         Copy => "copy_f32",
///         Empty => "empty",
///     }
/// }
/// use cmbook::harness::kernels::KernelName;
/// assert_eq!(Ceiling::Copy.function(), "copy_f32");
/// assert_eq!(Ceiling::all(), [Ceiling::Copy, Ceiling::Empty]);
/// ```
///
/// Functions from several files are listed file by file:
///
/// ```
/// cmbook::kernel_names! {
///     pub enum Mixed {
///         in "ceilings.cu" {
///             Copy => "copy_f32",
///         }
///         in "other.cu" {
///             Sum => "sum",
///             Max => "max",
///         }
///     }
/// }
/// use cmbook::harness::kernels::KernelName;
/// assert_eq!((Mixed::Sum.file(), Mixed::Sum.function()), ("other.cu", "sum".into()));
/// assert_eq!(Mixed::all(), [Mixed::Copy, Mixed::Sum, Mixed::Max]);
/// ```
#[macro_export]
macro_rules! kernel_names {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident in $file:literal {
            $( $(#[$vmeta:meta])* $variant:ident => $function:literal ),+ $(,)?
        }
    ) => {
        $crate::kernel_names! {
            $(#[$meta])*
            $vis enum $name {
                in $file { $( $(#[$vmeta])* $variant => $function ),+ }
            }
        }
    };
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                in $file:literal {
                    $( $(#[$vmeta:meta])* $variant:ident => $function:literal ),+ $(,)?
                }
            )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name { $( $( $(#[$vmeta])* $variant, )+ )+ }

        impl $crate::harness::kernels::KernelName for $name {
            fn all() -> Vec<Self> {
                vec![$( $( $name::$variant, )+ )+]
            }
            fn file(self) -> &'static str {
                match self { $( $( $name::$variant )|+ => $file, )+ }
            }
            fn function(self) -> String {
                match self { $( $( $name::$variant => $function.to_string(), )+ )+ }
            }
        }
    };
}

/// Every function of `K`, compiled (each file once) and loaded for one device, with the PTX
/// kept for the chapters that read it. One loader for every chapter.
pub struct KernelTable<K: KernelName> {
    modules: Vec<Module>,
    functions:
        std::collections::HashMap<K, (CudaFunction, std::sync::atomic::AtomicBool)>,
}

impl<K: KernelName> KernelTable<K> {
    /// Compiles every file `K` names for `gpu` and looks up every function.
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let mut modules: Vec<Module> = Vec::new();
        let mut functions = std::collections::HashMap::new();
        for k in K::all() {
            if !modules.iter().any(|m| m.file == k.file()) {
                modules.push(gpu.load(k.file())?);
            }
            let module =
                modules.iter().find(|m| m.file == k.file()).expect("loaded above");
            let f = module.module.load_function(&k.function()).map_err(|e| {
                anyhow::anyhow!(
                    "kernels/{}: no function `{}` ({e:?})",
                    k.file(),
                    k.function()
                )
            })?;
            functions.insert(k, (f, std::sync::atomic::AtomicBool::new(false)));
        }
        Ok(Self { modules, functions })
    }

    /// The compiled function of `k`; the first call records it as used by this run.
    pub fn get(&self, k: K) -> &CudaFunction {
        let (f, used) =
            self.functions.get(&k).expect("KernelTable::load loads every kernel");
        if !used.swap(true, std::sync::atomic::Ordering::Relaxed) {
            mark_used(k.file(), &k.function());
        }
        f
    }

    /// The module of `file` (for `__constant__` symbols).
    pub fn module(&self, file: &str) -> &Module {
        self.modules.iter().find(|m| m.file == file).expect("a file of this table")
    }

    /// The PTX NVRTC produced for `file`.
    pub fn ptx(&self, file: &str) -> &str {
        &self.module(file).ptx
    }
}

impl Module {
    // ANCHOR: set_constant
    /// Writes `values` into the `__constant__` array `symbol` of this module, through
    /// the driver's address of the symbol viewed as `values.len()` elements.
    pub fn set_constant<T: cudarc::driver::DeviceRepr>(
        &self,
        stream: &Arc<cudarc::driver::CudaStream>,
        symbol: &str,
        values: &[T],
    ) -> anyhow::Result<()> {
        let mut bytes = self.module.get_global(symbol, stream)?;
        // SAFETY: the symbol is an array of plain T; transmute_mut
        // refuses a longer view.
        let mut elements = unsafe { bytes.transmute_mut::<T>(values.len()) }
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "kernels/{}: `{symbol}` holds fewer than {} elements",
                    self.file,
                    values.len()
                )
            })?;
        stream.memcpy_htod(values, &mut elements)?;
        Ok(())
    }
    // ANCHOR_END: set_constant
}
