//! Generic addressing, against the lecture's "pointers can only point to global memory".
//!
//! `generic_window` (in `kernels/tiling.cu`) passes one `__noinline__` device function a
//! pointer into global memory and then a pointer into shared memory; the function asks the
//! hardware which space each points into (`__isGlobal`, `__isShared`) and loads through it
//! with the same instruction. The check compares both results with the CPU, exactly, and
//! the PTX the kernel was compiled to is searched for the instructions that make this work.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

use super::device::{Kernels, TilingKernel};
use crate::harness::verify::{self, Mismatch};
use crate::harness::{inputs, Gpu};

/// Threads per block, and elements per chunk, of `generic_window` (`GENERIC_BLOCK`).
pub const BLOCK: usize = 256;

/// The CPU reference: each element plus its neighbours inside its chunk of [`BLOCK`]
/// elements, added in the kernel's order.
pub fn window_reference(input: &[f32]) -> Vec<f32> {
    let mut out = Vec::with_capacity(input.len());
    for chunk in input.chunks(BLOCK) {
        for i in 0..chunk.len() {
            let left = if i > 0 { chunk[i - 1] } else { 0.0 };
            let right = chunk.get(i + 1).copied().unwrap_or(0.0);
            out.push((left + chunk[i]) + right);
        }
    }
    out
}

/// What one run of `generic_window` showed.
#[derive(Debug, Clone, PartialEq)]
pub struct GenericCheck {
    pub n: usize,
    /// `__isGlobal` and `__isShared` of the global pointer, then of the shared pointer.
    pub spaces: [i32; 4],
    /// Elements of each output compared with the CPU (all of them).
    pub compared: usize,
    /// The PTX lines that show the addressing, from the module that ran.
    pub ptx: Vec<PtxEvidence>,
}

/// The device buffers of one check.
struct Buffers {
    input: CudaSlice<f32>,
    from_global: CudaSlice<f32>,
    from_shared: CudaSlice<f32>,
    spaces: CudaSlice<i32>,
}

/// Runs `generic_window` on `n` random floats through [`Gpu::verify_then_time`] (poisoned
/// outputs, one launch, exact comparison; nothing is timed).
pub fn check(
    gpu: &Gpu,
    kernels: &Kernels,
    n: usize,
    seed: u64,
) -> anyhow::Result<GenericCheck> {
    anyhow::ensure!((1..=i32::MAX as usize).contains(&n), "n = {n} out of range");
    let host = inputs::random_f32(n, seed);
    let want = window_reference(&host);
    let mut bufs = Buffers {
        input: gpu.stream.clone_htod(&host)?,
        from_global: gpu.stream.alloc_zeros::<f32>(n)?,
        from_shared: gpu.stream.alloc_zeros::<f32>(n)?,
        spaces: gpu.stream.alloc_zeros::<i32>(4)?,
    };
    let f = kernels.table.get(TilingKernel::GenericWindow);
    let verified = gpu.verify_then_time(
        &mut bufs,
        |gpu, b| {
            gpu.poison(&mut b.from_global)?;
            gpu.poison(&mut b.from_shared)?;
            gpu.poison(&mut b.spaces)
        },
        |s, b| {
            let cfg = LaunchConfig {
                grid_dim: (n.div_ceil(BLOCK) as u32, 1, 1),
                block_dim: (BLOCK as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            let n32 = n as i32;
            let mut launch = s.launch_builder(f);
            launch.arg(&b.input).arg(&mut b.from_global).arg(&mut b.from_shared);
            launch.arg(&mut b.spaces).arg(&n32);
            // SAFETY: the arguments match the kernel's signature; it reads and writes
            // only elements below n, and four ints of `spaces`.
            unsafe { launch.launch(cfg)? };
            Ok(())
        },
        |gpu, b| {
            for (what, buf) in [
                ("generic_window (global pointer)", &b.from_global),
                ("generic_window (shared pointer)", &b.from_shared),
            ] {
                let got = gpu.stream.clone_dtoh(buf)?;
                verify::check_exact(what, &n.to_string(), &got, &want)?;
            }
            let spaces = gpu.stream.clone_dtoh(&b.spaces)?;
            let spaces: [i32; 4] = spaces.try_into().expect("four flags");
            if spaces != [1, 0, 0, 1] {
                return Err(Mismatch {
                    kernel: "generic_window".into(),
                    size: n.to_string(),
                    index: 0,
                    got: format!("{spaces:?}"),
                    want: "[1, 0, 0, 1] (global: global, not shared; shared: shared)"
                        .into(),
                    wrong: spaces
                        .iter()
                        .zip([1, 0, 0, 1])
                        .filter(|(a, b)| **a != *b)
                        .count(),
                    total: 4,
                }
                .into());
            }
            Ok(spaces)
        },
        &[],
    )?;
    Ok(GenericCheck {
        n,
        spaces: verified.check,
        compared: n,
        ptx: ptx_evidence(kernels.table.ptx("tiling.cu"))?,
    })
}

/// One instruction of the PTX that shows how a generic pointer is made and used.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PtxEvidence {
    /// The PTX function it stands in (`generic_window` or the mangled `window_sum`).
    pub function: String,
    /// The instruction (opcode with its qualifiers).
    pub instruction: &'static str,
    /// How many times it stands there.
    pub count: usize,
    /// The first such line, as the compiler wrote it.
    pub first_line: String,
    /// What it does.
    pub meaning: &'static str,
}

/// The instructions looked for: (function, opcode, what it does).
const LOOKED_FOR: [(&str, &str, &str); 5] = [
    (
        "generic_window",
        "cvta.to.global.u64",
        "a pointer parameter is a generic address; the kernel converts it to a global \
         one for its own ld.global",
    ),
    (
        "generic_window",
        "cvta.shared.u64",
        "the shared array's address converted to a generic one, to pass it as a pointer",
    ),
    ("window_sum", "isspacep.global", "__isGlobal: is this generic address in global memory?"),
    ("window_sum", "isspacep.shared", "__isShared: is it in this block's shared memory?"),
    (
        "window_sum",
        "ld.f32",
        "a generic load (no state space): the same instruction reads global or shared \
         memory",
    ),
];

/// The body of the PTX function whose header line names `name`.
fn function_body<'a>(ptx: &'a str, name: &str) -> Option<(String, &'a str)> {
    let start = ptx.lines().position(|l| {
        (l.starts_with(".visible .entry") || l.starts_with(".func")) && l.contains(name)
    })?;
    let header = ptx.lines().nth(start)?;
    let full = header
        .split_whitespace()
        .find(|w| w.contains(name))
        .map(|w| w.trim_end_matches('('))
        .unwrap_or(name)
        .to_string();
    let offset = ptx.find(header)?;
    let rest = &ptx[offset..];
    let end = rest.find("\n}\n").map_or(rest.len(), |e| e + 3);
    Some((full, &rest[..end]))
}

/// Finds every instruction of `LOOKED_FOR` in `ptx`; an error if one is missing (the
/// compiler then did something the chapter does not describe).
pub fn ptx_evidence(ptx: &str) -> anyhow::Result<Vec<PtxEvidence>> {
    LOOKED_FOR
        .iter()
        .map(|&(function, instruction, meaning)| {
            let (full, body) = function_body(ptx, function).ok_or_else(|| {
                anyhow::anyhow!("the PTX of tiling.cu has no function `{function}`")
            })?;
            let lines: Vec<&str> = body
                .lines()
                .map(str::trim)
                .filter(|l| l.split_whitespace().next() == Some(instruction))
                .collect();
            let first = lines.first().ok_or_else(|| {
                anyhow::anyhow!("no `{instruction}` in the PTX of `{function}`")
            })?;
            Ok(PtxEvidence {
                function: full,
                instruction,
                count: lines.len(),
                first_line: first.split_whitespace().collect::<Vec<_>>().join(" "),
                meaning,
            })
        })
        .collect()
}
