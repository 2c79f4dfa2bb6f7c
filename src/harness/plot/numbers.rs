//! How numbers are written: value labels on bars and dots, hover-title numbers, byte counts in
//! binary units, and the tick labels of one axis (consistent decimals and SI prefixes).

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `v` with `digits` significant digits, no exponent, trailing zeros dropped.
fn sig(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).max(0) as usize;
    let s = trim_zeros(format!("{v:.decimals$}"));
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// `v` divided by its SI prefix (k, M, G) with `digits` significant digits: `32.6k`.
fn si(v: f64, digits: i32) -> String {
    let a = v.abs();
    let (div, suffix) = if a >= 1e9 {
        (1e9, "G")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{}{suffix}", sig(v / div, digits))
}

/// A value written on a bar or beside a dot: three significant digits, trailing zeros kept so
/// neighbours read alike (`0.560` beside `0.959`, `1.00`), whole numbers from 100 to 9999, an
/// SI prefix from 10 000 (`10.5`, `2803`, `32.6k`).
pub(super) fn value_label(v: f64) -> String {
    let a = v.abs();
    if a >= 1e4 {
        si(v, 3)
    } else if a >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        // Rounding can add a digit (9.996 -> 10.00): write it with three again.
        if s.trim_start_matches('-').replace('.', "").trim_start_matches('0').len() > 3
        {
            value_label(s.parse().unwrap_or(v))
        } else {
            s
        }
    }
}

/// A value in a hover title: four significant digits, whole numbers from 1000.
pub(super) fn hover_number(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        sig(v, 4)
    }
}

/// A byte count in binary units: `512 B`, `4 KiB`, `1.5 MiB`.
pub(super) fn bytes_label(v: f64) -> String {
    const K: f64 = 1024.0;
    let (div, unit) = if v >= K * K * K {
        (K * K * K, "GiB")
    } else if v >= K * K {
        (K * K, "MiB")
    } else if v >= K {
        (K, "KiB")
    } else {
        (1.0, "B")
    };
    format!("{} {unit}", sig(v / div, 3))
}

/// Decimals needed to write multiples of `step` exactly.
fn decimals_of(step: f64) -> usize {
    (0..10)
        .find(|&d| {
            let s = step * 10f64.powi(d as i32);
            (s - s.round()).abs() < 1e-6 * s.abs().max(1.0)
        })
        .unwrap_or(10)
}

/// Tick labels of one axis, written consistently: plain numbers, with an SI prefix on every
/// label from 1000 up when the axis reaches 10 000 (`500, 1k, 2k, 10k`, never `1e4`).
pub(super) fn tick_labels(
    values: &[f64],
    step: Option<f64>,
    bytes: bool,
) -> Vec<String> {
    if bytes {
        return values.iter().map(|&v| bytes_label(v)).collect();
    }
    let top = values.iter().fold(0f64, |m, v| m.max(v.abs()));
    let prefixed = top >= 1e4;
    values
        .iter()
        .map(|&v| {
            if prefixed && v.abs() >= 1000.0 {
                match step {
                    Some(s) => {
                        let div = if top >= 1e7 { 1e6 } else { 1e3 };
                        let suffix = if top >= 1e7 { "M" } else { "k" };
                        let d = decimals_of(s / div);
                        format!("{}{suffix}", trim_zeros(format!("{:.d$}", v / div)))
                    }
                    None => si(v, 3),
                }
            } else {
                match step {
                    Some(s) => {
                        let d = decimals_of(s);
                        let t = format!("{v:.d$}");
                        if t.trim_start_matches('-')
                            .chars()
                            .all(|c| c == '0' || c == '.')
                        {
                            "0".into()
                        } else {
                            t
                        }
                    }
                    None => sig(v, 4),
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::plot::testing::draw;
    use crate::harness::plot::{read_svg_layout, Point, Spec};

    #[test]
    fn numbers_carry_sensible_digits() {
        assert_eq!(value_label(10.542388), "10.5");
        assert_eq!(value_label(32644.348), "32.6k");
        assert_eq!(value_label(116410.4), "116k");
        assert_eq!(value_label(2803.21), "2803");
        assert_eq!(value_label(0.0457), "0.0457");
        assert_eq!(value_label(0.56), "0.560");
        assert_eq!(value_label(1.0), "1.00");
        assert_eq!(value_label(9.996), "10.0");
        assert_eq!(value_label(99.96), "100");
        assert_eq!(value_label(100.0), "100");
        assert_eq!(hover_number(32644.348), "32644");
        assert_eq!(hover_number(1.2231084), "1.223");
        assert_eq!(bytes_label(131072.0), "128 KiB");
        assert_eq!(bytes_label(536870912.0), "512 MiB");
        assert_eq!(bytes_label(52428800.0), "50 MiB");
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(sig(9.996, 3), "10");
    }

    #[test]
    fn tick_labels_are_consistent_on_an_axis() {
        // Log axis across 10 000: an SI prefix on every label from 1000 up, no exponents.
        let l = tick_labels(&[100.0, 1000.0, 10000.0, 100000.0], None, false);
        assert_eq!(l, ["100", "1k", "10k", "100k"]);
        // Below 10 000 plain numbers.
        assert_eq!(
            tick_labels(&[1.0, 10.0, 100.0, 1000.0], None, false),
            ["1", "10", "100", "1000"]
        );
        // Linear: the step's decimals, on every label.
        assert_eq!(
            tick_labels(&[0.0, 0.25, 0.5], Some(0.25), false),
            ["0", "0.25", "0.50"]
        );
        assert_eq!(
            tick_labels(&[0.0, 20000.0, 40000.0], Some(20000.0), false),
            ["0", "20k", "40k"]
        );
        // Both axes of a drawn log-log figure: no exponent, no 10000 beside a 1k.
        let svg = draw(
            &Spec::line("t", "x", "y").log_x().log_y(),
            &[
                Point::new("s", 1, 3.0, 3.0, 3.0),
                Point::new("s", 100000, 300000.0, 300000.0, 300000.0),
            ],
        );
        let texts: Vec<String> =
            read_svg_layout(&svg).texts.into_iter().map(|t| t.text).collect();
        assert!(
            !texts.iter().any(|t| t.contains("e4") || t.contains("e5") || t == "10000"),
            "{texts:?}"
        );
        assert!(texts.contains(&"10k".to_string()), "{texts:?}");
    }
}
