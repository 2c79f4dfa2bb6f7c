//! When may the loops of a nest be reordered? Dependence distance vectors answer it.
//!
//! A dependence with distance `d = (d1, .., dn)` says: iteration `I` uses a value that iteration
//! `I - d` produced. In the original order `d` is lexicographically positive (its first nonzero
//! component is positive), since the producer runs first. Permuting the loops permutes the
//! components of every distance; the new order is legal exactly when every permuted distance
//! is still lexicographically positive. A negative one means the consumer would now run before
//! its producer.

use std::cmp::Ordering;
use std::fmt;

/// The sign of a vector in lexicographic order: that of its first nonzero component.
pub fn lex_sign(v: &[i64]) -> Ordering {
    v.iter().find(|&&x| x != 0).map_or(Ordering::Equal, |x| x.cmp(&0))
}

/// Input that does not describe a loop nest and its dependences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadNest {
    /// `order` is not a permutation of `0..depth`.
    NotAPermutation(Vec<usize>),
    /// A distance vector has the wrong number of components.
    WrongLength { distance: Vec<i64>, depth: usize },
    /// A distance vector is not lexicographically positive, so it is no dependence of the
    /// original order.
    NotPositive(Vec<i64>),
}

impl fmt::Display for BadNest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotAPermutation(o) => write!(f, "loop order {o:?} is not a permutation of the loops"),
            Self::WrongLength { distance, depth } => write!(f, "distance {distance:?} does not have {depth} components"),
            Self::NotPositive(d) => write!(f, "distance {d:?} is not lexicographically positive, so it is not a dependence of the original order"),
        }
    }
}

impl std::error::Error for BadNest {}

/// The answer for one proposed loop order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Legal,
    /// `dependence` (original order) becomes `permuted`, which is lexicographically negative.
    Illegal {
        dependence: Vec<i64>,
        permuted: Vec<i64>,
    },
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Legal => f.write_str("legal: every dependence stays lexicographically positive"),
            Verdict::Illegal { dependence, permuted } => write!(
                f,
                "illegal: dependence {dependence:?} becomes {permuted:?}, lexicographically negative \
                 (the consumer would run before its producer)"
            ),
        }
    }
}

/// Checks that every distance has `depth` components and is lexicographically positive.
pub fn validate(depth: usize, distances: &[Vec<i64>]) -> Result<(), BadNest> {
    for d in distances {
        if d.len() != depth {
            return Err(BadNest::WrongLength { distance: d.clone(), depth });
        }
        if lex_sign(d) != Ordering::Greater {
            return Err(BadNest::NotPositive(d.clone()));
        }
    }
    Ok(())
}

// ANCHOR: check_order
/// Is running the loops in `order` legal? `order[p]` names the original loop
/// (0 = outermost) that goes to position `p`; `distances` are the dependence distances
/// in the original order.
pub fn check_order(
    distances: &[Vec<i64>],
    order: &[usize],
) -> Result<Verdict, BadNest> {
    let depth = order.len();
    let mut seen = vec![false; depth];
    for &l in order {
        if l >= depth || std::mem::replace(&mut seen[l], true) {
            return Err(BadNest::NotAPermutation(order.to_vec()));
        }
    }
    validate(depth, distances)?;
    for d in distances {
        let permuted: Vec<i64> = order.iter().map(|&l| d[l]).collect();
        if lex_sign(&permuted) == Ordering::Less {
            return Ok(Verdict::Illegal { dependence: d.clone(), permuted });
        }
    }
    Ok(Verdict::Legal)
}
// ANCHOR_END: check_order

// ANCHOR: fully_permutable
/// Are loops `first..=last` (0 = outermost) fully permutable, i.e. may they be put in
/// any order? The lecture's condition: for every dependence, either the loops outside
/// the band already carry it (`(d_0 .. d_{first-1})` lexicographically positive) or all
/// of its components inside the band are `>= 0`.
pub fn fully_permutable(
    distances: &[Vec<i64>],
    depth: usize,
    first: usize,
    last: usize,
) -> Result<bool, BadNest> {
    assert!(
        first <= last && last < depth,
        "band {first}..={last} outside a {depth}-deep nest"
    );
    validate(depth, distances)?;
    Ok(distances.iter().all(|d| {
        lex_sign(&d[..first]) == Ordering::Greater
            || d[first..=last].iter().all(|&x| x >= 0)
    }))
}
// ANCHOR_END: fully_permutable

/// Every permutation of `0..depth`, in lexicographic order.
pub fn all_orders(depth: usize) -> Vec<Vec<usize>> {
    fn extend(prefix: &mut Vec<usize>, depth: usize, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == depth {
            out.push(prefix.clone());
            return;
        }
        for l in 0..depth {
            if !prefix.contains(&l) {
                prefix.push(l);
                extend(prefix, depth, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    extend(&mut Vec::new(), depth, &mut out);
    out
}

// ANCHOR: brute_force
/// Executes, on a cube of side `extent`, the loop nest whose statement is
/// `A[I] = 3 A[I - d_1] + 5 A[I - d_2] + .. + seed(I)` (wrapping integer arithmetic;
/// reads outside the cube see 1), with the loops in `order`. The statement has exactly
/// the flow dependences `distances`; comparing the arrays two orders leave shows
/// whether reordering changed the result.
pub fn run_nest(extent: usize, distances: &[Vec<i64>], order: &[usize]) -> Vec<u64> {
    let depth = order.len();
    let extents = vec![extent; depth];
    let iterations = odometer(&extents).map(|counter| {
        // Position p runs loop order[p]; the last one is innermost.
        let mut iter = vec![0i64; depth];
        for (p, &l) in order.iter().enumerate() {
            iter[l] = counter[p] as i64;
        }
        iter
    });
    execute(extent, depth, distances, iterations)
}

/// Runs the statement of [`run_nest`] at each vector of `iterations`, in turn.
pub fn execute(
    extent: usize,
    depth: usize,
    distances: &[Vec<i64>],
    iterations: impl Iterator<Item = Vec<i64>>,
) -> Vec<u64> {
    let mut a = vec![0u64; extent.pow(depth as u32)];
    let flat = |idx: &[i64]| -> Option<usize> {
        idx.iter().try_fold(0usize, |acc, &x| {
            (0..extent as i64).contains(&x).then(|| acc * extent + x as usize)
        })
    };
    for iter in iterations {
        let here = flat(&iter).expect("iterations stay inside the cube");
        let mut value = (here as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xABCD;
        for (q, d) in distances.iter().enumerate() {
            let source: Vec<i64> = iter.iter().zip(d).map(|(x, dx)| x - dx).collect();
            let read = flat(&source).map_or(1, |s| a[s]);
            value = value.wrapping_add(read.wrapping_mul(3 + 2 * q as u64));
        }
        a[here] = value;
    }
    a
}
// ANCHOR_END: brute_force

/// Every counter vector below `extents`, the last component fastest (a loop nest's order).
pub fn odometer(extents: &[usize]) -> impl Iterator<Item = Vec<usize>> + '_ {
    let total: usize = extents.iter().product();
    let mut counter = vec![0usize; extents.len()];
    (0..total).map(move |_| {
        let now = counter.clone();
        for p in (0..extents.len()).rev() {
            counter[p] += 1;
            if counter[p] < extents[p] {
                break;
            }
            counter[p] = 0;
        }
        now
    })
}

// ANCHOR: strip_mined
/// The distances dependence `d` takes once loop `k` is strip-mined by `s`: a strip
/// loop `kk` goes in just before loop `k`, and `d_k` splits into `(q, d_k - s q)`,
/// where `q`, the strips between producer and consumer, is `floor(d_k / s)` or one
/// more (both occur, unless `s` divides `d_k`). Strip-mining reorders nothing; the
/// vectors matter once the `depth + 1` loops are permuted.
pub fn strip_mined_distances(d: &[i64], k: usize, s: i64) -> Vec<Vec<i64>> {
    assert!(s >= 1 && k < d.len(), "strip {s} of loop {k} in a {}-deep nest", d.len());
    let q0 = d[k].div_euclid(s);
    let strips = if d[k].rem_euclid(s) == 0 { vec![q0] } else { vec![q0, q0 + 1] };
    strips
        .into_iter()
        .map(|q| [&d[..k], &[q, d[k] - s * q][..], &d[k + 1..]].concat())
        .collect()
}

/// Tiling = strip-mining loop `k` by `s`, then running the `depth + 1` loops in
/// `order` (as in [`check_order`]; the strip loop is number `k`, the loop of the
/// elements inside a strip `k + 1`). Legal exactly when every strip-mined distance
/// of every dependence stays lexicographically positive.
pub fn check_tiling(
    distances: &[Vec<i64>],
    k: usize,
    s: i64,
    order: &[usize],
) -> Result<Verdict, BadNest> {
    let Some(depth) = order.len().checked_sub(1).filter(|&d| k < d) else {
        return Err(BadNest::NotAPermutation(order.to_vec()));
    };
    validate(depth, distances)?;
    let mined: Vec<Vec<i64>> =
        distances.iter().flat_map(|d| strip_mined_distances(d, k, s)).collect();
    check_order(&mined, order)
}
// ANCHOR_END: strip_mined

/// The lecture's shortcut: a dependence whose distance along the strip-mined loop is
/// at least the strip size always lands in a later strip (`q >= 1`), so the strip loop
/// carries it, and the loops inside the strip loop may be reordered without regard to
/// it. (The lecture says "less than"; equal is enough.)
pub fn carried_by_strip_loop(d: &[i64], k: usize, s: i64) -> bool {
    lex_sign(&d[..k]) == Ordering::Equal && d[k] >= s
}

/// Brute force for [`check_tiling`]: the nest of [`run_nest`] with loop `k` strip-mined
/// by `s` and the `depth + 1` loops run in `order` (iterations past the end of the
/// last, partial strip are skipped).
pub fn run_tiled_nest(
    extent: usize,
    distances: &[Vec<i64>],
    k: usize,
    s: usize,
    order: &[usize],
) -> Vec<u64> {
    let depth = order.len() - 1;
    let mut extents = vec![extent; depth + 1];
    extents[k] = extent.div_ceil(s);
    extents[k + 1] = s;
    let permuted: Vec<usize> = order.iter().map(|&l| extents[l]).collect();
    let iterations = odometer(&permuted).filter_map(|counter| {
        let mut mined = vec![0usize; depth + 1];
        for (p, &l) in order.iter().enumerate() {
            mined[l] = counter[p];
        }
        let x_k = mined[k] * s + mined[k + 1];
        (x_k < extent).then(|| {
            let outer = mined[..k].iter().copied();
            let inner = mined[k + 2..].iter().copied();
            outer.chain([x_k]).chain(inner).map(|x| x as i64).collect()
        })
    });
    execute(extent, depth, distances, iterations)
}

/// The lecture's first nest, `A[i][j+1] = A[i][j] + B[j]` on a 3 x 7 array (i < 3, j < 6),
/// run with `i` outer (`i_outer`) or `j` outer. Its only dependence has distance (0, 1).
pub fn lecture_nest_1(i_outer: bool) -> Vec<i64> {
    let (ni, nj) = (3usize, 6usize);
    let b: Vec<i64> = (0..nj as i64).map(|j| 10 + j * j).collect();
    let mut a: Vec<i64> = (0..ni * (nj + 1)).map(|x| x as i64).collect();
    let mut body =
        |i: usize, j: usize| a[i * (nj + 1) + j + 1] = a[i * (nj + 1) + j] + b[j];
    if i_outer {
        (0..ni).for_each(|i| (0..nj).for_each(|j| body(i, j)));
    } else {
        (0..nj).for_each(|j| (0..ni).for_each(|i| body(i, j)));
    }
    a
}

/// The lecture's second nest, `A[i+1][j-1] = A[i][j] + B[j]` (i < 3, 1 <= j < 6, on a 4 x 6
/// array), run with `i` outer or `j` outer. Its only dependence has distance (1, -1).
pub fn lecture_nest_2(i_outer: bool) -> Vec<i64> {
    let (ni, nj) = (3usize, 6usize);
    let b: Vec<i64> = (0..nj as i64).map(|j| 10 + j * j).collect();
    let mut a: Vec<i64> = (0..(ni + 1) * nj).map(|x| 7 * x as i64).collect();
    let mut body = |i: usize, j: usize| a[(i + 1) * nj + j - 1] = a[i * nj + j] + b[j];
    if i_outer {
        (0..ni).for_each(|i| (1..nj).for_each(|j| body(i, j)));
    } else {
        (1..nj).for_each(|j| (0..ni).for_each(|i| body(i, j)));
    }
    a
}

// ANCHOR: legal_strips
/// The strip sizes `1..=max_s` for which strip-mining loop `k` and running the loops
/// in `order` is legal ([`check_tiling`]).
pub fn legal_strip_sizes(
    distances: &[Vec<i64>],
    k: usize,
    order: &[usize],
    max_s: i64,
) -> Result<Vec<i64>, BadNest> {
    let mut legal = Vec::new();
    for s in 1..=max_s {
        if check_tiling(distances, k, s, order)? == Verdict::Legal {
            legal.push(s);
        }
    }
    Ok(legal)
}
// ANCHOR_END: legal_strips
