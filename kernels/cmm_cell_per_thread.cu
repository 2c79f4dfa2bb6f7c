// Chained matrix multiplication, one launch per diagonal, one thread per cell, many blocks.
//
// Seifi & Al-Mamun 2024, Section 7.1 ("2D thread block decomposition") spreads each diagonal
// over many blocks. The one-block kernels (cmm_rowmajor.cu, cmm_diagonal.cu) cannot: they
// separate the diagonals with __syncthreads(), which waits only for the threads of one block.
// Here each launch computes a single diagonal and the host launches d = 1, 2, ..., n - 1 in
// order on one stream. The boundary between two launches is the grid-wide barrier: a launch
// on a stream starts only after the previous one has finished, and everything the previous
// one wrote to global memory is visible to it. (Inside one launch, blocks cannot wait for
// one another: nothing guarantees that all of them are resident at once.) With many blocks
// the work of a diagonal reaches every SM, and n is no longer limited to 1024 threads.
//
// The paper shapes its blocks as 16 x 16 threads; since a thread only needs its position
// along the diagonal, the blocks here are one-dimensional and the shape carries no meaning.
//
// Launch, once per diagonal d = 1 .. n-1 in increasing order on one stream:
//   grid (ceil((n - d) / B), 1, 1), block (B, 1, 1) for any B (e.g. 256), no shared memory.
// The main diagonal (d = 0) is never launched: allocate the tables zeroed, which makes it 0.
//
// Kernels and parameters, in order (the two kernels differ only in the table layout and, as a
// consequence, in how the load addresses advance):
//   cmm_rowmajor_cell_per_thread_u64 / cmm_diagonal_cell_per_thread_u64(
//       const unsigned int*  dims_global,  // p[0..n], n + 1 entries
//       unsigned long long*  cost_global,  // (n + 1)^2 costs (row-major) or n (n + 1) / 2 (diagonal)
//       unsigned int*        split_global, // splits, same size and layout as the costs
//       int                  n,            // matrices, n >= 2
//       int                  d)            // the diagonal this launch computes, 1 <= d < n
//
// Preconditions, checked by the host: (n + 1)^2 < 2^31 (int indices) and
// cmm::dp::gpu_safe_bound (unchecked 64-bit arithmetic).

typedef unsigned long long u64;
typedef unsigned int u32;

// Element holding M[i][j], 1 <= i <= j <= n, in the diagonal-major layout: position i - 1 on
// diagonal e = j - i, after the e (2n + 1 - e) / 2 cells of diagonals 0 .. e-1.
__device__ __forceinline__ int diag_index(int n, int i, int j)
{
    const int e = j - i;
    return e * (2 * n + 1 - e) / 2 + (i - 1);
}

// Row-major, the paper's indexing; the compiler turns `row * i + k` and `row * (k + 1) + j`
// into address steps by itself.
extern "C" __global__ void cmm_rowmajor_cell_per_thread_u64(const u32* __restrict__ dims_global,
                                                            u64* cost_global, u32* split_global,
                                                            int n, int d)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > n - d) return;  // the last block reaches past the end of the diagonal
    const int j = i + d;
    const int row = n + 1;  // row stride of the (n + 1) x (n + 1) table
    const u64 p_before_i = dims_global[i - 1];
    const u64 p_j = dims_global[j];
    u64 best_cost = ~0ull;
    int best_k = i;
    for (int k = i; k < j; ++k) {
        // Lower diagonals only: all written by earlier launches.
        const u64 candidate = cost_global[row * i + k]          // M[i][k]
                            + cost_global[row * (k + 1) + j]    // M[k+1][j]
                            + p_before_i * dims_global[k] * p_j;
        // Strictly smaller: on a tie the smaller k, met first, stays (as on the CPU).
        if (candidate < best_cost) {
            best_cost = candidate;
            best_k = k;
        }
    }
    cost_global[row * i + j] = best_cost;
    split_global[row * i + j] = best_k;
}

// Diagonal-major; the index is quadratic in the diagonal, so the loop steps the two load
// addresses itself, as in cmm_diagonal.cu.
extern "C" __global__ void cmm_diagonal_cell_per_thread_u64(const u32* __restrict__ dims_global,
                                                            u64* cost_global, u32* split_global,
                                                            int n, int d)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > n - d) return;  // the last block reaches past the end of the diagonal
    const int j = i + d;
    const u64 p_before_i = dims_global[i - 1];
    const u64 p_j = dims_global[j];
    u64 best_cost = ~0ull;
    int best_k = i;
    const u64* left = cost_global + diag_index(n, i, i);       // &M[i][k] for k = i
    const u64* right = cost_global + diag_index(n, i + 1, j);  // &M[k+1][j] for k = i
    for (int k = i; k < j; ++k) {
        // Lower diagonals only: all written by earlier launches.
        // TUTORIAL: left == &cost_global[diag_index(n, i, k)],
        //           right == &cost_global[diag_index(n, k + 1, j)].
        const u64 candidate = *left     // M[i][k]
                            + *right    // M[k+1][j]
                            + p_before_i * dims_global[k] * p_j;
        // Strictly smaller: on a tie the smaller k, met first, stays (as on the CPU).
        if (candidate < best_cost) {
            best_cost = candidate;
            best_k = k;
        }
        left += n - (k - i);       // M[i][k+1]: same position, one diagonal up
        right += (j - k - 1) - n;  // M[k+2][j]: one diagonal down, one position on
    }
    cost_global[diag_index(n, i, j)] = best_cost;
    split_global[diag_index(n, i, j)] = best_k;
}
