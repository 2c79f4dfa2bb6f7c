//! Every kernel file compiles to machine code for every GPU generation at or above the compute
//! capability it declares (`// Needs:`), with NVRTC 13 and with NVRTC 12, on a machine with
//! no GPU; below its minimum the harness refuses it before compiling, and the minimum is
//! honest: the newest architecture below it does not compile.
//!
//! NVRTC compiling for a real architecture runs the assembler, so an instruction a GPU lacks
//! (a cluster barrier on an A100, `cp.async` on a T4) fails here, not on a reader's GPU.

use cmbook::harness::kernels;
use cmbook::harness::toolchain::{Nvrtc, Target};
use rayon::prelude::*;

/// One of each generation NVRTC 13 compiles for: T4, A100, RTX 30, RTX 40, H100, B200, RTX 50.
const NVRTC_13_ARCHS: &[u32] = &[75, 80, 86, 89, 90, 100, 120];
/// What only NVRTC 12 reaches (the V100), one Ampere and the newest it knows.
const NVRTC_12_ARCHS: &[u32] = &[70, 86, 120];

/// The failures of the whole matrix for one NVRTC, one line each.
fn failures(nvrtc: &Nvrtc, archs: &[u32]) -> Vec<String> {
    let files: Vec<&str> = kernels::names();
    let cells: Vec<(&str, u32)> =
        files.iter().flat_map(|&f| archs.iter().map(move |&a| (f, a))).collect();
    let version = nvrtc.facts.version;
    let mut failed: Vec<String> = cells
        .par_iter()
        .filter_map(|&(file, arch)| {
            let Some((need, _)) = kernels::needs(file) else {
                return Some(format!("kernels/{file} declares no `// Needs:` line"));
            };
            let have = (arch / 10, arch % 10);
            let refused = kernels::check_capability(file, have).is_err();
            if have < need {
                return (!refused).then(|| {
                    format!("kernels/{file}: sm_{arch} is below its minimum but not refused")
                });
            }
            if refused {
                return Some(format!("kernels/{file}: refused at sm_{arch}, its minimum or above"));
            }
            match kernels::compile_with(nvrtc, file, Target::Machine(arch)) {
                Ok(c) if c.cubin.as_deref().is_some_and(|b| b.starts_with(b"\x7fELF")) => {
                    eprintln!("NVRTC {}.{} sm_{arch} kernels/{file}: ok", version.0, version.1);
                    None
                }
                Ok(_) => Some(format!("kernels/{file} sm_{arch}: no machine code")),
                Err(e) => Some(format!("NVRTC {}.{}: {e}", version.0, version.1)),
            }
        })
        .collect();
    failed.sort();
    failed
}

/// A declared minimum above 7.0 is needed: the newest architecture below it in `archs` fails
/// to compile (with the assembler's sentence), so the declaration keeps no GPU out for nothing.
fn overstated(nvrtc: &Nvrtc, archs: &[u32]) -> Vec<String> {
    kernels::names()
        .par_iter()
        .filter_map(|&file| {
            let ((major, minor), why) = kernels::needs(file)?;
            let need = major * 10 + minor;
            let below = archs.iter().copied().filter(|&a| a < need).max()?;
            match kernels::compile_with(nvrtc, file, Target::Machine(below)) {
                Ok(_) => Some(format!(
                    "kernels/{file} declares {major}.{minor} ({why}) but compiles for sm_{below}"
                )),
                Err(e) => {
                    eprintln!("kernels/{file} at sm_{below}, below its minimum: {}", first_error(&e.log));
                    None
                }
            }
        })
        .collect()
}

fn first_error(log: &str) -> &str {
    log.lines().find(|l| l.contains("error")).unwrap_or("(no error line)")
}

#[test]
#[cfg_attr(
    cmbook_no_nvrtc,
    ignore = "needs libnvrtc.so.13 on the loader path (see README)"
)]
fn every_kernel_file_compiles_with_nvrtc_13_for_every_gpu_it_declares() {
    let nvrtc = Nvrtc::find(13).expect("libnvrtc.so.13");
    let mut all = failures(&nvrtc, NVRTC_13_ARCHS);
    all.extend(overstated(&nvrtc, NVRTC_13_ARCHS));
    assert!(all.is_empty(), "{}", all.join("\n"));
}

#[test]
#[cfg_attr(
    cmbook_no_nvrtc12,
    ignore = "needs libnvrtc.so.12 on the loader path (CI installs the pinned wheel)"
)]
fn every_kernel_file_compiles_with_nvrtc_12_for_every_gpu_it_declares() {
    let nvrtc = Nvrtc::find(12).expect("libnvrtc.so.12");
    assert_eq!(nvrtc.facts.version.0, 12);
    for arch in NVRTC_12_ARCHS {
        assert!(nvrtc.facts.archs.contains(arch), "NVRTC 12 here lacks sm_{arch}");
    }
    let all = failures(&nvrtc, NVRTC_12_ARCHS);
    assert!(all.is_empty(), "{}", all.join("\n"));
}
