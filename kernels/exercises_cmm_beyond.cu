// Exercise 6.3 of the chapter "Beyond the paper": a warp per cell, its 32 lanes
// splitting the k range, first with a mistake in how the lanes' answers are combined,
// then with the chapter's 64-bit key. `cargo run --release --example exercises -- 6.3`
// runs the first through the chapter's check (`--solution`: the second), and
// `tests/gpu/gpu_exercises.rs` shows that the first fails the check and the second passes
// it.
//
// Both kernels: launched once per diagonal d = 1 .. n-1, in order, on one stream, with
// grid (n - d, 1, 1) (block b computes cell i = b + 1) and block (32, 1, 1); the main
// diagonal is zero before the first launch. Parameters (dims, cost, split, n, d):
// p[0..n], then the (n + 1)^2 costs and splits of the row-major table, M[i][j] at (n +
// 1) i + j. The host proves that every cost is below 2^48 and that n < 2^16, so a cost
// and a split fit one 64-bit key.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;
typedef unsigned int u32;

#define FULL_WARP_MASK 0xffffffffu

// ANCHOR: cmm_warp_split_cost
// The cost of M[i][j] split after matrix k, i <= k < j, in the row-major table whose
// rows are `row` cells long: M[i][k] + M[k+1][j] + p[i-1] p[k] p[j].
__device__ __forceinline__ u64 split_cost(const u32* __restrict__ dims_global,
                                          const u64* cost_global, int row, int i, int k,
                                          int j) {
    return cost_global[row * i + k]          // M[i][k]
         + cost_global[row * (k + 1) + j]    // M[k+1][j]
         + (u64)dims_global[i - 1] * dims_global[k] * dims_global[j];
}
// ANCHOR_END: cmm_warp_split_cost

// ANCHOR: cmm_warp_exercise
extern "C" __global__ void cmm_warp_exercise(const u32* __restrict__ dims_global,
                                             u64* cost_global, u32* split_global, int n,
                                             int d) {
    const int i = blockIdx.x + 1;
    const int j = i + d;
    const int row = n + 1;
    // Lane l tries k = i + l, i + l + 32, ...; a lane with no k keeps the worst pair.
    u64 best_cost = ~0ull;
    u32 best_k = ~0u;
    for (int k = i + threadIdx.x; k < j; k += 32) {
        const u64 candidate = split_cost(dims_global, cost_global, row, i, k, j);
        if (candidate < best_cost) {
            best_cost = candidate;
            best_k = k;
        }
    }
    // The smallest cost and the smallest k of the 32 lanes end in lane 0.
    for (int offset = 16; offset > 0; offset /= 2) {
        const u64 other_cost = __shfl_down_sync(FULL_WARP_MASK, best_cost, offset);
        const u32 other_k = __shfl_down_sync(FULL_WARP_MASK, best_k, offset);
        best_cost = other_cost < best_cost ? other_cost : best_cost;
        best_k = other_k < best_k ? other_k : best_k;
    }
    if (threadIdx.x == 0) {
        cost_global[row * i + j] = best_cost;
        split_global[row * i + j] = best_k;
    }
}
// ANCHOR_END: cmm_warp_exercise

// ANCHOR: cmm_warp_solution
extern "C" __global__ void cmm_warp_solution(const u32* __restrict__ dims_global,
                                             u64* cost_global, u32* split_global, int n,
                                             int d) {
    const int i = blockIdx.x + 1;
    const int j = i + d;
    const int row = n + 1;
    // One key per candidate, cost * 2^16 + k: the smallest key is the smallest cost
    // and, of equal costs, the smallest k. A lane with no k keeps the largest key.
    u64 best_key = ~0ull;
    for (int k = i + threadIdx.x; k < j; k += 32) {
        const u64 candidate = split_cost(dims_global, cost_global, row, i, k, j);
        const u64 key = candidate << 16 | (u64)k;
        best_key = key < best_key ? key : best_key;
    }
    // A minimum over keys carries its k along: cost and split come from the same lane.
    for (int offset = 16; offset > 0; offset /= 2) {
        const u64 other_key = __shfl_down_sync(FULL_WARP_MASK, best_key, offset);
        best_key = other_key < best_key ? other_key : best_key;
    }
    if (threadIdx.x == 0) {
        cost_global[row * i + j] = best_key >> 16;
        split_global[row * i + j] = (u32)(best_key & 0xffffu);
    }
}
// ANCHOR_END: cmm_warp_solution
