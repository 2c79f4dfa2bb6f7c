//! What can go wrong with a chain before any arithmetic is done, and while it is done.

use std::fmt;

/// Bytes in a GiB, for sizes in messages.
pub const GIB: f64 = (1u64 << 30) as f64;

/// Every way a chain, a parenthesization or a request about them can be refused.
///
/// Matrices are numbered from 1 as in the paper: matrix `i` is `dims[i-1] x dims[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmmError {
    /// A chain of `n >= 1` matrices needs `n + 1` dimensions; `len` were given.
    TooFewDims {
        /// How many dimensions were given.
        len: usize,
    },
    /// `dims[index]` is zero, so some matrix has an empty side.
    ZeroDim {
        /// Position of the zero in `dims`.
        index: usize,
    },
    /// The optimal cost of the sub-chain `A_i .. A_j` does not fit in a `u64`.
    CostOverflow {
        /// First matrix of the sub-chain (1-based).
        i: usize,
        /// Last matrix of the sub-chain (1-based).
        j: usize,
    },
    /// A kernel doing plain (wrapping) adds in a `bits`-bit cost type could wrap:
    /// `bound`, an upper bound on every value the dynamic program computes, exceeds `limit`.
    KernelBoundExceeded {
        /// Width of the cost type the kernel would use.
        bits: u32,
        /// `(n - 1) * max(dims)^3`, see [`crate::cmm::dp::cost_upper_bound`].
        bound: u128,
        /// The largest value of the cost type.
        limit: u128,
    },
    /// The brute-force enumerator was asked for a chain longer than it accepts.
    TooManyForBruteForce {
        /// Matrices in the chain.
        n: usize,
        /// The longest chain it accepts.
        max: usize,
    },
    /// A parenthesization names matrices `A1..A{tree_matrices}` but the chain has `chain_matrices`.
    TreeDoesNotMatchChain {
        /// Matrices in the parenthesization.
        tree_matrices: usize,
        /// Matrices in the chain.
        chain_matrices: usize,
    },
    /// A product was formed of two sub-chains that are not neighbours: the left one ends at
    /// `A{left_last}` but the right one starts at `A{right_first}`.
    NotAdjacent {
        /// Last matrix of the left factor.
        left_last: usize,
        /// First matrix of the right factor.
        right_first: usize,
    },
    /// A parenthesization string could not be read.
    BadParenthesization {
        /// Byte offset in the string where reading failed.
        at: usize,
        /// What the reader expected there.
        expected: &'static str,
    },
    /// The table of a chain of `n` matrices, `bytes` long, could not be allocated.
    TableTooLarge {
        /// Matrices in the chain.
        n: usize,
        /// Bytes the table needs.
        bytes: u128,
    },
    /// A table handed in from outside (a GPU, a file) has the wrong number of cells.
    TableSize {
        /// Cells expected for this `n` and layout.
        expected: usize,
        /// Cells given.
        got: usize,
    },
}

impl fmt::Display for CmmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CmmError::TooFewDims { len } => write!(
                f,
                "a chain of n >= 1 matrices needs n + 1 >= 2 dimensions, got {len}"
            ),
            CmmError::ZeroDim { index } => {
                write!(
                    f,
                    "dimension dims[{index}] is zero; every matrix side must be >= 1"
                )
            }
            CmmError::CostOverflow { i, j } => write!(
                f,
                "the optimal cost of multiplying A{i}..A{j} does not fit in a u64"
            ),
            CmmError::KernelBoundExceeded { bits, bound, limit } => write!(
                f,
                "a {bits}-bit cost kernel could wrap: the bound (n-1)*max(dims)^3 = {bound} \
                 exceeds {limit}"
            ),
            CmmError::TooManyForBruteForce { n, max } => write!(
                f,
                "brute force over all parenthesizations accepts at most {max} matrices, got {n}"
            ),
            CmmError::TreeDoesNotMatchChain {
                tree_matrices,
                chain_matrices,
            } => write!(
                f,
                "the parenthesization multiplies {tree_matrices} matrices but the chain has \
                 {chain_matrices}"
            ),
            CmmError::NotAdjacent {
                left_last,
                right_first,
            } => write!(
                f,
                "cannot multiply a product ending at A{left_last} by one starting at \
                 A{right_first}: the factors must be neighbours in the chain"
            ),
            CmmError::BadParenthesization { at, expected } => {
                write!(
                    f,
                    "cannot read the parenthesization at byte {at}: expected {expected}"
                )
            }
            CmmError::TableTooLarge { n, bytes } => write!(
                f,
                "the DP table of n = {n} matrices needs {bytes} bytes ({:.1} GiB), and this \
                 machine could not allocate it",
                *bytes as f64 / GIB
            ),
            CmmError::TableSize { expected, got } => {
                write!(
                    f,
                    "a table of {got} cells was given where {expected} were expected"
                )
            }
        }
    }
}

impl std::error::Error for CmmError {}
