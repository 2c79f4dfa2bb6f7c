// Chained matrix multiplication, one block, table stored diagonal by diagonal.
//
// The program of cmm_rowmajor.cu with the data layout of Seifi & Al-Mamun 2024, Section 6
// (Figure 4): diagonal d = j - i of the table is stored contiguously, ordered by i, and the
// diagonals follow one another from d = 0. The threads of a warp work on neighbouring cells
// of one diagonal and, at each step of the k loop, on neighbouring cells of two lower
// diagonals, which are now neighbours in memory: each warp load is a few whole sectors
// instead of one sector per lane. The buffer holds n (n + 1) / 2 cells instead of (n + 1)^2.
// The addresses of the two loads are stepped along the k loop by additions. For the row-major
// `row * i + k` the compiler finds such steps by itself; diag_index is quadratic in the
// diagonal, so it cannot, and recomputing diag_index for every load (kept below as
// cmm_diagonal_oneblock_indexed_u64, for comparison) adds multiplies and dependent integer
// work to a loop that does little else, which hides much of what the layout gains.
//
// Launch: grid (1, 1, 1), block (n, 1, 1), no dynamic shared memory: the paper's <<<1, n>>>,
// so n <= 1024. A smaller block is also correct, only slower.
//
// Kernels and parameters, in order:
//   cmm_diagonal_oneblock_u64(const unsigned int*  dims_global,  // p[0..n], n + 1 entries
//                             unsigned long long*  cost_global,  // n (n + 1) / 2 costs
//                             unsigned int*        split_global, // n (n + 1) / 2 splits
//                             int                  n)            // matrices, n >= 1
//   cmm_diagonal_oneblock_u32: the same with `unsigned int* cost_global`.
//   cmm_diagonal_oneblock_indexed_u64: the same as _u64, computing diag_index for every load.
// Every cell is written; cell (i, j) is at cmm::layout::Layout::DiagonalMajor.dp_index(n, i, j).
//
// Preconditions, checked by the host: n (n + 1) < 2^31 so int indices do not wrap
// (cmm::layout::MAX_N_FOR_I32_INDEX); every value the program computes fits the cost type
// (cmm::dp::gpu_safe_bound for _u64, gpu_safe_bound_u32 for _u32).
// Needs: compute capability 7.0 (nothing newer than Volta).

#include "cmm_cell.cuh"  // diag_index, diagonal_cell: one cell of the table

// ANCHOR: diagonal_oneblock
template <typename Cost>
__device__ void diagonal_oneblock(const u32* __restrict__ dims_global,
                                  Cost* cost_global, u32* split_global, int n)
{
    // Diagonal 0, the first n elements: a single matrix costs no multiplication.
    for (int i = threadIdx.x + 1; i <= n; i += blockDim.x) {
        cost_global[diag_index(n, i, i)] = 0;
        split_global[diag_index(n, i, i)] = 0;
    }
    __syncthreads();  // diagonal 0 is written before diagonal 1 reads it

    for (int d = 1; d < n; ++d) {
        for (int i = threadIdx.x + 1; i <= n - d; i += blockDim.x)
            diagonal_cell(dims_global, cost_global, split_global, n, i, i + d);
        __syncthreads();  // diagonal d is written before diagonal d + 1 reads it
    }
}
// ANCHOR_END: diagonal_oneblock

extern "C" __global__ void cmm_diagonal_oneblock_u64(const u32* __restrict__ dims_global,
                                                     u64* cost_global, u32* split_global, int n)
{
    diagonal_oneblock<u64>(dims_global, cost_global, split_global, n);
}

// 4-byte costs: a warp's 32 neighbouring elements span 128 bytes (4 sectors) instead of 256.
extern "C" __global__ void cmm_diagonal_oneblock_u32(const u32* __restrict__ dims_global,
                                                     u32* cost_global, u32* split_global, int n)
{
    diagonal_oneblock<u32>(dims_global, cost_global, split_global, n);
}

// The same program with every load's index computed from scratch, as one would first write
// it: the memory accesses are identical to cmm_diagonal_oneblock_u64, the integer work is not.
extern "C" __global__ void cmm_diagonal_oneblock_indexed_u64(const u32* __restrict__ dims_global,
                                                             u64* cost_global, u32* split_global,
                                                             int n)
{
    for (int i = threadIdx.x + 1; i <= n; i += blockDim.x) {
        cost_global[diag_index(n, i, i)] = 0;
        split_global[diag_index(n, i, i)] = 0;
    }
    __syncthreads();  // diagonal 0 is written before diagonal 1 reads it

    for (int d = 1; d < n; ++d) {
        for (int i = threadIdx.x + 1; i <= n - d; i += blockDim.x) {
            const int j = i + d;
            const u64 p_before_i = dims_global[i - 1];
            const u64 p_j = dims_global[j];
            u64 best_cost = ~0ull;
            int best_k = i;
            for (int k = i; k < j; ++k) {
                const u64 candidate = cost_global[diag_index(n, i, k)]        // M[i][k]
                                    + cost_global[diag_index(n, k + 1, j)]    // M[k+1][j]
                                    + p_before_i * dims_global[k] * p_j;
                if (candidate < best_cost) {  // strictly smaller: ties keep the smaller k
                    best_cost = candidate;
                    best_k = k;
                }
            }
            cost_global[diag_index(n, i, j)] = best_cost;
            split_global[diag_index(n, i, j)] = best_k;
        }
        __syncthreads();  // diagonal d is written before diagonal d + 1 reads it
    }
}
