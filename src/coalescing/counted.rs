//! The chapter's cases for `--counters`: which launches are counted and what the sector
//! arithmetic predicts for each.

use crate::harness::counters::{Case, Quantity};

use super::measure::transpose::Layout;
use super::transpose::TransposeKernel;

/// Distinct 32-byte sectors the 32 lanes of one warp touch when lane `i` reads element
/// `offset + i·stride` of `elem_bytes` bytes (the first warp; the array starts aligned).
pub fn sectors_per_warp(elem_bytes: u64, stride: u64, offset: u64) -> u64 {
    let mut sectors: Vec<u64> =
        (0..32).map(|i| (offset + i * stride) * elem_bytes / 32).collect();
    sectors.dedup();
    sectors.len() as u64
}

/// The affine read `dst[i] = src[offset + i·stride]`: each warp's load touches
/// [`sectors_per_warp`] sectors, each warp's store 32 consecutive elements.
pub fn affine_case(elem_bytes: u64, stride: u64, offset: u64) -> Case {
    let ty = super::patterns::type_name(elem_bytes);
    Case::new(format!("{ty} stride {stride} offset {offset}"))
        .predict(
            Quantity::LoadSectorsPerRequest,
            sectors_per_warp(elem_bytes, stride, offset) as f64,
        )
        .predict(Quantity::StoreSectorsPerRequest, (32 * elem_bytes / 32) as f64)
}

/// A transpose (or the tiled copy) of `rows × cols` floats: every element read and written
/// once from device memory; a warp's stores cover 32 rows in the naive kernel (32 sectors)
/// and one row elsewhere (4 sectors); an unpadded 32-wide tile read down a column puts all
/// 32 lanes in one bank, 31 extra wavefronts per warp-wide read of the tile. The model
/// assumes sector-aligned rows: at packed sides that are not multiples of 8 floats it
/// counts too few sectors, which is what the counters of those cases show.
pub fn transpose_case(
    kernel: TransposeKernel,
    rows: usize,
    cols: usize,
    layout: Layout,
) -> Case {
    let elements = (rows * cols) as f64;
    let stores = if kernel == TransposeKernel::Naive32x8 { 32.0 } else { 4.0 };
    let conflicts = match kernel {
        TransposeKernel::Tile32x32 | TransposeKernel::Tile32x8 => {
            31.0 * elements / 32.0
        }
        _ => 0.0,
    };
    let label = match layout {
        Layout::Packed => format!("{} {rows}x{cols}", kernel.label()),
        Layout::Pitched(_) => format!("{} {rows}x{cols} {layout}", kernel.label()),
    };
    Case::new(label)
        .predict(Quantity::DramBytes, 2.0 * 4.0 * elements)
        .predict(Quantity::LoadSectorsPerRequest, 4.0)
        .predict(Quantity::StoreSectorsPerRequest, stores)
        .predict(Quantity::BankConflicts, conflicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_arithmetic() {
        // ((element bytes, stride, offset), sectors one warp touches)
        for ((elem_bytes, stride, offset), sectors) in [
            ((4, 1, 0), 4),
            ((4, 1, 1), 5),
            ((4, 2, 0), 8),
            ((4, 8, 0), 32),
            ((8, 1, 0), 8),
            ((4, 32, 0), 32),
        ] {
            assert_eq!(
                sectors_per_warp(elem_bytes, stride, offset),
                sectors,
                "{elem_bytes}-byte elements, stride {stride}, offset {offset}"
            );
        }
    }
}
