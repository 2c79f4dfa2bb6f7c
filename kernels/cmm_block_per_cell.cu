// Chained matrix multiplication, one launch per diagonal, one block of threads per cell.
//
// Seifi & Al-Mamun 2024, Section 7.1 ("parallelizing diagonal computations") lets 16 x 16 =
// 256 threads cooperate on each cell instead of one. Here the threads of a block split the
// k range of their cell (thread t tries k = i + t, i + t + B, ...), each keeps its best
// (cost, k), and the block reduces those pairs to one: first within each warp through
// register shuffles, then across the warps through shared memory. A diagonal is one launch
// (see cmm_cell_per_thread.cu for why the launch boundary is the barrier between diagonals).
// A thread needs only its rank in the block to pick its k, so the block is one-dimensional:
// the paper's 16 x 16 is B = 256 here.
//
// The reduction must pick the same k as the serial scan, which keeps the smallest k among
// equal costs. Pairs are therefore compared as (cost, k) in lexicographic order: the minimum
// pair is unique, and it is the serial answer whatever order the threads combine in.
//
// With the lanes of a warp on consecutive k of one cell, the loads change character:
// row-major M[i][k] is now contiguous and M[k+1][j] walks down a column (n + 1 apart);
// diagonal-major puts consecutive k on different diagonals, so both loads scatter.
// cmm::traffic (WarpMapping::SplitKPerCell) counts the sectors.
//
// Launch, once per diagonal d = 1 .. n-1 in increasing order on one stream:
//   grid (n - d, 1, 1): block b computes cell i = b + 1;
//   block (B, 1, 1), B a multiple of 32 with 32 <= B <= 1024 (256 as in the paper, or 32 for
//   one warp per cell); static shared memory 384 bytes, no dynamic shared memory.
// The main diagonal (d = 0) is never launched: allocate the tables zeroed.
//
// Kernels and parameters, in order (the two kernels differ only in the table layout):
//   cmm_rowmajor_block_per_cell_u64 / cmm_diagonal_block_per_cell_u64(
//       const unsigned int*  dims_global,  // p[0..n], n + 1 entries
//       unsigned long long*  cost_global,  // (n + 1)^2 costs (row-major) or n (n + 1) / 2 (diagonal)
//       unsigned int*        split_global, // splits, same size and layout as the costs
//       int                  n,            // matrices, n >= 2
//       int                  d)            // the diagonal this launch computes, 1 <= d < n
//
// Preconditions, checked by the host: (n + 1)^2 < 2^31 (int indices) and
// cmm::dp::gpu_safe_bound (unchecked 64-bit arithmetic).
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;
typedef unsigned int u32;

#define WARP_SIZE 32
#define MAX_WARPS_PER_BLOCK 32         // 1024 threads
#define FULL_WARP_MASK 0xffffffffu
#define NO_COST 0xffffffffffffffffull  // identity of the reduction: worse than any real pair ...
#define NO_SPLIT 0xffffffffu           // ... because every real k is smaller than this

struct RowMajor {
    __device__ static int index(int n, int i, int j) { return (n + 1) * i + j; }
};
struct DiagonalMajor {
    // Position i - 1 on diagonal j - i; diagonals 0 .. e-1 hold e (2n + 1 - e) / 2 cells.
    __device__ static int index(int n, int i, int j)
    {
        const int e = j - i;
        return e * (2 * n + 1 - e) / 2 + (i - 1);
    }
};

// (cost_a, k_a) comes before (cost_b, k_b): a smaller cost, or the same cost at a smaller k.
__device__ __forceinline__ bool better_pair(u64 cost_a, u32 k_a, u64 cost_b, u32 k_b)
{
    return cost_a < cost_b || (cost_a == cost_b && k_a < k_b);
}

// After this, lane 0 holds the best pair of its warp.
__device__ __forceinline__ void warp_best_pair(u64& cost, u32& k)
{
    for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        const u64 other_cost = __shfl_down_sync(FULL_WARP_MASK, cost, offset);
        const u32 other_k = __shfl_down_sync(FULL_WARP_MASK, k, offset);
        if (better_pair(other_cost, other_k, cost, k)) {
            cost = other_cost;
            k = other_k;
        }
    }
}

// ANCHOR: block_per_cell
// Cell M[i][i + d], computed by the whole block: each thread scans its share of
// the k range, then the block reduces the (cost, k) pairs. Every thread of the
// block must call it (it holds barriers); it leaves the shared pairs free for the
// block's next cell.
template <typename Layout>
__device__ void solve_cell(const u32* __restrict__ dims_global, u64* cost_global,
                           u32* split_global, int n, int i, int d)
{
    __shared__ u64 warp_best_cost_shared[MAX_WARPS_PER_BLOCK];
    __shared__ u32 warp_best_k_shared[MAX_WARPS_PER_BLOCK];

    const int j = i + d;
    const u64 p_before_i = dims_global[i - 1];
    const u64 p_j = dims_global[j];

    // This thread's share of the k range; k rises, so better_pair keeps its smallest
    // tied k. k jumps by blockDim.x, so each load computes its index afresh (for the
    // diagonal-major layout a multiply; the loads, not the index
    // arithmetic, dominate here).
    u64 best_cost = NO_COST;
    u32 best_k = NO_SPLIT;
    for (int k = i + threadIdx.x; k < j; k += blockDim.x) {
        const u64 candidate = cost_global[Layout::index(n, i, k)]        // M[i][k]
                            + cost_global[Layout::index(n, k + 1, j)]    // M[k+1][j]
                            + p_before_i * dims_global[k] * p_j;
        if (better_pair(candidate, k, best_cost, best_k)) {
            best_cost = candidate;
            best_k = k;
        }
    }

    const int lane = threadIdx.x % WARP_SIZE;
    const int warp = threadIdx.x / WARP_SIZE;
    warp_best_pair(best_cost, best_k);
    if (lane == 0) {
        warp_best_cost_shared[warp] = best_cost;
        warp_best_k_shared[warp] = best_k;
    }
    // every warp's best pair is in shared memory before warp 0 reads them
    __syncthreads();

    if (warp == 0) {
        const int warps = blockDim.x / WARP_SIZE;
        best_cost = lane < warps ? warp_best_cost_shared[lane] : NO_COST;
        best_k = lane < warps ? warp_best_k_shared[lane] : NO_SPLIT;
        warp_best_pair(best_cost, best_k);
        if (lane == 0) {
            cost_global[Layout::index(n, i, j)] = best_cost;
            split_global[Layout::index(n, i, j)] = best_k;
        }
    }
    // warp 0 has read the shared pairs before the block's next cell overwrites them
    __syncthreads();
}

template <typename Layout>
__device__ void block_per_cell(const u32* __restrict__ dims_global, u64* cost_global,
                               u32* split_global, int n, int d)
{
    const int i = blockIdx.x + 1;
    if (i > n - d) return;  // whole blocks only, so no thread misses a barrier
    solve_cell<Layout>(dims_global, cost_global, split_global, n, i, d);
}
// ANCHOR_END: block_per_cell

extern "C" __global__ void cmm_rowmajor_block_per_cell_u64(const u32* __restrict__ dims_global,
                                                           u64* cost_global, u32* split_global,
                                                           int n, int d)
{
    block_per_cell<RowMajor>(dims_global, cost_global, split_global, n, d);
}

extern "C" __global__ void cmm_diagonal_block_per_cell_u64(const u32* __restrict__ dims_global,
                                                           u64* cost_global, u32* split_global,
                                                           int n, int d)
{
    block_per_cell<DiagonalMajor>(dims_global, cost_global, split_global, n, d);
}

// ---------------------------------------------------------------------------------------
// One cooperative launch for the whole table: the same cells, a grid barrier between
// diagonals instead of the end of a launch.
//
// A launch through cuLaunchCooperativeKernel starts only if every block of its grid can be
// resident at once (the host sizes the grid from cuOccupancyMaxActiveBlocksPerMultiprocessor
// times the number of SMs), so a block that waits for the others cannot keep them from
// running: a barrier across the grid cannot deadlock. The barrier below is written out
// rather than taken from cooperative_groups::this_grid().sync(), so that every fence is
// visible.
//
// Launch (cooperative): grid (G, 1, 1) with G <= the co-resident limit, any G >= 1;
// block (B, 1, 1) as for block_per_cell; no dynamic shared memory.
// Kernels and parameters, in order:
//   cmm_rowmajor_persistent_u64 / cmm_diagonal_persistent_u64(
//       const unsigned int*  dims_global,     // p[0..n], n + 1 entries
//       unsigned long long*  cost_global,     // as for block_per_cell
//       unsigned int*        split_global,    // as for block_per_cell
//       int                  n,               // matrices, n >= 1
//       unsigned int*        barrier_global)  // 2 words: arrivals, generation
// barrier_global must hold 0 arrivals at the launch (any generation); every barrier
// leaves it at 0 again, so one buffer serves any number of launches in one stream.
//   cmm_persistent_barriers_only(dims, cost, split, n, barrier): the same n - 1 barriers
//       with no cell computed, to price a barrier alone.

// ANCHOR: grid_barrier
// Every block of the grid waits here until all of them have arrived; what any
// block wrote before the barrier is visible to every block after it.
__device__ void grid_barrier(unsigned int* arrivals, volatile unsigned int* generation)
{
    __syncthreads();  // the whole block has finished its cells before it arrives
    if (threadIdx.x == 0) {
        // Read the generation before arriving: the last block to arrive advances it.
        const unsigned int gen = *generation;
        __threadfence();  // release: this block's writes, then its arrival
        if (atomicAdd(arrivals, 1u) == gridDim.x - 1) {
            atomicExch(arrivals, 0u);  // reset for the next barrier ...
            __threadfence();           // ... before anyone can pass this one
            *generation = gen + 1;
        } else {
            while (*generation == gen) {
            }  // spin: volatile, so every pass reads memory (L2), not a register
        }
        __threadfence();  // acquire: the other blocks' writes before ours that follow
    }
    __syncthreads();  // the rest of the block waits for thread 0
}
// ANCHOR_END: grid_barrier

// ANCHOR: persistent
template <typename Layout>
__device__ void persistent(const u32* __restrict__ dims_global, u64* cost_global,
                           u32* split_global, int n, unsigned int* barrier_global)
{
    for (int d = 1; d < n; ++d) {
        // The n - d cells of diagonal d, dealt out to the blocks in turn.
        for (int i = blockIdx.x + 1; i <= n - d; i += gridDim.x) {
            solve_cell<Layout>(dims_global, cost_global, split_global, n, i, d);
        }
        // diagonal d is written, everywhere, before any block reads it for d + 1
        grid_barrier(barrier_global, barrier_global + 1);
    }
}
// ANCHOR_END: persistent

extern "C" __global__ void cmm_rowmajor_persistent_u64(const u32* __restrict__ dims_global,
                                                       u64* cost_global, u32* split_global,
                                                       int n, unsigned int* barrier_global)
{
    persistent<RowMajor>(dims_global, cost_global, split_global, n, barrier_global);
}

extern "C" __global__ void cmm_diagonal_persistent_u64(const u32* __restrict__ dims_global,
                                                       u64* cost_global, u32* split_global,
                                                       int n, unsigned int* barrier_global)
{
    persistent<DiagonalMajor>(dims_global, cost_global, split_global, n, barrier_global);
}

// The cost of the synchronisation alone: the n - 1 barriers of a persistent solve, no cell.
extern "C" __global__ void cmm_persistent_barriers_only(const u32* __restrict__ dims_global,
                                                        u64* cost_global, u32* split_global,
                                                        int n, unsigned int* barrier_global)
{
    for (int d = 1; d < n; ++d) {
        grid_barrier(barrier_global, barrier_global + 1);
    }
}

// The cost of the launches alone: launched like block_per_cell, once per diagonal, with
// the same arguments, and it computes nothing.
extern "C" __global__ void cmm_launch_only(const u32* __restrict__ dims_global,
                                           u64* cost_global, u32* split_global, int n, int d)
{
}
