//! Instructions per candidate and per sweep step of the tiled kernels, counted in their
//! machine code (SASS, through `harness::sass`): the versions table's "instructions per
//! candidate" and the counted cases' predictions come from here.

use crate::cmm::tiled::TiledKernel;
use crate::harness::kernels::KernelName;
use crate::harness::sass::{Function, Instr, Tools};

/// Candidates one trip of a min-plus kernel's unrolled inner loop takes: 4 values of c
/// (`#pragma unroll 4`) for each of a thread's 4 x 4 cells.
pub const CANDIDATES_PER_TRIP: usize = 64;

/// What the SASS of the tiled program (`kernels/cmm_tiled.cu`, `kernels/cmm_tiled_async.cu`)
/// says.
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    /// `ptxas`'s version line and the architecture.
    pub tools: String,
    /// Instructions per candidate in the inner loop of each min-plus kernel.
    pub minplus: Vec<(TiledKernel, f64)>,
    /// Instructions in the step loop of each sweep (every branch of it included).
    pub sweep_step: Vec<(TiledKernel, usize)>,
}

impl Counts {
    pub fn per_candidate(&self, k: TiledKernel) -> Option<f64> {
        self.minplus.iter().find(|(m, _)| *m == k).map(|(_, v)| *v)
    }

    pub fn step(&self, k: TiledKernel) -> Option<usize> {
        self.sweep_step.iter().find(|(m, _)| *m == k).map(|(_, v)| *v)
    }
}

/// The instruction that ends a candidate in each min-plus kernel for `sm` (`"sm_90"`): the
/// 64-bit compare's upper half, or for 32-bit costs the DPX add-and-minimum of Hopper and later,
/// which an older GPU does as an add and then a minimum (`IMNMX.U32`).
fn ends_candidate(k: TiledKernel, sm: &str) -> fn(&Instr) -> bool {
    let dpx = sm.trim_start_matches("sm_").parse::<u32>().is_ok_and(|v| v >= 90);
    match (k, dpx) {
        (TiledKernel::MinPlusU32, true) => |i| i.opcode.starts_with("VIADDMNMX.U32"),
        (TiledKernel::MinPlusU32, false) => |i| i.opcode.starts_with("IMNMX.U32"),
        _ => |i| i.opcode.starts_with("ISETP.LT.U32.AND.EX"),
    }
}

/// The shortest loop of `f` holding at least `at_least` instructions that satisfy `pred`.
fn shortest_loop(
    f: &Function,
    at_least: usize,
    pred: impl Fn(&Instr) -> bool,
) -> Option<usize> {
    f.loops()
        .into_iter()
        .filter(|r| f.instrs[r.clone()].iter().filter(|i| pred(i)).count() >= at_least)
        .map(|r| r.len())
        .min()
}

/// Counts the loops of the tiled kernels in `ptx`, the PTX of each file of the tiled program
/// this GPU loaded (`kernels/cmm_tiled.cu`, and `kernels/cmm_tiled_async.cu` from compute
/// capability 8.0), assembled for `sm` (`"sm_90"`); a kernel whose file is not among them is
/// left out of the counts. `None` without `ptxas` and `nvdisasm`.
pub fn count(ptx: &[impl AsRef<str>], sm: &str) -> anyhow::Result<Option<Counts>> {
    let Some(tools) = Tools::find() else {
        return Ok(None);
    };
    let sass = ptx
        .iter()
        .map(|p| tools.disassemble(p.as_ref(), sm))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let function = |k: TiledKernel| sass.iter().find_map(|s| s.function(&k.function()));
    let mut minplus = Vec::new();
    for k in [TiledKernel::MinPlus, TiledKernel::MinPlusU32] {
        let Some(f) = function(k) else { continue };
        let len = shortest_loop(f, CANDIDATES_PER_TRIP, ends_candidate(k, sm))
            .ok_or_else(|| anyhow::anyhow!("no inner loop in {}", k.function()))?;
        minplus.push((k, len as f64 / CANDIDATES_PER_TRIP as f64));
    }
    let mut sweep_step = Vec::new();
    for k in [
        TiledKernel::Wavefront,
        TiledKernel::WavefrontLean,
        TiledKernel::WavefrontU32,
        TiledKernel::WavefrontOrdered,
        TiledKernel::WavefrontQuadrants,
    ] {
        let Some(f) = function(k) else { continue };
        let len = shortest_loop(f, 1, |i| i.base() == "BAR")
            .ok_or_else(|| anyhow::anyhow!("no step loop in {}", k.function()))?;
        sweep_step.push((k, len));
    }
    Ok(Some(Counts {
        tools: format!("{} for {sm}", tools.version()?),
        minplus,
        sweep_step,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::kernels;

    fn ptx_of(files: &[&str], arch: &str) -> Vec<String> {
        files
            .iter()
            .map(|f| kernels::compile(f, arch).expect("NVRTC compiles").ptx)
            .collect()
    }

    const BOTH_FILES: [&str; 2] = ["cmm_tiled.cu", "cmm_tiled_async.cu"];

    #[test]
    #[cfg_attr(
        any(cmbook_no_nvrtc, cmbook_no_sass_tools),
        ignore = "needs libnvrtc.so.13 and ptxas + nvdisasm (CMBOOK_PTXAS, CMBOOK_NVDISASM)"
    )]
    fn the_32_bit_kernel_takes_fewer_instructions_per_candidate() {
        let c = count(&ptx_of(&BOTH_FILES, "compute_90"), "sm_90")
            .unwrap()
            .expect("ptxas and nvdisasm are found (CMBOOK_PTXAS, CMBOOK_NVDISASM)");
        let u64 = c.per_candidate(TiledKernel::MinPlus).unwrap();
        let u32 = c.per_candidate(TiledKernel::MinPlusU32).unwrap();
        assert!((6.0..12.0).contains(&u64), "{u64}");
        assert!(u32 < u64 * 0.8, "{u32} vs {u64}");
        assert!(c.step(TiledKernel::WavefrontLean).unwrap() > 0);
    }

    /// Before Hopper there is no DPX: the 32-bit candidate ends with a plain minimum, and the
    /// count still finds every loop (an A100 reader's run counted nothing and failed).
    #[test]
    #[cfg_attr(
        any(cmbook_no_nvrtc, cmbook_no_sass_tools),
        ignore = "needs libnvrtc.so.13 and ptxas + nvdisasm (CMBOOK_PTXAS, CMBOOK_NVDISASM)"
    )]
    fn the_loops_are_found_on_a_gpu_without_dpx() {
        let c = count(&ptx_of(&BOTH_FILES, "compute_80"), "sm_80")
            .unwrap()
            .expect("ptxas and nvdisasm are found (CMBOOK_PTXAS, CMBOOK_NVDISASM)");
        let u64 = c.per_candidate(TiledKernel::MinPlus).unwrap();
        let u32 = c.per_candidate(TiledKernel::MinPlusU32).unwrap();
        assert!((6.0..12.0).contains(&u64), "{u64}");
        assert!(u32 < u64, "{u32} vs {u64}");
        assert!(c.step(TiledKernel::Wavefront).unwrap() > 0);
    }

    /// A Turing GPU loads only `kernels/cmm_tiled.cu`: every loop of it is counted and the
    /// 32-bit min-plus kernel, which needs cp.async, is left out instead of failing the count.
    #[test]
    #[cfg_attr(
        any(cmbook_no_nvrtc, cmbook_no_sass_tools),
        ignore = "needs libnvrtc.so.13 and ptxas + nvdisasm (CMBOOK_PTXAS, CMBOOK_NVDISASM)"
    )]
    fn a_gpu_without_cp_async_counts_every_other_kernel() {
        let c = count(&ptx_of(&["cmm_tiled.cu"], "compute_75"), "sm_75")
            .unwrap()
            .expect("ptxas and nvdisasm are found (CMBOOK_PTXAS, CMBOOK_NVDISASM)");
        assert!((6.0..12.0).contains(&c.per_candidate(TiledKernel::MinPlus).unwrap()));
        assert_eq!(c.per_candidate(TiledKernel::MinPlusU32), None);
        assert_eq!(c.sweep_step.len(), 5, "{c:?}");
    }
}
