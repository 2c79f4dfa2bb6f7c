// Exercise 1.4 of the chapter "Measuring a GPU": a copy with 16-byte accesses, first as
// a reader might write it, then as it must be written. `cargo run --release --example
// exercises -- 1.4` runs the first through the chapter's check (`--solution`: the
// second), and `tests/gpu/gpu_exercises.rs` shows that the first fails the check and the
// second passes it.
//
// Both kernels: parameters (src, dst, n), any 1D grid of 256-thread blocks; the grid
// strides over the array. cudaMalloc'd pointers are 256-byte aligned, so the float4
// views are aligned.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;

// ANCHOR: copy_vec4_loop
// The loop both kernels share: float4 i = first, first + stride, ... of the n / 4
// float4s that n floats fill, copied from src to dst one float4 (16 bytes) per access.
__device__ __forceinline__ void copy_float4s(const float* __restrict__ src,
                                             float* __restrict__ dst, u64 n, u64 first,
                                             u64 stride) {
    const float4* src_vec = reinterpret_cast<const float4*>(src);
    float4* dst_vec = reinterpret_cast<float4*>(dst);
    for (u64 i = first; i < n / 4; i += stride) {
        dst_vec[i] = src_vec[i];
    }
}
// ANCHOR_END: copy_vec4_loop

// ANCHOR: copy_vec4_exercise
// Copies n floats from src to dst, one float4 (16 bytes) per access.
extern "C" __global__ void copy_vec4_exercise(const float* __restrict__ src,
                                              float* __restrict__ dst, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    copy_float4s(src, dst, n, first, stride);
}
// ANCHOR_END: copy_vec4_exercise

// ANCHOR: copy_vec4_solution
// Copies n floats from src to dst, one float4 (16 bytes) per access, and the last n % 4
// floats, which do not fill a float4, one at a time.
extern "C" __global__ void copy_vec4_solution(const float* __restrict__ src,
                                              float* __restrict__ dst, u64 n) {
    const u64 stride = (u64)gridDim.x * blockDim.x;
    const u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    copy_float4s(src, dst, n, first, stride);
    // At most 3 floats are left: the first threads of the grid take one each.
    const u64 tail = n / 4 * 4 + first;
    if (tail < n) {
        dst[tail] = src[tail];
    }
}
// ANCHOR_END: copy_vec4_solution
