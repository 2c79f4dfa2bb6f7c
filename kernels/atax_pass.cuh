// The pieces of ATAX that the portable kernels (kernels/atax.cu) and the cluster kernels
// (kernels/atax_cluster.cu) are both made of: a warp's sum, the fused pass up to each
// block's y in registers, and the copy of the accumulator that ends a one-launch pass.

typedef unsigned long long u64;

// ANCHOR: warp_sum
// The sum of v over the 32 lanes of a warp, by shuffles.
template <typename T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;  // the full sum is in lane 0
}
// ANCHOR_END: warp_sum

// ANCHOR: fused_pass
// One pass over A. A block owns the row pairs (2b, 2b + 1), (2b + 2G, 2b + 2G + 1), ...
// for block b of G; thread t owns columns t, t + blockDim.x, ..., E of them, and keeps
// its slice of both rows and of its running y contribution in registers. Per pair: the
// block reduces the two rows' dot products with x (tmp_i, tmp_i+1) together, then every
// thread adds a_ij * tmp_i + a_i+1,j * tmp_i+1 to its columns. Two rows per step halve
// the barriers per byte and double the loads in flight while the block waits at
// them; x is read through the read-only path each step (it stays in L1) so that both
// rows fit in registers. Each row of A is read from device memory once. At the end each
// block writes its partial y (one row of `partials`); reduce_partials adds those rows
// in a fixed order, so the result does not depend on timing. With ADD, each block adds
// its y into an accumulator with atomics instead (see fused_atomic). The pass itself,
// up to the block's y in registers, is fused_rows_to_registers: the cluster kernel
// (kernels/atax_cluster.cu) reuses it and combines the y of its blocks another way.
template <typename T, int E>
__device__ __forceinline__ void fused_rows_to_registers(const T* __restrict__ a,
                                                        const T* __restrict__ x,
                                                        T (&y_reg)[E], unsigned m,
                                                        unsigned n) {
    __shared__ T warp_sums_shared[2][32];
    __shared__ T row_sums_shared[2];
    unsigned t = threadIdx.x, lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
#pragma unroll
    for (int k = 0; k < E; ++k) y_reg[k] = 0;
    for (unsigned row = 2 * blockIdx.x; row < m; row += 2 * gridDim.x) {
        const bool second = row + 1 < m;  // an odd m leaves the last pair with one row
        const T* a_row0 = a + (u64)row * n;
        const T* a_row1 = a_row0 + n;
        T a0_reg[E], a1_reg[E];
        // Both rows' loads are issued before any arithmetic waits on them.
#pragma unroll
        for (int k = 0; k < E; ++k) {
            unsigned j = t + k * blockDim.x;
            a0_reg[k] = j < n ? a_row0[j] : T(0);
            a1_reg[k] = (second && j < n) ? a_row1[j] : T(0);
        }
        T dot0 = 0, dot1 = 0;
#pragma unroll
        for (int k = 0; k < E; ++k) {
            unsigned j = t + k * blockDim.x;
            T xj = j < n ? __ldg(&x[j]) : T(0);
            dot0 += a0_reg[k] * xj;
            dot1 += a1_reg[k] * xj;
        }
        dot0 = warp_sum(dot0);
        dot1 = warp_sum(dot1);
        if (lane == 0) {
            warp_sums_shared[0][warp] = dot0;
            warp_sums_shared[1][warp] = dot1;
        }
        __syncthreads();  // every warp's two sums are stored before warp 0 adds them
        if (warp == 0) {
            T s0 = lane < warps ? warp_sums_shared[0][lane] : T(0);
            T s1 = lane < warps ? warp_sums_shared[1][lane] : T(0);
            s0 = warp_sum(s0);
            s1 = warp_sum(s1);
            if (lane == 0) {
                row_sums_shared[0] = s0;
                row_sums_shared[1] = s1;
            }
        }
        __syncthreads();  // tmp_i and tmp_i+1 are stored before anyone reads them
        // No third barrier: warp 0 rewrites row_sums_shared only after the next pair's
        // first barrier, which every thread reaches after reading it here.
        const T tmp0 = row_sums_shared[0];
        const T tmp1 = row_sums_shared[1];
#pragma unroll
        for (int k = 0; k < E; ++k) y_reg[k] += a0_reg[k] * tmp0 + a1_reg[k] * tmp1;
    }
}
// ANCHOR_END: fused_pass

// ANCHOR: copy_and_clear
// The last block (or cluster) to finish: y = acc, then acc and the count back to zero
// for the next launch.
template <typename T>
__device__ void copy_and_clear(T* acc, T* y, unsigned* count, unsigned n) {
    __threadfence();  // the other blocks' additions are seen by the reads below
#pragma unroll 4
    for (unsigned j = threadIdx.x; j < n; j += blockDim.x) {
        y[j] = __ldcg(&acc[j]);  // from L2, where the atomics were done
        acc[j] = T(0);
    }
    if (threadIdx.x == 0) *count = 0;
}
// ANCHOR_END: copy_and_clear
