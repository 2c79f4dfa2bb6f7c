//! The parent's two tables: what ncu counted for each case (`<chapter>-counters`) and each
//! prediction beside its count (`<chapter>-counted`).

use anyhow::bail;

use super::{sum_case, Case, Counted, Launch, MARKER};

/// Splits the profiled launches at the marker launches and pairs each run of launches with
/// its case, in order.
pub fn split_cases(
    launches: &[Launch],
    cases: &[Case],
) -> anyhow::Result<Vec<Counted>> {
    let mut groups: Vec<Vec<Launch>> = Vec::new();
    for l in launches {
        if l.function() == MARKER {
            groups.push(Vec::new());
        } else if let Some(g) = groups.last_mut() {
            g.push(l.clone());
        } else {
            bail!("ncu profiled `{}` before the first case's marker", l.kernel);
        }
    }
    if groups.len() != cases.len() {
        bail!(
            "ncu counted {} cases but the run labelled {}: the counts cannot be matched",
            groups.len(),
            cases.len()
        );
    }
    let mut out = Vec::with_capacity(cases.len());
    for (case, g) in cases.iter().zip(&groups) {
        if g.is_empty() {
            bail!("case `{}` launched no kernel", case.label);
        }
        out.push(sum_case(&case.label, g)?);
    }
    Ok(out)
}

/// A row of the predicted-vs-counted table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PredictedVsCounted {
    pub case: String,
    pub quantity: String,
    pub predicted: String,
    pub counted: String,
    /// Counted divided by predicted (empty when the prediction is zero).
    pub counted_over_predicted: String,
    pub predicted_value: f64,
    pub counted_value: f64,
}

/// One row per prediction of every case.
pub fn compare_rows(cases: &[Case], counted: &[Counted]) -> Vec<PredictedVsCounted> {
    let mut rows = Vec::new();
    for (case, c) in cases.iter().zip(counted) {
        for &(q, predicted) in &case.predictions {
            let got = q.counted(c);
            rows.push(PredictedVsCounted {
                case: case.label.clone(),
                quantity: q.name().to_string(),
                predicted: q.show(predicted),
                counted: q.show(got),
                counted_over_predicted: if predicted != 0.0 {
                    format!("{:.2}", got / predicted)
                } else {
                    String::new()
                },
                predicted_value: predicted,
                counted_value: got,
            });
        }
    }
    rows
}

/// How the counters table is shown (the other columns stay in its CSV).
pub(super) const COUNTERS_SHOWN: &[(&str, &str)] = &[
    (
        "columns",
        "case | dram | ld_l1_hit_pct | l2_hit_pct | ld_sectors_per_request | \
         st_sectors_per_request | achieved_occupancy_pct | stall_1",
    ),
    (
        "headers",
        "case = case | dram = DRAM read + written | ld_l1_hit_pct = L1 hit, loads (%) | \
         l2_hit_pct = L2 hit (%) | \
         ld_sectors_per_request = sectors / load | st_sectors_per_request = sectors / store | \
         achieved_occupancy_pct = occupancy (%) | stall_1 = top stall",
    ),
];

/// How the predicted-vs-counted table is shown.
pub(super) const COUNTED_SHOWN: &[(&str, &str)] = &[
    ("columns", "case | quantity | predicted | counted | counted_over_predicted"),
    (
        "headers",
        "case = case | quantity = quantity | predicted = predicted | counted = counted | \
         counted_over_predicted = counted ÷ predicted",
    ),
];

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::ncu::tests::fixture_launches;
    use super::super::Quantity;
    use super::*;
    use crate::harness::record::{write_table, Meta};

    fn marker() -> Launch {
        Launch { id: "m".into(), kernel: "empty()".into(), values: BTreeMap::new() }
    }

    #[test]
    fn cases_are_split_at_markers_and_mismatches_refused() {
        let launches = fixture_launches();
        let seq = vec![marker(), launches[0].clone(), marker(), launches[1].clone()];
        let cases = vec![
            Case::new("saxpy").predict(Quantity::LoadSectorsPerRequest, 4.0),
            Case::new("transpose").predict(Quantity::BankConflicts, 0.0),
        ];
        let counted = split_cases(&seq, &cases).unwrap();
        assert_eq!(counted[1].kernels, "transpose_probe");
        let rows = compare_rows(&cases, &counted);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].counted_over_predicted, "1.00");
        assert_eq!(rows[1].counted_over_predicted, "", "no ratio to a zero prediction");
        assert!(split_cases(&seq, &cases[..1]).is_err());
        assert!(split_cases(&launches, &cases).is_err(), "no marker before the first");
    }

    /// The columns, in order, of the book's newest counters records (`atax-counters.csv`).
    const BOOK_COLUMNS: &str = "case,kernels,dram,launches,duration_us,sm_clock_mhz,\
        registers_per_thread,dram_read_bytes,dram_write_bytes,l2_sectors,l2_hit_pct,\
        ld_requests,ld_sectors,ld_sectors_per_request,st_requests,st_sectors,\
        st_sectors_per_request,shared_ld_wavefronts,shared_ld_conflicts,shared_st_wavefronts,\
        shared_st_conflicts,achieved_occupancy_pct,theoretical_occupancy_pct,\
        warp_instructions,stall_1,stall_2,stall_3,idc_requests,idc_misses,\
        idc_misses_per_request,stalls_all";

    /// The columns a run writes after those: newer than some of the book's records.
    const NEWER_COLUMNS: &str = "ld_l1_hit_sectors,ld_l1_hit_pct,ld_wavefronts,\
        ld_wavefronts_per_request,sm_active_cycles,sm_active_pct,waves_per_sm";

    #[test]
    fn both_tables_render_from_their_records() {
        let launches = fixture_launches();
        let seq = vec![marker(), launches[0].clone()];
        let cases = vec![Case::new("saxpy").predict(Quantity::DramBytes, 3.0e7)];
        let counted = split_cases(&seq, &cases).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for (stem, shown) in
            [("x-counters", COUNTERS_SHOWN), ("x-counted", COUNTED_SHOWN)]
        {
            let meta = shown.iter().fold(Meta::default(), |m, (k, v)| m.with(k, v));
            if stem == "x-counters" {
                write_table(dir.path(), stem, &meta, &counted).unwrap();
            } else {
                let rows = compare_rows(&cases, &counted);
                write_table(dir.path(), stem, &meta, &rows).unwrap();
            }
            let md =
                std::fs::read_to_string(dir.path().join(format!("{stem}.md"))).unwrap();
            assert!(md.contains("saxpy"), "{md}");
        }
        let csv =
            std::fs::read_to_string(dir.path().join("data/x-counters.csv")).unwrap();
        let header = csv.lines().find(|l| !l.starts_with('#')).unwrap();
        // The book's columns first, in their order; the newer ones only after them.
        assert_eq!(header, format!("{BOOK_COLUMNS},{NEWER_COLUMNS}"));
        let book = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/figures/data/atax-counters.csv"
        ))
        .unwrap();
        assert!(book.lines().any(|l| l == BOOK_COLUMNS), "the book's columns changed");
    }

    /// Every counters record of the book, each older than some column, reads as rows of
    /// [`Counted`]: a column it lacks reads as its default.
    #[test]
    fn the_books_counters_records_read_with_the_newer_columns_as_defaults() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/figures/data");
        let mut read = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with("-counters.csv") {
                continue;
            }
            let rows: Vec<Counted> = csv::ReaderBuilder::new()
                .comment(Some(b'#'))
                .from_path(&path)
                .unwrap()
                .deserialize()
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!rows.is_empty(), "{name}");
            let header = std::fs::read_to_string(&path).unwrap();
            if !header.contains("ld_l1_hit_pct") {
                assert!(rows.iter().all(|r| r.ld_l1_hit_pct == 0.0), "{name}");
            }
            read += 1;
        }
        assert!(read >= 2, "{read} counters records found in {dir}");
    }
}
