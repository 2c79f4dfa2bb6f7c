//! Helpers of the unit tests: a record with test provenance, its drawing, and the check that a
//! drawing has no layout problem.

use super::layout::draw_svg;
use super::read::layout_problems;
use super::{Point, Spec};
use crate::harness::record::{self, Meta, Record};

pub(super) fn record(spec: &Spec, points: &[Point]) -> Record {
    let meta = spec.add_to(
        Meta::default()
            .with("gpu", "Test GPU")
            .with("commit", "abc")
            .with("l2_mib", "50")
            .with("command", "cargo run --release --example test"),
    );
    record::parse_csv(&record::to_csv_string(&meta, points).unwrap()).unwrap()
}

pub(super) fn draw(spec: &Spec, points: &[Point]) -> String {
    draw_svg(&record(spec, points), "t.csv").unwrap()
}

pub(super) fn clean(svg: &str) {
    let p = layout_problems(svg);
    assert!(p.is_empty(), "{}\n{svg}", p.join("\n"));
}
