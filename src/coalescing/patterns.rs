//! The chapter's access patterns as lists of [`Access`], and what the sector arithmetic
//! predicts for each.

use super::reference::PARTICLE_BYTES;
use super::sectors::{traffic, Access, Footprint, Traffic};

/// Warps in a model kernel: enough that the partial sectors at the ends of an array change a
/// prediction by less than 0.1 %.
pub const MODEL_WARPS: u64 = 1024;

/// Spacing of the separate arrays of one model kernel: far enough apart that they never
/// share a sector (and a multiple of 256, as allocations are).
const ARRAY_SPACING: u64 = 1 << 40;

/// Byte offsets of the position fields `x, y, z` in a `Particle`.
pub const POSITION_FIELDS: [u64; 3] = [0, 4, 8];
/// Byte offsets of the velocity fields `vx, vy, vz` in a `Particle`.
pub const VELOCITY_FIELDS: [u64; 3] = [12, 16, 20];

/// A kernel of this chapter, as far as the sector arithmetic is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// `affine_read_*`: `dst[i] = src[offset + i stride]`, elements of `elem_bytes` bytes.
    Affine { elem_bytes: u64, stride: u64, offset: u64 },
    /// `drift_aos` on records of `record_bytes` bytes (28 for `Particle`): six field loads
    /// (position and velocity), three field stores (position).
    DriftAos { record_bytes: u64 },
    /// `drift_soa`: the same six loads and three stores, each on its own array.
    DriftSoa,
}

impl Pattern {
    /// The rows of the chapter's per-pattern table.
    pub fn table() -> Vec<Pattern> {
        let affine =
            |elem_bytes, stride, offset| Pattern::Affine { elem_bytes, stride, offset };
        vec![
            affine(4, 1, 0),
            affine(4, 2, 0),
            affine(4, 4, 0),
            affine(4, 8, 0),
            affine(4, 32, 0),
            affine(8, 1, 0),
            affine(8, 2, 0),
            affine(8, 4, 0),
            affine(8, 32, 0),
            affine(4, 1, 1),
            affine(4, 1, 8),
            affine(4, 1, 16),
            affine(4, 1, 32),
            Pattern::DriftAos { record_bytes: PARTICLE_BYTES },
            Pattern::DriftSoa,
        ]
    }

    /// How the chapter names the pattern.
    pub fn label(&self) -> String {
        match *self {
            Pattern::Affine { elem_bytes, stride: 1, offset: 0 } => {
                format!("{}, unit stride", type_name(elem_bytes))
            }
            Pattern::Affine { elem_bytes, stride, offset: 0 } => {
                format!("{}, stride {stride}", type_name(elem_bytes))
            }
            Pattern::Affine { elem_bytes, stride: 1, offset } => format!(
                "{}, offset {offset} ({} bytes)",
                type_name(elem_bytes),
                offset * elem_bytes
            ),
            Pattern::Affine { elem_bytes, stride, offset } => {
                format!("{}, stride {stride}, offset {offset}", type_name(elem_bytes))
            }
            Pattern::DriftAos { record_bytes } => {
                format!("particles, array of {record_bytes}-byte structs")
            }
            Pattern::DriftSoa => "particles, struct of arrays".to_string(),
        }
    }

    /// Every load and every store one thread performs.
    pub fn accesses(&self) -> (Vec<Access>, Vec<Access>) {
        match *self {
            Pattern::Affine { elem_bytes, stride, offset } => (
                vec![Access::strided(elem_bytes, stride, offset)],
                vec![Access::strided(elem_bytes, 1, 0).at_base(ARRAY_SPACING)],
            ),
            Pattern::DriftAos { record_bytes } => {
                let field = |offset| Access::field(record_bytes, offset, 4);
                let loads = POSITION_FIELDS
                    .iter()
                    .chain(&VELOCITY_FIELDS)
                    .map(|&f| field(f))
                    .collect();
                let stores = POSITION_FIELDS.iter().map(|&f| field(f)).collect();
                (loads, stores)
            }
            Pattern::DriftSoa => {
                // Arrays x, y, z, vx, vy, vz at bases 0..5 (the unused mass array is not touched).
                let array =
                    |k: u64| Access::strided(4, 1, 0).at_base(k * ARRAY_SPACING);
                ((0..6).map(array).collect(), (0..3).map(array).collect())
            }
        }
    }

    /// The request of the pattern's first load by warp 1 (an interior warp).
    pub fn first_load(&self) -> Footprint {
        self.accesses().0[0].warp_footprint(1)
    }

    /// What the whole kernel moves, per [`traffic`].
    pub fn traffic(&self) -> Traffic {
        let (loads, stores) = self.accesses();
        traffic(&loads, &stores, MODEL_WARPS)
    }

    /// The predicted fraction of the copy ceiling for a DRAM-bound run: useful bytes over the
    /// bytes of the distinct sectors.
    pub fn predicted_fraction(&self) -> f64 {
        self.traffic().dram_fraction()
    }
}

/// "float" for 4-byte elements, "double" for 8-byte ones.
pub fn type_name(elem_bytes: u64) -> &'static str {
    match elem_bytes {
        4 => "float",
        8 => "double",
        _ => "element",
    }
}

/// The strides of the stride sweep: every stride to 16, then wider steps to 64.
pub fn sweep_strides(quick: bool) -> Vec<u64> {
    if quick {
        vec![1, 2, 3, 4, 8, 16, 32, 64]
    } else {
        (1..=16).chain([20, 24, 28, 32, 40, 48, 56, 64]).collect()
    }
}

/// The offsets (in elements) of the misalignment sweep.
pub fn sweep_offsets(quick: bool) -> Vec<u64> {
    if quick {
        vec![0, 1, 2, 4, 8, 16, 31, 32]
    } else {
        (0..=32).collect()
    }
}
