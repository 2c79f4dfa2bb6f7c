// Exercise 5.4 of the chapter "Chained matrix multiplication and the diagonal data
// layout": one thread per cell of a diagonal, the table diagonal-major, first with a
// mistake, then right. `cargo run --release --example exercises -- 5.4` runs the first
// through the chapter's check (`--solution`: the second), and `tests/gpu/gpu_exercises.rs`
// shows that the first fails the check and the second passes it.
//
// Both kernels: launched once per diagonal d = 1 .. n-1, in order, on one stream, with
// grid (ceil((n - d) / B), 1, 1) and block (B, 1, 1); the main diagonal is zero before
// the first launch. Parameters (dims, cost, split, n, d): p[0..n], then the n (n + 1) /
// 2 costs and splits of the diagonal-major table. The host proves that no sum can wrap
// 64 bits.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;
typedef unsigned int u32;

// M[i][j], 1 <= i <= j <= n, is at position i - 1 of diagonal e = j - i, after the
// e (2n + 1 - e) / 2 cells of diagonals 0 .. e-1.
__device__ __forceinline__ int diag_index(int n, int i, int j) {
    const int e = j - i;
    return e * (2 * n + 1 - e) / 2 + (i - 1);
}

// ANCHOR: cmm_cell_exercise
extern "C" __global__ void cmm_cell_exercise(const u32* __restrict__ dims_global,
                                             u64* cost_global, u32* split_global, int n,
                                             int d) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > n - d) return;  // the last block reaches past the end of the diagonal
    const int j = i + d;
    u64 best_cost = ~0ull;
    u32 best_k = i;
    for (int k = i; k < j; ++k) {
        const u64 candidate = cost_global[diag_index(n, i, k)]        // M[i][k]
                            + cost_global[diag_index(n, k + 1, j)]    // M[k+1][j]
                            + (u64)dims_global[i - 1] * dims_global[k] * dims_global[j];
        if (candidate <= best_cost) {
            best_cost = candidate;
            best_k = k;
        }
    }
    cost_global[diag_index(n, i, j)] = best_cost;
    split_global[diag_index(n, i, j)] = best_k;
}
// ANCHOR_END: cmm_cell_exercise

// ANCHOR: cmm_cell_solution
extern "C" __global__ void cmm_cell_solution(const u32* __restrict__ dims_global,
                                             u64* cost_global, u32* split_global, int n,
                                             int d) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (i > n - d) return;  // the last block reaches past the end of the diagonal
    const int j = i + d;
    u64 best_cost = ~0ull;
    u32 best_k = i;
    for (int k = i; k < j; ++k) {
        const u64 candidate = cost_global[diag_index(n, i, k)]        // M[i][k]
                            + cost_global[diag_index(n, k + 1, j)]    // M[k+1][j]
                            + (u64)dims_global[i - 1] * dims_global[k] * dims_global[j];
        // Strictly smaller: of two equal costs the smaller k, met first, stays, as in
        // the serial program the check compares with.
        if (candidate < best_cost) {
            best_cost = candidate;
            best_k = k;
        }
    }
    cost_global[diag_index(n, i, j)] = best_cost;
    split_global[diag_index(n, i, j)] = best_k;
}
// ANCHOR_END: cmm_cell_solution
