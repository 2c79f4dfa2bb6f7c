//! CPU references and inputs for every kernel of `kernels/coalescing.cu`.

use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::harness::inputs;

/// What `affine_read_*` computes: `dst[i] = src[offset + i × stride]` for `i < n`.
pub fn affine_read<T: Copy + Send + Sync>(
    src: &[T],
    n: usize,
    stride: usize,
    offset: usize,
) -> Vec<T> {
    assert!(n == 0 || offset + (n - 1) * stride < src.len(), "the source is too short");
    (0..n).into_par_iter().map(|i| src[offset + i * stride]).collect()
}

/// The largest `n` for which `affine_read` stays inside a source of `len` elements.
pub fn affine_read_len(len: usize, stride: usize, offset: usize) -> usize {
    assert!(stride > 0);
    if offset >= len {
        0
    } else {
        (len - 1 - offset) / stride + 1
    }
}

/// The transpose of the row-major `rows` × `cols` matrix `input`: a `cols` × `rows` matrix.
pub fn transpose(input: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    assert_eq!(input.len(), rows * cols);
    let mut out = vec![0f32; rows * cols];
    // One output row per task: output row c is input column c.
    out.par_chunks_mut(rows.max(1)).enumerate().for_each(|(c, out_row)| {
        for (r, value) in out_row.iter_mut().enumerate() {
            *value = input[r * cols + c];
        }
    });
    out
}

/// One particle as the array-of-structs kernel stores it: seven `f32`, 28 bytes, the layout of
/// `struct Particle` in `kernels/coalescing.cu`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub vx: f32,
    pub vy: f32,
    pub vz: f32,
    pub mass: f32,
}

// SAFETY: plain old data, seven f32 with no padding (checked by a test and by the kernel's
// static_assert); all-zero bits are a valid value.
unsafe impl DeviceRepr for Particle {}
unsafe impl ValidAsZeroBits for Particle {}

/// Bytes of one `Particle` record.
pub const PARTICLE_BYTES: u64 = std::mem::size_of::<Particle>() as u64;

/// The particles as a struct of arrays: one array per field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParticlesSoa {
    pub x: Vec<f32>,
    pub y: Vec<f32>,
    pub z: Vec<f32>,
    pub vx: Vec<f32>,
    pub vy: Vec<f32>,
    pub vz: Vec<f32>,
    pub mass: Vec<f32>,
}

/// The drift's time step: a power of two, so `v × dt` is exact and the result is the same
/// whether or not the compiler fuses the multiply and the add.
pub const DRIFT_DT: f32 = 1.0 / 64.0;

/// A velocity component with magnitude in [0.5, 1.5): with positions in [-1, 1) and
/// `dt = 1/64`, `|v dt| >= 2^-7` is far above the rounding step of a position, so every
/// position changes in every drift and a position the kernel did not write cannot pass.
fn away_from_zero(u: f32) -> f32 {
    u.signum() * (0.5 + u.abs())
}

/// `n` particles: positions and masses uniform in [-1, 1), velocities as `away_from_zero`.
pub fn random_particles(n: usize, seed: u64) -> ParticlesSoa {
    let field = |k: u64| inputs::random_f32(n, seed.wrapping_mul(31).wrapping_add(k));
    let velocity =
        |k: u64| field(k).into_iter().map(away_from_zero).collect::<Vec<f32>>();
    ParticlesSoa {
        x: field(1),
        y: field(2),
        z: field(3),
        vx: velocity(4),
        vy: velocity(5),
        vz: velocity(6),
        mass: field(7),
    }
}

impl ParticlesSoa {
    pub fn len(&self) -> usize {
        self.x.len()
    }

    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// The same particles as an array of structs.
    pub fn to_aos(&self) -> Vec<Particle> {
        (0..self.len())
            .map(|i| Particle {
                x: self.x[i],
                y: self.y[i],
                z: self.z[i],
                vx: self.vx[i],
                vy: self.vy[i],
                vz: self.vz[i],
                mass: self.mass[i],
            })
            .collect()
    }
}

/// What `drift_aos` does to one particle: `p += v dt` with one rounding (a fused multiply-add,
/// as the kernel's `fmaf`).
pub fn drift_particle(p: Particle, dt: f32) -> Particle {
    Particle {
        x: p.vx.mul_add(dt, p.x),
        y: p.vy.mul_add(dt, p.y),
        z: p.vz.mul_add(dt, p.z),
        ..p
    }
}

/// What `drift_aos` does to an array of structs.
pub fn drift_aos(particles: &[Particle], dt: f32) -> Vec<Particle> {
    particles.par_iter().map(|&p| drift_particle(p, dt)).collect()
}

/// What `drift_soa` does: the new positions `(x, y, z)`; velocities and masses are unchanged.
pub fn drift_soa(p: &ParticlesSoa, dt: f32) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let step = |pos: &[f32], vel: &[f32]| {
        pos.par_iter().zip(vel).map(|(&x, &v)| v.mul_add(dt, x)).collect::<Vec<f32>>()
    };
    (step(&p.x, &p.vx), step(&p.y, &p.vy), step(&p.z, &p.vz))
}

/// `n` indices uniform in `0..table_len`, the same for the same seed whatever the thread count.
pub fn random_indices(n: usize, table_len: u32, seed: u64) -> Vec<u32> {
    assert!(table_len > 0);
    let mut v = vec![0u32; n];
    v.par_chunks_mut(1 << 16).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(
            seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        chunk.iter_mut().for_each(|x| *x = rng.gen_range(0..table_len));
    });
    v
}

/// What the `gather*` kernels compute: `out[i] = table[index[i]]`.
pub fn gather(table: &[f32], index: &[u32]) -> Vec<f32> {
    index.par_iter().map(|&k| table[k as usize]).collect()
}
