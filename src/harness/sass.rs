//! The machine code (SASS) of a kernel file, read with the CUDA toolkit's own tools: `ptxas`
//! assembles the PTX that NVRTC wrote, `nvdisasm` lists the instructions. The chapters count
//! instructions in it (which load a line became, how many loads a loop issues per trip), so
//! that a claim about the instruction stream rests on the instructions, not on a guess.
//!
//! The tools are optional: a reader's machine may have the driver and NVRTC but no toolkit.
//! [`Tools::find`] looks for them in `CMBOOK_PTXAS` / `CMBOOK_NVDISASM`, on `PATH`, then in
//! `$CUDA_HOME/bin` and `/usr/local/cuda/bin`; without them a chapter writes no SASS table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `ptxas` and `nvdisasm`, found on this machine.
#[derive(Debug, Clone)]
pub struct Tools {
    pub ptxas: PathBuf,
    pub nvdisasm: PathBuf,
}

fn find_tool(var: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(var) {
        return Some(PathBuf::from(p));
    }
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        dirs.push(Path::new(&home).join("bin"));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn run_tool(tool: &Path, args: &[&std::ffi::OsStr]) -> anyhow::Result<String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", tool.display()))?;
    anyhow::ensure!(
        out.status.success(),
        "{} failed: {}",
        tool.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Tools {
    /// Both tools, or `None` when either is missing.
    pub fn find() -> Option<Self> {
        Some(Self {
            ptxas: find_tool("CMBOOK_PTXAS", "ptxas")?,
            nvdisasm: find_tool("CMBOOK_NVDISASM", "nvdisasm")?,
        })
    }

    /// `ptxas`'s version line ("Cuda compilation tools, release 13.0, V13.0.88").
    pub fn version(&self) -> anyhow::Result<String> {
        let text = run_tool(&self.ptxas, &["--version".as_ref()])?;
        Ok(text
            .lines()
            .rfind(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string())
    }

    /// Assembles `ptx` for `sm` (`"sm_90"`) and disassembles the result.
    pub fn disassemble(&self, ptx: &str, sm: &str) -> anyhow::Result<Sass> {
        // A folder of its own, removed when it goes out of scope: concurrent runs and
        // threads never share a file name.
        let dir = tempfile::Builder::new().prefix("cmbook-sass-").tempdir()?;
        let (ptx_path, cubin) =
            (dir.path().join("kernel.ptx"), dir.path().join("kernel.cubin"));
        std::fs::write(&ptx_path, ptx)?;
        let arch = format!("-arch={sm}");
        let assembled = run_tool(
            &self.ptxas,
            &[arch.as_ref(), ptx_path.as_os_str(), "-o".as_ref(), cubin.as_os_str()],
        );
        let listing = assembled.and_then(|_| {
            run_tool(&self.nvdisasm, &["-c".as_ref(), cubin.as_os_str()])
        });
        Ok(Sass::parse(&listing?))
    }
}

/// One instruction: `@!P0 LDG.E.CONSTANT R4, desc[UR4][R2.64] ;` is predicate `@!P0`, opcode
/// `LDG.E.CONSTANT`, operands `R4, desc[UR4][R2.64]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instr {
    pub predicate: Option<String>,
    pub opcode: String,
    pub operands: String,
}

impl Instr {
    /// The opcode without its modifiers: `LDG` for `LDG.E.CONSTANT`.
    pub fn base(&self) -> &str {
        self.opcode.split('.').next().unwrap_or("")
    }

    /// A branch back to an earlier label closes a loop; this is its target.
    fn branch_target(&self) -> Option<&str> {
        if self.base() != "BRA" {
            return None;
        }
        let start = self.operands.find('(')? + 1;
        let end = start + self.operands[start..].find(')')?;
        Some(&self.operands[start..end])
    }
}

/// One function's instructions, in order, and where its labels point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Function {
    pub instrs: Vec<Instr>,
    /// Label name → index of the instruction that follows it.
    pub labels: BTreeMap<String, usize>,
}

impl Function {
    /// Instructions that satisfy `pred`.
    pub fn count(&self, pred: impl Fn(&Instr) -> bool) -> usize {
        self.instrs.iter().filter(|i| pred(i)).count()
    }

    /// Every loop: the instructions from a label to a later branch back to it, as index
    /// ranges (inner loops are ranges of their own).
    pub fn loops(&self) -> Vec<std::ops::Range<usize>> {
        let mut loops = Vec::new();
        for (at, instr) in self.instrs.iter().enumerate() {
            if let Some(&start) = instr.branch_target().and_then(|t| self.labels.get(t))
            {
                if start <= at {
                    loops.push(start..at + 1);
                }
            }
        }
        loops
    }

    /// The loop with the most instructions satisfying `pred` (the unrolled main loop of a
    /// kernel, for its loads), or `None` if no loop has one.
    pub fn busiest_loop(&self, pred: impl Fn(&Instr) -> bool) -> Option<&[Instr]> {
        self.loops()
            .into_iter()
            .map(|r| &self.instrs[r])
            .filter(|body| body.iter().any(&pred))
            .max_by_key(|body| body.iter().filter(|i| pred(i)).count())
    }
}

/// A disassembled module: its functions by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sass {
    pub functions: BTreeMap<String, Function>,
}

impl Sass {
    /// Reads `nvdisasm -c` output: `.text.NAME:` starts a function, `.L_x_3:` is a label,
    /// `/*0040*/  @P0 OPCODE operands ;` an instruction.
    pub fn parse(listing: &str) -> Self {
        let mut functions = BTreeMap::new();
        let mut current: Option<(String, Function)> = None;
        for raw in listing.lines() {
            let line = raw.trim();
            if let Some(name) =
                line.strip_prefix(".text.").and_then(|l| l.strip_suffix(':'))
            {
                if let Some((n, f)) = current.take() {
                    functions.insert(n, f);
                }
                current = Some((name.to_string(), Function::default()));
                continue;
            }
            let Some((_, f)) = current.as_mut() else { continue };
            if let Some(label) = line.strip_suffix(':') {
                if label.starts_with('.') && !label.contains(' ') {
                    f.labels.insert(label.to_string(), f.instrs.len());
                }
                continue;
            }
            // An instruction line starts with its address comment, /*0040*/.
            let Some(rest) = line.strip_prefix("/*") else { continue };
            let Some(end) = rest.find("*/") else { continue };
            if !rest[..end].chars().all(|c| c.is_ascii_hexdigit()) {
                continue;
            }
            let text = rest[end + 2..].trim();
            let text = text.split(';').next().unwrap_or("").trim();
            let mut words = text.splitn(2, char::is_whitespace);
            let mut first = words.next().unwrap_or("");
            let mut tail = words.next().unwrap_or("").trim();
            let mut predicate = None;
            if first.starts_with('@') {
                predicate = Some(first.to_string());
                let mut w = tail.splitn(2, char::is_whitespace);
                first = w.next().unwrap_or("");
                tail = w.next().unwrap_or("").trim();
            }
            if first.is_empty() {
                continue;
            }
            f.instrs.push(Instr {
                predicate,
                opcode: first.to_string(),
                operands: tail.to_string(),
            });
        }
        if let Some((n, f)) = current {
            functions.insert(n, f);
        }
        Self { functions }
    }

    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.get(name)
    }
}

/// A global load (`LDG`, coherent or not).
pub fn is_global_load(i: &Instr) -> bool {
    i.base() == "LDG"
}

/// A non-coherent global load: `LDG.E.CONSTANT`, what `ld.global.nc` becomes.
pub fn is_non_coherent_load(i: &Instr) -> bool {
    i.base() == "LDG" && i.opcode.split('.').any(|m| m == "CONSTANT")
}

/// A global store.
pub fn is_global_store(i: &Instr) -> bool {
    i.base() == "STG"
}

/// A load from the user's `__constant__` bank (`c[0x3]`): `LDC` per thread, `ULDC` once per
/// warp on the uniform datapath. Kernel parameters live in bank 0 and are not counted.
pub fn is_user_constant_load(i: &Instr) -> bool {
    matches!(i.base(), "LDC" | "ULDC") && i.operands.contains("c[0x3]")
}
