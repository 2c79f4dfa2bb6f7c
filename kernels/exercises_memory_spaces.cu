// Exercise 2.4 of the chapter "Memory spaces": the three-point stencil from a shared
// tile, first with a mistake, then right. `cargo run --release --example exercises --
// 2.4` runs the first through the chapter's check (`--solution`: the second), and
// `tests/gpu/gpu_exercises.rs` shows that the first fails the check and the second passes
// it.
//
// Both kernels: b[j] = a[j-1] + a[j] + a[j+1] with a[-1] = a[n] = 0. Parameters (a, b,
// n); any 1D grid, any block size, and (blockDim.x + 2) * 4 bytes of dynamic shared
// memory. Every thread of a block has the same `first`, so all of them reach both
// barriers equally often.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;

// ANCHOR: stencil_tile_rounds
// The lecture's pattern, one tile of blockDim.x elements per round of the grid-stride
// loop: load the tile, let the kernel fill the halo (`fill_halo(tile_shared, a, n,
// first, width)`), synchronise, compute, synchronise, write.
template <typename FillHalo>
__device__ __forceinline__ void stencil3_tiles(const float* a, float* b, u64 n,
                                               FillHalo fill_halo) {
    extern __shared__ float tile_shared[];  // tile_shared[1 + t] holds a[first + t]
    const unsigned width = blockDim.x;
    const u64 step = (u64)gridDim.x * width;
    for (u64 first = (u64)blockIdx.x * width; first < n; first += step) {
        const u64 j = first + threadIdx.x;
        tile_shared[1 + threadIdx.x] = j < n ? a[j] : 0.0f;
        fill_halo(tile_shared, a, n, first, width);
        // the tile and its halo are complete before anyone reads a neighbour
        __syncthreads();
        const float sum = tile_shared[threadIdx.x] + tile_shared[1 + threadIdx.x] +
                          tile_shared[2 + threadIdx.x];
        // every thread has read the tile before the next round overwrites it
        __syncthreads();
        if (j < n) b[j] = sum;
    }
}
// ANCHOR_END: stencil_tile_rounds

// ANCHOR: stencil_tile_exercise
extern "C" __global__ void stencil3_tile_exercise(const float* a, float* b, u64 n) {
    stencil3_tiles(a, b, n, [](float* tile_shared, const float* a, u64 n, u64 first,
                               unsigned width) {
        // The halo: one element on each side of the tile.
        if (threadIdx.x == 0) tile_shared[0] = 0.0f;
        if (threadIdx.x == width - 1) tile_shared[width + 1] = 0.0f;
    });
}
// ANCHOR_END: stencil_tile_exercise

// ANCHOR: stencil_tile_solution
extern "C" __global__ void stencil3_tile_solution(const float* a, float* b, u64 n) {
    stencil3_tiles(a, b, n, [](float* tile_shared, const float* a, u64 n, u64 first,
                               unsigned width) {
        // The halo is the neighbouring tiles' edge elements; only the array's own ends
        // are 0.
        if (threadIdx.x == 0) tile_shared[0] = first > 0 ? a[first - 1] : 0.0f;
        if (threadIdx.x == width - 1) {
            tile_shared[width + 1] = first + width < n ? a[first + width] : 0.0f;
        }
    });
}
// ANCHOR_END: stencil_tile_solution
