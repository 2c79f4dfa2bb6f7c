// Exercise 7.4 of the chapter "ATAX": kernel 1, tmp = A x, with one warp per row, first
// unfinished, then finished. `cargo run --release --example exercises -- 7.4` runs the
// first, followed by the chapter's kernel 2, through the chapter's check of y
// (`--solution`: the second), and `tests/gpu/gpu_exercises.rs` shows that the first fails
// the check and the second passes it.
//
// Both kernels: A is an m x n row-major float matrix. Parameters (a, x, tmp, m, n);
// blocks of 256 threads, grid (ceil(32 m / 256), 1, 1): warp w of the grid computes
// tmp[w].
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;

#define FULL_WARP_MASK 0xffffffffu

// ANCHOR: atax_warp_lane_sum
// This lane's part of row `row` of A times x: lane l adds up elements l, l + 32,
// l + 64, ... of the row, so that at each step the warp reads 32 neighbours.
__device__ __forceinline__ float lane_partial_sum(const float* a, const float* x,
                                                  unsigned row, unsigned n) {
    const unsigned lane = threadIdx.x % 32;
    const float* a_row = a + (u64)row * n;
    float sum = 0.0f;
    for (unsigned j = lane; j < n; j += 32) sum += a_row[j] * x[j];
    return sum;
}
// ANCHOR_END: atax_warp_lane_sum

// ANCHOR: atax_warp_exercise
extern "C" __global__ void atax_tmp_warp_exercise(const float* a, const float* x,
                                   float* tmp, unsigned m, unsigned n) {
    const unsigned row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    // the whole warp leaves together: row is the same for all lanes
    if (row >= m) return;
    float sum = lane_partial_sum(a, x, row, n);
    if (threadIdx.x % 32 == 0) tmp[row] = sum;  // lane 0
}
// ANCHOR_END: atax_warp_exercise

// ANCHOR: atax_warp_solution
extern "C" __global__ void atax_tmp_warp_solution(const float* a, const float* x,
                                   float* tmp, unsigned m, unsigned n) {
    const unsigned row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    // the whole warp leaves together: row is the same for all lanes
    if (row >= m) return;
    float sum = lane_partial_sum(a, x, row, n);
    // Each lane holds a partial sum: halve the number of partial sums five times, lane
    // l adding lane l + offset's, until lane 0 holds the whole row's.
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(FULL_WARP_MASK, sum, offset);
    }
    if (threadIdx.x % 32 == 0) tmp[row] = sum;  // lane 0
}
// ANCHOR_END: atax_warp_solution
