// Kernels of the chapter "Asynchronous memory on Hopper": the padded-tile transpose and
// a plain copy of pitched matrices, the baselines of the TMA's copy and transpose
// (kernels/hopper_tma.cu). Matrices are row-major with a row pitch (in elements) that may
// exceed the row length.
// Needs: compute capability 7.0 (plain loads, stores and shared memory).

#define TILE 32

// The coalescing chapter's transpose, with row pitches: a 32 x 33 shared tile (the pad
// column removes bank conflicts), loads and stores of whole 128-byte rows, edges
// checked. Launch: grid (ceil(cols / 32), ceil(rows / 32)); blocks of (32, 8) threads.
extern "C" __global__ void transpose_padded(const float* __restrict__ in,
                                            float* __restrict__ out, int rows,
                                            int cols, int in_pitch, int out_pitch) {
    __shared__ float tile[TILE][TILE + 1];
    const int x = blockIdx.x * TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int y = blockIdx.y * TILE + k;
        if (x < cols && y < rows)
            tile[k][threadIdx.x] = in[(long long)y * in_pitch + x];
    }
    __syncthreads();  // the tile is complete before any column of it is read
    const int ox = blockIdx.y * TILE + threadIdx.x;  // a column of out = a row of in
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int oy = blockIdx.x * TILE + k;
        if (ox < rows && oy < cols)
            out[(long long)oy * out_pitch + ox] = tile[threadIdx.x][k];
    }
}

// A pitched copy of the same shape and access pattern as the transpose, without the
// transposition: its ceiling.
// Launch: grid (ceil(cols / 32), ceil(rows / 32)); blocks of (32, 8) threads.
extern "C" __global__ void copy_pitched(const float* __restrict__ in,
                                        float* __restrict__ out, int rows, int cols,
                                        int pitch) {
    const int x = blockIdx.x * TILE + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += 8) {
        const int y = blockIdx.y * TILE + k;
        if (x < cols && y < rows)
            out[(long long)y * pitch + x] = in[(long long)y * pitch + x];
    }
}
