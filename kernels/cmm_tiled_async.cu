// Chained matrix multiplication, tiled: the min-plus kernel with 32-bit costs, whose strips
// of the next slice are copied into shared memory with cp.async while the block works on this
// one. Every other kernel of the tiled program, and how they are launched, is in
// kernels/cmm_tiled.cu; what both files share in kernels/cmm_tiled.cuh.
// Needs: compute capability 8.0 (cp.async copies into shared memory).

#include "cmm_tiled.cuh"

// ANCHOR: minplus_u32
// The min-plus kernel with 32-bit costs, for a chain whose bound (n - 1) max(p)^3
// the host has proved below 2^32 - 1: every candidate is then the cost of one
// parenthesisation of a sub-chain, so no 32-bit sum wraps. Same grid, tiles and
// register tiling as cmm_tiled_minplus_u64; a cell keeps its best cost and its split
// in two registers instead of one 64-bit key, and a candidate costs a multiply-add,
// Hopper's DPX add-and-minimum (__viaddmin_u32: the add of the last term and the
// minimum in one instruction), and a compare and a select for the split. The c are
// taken in increasing order and the split moves only on a strictly smaller cost, so
// among equal costs the smallest split stays: the serial program's tie rule. The
// blocks meet in the same 64-bit atomicMin on cost << 16 | split.
//
// The strips of the next slice are on their way (cp.async, 16 bytes per copy, into a
// buffer of raw keys) while the block takes the candidates of this one, so the wait
// for L2 is off the block's path. Each thread turns the keys it copied itself into
// costs, so only its own copies need to have landed (cp.async.wait_all).
struct MinPlusTilesU32 {
    u64 raw[TILE * HALF + HALF * TILE];   // keys of the next slice: left strip, right
    u32 cost[TILE * HALF + HALF * TILE];  // their costs: left_shared, then right_shared
    u32 p_c[HALF];
};
#define MINPLUS_COPIES ((TILE * HALF + HALF * TILE) / 2 / THREADS)  // 16 B each: 8

__device__ __forceinline__ void copy_async_16(void* shared, const void* global)
{
    const u32 to = (u32)__cvta_generic_to_shared(shared);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global)
                 : "memory");
}

// Starts the copies of the strips of the slice from point c0 on: copy i of thread x
// takes keys 2 j and 2 j + 1 of the buffer, j = x + THREADS i.
__device__ __forceinline__ void minplus_fetch(MinPlusTilesU32& tiles,
                                              const u64* key_global, int stride,
                                              int a0, int b0, int c0)
{
    #pragma unroll
    for (int i = 0; i < MINPLUS_COPIES; ++i) {
        const int e = 2 * (threadIdx.x + THREADS * i);
        const u64* from;
        if (e < TILE * HALF) {  // left strip: row r, points c0 + cc
            const int r = e / HALF, cc = e % HALF;
            from = key_global + (size_t)(a0 + r) * stride + c0 + cc;
        } else {                // right strip: point c0 + cc, column s
            const int cc = (e - TILE * HALF) / TILE, s = (e - TILE * HALF) % TILE;
            from = key_global + (size_t)(c0 + cc) * stride + b0 + s;
        }
        copy_async_16(&tiles.raw[e], from);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits for this thread's copies and turns its keys into costs (key >> 16: every
// operand is a final cell below 2^32, the host's bound).
__device__ __forceinline__ void minplus_land(MinPlusTilesU32& tiles)
{
    asm volatile("cp.async.wait_all;" ::: "memory");
    #pragma unroll
    for (int i = 0; i < MINPLUS_COPIES; ++i) {
        const int e = 2 * (threadIdx.x + THREADS * i);
        tiles.cost[e] = (u32)(tiles.raw[e] >> SPLIT_BITS);
        tiles.cost[e + 1] = (u32)(tiles.raw[e + 1] >> SPLIT_BITS);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 2)
cmm_tiled_minplus_u32(const u32* __restrict__ dims_global, u64* key_global,
                      int n, int stride, int D, int chunk)
{
    extern __shared__ u64 dynamic_shared[];
    MinPlusTilesU32& tiles = *reinterpret_cast<MinPlusTilesU32*>(dynamic_shared);
    // cost(a, c): 64 rows a, 32 columns c; cost(c, b): 32 rows c, 64 columns b
    const u32 (&left_shared)[TILE][HALF] =
        *reinterpret_cast<const u32(*)[TILE][HALF]>(&tiles.cost[0]);
    const u32 (&right_shared)[HALF][TILE] =
        *reinterpret_cast<const u32(*)[HALF][TILE]>(&tiles.cost[TILE * HALF]);

    dims_global += chain_offset_dims(n);
    key_global += chain_offset_keys(stride);
    const int I = blockIdx.x, J = I + D;
    // Slices of HALF points c from tile I + 1 on: block y takes chunk of them.
    const int slice_first = chunk * blockIdx.y;
    const int slice_end = min(slice_first + chunk, (D - 1) * (TILE / HALF));
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const int a0 = I * TILE, b0 = J * TILE;

    u32 p_a[4], p_b[4], best[4][4], split[4][4];
    for (int m = 0; m < 4; ++m) {
        const int a = a0 + tr + 16 * m, b = b0 + tc + 16 * m;
        p_a[m] = a <= n ? dims_global[a] : 0;
        p_b[m] = b <= n ? dims_global[b] : 0;
        for (int q = 0; q < 4; ++q) {
            // If every candidate costs 2^32 - 1, the first c is the split: start there.
            best[m][q] = 0xffffffffu;
            split[m][q] = (u32)((I + 1) * TILE + slice_first * HALF);
        }
    }

    // The slice's first point c; p[c0 + x] rides in a register of thread x < 32.
    auto slice_c0 = [&](int slice) { return (I + 1) * TILE + slice * HALF; };
    u32 p_c_next = 0;
    if (slice_first < slice_end) {
        minplus_fetch(tiles, key_global, stride, a0, b0, slice_c0(slice_first));
        if (threadIdx.x < HALF)
            p_c_next = dims_global[slice_c0(slice_first) + threadIdx.x];
    }
    for (int slice = slice_first; slice < slice_end; ++slice) {
        const int c0 = slice_c0(slice);
        minplus_land(tiles);
        if (threadIdx.x < HALF) tiles.p_c[threadIdx.x] = p_c_next;
        // The costs are complete before anyone reads them, and every raw key has been
        // read before the next copies overwrite it.
        __syncthreads();
        if (slice + 1 < slice_end) {
            minplus_fetch(tiles, key_global, stride, a0, b0, slice_c0(slice + 1));
            if (threadIdx.x < HALF)
                p_c_next = dims_global[slice_c0(slice + 1) + threadIdx.x];
        }

        #pragma unroll 4
        for (int cc = 0; cc < HALF; ++cc) {
            const u32 p_c = tiles.p_c[cc], c = (u32)(c0 + cc);
            u32 left[4], right[4], p_a_times_p_c[4];
            for (int m = 0; m < 4; ++m) {
                left[m] = left_shared[tr + 16 * m][cc];
                p_a_times_p_c[m] = p_a[m] * p_c;
            }
            for (int q = 0; q < 4; ++q) right[q] = right_shared[cc][tc + 16 * q];
            for (int m = 0; m < 4; ++m)
                for (int q = 0; q < 4; ++q) {
                    // DPX: min(product + left + right, best) in one instruction; the
                    // split moves only if that lowered the best, so equal costs keep
                    // the smaller c
                    const u32 product_left = p_a_times_p_c[m] * p_b[q] + left[m];
                    const u32 next = __viaddmin_u32(product_left, right[q], best[m][q]);
                    split[m][q] = next != best[m][q] ? c : split[m][q];
                    best[m][q] = next;
                }
        }
        // everyone is done with the costs before the next slice's overwrite them
        __syncthreads();
    }

    for (int m = 0; m < 4; ++m)
        for (int q = 0; q < 4; ++q) {
            const int a = a0 + tr + 16 * m, b = b0 + tc + 16 * q;
            if (b <= n)
                atomicMin(&key_global[(size_t)a * stride + b],
                          (u64)best[m][q] << SPLIT_BITS | split[m][q]);
        }
}
// ANCHOR_END: minplus_u32
