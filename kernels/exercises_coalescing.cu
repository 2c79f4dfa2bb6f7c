// Exercise 3.4 of the chapter "Coalescing, alignment and the matrix transpose": a tiled
// transpose, first with a mistake, then right and with a padded tile. `cargo run
// --release --example exercises -- 3.4` runs the first through the chapter's check
// (`--solution`: the second), and `tests/gpu/gpu_exercises.rs` shows that the first fails
// the check and the second passes it.
//
// Both kernels: out (cols x rows) = the transpose of in (rows x cols), both row-major.
// Parameters (in, out, rows, cols); block (32, 8), grid (ceil(cols / 32), ceil(rows /
// 32)).
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;

#define TILE 32  // the tile is TILE x TILE floats; a warp is one row of the block
#define ROWS 8   // rows of threads per block: each thread moves TILE / ROWS elements

// ANCHOR: transpose_tile_exercise
extern "C" __global__ void transpose_tile_exercise(const float* __restrict__ in,
                                                   float* __restrict__ out, u64 rows,
                                                   u64 cols) {
    __shared__ float tile_shared[TILE][TILE];
    const u64 first_row = (u64)blockIdx.y * TILE;  // of `in`; first column of `out`
    const u64 first_col = (u64)blockIdx.x * TILE;  // of `in`; first row of `out`
    const int c = threadIdx.x;
    // Load: a warp reads 32 consecutive floats of a row of `in` (coalesced).
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        if (first_row + r < rows && first_col + c < cols) {
            tile_shared[r][c] = in[(first_row + r) * cols + first_col + c];
        }
    }
    // the whole tile is loaded before any thread reads another's element
    __syncthreads();
    // Store: a warp writes 32 consecutive floats of a row of `out` (coalesced).
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        if (first_col + r < cols && first_row + c < rows) {
            out[(first_col + r) * rows + first_row + c] = tile_shared[r][c];
        }
    }
}
// ANCHOR_END: transpose_tile_exercise

// ANCHOR: transpose_tile_solution
extern "C" __global__ void transpose_tile_solution(const float* __restrict__ in,
                                                   float* __restrict__ out, u64 rows,
                                                   u64 cols) {
    // One unused word per row: column c of row r is in bank (33 r + c) mod 32, so the
    // 32 words of a column lie in 32 different banks.
    __shared__ float tile_shared[TILE][TILE + 1];
    const u64 first_row = (u64)blockIdx.y * TILE;  // of `in`; first column of `out`
    const u64 first_col = (u64)blockIdx.x * TILE;  // of `in`; first row of `out`
    const int c = threadIdx.x;
    // Load: a warp reads 32 consecutive floats of a row of `in` (coalesced).
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        if (first_row + r < rows && first_col + c < cols) {
            tile_shared[r][c] = in[(first_row + r) * cols + first_col + c];
        }
    }
    // the whole tile is loaded before any thread reads another's element
    __syncthreads();
    // Store: row r of the output tile is column r of the input tile, read down a column
    // of tile_shared, and a warp writes 32 consecutive floats of a row of `out`
    // (coalesced).
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        if (first_col + r < cols && first_row + c < rows) {
            out[(first_col + r) * rows + first_row + c] = tile_shared[c][r];
        }
    }
}
// ANCHOR_END: transpose_tile_solution
