// Kernels of the chapter "Memory across GPUs": a copy whose source or destination may be another
// GPU's memory (reached through peer access over NVLink or PCIe), and a chase that measures
// how long one load of that memory takes.
//
// Compiled at run time by NVRTC (no standard headers), so sizes are `unsigned long long`.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;

// Loads each thread issues before its first store: 8 float4, 128 bytes a thread, 256 KiB an SM
// of 2048 threads. By Little's law a path needs bandwidth x latency bytes in flight; a peer load
// takes longer than a load of the GPU's own memory, and with this many loads outstanding a few
// SMs already hold that much (the chapter's exercise counts them), so the whole grid has margin.
#define PEER_LOADS 8

// ANCHOR: peer_copy
// Copies `bytes` bytes from src to dst, either of which may live on another GPU: a
// pointer to a peer's memory is dereferenced like any other once peer access is enabled
// (one address space for every GPU of the process). Consecutive threads move
// consecutive 16-byte pieces (a warp moves 512 contiguous bytes per access), each
// thread issues PEER_LOADS loads before its first store, and the grid strides over the
// buffer, so any grid covers any size. cuMemAlloc'd pointers are 256-byte aligned; the
// last bytes % 16 bytes are copied one byte per thread.
//
// Launch: any 1D grid; blocks of 256 threads. Parameters: (src, dst, bytes).
extern "C" __global__ void peer_copy(const void* __restrict__ src,
                                     void* __restrict__ dst,
                                     u64 bytes) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 n_vec = bytes / 16;
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    u64 i = first;
    for (; i + (PEER_LOADS - 1) * stride < n_vec; i += PEER_LOADS * stride) {
        // In registers: every load is issued before any store.
        float4 in_flight[PEER_LOADS];
#pragma unroll
        for (int k = 0; k < PEER_LOADS; ++k) in_flight[k] = src_vec[i + k * stride];
#pragma unroll
        for (int k = 0; k < PEER_LOADS; ++k) dst_vec[i + k * stride] = in_flight[k];
    }
    // Fewer than PEER_LOADS strides left.
    for (; i < n_vec; i += stride) dst_vec[i] = src_vec[i];
    const u64 tail = n_vec * 16 + first;  // at most 15 bytes, one per thread
    if (tail < bytes) {
        static_cast<unsigned char*>(dst)[tail] =
            static_cast<const unsigned char*>(src)[tail];
    }
}
// ANCHOR_END: peer_copy

// ANCHOR: peer_chase
// One thread follows a chain of indices: each load's address is the value the previous
// load returned, so no two loads overlap and the time per step is the latency of one
// load. `next` may be a peer's memory; the walk starts at *position and leaves its end
// there.
extern "C" __global__ void peer_chase(const unsigned* next,
                                      unsigned* position,
                                      u64 steps) {
    unsigned p = *position;
    for (u64 s = 0; s < steps; ++s) p = next[p];
    *position = p;
}
// ANCHOR_END: peer_chase
