// Chained matrix multiplication, tiled: whole diagonals of 64 x 64 tiles per step, the k range
// of the big tiles as min-plus "matrix products" split over many blocks.
//
// The recurrence, on the n + 1 points 0..n between the matrices (matrix A_i spans points i - 1
// and i, so M[i][j] is T[i - 1][j]):
//
//     T[a][a + 1] = 0,   T[a][b] = min over a < c < b of  T[a][c] + T[c][b] + p[a] p[c] p[b],
//
// and the split k of the book's M[i][j] is the c that attains the minimum. Cut the points
// into tiles of TILE = 64 and the table into TILE x TILE blocks (I, J), I <= J. A cell of
// block (I, J) needs cells of (I, K) and (K, J) for every tile K strictly between I and J —
// both on lower block diagonals, already final — and, for c in tile I or tile J, cells of
// its own block. So block diagonal D = J - I is computed in two launches:
//
//   cmm_tiled_minplus_u64     the c of the D - 1 tiles between I and J: for each such tile,
//                             a 64 x 64 x 64 min-plus product of a row strip and a column strip,
//                             register-tiled like the matrix multiply of the tiling chapter
//                             (4 x 4 cells per thread). The c of one block, in slices of 32,
//                             are split over blockIdx.y so that the last block diagonals,
//                             which hold few blocks of much work, and the small tables, whose
//                             every step waits on one of these launches, still fill the GPU;
//                             the parts meet in atomicMin.
//   cmm_tiled_wavefront_u64   the c inside tiles I and J: cell (r, s) of the block needs the
//                             cells below it in its column and left of it in its row, so the
//                             block is swept in 2 TILE - 1 anti-diagonal steps in shared memory,
//                             each cell taking the candidates of the step before it.
//
// and block diagonal 0 by cmm_tiled_diagonal_blocks_u64 (one block per tile, 63 steps).
// The sweeps are chains of dependent steps, each a barrier apart: their time is latency, so
// they use all 1024 threads a block may have to make each step short.
//
// Keys. A cell holds one 64-bit key, cost << 16 | split. Because every split is < 2^16, the
// smallest key is the smallest cost and, among equal costs, the smallest split: exactly the
// tie rule of the serial program. A min over keys is therefore the whole argmin, which is what
// lets partial results from different blocks meet in a single atomicMin, and lets the
// shuffle reductions carry one value instead of a (cost, k) pair. In the inner loop a
// candidate key is built from three terms whose low 16 bits are already right:
//     (cost(a, c) << 16 | c)  +  (cost(c, b) << 16)  +  (p[a] p[c]) * (p[b] << 16)
// the last one a single 32 x 32 -> 64-bit multiply-add, since p < 2^16.
//
// Launch, in this order on one stream (NT = ceil((n + 1) / 64) tiles, stride = 64 NT):
//   memset the key table to 0xFF bytes (the identity of min: every atomicMin starts there);
//   cmm_tiled_diagonal_blocks_u64   grid (NT), block (1024), 99 840 bytes dynamic shared;
//   for D = 1 .. NT - 1:
//     if D >= 2: cmm_tiled_minplus_u64  grid (NT - D, S), block (256), static shared only,
//                where S = ceil(2 (D - 1) / chunk) and blockIdx.y takes the slices of 32
//                points c from (I + 1) 64 + 32 chunk blockIdx.y on (at most chunk of them,
//                all below J 64);
//     cmm_tiled_wavefront_u64           grid (NT - D), block (1024), 99 840 bytes dynamic shared.
//
// The other versions take the same arguments and the same grids:
//   cmm_tiled_minplus_u32          for cmm_tiled_minplus_u64, 32-bit costs (bound < 2^32 - 1),
//                                  49 280 bytes dynamic shared;
//   cmm_tiled_wavefront_u32        for cmm_tiled_wavefront_u64, 32-bit costs, 49 152 bytes;
//   cmm_tiled_wavefront_lean_u64   for cmm_tiled_wavefront_u64, block (512).
//   cmm_tiled_wavefront_ordered_u32     for cmm_tiled_wavefront_u64, 32-bit costs, 57 344 bytes;
//   cmm_tiled_wavefront_quadrants_u32   for cmm_tiled_wavefront_u64, 32-bit costs, 68 736 bytes.
// Every launch may take a batch of chains of one length: gridDim.z = chains, chain z's
// dimensions at dims_global + z (n + 1) and its keys at key_global + z stride^2.
//
// Parameters, in order:
//   const unsigned int* dims_global   p[0..n], n + 1 entries
//   unsigned long long* key_global    stride x stride keys, row-major, T[a][b] at a * stride + b
//   int n                             matrices, 1 <= n < 2^16 - 1
//   int stride                        64 NT
//   int D                             (minplus, wavefront) the block diagonal
//   int chunk                         (minplus) slices of 32 points c per block, >= 1
// Only the cells 0 <= a < b <= n are written; T[i - 1][j] is M[i][j] as the key above.
//
// Preconditions, checked by the host (cmm::gpu): every dimension < 2^16, so p[a] p[c] and
// p[b] << 16 fit 32 bits; cmm::dp::cost_upper_bound(dims) < 2^48, so no key sum wraps.
// The 32-bit min-plus kernel (cmm_tiled_minplus_u32) streams its strips with cp.async, of
// compute capability 8.0: it is in kernels/cmm_tiled_async.cu, so that every other kernel
// runs from 7.0 up.
// Needs: compute capability 7.0 (warp shuffles with a mask, 64-bit atomicMin).

#include "cmm_tiled.cuh"

#define SWEEP_THREADS 1024                        // the sweeps: as many threads as a block has
#define COST_MASK (~((1ull << SPLIT_BITS) - 1))  // a key with its split bits cleared
#define NO_KEY 0xffffffffffffffffull              // identity of min; also the memset value
#define THREADS_PER_CELL 16                       // diagonal blocks: threads sharing one cell's candidates

// ANCHOR: keys
// The left operand of a candidate through c: cost(a, c) with the split bits set to c.
__device__ __forceinline__ u64 left_key(u64 key_a_c, int c)
{
    return (key_a_c & COST_MASK) | (u64)c;
}
// The right operand: cost(c, b), split bits zero.
__device__ __forceinline__ u64 right_key(u64 key_c_b) { return key_c_b & COST_MASK; }
// left + right + p[a] p[c] p[b] << 16, the key of the candidate split c
// for cell (a, b).
__device__ __forceinline__ u64 candidate(u64 left, u64 right, u32 p_a_times_p_c,
                                         u32 p_b_shifted)
{
    return (u64)p_a_times_p_c * p_b_shifted + left + right;
}
// ANCHOR_END: keys

__device__ __forceinline__ u64 min_key(u64 x, u64 y) { return y < x ? y : x; }

// The minimum over the THREADS_PER_CELL consecutive lanes of one cell.
__device__ __forceinline__ u64 cell_group_min(u64 key)
{
    for (int offset = THREADS_PER_CELL / 2; offset > 0; offset /= 2)
        key = min_key(key, __shfl_xor_sync(0xffffffffu, key, offset));
    return key;
}

// ANCHOR: minplus
// Block (x, y): block (I, J) = (x, x + D) of block diagonal D, its chunk slices of 32
// points c from (I + 1) 64 + 32 chunk y on; thread (row group tr, column group tc)
// owns the 4 x 4 cells
// (tr + 16 m, tc + 16 q). Every c of a tile K lies strictly between every a of tile I
// and every b of tile J, so all 64 x 64 cells take all 64 candidates, and every operand
// is a finished cell of a lower block diagonal.
extern "C" __global__ void __launch_bounds__(THREADS, 2)
cmm_tiled_minplus_u64(const u32* __restrict__ dims_global, u64* key_global,
                      int n, int stride, int D, int chunk)
{
    // left_key(T[a][c]): 64 rows a, 32 columns c
    __shared__ u64 left_shared[TILE][HALF];
    // right_key(T[c][b]): 32 rows c, 64 columns b
    __shared__ u64 right_shared[HALF][TILE];
    __shared__ u32 p_c_shared[HALF];

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    // Slices of HALF points c from tile I + 1 on: block y takes chunk of them.
    const int slice_first = chunk * blockIdx.y;
    const int slice_end = min(slice_first + chunk, (D - 1) * (TILE / HALF));
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const int a0 = I * TILE, b0 = J * TILE;

    u32 p_a[4], p_b_shifted[4];
    u64 best[4][4];
    for (int m = 0; m < 4; ++m) {
        const int a = a0 + tr + 16 * m, b = b0 + tc + 16 * m;
        // rows and columns past n are never written
        p_a[m] = a <= n ? dims_global[a] : 0;
        p_b_shifted[m] = b <= n ? dims_global[b] << SPLIT_BITS : 0;
        for (int q = 0; q < 4; ++q) best[m][q] = NO_KEY;
    }

    for (int slice = slice_first; slice < slice_end; ++slice) {
        const int c0 = (I + 1) * TILE + slice * HALF;
        // Stage both strips; consecutive threads read consecutive keys of one row.
        for (int e = threadIdx.x; e < TILE * HALF; e += THREADS) {
            const int r = e / HALF, cc = e % HALF;
            const u64 key_a_c = key_global[(size_t)(a0 + r) * stride + c0 + cc];
            left_shared[r][cc] = left_key(key_a_c, c0 + cc);
        }
        for (int e = threadIdx.x; e < HALF * TILE; e += THREADS) {
            const int cc = e / TILE, s = e % TILE;
            right_shared[cc][s] =
                right_key(key_global[(size_t)(c0 + cc) * stride + b0 + s]);
        }
        if (threadIdx.x < HALF)
            p_c_shared[threadIdx.x] = dims_global[c0 + threadIdx.x];
        __syncthreads();  // the strips are complete before anyone reads them

        #pragma unroll 4
        for (int cc = 0; cc < HALF; ++cc) {
            const u32 p_c = p_c_shared[cc];
            u64 left[4], right[4];
            u32 p_a_times_p_c[4];
            for (int m = 0; m < 4; ++m) {
                // 2 rows per warp: broadcast
                left[m] = left_shared[tr + 16 * m][cc];
                p_a_times_p_c[m] = p_a[m] * p_c;
            }
            // 128 B per warp
            for (int q = 0; q < 4; ++q) right[q] = right_shared[cc][tc + 16 * q];
            for (int m = 0; m < 4; ++m)
                for (int q = 0; q < 4; ++q)
                    best[m][q] = min_key(best[m][q], candidate(left[m], right[q],
                                                               p_a_times_p_c[m],
                                                               p_b_shifted[q]));
        }
        // everyone is done with the strips before they are overwritten
        __syncthreads();
    }

    for (int m = 0; m < 4; ++m)
        for (int q = 0; q < 4; ++q) {
            const int a = a0 + tr + 16 * m, b = b0 + tc + 16 * q;
            if (b <= n) atomicMin(&key_global[(size_t)a * stride + b], best[m][q]);
        }
}
// ANCHOR_END: minplus

// Shared memory of the two sweeping kernels: three 64 x 64 tiles of 8-byte keys. The sweeps
// read down columns (the 16 lanes of a cell take c, c + 16, ... of column s); with rows of 64
// keys those addresses are 512 bytes apart, all in one bank, and the loads would serialise.
// One key of padding per row moves each row 2 banks on, so 16 consecutive rows hit 16
// different bank pairs.
#define ROW (TILE + 1)
struct SweepTiles {
    u64 left[TILE][ROW];   // wavefront: left_key of block (I, I)
    u64 right[TILE][ROW];  // wavefront: right_key of block (J, J)
    u64 cell[TILE][ROW];   // the block being computed, full keys
};

// ANCHOR: wavefront
// One block per block (I, J = I + D) of block diagonal D >= 1. On entry the table
// holds, for each cell, the best key over the c of the tiles between I and J (or NO_KEY
// when D = 1). Left to do: c in tile I above a, whose operands are T[a][c]
// (block (I, I), final) and T[c][b] (this block, row c below row a), and c in tile J
// below b, whose operands are T[a][c] (this block, column c left of column b) and
// T[c][b] (block (J, J), final). Cell (r, s) therefore depends on the cells below it
// and to its left, and is final at step t = (63 - r) + s of a sweep over
// the anti-diagonals.
//
// The sweep pushes instead of pulling: anti-diagonal t - 1, just finished, holds
// exactly one cell of each column and one of each row, so at step t every unfinished
// cell (r, s) takes at most two candidates, through the finished cell of its column
// (c below r) and the one of its row (c left of s), into a running minimum in a
// register. Each candidate is taken exactly once, at the step after its operand is
// finished, with no reduction between threads; a cell is written to shared memory at
// its own step t. (Pulling all t candidates of the cells of step t at once, and
// reducing over threads, would leave most threads idle.)
extern "C" __global__ void __launch_bounds__(SWEEP_THREADS)
cmm_tiled_wavefront_u64(const u32* __restrict__ dims_global, u64* key_global,
                        int n, int stride, int D)
{
    extern __shared__ u64 dynamic_shared[];
    SweepTiles& tiles = *reinterpret_cast<SweepTiles*>(dynamic_shared);
    __shared__ u32 p_shared[2][TILE];  // p of tile I's points, then of tile J's
    constexpr int CELLS_PER_THREAD = TILE * TILE / SWEEP_THREADS;

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    const int a0 = I * TILE, b0 = J * TILE;
    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        const u64 key_a_c = key_global[(size_t)(a0 + r) * stride + a0 + s];
        tiles.left[r][s] = left_key(key_a_c, a0 + s);
        tiles.right[r][s] = right_key(key_global[(size_t)(b0 + r) * stride + b0 + s]);
    }
    // Thread x owns cells x, x + 1024, ...: a warp holds 32 neighbours of one row.
    u64 best[CELLS_PER_THREAD];
    for (int m = 0; m < CELLS_PER_THREAD; ++m) {
        const int e = threadIdx.x + m * SWEEP_THREADS, r = e / TILE, s = e % TILE;
        best[m] = key_global[(size_t)(a0 + r) * stride + b0 + s];
    }
    if (threadIdx.x < 2 * TILE) {
        const int side = threadIdx.x / TILE, x = (side ? b0 : a0) + threadIdx.x % TILE;
        p_shared[side][threadIdx.x % TILE] = x <= n ? dims_global[x] : 0;
    }
    __syncthreads();  // both final tiles and the dimensions are staged

    for (int t = 0; t < 2 * TILE - 1; ++t) {
        #pragma unroll
        for (int m = 0; m < CELLS_PER_THREAD; ++m) {
            const int e = threadIdx.x + m * SWEEP_THREADS, r = e / TILE, s = e % TILE;
            const int final_step = TILE - 1 - r + s;
            if (final_step < t || b0 + s > n) continue;  // finished, or past the chain
            const u32 p_a = p_shared[0][r], p_b_shifted = p_shared[1][s] << SPLIT_BITS;
            if (t > 0) {
                // The cell of column s on anti-diagonal t - 1 is in row
                // c = 64 - t + s, below r.
                const int c_col = TILE - t + s;
                if (c_col < TILE)
                    best[m] = min_key(
                        best[m],
                        candidate(tiles.left[r][c_col],
                                  right_key(tiles.cell[c_col][s]),
                                  p_a * p_shared[0][c_col], p_b_shifted));
                // The cell of row r on anti-diagonal t - 1 is in column
                // c = t - 64 + r, left of s.
                const int c_row = t - TILE + r;
                if (c_row >= 0)
                    best[m] = min_key(
                        best[m],
                        candidate(left_key(tiles.cell[r][c_row], b0 + c_row),
                                  tiles.right[c_row][s],
                                  p_a * p_shared[1][c_row], p_b_shifted));
            }
            // a single matrix (b = a + 1, only when D = 1) costs nothing
            if (final_step == t)
                tiles.cell[r][s] = a0 + r + 1 == b0 + s ? 0 : best[m];
        }
        __syncthreads();  // anti-diagonal t is written before step t + 1 reads it
    }

    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        if (b0 + s <= n)
            key_global[(size_t)(a0 + r) * stride + b0 + s] = tiles.cell[r][s];
    }
}
// ANCHOR_END: wavefront

// Block diagonal 0: one block per tile I, the upper triangle of block (I, I) on its own,
// diagonal by diagonal (e = b - a = 1 .. 63), 16 threads splitting the candidates of a cell
// and reducing them with shuffles. (A candidate here needs two cells of the block itself, so
// the wavefront kernel's push does not apply; this kernel runs once per solve.)
extern "C" __global__ void __launch_bounds__(SWEEP_THREADS)
cmm_tiled_diagonal_blocks_u64(const u32* __restrict__ dims_global, u64* key_global,
                              int n, int stride)
{
    extern __shared__ u64 dynamic_shared[];
    SweepTiles& tiles = *reinterpret_cast<SweepTiles*>(dynamic_shared);
    __shared__ u32 p_shared[TILE];

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int a0 = blockIdx.x * TILE;
    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) tiles.cell[e / TILE][e % TILE] = NO_KEY;
    if (threadIdx.x < TILE) p_shared[threadIdx.x] = a0 + threadIdx.x <= n ? dims_global[a0 + threadIdx.x] : 0;
    __syncthreads();

    const int slot = threadIdx.x / THREADS_PER_CELL, lane = threadIdx.x % THREADS_PER_CELL;
    for (int e = 1; e < TILE; ++e) {
        const int r = slot, s = slot + e;  // cell (r, s) of local diagonal e
        const bool real_cell = s < TILE && a0 + s <= n;
        u64 best = NO_KEY;
        if (real_cell && e > 1) {
            const u32 p_a = p_shared[r], p_b_shifted = p_shared[s] << SPLIT_BITS;
            for (int c = r + 1 + lane; c < s; c += THREADS_PER_CELL)
                best = min_key(best, candidate(left_key(tiles.cell[r][c], a0 + c), right_key(tiles.cell[c][s]),
                                               p_a * p_shared[c], p_b_shifted));
        }
        best = cell_group_min(best);
        if (real_cell && lane == 0) tiles.cell[r][s] = e == 1 ? 0 : best;
        __syncthreads();  // diagonal e is written before diagonal e + 1 reads it
    }

    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        if (r < s && a0 + s <= n) key_global[(size_t)(a0 + r) * stride + a0 + s] = tiles.cell[r][s];
    }
}


// The sweep of cmm_tiled_wavefront_u64 with less work per step. The same push, but with
// half the threads and twice the cells each (cell (r, s) with r = x / 64 + 8 m, s = x % 64),
// so that what the cells of one thread share is loaded once: at step t their column
// candidates all go through c = 64 - t + s, the same finished cell (c, s) and the same
// p[c]. What does not change with the step (rows, final steps, p[a], p[b] << 16) is
// computed before the 127 steps. Cells past the chain (b > n) are swept like the others
// and never stored: they only feed cells further right in their own row, also past it.
#define LEAN_THREADS 512
extern "C" __global__ void __launch_bounds__(LEAN_THREADS)
cmm_tiled_wavefront_lean_u64(const u32* __restrict__ dims_global, u64* key_global,
                             int n, int stride, int D)
{
    extern __shared__ u64 dynamic_shared[];
    SweepTiles& tiles = *reinterpret_cast<SweepTiles*>(dynamic_shared);
    __shared__ u32 p_shared[2][TILE];
    constexpr int CELLS = TILE * TILE / LEAN_THREADS;  // 8 cells per thread
    constexpr int ROWS_PER_PASS = LEAN_THREADS / TILE;  // 8

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    const int a0 = I * TILE, b0 = J * TILE;
    for (int e = threadIdx.x; e < TILE * TILE; e += LEAN_THREADS) {
        const int r = e / TILE, s = e % TILE;
        const u64 key_a_c = key_global[(size_t)(a0 + r) * stride + a0 + s];
        tiles.left[r][s] = left_key(key_a_c, a0 + s);
        tiles.right[r][s] = right_key(key_global[(size_t)(b0 + r) * stride + b0 + s]);
    }
    const int s = threadIdx.x % TILE, r0 = threadIdx.x / TILE;
    u64 best[CELLS];
    for (int m = 0; m < CELLS; ++m)
        best[m] = key_global[(size_t)(a0 + r0 + ROWS_PER_PASS * m) * stride + b0 + s];
    if (threadIdx.x < 2 * TILE) {
        const int side = threadIdx.x / TILE, x = (side ? b0 : a0) + threadIdx.x % TILE;
        p_shared[side][threadIdx.x % TILE] = x <= n ? dims_global[x] : 0;
    }
    __syncthreads();  // both final tiles and the dimensions are staged

    const u32 p_b_shifted = p_shared[1][s] << SPLIT_BITS;
    u32 p_a[CELLS];
    for (int m = 0; m < CELLS; ++m) p_a[m] = p_shared[0][r0 + ROWS_PER_PASS * m];
    // Step 0 finishes cell (63, 0) alone, which takes no candidate inside the block; when
    // D = 1 it is a single matrix (b = a + 1) and costs nothing.
    if (threadIdx.x == (TILE - 1 - ROWS_PER_PASS * (CELLS - 1)) * TILE)  // r0 = 7, s = 0
        tiles.cell[TILE - 1][0] = D == 1 ? 0 : best[CELLS - 1];
    __syncthreads();  // anti-diagonal 0 is written before step 1 reads it

    for (int t = 1; t < 2 * TILE - 1; ++t) {
        // The column candidates of all this thread's cells: c = 64 - t + s, in tile I.
        const bool column = t > s;
        const int c_col = TILE - t + s;
        u64 right_col = 0;
        u32 p_c_col = 0;
        if (column) {
            right_col = right_key(tiles.cell[c_col][s]);
            p_c_col = p_shared[0][c_col];
        }
        #pragma unroll
        for (int m = 0; m < CELLS; ++m) {
            const int r = r0 + ROWS_PER_PASS * m, final_step = TILE - 1 - r + s;
            if (t > final_step) continue;  // finished
            u64 b = best[m];
            if (column)
                b = min_key(b, candidate(tiles.left[r][c_col], right_col,
                                         p_a[m] * p_c_col, p_b_shifted));
            const int c_row = t - TILE + r;  // row candidate: c in tile J, left of s
            if (c_row >= 0)
                b = min_key(b, candidate(left_key(tiles.cell[r][c_row], b0 + c_row),
                                         tiles.right[c_row][s], p_a[m] * p_shared[1][c_row],
                                         p_b_shifted));
            best[m] = b;
            if (t == final_step) tiles.cell[r][s] = b;
        }
        __syncthreads();  // anti-diagonal t is written before step t + 1 reads it
    }

    for (int e = threadIdx.x; e < TILE * TILE; e += LEAN_THREADS) {
        const int r = e / TILE, s = e % TILE;
        if (b0 + s <= n)
            key_global[(size_t)(a0 + r) * stride + b0 + s] = tiles.cell[r][s];
    }
}

// ANCHOR: wavefront_u32
// The sweep of cmm_tiled_wavefront_u64 with 32-bit costs, for a chain whose bound
// the host has proved below 2^32 - 1: the three tiles hold costs (4 bytes, not 8),
// each cell keeps its best cost and split in two registers, and a candidate is a
// multiply-add, an add, a compare and two selects on 32-bit words instead of 64-bit
// keys. The order of the candidates makes the tie rule a choice of compare: a cell's
// column candidates come through c in tile I, smaller than every c it has seen
// (those of the tiles between, and of tile J) and decreasing with the step, so an
// equal cost takes the new c (<=); its row candidates come through c in tile J,
// larger than every c seen and increasing, so an equal cost keeps the old split (<).
// The cell's key is written back whole at the end.
struct SweepTilesU32 {
    u32 left[TILE][TILE];   // cost of block (I, I)
    u32 right[TILE][TILE];  // cost of block (J, J)
    u32 cell[TILE][TILE];   // costs of the block being computed
};

extern "C" __global__ void __launch_bounds__(SWEEP_THREADS)
cmm_tiled_wavefront_u32(const u32* __restrict__ dims_global, u64* key_global,
                        int n, int stride, int D)
{
    extern __shared__ u64 dynamic_shared[];
    SweepTilesU32& tiles = *reinterpret_cast<SweepTilesU32*>(dynamic_shared);
    __shared__ u32 p_shared[2][TILE];
    constexpr int CELLS_PER_THREAD = TILE * TILE / SWEEP_THREADS;  // 4
    constexpr int ROWS_PER_PASS = SWEEP_THREADS / TILE;             // 16

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    const int a0 = I * TILE, b0 = J * TILE;
    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        const u64 key_left = key_global[(size_t)(a0 + r) * stride + a0 + s];
        const u64 key_right = key_global[(size_t)(b0 + r) * stride + b0 + s];
        tiles.left[r][s] = (u32)(key_left >> SPLIT_BITS);
        tiles.right[r][s] = (u32)(key_right >> SPLIT_BITS);
    }
    // Thread x owns cells (x / 64 + 16 m, x % 64): a warp holds 32 cells of one row.
    const int s = threadIdx.x % TILE, r0 = threadIdx.x / TILE;
    u32 best[CELLS_PER_THREAD], split[CELLS_PER_THREAD];
    for (int m = 0; m < CELLS_PER_THREAD; ++m) {
        // The tiles between I and J left their minimum here (NO_KEY when D = 1).
        const int a = a0 + r0 + ROWS_PER_PASS * m;
        const u64 key = key_global[(size_t)a * stride + b0 + s];
        best[m] = (u32)(key >> SPLIT_BITS);
        split[m] = (u32)(key & 0xffff);
    }
    if (threadIdx.x < 2 * TILE) {
        const int side = threadIdx.x / TILE, x = (side ? b0 : a0) + threadIdx.x % TILE;
        p_shared[side][threadIdx.x % TILE] = x <= n ? dims_global[x] : 0;
    }
    __syncthreads();  // both final tiles and the dimensions are staged

    u32 p_a_times_p_b[CELLS_PER_THREAD];
    for (int m = 0; m < CELLS_PER_THREAD; ++m)
        p_a_times_p_b[m] = p_shared[0][r0 + ROWS_PER_PASS * m] * p_shared[1][s];
    // Step 0 finishes cell (63, 0) alone, which takes no candidate inside the
    // block; when D = 1 it is a single matrix (b = a + 1) and costs nothing.
    if (threadIdx.x == SWEEP_THREADS - TILE) {  // r0 = 15, s = 0: cell m = 3 is (63, 0)
        if (D == 1) {
            best[CELLS_PER_THREAD - 1] = 0;
            split[CELLS_PER_THREAD - 1] = 0;
        }
        tiles.cell[TILE - 1][0] = best[CELLS_PER_THREAD - 1];
    }
    __syncthreads();  // anti-diagonal 0 is written before step 1 reads it

    for (int t = 1; t < 2 * TILE - 1; ++t) {
        // The column candidates of all this thread's cells: c = 64 - t + s, in tile I.
        const bool column = t > s;
        const int c_col = TILE - t + s;
        u32 right_col = 0, p_c_col = 0;
        if (column) {
            right_col = tiles.cell[c_col][s];
            p_c_col = p_shared[0][c_col];
        }
        #pragma unroll
        for (int m = 0; m < CELLS_PER_THREAD; ++m) {
            const int r = r0 + ROWS_PER_PASS * m, final_step = TILE - 1 - r + s;
            if (t > final_step) continue;  // finished
            if (column) {
                const u32 cost =
                    p_a_times_p_b[m] * p_c_col + tiles.left[r][c_col] + right_col;
                const bool take = cost <= best[m];  // c below all seen: ties move
                best[m] = take ? cost : best[m];
                split[m] = take ? (u32)(a0 + c_col) : split[m];
            }
            const int c_row = t - TILE + r;  // row candidate: c in tile J, left of s
            if (c_row >= 0) {
                const u32 cost = p_a_times_p_b[m] * p_shared[1][c_row]
                                 + tiles.cell[r][c_row] + tiles.right[c_row][s];
                const bool take = cost < best[m];  // c larger than any seen: ties stay
                best[m] = take ? cost : best[m];
                split[m] = take ? (u32)(b0 + c_row) : split[m];
            }
            if (t == final_step) tiles.cell[r][s] = best[m];
        }
        __syncthreads();  // anti-diagonal t is written before step t + 1 reads it
    }

    for (int m = 0; m < CELLS_PER_THREAD; ++m) {
        const int r = r0 + ROWS_PER_PASS * m;
        if (b0 + s <= n)
            key_global[(size_t)(a0 + r) * stride + b0 + s] =
                (u64)best[m] << SPLIT_BITS | split[m];
    }
}
// ANCHOR_END: wavefront_u32

// ANCHOR: wavefront_ordered
// The 32-bit sweep with its cells dealt out in the order they finish. Cell (r, s) is
// final at step f = 63 - r + s and takes candidates only until then, but the sweeps
// above give each warp 32 cells of one row, whose final steps span 32 values: a warp
// keeps issuing all 126 steps while fewer and fewer of its cells have work. Here the
// 4096 cells are numbered by final step, latest first (anti-diagonal f = 126, then 125,
// ... 0; along one anti-diagonal by row), and warp w owns the 128 cells numbered
// 128 w .. 128 w + 127, lane l the cells 128 w + l + 32 m. A warp's cells then finish
// within a few steps of each other, and a warp whose cells are all final skips the rest
// of the sweep but for its barrier: the instructions issued per step follow the cells
// still open (about half of them on average) instead of all 4096. One warp's loads go
// along an anti-diagonal, 65 words apart: 32 banks (where its cells lie on one).
//
// A step moves the operands of a cell's column candidate (c = 64 - t + s) one place
// along a row and 64 along a column, and those of its row candidate (c = t - 64 + r)
// the other way, so each operand is a fixed per-cell offset plus 4 t or 256 t bytes;
// the split a candidate sets is recorded as the step, the same word for every cell, and
// turned into a point index after the sweep. The tie rule is the 32-bit sweep's: a
// column candidate (c decreasing, below all seen) takes an equal cost, a row candidate
// (c increasing, above all seen) does not; Hopper's DPX minimum gives the minimum and
// the comparison in one instruction. Shared memory: the three cost tiles of the 32-bit
// sweep and the splits, staged and written back whole rows at a time.
struct SweepTilesOrdered {
    u32 left[TILE][TILE];    // cost of block (I, I)
    u32 right[TILE][TILE];   // cost of block (J, J)
    u32 cell[TILE][TILE];    // costs of the block being computed
    unsigned short split[TILE][TILE];  // its splits (point indices, < 2^16)
};

// The cell numbered k in finishing order (latest first) of a side x side block: its row
// and column. Cell (r, s) finishes at step f = side - 1 - r + s.
__device__ __forceinline__ void ordered_cell(int side, int k, int& r, int& s)
{
    // Anti-diagonals f = 2 side - 2 .. side - 1 hold 1 .. side cells (rows 0 .. q,
    // where q = 2 side - 2 - f), side (side + 1) / 2 in all; f = side - 2 .. 0 hold
    // side - 1 .. 1 cells (rows side - 1 - f .. side - 1). q = the triangular root.
    const int upper = side * (side + 1) / 2;
    int q, rest;
    if (k < upper) {
        q = (int)((sqrtf(8.0f * k + 1.0f) - 1.0f) * 0.5f);
        while ((q + 1) * (q + 2) / 2 <= k) ++q;   // float rounding, either way
        while (q * (q + 1) / 2 > k) --q;
        rest = k - q * (q + 1) / 2;               // position along f = 2 side - 2 - q
        r = rest;
        s = rest + (side - 1 - q);                // s - r = f - (side - 1)
    } else {
        const int back = side * side - 1 - k;     // counted from the last cell
        q = (int)((sqrtf(8.0f * back + 1.0f) - 1.0f) * 0.5f);
        while ((q + 1) * (q + 2) / 2 <= back) ++q;
        while (q * (q + 1) / 2 > back) --q;
        rest = back - q * (q + 1) / 2;            // f = q has q + 1 cells
        s = q - rest;                             // along f by row: s = 0 .. q
        r = s + (side - 1 - q);
    }
}

extern "C" __global__ void __launch_bounds__(SWEEP_THREADS)
cmm_tiled_wavefront_ordered_u32(const u32* __restrict__ dims_global, u64* key_global,
                                int n, int stride, int D)
{
    extern __shared__ u64 dynamic_shared[];
    SweepTilesOrdered& tiles = *reinterpret_cast<SweepTilesOrdered*>(dynamic_shared);
    __shared__ u32 p_shared[2][TILE];
    constexpr int CELLS = TILE * TILE / SWEEP_THREADS;  // 4
    const u32* left = &tiles.left[0][0];
    const u32* right = &tiles.right[0][0];
    u32* cell = &tiles.cell[0][0];

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    const int a0 = I * TILE, b0 = J * TILE;
    // Whole rows: coalesced. The block's own cells bring the minimum over the tiles
    // between I and J (NO_KEY when D = 1).
    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        const u64 key_left = key_global[(size_t)(a0 + r) * stride + a0 + s];
        const u64 key_right = key_global[(size_t)(b0 + r) * stride + b0 + s];
        tiles.left[r][s] = (u32)(key_left >> SPLIT_BITS);
        tiles.right[r][s] = (u32)(key_right >> SPLIT_BITS);
        const u64 key = key_global[(size_t)(a0 + r) * stride + b0 + s];
        tiles.cell[r][s] = (u32)(key >> SPLIT_BITS);
        tiles.split[r][s] = (unsigned short)(key & 0xffff);
    }
    if (threadIdx.x < 2 * TILE) {
        const int side = threadIdx.x / TILE, x = (side ? b0 : a0) + threadIdx.x % TILE;
        p_shared[side][threadIdx.x % TILE] = x <= n ? dims_global[x] : 0;
    }
    // Step 0 finishes cell (63, 0) alone, which takes no candidate inside the block;
    // when D = 1 it is a single matrix (b = a + 1) and costs nothing.
    __syncthreads();
    if (threadIdx.x == 0 && D == 1) {
        tiles.cell[TILE - 1][0] = 0;
        tiles.split[TILE - 1][0] = 0;
    }

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Per cell: its row r and column s, its cost, and `how` it got its split: the step
    // t of the column candidate that set it, 256 + t for a row candidate, or 512 + the
    // split staged from the min-plus kernel (t and 256 + t are the same word for every
    // cell of a step; the point index is worked out once, after the sweep). The
    // operands of step t are at byte offsets that move by 4 t or 256 t from five
    // per-cell offsets fixed before the sweep, so a step needs one add per operand:
    //   p[c], column candidate (c = 64 - t + s):  4 s + 256 - 4 t       in p_shared[0]
    //   T[a][c] in block (I, I):                 4 (64 r + s) + 256 - 4 t
    //   T[c][b], this block:                     4 (65 s) + 16384 - 256 t
    //   p[c], row candidate (c = t - 64 + r):    4 r - 256 + 4 t        in p_shared[1]
    //   T[a][c], this block:                     4 (65 r) - 256 + 4 t
    //   T[c][b] in block (J, J):                 4 (64 r + s) - 16384 + 256 t
    int row[CELLS], col[CELLS];
    u32 best[CELLS], how[CELLS], p_a_times_p_b[CELLS];
    __syncthreads();  // tiles, dimensions and the single matrix are in place
    #pragma unroll
    for (int m = 0; m < CELLS; ++m) {
        ordered_cell(TILE, warp * 32 * CELLS + lane + 32 * m, row[m], col[m]);
        best[m] = tiles.cell[row[m]][col[m]];
        how[m] = 512u + tiles.split[row[m]][col[m]];
        p_a_times_p_b[m] = p_shared[0][row[m]] * p_shared[1][col[m]];
    }
    // Lane 0's first cell finishes last of the warp's 128.
    const int warp_last_step = __shfl_sync(0xffffffffu, TILE - 1 - row[0] + col[0], 0);
    const char* left_bytes = reinterpret_cast<const char*>(left);
    const char* right_bytes = reinterpret_cast<const char*>(right);
    char* cell_bytes = reinterpret_cast<char*>(cell);
    const char* p_col_bytes = reinterpret_cast<const char*>(p_shared[0]);
    const char* p_row_bytes = reinterpret_cast<const char*>(p_shared[1]);
    int at4[CELLS], r65x4[CELLS], s65x4[CELLS], r4[CELLS], s4[CELLS], f4[CELLS];
    #pragma unroll
    for (int m = 0; m < CELLS; ++m) {
        at4[m] = 4 * (row[m] * TILE + col[m]);
        r65x4[m] = 4 * (TILE + 1) * row[m];
        s65x4[m] = 4 * (TILE + 1) * col[m];
        r4[m] = 4 * row[m];
        s4[m] = 4 * col[m];
        f4[m] = 4 * (TILE - 1 - row[m] + col[m]);
        // Opaque to the compiler, which would otherwise recompute them from r and s at
        // every step (a multiply-add each) rather than hold them in registers.
        asm("" : "+r"(at4[m]), "+r"(r65x4[m]), "+r"(s65x4[m]), "+r"(r4[m]), "+r"(s4[m]),
                 "+r"(f4[m]));
    }
    #define OPERAND(base, offset) (*reinterpret_cast<const u32*>((base) + (offset)))

    for (int t = 1; t < 2 * TILE - 1; ++t) {
        if (t <= warp_last_step) {
            const u32 by_column = t, by_row = 256 + t;
            const int t4 = 4 * t, t256 = 256 * t;
            #pragma unroll
            for (int m = 0; m < CELLS; ++m) {
                if (t4 > f4[m]) continue;  // final: nothing more to take
                bool take, keep;
                if (t4 > s4[m]) {
                    // c = 64 - t + s, in tile I below r: T[a][c] in block (I, I),
                    // T[c][b] the cell of column s finished at step t - 1
                    const u32 cost =
                        p_a_times_p_b[m] * OPERAND(p_col_bytes, s4[m] - t4 + 256)
                        + OPERAND(left_bytes, at4[m] - t4 + 256)
                        + OPERAND(cell_bytes, s65x4[m] - t256 + 16384);
                    best[m] = __vibmin_u32(cost, best[m], &take);  // cost <= best
                    how[m] = take ? by_column : how[m];
                }
                if (t4 + r4[m] >= 256) {
                    // c = t - 64 + r, in tile J left of s: T[a][c] the cell of row r
                    // finished at step t - 1, T[c][b] in block (J, J)
                    const u32 cost =
                        p_a_times_p_b[m] * OPERAND(p_row_bytes, r4[m] + t4 - 256)
                        + OPERAND(cell_bytes, r65x4[m] + t4 - 256)
                        + OPERAND(right_bytes, at4[m] + t256 - 16384);
                    best[m] = __vibmin_u32(best[m], cost, &keep);  // best <= cost
                    how[m] = keep ? how[m] : by_row;
                }
                if (t4 == f4[m]) *reinterpret_cast<u32*>(cell_bytes + at4[m]) = best[m];
            }
        }
        __syncthreads();  // anti-diagonal t is written before step t + 1 reads it
    }
    #undef OPERAND

    // Splits are point indices (< 2^16): the column candidate of step t went through
    // c = a0 + 64 - t + s, the row candidate through c = b0 + t - 64 + r.
    #pragma unroll
    for (int m = 0; m < CELLS; ++m) {
        const u32 h = how[m];
        const int split = h >= 512 ? (int)h - 512
                          : h >= 256 ? b0 + (int)h - 256 - TILE + row[m]
                                     : a0 + TILE - (int)h + col[m];
        tiles.split[row[m]][col[m]] = (unsigned short)split;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        if (b0 + s <= n)
            key_global[(size_t)(a0 + r) * stride + b0 + s] =
                (u64)tiles.cell[r][s] << SPLIT_BITS | tiles.split[r][s];
    }
}
// ANCHOR_END: wavefront_ordered

// ANCHOR: wavefront_quadrants
// The 32-bit sweep cut into quadrants, so that most candidates are taken in bulk and
// only a short wavefront remains. Cut the block's 64 x 64 cells into four 32 x 32
// quadrants: bottom-left BL (rows 32..63, columns 0..31), top-left TL, bottom-right BR,
// top-right TR. A cell depends on the cells below it and to its left, so BL depends on
// nothing in the block; TL on BL (through c in rows 32..63) and on itself; BR on BL
// (through c in columns 0..31) and on itself; TR on BR, TL and itself. Hence five
// phases, a barrier apart:
//   sweep BL;  min-plus TL <- BL and BR <- BL;  sweep TL and BR together;
//   min-plus TR <- BR and TR <- TL;  sweep TR.
// Each sweep is the push of the sweeps above over 32 x 32 cells (2 x 32 - 1 = 63 steps,
// one cell per thread and quadrant), and each min-plus phase gives every thread the 32
// or 64 candidates of its cell through the finished quadrants, with no barrier between.
// 3 x 63 = 189 dependent steps instead of 127, but a step now holds at most two cells
// per thread instead of four, and half the candidates (those through the other
// quadrants) are out of the steps. Within a quadrant the threads own their cells in the
// order the cells finish, as in cmm_tiled_wavefront_ordered_u32, so warps retire.
//
// Ties: a column candidate goes through c in tile I, below every c of the tiles between
// and of tile J; the column candidates of a cell arrive in decreasing c (the min-plus
// phases count c down, the sweeps push c = 32 - t + s), so an equal cost takes the new
// c. Row candidates (c in tile J, above all others) arrive in increasing c, so an equal
// cost keeps the old split. Rows are padded to 66 costs: a warp's cells lie along an
// anti-diagonal, so its sweep loads are 67 words apart (32 banks, where they lie on
// one), and its min-plus loads down a column of tile I are 66 apart (2 lanes per bank).
#define QUAD 32
#define QUAD_ROW (TILE + 2)
// A step loads both candidates of every cell of an open warp at once, whether they
// exist at that step or not (one that does not is then discarded): its operands lie up
// to 31 places outside the quadrant, so the arrays have that much slack around them,
// zeroed, inside the block's shared memory.
#define QUAD_SLACK 32
struct SweepTilesQuadrants {
    u32 p[2][QUAD_SLACK + TILE + QUAD_SLACK];  // p of tile I and of tile J, with slack
    u32 slack_low[QUAD_SLACK];
    u32 left[TILE][QUAD_ROW];   // cost of block (I, I)
    u32 right[TILE][QUAD_ROW];  // cost of block (J, J)
    // between right and cell, so that no discarded load of either reaches a cell of
    // the other that may be written in the same step
    u32 slack_mid[QUAD_SLACK][QUAD_ROW];
    u32 cell[TILE][QUAD_ROW];   // costs of the block, each written once it is final
    u32 slack_high[QUAD_SLACK][QUAD_ROW];
};

// The quadrants, by their first row and column in the block.
#define QUAD_BL 0
#define QUAD_TL 1
#define QUAD_BR 2
#define QUAD_TR 3
__device__ __forceinline__ int quad_row0(int q)
{
    return (q == QUAD_BL || q == QUAD_BR) ? QUAD : 0;
}
__device__ __forceinline__ int quad_col0(int q)
{
    return (q == QUAD_BR || q == QUAD_TR) ? QUAD : 0;
}

// The state of one thread: its cell (r_local, s_local) in every quadrant.
struct QuadrantCells {
    int r_local, s_local, final_step;  // final_step = 31 - r_local + s_local
    int warp_last_step;                // the latest final step among the warp's cells
    u32 best[4], split[4], p_a_times_p_b[4];
};

// A 32-bit load from a shared-memory address (the address as a 32-bit register).
__device__ __forceinline__ u32 load_shared(u32 address)
{
    u32 value;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(value) : "r"(address) : "memory");
    return value;
}

// Sweeps the quadrants Q_FIRST .. Q_FIRST + COUNT - 1 (BL, TL with BR, TR). Template
// arguments, so that every index into the thread's arrays is a constant (registers).
// At step t a cell's column candidate is c = 32 - t + s below it in the quadrant's
// rows, its row candidate c = t - 32 + r left of it: each operand is at a fixed place
// of the thread's, moved by t or by 66 t words, the same move for every thread.
template <int Q_FIRST, int COUNT>
__device__ __forceinline__ void sweep_quadrants(SweepTilesQuadrants& tiles,
                                                QuadrantCells& me, int a0, int b0)
{
    const int rl = me.r_local, sl = me.s_local;
    // Step 0: local cell (31, 0) of each quadrant takes no candidate inside it.
    if (rl == QUAD - 1 && sl == 0)
        #pragma unroll
        for (int k = 0; k < COUNT; ++k) {
            const int q = Q_FIRST + k;
            tiles.cell[quad_row0(q) + rl][quad_col0(q) + sl] = me.best[q];
        }
    __syncthreads();
    // The operands of each candidate at step 0, moved by 4 t or 264 t bytes at step t:
    // shared-memory addresses kept in registers, so that a load costs one add.
    const u32 base = (u32)__cvta_generic_to_shared(&tiles);
    u32 col_p[COUNT], col_left[COUNT], col_cell[COUNT];
    u32 row_p[COUNT], row_cell[COUNT], row_right[COUNT];
    u32* mine[COUNT];
    #pragma unroll
    for (int k = 0; k < COUNT; ++k) {
        const int q = Q_FIRST + k;
        const int r0 = quad_row0(q), s0 = quad_col0(q);
        const int r = r0 + rl, s = s0 + sl;
        const int c_col = r0 + QUAD + sl, c_row = s0 - QUAD + rl;
        const u32* at = reinterpret_cast<const u32*>(&tiles);
        col_p[k] = base + 4 * (u32)(&tiles.p[0][QUAD_SLACK + c_col] - at);
        col_left[k] = base + 4 * (u32)(&tiles.left[r][0] + c_col - at);
        col_cell[k] = base + 4 * (u32)(&tiles.cell[0][0] + c_col * QUAD_ROW + s - at);
        row_p[k] = base + 4 * (u32)(&tiles.p[1][QUAD_SLACK + c_row] - at);
        row_cell[k] = base + 4 * (u32)(&tiles.cell[r][0] + c_row - at);
        row_right[k] = base + 4 * (u32)(&tiles.right[0][0] + c_row * QUAD_ROW + s - at);
        mine[k] = &tiles.cell[r][s];
        // Opaque to the compiler, which would otherwise work them out again every step.
        asm volatile("" : "+r"(col_p[k]), "+r"(col_left[k]), "+r"(col_cell[k]),
                     "+r"(row_p[k]), "+r"(row_cell[k]), "+r"(row_right[k]));
    }
    for (int t = 1; t < 2 * QUAD - 1; ++t) {
        if (t <= me.warp_last_step) {  // the same for the whole warp
            // A candidate that does not exist at this step costs 2^32 - 1, above every
            // real cost (the host's bound), so it never wins.
            const bool open = t <= me.final_step;
            const bool col_ok = open && t > sl, row_ok = open && t + rl >= QUAD;
            const u32 word_t = 4 * t, row_t = 4 * QUAD_ROW * t;
            #pragma unroll
            for (int k = 0; k < COUNT; ++k) {
                const int q = Q_FIRST + k;
                const int r0 = quad_row0(q), s0 = quad_col0(q);
                u32 cost_col = me.p_a_times_p_b[q] * load_shared(col_p[k] - word_t)
                               + load_shared(col_left[k] - word_t)
                               + load_shared(col_cell[k] - row_t);
                u32 cost_row = me.p_a_times_p_b[q] * load_shared(row_p[k] + word_t)
                               + load_shared(row_cell[k] + word_t)
                               + load_shared(row_right[k] + row_t);
                cost_col = col_ok ? cost_col : 0xffffffffu;
                cost_row = row_ok ? cost_row : 0xffffffffu;
                bool take, keep;
                me.best[q] = __vibmin_u32(cost_col, me.best[q], &take);
                me.split[q] = take ? (u32)(a0 + r0 + QUAD + sl - t) : me.split[q];
                me.best[q] = __vibmin_u32(me.best[q], cost_row, &keep);
                me.split[q] = keep ? me.split[q] : (u32)(b0 + s0 - QUAD + rl + t);
                if (t == me.final_step) *mine[k] = me.best[q];
            }
        }
        __syncthreads();  // local anti-diagonal t is written before step t + 1 reads it
    }
}

// Quadrant q's cell takes the column candidates c = 63 down to 32 (tile I, through the
// finished cells (c, s) of the quadrant below).
template <int q>
__device__ __forceinline__ void column_products(SweepTilesQuadrants& tiles,
                                                QuadrantCells& me, int a0)
{
    constexpr int c_low = QUAD, c_high = TILE;
    const int r = quad_row0(q) + me.r_local, s = quad_col0(q) + me.s_local;
    u32 best = me.best[q], split = me.split[q];
    #pragma unroll 8
    for (int c = c_high - 1; c >= c_low; --c) {
        const u32 cost = me.p_a_times_p_b[q] * tiles.p[0][QUAD_SLACK + c]
                         + tiles.left[r][c]
                         + tiles.cell[c][s];
        bool take;
        best = __vibmin_u32(cost, best, &take);  // cost <= best: ties take the new c
        split = take ? (u32)(a0 + c) : split;
    }
    me.best[q] = best;
    me.split[q] = split;
}

// Quadrant q's cell takes the row candidates c = 0 .. 31 (tile J, through the finished
// cells (r, c) of the quadrant to its left).
template <int q>
__device__ __forceinline__ void row_products(SweepTilesQuadrants& tiles,
                                             QuadrantCells& me, int b0)
{
    constexpr int c_low = 0, c_high = QUAD;
    const int r = quad_row0(q) + me.r_local, s = quad_col0(q) + me.s_local;
    u32 best = me.best[q], split = me.split[q];
    #pragma unroll 8
    for (int c = c_low; c < c_high; ++c) {
        const u32 cost = me.p_a_times_p_b[q] * tiles.p[1][QUAD_SLACK + c]
                         + tiles.cell[r][c]
                         + tiles.right[c][s];
        bool keep;
        best = __vibmin_u32(best, cost, &keep);  // best <= cost: ties keep the old c
        split = keep ? split : (u32)(b0 + c);
    }
    me.best[q] = best;
    me.split[q] = split;
}

extern "C" __global__ void __launch_bounds__(SWEEP_THREADS)
cmm_tiled_wavefront_quadrants_u32(const u32* __restrict__ dims_global, u64* key_global,
                                  int n, int stride, int D)
{
    extern __shared__ u64 dynamic_shared[];
    SweepTilesQuadrants& tiles =
        *reinterpret_cast<SweepTilesQuadrants*>(dynamic_shared);

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    const int a0 = I * TILE, b0 = J * TILE;
    for (int e = threadIdx.x; e < TILE * TILE; e += SWEEP_THREADS) {
        const int r = e / TILE, s = e % TILE;
        const u64 key_left = key_global[(size_t)(a0 + r) * stride + a0 + s];
        const u64 key_right = key_global[(size_t)(b0 + r) * stride + b0 + s];
        tiles.left[r][s] = (u32)(key_left >> SPLIT_BITS);
        tiles.right[r][s] = (u32)(key_right >> SPLIT_BITS);
    }
    constexpr int P_ROW = QUAD_SLACK + TILE + QUAD_SLACK;
    for (int e = threadIdx.x; e < 2 * P_ROW; e += SWEEP_THREADS) {
        const int side = e / P_ROW, i = e % P_ROW - QUAD_SLACK;
        const int x = (side ? b0 : a0) + i;
        const bool real = i >= 0 && i < TILE && x <= n;
        tiles.p[side][i + QUAD_SLACK] = real ? dims_global[x] : 0;
    }
    for (int e = threadIdx.x; e < QUAD_SLACK * QUAD_ROW; e += SWEEP_THREADS) {
        tiles.slack_mid[e / QUAD_ROW][e % QUAD_ROW] = 0;
        tiles.slack_high[e / QUAD_ROW][e % QUAD_ROW] = 0;
    }
    if (threadIdx.x < QUAD_SLACK) tiles.slack_low[threadIdx.x] = 0;
    QuadrantCells me;
    ordered_cell(QUAD, threadIdx.x, me.r_local, me.s_local);
    me.final_step = QUAD - 1 - me.r_local + me.s_local;
    // Lane 0 holds the warp's first cell in finishing order, the last to finish.
    me.warp_last_step = __shfl_sync(0xffffffffu, me.final_step, 0);
    #pragma unroll
    for (int q = 0; q < 4; ++q) {
        // The minimum over the tiles between I and J (NO_KEY when D = 1): whole key.
        const int r = quad_row0(q) + me.r_local, s = quad_col0(q) + me.s_local;
        const u64 key = key_global[(size_t)(a0 + r) * stride + b0 + s];
        me.best[q] = (u32)(key >> SPLIT_BITS);
        me.split[q] = (u32)(key & 0xffff);
    }
    // Cell (63, 0), BL's local (31, 0): when D = 1 a single matrix, costing nothing.
    if (D == 1 && me.r_local == QUAD - 1 && me.s_local == 0) {
        me.best[QUAD_BL] = 0;
        me.split[QUAD_BL] = 0;
    }
    __syncthreads();  // tiles and dimensions are staged
    #pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int r = quad_row0(q) + me.r_local, s = quad_col0(q) + me.s_local;
        me.p_a_times_p_b[q] = tiles.p[0][QUAD_SLACK + r] * tiles.p[1][QUAD_SLACK + s];
    }

    sweep_quadrants<QUAD_BL, 1>(tiles, me, a0, b0);
    // BL is final (the sweep ends with a barrier).
    column_products<QUAD_TL>(tiles, me, a0);  // c in BL's rows
    row_products<QUAD_BR>(tiles, me, b0);     // c in BL's columns
    sweep_quadrants<QUAD_TL, 2>(tiles, me, a0, b0);  // TL and BR together
    column_products<QUAD_TR>(tiles, me, a0);  // c in BR's rows
    row_products<QUAD_TR>(tiles, me, b0);     // c in TL's columns
    sweep_quadrants<QUAD_TR, 1>(tiles, me, a0, b0);

    #pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int r = quad_row0(q) + me.r_local, s = quad_col0(q) + me.s_local;
        if (b0 + s <= n)
            key_global[(size_t)(a0 + r) * stride + b0 + s] =
                (u64)me.best[q] << SPLIT_BITS | me.split[q];
    }
}
// ANCHOR_END: wavefront_quadrants
