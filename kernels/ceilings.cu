// Kernels of the chapter "Measuring a GPU": the copy that defines the bandwidth ceiling every
// later chapter is measured against, and the empty kernel that measures what a launch costs.
//
// Compiled at run time by NVRTC (no standard headers), so sizes are `unsigned long long`.

// ANCHOR: copy
// Copies n floats from src to dst (both in global memory). Each thread moves 16 bytes per
// iteration (one float4), the widest load a thread can issue, and the grid strides over the
// array so any grid size covers any n. The base pointers come from cudaMalloc (256-byte
// aligned), so the float4 view is aligned; the n % 4 tail is copied one float at a time.
//
// Launch: any 1D grid; blocks of 256 threads. Parameters: (src, dst, n).
extern "C" __global__ void copy_f32(const float* __restrict__ src,
                                    float* __restrict__ dst,
                                    unsigned long long n) {
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;

    const unsigned long long n_vec = n / 4;
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    for (unsigned long long i = first; i < n_vec; i += stride) {
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
