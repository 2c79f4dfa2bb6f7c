//! Solutions to the exercises of the chapter "Measuring a GPU" (shown collapsed in the book;
//! the tests below and the book's snippets check them), and the check of its kernel exercise.

use crate::harness::exercise::{
    check_in_out, check_sizes, grid_stride_config, Passed, Version,
};
use crate::harness::{inputs, Gpu};

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

crate::exercise_kernels! {
    /// The kernels of exercise 1.4 (`kernels/exercises_ceilings.cu`).
    pub enum CopyVec4 in "exercises_ceilings.cu" {
        /// The copy the reader starts from.
        Exercise => "copy_vec4_exercise",
        /// The book's solution.
        Solution => "copy_vec4_solution",
    }
}

/// The sizes exercise 1.4 is checked at: every remainder modulo 4, and sizes that need more
/// than one pass of the grid.
pub const COPY_VEC4_SIZES: [usize; 6] = [1, 2, 3, 1003, 1 << 20, (1 << 22) + 1];

/// Threads per block of exercise 1.4's kernels.
const COPY_VEC4_BLOCK: u32 = 256;

/// Exercise 1.4: runs one version of the 16-byte copy through the chapter's check at every
/// size of [`COPY_VEC4_SIZES`]: the destination poisoned, one launch, every element compared
/// exactly with the source.
pub fn check_copy_vec4(gpu: &Gpu, version: Version) -> anyhow::Result<Passed> {
    check_sizes::<CopyVec4, _>(gpu, version, COPY_VEC4_SIZES, |f, name, n| {
        let src = inputs::random_f32(n, n as u64);
        // A few blocks per SM at most: the kernels stride over the rest.
        let blocks = n.div_ceil(4).div_ceil(COPY_VEC4_BLOCK as usize);
        let cfg = grid_stride_config(gpu, blocks, 4, COPY_VEC4_BLOCK, 0);
        // Exact: a copy changes no bit (and the poison, NaN, equals nothing).
        check_in_out(gpu, f, name, &src, &src, cfg)
    })
}

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
