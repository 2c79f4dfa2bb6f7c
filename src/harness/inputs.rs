//! Fresh, seeded random inputs — never zeros, which hide unwritten outputs and wrong indexing.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Elements drawn per independently seeded chunk: large enough to amortise seeding, small
/// enough that a 1 GiB input is spread over every core.
const CHUNK: usize = 1 << 16;

/// `n` floats uniform in `[-1, 1)`, the same for the same `seed` whatever the thread count.
pub fn random_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut v = vec![0f32; n];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(
            seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        chunk.iter_mut().for_each(|x| *x = rng.gen_range(-1.0f32..1.0));
    });
    v
}

/// `n` doubles uniform in `[-1, 1)`.
pub fn random_f64(n: usize, seed: u64) -> Vec<f64> {
    let mut v = vec![0f64; n];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(
            seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        chunk.iter_mut().for_each(|x| *x = rng.gen_range(-1.0f64..1.0));
    });
    v
}

/// `n` random bytes.
pub fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; n];
    v.par_chunks_mut(CHUNK).enumerate().for_each(|(i, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(
            seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        rng.fill(chunk);
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_nonzero_and_in_range() {
        let a = random_f32(200_001, 7);
        assert_eq!(a, random_f32(200_001, 7));
        assert_ne!(a, random_f32(200_001, 8));
        assert!(a.iter().all(|x| (-1.0..1.0).contains(x)));
        assert!(a.iter().filter(|x| **x == 0.0).count() < 10);
        let b = random_bytes(1000, 1);
        assert!(b.iter().any(|x| *x != 0));
        assert_eq!(random_f64(5, 3), random_f64(5, 3));
    }
}
