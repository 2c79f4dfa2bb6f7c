// Kernels of the chapter "Measuring a GPU": the copy that defines the bandwidth ceiling
// every later chapter is measured against, and the empty kernel that measures what a
// launch costs.
//
// Compiled at run time by NVRTC (no standard headers), so sizes are `unsigned long
// long`.
// Needs: compute capability 7.0 (nothing newer than Volta).

// ANCHOR: copy
// Copies n floats from src to dst (both in global memory). Each thread moves one
// float4 (16 bytes, the widest load a thread can issue), and the grid has one thread
// per float4: the block scheduler, not a loop, walks the array, so consecutive blocks
// sweep device memory in address order and each warp access is 512 contiguous bytes.
// Loads in flight come from the number of resident threads (2048 per SM), not from
// unrolling. On the H100 this reaches the driver's own cuMemcpyDtoD, where a
// grid-stride loop with four loads per thread stays below it (the chapter's summary
// measures both). cudaMalloc'd pointers are 256-byte aligned, so the float4 view is
// aligned; the n % 4 tail is copied one float at a time by the first threads.
//
// Launch: 1D grid of at least max(n / 4, 1) threads; blocks of 256 threads.
// Parameters: (src, dst, n).
extern "C" __global__ void copy_f32(const float* __restrict__ src,
                                    float* __restrict__ dst,
                                    unsigned long long n) {
    const unsigned long long i =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long n_vec = n / 4;
    if (i < n_vec) {
        reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src)[i];
    }
    const unsigned long long tail = n_vec * 4 + i;
    if (tail < n) {
        dst[tail] = src[tail];
    }
}
// ANCHOR_END: copy

// The same copy as a grid-stride loop over a grid of resident blocks only, four float4
// loads in flight per thread before the first store: the book's first copy kernel, kept
// to show what the loop costs. Launch: any 1D grid; blocks of 256 threads.
extern "C" __global__ void copy_f32_grid_stride(const float* __restrict__ src,
                                                float* __restrict__ dst,
                                                unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long first =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned long long n_vec = n / 4;
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    unsigned long long i = first;
    for (; i + 3 * stride < n_vec; i += 4 * stride) {
        const float4 a = src_vec[i];
        const float4 b = src_vec[i + stride];
        const float4 c = src_vec[i + 2 * stride];
        const float4 d = src_vec[i + 3 * stride];
        dst_vec[i] = a;
        dst_vec[i + stride] = b;
        dst_vec[i + 2 * stride] = c;
        dst_vec[i + 3 * stride] = d;
    }
    for (; i < n_vec; i += stride) {
        dst_vec[i] = src_vec[i];
    }
    const unsigned long long tail = n_vec * 4 + first;
    if (tail < n) {
        dst[tail] = src[tail];
    }
}

// ANCHOR: empty
// Does nothing: timing many of these back to back measures the cost of a launch itself.
extern "C" __global__ void empty() {}
// ANCHOR_END: empty

// ANCHOR: fma_peak
// The arithmetic ceiling: each thread runs eight independent multiply-add chains
// (enough independent work to keep the FMA pipes busy through their latency) `iters`
// times, in registers only. One FMA is two floating-point operations. seed[0..8] start
// the chains, seed[8] and seed[9] are the multiplier and the addend (chosen so the
// chains converge: no overflow, no denormals); every thread computes the same sum,
// which the host checks exactly (the CPU's fused multiply-add rounds like the GPU's).
//
// Launch: any 1D grid; parameters (seed, out, iters); out has one element per thread.
template <typename T>
__device__ void fma_chains(const T* __restrict__ seed, T* __restrict__ out, int iters) {
    T a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        a[k] = seed[k];
    }
    const T m = seed[8];
    const T c = seed[9];
    // Unrolled 16 times: 128 FMAs for every loop test and branch.
#pragma unroll 16
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            a[k] = fma(a[k], m, c);
        }
    }
    T sum = a[0];
#pragma unroll
    for (int k = 1; k < 8; ++k) {
        sum = sum + a[k];
    }
    out[(unsigned long long)blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

extern "C" __global__ void fma_peak_f32(const float* seed, float* out, int iters) {
    fma_chains<float>(seed, out, iters);
}

extern "C" __global__ void fma_peak_f64(const double* seed, double* out, int iters) {
    fma_chains<double>(seed, out, iters);
}
// ANCHOR_END: fma_peak

// ANCHOR: l2_read
// The L2 ceiling, inside one launch: the grid reads a buffer small enough to stay in L2
// `passes` times over, with 16-byte loads that skip L1 (`__ldcg`: cache in L2 only),
// four loads in flight per thread. A single short launch would measure the launch, not
// the cache. Each thread writes the sum of what it read, so no load can be dropped; the
// host checks every sum against the CPU's.
//
// Launch: any 1D grid; parameters (src, n4 = number of float4s, passes, out), one out
// per thread.
extern "C" __global__ void l2_read(const float4* __restrict__ src,
                                   unsigned long long n4, int passes,
                                   float* __restrict__ out) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long first =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int p = 0; p < passes; ++p) {
        unsigned long long i = first;
        for (; i + 3 * stride < n4; i += 4 * stride) {
            const float4 v0 = __ldcg(&src[i]);
            const float4 v1 = __ldcg(&src[i + stride]);
            const float4 v2 = __ldcg(&src[i + 2 * stride]);
            const float4 v3 = __ldcg(&src[i + 3 * stride]);
            acc[0] += (v0.x + v0.y) + (v0.z + v0.w);
            acc[1] += (v1.x + v1.y) + (v1.z + v1.w);
            acc[2] += (v2.x + v2.y) + (v2.z + v2.w);
            acc[3] += (v3.x + v3.y) + (v3.z + v3.w);
        }
        for (; i < n4; i += stride) {
            const float4 v = __ldcg(&src[i]);
            acc[0] += (v.x + v.y) + (v.z + v.w);
        }
    }
    out[first] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
// ANCHOR_END: l2_read

// ANCHOR: read_write
// The two halves of the copy, each alone: a read-only and a write-only stream, laid out
// as copy_f32 is (one thread per 16 bytes, the block scheduler walks the array), so
// that the three differ only in the traffic they put on the memory bus. A
// read-dominated kernel is measured against the read ceiling, not the copy's.
//
// read_u32: each thread loads one uint4 and XORs its four words; the block combines its
// threads' values (warp shuffles, then one shared word per warp) and one thread stores
// the block's XOR. The host XORs the per-block words and compares with the XOR of the
// data: exact, in any order. The stores are one word per 4096 bytes read. Launch: 1D
// grid of ceil(n_vec / 256) blocks of 256 threads; block_xor has one word per block.
// Parameters: (src, n_vec = number of uint4, block_xor).
extern "C" __global__ void read_u32(const uint4* __restrict__ src,
                                    unsigned long long n_vec,
                                    unsigned int* __restrict__ block_xor) {
    __shared__ unsigned int warp_xor[8];
    const unsigned long long i =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x = 0;
    if (i < n_vec) {
        const uint4 v = src[i];
        x = (v.x ^ v.y) ^ (v.z ^ v.w);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        x ^= __shfl_xor_sync(0xffffffffu, x, offset);
    }
    if (threadIdx.x % 32 == 0) {
        warp_xor[threadIdx.x / 32] = x;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int b = 0;
        for (int w = 0; w < blockDim.x / 32; ++w) {
            b ^= warp_xor[w];
        }
        block_xor[blockIdx.x] = b;
    }
}

// write_u32: each thread stores one uint4 whose words are their own indices plus
// `seed`, so the host can check every word exactly. Launch as copy_f32; parameters
// (dst, n_vec, seed).
extern "C" __global__ void write_u32(uint4* __restrict__ dst, unsigned long long n_vec,
                                     unsigned int seed) {
    const unsigned long long i =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_vec) {
        const unsigned int w = (unsigned int)(4 * i) + seed;
        dst[i] = make_uint4(w, w + 1, w + 2, w + 3);
    }
}
// ANCHOR_END: read_write

// ANCHOR: flush_read
// The L2 flush: reads a buffer twice the size of L2 that nothing writes after it is
// allocated. Every line an earlier kernel left dirty is evicted, and so written back,
// during the flush; every line the flush leaves in L2 is clean, so the timed kernel
// that follows pays for no write-back of someone else's data. A flush that writes (a
// memset) would leave L2 full of dirty lines instead. The one store is guarded by a
// value the data never takes (the buffer holds zeros, `never` is not zero), which the
// compiler cannot know, so no load is dropped. Launch as read_u32; parameters (src,
// n_vec, never, sink).
extern "C" __global__ void flush_read(const uint4* __restrict__ src,
                                      unsigned long long n_vec, unsigned int never,
                                      unsigned int* __restrict__ sink) {
    const unsigned long long i =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_vec) {
        const uint4 v = src[i];
        const unsigned int x = (v.x ^ v.y) ^ (v.z ^ v.w);
        if (x == never) {
            sink[0] = x;
        }
    }
}
// ANCHOR_END: flush_read
