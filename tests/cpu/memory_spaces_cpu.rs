//! CPU checks of the memory-spaces chapter: the constants shared with the kernel file, the CPU
//! references against closed forms, the chains the chases follow, the map table, drawing every
//! figure and table from made-up results, and the exercises' answers. No GPU needed; the NVRTC
//! check skips loudly without NVRTC.

use std::path::Path;

use cmbook::harness::ceiling::Ceilings;
use cmbook::harness::gpu::DeviceInfo;
use cmbook::harness::kernels::KernelName;
use cmbook::harness::record;
use cmbook::harness::run::{self, Run};
use cmbook::harness::stats::Rate;
use cmbook::harness::{kernels, plot, Stats, L2};
use cmbook::memory_spaces::exercises;
use cmbook::memory_spaces::map::space_rows;
use cmbook::memory_spaces::measure::{
    chase_footprints, loop_census, walk_distincts, ChaseResult, ChaseSpace,
    HistogramKernel, HistogramResult, LoopCensus, MemoryKernel, OnChip, Results,
    SignalSize, SpacedPoint, StencilKernel, Timed, VectorHome, WalkPoint, WalkSpacing,
    SASS_KERNELS,
};
use cmbook::memory_spaces::reference::{
    self, chain, cycle_length, follow, single_cycle, walk_addresses_per_warp,
    walk_start_spaced,
};
use cmbook::memory_spaces::report;
use cmbook::memory_spaces::{
    BLOCK, CHASE_CONST_MAX, HIST_BINS, KERNEL_FILE, LINE_ELEMENTS, SIGNAL_MAX,
    TILE_ROWS,
};

fn source() -> &'static str {
    kernels::source(KERNEL_FILE).expect("the kernel file is registered").source
}

#[test]
fn the_kernel_file_and_the_module_agree_on_every_constant() {
    for (name, value) in [
        ("BLOCK", BLOCK as usize),
        ("SIGNAL_MAX", SIGNAL_MAX),
        ("CHASE_CONST_MAX", CHASE_CONST_MAX),
        ("HIST_BINS", HIST_BINS),
        ("TILE_ROWS", TILE_ROWS),
    ] {
        let line = source()
            .lines()
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("no #define {name}"));
        let defined: usize = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert_eq!(defined, value, "{name}");
    }
    // The walks mask with SIGNAL_MAX - 1 and the constant bank is 64 KiB.
    const {
        assert!(
            SIGNAL_MAX.is_power_of_two()
                && 4 * (SIGNAL_MAX + CHASE_CONST_MAX) <= 64 * 1024
                && LINE_ELEMENTS * 4 == 128
        )
    };
}

#[test]
fn every_syncthreads_says_what_it_protects() {
    let lines: Vec<&str> = source().lines().collect();
    let barriers: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("__syncthreads()") && !l.trim_start().starts_with("//"))
        .collect();
    assert!(barriers.len() >= 4);
    for l in barriers {
        assert!(l.contains("// protects"), "a barrier without its reason: {l}");
    }
}

#[test]
#[cfg_attr(
    cmbook_no_nvrtc,
    ignore = "needs libnvrtc.so.13 on the loader path (see README)"
)]
fn the_kernels_compile_and_the_histograms_land_where_the_chapter_says() {
    let ptx = kernels::compile(KERNEL_FILE, "compute_90").unwrap().ptx;
    // The run-time-indexed histogram keeps a 64-byte array in local memory; the unrolled one
    // has none. (ptxas may still change its mind; the example prints what the driver reports.)
    let entry = |name: &str| {
        let start = ptx
            .find(&format!(".entry {name}("))
            .unwrap_or_else(|| panic!("no entry {name}"));
        let rest = &ptx[start..];
        let end = rest[1..].find(".entry ").map(|e| e + 1).unwrap_or(rest.len());
        rest[..end].to_string()
    };
    assert!(
        entry("histogram_local").contains("__local_depot"),
        "histogram_local has no local array"
    );
    assert!(
        !entry("histogram_registers").contains(".local"),
        "histogram_registers uses local memory"
    );
    assert!(entry("apply_signal_const").contains("ld.const.f32"));
    assert!(entry("apply_signal_readonly").contains("ld.global.nc.f32"));
    assert!(entry("chase_const").contains("ld.const.u32"));
    assert!(entry("bandwidth_shared").contains("ld.shared.f32"));
    assert!(
        !entry("bandwidth_registers").contains("ld.shared")
            && !entry("bandwidth_registers").contains(".local")
    );
}

#[test]
fn the_stencil_reference_is_a_sum_of_neighbours_with_zeros_outside() {
    assert_eq!(reference::stencil3(&[1.0]), vec![1.0]);
    assert_eq!(reference::stencil3(&[1.0, 2.0]), vec![3.0, 3.0]);
    assert_eq!(reference::stencil3(&[1.0, 2.0, 4.0, 8.0]), vec![3.0, 7.0, 14.0, 12.0]);
}

#[test]
fn the_signal_reference_reads_column_major_matrices() {
    // Two 2 x 3 matrices, column by column.
    let matrices = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 0.5, 0.5, 1.0, 1.0, 2.0, 2.0];
    let signal = [1.0f32, 10.0, 100.0];
    let got = reference::apply_signal(&matrices, &signal, 2, 3);
    assert_eq!(
        got,
        vec![
            1.0 + 30.0 + 500.0,
            2.0 + 40.0 + 600.0,
            0.5 + 10.0 + 200.0,
            0.5 + 10.0 + 200.0
        ]
    );
}

#[test]
fn walk_groups_ask_for_exactly_distinct_addresses_per_warp() {
    for distinct in 1..=32u32 {
        for step in [0u32, 1, 8191, 100_000] {
            assert_eq!(
                walk_addresses_per_warp(distinct, step),
                distinct as usize,
                "distinct {distinct} step {step}"
            );
        }
    }
    // A walk of SIGNAL_MAX steps adds the whole table, whatever the start.
    let table: Vec<f32> = (0..SIGNAL_MAX).map(|i| (i % 7) as f32).collect();
    let whole: f32 = table.iter().sum();
    let sums = reference::walk(&table, 70, 5, SIGNAL_MAX as u32);
    assert!(sums.iter().all(|&s| s == whole));
}

#[test]
fn histograms_count_every_value_once() {
    let values = reference::random_u32(10_007, 3);
    for threads in [1usize, 7, 256, 20_000] {
        let counts = reference::histograms(&values, threads);
        assert_eq!(counts.len(), HIST_BINS * threads);
        assert_eq!(counts.iter().map(|&c| c as usize).sum::<usize>(), values.len());
        for bin in 0..HIST_BINS {
            let total: u32 = counts[bin * threads..(bin + 1) * threads].iter().sum();
            assert_eq!(
                total as usize,
                values.iter().filter(|&&v| (v & 15) as usize == bin).count()
            );
        }
    }
}

#[test]
fn tile_values_are_exact_and_the_bandwidth_references_agree_on_one_pass_sums() {
    for i in 0..2048 {
        let v = reference::tile_value(3, i);
        assert!((-0.5..0.5).contains(&v) && (v * 256.0).fract() == 0.0);
    }
    // Over 32 passes every lane of the shared kernel has read every column of its tile once
    // per row; with values multiples of 1/256 and small sums, the float sums are exact, so
    // the total over a warp's lanes equals 32 passes of the whole tile.
    let shared = reference::bandwidth_shared(2, 64, 32);
    let registers = reference::bandwidth_registers(2, 64, 32);
    let tile_sum = |block: u32| {
        (0..1024).map(|i| reference::tile_value(block, i) as f64).sum::<f64>()
    };
    let warp_sum = |v: &[f32], from: usize| {
        v[from..from + 32].iter().map(|&x| x as f64).sum::<f64>()
    };
    assert_eq!(warp_sum(&shared, 0), 32.0 * tile_sum(0));
    assert_eq!(warp_sum(&registers, 64), 32.0 * tile_sum(1));
}

#[test]
fn chains_are_single_cycles_through_every_slot() {
    for (slots, stride) in
        [(2usize, 1usize), (3, 1), (1000, 1), (4096, 1), (777, LINE_ELEMENTS)]
    {
        let next = chain(slots, stride, slots as u64);
        assert_eq!(next.len(), slots * stride);
        assert_eq!(cycle_length(&next, 0), slots, "{slots} slots");
        assert!(next.iter().enumerate().all(|(i, &n)| i % stride != 0
            || ((n as usize).is_multiple_of(stride) && (n as usize) < next.len())));
        // A walk of k steps returns to its start exactly when k is a multiple of the cycle.
        assert_eq!(follow(&next, 0, slots as u64), 0);
        assert_ne!(follow(&next, 0, slots as u64 + 1), 0);
    }
    let cycle = single_cycle(10_000, 9);
    assert!(
        cycle.iter().enumerate().all(|(i, &n)| i as u32 != n),
        "a single cycle has no fixed point"
    );
}

fn h100() -> DeviceInfo {
    DeviceInfo {
        name: "Test GPU".into(),
        compute_capability: (9, 0),
        pretended_on: None,
        sms: 132,
        l2_bytes: 50 << 20,
        total_mem_bytes: 80 << 30,
        max_threads_per_block: 1024,
        shared_per_block_optin: 227 << 10,
        shared_per_sm: 228 << 10,
        registers_per_sm: 65_536,
        constant_bytes: 64 << 10,
        driver_cuda: (13, 0),
        driver_release: "580.159.04".into(),
        nvrtc: (13, 0),
        compiled_as: "sm_90 machine code".into(),
    }
}

#[test]
fn the_map_shows_the_devices_capacities() {
    let rows = space_rows(&h100());
    let names: Vec<&str> = rows.iter().map(|r| r.space).collect();
    assert_eq!(
        names,
        [
            "registers",
            "local",
            "shared",
            "global",
            "constant",
            "read-only path (texture)"
        ]
    );
    assert!(rows[0].capacity.contains("65536") && rows[0].capacity.contains("256 KiB"));
    assert!(
        rows[2].capacity.contains("227 KiB per block")
            && rows[2].capacity.contains("228 KiB per SM")
    );
    assert!(
        rows[3].capacity.contains("80.0 GiB") && rows[3].capacity.contains("50 MiB")
    );
    assert_eq!(rows[4].capacity, "64 KiB");
    for r in &rows {
        let cells =
            [r.declared, r.scope, r.lifetime, r.location, r.cached, r.threads, r.host];
        assert!(cells.iter().all(|c| !c.contains('|') && !c.is_empty()), "{r:?}");
    }
}

fn timed(ms: f64, amount: f64) -> Timed {
    Timed { stats: Stats::from_samples(&[ms, ms * 1.1, ms * 0.95]).unwrap(), amount }
}

fn rate(gbps: f64) -> Rate {
    Rate { median: gbps * 1e9, best: gbps * 1.05e9, worst: gbps * 0.9e9 }
}

fn made_up_results() -> Results {
    let mut walks = Vec::new();
    for distinct in [1u32, 2, 4, 8, 16, 32] {
        for (i, home) in VectorHome::ALL.into_iter().enumerate() {
            walks.push(WalkPoint {
                home,
                distinct,
                timed: timed(0.1 * distinct as f64 * (i + 1) as f64, 1e9),
            });
        }
    }
    let stencils = |ms: f64| {
        StencilKernel::ALL.into_iter().map(|k| (k, timed(ms, 8e8))).collect::<Vec<_>>()
    };
    let mut chases = Vec::new();
    for (space, footprints) in [
        (ChaseSpace::Global, vec![8 << 10, 1 << 20, 512 << 20]),
        (ChaseSpace::Shared, vec![1 << 10, 32 << 10]),
        (ChaseSpace::Constant, vec![1 << 10, 16 << 10]),
    ] {
        for (i, f) in footprints.into_iter().enumerate() {
            chases.push(ChaseResult {
                space,
                footprint_bytes: f,
                steps: 100_000,
                stats: Stats::from_samples(&[1.0 + i as f64, 1.2 + i as f64]).unwrap(),
            });
        }
    }
    Results {
        map: space_rows(&h100()),
        copy_cold: (512 << 20, rate(2900.0)),
        copy_warm: (12 << 20, rate(6000.0)),
        read_cold: rate(3070.0),
        ceilings_cold: Ceilings {
            bytes: 512 << 20,
            l2: L2::Cold,
            copy: 2900.0,
            copy_by: "copy kernel",
            read: 3070.0,
            write: 3160.0,
        },
        ceilings_warm: Ceilings {
            bytes: 12 << 20,
            l2: L2::Warm,
            copy: 6000.0,
            copy_by: "copy kernel",
            read: 6500.0,
            write: 6200.0,
        },
        l2_read: (12 << 20, 64, rate(6600.0)),
        signal_size: SignalSize { rows: 3001, m: 2500, matrices: 32 },
        signal: VectorHome::ALL.into_iter().map(|h| (h, timed(0.4, 9.6e8))).collect(),
        walk_threads: 270_323,
        walk_steps: 4096,
        walks,
        spaced_walks: WalkSpacing::ALL
            .into_iter()
            .flat_map(|spacing| {
                walk_distincts(false).into_iter().map(move |distinct| SpacedPoint {
                    spacing,
                    distinct,
                    timed: timed(0.1 * distinct as f64, 1e9),
                })
            })
            .collect(),
        sass: Some((
            "Cuda compilation tools, release 13.0 for sm_90".to_string(),
            SASS_KERNELS
                .into_iter()
                .map(|kernel| LoopCensus {
                    kernel,
                    instructions: 20,
                    adds: 4,
                    global_loads: 4,
                    constant_loads: 0,
                    uniform_constant_loads: 0,
                })
                .collect(),
        )),
        stencil_cold_n: 100_000_007,
        stencil_cold: stencils(0.3),
        stencil_warm_n: 3_276_803,
        stencil_warm: stencils(0.01),
        histogram_n: 50_000_017,
        histograms: HistogramKernel::ALL
            .into_iter()
            .map(|k| HistogramResult {
                kernel: k,
                registers_per_thread: 30,
                local_bytes_per_thread: 64,
                threads: 270_336,
                timed: timed(1.0, 5e7),
            })
            .collect(),
        chases,
        onchip: OnChip {
            shared: timed(0.3, 1e10),
            registers: timed(0.1, 1e10),
            passes: 256,
        },
    }
}

/// A run of the chapter that opens no GPU and writes into `dir`.
fn cpu_run(dir: &Path) -> Run {
    let mut run = run::offline(&cmbook::memory_spaces::CHAPTER, dir).unwrap();
    // A GPU run's provenance carries the device's L2 size, which the latency figure marks.
    run.meta = run.meta.clone().with("l2_mib", "50");
    run
}

#[test]
fn every_figure_and_table_is_drawn_from_made_up_results() {
    let dir = tempfile::tempdir().unwrap();
    let results = made_up_results();
    report::report(&cpu_run(dir.path()), &results).unwrap();
    let lines = report::summary(&results).unwrap();
    assert!(lines.iter().any(|l| l.contains("copy ceiling")));
    let figures = ["signal", "divergent", "stencil", "latency", "bandwidth"];
    let tables = ["map", "registers"];
    for stem in figures {
        let rec = record::read_csv(
            &dir.path().join(format!("data/memory_spaces-{stem}.csv")),
        )
        .unwrap();
        assert!(rec.meta.get("l2").is_some(), "{stem} lacks its l2 key");
        assert!(dir.path().join(format!("memory_spaces-{stem}.svg")).exists());
    }
    for stem in tables {
        assert!(dir.path().join(format!("memory_spaces-{stem}.md")).exists());
    }
    assert!(plot::audit_figures(dir.path()).unwrap().is_empty());
    let bandwidth =
        record::read_csv(&dir.path().join("data/memory_spaces-bandwidth.csv")).unwrap();
    assert_eq!(bandwidth.rows.len(), 6);
    let registers =
        std::fs::read_to_string(dir.path().join("memory_spaces-registers.md")).unwrap();
    assert!(
        registers.contains("`histogram_local`")
            && registers.contains("local bytes per thread")
    );
}

#[test]
fn a_run_writes_what_the_book_holds_with_the_same_keys_columns_and_axes() {
    let dir = tempfile::tempdir().unwrap();
    report::report(&cpu_run(dir.path()), &made_up_results()).unwrap();
    let problems =
        run::shape_differences_from_book(&cmbook::memory_spaces::CHAPTER, dir.path())
            .unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn one_table_names_every_kernel_of_the_file_once() {
    let all = MemoryKernel::all();
    let mut names: Vec<String> = all.iter().map(|k| k.function()).collect();
    assert!(all.iter().all(|k| k.file() == KERNEL_FILE));
    for name in &names {
        assert!(
            source().contains(&format!("extern \"C\" __global__ void {name}(")),
            "{name} is not a kernel of {KERNEL_FILE}"
        );
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    assert_eq!(source().matches("extern \"C\" __global__").count(), all.len());
    // The chases' footprints fit the spaces that hold them.
    for quick in [false, true] {
        for space in ChaseSpace::ALL {
            for f in chase_footprints(space, quick) {
                assert!(f <= space.max_footprint() && f / (4 * space.stride()) >= 2);
            }
        }
    }
}

#[test]
fn the_chapter_includes_every_figure_and_table_it_writes() {
    // The chapter is its first page and the pages listed under it.
    let chapter: String = crate::common::numbered_chapters()
        .into_iter()
        .find(|c| c.pages[0] == "memory_spaces.md")
        .expect("SUMMARY.md lists the chapter")
        .pages
        .iter()
        .map(|p| {
            std::fs::read_to_string(crate::common::book_root().join("src/book").join(p))
                .unwrap()
        })
        .collect();
    for stem in ["signal", "divergent", "stencil", "latency", "bandwidth"] {
        assert!(
            chapter.contains(&format!("(figures/memory_spaces-{stem}.svg)")),
            "{stem}.svg"
        );
        assert!(
            chapter.contains(&format!("(figures/data/memory_spaces-{stem}.csv)")),
            "{stem}.csv"
        );
    }
    for stem in ["map", "registers"] {
        assert!(
            chapter
                .contains(&format!("{{{{#include figures/memory_spaces-{stem}.md}}}}")),
            "{stem}.md"
        );
    }
}

#[test]
fn exercise_answers() {
    let (untiled, tiled) = exercises::stencil_words_per_output(1, 256);
    assert_eq!(untiled, 3.0);
    assert!((tiled - 258.0 / 256.0).abs() < 1e-12);
    assert_eq!(exercises::stencil_words_per_output(4, 128), (9.0, 136.0 / 128.0));

    let words = exercises::constant_words_per_load(&[1, 2, 4, 8, 16, 32, 3]);
    assert_eq!(words, vec![(1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32), (3, 3)]);

    // A single cycle covers everything; a shuffle, on average, about half.
    let coverage: Vec<f64> =
        (0..40).map(|seed| exercises::shuffled_chain_coverage(1 << 14, seed)).collect();
    let mean = coverage.iter().sum::<f64>() / coverage.len() as f64;
    assert!((0.35..0.65).contains(&mean), "mean coverage {mean}");
    assert!(coverage.iter().any(|&c| c < 0.1), "{coverage:?}");
    assert_eq!(cycle_length(&single_cycle(1 << 14, 1), 0), 1 << 14);
}

#[test]
fn the_spacings_put_a_warps_addresses_where_their_names_say() {
    let words = |spacing: WalkSpacing, distinct: u32, warp: u64| -> Vec<u32> {
        let (g, w) = spacing.words();
        let mut v: Vec<u32> = (0..32)
            .map(|lane| walk_start_spaced(warp * 32 + lane, distinct, g, w))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    for distinct in walk_distincts(false) {
        for spacing in WalkSpacing::ALL {
            // Every spacing asks for exactly `distinct` words per warp-wide load.
            assert_eq!(words(spacing, distinct, 5).len(), distinct as usize);
        }
        // One word apart: all of a warp's words in at most two 128-byte lines.
        let same_line = words(WalkSpacing::SameLine, distinct, 5);
        let mut lines: Vec<u32> = same_line.iter().map(|w| w / 32).collect();
        lines.dedup();
        assert!(lines.len() <= 2, "{distinct}: {lines:?}");
        // Warps 0 apart: every warp reads the same words.
        assert_eq!(
            words(WalkSpacing::SameWords, distinct, 3),
            words(WalkSpacing::SameWords, distinct, 1000)
        );
    }
    // The chapter's own walk is the spacing (129, 97).
    let table = kernels_free_table();
    assert_eq!(
        reference::walk(&table, 100, 7, 9),
        reference::walk_spaced(&table, 100, 7, 9, WalkSpacing::Apart.words())
    );
}

fn kernels_free_table() -> Vec<f32> {
    (0..SIGNAL_MAX).map(|i| i as f32 * 0.25).collect()
}

/// The machine code of the signal and walk kernels (ptxas and nvdisasm: on PATH, or named by
/// CMBOOK_PTXAS and CMBOOK_NVDISASM): the constant-memory signal kernel has half the global
/// loads of the global one, its vector coming through uniform constant loads; the walk's
/// instructions do not depend on how many addresses a warp asks for.
#[test]
#[cfg_attr(
    any(cmbook_no_nvrtc, cmbook_no_sass_tools),
    ignore = "needs libnvrtc.so.13 and ptxas + nvdisasm (CMBOOK_PTXAS, CMBOOK_NVDISASM)"
)]
fn the_constant_signal_kernel_issues_one_global_load_per_element_and_the_global_two() {
    let tools = cmbook::harness::sass::Tools::find().expect("ptxas and nvdisasm");
    let ptx = kernels::compile(KERNEL_FILE, "compute_90").unwrap().ptx;
    let census = loop_census(&tools.disassemble(&ptx, "sm_90").unwrap()).unwrap();
    let of = |k: MemoryKernel| census.iter().find(|c| c.kernel == k).unwrap().clone();
    let constant = of(MemoryKernel::Signal(VectorHome::Constant));
    let global = of(MemoryKernel::Signal(VectorHome::Global));
    let readonly = of(MemoryKernel::Signal(VectorHome::ReadOnly));
    assert!(
        constant.adds > 0 && constant.adds == global.adds,
        "{constant:?} {global:?}"
    );
    assert_eq!(constant.global_loads, constant.adds, "{constant:?}");
    assert!(constant.uniform_constant_loads > 0, "{constant:?}");
    assert_eq!(global.global_loads, 2 * global.adds, "{global:?}");
    assert_eq!(readonly.global_loads, 2 * readonly.adds, "{readonly:?}");
    let walk = of(MemoryKernel::Walk(VectorHome::Constant));
    assert_eq!(walk.constant_loads, walk.adds, "{walk:?}");
    assert_eq!(walk.global_loads, 0, "{walk:?}");
    let spaced = of(MemoryKernel::WalkConstSpaced);
    assert_eq!(spaced.constant_loads, walk.constant_loads, "{spaced:?}");
}
