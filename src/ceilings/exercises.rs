//! Solutions to the exercises of the chapter "Measuring a GPU" (shown collapsed in the book;
//! the tests below and the book's snippets check them).

// ANCHOR: memory_floor
/// The shortest time, in milliseconds, in which a kernel can read `bytes_read` and
/// write `bytes_written` bytes of device memory at a copy bandwidth of `copy_gbps` GB/s
/// (counted, like the copy, as bytes read plus bytes written).
pub fn memory_floor_ms(bytes_read: f64, bytes_written: f64, copy_gbps: f64) -> f64 {
    (bytes_read + bytes_written) / (copy_gbps * 1e9) * 1e3
}
// ANCHOR_END: memory_floor

// ANCHOR: launch_share
/// The share of a program's time spent on launches when it runs `kernels` kernels of
/// `kernel_us` microseconds each and every launch costs `launch_us` microseconds that
/// the GPU cannot overlap with work (a launch after a synchronisation, for instance).
pub fn launch_share(kernels: usize, kernel_us: f64, launch_us: f64) -> f64 {
    let launches = kernels as f64 * launch_us;
    launches / (launches + kernels as f64 * kernel_us)
}
// ANCHOR_END: launch_share

// ANCHOR: smallest_worthwhile
/// The smallest number of bytes a copy must move (read + write) for its time to be at
/// least `share` (e.g. 0.9) bandwidth and at most `1 - share` fixed cost, given a fixed
/// cost of `fixed_us` microseconds per launch and a bandwidth of `copy_gbps` GB/s.
pub fn smallest_worthwhile_bytes(fixed_us: f64, copy_gbps: f64, share: f64) -> f64 {
    assert!((0.0..1.0).contains(&share));
    // bytes / B >= share * (bytes / B + fixed)
    //     <=>  bytes >= B * fixed * share / (1 - share)
    copy_gbps * 1e9 * fixed_us * 1e-6 * share / (1.0 - share)
}
// ANCHOR_END: smallest_worthwhile

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_of_a_one_gib_copy_at_3_tb_per_s() {
        let gib = (1u64 << 30) as f64;
        let ms = memory_floor_ms(gib, gib, 3000.0);
        assert!((ms - 0.7158).abs() < 1e-3, "{ms}");
    }

    #[test]
    fn launches_dominate_short_kernels() {
        assert!((launch_share(1000, 1.0, 9.0) - 0.9).abs() < 1e-12);
        assert!(launch_share(10, 1000.0, 9.0) < 0.01);
    }

    #[test]
    fn a_copy_needs_megabytes_to_hide_its_launch() {
        let bytes = smallest_worthwhile_bytes(4.0, 3000.0, 0.9);
        assert!((bytes - 108e6).abs() < 1.0, "{bytes}");
        assert_eq!(smallest_worthwhile_bytes(4.0, 3000.0, 0.0), 0.0);
    }
}
