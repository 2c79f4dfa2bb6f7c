//! How numbers are written into tables and console lines, in one place.

/// Milliseconds for a table cell: one decimal from 100 on, two from 1, and `small_decimals`
/// below 1 ms, so that a cell shows three or four significant digits at any size.
pub fn ms(v: f64, small_decimals: usize) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.small_decimals$}")
    }
}

/// About three significant digits: `2827`, `54.7`, `3.49`.
pub fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A ratio with two decimals: `1.82`.
pub fn ratio(numerator: f64, denominator: f64) -> String {
    format!("{:.2}", numerator / denominator)
}

/// Milliseconds as microseconds with one decimal: `0.3721` → `372.1`.
pub fn us(ms: f64) -> String {
    format!("{:.1}", ms * 1e3)
}

/// Bytes in decimal units with three significant digits: `536870912` → `537 MB`.
pub fn bytes(v: f64) -> String {
    let (scaled, unit) = if v >= 1e9 {
        (v / 1e9, "GB")
    } else if v >= 1e6 {
        (v / 1e6, "MB")
    } else if v >= 1e3 {
        (v / 1e3, "kB")
    } else {
        (v, "B")
    };
    format!("{} {unit}", sig3(scaled))
}

/// A fraction as a percentage with one decimal: `0.8234` → `82.3%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.1}%", 100.0 * fraction)
}

/// Bytes in binary mebibytes with `decimals` decimals: `(12582912, 1)` → `12.0 MiB`.
pub fn mib(bytes: usize, decimals: usize) -> String {
    format!("{:.decimals$} MiB", bytes as f64 / (1 << 20) as f64)
}

/// The first line of a chapter's summary: the copy ceiling it divides by, in GB/s, and
/// the `size` of the copy it was measured on.
pub fn copy_ceiling_line(gbps: f64, size: &str) -> String {
    format!("copy ceiling: {gbps:.0} GB/s ({size}, L2 cold)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits() {
        assert_eq!(ms(102.14, 3), "102.1");
        assert_eq!(ms(2.578, 3), "2.58");
        assert_eq!(ms(0.12345, 4), "0.1235");
        assert_eq!(sig3(2827.4), "2827");
        assert_eq!(sig3(54.71), "54.7");
        assert_eq!(sig3(3.491), "3.49");
        assert_eq!(ratio(3.0, 2.0), "1.50");
        assert_eq!(us(0.3721), "372.1");
        assert_eq!(bytes(536_870_912.0), "537 MB");
        assert_eq!(bytes(2.5e9), "2.50 GB");
        assert_eq!(bytes(12.0), "12.0 B");
        assert_eq!(percent(0.8234), "82.3%");
        assert_eq!(mib(12 << 20, 1), "12.0 MiB");
        assert_eq!(mib(50 << 20, 0), "50 MiB");
        assert_eq!(
            copy_ceiling_line(3021.4, "8 bytes"),
            "copy ceiling: 3021 GB/s (8 bytes, L2 cold)"
        );
    }
}
