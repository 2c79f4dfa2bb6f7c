//! The sizes the chapter measures and the bytes each variant moves.

/// One problem size: A is `m` × `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dataset {
    pub name: &'static str,
    pub m: usize,
    pub n: usize,
}

impl Dataset {
    pub const fn new(name: &'static str, m: usize, n: usize) -> Self {
        Self { name, m, n }
    }

    /// Bytes of A for elements of `elem_bytes` bytes.
    pub fn matrix_bytes(&self, elem_bytes: usize) -> u64 {
        (self.m * self.n * elem_bytes) as u64
    }

    /// `"EXTRALARGE 1800×2200"`.
    pub fn label(&self) -> String {
        format!("{} {}×{}", self.name, self.m, self.n)
    }
}

/// PolyBench 4.2's ATAX datasets (`M × N`).
pub const POLYBENCH: [Dataset; 5] = [
    Dataset::new("MINI", 38, 42),
    Dataset::new("SMALL", 116, 124),
    Dataset::new("MEDIUM", 390, 410),
    Dataset::new("LARGE", 1900, 2100),
    Dataset::new("EXTRALARGE", 1800, 2200),
];

/// A float matrix of 1 GiB, 20 times the H100's L2: every byte of A comes from device memory.
pub const LARGE_SQUARE: Dataset = Dataset::new("16384²", 16384, 16384);

/// Sizes that are multiples of nothing (block, warp, tile): verified, not timed.
pub const ODD_SIZES: [Dataset; 5] = [
    Dataset::new("1×1", 1, 1),
    Dataset::new("1×1003", 1, 1003),
    Dataset::new("1003×1", 1003, 1),
    Dataset::new("33×65", 33, 65),
    Dataset::new("1000×1003", 1000, 1003),
];

// ANCHOR: bytes_moved
/// Bytes a kernel variant must move between device memory and the SMs at the least: A
/// read `passes` times (1 for the fused kernel, 2 for everything that computes tmp and
/// y in two kernels), x read once, y written once, tmp written and read once by
/// two-kernel variants.
pub fn bytes_moved(d: Dataset, elem_bytes: usize, passes: u64) -> u64 {
    let vectors = (d.n + d.n) as u64 + if passes >= 2 { 2 * d.m as u64 } else { 0 };
    passes * d.matrix_bytes(elem_bytes) + vectors * elem_bytes as u64
}

/// Bytes of the partial sums a kernel writes and reads back: `rows` rows of `width`
/// elements (one per block of the fused pass, one per row slice of the split kernel),
/// written once by the pass and read once by the reduction that adds them.
pub fn partial_bytes(rows: u64, width: usize, elem_bytes: usize) -> u64 {
    2 * rows * (width * elem_bytes) as u64
}

/// The least time to move `bytes` at `gb_per_s` (10⁹ bytes per second),
/// in milliseconds.
pub fn floor_ms(bytes: u64, gb_per_s: f64) -> f64 {
    bytes as f64 / (gb_per_s * 1e9) * 1e3
}
// ANCHOR_END: bytes_moved
