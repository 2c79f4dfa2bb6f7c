//! CPU checks of the coalescing chapter: the sector and bank arithmetic against closed forms,
//! the predictions the chapter states, the CPU references, the PTX census, and the exercises'
//! answers. No GPU needed; the PTX checks need NVRTC (and skip loudly without it).

use std::path::Path;

use cmbook::coalescing::banks::{
    bank_of, column_read_lanes, column_read_words, conflict_degree, row_read_words,
};
use cmbook::coalescing::exercises;
use cmbook::coalescing::measure::Measurement;
use cmbook::coalescing::measure::{
    fetch_model_fraction, granularity_strides, CoalescingKernel, GranularityRun,
    GranularitySweep, Layout, Results, SideResult, TmaRun, GRANULARITIES, PITCH_FLOATS,
    SIDE_KERNELS,
};
use cmbook::coalescing::patterns::{
    sweep_offsets, sweep_strides, Pattern, MODEL_WARPS,
};
use cmbook::coalescing::ptx::{census, entry_body, sass_census, Census, SassCensus};
use cmbook::coalescing::readonly::ReadOnlyKernel;
use cmbook::coalescing::reference::{self, Particle, PARTICLE_BYTES};
use cmbook::coalescing::report;
use cmbook::coalescing::sectors::{
    footprint, traffic, Access, Footprint, LINE_BYTES, SECTOR_BYTES,
};
use cmbook::coalescing::transpose::{warp_cost, TransposeKernel};
use cmbook::coalescing::KERNEL_FILE;
use cmbook::harness::ceiling::Ceilings;
use cmbook::harness::kernels::KernelName;
use cmbook::harness::record;
use cmbook::harness::run::{self, Run};
use cmbook::harness::stats::Rate;
use cmbook::harness::{kernels, plot, Stats, L2};

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-3
}

#[test]
fn unit_stride_floats_are_four_sectors_of_one_line_and_doubles_eight_of_two() {
    let f = Access::strided(4, 1, 0).warp_footprint(1);
    assert_eq!(f, Footprint { lanes: 32, requested_bytes: 128, sectors: 4, lines: 1 });
    assert_eq!((f.moved_bytes(), f.efficiency()), (128, 1.0));
    let d = Access::strided(8, 1, 0).warp_footprint(1);
    assert_eq!(d, Footprint { lanes: 32, requested_bytes: 256, sectors: 8, lines: 2 });
}

#[test]
fn a_wider_stride_spreads_a_warp_until_every_lane_has_its_own_sector() {
    for elem in [4u64, 8] {
        for stride in 1..=64u64 {
            let f = Access::strided(elem, stride, 0).warp_footprint(3);
            // The warp spans 32 × stride × elem bytes; once lanes are a sector or more apart,
            // each lane has a sector (and once they are a line or more apart, a line) of its own.
            let span = 32 * stride * elem;
            assert_eq!(
                f.sectors,
                (span / SECTOR_BYTES).min(32),
                "elem {elem} stride {stride}"
            );
            assert_eq!(
                f.lines,
                (span / LINE_BYTES).clamp(1, 32),
                "elem {elem} stride {stride}"
            );
            assert!(close(f.efficiency(), 32.0 * elem as f64 / f.moved_bytes() as f64));
        }
    }
}

#[test]
fn a_misaligned_start_costs_one_more_sector_per_request() {
    for offset in 0..=32u64 {
        let f = Access::strided(4, 1, offset).warp_footprint(1);
        assert_eq!(f.sectors, if offset % 8 == 0 { 4 } else { 5 }, "offset {offset}");
        assert_eq!(f.lines, if offset % 32 == 0 { 1 } else { 2 }, "offset {offset}");
    }
}

#[test]
fn a_wide_access_counts_every_sector_it_straddles() {
    // A 16-byte access at byte 24 reaches into the next sector.
    assert_eq!(footprint(&[24], 16).sectors, 2);
    assert_eq!(footprint(&[32], 16).sectors, 1);
    // Lanes reading the same address: one sector, requested bytes counted per lane.
    let same = footprint(&[64; 32], 4);
    assert_eq!((same.sectors, same.lines, same.requested_bytes), (1, 1, 128));
}

#[test]
fn strided_read_prediction_is_useful_over_moved_bytes_per_element() {
    // dst[i] = src[i stride]: per element, e bytes written and min(stride e, 32) bytes of
    // sectors read (no sector is skipped while lanes are less than a sector apart).
    for elem in [4u64, 8] {
        for stride in 1..=64u64 {
            let t = Pattern::Affine { elem_bytes: elem, stride, offset: 0 }.traffic();
            let moved_per_element = elem + (stride * elem).min(SECTOR_BYTES);
            let want = 2.0 * elem as f64 / moved_per_element as f64;
            assert!(
                close(t.dram_fraction(), want),
                "elem {elem} stride {stride}: {} vs {want}",
                t.dram_fraction()
            );
            // No two warps share a sector here, so both views agree.
            assert!(
                close(t.per_request_fraction(), t.dram_fraction()),
                "elem {elem} stride {stride}"
            );
        }
    }
    let at = |elem, stride| {
        Pattern::Affine { elem_bytes: elem, stride, offset: 0 }.predicted_fraction()
    };
    assert!(
        close(at(4, 8), 8.0 / 36.0)
            && close(at(8, 4), 16.0 / 40.0)
            && close(at(4, 2), 8.0 / 12.0)
    );
}

#[test]
fn misalignment_costs_sectors_per_request_but_hardly_any_distinct_sectors() {
    for offset in 0..=32u64 {
        let t = Pattern::Affine { elem_bytes: 4, stride: 1, offset }.traffic();
        assert!(t.dram_fraction() > 0.999, "offset {offset}: {}", t.dram_fraction());
        // Per warp: 256 useful bytes; 4 or 5 load sectors plus 4 store sectors.
        let load_sectors = if offset % 8 == 0 { 4.0 } else { 5.0 };
        assert!(
            close(t.per_request_fraction(), 256.0 / ((load_sectors + 4.0) * 32.0)),
            "offset {offset}"
        );
    }
}

#[test]
fn the_aos_drift_moves_56_bytes_per_particle_and_the_soa_drift_36() {
    assert_eq!(PARTICLE_BYTES, 28);
    assert_eq!(std::mem::align_of::<Particle>(), 4);
    let aos = Pattern::DriftAos { record_bytes: PARTICLE_BYTES };
    let t = aos.traffic();
    assert_eq!(t.threads, 32 * MODEL_WARPS);
    assert_eq!(t.useful_bytes, 36 * t.threads);
    let bytes_per_particle = (t.dram_sectors * SECTOR_BYTES) as f64 / t.threads as f64;
    assert!(close(bytes_per_particle, 56.0), "{bytes_per_particle}");
    assert!(close(aos.predicted_fraction(), 36.0 / 56.0));
    // One field load of a warp spans 32 records of 28 bytes: 28 sectors, 7 lines.
    assert_eq!(
        aos.first_load(),
        Footprint { lanes: 32, requested_bytes: 128, sectors: 28, lines: 7 }
    );
    let soa = Pattern::DriftSoa;
    assert!(close(soa.predicted_fraction(), 1.0));
    assert_eq!(soa.first_load().sectors, 4);
}

#[test]
fn separate_arrays_never_share_sectors_in_the_model() {
    let one = Access::strided(4, 1, 0);
    let t = traffic(&[one, one.at_base(1 << 40)], &[], 4);
    assert_eq!(t.dram_sectors, 2 * 4 * 4);
    let shared = traffic(&[one, one], &[], 4);
    assert_eq!(shared.dram_sectors, 4 * 4, "the same array loaded twice is read once");
    assert_eq!(shared.request_sectors, 2 * 4 * 4);
}

#[test]
fn the_sweeps_cover_every_pattern_of_the_table() {
    for quick in [false, true] {
        let strides = sweep_strides(quick);
        let offsets = sweep_offsets(quick);
        assert!(
            strides.contains(&1)
                && strides.contains(&64)
                && offsets.contains(&0)
                && offsets.contains(&32)
        );
        for p in Pattern::table() {
            if let Pattern::Affine { stride, offset, .. } = p {
                let covered = (offset == 0 && strides.contains(&stride))
                    || (stride == 1 && offsets.contains(&offset));
                assert!(
                    covered,
                    "{} is in the table but not measured (quick: {quick})",
                    p.label()
                );
            }
        }
    }
    let labels: Vec<String> = Pattern::table().iter().map(Pattern::label).collect();
    let mut unique = labels.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), labels.len(), "{labels:?}");
}

#[test]
fn a_column_of_an_unpadded_tile_is_one_bank_and_of_a_padded_tile_every_bank() {
    let plain = column_read_lanes(32, 0);
    assert!(plain.iter().all(|l| l.bank == 0));
    assert_eq!(conflict_degree(&column_read_words(32, 0)), 32);
    let padded = column_read_lanes(33, 0);
    assert!(padded.iter().all(|l| l.bank == l.lane));
    assert_eq!(conflict_degree(&column_read_words(33, 0)), 1);
    for column in 0..32 {
        assert_eq!(conflict_degree(&column_read_words(32, column)), 32);
        assert_eq!(conflict_degree(&column_read_words(33, column)), 1);
        assert_eq!(conflict_degree(&row_read_words(32, column)), 1);
        assert_eq!(conflict_degree(&row_read_words(33, column)), 1);
    }
}

#[test]
fn the_conflict_degree_of_a_column_read_is_the_gcd_of_row_width_and_32() {
    for width in 1..=256u64 {
        assert_eq!(
            conflict_degree(&column_read_words(width, 5)),
            gcd(width, 32),
            "width {width}"
        );
    }
}

#[test]
fn lanes_reading_one_word_share_it() {
    assert_eq!(conflict_degree(&[7; 32]), 1);
    assert_eq!(conflict_degree(&[0, 32]), 2);
    assert_eq!(conflict_degree(&[0, 32, 0, 32]), 2);
    assert_eq!(conflict_degree(&[]), 0);
    assert_eq!(bank_of(33), 1);
}

#[test]
fn transpose_kernels_per_warp() {
    for kernel in TransposeKernel::all() {
        let c = warp_cost(kernel, 8192, 8192);
        assert_eq!(
            c.global_load.sectors, 4,
            "{kernel:?}: a warp reads 32 consecutive floats"
        );
        let store = if kernel == TransposeKernel::Naive32x8 { 32 } else { 4 };
        assert_eq!(c.global_store.sectors, store, "{kernel:?}");
        let (want_store, want_load) = match kernel.pad() {
            None => (None, None),
            Some(0) => (Some(1), Some(32)),
            Some(_) => (Some(1), Some(1)),
        };
        assert_eq!(
            (c.shared_store_conflict, c.shared_load_conflict),
            (want_store, want_load),
            "{kernel:?}"
        );
        assert_eq!(
            kernel.elements_per_thread() * kernel.threads_per_block(),
            kernel.side() * kernel.side()
        );
    }
    assert_eq!(TransposeKernel::Tile32x32.elements_per_thread(), 1);
    assert_eq!(TransposeKernel::TilePadded32x8.elements_per_thread(), 4);
    assert_eq!(TransposeKernel::Tile64Padded32x8.elements_per_thread(), 16);
    assert_eq!(TransposeKernel::TilePadded32x32.shared_bytes(), 32 * 33 * 4);
    assert_eq!(TransposeKernel::Naive32x8.shared_bytes(), 0);
    // One block per tile, partial tiles included.
    assert_eq!(TransposeKernel::Tile32x8.grid(1000, 1003), (32, 32));
    assert_eq!(TransposeKernel::Tile64Padded32x8.grid(1, 7), (1, 1));
    assert_eq!(TransposeKernel::Tile32x8.grid(8192, 8192), (256, 256));
    let names: std::collections::HashSet<String> =
        TransposeKernel::all().iter().map(|k| k.function()).collect();
    assert_eq!(names.len(), TransposeKernel::all().len());
}

#[test]
fn the_cpu_transpose() {
    // 2 x 3 -> 3 x 2
    assert_eq!(
        reference::transpose(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 2, 3),
        vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]
    );
    assert_eq!(reference::transpose(&[1.0, 2.0, 3.0], 1, 3), vec![1.0, 2.0, 3.0]);
    for (rows, cols) in [(1, 7), (7, 1), (33, 65), (100, 103)] {
        let m = cmbook::harness::inputs::random_f32(rows * cols, 1);
        let t = reference::transpose(&m, rows, cols);
        assert_eq!(reference::transpose(&t, cols, rows), m);
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(t[c * rows + r], m[r * cols + c]);
            }
        }
    }
}

#[test]
fn the_affine_read_reference_and_its_length() {
    let src: Vec<u32> = (0..100).collect();
    assert_eq!(reference::affine_read(&src, 4, 3, 1), vec![1, 4, 7, 10]);
    for (stride, offset) in [(1, 0), (1, 7), (3, 0), (64, 5), (7, 99)] {
        let n = reference::affine_read_len(100, stride, offset);
        assert!(
            offset + (n - 1) * stride < 100 && offset + n * stride >= 100,
            "stride {stride} offset {offset}"
        );
    }
    assert_eq!(reference::affine_read_len(100, 1, 100), 0);
}

#[test]
fn every_position_changes_in_a_drift_and_the_layouts_agree() {
    let p = reference::random_particles(10_007, 3);
    assert_eq!(p, reference::random_particles(10_007, 3));
    let aos = p.to_aos();
    let moved = reference::drift_aos(&aos, reference::DRIFT_DT);
    let (x, y, z) = reference::drift_soa(&p, reference::DRIFT_DT);
    for i in 0..p.len() {
        let (before, after) = (aos[i], moved[i]);
        assert!(
            after.x != before.x && after.y != before.y && after.z != before.z,
            "particle {i} would not move"
        );
        assert_eq!(
            (after.vx, after.vy, after.vz, after.mass),
            (before.vx, before.vy, before.vz, before.mass)
        );
        assert_eq!((after.x, after.y, after.z), (x[i], y[i], z[i]));
        // dt is a power of two: fused or not, the same result.
        assert_eq!(after.x, before.x + before.vx * reference::DRIFT_DT);
    }
}

#[test]
fn indices_are_seeded_and_in_range_and_the_gather_follows_them() {
    let idx = reference::random_indices(100_003, 1000, 9);
    assert_eq!(idx, reference::random_indices(100_003, 1000, 9));
    assert!(idx.iter().all(|&k| k < 1000));
    assert!(
        idx.iter().filter(|&&k| k == 0).count() > 0
            && idx.iter().filter(|&&k| k == 999).count() > 0
    );
    let table: Vec<f32> = (0..1000).map(|k| k as f32).collect();
    let out = reference::gather(&table, &idx);
    assert!(out.iter().zip(&idx).all(|(&v, &k)| v == k as f32));
}

const TWO_ENTRIES: &str = r#"
.version 9.0
.target sm_90
.visible .entry first(
	.param .u64 first_param_0
)
{
	.reg .f32 	%f<3>;
	ld.global.f32 	%f1, [%rd1];
	{
	.reg .b32 temp;
	@%p1 ld.global.nc.f32 	%f2, [%rd2];
	}
	st.global.f32 	[%rd3], %f1;
	ret;
}
.visible .entry first_but_longer(
	.param .u64 p
)
{
	ld.global.nc.u32 	%r1, [%rd1];
	ret;
}
"#;

#[test]
fn the_ptx_census_reads_one_entry_including_nested_blocks_and_predicates() {
    assert_eq!(
        census(TWO_ENTRIES, "first"),
        Some(Census { coherent_loads: 1, non_coherent_loads: 1, stores: 1 })
    );
    assert_eq!(
        census(TWO_ENTRIES, "first_but_longer"),
        Some(Census { coherent_loads: 0, non_coherent_loads: 1, stores: 0 })
    );
    assert_eq!(census(TWO_ENTRIES, "missing"), None);
    assert!(entry_body(TWO_ENTRIES, "first").unwrap().contains("st.global"));
}

fn coalescing_ptx() -> String {
    kernels::compile(KERNEL_FILE, "compute_90").unwrap_or_else(|e| panic!("{e}")).ptx
}

#[test]
#[cfg_attr(
    cmbook_no_nvrtc,
    ignore = "needs libnvrtc.so.13 on the loader path (see README)"
)]
fn const_restrict_and_ldg_give_non_coherent_loads_and_plain_pointers_do_not() {
    let ptx = coalescing_ptx();
    for kernel in ReadOnlyKernel::all() {
        let c = census(&ptx, &kernel.function())
            .unwrap_or_else(|| panic!("no entry {}", kernel.function()));
        let loads = c.coherent_loads + c.non_coherent_loads;
        // A gather loads an index and a table value per element, a copy one value.
        let per_element = if kernel.is_gather() { 2 } else { 1 };
        assert!(loads >= per_element * kernel.per_thread(), "{kernel:?}: {c:?}");
        assert!(c.stores >= kernel.per_thread(), "{kernel:?}: {c:?}");
        // `const` alone and loads written first keep ordinary loads; any `__restrict__`
        // (even on `out` alone, which leaves the loaded pointers provably read-only) and
        // `__ldg` give non-coherent ones.
        match kernel.qualifiers() {
            "plain pointers" | "const" | "plain, loads first" => {
                assert_eq!(c.non_coherent_loads, 0, "{kernel:?}: {c:?}")
            }
            _ => assert_eq!(c.coherent_loads, 0, "{kernel:?}: {c:?}"),
        }
    }
}

/// The assembler's schedule (ptxas and nvdisasm: on PATH, or named by CMBOOK_PTXAS and
/// CMBOOK_NVDISASM): with non-coherent loads the four elements' loads are all issued before
/// the first store; with plain or `const` pointers a store separates them; written in that
/// order in the source, ordinary loads go first too.
#[test]
#[cfg_attr(
    any(cmbook_no_nvrtc, cmbook_no_sass_tools),
    ignore = "needs libnvrtc.so.13 and ptxas + nvdisasm (CMBOOK_PTXAS, CMBOOK_NVDISASM)"
)]
fn with_read_only_loads_the_assembler_issues_every_load_before_the_first_store() {
    let tools = cmbook::harness::sass::Tools::find().expect("ptxas and nvdisasm");
    let sass = tools.disassemble(&coalescing_ptx(), "sm_90").unwrap();
    let of = |k: ReadOnlyKernel| sass_census(sass.function(&k.function()).unwrap());
    for k in [ReadOnlyKernel::Gather4Plain, ReadOnlyKernel::Gather4Const] {
        let c = of(k);
        assert!(c.loads_before_a_store <= 2, "{k:?}: a store must separate: {c:?}");
        assert_eq!(c.non_coherent_loads, 0, "{k:?}: {c:?}");
    }
    for k in [
        ReadOnlyKernel::Gather4Restrict,
        ReadOnlyKernel::Gather4RestrictOnly,
        ReadOnlyKernel::Gather4RestrictOut,
        ReadOnlyKernel::Gather4Ldg,
    ] {
        let c = of(k);
        assert!(c.loads_before_a_store >= 8, "{k:?}: {c:?}");
        assert_eq!(c.coherent_loads, 0, "{k:?}: {c:?}");
    }
    let first = of(ReadOnlyKernel::Gather4LoadsFirst);
    assert!(first.loads_before_a_store >= 8, "{first:?}");
    assert_eq!(first.non_coherent_loads, 0, "{first:?}");
}

const LISTING: &str = "
\t.text.k:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/               @P0 LDG.E.CONSTANT R2, desc[UR4][R4.64] ;
        /*0020*/                   LDG.E R3, desc[UR4][R6.64] ;
        /*0030*/                   ULDC.64 UR6, c[0x3][UR4+0x8] ;
        /*0040*/                   STG.E desc[UR4][R8.64], R2 ;
        /*0050*/               @P1 BRA `(.L_x_1) ;
        /*0060*/                   EXIT ;
";

#[test]
fn the_sass_reader_finds_instructions_labels_and_loops() {
    let sass = cmbook::harness::sass::Sass::parse(LISTING);
    let f = sass.function("k").expect("function k");
    assert_eq!(f.instrs.len(), 7);
    assert_eq!(f.instrs[1].predicate.as_deref(), Some("@P0"));
    assert_eq!(f.instrs[1].opcode, "LDG.E.CONSTANT");
    assert_eq!(f.loops(), vec![1..6]);
    let c = sass_census(f);
    assert_eq!(
        c,
        SassCensus {
            coherent_loads: 1,
            non_coherent_loads: 1,
            stores: 1,
            loads_before_a_store: 2
        }
    );
    let uniform = f.count(cmbook::harness::sass::is_user_constant_load);
    assert_eq!(uniform, 1, "the parameter load from bank 0 is not counted");
}

#[test]
fn exercise_1_float3_x_touches_twelve_sectors_in_three_lines() {
    let f = exercises::float3_x_request();
    assert_eq!(f, Footprint { lanes: 32, requested_bytes: 128, sectors: 12, lines: 3 });
    assert!(close(f.efficiency(), 1.0 / 3.0));
}

#[test]
fn exercise_2_odd_row_widths_are_conflict_free() {
    let degrees = exercises::conflict_by_row_width(32..=40);
    assert_eq!(
        degrees,
        vec![
            (32, 32),
            (33, 1),
            (34, 2),
            (35, 1),
            (36, 4),
            (37, 1),
            (38, 2),
            (39, 1),
            (40, 8)
        ]
    );
}

#[test]
fn exercise_3_padding_the_record_to_32_bytes_moves_more() {
    let (packed, padded) = exercises::padded_record_fractions();
    assert!(close(packed, 36.0 / 56.0), "{packed}");
    assert!(close(padded, 36.0 / 64.0), "{padded}");
    assert!(padded < packed);
}

/// A measurement that reached `fraction` of a 3000 GB/s ceiling, with a little spread.
fn made_up(fraction: f64, useful_bytes: u64) -> Measurement {
    let ms = useful_bytes as f64 / (fraction * 3000e9) * 1e3;
    Measurement {
        stats: Stats::from_samples(&[ms * 0.98, ms, ms * 1.04]).unwrap(),
        useful_bytes,
    }
}

/// The ceilings a run measures on `bytes`: a read-only stream 6% faster than the copy,
/// as on the book's GPU, and a write-only one faster still.
fn made_up_ceilings(bytes: usize, copy: f64, copy_by: &'static str) -> Ceilings {
    Ceilings {
        bytes,
        l2: L2::Cold,
        copy,
        copy_by,
        read: 1.06 * copy,
        write: 1.09 * copy,
    }
}

/// Results as a full run on a 3000 GB/s device might measure them.
fn made_up_results() -> Results {
    let (strides, offsets) = (sweep_strides(false), sweep_offsets(false));
    let mut strided = std::collections::HashMap::new();
    for elem_bytes in [4u64, 8] {
        for &stride in &strides {
            let p = Pattern::Affine { elem_bytes, stride, offset: 0 };
            strided.insert(p, made_up(0.9 * p.predicted_fraction(), 1 << 28));
        }
    }
    let misaligned = offsets
        .iter()
        .map(|&offset| {
            (
                Pattern::Affine { elem_bytes: 4, stride: 1, offset },
                made_up(0.93, 1 << 28),
            )
        })
        .collect();
    Results {
        ceiling_bytes: 1 << 30,
        ceiling: Rate { median: 3000.0, best: 3050.0, worst: 2900.0 },
        ceilings: made_up_ceilings(1 << 30, 3000.0, "copy kernel"),
        strides,
        offsets,
        sweep_bytes: 1 << 30,
        offset_bytes: 1 << 29,
        particles: 1000,
        strided,
        misaligned,
        drift_aos: made_up(0.6, 36_000),
        drift_soa: made_up(0.95, 36_000),
        transpose_n: 8192,
        transpose_copy: Rate { median: 2900.0, best: 2950.0, worst: 2800.0 },
        transpose_copy_by: "copy kernel",
        transpose_ceilings: made_up_ceilings(8192 * 8192 * 4, 2900.0, "copy kernel"),
        transposes: TransposeKernel::all()
            .into_iter()
            .map(|k| (k, made_up(0.8, 1 << 29)))
            .collect(),
        sides: [8191, 8193]
            .into_iter()
            .map(|side| SideResult {
                side,
                copy: Rate { median: 2900.0, best: 2950.0, worst: 2800.0 },
                copy_by: "cuMemcpyDtoD",
                ceilings: made_up_ceilings(side * side * 4, 2900.0, "cuMemcpyDtoD"),
                runs: [Layout::Packed, Layout::Pitched(PITCH_FLOATS)]
                    .into_iter()
                    .flat_map(|l| SIDE_KERNELS.map(|k| (k, l, made_up(0.8, 1 << 29))))
                    .collect(),
            })
            .collect(),
        tma: vec![
            TmaRun {
                side: 8192,
                layout: Layout::Packed,
                time: Ok(made_up(0.85, 1 << 29)),
            },
            TmaRun {
                side: 8191,
                layout: Layout::Packed,
                time: Err("stride 32764 bytes is not a multiple of 16".to_string()),
            },
            TmaRun {
                side: 8191,
                layout: Layout::Pitched(PITCH_FLOATS),
                time: Ok(made_up(0.85, 1 << 29)),
            },
        ],
        skipped: Vec::new(),
        readonly_n: 1000,
        table_len: 16_384,
        readonly: ReadOnlyKernel::all()
            .into_iter()
            .map(|k| (k, made_up(0.7, 8000)))
            .collect(),
        ptx: ReadOnlyKernel::all()
            .into_iter()
            .map(|k| {
                (k, Census { coherent_loads: 2, non_coherent_loads: 0, stores: 1 })
            })
            .collect(),
        compiled_by: "NVRTC 13.0 for compute_90".to_string(),
        sass: Some((
            "Cuda compilation tools, release 13.0 for sm_90".to_string(),
            ReadOnlyKernel::all()
                .into_iter()
                .map(|k| {
                    let c = SassCensus {
                        coherent_loads: 2,
                        non_coherent_loads: 0,
                        stores: 1,
                        loads_before_a_store: 2,
                    };
                    (k, c)
                })
                .collect(),
        )),
        granularity: GranularitySweep {
            default: 32,
            runs: GRANULARITIES
                .iter()
                .map(|&g| GranularityRun {
                    requested: g,
                    in_force: g,
                    points: granularity_strides(false)
                        .into_iter()
                        .map(|s| {
                            (
                                s,
                                made_up(
                                    0.8 * fetch_model_fraction(4, s, g as u64),
                                    1 << 28,
                                ),
                            )
                        })
                        .collect(),
                })
                .collect(),
        },
    }
}

/// A run of the chapter that opens no GPU and writes into `dir`.
fn cpu_run(dir: &Path) -> Run {
    run::offline(&cmbook::coalescing::CHAPTER, dir).unwrap()
}

#[test]
fn every_figure_and_table_is_drawn_from_made_up_results_and_passes_the_audit() {
    let results = made_up_results();
    let dir = tempfile::tempdir().unwrap();
    report::report(&cpu_run(dir.path()), &results).unwrap();
    let lines = report::summary(&results).unwrap();
    assert!(
        lines.iter().any(|l| l.contains("transpose_tile_padded_32x8")),
        "{lines:?}"
    );
    let problems = plot::audit_figures(dir.path()).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    for stem in ["stride", "offset", "layout", "transpose", "readonly"] {
        assert!(dir.path().join(format!("coalescing-{stem}.svg")).exists(), "{stem}");
    }
    for stem in ["patterns", "transpose-kernels", "readonly-ptx"] {
        assert!(dir.path().join(format!("coalescing-{stem}.md")).exists(), "{stem}");
    }
    let patterns =
        record::read_csv(&dir.path().join("data/coalescing-patterns.csv")).unwrap();
    assert_eq!(patterns.rows.len(), Pattern::table().len());
    assert_eq!(patterns.meta.get("l2").map(|v| v.starts_with("cold")), Some(true));
    // The Hopper chapter's TMA transpose: a row and a bar at 8192, a row that says why
    // it did not run with packed rows of 8191 floats, and its pitched run at 8191.
    let kernels =
        record::read_csv(&dir.path().join("data/coalescing-transpose-kernels.csv"))
            .unwrap();
    let tma = kernels.rows.last().unwrap();
    assert_eq!((tma[0].as_str(), tma[4].as_str()), ("TMA 32x8", "1-way, 4-way"));
    let pitch =
        record::read_csv(&dir.path().join("data/coalescing-transpose-pitch.csv"))
            .unwrap();
    let tma_rows: Vec<_> = pitch.rows.iter().filter(|r| r[2] == "TMA 32x8").collect();
    assert_eq!(tma_rows.len(), 3);
    assert!(tma_rows[1][4].starts_with("not run: "), "{:?}", tma_rows[1]);
    assert!(tma_rows[2][6].ends_with('%'), "{:?}", tma_rows[2]);
    // A pattern of the table that was not measured is an error, not a blank cell.
    let mut incomplete = results.clone();
    incomplete.misaligned.clear();
    assert!(report::report(&cpu_run(dir.path()), &incomplete).is_err());
    assert!(report::summary(&incomplete).is_err());
}

#[test]
fn a_run_writes_what_the_book_holds_with_the_same_keys_columns_and_axes() {
    let dir = tempfile::tempdir().unwrap();
    report::report(&cpu_run(dir.path()), &made_up_results()).unwrap();
    let problems =
        run::shape_differences_from_book(&cmbook::coalescing::CHAPTER, dir.path())
            .unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn one_table_names_every_kernel_of_the_file_once() {
    let source =
        kernels::source(KERNEL_FILE).expect("the kernel file is registered").source;
    let all = CoalescingKernel::all();
    let mut names: Vec<String> = all.iter().map(|k| k.function()).collect();
    assert!(all.iter().all(|k| k.file() == KERNEL_FILE));
    for name in &names {
        assert!(
            source.contains(&format!("extern \"C\" __global__ void {name}(")),
            "{name} is not a kernel of {KERNEL_FILE}"
        );
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    assert_eq!(source.matches("extern \"C\" __global__").count(), all.len());
}

#[test]
fn the_swizzled_tile_reads_a_column_four_ways_and_writes_a_row_without_conflict() {
    use cmbook::coalescing::transpose::{swizzled_word, tma_conflicts};
    assert_eq!(tma_conflicts(), (1, 4));
    // Every word of the tile is used exactly once: the swizzle is a permutation.
    let mut words: Vec<u64> =
        (0..32).flat_map(|r| (0..32).map(move |c| swizzled_word(r, c))).collect();
    words.sort();
    assert_eq!(words, (0..1024).collect::<Vec<u64>>());
}
