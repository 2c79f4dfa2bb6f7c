//! The CPU's answers for the chapter's kernels: what each must compute, exactly.

/// The table index element `i` looks up (kernels/hopper_l2.cu, `lookup_index`).
pub fn lookup_index(i: u32, table_len: u32) -> u32 {
    let mut h = i.wrapping_mul(2_654_435_761);
    h ^= h >> 15;
    h % table_len
}

/// `out[i] = stream[i] * table[lookup_index(i)]` for each float of each float4.
pub fn lookup(table: &[f32], stream: &[f32]) -> Vec<f32> {
    let len = table.len() as u32;
    stream
        .chunks(4)
        .enumerate()
        .flat_map(|(i, v)| {
            let t = table[lookup_index(i as u32, len) as usize];
            v.iter().map(move |x| x * t)
        })
        .collect()
}

/// What every block of `exchange_dsmem` / `exchange_global` writes: for each cluster of
/// `cluster` consecutive blocks, the sum over `rounds` of the cluster's sum of
/// `(partial + r)`, in wrapping 32-bit arithmetic.
pub fn exchange(
    in_words: &[u32],
    per_block: usize,
    cluster: usize,
    rounds: u32,
) -> Vec<u32> {
    let partials: Vec<u32> = in_words
        .chunks(per_block)
        .map(|c| c.iter().fold(0u32, |a, &x| a.wrapping_add(x)))
        .collect();
    let mut out = Vec::with_capacity(partials.len());
    for group in partials.chunks(cluster) {
        let sum = group.iter().fold(0u32, |a, &x| a.wrapping_add(x));
        let mut acc = 0u32;
        for r in 0..rounds {
            acc = acc
                .wrapping_add(sum.wrapping_add((group.len() as u32).wrapping_mul(r)));
        }
        out.extend(std::iter::repeat_n(acc, group.len()));
    }
    out
}

/// The dense row-major `rows x cols` matrix `dense` laid out with its rows `pitch`
/// elements apart, in a buffer of `rows * pitch` elements (the padding zero): what
/// [`unpitch`] undoes.
pub fn pitch<T: Copy + Default>(
    dense: &[T],
    rows: usize,
    cols: usize,
    pitch: usize,
) -> Vec<T> {
    let mut buf = vec![T::default(); rows * pitch];
    for r in 0..rows {
        buf[r * pitch..r * pitch + cols].copy_from_slice(&dense[r * cols..][..cols]);
    }
    buf
}

/// The `rows x cols` matrix of a buffer whose rows start `pitch` elements apart, as a
/// dense row-major vector (the padding left out).
pub fn unpitch<T: Copy>(buf: &[T], rows: usize, cols: usize, pitch: usize) -> Vec<T> {
    (0..rows).flat_map(|r| buf[r * pitch..r * pitch + cols].iter().copied()).collect()
}

/// The dense transpose of a dense `rows x cols` matrix.
pub fn transpose<T: Copy + Default>(m: &[T], rows: usize, cols: usize) -> Vec<T> {
    let mut t = vec![T::default(); m.len()];
    const B: usize = 64; // blocks of 64 x 64: both matrices touched a cache line at a time
    for r0 in (0..rows).step_by(B) {
        for c0 in (0..cols).step_by(B) {
            for r in r0..(r0 + B).min(rows) {
                for c in c0..(c0 + B).min(cols) {
                    t[c * rows + r] = m[r * cols + c];
                }
            }
        }
    }
    t
}

/// `pitch` rounded up to a multiple of `elements`.
pub fn round_up(n: usize, elements: usize) -> usize {
    n.div_ceil(elements) * elements
}

/// What `l2_reread` writes into its one output buffer of words: the stream copied, then
/// one word per block, the block's sum of the table's first pass plus (if `twice`) twice
/// its sum of the second (backwards) pass, in wrapping 32-bit arithmetic. `table` and
/// `stream` hold whole uint4s (four words each); the grid is `blocks` blocks of `threads`.
pub fn reread(
    table: &[u32],
    stream: &[u32],
    (blocks, threads): (usize, usize),
    twice: bool,
) -> Vec<u32> {
    let sum4 = |q: &[u32]| q.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    let quads: Vec<u32> = table.chunks_exact(4).map(sum4).collect();
    let n4t = quads.len();
    let stride = blocks * threads;
    let mut partial = vec![0u32; blocks];
    for (i, &q) in quads.iter().enumerate() {
        let block = (i % stride) / threads;
        let back = if twice { quads[n4t - 1 - i] } else { 0 };
        partial[block] =
            partial[block].wrapping_add(q).wrapping_add(back.wrapping_mul(2));
    }
    let mut out = stream.to_vec();
    out.extend(partial);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pitch_pads_each_row_with_zeros_and_unpitch_undoes_it() {
        let dense = [1, 2, 3, 4, 5, 6];
        let pitched = pitch(&dense, 2, 3, 4);
        assert_eq!(pitched, [1, 2, 3, 0, 4, 5, 6, 0]);
        assert_eq!(unpitch(&pitched, 2, 3, 4), dense);
        assert_eq!(pitch(&dense, 2, 3, 3), dense);
    }
}
