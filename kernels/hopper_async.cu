// Kernels of the chapter "Asynchronous memory on Hopper": a streaming kernel whose
// loads are asynchronous copies into shared memory (cp.async) with 1 to 4 stages in
// flight per thread. The kernels of the L2 access-policy window, which any GPU runs, are
// in kernels/hopper_l2.cu.
//
// Compiled at run time by NVRTC for compute_90 (cp.async is PTX of sm_80 and later).
// Needs: compute capability 8.0 (cp.async copies into shared memory).

#include "cp_async.cuh"

// ANCHOR: stream_stages
// out[i] = a * in[i] over n4 float4s, grid-stride, each thread's loads issued STAGES
// float4s ahead through shared memory: STAGES copies of 16 bytes in flight per thread.
// Each thread reads back only the slots it filled itself, so no block barrier is
// needed: a thread's own wait_group makes its own copies visible to it. Launch: any 1D
// grid; dynamic shared memory STAGES * blockDim.x * 16 bytes.
template <int STAGES>
__device__ void stream_stages(const float4* __restrict__ in, float4* __restrict__ out,
                              long long n4, float a) {
    extern __shared__ float4 stage[];  // (STAGES, blockDim.x)
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float4* mine = stage + threadIdx.x;
    for (int s = 0; s < STAGES; ++s) {  // the prologue: STAGES loads in flight
        const long long i = first + s * stride;
        if (i < n4) cp_async16(mine + s * blockDim.x, in + i);
        cp_async_commit();
    }
    for (long long k = 0;; ++k) {
        const long long i = first + k * stride;
        if (i >= n4) break;
        cp_async_wait<STAGES - 1>();  // the oldest group (element i) has landed
        float4* slot = mine + (k % STAGES) * blockDim.x;
        const float4 v = *slot;
        out[i] = make_float4(a * v.x, a * v.y, a * v.z, a * v.w);
        const long long j = i + STAGES * stride;  // refill the slot just read
        if (j < n4) cp_async16(slot, in + j);
        cp_async_commit();
    }
    cp_async_wait<0>();
}
// ANCHOR_END: stream_stages

// One entry point per number of stages: stream_cp_async_1 .. stream_cp_async_4.
#define STREAM_CP_ASYNC(STAGES)                                                        \
    extern "C" __global__ void stream_cp_async_##STAGES(const float4* in, float4* out, \
                                                        long long n4, float a) {       \
        stream_stages<STAGES>(in, out, n4, a);                                         \
    }
STREAM_CP_ASYNC(1)
STREAM_CP_ASYNC(2)
STREAM_CP_ASYNC(3)
STREAM_CP_ASYNC(4)
