//! The kernel registry and NVRTC compilation.
//!
//! `build.rs` lists every `kernels/*.cu` and embeds it with `include_str!`, so a release binary
//! carries its kernels and a new file is registered by existing. Compilation happens at run time
//! for the device's own `compute_XY`; a failure names the file and carries NVRTC's log.
//!
//! Kernel files share code through headers, `kernels/*.cuh`, embedded the same way: NVRTC is
//! given no files, so [`expand`] pastes each `#include "<name>.cuh"` before it compiles.

use std::fmt;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;

use super::gpu::{Gpu, GpuUnavailable};
pub use super::toolchain::Compiled;
use super::toolchain::{self, Target};

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

/// Every `kernels/*.cuh`, sorted by name: code that several kernel files share. A header is
/// never compiled on its own; [`expand`] pastes it into each file that includes it.
pub const HEADERS: &[KernelSource] =
    include!(concat!(env!("OUT_DIR"), "/kernel_headers.rs"));

/// The embedded source of `kernels/<file>`, as written (its includes not expanded). The
/// entry points are always there: a header holds only what they call.
pub fn source(file: &str) -> Option<&'static KernelSource> {
    ALL.iter().find(|k| k.file == file)
}

/// An `#include "…"` of a kernel file that [`expand`] cannot resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncludeError {
    /// The file under `kernels/` whose line holds the directive.
    pub file: String,
    /// That line, counted from 1.
    pub line: usize,
    /// The header the directive names.
    pub header: String,
    pub why: String,
}

impl fmt::Display for IncludeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "kernels/{}:{}: cannot include \"{}\": {}",
            self.file, self.line, self.header, self.why
        )
    }
}

impl std::error::Error for IncludeError {}

/// The text NVRTC compiles for `kernels/<file>` (`source` is its text): every line
/// `#include "<name>.cuh"` replaced by that header from [`HEADERS`]. `#line` directives before
/// and after the header's text keep the line info true: NVRTC's errors, the PTX's `.loc`
/// lines and so compute-sanitizer's reports name `<name>.cuh` and its own lines inside it,
/// and the kernel file's own lines after it. A file without such an include is returned as
/// it is. A header that includes another, or a header included twice, is an error: one
/// level keeps every file's text a plain concatenation a reader can follow.
/// (`#include <…>` is left to NVRTC, which has a few headers built in.)
pub fn expand(file: &str, source: &str) -> Result<String, IncludeError> {
    expand_with(file, source, HEADERS)
}

fn expand_with(
    file: &str,
    source: &str,
    headers: &[KernelSource],
) -> Result<String, IncludeError> {
    if !source.lines().any(|l| quoted_include(l).is_some()) {
        return Ok(source.to_string());
    }
    let mut text = String::with_capacity(source.len());
    let mut included: Vec<&str> = Vec::new();
    for (line, number) in source.split_inclusive('\n').zip(1..) {
        let Some(name) = quoted_include(line) else {
            text.push_str(line);
            continue;
        };
        let refuse = |why: String| IncludeError {
            file: file.to_string(),
            line: number,
            header: name.to_string(),
            why,
        };
        let header = headers.iter().find(|h| h.file == name).ok_or_else(|| {
            let known: Vec<&str> = headers.iter().map(|h| h.file).collect();
            refuse(format!(
                "no such header in kernels/ (headers: {})",
                known.join(", ")
            ))
        })?;
        if included.contains(&name) {
            return Err(refuse("included twice".into()));
        }
        included.push(name);
        if let Some((nested, at)) = header
            .source
            .lines()
            .zip(1..)
            .find_map(|(l, at)| quoted_include(l).map(|n| (n, at)))
        {
            return Err(IncludeError {
                file: header.file.to_string(),
                line: at,
                header: nested.to_string(),
                why: format!(
                    "a header includes no other header (include both from kernels/{file})"
                ),
            });
        }
        // The names are the registry's own file names (ASCII, no quotes), so Rust's string
        // quoting is C's.
        text.push_str(&format!("#line 1 {:?}\n", header.file));
        text.push_str(header.source);
        if !header.source.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("#line {} {file:?}\n", number + 1));
    }
    Ok(text)
}

/// The header a line `#include "name"` names (a comment may follow it).
fn quoted_include(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let rest = rest.strip_prefix("include")?.trim_start().strip_prefix('"')?;
    let (name, after) = rest.split_once('"')?;
    let after = after.trim();
    (after.is_empty() || after.starts_with("//")).then_some(name)
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

/// Compiles the text of a kernel file, its includes expanded first ([`expand`]), for `arch`:
/// `sm_90` gives machine code (and the PTX), `compute_90` PTX only. `file` names the source
/// in errors and NVRTC's line info. Options: C++17 and line info (so compute-sanitizer
/// reports source lines). The NVRTC is the one chosen for the open device, or with no
/// device the newest found ([`toolchain`]).
pub fn compile_source(
    file: &str,
    source: &str,
    arch: &str,
) -> Result<Compiled, KernelCompileError> {
    let refuse = |log: String| KernelCompileError {
        file: file.to_string(),
        arch: arch.to_string(),
        log,
    };
    let source = expand(file, source).map_err(|e| refuse(e.to_string()))?;
    let target = Target::parse(arch)
        .ok_or_else(|| refuse("not an architecture like sm_90 or compute_90".into()))?;
    let chosen = toolchain::chosen()
        .or_else(toolchain::without_device)
        .ok_or_else(|| refuse(toolchain::no_nvrtc((13, 0), &[])))?;
    chosen.nvrtc.compile(file, &source, target).map_err(refuse)
}

/// Compiles one registered kernel file with a given NVRTC (the tests compile with two).
pub fn compile_with(
    nvrtc: &toolchain::Nvrtc,
    file: &str,
    target: Target,
) -> Result<Compiled, KernelCompileError> {
    let refuse = |log: String| KernelCompileError {
        file: file.to_string(),
        arch: target.arch(),
        log,
    };
    let k = source(file)
        .ok_or_else(|| refuse("no such file in the kernel registry".into()))?;
    let text = expand(k.file, k.source).map_err(|e| refuse(e.to_string()))?;
    nvrtc.compile(k.file, &text, target).map_err(refuse)
}

/// Compiles one registered kernel file.
pub fn compile(file: &str, arch: &str) -> Result<Compiled, KernelCompileError> {
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

/// The compute capability a kernel file needs, and the feature that needs it, as its header's
/// `// Needs: compute capability X.Y (why).` line declares. `None` for a file that declares
/// none (a test requires every file of the book to declare one).
pub fn needs(file: &str) -> Option<((u32, u32), &'static str)> {
    let line =
        source(file)?.source.lines().find_map(|l| l.strip_prefix("// Needs: "))?;
    let rest = line.strip_prefix("compute capability ")?;
    let (version, why) = rest.split_once(' ').unwrap_or((rest, ""));
    let (major, minor) = version.split_once('.')?;
    let why =
        why.trim().trim_end_matches('.').trim_start_matches('(').trim_end_matches(')');
    Some(((major.parse().ok()?, minor.parse().ok()?), why))
}

/// Whether a GPU of compute capability `have` can load `file`: the one-line reason where it
/// cannot (exit code 2: the example cannot run here), before anything is compiled.
pub fn check_capability(file: &str, have: (u32, u32)) -> Result<(), GpuUnavailable> {
    match needs(file) {
        Some((need, why)) if have < need => Err(GpuUnavailable::TooOld {
            file: file.to_string(),
            need,
            have,
            why: why.to_string(),
        }),
        _ => Ok(()),
    }
}

impl Gpu {
    /// Compiles `kernels/<file>` for this device and loads it, keeping the PTX. A file that
    /// needs a newer GPU is refused first, saying which feature needs it. Machine code is
    /// loaded as it is; PTX (a pretended GPU, or one newer than NVRTC) is compiled by the
    /// driver, whose log is shown if it refuses.
    pub fn load(&self, file: &str) -> anyhow::Result<Module> {
        let (major, minor) = self.info.compute_capability;
        check_capability(file, (major.max(0) as u32, minor.max(0) as u32))?;
        let compiled = compile(file, &self.target.arch())?;
        let image = match compiled.cubin {
            Some(machine_code) => Ptx::from_binary(machine_code),
            None => Ptx::from_src(compiled.ptx.clone()),
        };
        let module = self.ctx.load_module(image).map_err(|e| {
            anyhow::anyhow!(
                "kernels/{file}: the driver could not load its {} ({e:?})",
                self.target.describe()
            )
        })?;
        Ok(Module { file: file.to_string(), module, ptx: compiled.ptx })
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
    /// A compute capability this function needs beyond its file's `// Needs:`
    /// line, and the feature that needs it: a kernel its file defines only when
    /// compiled for that capability (`#if __CUDA_ARCH__ >= 900`). `None` for most.
    fn needs(self) -> Option<((u32, u32), &'static str)> {
        None
    }
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

/// A kernel this GPU cannot run: the file that defines it needs a newer GPU. Its text is the
/// one line a chapter prints when it skips what needs the kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The `extern "C"` name of the kernel asked for.
    pub function: String,
    /// Why its file was not loaded ([`GpuUnavailable::TooOld`]).
    pub why: GpuUnavailable,
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.function, self.why)
    }
}

impl std::error::Error for Unavailable {}

/// Every function of `K` that this device can run, compiled (each file once) and loaded,
/// with the PTX kept for the chapters that read it; and, for each file of `K` whose `//
/// Needs:` line the device does not meet, why it was not loaded. One loader for every
/// chapter.
pub struct KernelTable<K: KernelName> {
    modules: Vec<Module>,
    functions:
        std::collections::HashMap<K, (CudaFunction, std::sync::atomic::AtomicBool)>,
    /// The files not loaded, each with its [`GpuUnavailable::TooOld`], in `K`'s order.
    refused: Vec<(&'static str, GpuUnavailable)>,
    /// The functions of loaded files that need a newer GPU than this one
    /// ([`KernelName::needs`]), each with why.
    refused_functions: Vec<(K, GpuUnavailable)>,
}

impl<K: KernelName> KernelTable<K> {
    /// Compiles every file `K` names that `gpu` can load, and looks up every function of
    /// those files. A file that needs a newer GPU is left out and remembered ([`Self::try_get`]
    /// says why); if that leaves nothing to load, the first file's refusal is the error (exit
    /// code 2: nothing of `K` runs here).
    pub fn load(gpu: &Gpu) -> anyhow::Result<Self> {
        let (major, minor) = gpu.info.compute_capability;
        let have = (major.max(0) as u32, minor.max(0) as u32);
        let mut modules: Vec<Module> = Vec::new();
        let mut refused: Vec<(&'static str, GpuUnavailable)> = Vec::new();
        let mut functions = std::collections::HashMap::new();
        let mut refused_functions = Vec::new();
        for k in K::all() {
            let file = k.file();
            if refused.iter().any(|(f, _)| *f == file) {
                continue;
            }
            if let Some((need, why)) = k.needs().filter(|(need, _)| have < *need) {
                let file = format!("{file} ({})", k.function());
                let why = why.to_string();
                refused_functions
                    .push((k, GpuUnavailable::TooOld { file, need, have, why }));
                continue;
            }
            if !modules.iter().any(|m| m.file == file) {
                if let Err(why) = check_capability(file, have) {
                    refused.push((file, why));
                    continue;
                }
                modules.push(gpu.load(file)?);
            }
            let module = modules.iter().find(|m| m.file == file).expect("loaded above");
            let f = module.module.load_function(&k.function()).map_err(|e| {
                anyhow::anyhow!(
                    "kernels/{file}: no function `{}` ({e:?})",
                    k.function()
                )
            })?;
            functions.insert(k, (f, std::sync::atomic::AtomicBool::new(false)));
        }
        if let (true, Some((_, why))) = (modules.is_empty(), refused.first()) {
            return Err(why.clone().into());
        }
        Ok(Self { modules, functions, refused, refused_functions })
    }

    /// The compiled function of `k`, for a kernel the caller cannot do without: its file
    /// must be one this GPU loads (a chapter asks [`Self::try_get`] for a kernel that may
    /// be missing). The first call records it as used by this run.
    pub fn get(&self, k: K) -> &CudaFunction {
        self.try_get(k).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The compiled function of `k`, or why this GPU cannot run it. The first call that
    /// finds it records it as used by this run.
    pub fn try_get(&self, k: K) -> Result<&CudaFunction, Unavailable> {
        let Some((f, used)) = self.functions.get(&k) else {
            let why = self
                .refused
                .iter()
                .find(|(file, _)| *file == k.file())
                .map(|(_, why)| why.clone())
                .or_else(|| {
                    let refused = self.refused_functions.iter();
                    refused.filter(|(f, _)| *f == k).map(|(_, why)| why.clone()).next()
                })
                .expect("KernelTable::load loads or refuses every function of K");
            return Err(Unavailable { function: k.function(), why });
        };
        if !used.swap(true, std::sync::atomic::Ordering::Relaxed) {
            mark_used(k.file(), &k.function());
        }
        Ok(f)
    }

    /// Whether this GPU runs `k` (nothing is recorded as used).
    pub fn available(&self, k: K) -> bool {
        self.functions.contains_key(&k)
    }

    /// The files and functions of `K` this GPU cannot load, each with why, in `K`'s order.
    pub fn refused(&self) -> impl Iterator<Item = &GpuUnavailable> {
        self.refused
            .iter()
            .map(|(_, why)| why)
            .chain(self.refused_functions.iter().map(|(_, why)| why))
    }

    /// The module of `file` (for `__constant__` symbols): a file this table loaded.
    pub fn module(&self, file: &str) -> &Module {
        self.try_module(file).unwrap_or_else(|| {
            match self.refused.iter().find(|(f, _)| *f == file) {
                Some((_, why)) => panic!("{why}"),
                None => panic!("kernels/{file} is not a file of this table"),
            }
        })
    }

    /// The module of `file`, where this GPU loaded it.
    pub fn try_module(&self, file: &str) -> Option<&Module> {
        self.modules.iter().find(|m| m.file == file)
    }

    /// The PTX NVRTC produced for `file`, a file this table loaded.
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

#[cfg(test)]
mod tests {

    #[test]
    fn every_kernel_file_declares_the_gpu_it_needs_and_older_ones_are_refused_by_name()
    {
        for file in names().into_iter().filter(|f| f.ends_with(".cu")) {
            let (need, why) =
                needs(file).unwrap_or_else(|| panic!("{file} has no `// Needs:` line"));
            assert!(need >= (7, 0) && !why.is_empty(), "{file}: {need:?} {why:?}");
        }
        assert_eq!(needs("cmm_tiled_async.cu").map(|n| n.0), Some((8, 0)));
        assert_eq!(needs("cmm_tiled.cu").map(|n| n.0), Some((7, 0)));
        assert!(check_capability("ceilings.cu", (7, 0)).is_ok());
        assert!(check_capability("atax.cu", (7, 0)).is_ok());
        assert!(check_capability("hopper_sync.cu", (7, 0)).is_ok());
        assert!(check_capability("atax.cu", (7, 0)).is_ok());
        let err =
            check_capability("hopper_cluster.cu", (8, 6)).unwrap_err().to_string();
        assert_eq!(
            err,
            "kernels/hopper_cluster.cu needs compute capability 9.0 (thread-block clusters \
             and distributed shared memory); this GPU is 8.6"
        );
        let err = check_capability("hopper_async.cu", (7, 5)).unwrap_err().to_string();
        assert!(
            err.contains("8.0 (cp.async copies into shared memory); this GPU is 7.5"),
            "{err}"
        );
    }
    use super::*;

    const HEADER: KernelSource =
        KernelSource { file: "pair.cuh", source: "int first;\nint second;\n" };

    #[test]
    fn an_include_becomes_the_header_between_line_directives() {
        let source = "// top\n#include \"pair.cuh\"  // shared\nint after;\n";
        let text = expand_with("k.cu", source, &[HEADER]).unwrap();
        assert_eq!(
            text,
            "// top\n#line 1 \"pair.cuh\"\nint first;\nint second;\n#line 3 \"k.cu\"\nint after;\n"
        );
    }

    #[test]
    fn a_header_without_a_final_newline_still_ends_its_line() {
        let header = KernelSource { file: "one.cuh", source: "int only;" };
        let text = expand_with("k.cu", "#include \"one.cuh\"", &[header]).unwrap();
        assert_eq!(text, "#line 1 \"one.cuh\"\nint only;\n#line 2 \"k.cu\"\n");
    }

    #[test]
    fn a_missing_header_names_the_file_its_line_and_the_header() {
        let source = "int a;\n#include \"absent.cuh\"\n";
        let e = expand_with("k.cu", source, &[HEADER]).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.header.as_str()),
            ("k.cu", 2, "absent.cuh")
        );
        let text = e.to_string();
        assert!(
            text.starts_with("kernels/k.cu:2: cannot include \"absent.cuh\""),
            "{text}"
        );
        assert!(
            text.contains("pair.cuh"),
            "the error lists the headers there are: {text}"
        );
    }

    /// The include is resolved before NVRTC is reached (this needs no libnvrtc).
    #[test]
    fn compiling_a_file_with_a_missing_header_fails_naming_both() {
        let source = "#include \"absent.cuh\"\nextern \"C\" __global__ void k() {}\n";
        let e = compile_source("broken.cu", source, "compute_90").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("kernels/broken.cu:1"), "{text}");
        assert!(text.contains("\"absent.cuh\""), "{text}");
    }

    #[test]
    fn a_header_that_includes_another_is_refused_at_its_own_line() {
        let nested = KernelSource {
            file: "outer.cuh",
            source: "int x;\n#include \"pair.cuh\"\n",
        };
        let e = expand_with("k.cu", "#include \"outer.cuh\"\n", &[nested, HEADER])
            .unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.header.as_str()),
            ("outer.cuh", 2, "pair.cuh")
        );
        assert!(e.to_string().contains("kernels/k.cu"), "{e}");
    }

    #[test]
    fn a_header_included_twice_is_refused() {
        let source = "#include \"pair.cuh\"\n#include \"pair.cuh\"\n";
        let e = expand_with("k.cu", source, &[HEADER]).unwrap_err();
        assert_eq!((e.line, e.why.as_str()), (2, "included twice"));
    }

    #[test]
    fn system_includes_and_other_lines_are_left_to_nvrtc() {
        for source in [
            "#include <cuda_fp16.h>\n",
            "// #include \"pair.cuh\"\n",
            "int a; #include \"pair.cuh\"\n",
        ] {
            assert_eq!(expand_with("k.cu", source, &[HEADER]).unwrap(), source);
        }
    }

    /// The `#line` directives of every registered kernel file's expansion are true: each
    /// line after one is that line of the file it names.
    #[test]
    fn every_expanded_line_is_the_line_its_directive_names() {
        let text_of = |file: &str| {
            ALL.iter()
                .chain(HEADERS)
                .find(|k| k.file == file)
                .unwrap_or_else(|| {
                    panic!("a #line names {file}, which is not registered")
                })
                .source
        };
        for k in ALL {
            let expanded = expand(k.file, k.source).unwrap_or_else(|e| panic!("{e}"));
            let (mut file, mut line) = (k.file.to_string(), 1);
            for text in expanded.lines() {
                if let Some(directive) = text.strip_prefix("#line ") {
                    let (number, name) = directive.split_once(' ').unwrap();
                    (file, line) =
                        (name.trim_matches('"').to_string(), number.parse().unwrap());
                    continue;
                }
                assert_eq!(
                    Some(text),
                    text_of(&file).lines().nth(line - 1),
                    "kernels/{}: expanded line claimed to be {file}:{line}",
                    k.file
                );
                line += 1;
            }
        }
    }

    /// Where the sources are at hand: the registry holds every header, every header is
    /// included by a kernel file, and none defines an entry point (a kernel table finds a
    /// function by the file that defines it, and the checks look for it there).
    #[test]
    fn every_header_is_registered_used_and_free_of_entry_points() {
        if let Ok(dir) =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/kernels"))
        {
            let mut on_disk: Vec<String> = dir
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".cuh"))
                .collect();
            on_disk.sort();
            assert_eq!(on_disk, HEADERS.iter().map(|h| h.file).collect::<Vec<_>>());
        }
        for h in HEADERS {
            assert!(
                ALL.iter().any(|k| k
                    .source
                    .lines()
                    .any(|l| quoted_include(l) == Some(h.file))),
                "kernels/{} is included by no kernel file",
                h.file
            );
            assert!(
                !h.source.contains("__global__"),
                "kernels/{} defines a kernel",
                h.file
            );
        }
    }
}
