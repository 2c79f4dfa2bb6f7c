//! The chains the chapter multiplies: three hand-picked shapes and random ones, reproducible
//! from a seed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How many random chains [`realistic_chains`] adds to its hand-picked ones.
pub const RANDOM_CHAINS: usize = 12;

/// A chain with a name for tables and figures: matrix `i` (1-based) is `dims[i-1] x dims[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedChain {
    pub name: String,
    pub dims: Vec<u32>,
}

impl NamedChain {
    pub fn new(name: &str, dims: Vec<u32>) -> Self {
        Self { name: name.to_string(), dims }
    }

    /// Matrices in the chain.
    pub fn matrices(&self) -> usize {
        self.dims.len().saturating_sub(1)
    }
}

/// `count` chains of `n` matrices (`n` uniform in `lengths`) with dimensions uniform in `dims`,
/// named `random 1`, `random 2`, ..., reproducible from `seed` (ChaCha8).
pub(super) fn random_chains(
    count: usize,
    lengths: std::ops::RangeInclusive<usize>,
    dims: std::ops::RangeInclusive<u32>,
    seed: u64,
) -> Vec<NamedChain> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (1..=count)
        .map(|c| {
            let n = rng.gen_range(lengths.clone());
            NamedChain::new(
                &format!("random {c}"),
                (0..=n).map(|_| rng.gen_range(dims.clone())).collect(),
            )
        })
        .collect()
}

/// The chains the measurement multiplies, hand-picked ones first:
///
/// * `worked example x50`: Seifi & Al-Mamun's `20, 2, 30, 12, 8` scaled by 50, whose optimum
///   `(A1((A2A3)A4))` needs 8.4 times fewer multiplications than left to right;
/// * `tall-skinny then wide`: `U V^T W X`, a rank-64 operator `U V^T` (4096 x 64 times
///   64 x 4096) after a dense 4096 x 4096 `W`, applied to 256 vectors `X`: left to right forms
///   the 4096 x 4096 outer product `U V^T` and multiplies it by `W` (4096^3 multiplications), the
///   trap the program avoids with `U((V^T W) X)`, 61 times fewer;
/// * `MLP-like, 8 layers`: a batch of 4096 inputs of 784 features through eight linear layers
///   (784 -> 2048 -> 2048 -> 1024 -> 1024 -> 512 -> 512 -> 256 -> 10): left to right is the
///   forward pass; the optimum, right to left, first collapses the layers into one 784 x 10
///   matrix (309 times fewer multiplications);
/// * [`RANDOM_CHAINS`] random chains of 8 to 30 matrices with dimensions uniform in 100..=3000,
///   from `seed`.
///
/// Every chain holds at most about 3.2 GB on the device (30 inputs of at most 3000 x 3000 floats,
/// and at most as many intermediates per order) and its left-to-right order needs at most
/// 29 x 3000^3 multiplications, about 31 ms at [`BUDGET_FLOP_PER_S`](super::plan::BUDGET_FLOP_PER_S): see
/// [`footprint`](super::plan::footprint).
pub fn realistic_chains(seed: u64) -> Vec<NamedChain> {
    let mut chains = vec![
        NamedChain::new("worked example x50", vec![1000, 100, 1500, 600, 400]),
        NamedChain::new("tall-skinny then wide", vec![4096, 64, 4096, 4096, 256]),
        NamedChain::new(
            "MLP-like, 8 layers",
            vec![4096, 784, 2048, 2048, 1024, 1024, 512, 512, 256, 10],
        ),
    ];
    chains.extend(random_chains(RANDOM_CHAINS, 8..=30, 100..=3000, seed));
    chains
}

/// Small chains (every dimension at most 300) for tests and sanitizers: the three hand-picked
/// shapes of [`realistic_chains`] shrunk, mostly to odd sizes, and six random chains of 2 to 12
/// matrices with dimensions uniform in 1..=300, so that sizes are rarely multiples of a tile and
/// a chain of a single product, or a dimension of 1, can occur.
pub fn realistic_chains_quick(seed: u64) -> Vec<NamedChain> {
    let mut chains = vec![
        NamedChain::new("worked example x5", vec![100, 10, 150, 60, 40]),
        NamedChain::new("tall-skinny then wide", vec![255, 7, 257, 253, 17]),
        NamedChain::new(
            "MLP-like, 8 layers",
            vec![300, 97, 255, 255, 129, 129, 65, 65, 33, 10],
        ),
    ];
    chains.extend(random_chains(6, 2..=12, 1..=300, seed));
    chains
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmm::dp::validate_dims;

    #[test]
    fn chains_are_valid_reproducible_and_in_range() {
        let full = realistic_chains(2024);
        assert_eq!(full, realistic_chains(2024));
        assert_ne!(full, realistic_chains(2025));
        assert_eq!(full.len(), 3 + RANDOM_CHAINS);
        assert_eq!(full[0].dims, [20u32, 2, 30, 12, 8].map(|p| p * 50));
        for c in &full[3..] {
            assert!((8..=30).contains(&c.matrices()), "{c:?}");
            assert!(c.dims.iter().all(|p| (100..=3000).contains(p)), "{c:?}");
        }
        let quick = realistic_chains_quick(2024);
        assert!(quick.iter().all(|c| c.dims.iter().all(|&p| (1..=300).contains(&p))));
        for set in [&full, &quick] {
            let mut names: Vec<&str> = set.iter().map(|c| c.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), set.len(), "names are unique");
            assert!(set
                .iter()
                .all(|c| validate_dims(&c.dims).is_ok() && c.matrices() >= 2));
        }
    }
}
