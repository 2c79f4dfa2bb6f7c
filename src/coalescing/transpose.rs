//! The transpose kernels of `kernels/coalescing.cu`: their shapes, and per warp the sectors of
//! their global accesses and the bank conflicts of their shared-memory accesses, computed from
//! the same index arithmetic the kernels use.

use super::banks::{conflict_degree, BANK_BYTES};
use super::sectors::{footprint, Footprint, WARP_SIZE};

crate::kernel_names! {
    /// The kernels of the transpose section, in the order the chapter introduces them.
    pub enum TransposeKernel in "coalescing.cu" {
        /// No transpose: the same tiles and threads as the tiled transposes.
        CopyTile32x8 => "copy_tile_32x8",
        /// Coalesced loads, stores a column per warp.
        Naive32x8 => "transpose_naive_32x8",
        /// A 32 × 32 tile in shared memory, one element per thread.
        Tile32x32 => "transpose_tile_32x32",
        /// The same, each tile row padded by one word.
        TilePadded32x32 => "transpose_tile_padded_32x32",
        /// A 32 × 32 tile, 32 × 8 threads, four elements per thread.
        Tile32x8 => "transpose_tile_32x8",
        /// The same with the padded tile.
        TilePadded32x8 => "transpose_tile_padded_32x8",
        /// A padded 64 × 64 tile, 32 × 8 threads, sixteen elements per thread.
        Tile64Padded32x8 => "transpose_tile64_padded_32x8",
    }
}

impl TransposeKernel {
    /// A short name for figures (threads per block after the kind of kernel).
    pub fn label(self) -> &'static str {
        match self {
            TransposeKernel::CopyTile32x8 => "copy 32x8",
            TransposeKernel::Naive32x8 => "naive 32x8",
            TransposeKernel::Tile32x32 => "tile 32x32",
            TransposeKernel::TilePadded32x32 => "padded 32x32",
            TransposeKernel::Tile32x8 => "tile 32x8",
            TransposeKernel::TilePadded32x8 => "padded 32x8",
            TransposeKernel::Tile64Padded32x8 => "64-tile 32x8",
        }
    }

    /// Side of the square tile one block covers.
    pub fn side(self) -> u64 {
        if self == TransposeKernel::Tile64Padded32x8 {
            64
        } else {
            32
        }
    }

    /// `blockDim.y` (`blockDim.x` is always 32: one warp per tile row).
    pub fn block_rows(self) -> u64 {
        match self {
            TransposeKernel::Tile32x32 | TransposeKernel::TilePadded32x32 => 32,
            _ => 8,
        }
    }

    /// Words of padding per row of `tile_shared`; `None` for the kernels without one.
    pub fn pad(self) -> Option<u64> {
        match self {
            TransposeKernel::CopyTile32x8 | TransposeKernel::Naive32x8 => None,
            TransposeKernel::Tile32x32 | TransposeKernel::Tile32x8 => Some(0),
            TransposeKernel::TilePadded32x32
            | TransposeKernel::TilePadded32x8
            | TransposeKernel::Tile64Padded32x8 => Some(1),
        }
    }

    /// Whether the output is the transpose (every kernel but the copy).
    pub fn transposes(self) -> bool {
        self != TransposeKernel::CopyTile32x8
    }

    pub fn threads_per_block(self) -> u64 {
        WARP_SIZE * self.block_rows()
    }

    pub fn elements_per_thread(self) -> u64 {
        self.side() * self.side() / self.threads_per_block()
    }

    /// Bytes of `tile_shared` per block.
    pub fn shared_bytes(self) -> u64 {
        self.pad().map_or(0, |pad| self.side() * (self.side() + pad) * BANK_BYTES)
    }

    /// The launch grid for a `rows` × `cols` input: one block per tile.
    pub fn grid(self, rows: u64, cols: u64) -> (u32, u32) {
        let tiles = |n: u64| {
            u32::try_from(n.div_ceil(self.side()).max(1)).expect("grid too large")
        };
        (tiles(cols), tiles(rows))
    }
}

/// What one warp's first access of each kind costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarpCost {
    pub global_load: Footprint,
    pub global_store: Footprint,
    /// Conflict degree of the warp's store into `tile_shared` (a row); `None` without a tile.
    pub shared_store_conflict: Option<u64>,
    /// Conflict degree of the warp's load from `tile_shared` (a column); `None` without a tile.
    pub shared_load_conflict: Option<u64>,
}

/// The costs of warp 0 (`threadIdx.y == 0`) of the interior block (1, 1), first iteration,
/// for a `rows` × `cols` input, from the kernels' own index expressions.
pub fn warp_cost(kernel: TransposeKernel, rows: u64, cols: u64) -> WarpCost {
    let side = kernel.side();
    assert!(
        rows >= 2 * side && cols >= 2 * side,
        "block (1, 1) must be an interior tile"
    );
    let lanes = 0..WARP_SIZE;
    let (first_row, first_col, r) = (side, side, 0u64); // blockIdx = (1, 1), threadIdx.y = 0
                                                        // in[(first_row + r) * cols + first_col + c], lane = c: a row segment.
    let load: Vec<u64> =
        lanes.clone().map(|c| ((first_row + r) * cols + first_col + c) * 4).collect();
    let store: Vec<u64> = match kernel {
        // out[row * cols + col]: where the element came from.
        TransposeKernel::CopyTile32x8 => load.clone(),
        // out[col * rows + row]: one output row per lane.
        TransposeKernel::Naive32x8 => lanes
            .clone()
            .map(|c| ((first_col + c) * rows + first_row + r) * 4)
            .collect(),
        // out[(first_col + r) * rows + first_row + c]: a row segment of the output.
        _ => lanes
            .clone()
            .map(|c| ((first_col + r) * rows + first_row + c) * 4)
            .collect(),
    };
    let (shared_store_conflict, shared_load_conflict) = match kernel.pad() {
        None => (None, None),
        Some(pad) => {
            let row_words = side + pad;
            // tile_shared[r][c] = ..., then ... = tile_shared[c][r], lane = c.
            let row: Vec<u64> = lanes.clone().map(|c| r * row_words + c).collect();
            let column: Vec<u64> = lanes.map(|c| c * row_words + r).collect();
            (Some(conflict_degree(&row)), Some(conflict_degree(&column)))
        }
    };
    WarpCost {
        global_load: footprint(&load, 4),
        global_store: footprint(&store, 4),
        shared_store_conflict,
        shared_load_conflict,
    }
}

/// The TMA transpose's label in the figures: it is the Hopper chapter's kernel.
pub const TMA_LABEL: &str = "TMA 32x8";

/// Word of element (row, col) of the TMA transpose's 32 × 32 tile, which the TMA wrote
/// with the 128-byte swizzle (`swz` in `kernels/hopper_tma.cu`): the row's eight 16-byte
/// chunks permuted by XOR with `row % 8`.
pub fn swizzled_word(row: u64, col: u64) -> u64 {
    row * 32 + ((((col >> 2) ^ (row & 7)) << 2) | (col & 3))
}

/// Conflict degrees of the TMA transpose's warp 0 (`threadIdx.y == 0`): its store of a
/// row of the output tile and its load of a column of the input tile, both swizzled
/// (`b[swz(k, lane)] = a[swz(lane, k)]` with k = 0).
pub fn tma_conflicts() -> (u64, u64) {
    let store: Vec<u64> = (0..WARP_SIZE).map(|lane| swizzled_word(0, lane)).collect();
    let load: Vec<u64> = (0..WARP_SIZE).map(|lane| swizzled_word(lane, 0)).collect();
    (conflict_degree(&store), conflict_degree(&load))
}
