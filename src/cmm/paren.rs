//! Parenthesizations: the optimal one read back from a filled table, the cost of any one, and
//! all of them for short chains.
//!
//! Notation: a single matrix is `A3`; a product wraps its two factors in parentheses with
//! nothing between them, so the optimum of Seifi & Al-Mamun 2024's worked example
//! (dims 20, 2, 30, 12, 8) reads `(A1((A2A3)A4))`.

use std::fmt;

use super::dp::{validate_dims, DpTable};
use super::error::CmmError;

/// The longest chain [`enumerate_orders`] accepts. Chains of `n` matrices have Catalan(n - 1)
/// parenthesizations: 4862 for `n = 10`, 16796 for 11, and the count grows about fourfold per
/// matrix.
pub const MAX_BRUTE_FORCE_MATRICES: usize = 10;

/// A parenthesization of the sub-chain `A_first .. A_last`: a binary tree whose leaves are the
/// matrices in order. Built only through [`ParenTree::matrix`] and [`ParenTree::product`], which
/// keep every product's factors adjacent, so every tree describes a real order of products.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParenTree {
    first: usize,
    last: usize,
    factors: Option<Box<(ParenTree, ParenTree)>>,
}

impl ParenTree {
    /// The single matrix `A_index` (1-based).
    pub fn matrix(index: usize) -> ParenTree {
        ParenTree { first: index, last: index, factors: None }
    }

    /// The product `(left right)`; `left` must end just before `right` starts.
    pub fn product(left: ParenTree, right: ParenTree) -> Result<ParenTree, CmmError> {
        if left.last + 1 != right.first {
            return Err(CmmError::NotAdjacent {
                left_last: left.last,
                right_first: right.first,
            });
        }
        Ok(ParenTree {
            first: left.first,
            last: right.last,
            factors: Some(Box::new((left, right))),
        })
    }

    /// First matrix covered (1-based).
    pub fn first(&self) -> usize {
        self.first
    }

    /// Last matrix covered (1-based).
    pub fn last(&self) -> usize {
        self.last
    }

    /// The two factors of the last product, or `None` for a single matrix.
    pub fn factors(&self) -> Option<(&ParenTree, &ParenTree)> {
        self.factors.as_deref().map(|(left, right)| (left, right))
    }

    /// Scalar multiplications this order performs on the chain `dims`: each product of a
    /// `p x q` by a `q x r` matrix adds `p q r`. The tree must cover exactly `A1 .. An`.
    /// Exact in `u128`: at most `n - 1` products of at most `(2^32)^3` each.
    pub fn cost(&self, dims: &[u32]) -> Result<u128, CmmError> {
        let n = validate_dims(dims)?;
        if self.first != 1 || self.last != n {
            return Err(CmmError::TreeDoesNotMatchChain {
                tree_matrices: self.last + 1 - self.first,
                chain_matrices: n,
            });
        }
        Ok(self.cost_unchecked(dims))
    }

    fn cost_unchecked(&self, dims: &[u32]) -> u128 {
        match self.factors() {
            None => 0,
            Some((left, right)) => {
                let p = |x: usize| u128::from(dims[x]);
                left.cost_unchecked(dims)
                    + right.cost_unchecked(dims)
                    + p(self.first - 1) * p(left.last) * p(self.last)
            }
        }
    }

    /// Reads the notation this type prints, e.g. `(A1((A2A3)A4))`; spaces are skipped.
    pub fn parse(text: &str) -> Result<ParenTree, CmmError> {
        let mut reader = Reader { bytes: text.as_bytes(), at: 0 };
        let tree = reader.tree()?;
        reader.skip_spaces();
        if reader.at != reader.bytes.len() {
            return Err(CmmError::BadParenthesization {
                at: reader.at,
                expected: "end of text",
            });
        }
        Ok(tree)
    }
}

impl fmt::Display for ParenTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.factors() {
            None => write!(f, "A{}", self.first),
            Some((left, right)) => write!(f, "({left}{right})"),
        }
    }
}

/// A recursive-descent reader for `tree := 'A' digits | '(' tree tree ')'`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn skip_spaces(&mut self) {
        while self.bytes.get(self.at).is_some_and(|b| b.is_ascii_whitespace()) {
            self.at += 1;
        }
    }

    fn tree(&mut self) -> Result<ParenTree, CmmError> {
        self.skip_spaces();
        match self.bytes.get(self.at) {
            Some(b'A') => {
                self.at += 1;
                let digits_start = self.at;
                while self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
                    self.at += 1;
                }
                std::str::from_utf8(&self.bytes[digits_start..self.at])
                    .expect("ASCII digits")
                    .parse::<usize>()
                    .ok()
                    .filter(|&index| index >= 1)
                    .map(ParenTree::matrix)
                    .ok_or(CmmError::BadParenthesization {
                        at: digits_start,
                        expected: "a matrix number >= 1 after 'A'",
                    })
            }
            Some(b'(') => {
                self.at += 1;
                let left = self.tree()?;
                let right = self.tree()?;
                self.skip_spaces();
                if self.bytes.get(self.at) != Some(&b')') {
                    return Err(CmmError::BadParenthesization {
                        at: self.at,
                        expected: "')'",
                    });
                }
                self.at += 1;
                ParenTree::product(left, right)
            }
            _ => Err(CmmError::BadParenthesization {
                at: self.at,
                expected: "'A' or '('",
            }),
        }
    }
}

// ANCHOR: parenthesization
/// The optimal order recorded in a filled table, as text: `split(i, j) = k` means the
/// last product is `(A_i..A_k)(A_{k+1}..A_j)`, and each side is read back the same way.
pub fn parenthesization(table: &DpTable) -> String {
    fn write_range(table: &DpTable, i: usize, j: usize, out: &mut String) {
        if i == j {
            out.push('A');
            out.push_str(&i.to_string());
        } else {
            let k = table.split(i, j) as usize;
            out.push('(');
            write_range(table, i, k, out);
            write_range(table, k + 1, j, out);
            out.push(')');
        }
    }
    let mut out = String::new();
    write_range(table, 1, table.n(), &mut out);
    out
}
// ANCHOR_END: parenthesization

/// The optimal order recorded in a filled table, as a tree (its cost equals
/// [`DpTable::optimal_cost`]).
pub fn optimal_tree(table: &DpTable) -> ParenTree {
    fn build(table: &DpTable, i: usize, j: usize) -> ParenTree {
        if i == j {
            return ParenTree::matrix(i);
        }
        let k = table.split(i, j) as usize;
        ParenTree::product(build(table, i, k), build(table, k + 1, j))
            .expect("a split k with i <= k < j gives adjacent factors")
    }
    build(table, 1, table.n())
}

/// Every parenthesization of `A_first .. A_last`, ordered by the split of the last product
/// (smallest first), then recursively by the left and right factors.
pub fn all_parenthesizations(first: usize, last: usize) -> Vec<ParenTree> {
    assert!(1 <= first && first <= last, "need 1 <= first <= last");
    if first == last {
        return vec![ParenTree::matrix(first)];
    }
    let mut trees = Vec::new();
    for k in first..last {
        let rights = all_parenthesizations(k + 1, last);
        for left in all_parenthesizations(first, k) {
            for right in &rights {
                trees.push(
                    ParenTree::product(left.clone(), right.clone())
                        .expect("factors split at k are adjacent"),
                );
            }
        }
    }
    trees
}

/// One way to multiply the chain and what it costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// The parenthesization.
    pub tree: ParenTree,
    /// Its scalar multiplications.
    pub cost: u128,
}

/// Every order of the chain with its cost, by brute force (no dynamic programming), in the
/// order of [`all_parenthesizations`]. Refuses chains longer than [`MAX_BRUTE_FORCE_MATRICES`].
pub fn enumerate_orders(dims: &[u32]) -> Result<Vec<Order>, CmmError> {
    let n = validate_dims(dims)?;
    if n > MAX_BRUTE_FORCE_MATRICES {
        return Err(CmmError::TooManyForBruteForce {
            n,
            max: MAX_BRUTE_FORCE_MATRICES,
        });
    }
    all_parenthesizations(1, n)
        .into_iter()
        .map(|tree| tree.cost(dims).map(|cost| Order { tree, cost }))
        .collect()
}
