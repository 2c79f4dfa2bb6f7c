// Kernels of the chapter "Asynchronous memory on Hopper", section "The matrix multiply
// with cp.async stages": row-major FP32 C = A * B (A is M x K, B is K x N), no tensor
// cores. The tiling chapter's step 6 (128 x 128 block tile, 8 x 8 results per thread in
// quadrants) with its loads replaced by cp.async copies STAGES slices ahead.
// Every kernel accepts any M, N, K >= 1: elements outside the matrices land in shared
// memory as zeros (cp.async zero-fill) and are never written back.
//
// Compiled at run time by NVRTC for compute_90 (cp.async is PTX of sm_80 and later).
// Needs: compute capability 8.0 (cp.async copies into shared memory).

#include "cp_async.cuh"      // the groups of copies: commit, wait
#include "hopper_sgemm.cuh"  // the zero-filling copies, the warp-tiled kernel

#define SG_BM 128
#define SG_BN 128
#define SG_BK 16
#define SG_THREADS 256
// A's tile is kept as it lies in global memory, (row, k); 4 floats of padding per row
// put the rows tr*4 and tr*4 + 4 that one warp reads 16 banks apart.
#define SG_A_LD (SG_BK + 4)
#define SG_A_FLOATS (SG_BM * SG_A_LD)
#define SG_B_FLOATS (SG_BK * SG_BN)
#define SG_STAGE_FLOATS (SG_A_FLOATS + SG_B_FLOATS)

// ANCHOR: sgemm_load
// Starts the copies of slice k0 (A: 128 rows x 16 k; B: 16 k x 128 columns) into one
// stage: each thread moves 2 groups of 4 floats of A (rows tid/4 and 64 + tid/4, k
// (tid%4)*4..) and 2 of B (k tid/32 and 8 + tid/32, columns (tid%32)*4..). With vec_a
// (K a multiple of 4: a group is 16-byte aligned and wholly in or out of range) a
// group is one 16-byte copy, otherwise four 4-byte copies, each checked on its own;
// B likewise with vec_b (N a multiple of 4). Same lanes, same sectors either way.
__device__ __forceinline__ void load_stage(float* stage, const float* __restrict__ a,
                                           const float* __restrict__ b, int M, int N,
                                           int K, int block_row, int block_col, int k0,
                                           bool vec_a, bool vec_b) {
    float* a_tile = stage;                // (row, k), row pitch SG_A_LD
    float* b_tile = stage + SG_A_FLOATS;  // (k, column), row pitch SG_BN
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        const int r = tid / 4 + 64 * j, kq = (tid % 4) * 4;
        const int row = block_row + r, k = k0 + kq;
        float* dst = &a_tile[r * SG_A_LD + kq];
        const float* src = a + (size_t)min(row, M - 1) * K + k;
        if (vec_a) {
            const bool ok = row < M && k < K;
            cp_async_16z(dst, ok ? src : a, ok);
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const bool ok = row < M && k + q < K;
                cp_async_4z(dst + q, ok ? src + q : a, ok);
            }
        }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        const int kk = tid / 32 + 8 * j, nq = (tid % 32) * 4;
        const int k = k0 + kk, col = block_col + nq;
        float* dst = &b_tile[kk * SG_BN + nq];
        const float* src = b + (size_t)min(k, K - 1) * N + col;
        if (vec_b) {
            const bool ok = k < K && col < N;
            cp_async_16z(dst, ok ? src : b, ok);
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const bool ok = k < K && col + q < N;
                cp_async_4z(dst + q, ok ? src + q : b, ok);
            }
        }
    }
}
// ANCHOR_END: sgemm_load

// ANCHOR: sgemm_compute
// One slice: thread (tr, tc) = (tid/16, tid%16) owns rows tr*4.. and 64+tr*4.., columns
// tc*4.. and 64+tc*4... Per 4 steps of k it reads its 8 rows of A as 8 float4 along k
// (two distinct addresses per warp, 16 banks apart) and per step 2 float4 of B (16
// consecutive float4 per warp): 4 shared reads per 64 multiply-adds, as in step 6.
// The loop over the 4 groups of k stays rolled: unrolled, ptxas hoists the next
// group's reads and spills past the 128 registers that 2 blocks per SM allow.
__device__ __forceinline__ void compute_stage(const float* stage, int tr, int tc,
                                              float (&acc)[8][8]) {
    const float* a_tile = stage;
    const float* b_tile = stage + SG_A_FLOATS;
#pragma unroll 1
    for (int kk = 0; kk < SG_BK; kk += 4) {
        float4 a4[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            int r = i < 4 ? tr * 4 + i : 64 + tr * 4 + (i - 4);
            a4[i] = *reinterpret_cast<const float4*>(&a_tile[r * SG_A_LD + kk]);
        }
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const float* b_at_k = &b_tile[(kk + q) * SG_BN];
            float4 b_lo = *reinterpret_cast<const float4*>(&b_at_k[tc * 4]);
            float4 b_hi = *reinterpret_cast<const float4*>(&b_at_k[64 + tc * 4]);
            float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w,
                           b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                float av = q == 0   ? a4[i].x
                           : q == 1 ? a4[i].y
                           : q == 2 ? a4[i].z
                                    : a4[i].w;
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av, bv[j], acc[i][j]);
            }
        }
    }
}
// ANCHOR_END: sgemm_compute

// ANCHOR: sgemm_pipeline
// STAGES - 1 slices are in flight while the block computes on one. Every thread commits
// one group per slice (empty past the end), so wait_group<STAGES - 2> always means
// "this thread's copies of slice s have landed"; the barrier after it extends that to
// the whole block, and also says that every thread has finished slice s - 1, whose
// stage the next copies overwrite. One barrier per slice.
template <int STAGES>
__device__ void sgemm_stages(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, int M, int N, int K) {
    extern __shared__ __align__(16) float stages[];  // (STAGES, SG_STAGE_FLOATS)
    const int block_row = blockIdx.y * SG_BM, block_col = blockIdx.x * SG_BN;
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;
    const int slices = (K + SG_BK - 1) / SG_BK;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    for (int s = 0; s < STAGES - 1; ++s) {  // the prologue
        if (s < slices)
            load_stage(stages + s * SG_STAGE_FLOATS, a, b, M, N, K, block_row,
                       block_col, s * SG_BK, vec_a, vec_b);
        cp_async_commit();
    }
    for (int s = 0; s < slices; ++s) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of slice s have landed
        __syncthreads();  // everyone's have; everyone is done with slice s - 1
        const int next = s + STAGES - 1;
        if (next < slices)
            load_stage(stages + (next % STAGES) * SG_STAGE_FLOATS, a, b, M, N, K,
                       block_row, block_col, next * SG_BK, vec_a, vec_b);
        cp_async_commit();
        compute_stage(stages + (s % STAGES) * SG_STAGE_FLOATS, tr, tc, acc);
    }
    cp_async_wait<0>();  // no copy outlives the block
    const bool vec_c = N % 4 == 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = block_row + (i < 4 ? tr * 4 + i : 64 + tr * 4 + (i - 4));
        if (row >= M) continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = block_col + h * 64 + tc * 4;
            float* out = c + (size_t)row * N + col;
            if (vec_c && col + 4 <= N) {
                *reinterpret_cast<float4*>(out) =
                    make_float4(acc[i][h * 4], acc[i][h * 4 + 1], acc[i][h * 4 + 2],
                                acc[i][h * 4 + 3]);
            } else {
                for (int j = 0; j < 4; ++j)
                    if (col + j < N) out[j] = acc[i][h * 4 + j];
            }
        }
    }
}
// ANCHOR_END: sgemm_pipeline

// Launch: grid (ceil(N / 128), ceil(M / 128)), 256 threads, dynamic shared memory
// STAGES * SG_STAGE_FLOATS * 4 bytes (18,432 per stage).
extern "C" __global__ void __launch_bounds__(SG_THREADS, 2)
sgemm_cp_async_2(const float* a, const float* b, float* c, int M, int N, int K) {
    sgemm_stages<2>(a, b, c, M, N, K);
}
extern "C" __global__ void __launch_bounds__(SG_THREADS, 2)
sgemm_cp_async_3(const float* a, const float* b, float* c, int M, int N, int K) {
    sgemm_stages<3>(a, b, c, M, N, K);
}
extern "C" __global__ void __launch_bounds__(SG_THREADS, 2)
sgemm_cp_async_4(const float* a, const float* b, float* c, int M, int N, int K) {
    sgemm_stages<4>(a, b, c, M, N, K);
}

// The warp-tiled kernels fed by cp.async (hopper_sgemm.cuh); those fed through registers
// alone are in hopper_sgemm_warp.cu.
// Launch: grid (ceil(N / BN), ceil(M / 128)), 256 threads, dynamic shared memory
// STAGES * WarpTile<BK, BN>::STAGE * 4 bytes. Named sgemm_warp_<BN>_k<BK>, then _cp3
// (A and B by cp.async, 3 stages), _bcp (B by cp.async), _all (every warp multiplies).
#define SGEMM_WARP(name, blocks, BK, BN, STAGES, MODE, SKIP)                         \
    extern "C" __global__ void __launch_bounds__(256, blocks)                        \
        name(const float* a, const float* b, float* c, int M, int N, int K) {        \
        sgemm_warp<BK, BN, STAGES, MODE, SKIP>(a, b, c, M, N, K);                    \
    }
SGEMM_WARP(sgemm_warp_128_k8_cp3, 2, 8, 128, 3, WT_ASYNC, true)
SGEMM_WARP(sgemm_warp_128_k8_bcp, 2, 8, 128, 2, WT_B_ASYNC, true)
SGEMM_WARP(sgemm_warp_256_k8_bcp, 1, 8, 256, 2, WT_B_ASYNC, true)
SGEMM_WARP(sgemm_warp_256_k16_bcp, 1, 16, 256, 2, WT_B_ASYNC, true)
