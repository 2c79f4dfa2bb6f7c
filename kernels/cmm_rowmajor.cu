// Chained matrix multiplication, the paper's CUDA version: one block, table stored by rows.
//
// Seifi & Al-Mamun 2024, Section 5.2: thread t of a single block computes the cell in row
// i = t + 1 of the current diagonal; the block walks the diagonals d = 1 .. n-1 inside the
// kernel and meets at __syncthreads() between them, because cell (i, j) reads cells of every
// lower diagonal. The cost table M lives in global memory with the paper's indexing
// M[(n + 1) * i + j] (1-based i, j; row 0 and column 0 unused); the split table uses the same
// indexing. See cmm_diagonal.cu for the same program with the diagonal-major layout.
//
// Launch: grid (1, 1, 1), block (n, 1, 1), no dynamic shared memory: the paper's <<<1, n>>>,
// so n <= 1024. A smaller block is also correct (thread t then takes rows t + 1,
// t + 1 + blockDim.x, ...), only slower; a larger one leaves threads idle.
//
// Kernels and parameters, in order:
//   cmm_rowmajor_oneblock_u64(const unsigned int*  dims_global,  // p[0..n], n + 1 entries
//                             unsigned long long*  cost_global,  // (n + 1)^2 costs
//                             unsigned int*        split_global, // (n + 1)^2 splits
//                             int                  n)            // matrices, n >= 1
//   cmm_rowmajor_oneblock_u32: the same with `unsigned int* cost_global`.
// The kernel writes the cells 1 <= i <= j <= n (the main diagonal included) and nothing
// else: allocate both tables zeroed to compare whole buffers with the CPU's.
//
// Preconditions, checked by the host: (n + 1)^2 < 2^31 so int indices do not wrap
// (cmm::layout::MAX_N_FOR_I32_INDEX); every value the program computes fits the cost type
// (cmm::dp::gpu_safe_bound for _u64, gpu_safe_bound_u32 for _u32), since the adds and
// multiplies of the cell (kernels/cmm_cell.cuh) are unchecked.
// Needs: compute capability 7.0 (nothing newer than Volta).

#include "cmm_cell.cuh"  // rowmajor_cell: one cell of the table

// ANCHOR: rowmajor_oneblock
template <typename Cost>
__device__ void rowmajor_oneblock(const u32* __restrict__ dims_global,
                                  Cost* cost_global, u32* split_global, int n)
{
    const int row = n + 1;  // row stride of the (n + 1) x (n + 1) table

    // Diagonal 0: a single matrix costs no multiplication.
    for (int i = threadIdx.x + 1; i <= n; i += blockDim.x) {
        cost_global[row * i + i] = 0;
        split_global[row * i + i] = 0;
    }
    __syncthreads();  // diagonal 0 is written before diagonal 1 reads it

    for (int d = 1; d < n; ++d) {
        for (int i = threadIdx.x + 1; i <= n - d; i += blockDim.x)
            rowmajor_cell(dims_global, cost_global, split_global, n, i, i + d);
        __syncthreads();  // diagonal d is written before diagonal d + 1 reads it
    }
}
// ANCHOR_END: rowmajor_oneblock

extern "C" __global__ void cmm_rowmajor_oneblock_u64(const u32* __restrict__ dims_global,
                                                     u64* cost_global, u32* split_global, int n)
{
    rowmajor_oneblock<u64>(dims_global, cost_global, split_global, n);
}

// 4-byte costs: half the bytes per element, so a coalesced warp load needs half the sectors;
// with this layout's scattered loads it still needs one sector per lane.
extern "C" __global__ void cmm_rowmajor_oneblock_u32(const u32* __restrict__ dims_global,
                                                     u32* cost_global, u32* split_global, int n)
{
    rowmajor_oneblock<u32>(dims_global, cost_global, split_global, n);
}
