// Kernels of the chapter "Measuring a GPU": the copy that defines the bandwidth ceiling every
// later chapter is measured against, and the empty kernel that measures what a launch costs.
//
// Compiled at run time by NVRTC (no standard headers), so sizes are `unsigned long long`.

// ANCHOR: copy
// Copies n floats from src to dst (both in global memory). Each thread moves 16 bytes
// per access (one float4, the widest load a thread can issue), and issues four
// independent loads before the first store, so each thread keeps 64 bytes in flight:
// memory latency is hidden by loads in flight, and a full SM of threads with one load
// each is not quite enough on HBM3. Consecutive threads touch consecutive float4s, so
// each warp access is 512 contiguous bytes. The grid strides over the array, so any
// grid size covers any n. cudaMalloc'd pointers are 256-byte aligned, so the float4
// view is aligned; the n % 4 tail is copied one float at a time.
//
// Launch: any 1D grid; blocks of 256 threads. Parameters: (src, dst, n).
extern "C" __global__ void copy_f32(const float* __restrict__ src,
                                    float* __restrict__ dst,
                                    unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long first =
        (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;

    const unsigned long long n_vec = n / 4;
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    unsigned long long i = first;
    // Four loads in flight per thread, then four stores.
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
    // What is left of the float4 part: fewer than four strides.
    for (; i < n_vec; i += stride) {
        dst_vec[i] = src_vec[i];
    }
    // The last n % 4 elements (at most 3), one per thread of the first threads.
    const unsigned long long tail = n_vec * 4 + first;
    if (tail < n) {
        dst[tail] = src[tail];
    }
}
// ANCHOR_END: copy

// ANCHOR: empty
// Does nothing: timing many of these back to back measures the cost of a launch itself.
extern "C" __global__ void empty() {}
// ANCHOR_END: empty
