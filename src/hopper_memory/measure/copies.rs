//! The copy sections: a stream through shared memory with 1 to 4 stages of `cp.async`,
//! and matrices copied and transposed through the TMA beside the padded-tile transpose.

use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::{cfg, KernelCode, MatrixRun, Results, Settings, StageRun, MIB};
use crate::harness::counters::{Case, Quantity};
use crate::harness::inputs::random_f32;
use crate::harness::kernels::{KernelName, KernelTable};
use crate::harness::timing::Plan;
use crate::harness::verify::check_exact;
use crate::harness::{Run, L2};
use crate::hopper_memory::reference;
use crate::hopper_memory::HopperKernel as K;

/// cp.async with 1 to 4 stages of 16 bytes per thread, 1 to 8 blocks of 128 threads per
/// SM, streaming `a x` through shared memory.
pub(super) fn stages(
    run: &Run,
    table: &KernelTable<K>,
    settings: &Settings,
    r: &mut Results,
) -> anyhow::Result<()> {
    let (gpu, reps, seed) = (run.gpu(), run.reps(), run.seed);
    let bytes = settings.stream_mib as usize * MIB;
    // Not a multiple of the grid: the last grid-stride round is partial.
    let n = bytes / 4 - 4 * 1000;
    let n4 = n / 4;
    r.stream_bytes = bytes;
    let host = random_f32(n, seed + 7);
    let a = 1.5f32;
    let want: Vec<f32> = host.iter().map(|x| a * x).collect();
    let input = gpu.stream.clone_htod(&host)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(n)?;
    let plan = Plan::new(2, reps, L2::Cold);
    let sms = gpu.info.sms as u32;
    for (stages, k) in
        [(1u32, K::Stages1), (2, K::Stages2), (3, K::Stages3), (4, K::Stages4)]
    {
        let f = table.get(k);
        for blocks_per_sm in [1u32, 2, 4, 8] {
            let shared = stages * 128 * 16;
            let grid = sms * blocks_per_sm;
            let n4i = n4 as i64;
            if stages == 2 && blocks_per_sm == 2 {
                gpu.count_next(
                    Case::new(format!(
                        "stream_cp_async_{stages}, {blocks_per_sm} blocks per SM"
                    ))
                    .predict(Quantity::DramBytes, 2.0 * (n * 4) as f64),
                );
            }
            let v = gpu.verify_then_time_output(
                &mut out,
                |s, o| {
                    // SAFETY: stream_cp_async_S(in, out, n4, a); shared = S * 128 * 16.
                    unsafe {
                        s.launch_builder(f)
                            .arg(&input)
                            .arg(o)
                            .arg(&n4i)
                            .arg(&a)
                            .launch(cfg(grid, 128, shared))?
                    };
                    Ok(())
                },
                |got| check_exact(&k.function(), &format!("{n} floats"), got, &want),
                &[plan],
            )?;
            r.stages.push(StageRun { stages, blocks_per_sm, time: v.time().clone() });
        }
    }
    Ok(())
}

pub(super) fn tma(
    run: &Run,
    table: &KernelTable<K>,
    settings: &Settings,
    with_tma: bool,
    r: &mut Results,
) -> anyhow::Result<()> {
    let (gpu, reps, seed) = (run.gpu(), run.reps(), run.seed);
    let plan = Plan::new(2, reps, L2::Cold);
    let largest = settings.sides.iter().copied().max().unwrap_or(0);
    for &side in &settings.sides {
        let pitched = reference::round_up(side, 32);
        // Allocated once at the largest pitch; each layout uses its own pitch.
        let len = side * pitched;
        let dense = random_f32(side * side, seed + side as u64);
        let want_t = reference::transpose(&dense, side, side);
        let mut layouts: Vec<(&'static str, usize)> = Vec::new();
        for (kernel, pitch) in [
            ("copy_pitched", pitched),
            ("tma_copy", pitched),
            ("tma_copy", side),
            ("transpose_padded", side),
            ("transpose_padded", pitched),
            ("tma_transpose", pitched),
            ("tma_transpose", side),
        ] {
            // Without the TMA (before 9.0) the padded transpose and the pitched copy
            // are measured alone.
            let runs = with_tma || !kernel.starts_with("tma");
            if runs && !layouts.contains(&(kernel, pitch)) {
                layouts.push((kernel, pitch));
            }
        }
        for (kernel, pitch) in layouts {
            let mut host = reference::pitch(&dense, side, side, pitch);
            host.resize(len, 0.0); // the input, too, is `len` long at every pitch
            let input = gpu.stream.clone_htod(&host)?;
            let mut out = gpu.stream.alloc_zeros::<f32>(len)?;
            let transposes = kernel.contains("transpose");
            let want = if transposes { &want_t } else { &dense };
            let grid = side.div_ceil(32) as u32;
            let c2 = |block: (u32, u32, u32)| LaunchConfig {
                grid_dim: (grid, grid, 1),
                block_dim: block,
                shared_mem_bytes: 0,
            };
            let (si, pi) = (side as i32, pitch as i32);
            let k = match kernel {
                "copy_pitched" => K::CopyPitched,
                "tma_copy" => K::TmaCopy,
                "transpose_padded" => K::TransposePadded,
                _ => K::TmaTranspose,
            };
            // The maps: a pitch that is not a multiple of 16 bytes is refused here.
            let maps = if kernel.starts_with("tma") {
                match crate::hopper_memory::tma::maps(
                    gpu,
                    k,
                    &input,
                    &out,
                    (side, side),
                    (pitch, pitch),
                ) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        r.matrices.push(MatrixRun {
                            side,
                            kernel,
                            pitch,
                            time: Err(e.to_string()),
                        });
                        continue;
                    }
                }
            } else {
                None
            };
            let label = format!("{kernel}, side {side}, pitch {pitch}");
            if side == largest && pitch == pitched && transposes {
                // Padded tile: no conflicts. Swizzled tile: each warp's column read of a
                // 32 x 32 tile hits 8 banks 4 times (3 extra wavefronts), 4 reads per warp,
                // 8 warps per tile; its row writes are conflict-free.
                let tiles = (grid as f64) * (grid as f64);
                let conflicts =
                    if kernel == "tma_transpose" { 96.0 * tiles } else { 0.0 };
                gpu.count_next(
                    Case::new(label.clone())
                        .predict(Quantity::DramBytes, 2.0 * (side * side * 4) as f64)
                        .predict(Quantity::BankConflicts, conflicts),
                );
            }
            let f = table.get(k);
            let v = gpu.verify_then_time_output(
                &mut out,
                |s, o| {
                    match (k, &maps) {
                        (K::TmaCopy | K::TmaTranspose, Some(maps)) => {
                            // `o` is written through the map `dst`, encoded over it.
                            crate::hopper_memory::tma::launch(
                                s,
                                table,
                                k,
                                maps,
                                (side, side),
                            )?;
                        }
                        _ => {
                            let mut b = s.launch_builder(f);
                            b.arg(&input).arg(o).arg(&si).arg(&si).arg(&pi);
                            if k == K::TransposePadded {
                                b.arg(&pi); // the output's pitch
                            }
                            // SAFETY: copy_pitched(in, out, rows, cols, pitch) and
                            // transpose_padded(in, out, rows, cols, in_pitch, out_pitch).
                            unsafe { b.launch(c2((32, 8, 1)))? };
                        }
                    }
                    Ok(())
                },
                |got| {
                    let dense_got = reference::unpitch(got, side, side, pitch);
                    check_exact(kernel, &label, &dense_got, want)
                },
                &[plan],
            )?;
            r.matrices.push(MatrixRun {
                side,
                kernel,
                pitch,
                time: Ok(v.time().clone()),
            });
        }
    }
    // What each kernel is made of: registers from the driver, instructions from SASS of
    // the files this GPU loaded (the TMA kernels' and the others').
    let tools = crate::harness::sass::Tools::find();
    let mut sass = Vec::new();
    for file in ["hopper_pitched.cu", "hopper_tma.cu"] {
        if let (Some(t), Some(module)) = (&tools, table.try_module(file)) {
            sass.push(t.disassemble(&module.ptx, "sm_90")?);
        }
    }
    let kernels = [K::CopyPitched, K::TmaCopy, K::TransposePadded, K::TmaTranspose];
    let measured = |&k: &K| with_tma || !matches!(k, K::TmaCopy | K::TmaTranspose);
    for k in kernels.into_iter().filter(measured) {
        r.code.push(KernelCode {
            kernel: match k {
                K::CopyPitched => "copy_pitched",
                K::TmaCopy => "tma_copy",
                K::TransposePadded => "transpose_padded",
                _ => "tma_transpose",
            },
            registers: table.get(k).num_regs()?,
            sass: sass.iter().find_map(|s| s.function(&k.function())).cloned(),
        });
    }
    Ok(())
}
