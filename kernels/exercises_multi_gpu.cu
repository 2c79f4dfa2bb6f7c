// Exercise 8.5 of the chapter "Memory across GPUs": the peer copy with eight 16-byte
// loads in flight per thread, first as a reader might write it, then as it must be
// written. `cargo run --release --example exercises -- 8.5` runs the first through the
// chapter's check (`--solution`: the second), and `tests/gpu/gpu_exercises.rs` shows that
// the first fails the check and the second passes it. Both run on one GPU: source and
// destination may be on the same device or on a peer, the kernel does not care.
//
// Both kernels: parameters (src, dst, bytes), any 1D grid of 256-thread blocks; the
// grid strides over the buffer. cuMemAlloc'd pointers are 256-byte aligned.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;
#define IN_FLIGHT 8

// ANCHOR: peer_copy_round
// One round of the grid-stride loop at float4 i: the IN_FLIGHT float4s i, i + stride,
// ..., i + (IN_FLIGHT - 1) stride, all loaded before the first is stored.
__device__ __forceinline__ void copy_round(const void* src, void* dst, u64 i,
                                           u64 stride) {
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    float4 in_flight[IN_FLIGHT];
#pragma unroll
    for (int k = 0; k < IN_FLIGHT; ++k) in_flight[k] = src_vec[i + k * stride];
#pragma unroll
    for (int k = 0; k < IN_FLIGHT; ++k) dst_vec[i + k * stride] = in_flight[k];
}
// ANCHOR_END: peer_copy_round

// ANCHOR: peer_copy_exercise
// Copies `bytes` bytes from src to dst, IN_FLIGHT float4 loads issued before their
// stores in every round of the grid-stride loop.
extern "C" __global__ void peer_copy_exercise(const void* __restrict__ src,
                                              void* __restrict__ dst, u64 bytes) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 n_vec = bytes / 16;
    for (u64 i = first; i + (IN_FLIGHT - 1) * stride < n_vec; i += IN_FLIGHT * stride) {
        copy_round(src, dst, i, stride);
    }
}
// ANCHOR_END: peer_copy_exercise

// ANCHOR: peer_copy_solution
// The same rounds, then what they leave: fewer than IN_FLIGHT strides of float4s, one
// at a time, and the last bytes % 16 bytes, one byte per thread of the first threads.
extern "C" __global__ void peer_copy_solution(const void* __restrict__ src,
                                              void* __restrict__ dst, u64 bytes) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    const u64 n_vec = bytes / 16;
    u64 i = first;
    for (; i + (IN_FLIGHT - 1) * stride < n_vec; i += IN_FLIGHT * stride) {
        copy_round(src, dst, i, stride);
    }
    // Fewer than IN_FLIGHT strides left: one float4 at a time.
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    for (; i < n_vec; i += stride) dst_vec[i] = src_vec[i];
    const u64 tail = n_vec * 16 + first;
    if (tail < bytes) {
        static_cast<unsigned char*>(dst)[tail] =
            static_cast<const unsigned char*>(src)[tail];
    }
}
// ANCHOR_END: peer_copy_solution
