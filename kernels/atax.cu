// ATAX, y = A^T (A x), with A an m x n row-major matrix: every kernel of the chapter "ATAX".
// Each kernel is a template over the element type T; the `extern "C"` entry points at the end
// give each instance a name the host can look up (`..._f32`, `..._f64`).
// Indices into A are computed in `unsigned long long`: m * n passes 2^32 at 65536 x 65536.
// Needs: compute capability 7.0 (__nanosleep in the grid barrier). The cluster-fused kernels
// need 9.0 and exist only where the file is compiled for 9.0 or newer (__CUDA_ARCH__ >= 900).

typedef unsigned long long u64;

// ANCHOR: baseline
// Kernel 1 of the slides: one thread per row. Lane i walks row i, so at each step the
// 32 lanes of a warp read 32 elements that lie a whole row apart: 32 sectors per
// request.
template <typename T>
__device__ void tmp_thread_per_row(const T* a, const T* x, T* tmp, unsigned m,
                                   unsigned n) {
    unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    const T* a_row = a + (u64)row * n;
    T sum = 0;
    for (unsigned j = 0; j < n; ++j) sum += a_row[j] * x[j];
    tmp[row] = sum;
}

// Kernel 2 of the slides: one thread per column. At each step the lanes read 32
// neighbours of one row: coalesced.
template <typename T>
__device__ void y_thread_per_col(const T* a, const T* tmp, T* y, unsigned m,
                                 unsigned n) {
    unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= n) return;
    T sum = 0;
    for (unsigned i = 0; i < m; ++i) sum += a[(u64)i * n + col] * tmp[i];
    y[col] = sum;
}
// ANCHOR_END: baseline

// ANCHOR: x_const
// x in constant memory: every lane of a warp reads the same x[j] at the same step, the
// one access pattern the constant cache serves in a single transaction. 64 KB is all a
// module may declare, so one buffer holds either 16384 floats or 8192 doubles.
union XConst {
    float f32[16384];
    double f64[8192];
};
__constant__ XConst x_const;

__device__ inline float x_const_at(float*, unsigned j) { return x_const.f32[j]; }
__device__ inline double x_const_at(double*, unsigned j) { return x_const.f64[j]; }

template <typename T>
__device__ void tmp_thread_per_row_x_const(const T* a, T* tmp, unsigned m, unsigned n) {
    unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    const T* a_row = a + (u64)row * n;
    T sum = 0;
    for (unsigned j = 0; j < n; ++j) sum += a_row[j] * x_const_at((T*)0, j);
    tmp[row] = sum;
}
// ANCHOR_END: x_const

// ANCHOR: transposed
// at = A^T (n x m), through a padded 32 x 33 shared tile so that both the read of A and
// the write of at are coalesced. Block (32, 8); each thread moves 4 elements.
template <typename T>
__device__ void transpose_tile_shared(const T* a, T* at, unsigned m, unsigned n) {
    __shared__ T tile_shared[32][33];
    unsigned col = blockIdx.x * 32 + threadIdx.x;
    unsigned row0 = blockIdx.y * 32;
    for (unsigned k = threadIdx.y; k < 32; k += 8) {
        unsigned row = row0 + k;
        if (row < m && col < n) tile_shared[k][threadIdx.x] = a[(u64)row * n + col];
    }
    __syncthreads();  // the whole tile is loaded before any thread reads a column of it
    unsigned out_col = row0 + threadIdx.x;  // a row index of A is a column index of at
    for (unsigned k = threadIdx.y; k < 32; k += 8) {
        unsigned out_row = blockIdx.x * 32 + k;
        if (out_row < n && out_col < m)
            at[(u64)out_row * m + out_col] = tile_shared[threadIdx.x][k];
    }
}

// Kernel 1 on the transposed matrix: one thread per row of A is one thread per column
// of at, so the lanes read neighbours: coalesced.
template <typename T>
__device__ void tmp_from_transposed(const T* at, const T* x, T* tmp, unsigned m,
                                    unsigned n) {
    unsigned row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    T sum = 0;
    for (unsigned j = 0; j < n; ++j) sum += at[(u64)j * m + row] * x[j];
    tmp[row] = sum;
}
// ANCHOR_END: transposed

// ANCHOR: warp_per_row
// The access fix without a transpose: one warp per row, the lanes read 32 neighbours at
// each step, and a shuffle reduction adds the 32 partial sums.
template <typename T>
__device__ T warp_sum(T v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;  // the full sum is in lane 0
}

template <typename T>
__device__ void tmp_warp_per_row(const T* a, const T* x, T* tmp, unsigned m,
                                 unsigned n) {
    unsigned lane = threadIdx.x % 32;
    unsigned row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    // the whole warp leaves together: row is the same for all lanes
    if (row >= m) return;
    const T* a_row = a + (u64)row * n;
    T sum = 0;
    for (unsigned j = lane; j < n; j += 32) sum += a_row[j] * x[j];
    sum = warp_sum(sum);
    if (lane == 0) tmp[row] = sum;
}
// ANCHOR_END: warp_per_row

// ANCHOR: tiled
// Shared-memory tiling, block (32, 8), 32 rows per block. Each step stages a 32 x 32
// tile of A (read coalesced, row by row) and 32 elements of x; thread (tx, ty) then
// adds row tx times columns 4ty..4ty+3 of the tile. The padding (33) makes the
// column-wise reads conflict-free.
template <typename T>
__device__ void tmp_tile_shared(const T* a, const T* x, T* tmp, unsigned m,
                                unsigned n) {
    __shared__ T a_tile_shared[32][33];
    __shared__ T x_tile_shared[32];
    __shared__ T partial_shared[8][33];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned row0 = blockIdx.x * 32;
    T partial = 0;
    for (unsigned col0 = 0; col0 < n; col0 += 32) {
        for (unsigned k = ty; k < 32; k += 8) {
            unsigned row = row0 + k, col = col0 + tx;
            a_tile_shared[k][tx] = (row < m && col < n) ? a[(u64)row * n + col] : T(0);
        }
        if (ty == 0) x_tile_shared[tx] = (col0 + tx < n) ? x[col0 + tx] : T(0);
        __syncthreads();  // tile and x slice complete before they are read
        for (unsigned q = 0; q < 4; ++q)
            partial += a_tile_shared[tx][4 * ty + q] * x_tile_shared[4 * ty + q];
        // every thread is done with the tile before the next one overwrites it
        __syncthreads();
    }
    partial_shared[ty][tx] = partial;
    // all eight partial sums of each row are stored before they are added
    __syncthreads();
    if (ty == 0 && row0 + tx < m) {
        T sum = 0;
        for (unsigned k = 0; k < 8; ++k) sum += partial_shared[k][tx];
        tmp[row0 + tx] = sum;
    }
}

// Kernel 2 tiled the same way: block (32, 8), 32 columns per block; each step stages 32
// elements of tmp, thread (tx, ty) adds rows ty, ty+8, ty+16, ty+24 of the
// step for column tx.
template <typename T>
__device__ void y_tile_shared(const T* a, const T* tmp, T* y, unsigned m, unsigned n) {
    __shared__ T tmp_tile_shared[32];
    __shared__ T partial_shared[8][33];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned col = blockIdx.x * 32 + tx;
    T partial = 0;
    for (unsigned row0 = 0; row0 < m; row0 += 32) {
        if (ty == 0) tmp_tile_shared[tx] = (row0 + tx < m) ? tmp[row0 + tx] : T(0);
        __syncthreads();  // the slice of tmp is complete before it is read
        if (col < n) {
            for (unsigned k = ty; k < 32; k += 8) {
                unsigned row = row0 + k;
                if (row < m) partial += a[(u64)row * n + col] * tmp_tile_shared[k];
            }
        }
        // every thread is done with the slice before the next one overwrites it
        __syncthreads();
    }
    partial_shared[ty][tx] = partial;
    // all eight partial sums of each column are stored before they are added
    __syncthreads();
    if (ty == 0 && col < n) {
        T sum = 0;
        for (unsigned k = 0; k < 8; ++k) sum += partial_shared[k][tx];
        y[col] = sum;
    }
}
// ANCHOR_END: tiled

// ANCHOR: fused
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
// reuses it and combines the y of its blocks another way.
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

template <typename T, int E, bool ADD = false>
__device__ void fused_rows(const T* __restrict__ a, const T* __restrict__ x,
                           T* partials, unsigned m, unsigned n) {
    unsigned t = threadIdx.x;
    T y_reg[E];  // element k: column t + k * blockDim.x
    fused_rows_to_registers<T, E>(a, x, y_reg, m, n);
    // ADD (the one-launch kernel with atomics): partials is y's accumulator, n long.
#pragma unroll
    for (int k = 0; k < E; ++k) {
        unsigned j = t + k * blockDim.x;
        if (j < n && ADD) atomicAdd(&partials[j], y_reg[k]);
        else if (j < n) partials[(u64)blockIdx.x * n + j] = y_reg[k];
    }
}

// y[j] = sum over b of partials[b][j], b in order. Block (32, 32): thread (tx, ty) adds
// rows ty, ty + 32, ... of column blockIdx.x * 32 + tx, then the 32 sums are
// added in ty order.
template <typename T>
__device__ void reduce_partials(const T* partials, T* y, unsigned blocks, unsigned n) {
    __shared__ T sums_shared[32][33];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned col = blockIdx.x * 32 + tx;
    T sum = 0;
    if (col < n)
        for (unsigned b = ty; b < blocks; b += 32) sum += partials[(u64)b * n + col];
    sums_shared[ty][tx] = sum;
    __syncthreads();  // all 32 sums of each column are stored before they are added
    if (ty == 0 && col < n) {
        T total = 0;
        for (unsigned k = 0; k < 32; ++k) total += sums_shared[k][tx];
        y[col] = total;
    }
}
// ANCHOR_END: fused

// ANCHOR: fused_wide
// The fused pass for rows longer than a block's registers hold (more than 16384
// floats): thread t keeps its E columns of y in registers, but not the row. Block b
// takes rows b, b + G, ... one at a time and reads each row twice: once from device
// memory for its dot product with x, and again, after tmp_i is known, for the update
// of y. The second read finds the row in L2 (G rows of at most 128 KB, about 17 MB),
// so device memory still sees A once; L2 serves it twice. Loads go 8 at a time to
// stay within the registers (64 a thread at 1024 threads) with E = 32.
template <typename T, int E, bool ADD = false>
__device__ void fused_rows_wide(const T* __restrict__ a, const T* __restrict__ x,
                                T* partials, unsigned m, unsigned n) {
    __shared__ T warp_sums_shared[32];
    __shared__ T row_sum_shared;
    unsigned t = threadIdx.x, lane = t % 32, warp = t / 32, warps = blockDim.x / 32;
    T y_reg[E];
#pragma unroll
    for (int k = 0; k < E; ++k) y_reg[k] = 0;
    for (unsigned row = blockIdx.x; row < m; row += gridDim.x) {
        const T* a_row = a + (u64)row * n;
        T dot = 0;
#pragma unroll 8
        for (int k = 0; k < E; ++k) {
            unsigned j = t + k * blockDim.x;
            if (j < n) dot += a_row[j] * __ldg(&x[j]);
        }
        dot = warp_sum(dot);
        if (lane == 0) warp_sums_shared[warp] = dot;
        __syncthreads();  // every warp's sum is stored before warp 0 adds them
        if (warp == 0) {
            T s = warp_sum(lane < warps ? warp_sums_shared[lane] : T(0));
            if (lane == 0) row_sum_shared = s;
        }
        __syncthreads();  // tmp_i is stored before anyone reads it
        // As in fused_rows: warp 0 rewrites row_sum_shared only after the next row's
        // first barrier, which every thread reaches after reading it here.
        const T tmp = row_sum_shared;
#pragma unroll
        for (int k = 0; k < E; ++k) {
            unsigned j = t + k * blockDim.x;
            if (j < n) y_reg[k] += a_row[j] * tmp;  // the row again, from L2
        }
    }
#pragma unroll
    for (int k = 0; k < E; ++k) {
        unsigned j = t + k * blockDim.x;
        if (j < n && ADD) atomicAdd(&partials[j], y_reg[k]);  // as in fused_rows
        else if (j < n) partials[(u64)blockIdx.x * n + j] = y_reg[k];
    }
}
// ANCHOR_END: fused_wide

// ANCHOR: fused_once
// One launch instead of two: the pass, a barrier across the whole grid, then every
// block adds a share of the partial rows. A grid barrier is only safe when every block
// of the grid is resident at once: the host launches these kernels with
// cuLaunchCooperativeKernel, which refuses a grid that does not fit. barrier[0] counts
// the blocks that arrived, barrier[1] is the generation; both start at 0, and the
// last block to arrive resets the count, so the same two words serve every launch.
__device__ void grid_barrier(unsigned* barrier) {
    __syncthreads();  // every thread of this block has written its partials
    if (threadIdx.x == 0) {
        volatile unsigned* generation = barrier + 1;
        const unsigned seen = *generation;
        __threadfence();  // this block's partials are visible before it arrives
        if (atomicAdd(barrier, 1u) == gridDim.x - 1) {
            atomicExch(barrier, 0u);  // the count is ready for the next barrier
            __threadfence();
            atomicAdd(barrier + 1, 1u);  // releases the blocks that wait below
        } else {
            while (*generation == seen) __nanosleep(32);
        }
        __threadfence();  // the other blocks' partials are read after the release
    }
    __syncthreads();  // no thread reads a partial before thread 0 saw the release
}

// y[j] = sum over b of partials[b][j], b in a fixed order, by the whole grid. Columns
// go 32 at a time (one warp-wide chunk): block b owns `per_block` consecutive chunks
// and gives each chunk `groups` warps; warp g of a chunk adds partial rows g,
// g + groups, ..., and warp 0 of the chunk adds the groups' sums in order. The order
// depends only on the grid and block shape, so the result does not depend on timing.
template <typename T>
__device__ void reduce_partials_in_grid(const T* partials, T* y, unsigned n) {
    __shared__ T sums_shared[32][33];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const unsigned warps = blockDim.x / 32, blocks = gridDim.x;
    const unsigned chunks = (n + 31) / 32;
    const unsigned per_block = (chunks + blocks - 1) / blocks;
    const unsigned groups = max(1u, warps / max(1u, per_block));
    const unsigned chunks_per_round = warps / groups;
    const unsigned rounds = (per_block + chunks_per_round - 1) / chunks_per_round;
    const unsigned g = warp % groups;
    for (unsigned r = 0; r < rounds; ++r) {
        const unsigned c = r * chunks_per_round + warp / groups;  // chunk in block
        const unsigned col = (blockIdx.x * per_block + c) * 32 + lane;
        const bool active =
            warp / groups < chunks_per_round && c < per_block && col < n;
        T sum = 0;
        if (active) {
#pragma unroll 4
            for (unsigned b = g; b < blocks; b += groups)
                sum += partials[(u64)b * n + col];
        }
        sums_shared[warp][lane] = sum;
        __syncthreads();  // every group's sum is stored before the first adds them
        if (active && g == 0) {
            T total = 0;
            for (unsigned k = 0; k < groups; ++k) total += sums_shared[warp + k][lane];
            y[col] = total;
        }
        __syncthreads();  // sums_shared is read before the next round rewrites it
    }
}

template <typename T, int E>
__device__ void fused_once(const T* a, const T* x, T* partials, T* y,
                           unsigned* barrier, unsigned m, unsigned n) {
    fused_rows<T, E>(a, x, partials, m, n);  // block b writes row b of partials
    grid_barrier(barrier);                   // every row of partials is written
    reduce_partials_in_grid<T>(partials, y, n);
}
// ANCHOR_END: fused_once

template <typename T, int E>
__device__ void fused_once_wide(const T* a, const T* x, T* partials, T* y,
                                unsigned* barrier, unsigned m, unsigned n) {
    fused_rows_wide<T, E>(a, x, partials, m, n);
    grid_barrier(barrier);
    reduce_partials_in_grid<T>(partials, y, n);
}

// ANCHOR: fused_atomic
// One ordinary launch, no barrier: every block adds its y into `acc` with atomics (acc
// is zero between launches), then counts itself done; the last block to finish copies
// acc to y and leaves acc and the count at zero for the next launch. No block waits
// for another, so the grid need not be resident at once. The order of the additions
// depends on timing: y may differ between launches in its last bits.
__device__ bool last_block_done(unsigned* count) {
    __shared__ bool last_shared;
    __threadfence();  // this thread's additions are done before its block counts itself
    __syncthreads();  // every thread of the block has fenced its additions
    if (threadIdx.x == 0) last_shared = atomicAdd(count, 1u) == gridDim.x - 1;
    __syncthreads();  // last_shared is written before anyone reads it
    return last_shared;
}

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

template <typename T, int E>
__device__ void fused_atomic(const T* a, const T* x, T* acc, T* y, unsigned* count,
                             unsigned m, unsigned n) {
    fused_rows<T, E, true>(a, x, acc, m, n);  // every block adds its y into acc
    if (last_block_done(count)) copy_and_clear(acc, y, count, n);
}
// ANCHOR_END: fused_atomic

template <typename T, int E>
__device__ void fused_atomic_wide(const T* a, const T* x, T* acc, T* y,
                                  unsigned* count, unsigned m, unsigned n) {
    fused_rows_wide<T, E, true>(a, x, acc, m, n);
    if (last_block_done(count)) copy_and_clear(acc, y, count, n);
}

// The atomic pass with its blocks grouped in thread-block clusters: the blocks of a
// cluster add their y together through distributed shared memory first, so that each
// column of the accumulator takes one atomic per cluster instead of one per block.
// Cluster barriers and `mapa` are PTX of sm_90; NVRTC ships no cooperative_groups
// header, so they are written in kernels/cluster.cuh, with the cluster's rank and size.
#include "cluster.cuh"

// The address of `local` (a variable in this block's shared memory) in the shared
// memory of block `rank` of the cluster, as a generic pointer: `mapa` without a state
// space maps generic to generic, so plain loads read the peer's copy.
template <typename T>
__device__ __forceinline__ const T* peer_shared(const T* local, unsigned rank) {
    u64 remote;
    asm("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(local), "r"(rank));
    return reinterpret_cast<const T*>(remote);
}

// The blocks' shared y: n elements of T in dynamic shared memory (the host sizes it).
// One untyped array, cast, because every instance of the template shares the name.
template <typename T>
__device__ __forceinline__ T* y_shared_of_block() {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    return reinterpret_cast<T*>(dynamic_shared);
}

// The most blocks a cluster of fused_cluster may have: the portable limit, which the
// host never exceeds (it tries 8, then 4, 2, 1).
constexpr unsigned MAX_CLUSTER_BLOCKS = 8;

// ANCHOR: fused_cluster
// Counts this cluster done; true in the block that counted the last of the `clusters`.
// Called by block 0 of the cluster right after a cluster barrier. Only thread 0
// fences: a fence is cumulative, it orders before the count every write thread 0 has
// observed, and the barrier's release and acquire made thread 0 observe every atomic
// addition of every thread of the cluster. One fence per cluster, where
// last_block_done takes one per thread.
__device__ bool last_cluster_done(unsigned* count, unsigned clusters) {
    __shared__ bool last_shared;
    if (threadIdx.x == 0) {
        __threadfence();  // the cluster's additions are visible before it counts itself
        last_shared = atomicAdd(count, 1u) == clusters - 1;
    }
    __syncthreads();  // last_shared is written before anyone reads it
    return last_shared;
}

// The pass of fused_rows, its y left in registers; block b of the cluster stores its y
// in its shared memory; after a cluster barrier, block r adds its share of the columns
// (the r-th of `blocks` consecutive ranges) over the cluster's blocks in rank order,
// reading the peers' shared memory, and adds each sum into `acc` with one atomic. A
// second barrier keeps every block (and its shared memory) alive until the peers have
// read it. The last cluster to finish copies acc to y and clears acc and the count, as
// in fused_atomic. Launch: a 1D grid of whole clusters of at most MAX_CLUSTER_BLOCKS
// blocks; blockDim.x a multiple of 32 with blockDim.x * E >= n; n * sizeof(T) bytes
// of dynamic shared memory.
template <typename T, int E>
__device__ void fused_cluster(const T* a, const T* x, T* acc, T* y, unsigned* count,
                              unsigned m, unsigned n) {
    T* y_shared = y_shared_of_block<T>();  // (n): this block's partial y
    const unsigned t = threadIdx.x;
    T y_reg[E];  // element k: column t + k * blockDim.x
    fused_rows_to_registers<T, E>(a, x, y_reg, m, n);
#pragma unroll
    for (int k = 0; k < E; ++k) {
        unsigned j = t + k * blockDim.x;
        if (j < n) y_shared[j] = y_reg[k];
    }
    cluster_sync();  // every block's y is in its shared memory before a peer reads it
    const unsigned rank = cluster_rank(), blocks = cluster_blocks();
    const unsigned share = (n + blocks - 1) / blocks;
    const unsigned end = min(n, (rank + 1) * share);
    for (unsigned j = rank * share + t; j < end; j += blockDim.x) {
        // All the cluster's loads are issued before the first addition waits on one.
        T part[MAX_CLUSTER_BLOCKS];
#pragma unroll
        for (unsigned b = 0; b < MAX_CLUSTER_BLOCKS; ++b)
            part[b] = b < blocks ? *peer_shared(&y_shared[j], b) : T(0);
        T sum = 0;
#pragma unroll
        for (unsigned b = 0; b < MAX_CLUSTER_BLOCKS; ++b)
            sum += part[b];  // in rank order, the same in every launch
        atomicAdd(&acc[j], sum);
    }
    // No block leaves while a peer may still read its shared memory; and block 0 has
    // seen every addition of the cluster when it counts the cluster done.
    cluster_sync();
    if (rank == 0 && last_cluster_done(count, gridDim.x / blocks))
        copy_and_clear(acc, y, count, n);
}
// ANCHOR_END: fused_cluster

// ANCHOR: split_rows
// y = A^T v with more warps per column: the slides' kernel 2 reads the same 32
// neighbours of a row per warp step (coalesced alike), but its grid is one thread per
// column, n / 32 warps in all. Here block (32, 8) owns 32 columns and one slice of
// `rows_per_slice` rows (blockIdx.y); warp ty adds rows ty, ty + 8, ... of the slice.
// The 8 warps' sums meet in shared memory and the block writes one row of `partials`
// (n elements per slice); reduce_partials adds the slices in order. The same kernel
// computes tmp = A x from the transposed matrix (A^T is n x m: a = at, rows = n).
template <typename T>
__device__ void y_split_rows(const T* a, const T* v, T* partials, unsigned m,
                             unsigned n, unsigned rows_per_slice) {
    __shared__ T sums_shared[8][33];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned col = blockIdx.x * 32 + tx;
    unsigned row0 = blockIdx.y * rows_per_slice;
    unsigned row1 = min(m, row0 + rows_per_slice);
    T sum = 0;
    if (col < n)
        for (unsigned i = row0 + ty; i < row1; i += 8)
            sum += a[(u64)i * n + col] * v[i];
    sums_shared[ty][tx] = sum;
    __syncthreads();  // all 8 warps' sums of a column are stored before they are added
    if (ty == 0 && col < n) {
        T total = 0;
        for (unsigned k = 0; k < 8; ++k) total += sums_shared[k][tx];
        partials[(u64)blockIdx.y * n + col] = total;
    }
}
// ANCHOR_END: split_rows

// The entry points share a handful of signatures: one macro per signature writes an entry
// point NAME_S that passes its parameters on to FN<T> (and to FN<T, E> for the fused ones).
#define ATAX_THREE_ARRAYS(NAME, FN, T, S)                                                                \
    extern "C" __global__ void NAME##_##S(const T* in0, const T* in1, T* out, unsigned m, unsigned n) {  \
        FN<T>(in0, in1, out, m, n);                                                                      \
    }
#define ATAX_TWO_ARRAYS(NAME, FN, T, S)                                                                  \
    extern "C" __global__ void NAME##_##S(const T* in, T* out, unsigned m, unsigned n) {                 \
        FN<T>(in, out, m, n);                                                                            \
    }
#define ATAX_ONE_LAUNCH(NAME, FN, T, S, E)                                                               \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                \
        NAME##_e##E##_##S(const T* a, const T* x, T* sums, T* y, unsigned* sync, unsigned m,            \
                          unsigned n) {                                                                 \
        FN<T, E>(a, x, sums, y, sync, m, n);                                                             \
    }

#define ATAX_ENTRY_POINTS(T, S)                                                                          \
    ATAX_THREE_ARRAYS(atax_tmp_thread_per_row, tmp_thread_per_row, T, S)                                 \
    ATAX_THREE_ARRAYS(atax_y_thread_per_col, y_thread_per_col, T, S)                                     \
    ATAX_TWO_ARRAYS(atax_tmp_thread_per_row_x_const, tmp_thread_per_row_x_const, T, S)                   \
    ATAX_TWO_ARRAYS(atax_transpose_tile_shared, transpose_tile_shared, T, S)                              \
    ATAX_THREE_ARRAYS(atax_tmp_from_transposed, tmp_from_transposed, T, S)                               \
    ATAX_THREE_ARRAYS(atax_tmp_warp_per_row, tmp_warp_per_row, T, S)                                     \
    ATAX_THREE_ARRAYS(atax_tmp_tile_shared, tmp_tile_shared, T, S)                                       \
    ATAX_THREE_ARRAYS(atax_y_tile_shared, y_tile_shared, T, S)                                           \
    ATAX_TWO_ARRAYS(atax_reduce_partials, reduce_partials, T, S)                                         \
    extern "C" __global__ void atax_y_split_rows_##S(const T* a, const T* v, T* partials, unsigned m,    \
                                                      unsigned n, unsigned rows_per_slice) {            \
        y_split_rows<T>(a, v, partials, m, n, rows_per_slice);                                           \
    }

#define ATAX_FUSED_ENTRY_POINT(T, S, E)                                                                  \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                \
        atax_fused_rows_e##E##_##S(const T* a, const T* x, T* partials, unsigned m, unsigned n) {       \
        fused_rows<T, E>(a, x, partials, m, n);                                                          \
    }

// The cluster kernels only where clusters exist: compiled for an older GPU, the file holds the
// others, and the host knows from AtaxFunction::needs that these are missing. (They stay in
// this file rather than one of their own: alone in a module, NVVM would move the fused pass's
// shared arrays into each kernel and schedule the pass differently.)
#if __CUDA_ARCH__ >= 900
#define ATAX_CLUSTER_ENTRY_POINT(T, S, E) ATAX_ONE_LAUNCH(atax_fused_cluster, fused_cluster, T, S, E)
#else
#define ATAX_CLUSTER_ENTRY_POINT(T, S, E)
#endif

#define ATAX_FUSED_ONCE_ENTRY_POINTS(T, S, E)                                                            \
    ATAX_ONE_LAUNCH(atax_fused_once, fused_once, T, S, E)                                                \
    ATAX_ONE_LAUNCH(atax_fused_atomic, fused_atomic, T, S, E)                                            \
    ATAX_CLUSTER_ENTRY_POINT(T, S, E)

#define ATAX_WIDE_ENTRY_POINTS(T, S, E)                                                                  \
    ATAX_ONE_LAUNCH(atax_fused_once_wide, fused_once_wide, T, S, E)                                      \
    ATAX_ONE_LAUNCH(atax_fused_atomic_wide, fused_atomic_wide, T, S, E)

ATAX_ENTRY_POINTS(float, f32)
ATAX_ENTRY_POINTS(double, f64)

// Columns per thread: a block of up to 1024 threads covers n <= 1024 E columns. Doubles take
// two registers each, so they stop at E = 8 (8192 columns) to stay within 64 registers a thread.
ATAX_FUSED_ENTRY_POINT(float, f32, 1)
ATAX_FUSED_ENTRY_POINT(float, f32, 2)
ATAX_FUSED_ENTRY_POINT(float, f32, 4)
ATAX_FUSED_ENTRY_POINT(float, f32, 8)
ATAX_FUSED_ENTRY_POINT(float, f32, 16)
ATAX_FUSED_ENTRY_POINT(double, f64, 1)
ATAX_FUSED_ENTRY_POINT(double, f64, 2)
ATAX_FUSED_ENTRY_POINT(double, f64, 4)
ATAX_FUSED_ENTRY_POINT(double, f64, 8)

// The one-launch passes (grid barrier, atomics, clusters and atomics): the same
// instances as fused_rows.
ATAX_FUSED_ONCE_ENTRY_POINTS(float, f32, 1)
ATAX_FUSED_ONCE_ENTRY_POINTS(float, f32, 2)
ATAX_FUSED_ONCE_ENTRY_POINTS(float, f32, 4)
ATAX_FUSED_ONCE_ENTRY_POINTS(float, f32, 8)
ATAX_FUSED_ONCE_ENTRY_POINTS(float, f32, 16)
ATAX_FUSED_ONCE_ENTRY_POINTS(double, f64, 1)
ATAX_FUSED_ONCE_ENTRY_POINTS(double, f64, 2)
ATAX_FUSED_ONCE_ENTRY_POINTS(double, f64, 4)
ATAX_FUSED_ONCE_ENTRY_POINTS(double, f64, 8)

// Rows beyond the register instances, in one launch only: each row read twice (the
// second time from L2), up to 1024 E columns (32768 floats, 16384 doubles).
ATAX_WIDE_ENTRY_POINTS(float, f32, 32)
ATAX_WIDE_ENTRY_POINTS(double, f64, 16)
