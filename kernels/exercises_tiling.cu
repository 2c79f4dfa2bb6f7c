// Exercise 4.3 of the chapter "Reuse, loop permutation, tiling": the lecture's
// shared-memory matrix multiply, first with a mistake, then right. `cargo run --release
// --example exercises -- 4.3` runs the first through the chapter's check (`--solution`:
// the second), and `tests/gpu/gpu_exercises.rs` shows that the first fails the check and
// the second passes it.
//
// Both kernels: C = A B, row-major, A M x K, B K x N, any M, N, K >= 1. Parameters (a,
// b, c, M, N, K); block (16, 16), grid (ceil(N / 16), ceil(M / 16)).
// Needs: compute capability 7.0 (nothing newer than Volta).

#define TILE 16

// ANCHOR: matmul_tile_exercise
extern "C" __global__ void matmul_tile_exercise(const float* __restrict__ a,
                                                const float* __restrict__ b,
                                                float* __restrict__ c,
                                                int M, int N, int K) {
    __shared__ float a_tile_shared[TILE][TILE];  // (row of C, k)
    __shared__ float b_tile_shared[TILE][TILE];  // (k, column of C)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Each thread loads one element of A and one of B, if it lies inside the
        // matrix.
        if (row < M && k0 + tx < K)
            a_tile_shared[ty][tx] = a[(size_t)row * K + k0 + tx];
        if (k0 + ty < K && col < N)
            b_tile_shared[ty][tx] = b[(size_t)(k0 + ty) * N + col];
        __syncthreads();  // both tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) {
            sum += a_tile_shared[ty][k] * b_tile_shared[k][tx];
        }
        // everyone has read the tiles before the next step overwrites them
        __syncthreads();
    }
    if (row < M && col < N) c[(size_t)row * N + col] = sum;
}
// ANCHOR_END: matmul_tile_exercise

// ANCHOR: matmul_tile_solution
extern "C" __global__ void matmul_tile_solution(const float* __restrict__ a,
                                                const float* __restrict__ b,
                                                float* __restrict__ c,
                                                int M, int N, int K) {
    __shared__ float a_tile_shared[TILE][TILE];  // (row of C, k)
    __shared__ float b_tile_shared[TILE][TILE];  // (k, column of C)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Every slot of both tiles is written at every step: an element outside the
        // matrix is 0, so the partial last tile adds nothing, instead of the previous
        // step's values.
        a_tile_shared[ty][tx] =
            (row < M && k0 + tx < K) ? a[(size_t)row * K + k0 + tx] : 0.0f;
        b_tile_shared[ty][tx] =
            (k0 + ty < K && col < N) ? b[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();  // both tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) {
            sum += a_tile_shared[ty][k] * b_tile_shared[k][tx];
        }
        // everyone has read the tiles before the next step overwrites them
        __syncthreads();
    }
    if (row < M && col < N) c[(size_t)row * N + col] = sum;
}
// ANCHOR_END: matmul_tile_solution
