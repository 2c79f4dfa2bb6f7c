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
// Needs: compute capability 7.0 (nothing newer than Volta).

#include "cmm_cell.cuh"  // rowmajor_cell, diagonal_cell: one cell of the table

// Row-major, the paper's indexing; the compiler turns `row * i + k` and `row * (k + 1) + j`
// into address steps by itself.
extern "C" __global__ void cmm_rowmajor_cell_per_thread_u64(const u32* __restrict__ dims_global,
                                                            u64* cost_global, u32* split_global,
                                                            int n, int d)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > n - d) return;  // the last block reaches past the end of the diagonal
    // Every cell it reads lies on a lower diagonal: all written by earlier launches.
    rowmajor_cell(dims_global, cost_global, split_global, n, i, i + d);
}

// Diagonal-major; the index is quadratic in the diagonal, so the cell steps the two load
// addresses itself.
extern "C" __global__ void cmm_diagonal_cell_per_thread_u64(const u32* __restrict__ dims_global,
                                                            u64* cost_global, u32* split_global,
                                                            int n, int d)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > n - d) return;  // the last block reaches past the end of the diagonal
    // Every cell it reads lies on a lower diagonal: all written by earlier launches.
    diagonal_cell(dims_global, cost_global, split_global, n, i, i + d);
}
