// Kernels of the chapter "Asynchronous memory on Hopper", section "The matrix multiply
// with cp.async stages": the warp-tiled FP32 multiplies (hopper_sgemm.cuh) whose slices
// reach shared memory through registers. They use no cp.async (their template's copy
// paths are discarded branches), so they run on every GPU the book supports, beside
// the kernels of hopper_sgemm.cu that need 8.0.
//
// Needs: compute capability 7.0 (warp-tiled loads and stores through registers only).

#include "cp_async.cuh"      // declares what the template's discarded copy paths name
#include "hopper_sgemm.cuh"  // the warp-tiled kernel

// Launch: grid (ceil(N / BN), ceil(M / 128)), 256 threads, dynamic shared memory
// STAGES * WarpTile<BK, BN>::STAGE * 4 bytes. Named sgemm_warp_<BN>_k<BK>, then _cp3
// (A and B by cp.async, 3 stages), _bcp (B by cp.async), _all (every warp multiplies).
#define SGEMM_WARP(name, blocks, BK, BN, STAGES, MODE, SKIP)                         \
    extern "C" __global__ void __launch_bounds__(256, blocks)                        \
        name(const float* a, const float* b, float* c, int M, int N, int K) {        \
        sgemm_warp<BK, BN, STAGES, MODE, SKIP>(a, b, c, M, N, K);                    \
    }
SGEMM_WARP(sgemm_warp_128_k8, 2, 8, 128, 2, WT_REGS, true)
SGEMM_WARP(sgemm_warp_256_k8, 1, 8, 256, 2, WT_REGS, true)
SGEMM_WARP(sgemm_warp_256_k16, 1, 16, 256, 2, WT_REGS, true)
SGEMM_WARP(sgemm_warp_256_k16_all, 1, 16, 256, 2, WT_REGS, false)
