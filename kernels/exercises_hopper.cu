// Exercise 8.4 of the chapter "Asynchronous memory on Hopper": a transpose of a matrix
// whose rows are pitched (each starts `pitch` floats after the previous one, so that
// every row is 16- or 128-byte aligned), first as a reader might write it, then as it
// must be. `cargo run --release --example exercises -- 8.4` runs the first through the
// chapter's exact check (`--solution`: the second); `tests/gpu/gpu_exercises.rs` shows that
// the first fails and the second passes.
//
// Both kernels: in and out are side x side float matrices with row pitch `pitch`; out
// is in transposed. Parameters (in, out, side, pitch); blocks of (32, 8) threads, grid
// (ceil(side / 32), ceil(side / 32)).
// Needs: compute capability 7.0 (nothing newer than Volta).

#define TILE 32

// ANCHOR: transpose_pitched_exercise
extern "C" __global__ void transpose_pitched_exercise(const float* in, float* out,
                                                      int side, int pitch) {
    __shared__ float tile[TILE][TILE + 1];
    const int x = blockIdx.x * TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int y = blockIdx.y * TILE + k;
        if (x < side && y < side)
            tile[k][threadIdx.x] = in[(long long)y * side + x];
    }
    __syncthreads();  // the tile is complete before any column of it is read
    const int ox = blockIdx.y * TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int oy = blockIdx.x * TILE + k;
        if (ox < side && oy < side)
            out[(long long)oy * side + ox] = tile[threadIdx.x][k];
    }
}
// ANCHOR_END: transpose_pitched_exercise

// Row y of a pitched matrix starts at y * pitch, not at y * side.
extern "C" __global__ void transpose_pitched_solution(const float* in, float* out,
                                                      int side, int pitch) {
    __shared__ float tile[TILE][TILE + 1];
    const int x = blockIdx.x * TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int y = blockIdx.y * TILE + k;
        if (x < side && y < side)
            tile[k][threadIdx.x] = in[(long long)y * pitch + x];
    }
    __syncthreads();  // the tile is complete before any column of it is read
    const int ox = blockIdx.y * TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int oy = blockIdx.x * TILE + k;
        if (ox < side && oy < side)
            out[(long long)oy * pitch + ox] = tile[threadIdx.x][k];
    }
}
