//! GPU checks of the harness's launch wrappers and the Hopper chapter's kernels. Run on a
//! machine with a GPU: `cargo test --release -- --ignored`. A check that needs a newer GPU
//! than this one (or than the one `CMBOOK_PRETEND_CC` pretends) prints one line,
//! `skipped: <need>`, and passes; every other check verifies on every GPU from 7.0.

use cmbook::harness::kernels::KernelTable;
use cmbook::harness::launch::{
    self, Args, L2Access, L2Limits, L2Window, Swizzle, TensorMap,
};
use cmbook::harness::sections::Need;
use cmbook::harness::{inputs, verify, Gpu};
use cmbook::hopper_memory::{measure, reference, tma, HopperKernel as K};
use cudarc::driver::LaunchConfig;

use crate::common::gpu;

const CLUSTERS: Need = Need::Capability((9, 0), "thread-block clusters");
const TMA: Need = Need::Capability((9, 0), "the tensor memory accelerator");

fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: 0 }
}

/// Whether `gpu` (as the GPU a run pretends to be) meets `need`; where it does not, the
/// one line that says so.
fn meets(gpu: &Gpu, need: Need) -> bool {
    match need.unmet(&measure::caps(gpu).unwrap()) {
        Some(why) => {
            println!("skipped: {why}");
            false
        }
        None => true,
    }
}

/// The matrix multiplies this GPU runs; each half it cannot run said in one line.
fn sgemm_kernels(gpu: &Gpu) -> Vec<cmbook::hopper_memory::sgemm::Variant> {
    let plan = measure::plan(gpu).unwrap();
    for part in
        [cmbook::hopper_memory::SGEMM_REGISTERS, cmbook::hopper_memory::SGEMM_CP_ASYNC]
    {
        if let Some(skip) = plan.skip(part) {
            println!("{skip}");
        }
    }
    let kernels = cmbook::hopper_memory::sgemm::runnable(&plan);
    assert!(
        !kernels.is_empty(),
        "every GPU from 7.0 runs the kernels fed through registers"
    );
    kernels
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cluster_launches_run_and_refused_shapes_are_errors() {
    let gpu = gpu();
    if !meets(&gpu, CLUSTERS) {
        return;
    }
    let table = KernelTable::<K>::load(&gpu).unwrap();
    let f = table.get(K::LadderCluster);
    for cluster in [1u32, 2, 4, 8, 16] {
        let grid = 16 * 3;
        let mut errors = gpu.stream.alloc_zeros::<u32>(grid as usize).unwrap();
        gpu.poison(&mut errors).unwrap();
        let args = Args::new().value(7i32).buf_mut(&mut errors, &gpu);
        // SAFETY: ladder_cluster(int iters, unsigned* errors[grid]).
        unsafe {
            launch::launch_cluster(
                &gpu,
                f,
                cfg((grid, 1, 1), (96, 1, 1)),
                (cluster, 1, 1),
                args,
            )
        }
        .unwrap();
        let got = gpu.stream.clone_dtoh(&errors).unwrap();
        assert_eq!(got, vec![0; grid as usize], "cluster of {cluster}");
    }
    // 32 blocks per cluster: refused by the check, never launched.
    let mut errors = gpu.stream.alloc_zeros::<u32>(64).unwrap();
    let args = Args::new().value(1i32).buf_mut(&mut errors, &gpu);
    // SAFETY: as above; the launch must not happen.
    let err = unsafe {
        launch::launch_cluster(&gpu, f, cfg((64, 1, 1), (32, 1, 1)), (32, 1, 1), args)
    }
    .unwrap_err();
    assert!(err.to_string().contains("at most 16"), "{err}");
    // 16 blocks asking for 200 KiB of shared memory each (without the opt-in): an error
    // that says so, not a crash.
    let big =
        LaunchConfig { shared_mem_bytes: 200 << 10, ..cfg((16, 1, 1), (128, 1, 1)) };
    let mut errors = gpu.stream.alloc_zeros::<u32>(16).unwrap();
    let args = Args::new().value(1i32).buf_mut(&mut errors, &gpu);
    // SAFETY: as above.
    let err =
        unsafe { launch::launch_cluster(&gpu, f, big, (16, 1, 1), args) }.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("refuses") || text.contains("CUDA_ERROR"), "{text}");
}

/// The barriers alone of the ladder count every pass, at a pass count and a block size
/// that are not powers of two: a block's, the grid's, and (from 9.0) a cluster's of 1 to
/// 16 blocks with a release or a relaxed arrival.
#[test]
#[ignore = "needs a CUDA GPU"]
fn barriers_alone_count_every_pass() {
    use cudarc::driver::PushKernelArg;
    let gpu = gpu();
    let table = KernelTable::<K>::load(&gpu).unwrap();
    let passes = 37i32;
    let grid = 48u32;
    let want = vec![passes as u32; grid as usize];
    let mut passed = gpu.stream.alloc_zeros::<u32>(grid as usize).unwrap();
    gpu.poison(&mut passed).unwrap();
    // SAFETY: barrier_block(int iters, unsigned* passed[grid]).
    unsafe {
        gpu.stream
            .launch_builder(table.get(K::BarrierBlock))
            .arg(&passes)
            .arg(&mut passed)
            .launch(cfg((grid, 1, 1), (96, 1, 1)))
    }
    .unwrap();
    assert_eq!(gpu.stream.clone_dtoh(&passed).unwrap(), want, "block");

    let f = table.get(K::BarrierGrid);
    let capacity = launch::cooperative_capacity(&gpu, f, 96, 0).unwrap() as u32;
    let grid_all = grid.min(capacity);
    let mut bar = gpu.stream.alloc_zeros::<u32>(2).unwrap();
    gpu.poison(&mut passed).unwrap();
    let args =
        Args::new().value(passes).buf_mut(&mut bar, &gpu).buf_mut(&mut passed, &gpu);
    // SAFETY: barrier_grid(int iters, unsigned* bar[2], unsigned* passed[grid]).
    unsafe {
        launch::launch_cooperative(&gpu, f, cfg((grid_all, 1, 1), (96, 1, 1)), args)
    }
    .unwrap();
    let got = gpu.stream.clone_dtoh(&passed).unwrap();
    assert_eq!(got[..grid_all as usize], want[..grid_all as usize], "grid");

    if !meets(&gpu, CLUSTERS) {
        return;
    }
    for kernel in [K::BarrierCluster, K::BarrierClusterRelaxed] {
        let f = table.get(kernel);
        for cluster in [1u32, 2, 4, 8, 16] {
            gpu.poison(&mut passed).unwrap();
            let args = Args::new().value(passes).buf_mut(&mut passed, &gpu);
            // SAFETY: barrier_cluster[_relaxed](int iters, unsigned* passed[grid]).
            unsafe {
                launch::launch_cluster(
                    &gpu,
                    f,
                    cfg((grid, 1, 1), (96, 1, 1)),
                    (cluster, 1, 1),
                    args,
                )
            }
            .unwrap();
            let got = gpu.stream.clone_dtoh(&passed).unwrap();
            assert_eq!(got, want, "{kernel:?}, cluster of {cluster}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cooperative_grid_barrier_holds_and_too_large_a_grid_is_refused() {
    let gpu = gpu();
    let table = KernelTable::<K>::load(&gpu).unwrap();
    let f = table.get(K::LadderGrid);
    let capacity = launch::cooperative_capacity(&gpu, f, 128, 0).unwrap() as u32;
    for grid in [1, 7, capacity] {
        let mut bar = gpu.stream.alloc_zeros::<u32>(2).unwrap();
        let mut slots = gpu.stream.alloc_zeros::<u32>(grid as usize).unwrap();
        let mut errors = gpu.stream.alloc_zeros::<u32>(grid as usize).unwrap();
        gpu.poison(&mut errors).unwrap();
        let args = Args::new()
            .value(25i32)
            .buf_mut(&mut bar, &gpu)
            .buf_mut(&mut slots, &gpu)
            .buf_mut(&mut errors, &gpu);
        // SAFETY: ladder_grid(iters, bar[2], slots[grid], errors[grid]).
        unsafe {
            launch::launch_cooperative(&gpu, f, cfg((grid, 1, 1), (128, 1, 1)), args)
        }
        .unwrap();
        assert_eq!(gpu.stream.clone_dtoh(&errors).unwrap(), vec![0; grid as usize]);
    }
    let mut errors = gpu.stream.alloc_zeros::<u32>(1).unwrap();
    let args = Args::new().value(1i32).buf_mut(&mut errors, &gpu);
    // SAFETY: refused before the launch.
    let err = unsafe {
        launch::launch_cooperative(
            &gpu,
            f,
            cfg((capacity + 1, 1, 1), (128, 1, 1)),
            args,
        )
    }
    .unwrap_err();
    assert!(err.to_string().contains("at most"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn tma_transpose_is_exact_at_odd_sides_and_unaligned_rows_are_refused() {
    let gpu = gpu();
    if !meets(&gpu, TMA) {
        return;
    }
    let table = KernelTable::<K>::load(&gpu).unwrap();
    for side in [1usize, 31, 33, 100, 257] {
        let pitch = reference::round_up(side, 4);
        let dense = inputs::random_f32(side * side, side as u64);
        let mut host = vec![0f32; side * pitch];
        for r in 0..side {
            host[r * pitch..r * pitch + side]
                .copy_from_slice(&dense[r * side..][..side]);
        }
        let input = gpu.stream.clone_htod(&host).unwrap();
        let mut out = gpu.stream.alloc_zeros::<f32>(side * pitch).unwrap();
        gpu.poison(&mut out).unwrap();
        let (shape, pitches) = ((side, side), (pitch, pitch));
        let maps =
            tma::maps(&gpu, K::TmaTranspose, &input, &out, shape, pitches).unwrap();
        tma::launch(&gpu.stream, &table, K::TmaTranspose, &maps, shape).unwrap();
        let got = reference::unpitch(
            &gpu.stream.clone_dtoh(&out).unwrap(),
            side,
            side,
            pitch,
        );
        let want = reference::transpose(&dense, side, side);
        verify::check_exact("tma_transpose", &format!("side {side}"), &got, &want)
            .unwrap();
        if side % 4 != 0 {
            let unpitched = gpu.stream.alloc_zeros::<f32>(side * side).unwrap();
            let err = TensorMap::tiled(
                &gpu,
                &unpitched,
                (side, side, side),
                (32, 32),
                Swizzle::B128,
            )
            .unwrap_err();
            assert!(err.to_string().contains("multiples of 16 bytes"), "{err}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_l2_window_is_set_reset_and_checked() {
    let gpu = gpu();
    if !meets(&gpu, Need::PersistingL2) {
        return;
    }
    let limits = L2Limits::query(&gpu).unwrap();
    assert!(limits.max_window > 0 && limits.max_persisting > 0, "{limits:?}");
    let buf = gpu.stream.alloc_zeros::<f32>(1 << 20).unwrap();
    let w = L2Window {
        bytes: 4 << 20,
        hit_ratio: 1.0,
        hit: L2Access::Persisting,
        persisting: limits.max_persisting,
    };
    gpu.l2_window(&buf, w).unwrap().reset().unwrap();
    let too_big = L2Window { bytes: limits.max_window + 16, ..w };
    assert!(gpu.l2_window(&buf, too_big).is_err());
    let past_the_buffer = L2Window { bytes: (4 << 20) + 4, ..w };
    let err = gpu.l2_window(&buf, past_the_buffer).err().unwrap();
    assert!(err.to_string().contains("over a buffer of"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_chapter_runs_quick_and_verifies() {
    // `examples/hopper_memory`, as `cargo test` builds it next to this test.
    let exe = std::env::current_exe().unwrap();
    let exe =
        exe.parent().unwrap().parent().unwrap().join("examples").join("hopper_memory");
    let out = std::env::temp_dir().join(format!("hopper-quick-{}", std::process::id()));
    let run = std::process::Command::new(&exe)
        .args(["--quick", "--reps", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", exe.display()));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}\n{stdout}{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    // The run (which inherits CMBOOK_PRETEND_CC) skips what this GPU cannot run, each part
    // said once, and measures the rest.
    let plan = measure::plan(&gpu()).unwrap();
    let skip_lines: Vec<&str> =
        stdout.lines().filter(|l| l.starts_with("skipped: ")).collect();
    let want: Vec<String> = plan.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(skip_lines, want, "{stdout}");
    let ladder =
        cmbook::harness::record::read_csv(&out.join("data/hopper_memory-ladder.csv"))
            .unwrap();
    for skip in &plan.skipped {
        let noted = ladder.meta.get("not_measured").unwrap_or_default();
        assert!(noted.contains(&skip.why), "{skip} not recorded: {noted}");
    }
    // And the table the comparison page reads lists each skipped part.
    let skips =
        cmbook::harness::record::read_csv(&out.join("data/hopper_memory-skipped.csv"))
            .unwrap();
    assert_eq!(skips.rows.len(), plan.skipped.len(), "{:?}", skips.rows);
    let mut stems =
        vec!["hopper_memory-ladder", "hopper_memory-tma", "hopper_memory-sgemm"];
    if plan.runs(cmbook::hopper_memory::L2_WINDOW) {
        stems.push("hopper_memory-l2-reuse");
    }
    if plan.runs(cmbook::hopper_memory::DSMEM) {
        stems.push("hopper_memory-dsmem");
    }
    if plan.runs(cmbook::hopper_memory::CP_ASYNC_STAGES) {
        stems.push("hopper_memory-stages");
    }
    for stem in stems {
        assert!(out.join("data").join(format!("{stem}.csv")).exists(), "{stem}");
    }
    // Every barrier of the ladder is timed alone and with its round.
    let what = ladder.column("what").unwrap();
    for form in ["barrier alone", "barrier + the round's shared store and load"] {
        assert!(ladder.rows.iter().any(|r| r[what] == form), "no rung `{form}`");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sgemm_stages_match_the_cpu_at_odd_sizes() {
    use cmbook::hopper_memory::sgemm;
    use cmbook::tiling::device::Operands;
    use cmbook::tiling::reference::Reference;
    let gpu = gpu();
    let kernels = sgemm_kernels(&gpu);
    let table = sgemm::prepare(&gpu, &kernels).unwrap_or_else(|e| panic!("{e:#}"));
    // Every remainder: M, N below one tile, K of 1, K and N not multiples of 4 (the
    // 4-byte copies), K and N multiples of 4 but not of the tile (the 16-byte copies).
    for dims in [
        (1, 1, 1),
        (7, 5, 3),
        (61, 67, 71),
        (130, 5, 129),
        (129, 132, 36),
        (257, 260, 1),
        (300, 260, 1000),
        (1000, 1003, 517),
        (131, 259, 23),
        (250, 516, 40),
    ] {
        let mut ops = Operands::new(&gpu, dims, 11).unwrap();
        let reference = Reference::for_operands(&ops, 1);
        assert_eq!(reference.rows.len(), dims.0, "every row is checked");
        for &kernel in &kernels {
            sgemm::verify_then_time(&gpu, kernel, &mut ops, &reference, &table, &[])
                .unwrap_or_else(|e| panic!("{e:#}"));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn an_sgemm_tile_never_written_is_caught() {
    use cmbook::hopper_memory::sgemm;
    use cmbook::tiling::device::Operands;
    use cmbook::tiling::reference::Reference;
    let gpu = gpu();
    let kernels = sgemm_kernels(&gpu);
    let table = sgemm::prepare(&gpu, &kernels).unwrap();
    let mut ops = Operands::new(&gpu, (200, 140, 37), 5).unwrap();
    let reference = Reference::for_operands(&ops, 1);
    // Told M = 128, a kernel writes rows 0..128 only; rows 128.. stay poisoned and the
    // check must refuse them. A kernel of step 6's layout (from 8.0) and a warp-tiled one.
    let tried = [sgemm::KERNELS[1], sgemm::KERNELS[3]];
    for v in tried.into_iter().filter(|v| kernels.contains(v)) {
        gpu.poison(&mut ops.c).unwrap();
        ops.m = 128;
        sgemm::launch(table.get(v.kernel), v, &gpu.stream, &mut ops).unwrap();
        ops.m = 200;
        let got = gpu.stream.clone_dtoh(&ops.c).unwrap();
        assert!(got[..128 * 140].iter().all(|x| x.is_finite()));
        assert!(got[128 * 140..].iter().all(|x| x.is_nan()), "poison is NaN");
        let err = sgemm::check("sgemm", &ops, &got, &reference).unwrap_err();
        assert_eq!(err.wrong, 72 * 140, "{err}");
    }
}
