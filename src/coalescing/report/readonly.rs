//! The read-only data path: streamed bandwidth, and the loads and stores counted in the
//! PTX and, where the tools are installed, in the SASS.

use crate::harness::ceiling::with_meta;
use crate::harness::kernels::KernelName;
use crate::harness::plot::{Point, Spec};
use crate::harness::Run;

use super::super::measure::Results;
use super::L2_COLD;

#[derive(serde::Serialize)]
pub(super) struct SassRow {
    kernel: String,
    pointers: String,
    #[serde(rename = "LDG")]
    coherent: usize,
    #[serde(rename = "LDG.CONSTANT")]
    non_coherent: usize,
    #[serde(rename = "STG")]
    stores: usize,
    #[serde(rename = "loads before a store")]
    loads_before_a_store: usize,
}

#[derive(serde::Serialize)]
pub(super) struct PtxRow {
    kernel: String,
    pointers: String,
    #[serde(rename = "ld.global")]
    coherent: usize,
    #[serde(rename = "ld.global.nc")]
    non_coherent: usize,
    #[serde(rename = "st.global")]
    stores: usize,
}

/// Markdown code spans around qualifiers, so `__restrict__` is not read as emphasis.
pub(super) fn code_unless_plain(qualifiers: &str) -> String {
    if qualifiers.starts_with("plain") {
        qualifiers.to_string()
    } else {
        format!("`{qualifiers}`")
    }
}

/// The read-only data path: streamed bandwidth (figure), and the loads and stores counted
/// in the PTX and, where the tools are installed, in the SASS.
pub(super) fn write_readonly(run: &Run, r: &Results) -> anyhow::Result<()> {
    let fraction = "fraction of the copy ceiling";
    let ceiling = r.ceiling_note();
    let one_way = r.one_way_ceilings();
    // The read-only data path.
    let points: Vec<Point> = r
        .readonly
        .iter()
        .map(|(k, m)| r.fraction_point(k.qualifiers(), k.workload(), m))
        .collect();
    run.figure(
        "coalescing-readonly",
        &with_meta(
            &[
                ("l2", L2_COLD),
                ("elements", &r.readonly_n.to_string()),
                ("table_floats", &r.table_len.to_string()),
                ("ceiling", &ceiling),
            ],
            &one_way,
        ),
        // Grouped by qualifiers, a colour per kernel: seven variants side by side would be
        // seven series; as categories they are three.
        &Spec::bar(
            "Read-only data path: streamed bytes per second",
            "pointer qualifiers",
            fraction,
        )
        .x_is_series(),
        &points,
    )?;
    let ptx_rows: Vec<PtxRow> = r
        .ptx
        .iter()
        .map(|(k, c)| PtxRow {
            kernel: format!("`{}`", k.function()),
            pointers: code_unless_plain(k.qualifiers()),
            coherent: c.coherent_loads,
            non_coherent: c.non_coherent_loads,
            stores: c.stores,
        })
        .collect();
    run.table(
        "coalescing-readonly-ptx",
        &format!("Global loads and stores in the PTX of {}", r.compiled_by),
        &[
            ("source", "counted in the PTX of this run (no measurement)"),
            ("computed", "`coalescing::ptx` from the PTX that NVRTC writes"),
            ("headers", "ld.global = `ld.global` | ld.global.nc = `ld.global.nc` | st.global = `st.global`"),
        ],
        &ptx_rows,
    )?;

    if let Some((assembled_by, counts)) = &r.sass {
        let rows: Vec<SassRow> = counts
            .iter()
            .map(|(k, c)| SassRow {
                kernel: format!("`{}`", k.function()),
                pointers: code_unless_plain(k.qualifiers()),
                coherent: c.coherent_loads,
                non_coherent: c.non_coherent_loads,
                stores: c.stores,
                loads_before_a_store: c.loads_before_a_store,
            })
            .collect();
        run.table(
            "coalescing-readonly-sass",
            &format!("Global loads and stores in the machine code (SASS) of {assembled_by}"),
            &[
                ("source", "counted in the SASS of this run's PTX (no measurement)"),
                ("computed", "`coalescing::ptx::sass_census` on ptxas + nvdisasm output"),
                ("counted", "LDG = ordinary global loads; LDG.CONSTANT = non-coherent loads (ld.global.nc); loads before a store = the longest run of global loads with no global store between them"),
                ("headers", "LDG = `LDG.E` | LDG.CONSTANT = `LDG.E.CONSTANT` | STG = `STG.E`"),
            ],
            &rows,
        )?;
    }
    Ok(())
}
