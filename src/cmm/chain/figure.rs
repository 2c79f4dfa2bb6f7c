//! The chapter's figure of the chains: predicted FLOP ratio against measured time ratio.

use super::measure::ChainRow;
use crate::harness::plot::{Point, Spec};

/// The figure's series of chains.
pub const MEASURED_SERIES: &str = "measured time ratio";
/// The figure's reference line.
pub const PREDICTED_SERIES: &str = "predicted = measured";

/// The figure's points: one per chain at (predicted FLOP ratio, measured time ratio), with the
/// ratio's range over the repetitions as error bar, sorted by predicted ratio; and the line
/// `y = x` across the predicted ratios, where a chain would lie if time followed FLOPs.
pub fn figure_points(rows: &[ChainRow]) -> Vec<Point> {
    let mut sorted: Vec<&ChainRow> = rows.iter().collect();
    sorted.sort_by(|a, b| a.predicted_ratio.total_cmp(&b.predicted_ratio));
    let mut points: Vec<Point> = sorted
        .iter()
        .map(|r| {
            let (lo, hi) = r.measured_ratio_range();
            Point::new(MEASURED_SERIES, r.predicted_ratio, r.measured_ratio, lo, hi)
        })
        .collect();
    if let (Some(first), Some(last)) = (sorted.first(), sorted.last()) {
        for x in [first.predicted_ratio, last.predicted_ratio] {
            points.push(Point::new(PREDICTED_SERIES, x, x, x, x));
        }
    }
    points
}

/// How to draw [`figure_points`]: log-log, the chains as unjoined markers, each named, and
/// `y = x` dashed.
pub fn figure_spec(rows: &[ChainRow]) -> Spec {
    let mut sorted: Vec<&ChainRow> = rows.iter().collect();
    sorted.sort_by(|a, b| a.predicted_ratio.total_cmp(&b.predicted_ratio));
    let spec = Spec::line(
        "Does the optimal order pay? Predicted FLOP ratio vs measured time ratio",
        "predicted FLOP ratio, left to right / optimal order",
        "measured time ratio, left to right / optimal order",
    )
    .log_x()
    .log_y()
    .markers_only(MEASURED_SERIES)
    .dashed(PREDICTED_SERIES);
    // The x of a marker as its point writes it, so the label finds its marker.
    sorted
        .iter()
        .fold(spec, |s, r| s.point_label(&r.predicted_ratio.to_string(), &r.chain))
}

#[cfg(test)]
mod tests {
    use super::super::chains::NamedChain;
    use super::super::plan::{gflop, left_to_right, Prediction};
    use super::*;
    use crate::harness::Stats;

    fn row(name: &str, predicted: f64, ltr_ms: f64, opt_ms: f64) -> ChainRow {
        let chain = NamedChain::new(name, vec![2, 2, 2]);
        let prediction = Prediction {
            left_to_right: left_to_right(2),
            optimal: left_to_right(2),
            left_to_right_mults: (predicted * 1e6) as u128,
            optimal_mults: 1_000_000,
        };
        let stats = |ms: f64| Stats {
            median_ms: ms,
            min_ms: ms * 0.9,
            max_ms: ms * 1.2,
            mean_ms: ms,
            reps: 3,
        };
        ChainRow::new(&chain, &prediction, &stats(ltr_ms), &stats(opt_ms))
    }

    #[test]
    fn figure_points_are_sorted_with_a_diagonal_across_them() {
        let rows = [
            row("b", 8.0, 4.0, 1.0),
            row("a", 1.5, 1.0, 1.0),
            row("c", 30.0, 3.0, 1.0),
        ];
        let pts = figure_points(&rows);
        let measured: Vec<&Point> =
            pts.iter().filter(|p| p.series == MEASURED_SERIES).collect();
        assert_eq!(
            measured.iter().map(|p| p.x.as_str()).collect::<Vec<_>>(),
            ["1.5", "8", "30"]
        );
        assert_eq!(measured[1].y, 4.0);
        assert!(measured[1].y_min < 4.0 && measured[1].y_max > 4.0);
        let diagonal: Vec<&Point> =
            pts.iter().filter(|p| p.series == PREDICTED_SERIES).collect();
        assert_eq!(diagonal.len(), 2);
        assert!(diagonal.iter().all(|p| p.x.parse::<f64>().unwrap() == p.y));
        assert_eq!(rows[0].left_to_right_gflop_per_s, gflop(8_000_000) / 4e-3);
        assert!(figure_points(&[]).is_empty());
        let spec = figure_spec(&rows);
        assert!(spec.x_log && spec.y_log && spec.markers_only == [MEASURED_SERIES]);
        // Every chain's marker is named, at its x as the points write it.
        assert_eq!(spec.point_labels.len(), rows.len());
        for p in &measured {
            assert!(spec.point_labels.iter().any(|(x, _)| *x == p.x), "{}", p.x);
        }
    }
}
