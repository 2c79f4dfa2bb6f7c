// Chapter "Reuse, loop permutation, tiling": row-major C = A * B in float, one kernel per step.
// A is M x K, B is K x N, C is M x N, all row-major and densely packed. Every kernel accepts any
// M, N, K >= 1: elements outside the matrices are read as 0 and never written.
// Needs: compute capability 7.0 (nothing newer than Volta).

// ANCHOR: naive
// Step 1: one thread per element of C, every operand straight from global memory.
extern "C" __global__ void matmul_naive(const float* __restrict__ a,
                                        const float* __restrict__ b,
                                        float* __restrict__ c, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    // consecutive lanes: consecutive columns
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) {
        sum += a[(size_t)row * K + k] * b[(size_t)k * N + col];
    }
    c[(size_t)row * N + col] = sum;
}
// ANCHOR_END: naive

// ANCHOR: tiled_square
// Steps 2 and 3: the lecture's tiled multiply. A TILE x TILE block of threads computes
// the TILE x TILE block (tile_row, tile_col) of C; each thread loads one element of A
// and one of B per tile step.
template <int TILE>
__device__ void tiled_square(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, int M, int N, int K, int tile_row,
                             int tile_col) {
    __shared__ float a_tile_shared[TILE][TILE];  // (row of C, k)
    __shared__ float b_tile_shared[TILE][TILE];  // (k, column of C)
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = tile_row * TILE + ty;
    int col = tile_col * TILE + tx;
    float sum = 0.0f;
    // ANCHOR: tiled_square_walk
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Out-of-range elements become 0, so the last partial tile needs
        // no special case.
        a_tile_shared[ty][tx] =
            (row < M && k0 + tx < K) ? a[(size_t)row * K + k0 + tx] : 0.0f;
        b_tile_shared[ty][tx] =
            (k0 + ty < K && col < N) ? b[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();  // both tiles are complete before anyone reads them
        for (int k = 0; k < TILE; ++k) {
            sum += a_tile_shared[ty][k] * b_tile_shared[k][tx];
        }
        // everyone is done reading before the next step overwrites the tiles
        __syncthreads();
    }
    // ANCHOR_END: tiled_square_walk
    if (row < M && col < N) c[(size_t)row * N + col] = sum;
}

// Block (x, y) of the grid computes tile (y, x) of C.
extern "C" __global__ void matmul_tiled16(const float* __restrict__ a,
                                          const float* __restrict__ b,
                                          float* __restrict__ c, int M, int N, int K) {
    tiled_square<16>(a, b, c, M, N, K, blockIdx.y, blockIdx.x);
}

extern "C" __global__ void matmul_tiled32(const float* __restrict__ a,
                                          const float* __restrict__ b,
                                          float* __restrict__ c, int M, int N, int K) {
    tiled_square<32>(a, b, c, M, N, K, blockIdx.y, blockIdx.x);
}
// ANCHOR_END: tiled_square

// ANCHOR: grouped_blocks
// Step 2b: step 2's tiles, handed to the blocks in another order. The GPU starts blocks
// roughly in the order of their linear index, x fastest: in step 2 one row of tiles
// after another, each row reading all of B. Here the tiles are numbered in groups of
// `group` rows, down the group's rows first, then across to its next column, so that
// blocks started together read the same columns of B. The last group may be shorter.
extern "C" __global__ void matmul_tiled16_grouped(const float* __restrict__ a,
                                                  const float* __restrict__ b,
                                                  float* __restrict__ c, int M, int N,
                                                  int K, int group) {
    long long tiles_across = gridDim.x, tiles_down = gridDim.y;
    long long id = (long long)blockIdx.y * tiles_across + blockIdx.x;
    long long first_row = id / (group * tiles_across) * group;
    long long rows = tiles_down - first_row < group ? tiles_down - first_row : group;
    long long in_group = id - first_row * tiles_across;
    tiled_square<16>(a, b, c, M, N, K, (int)(first_row + in_group % rows),
                     (int)(in_group / rows));
}
// ANCHOR_END: grouped_blocks

// The register-blocked kernels share one shape: a block of 256 threads computes a 128 x 128
// tile of C, stepping through K in slices of 8; each thread owns 8 x 8 results in registers.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS 256
// The A tile is stored transposed, (k, row), with 4 floats of padding per k so that the
// transposing stores of two neighbouring lanes land in different banks.
#define A_PAD 4

// ANCHOR: load_tiles
// One slice of the operands, global -> registers: each thread fetches 4 floats of A
// (row tid/2, k (tid%2)*4 ..+3) and 4 floats of B (k tid/32, columns (tid%32)*4 ..+3).
// With `vec` (K and N multiples of 4, so every group of 4 is 16-byte aligned and wholly
// in or out of range) each group is one float4 load; otherwise 4
// bounds-checked scalar loads.
__device__ __forceinline__ void load_slice_regs(
    const float* __restrict__ a, const float* __restrict__ b, int M, int N, int K,
    int block_row, int block_col, int k0, bool vec, float4& a_regs, float4& b_regs) {
    int tid = threadIdx.x;
    int a_row = block_row + tid / 2, a_k = k0 + (tid % 2) * 4;
    int b_k = k0 + tid / 32, b_col = block_col + (tid % 32) * 4;
    // ANCHOR: load_slice_branches
    if (vec) {
        a_regs = (a_row < M && a_k < K)
                     ? *reinterpret_cast<const float4*>(&a[(size_t)a_row * K + a_k])
                     : make_float4(0.f, 0.f, 0.f, 0.f);
        b_regs = (b_k < K && b_col < N)
                     ? *reinterpret_cast<const float4*>(&b[(size_t)b_k * N + b_col])
                     : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
        float av[4], bv[4];
        for (int q = 0; q < 4; ++q) {
            av[q] = (a_row < M && a_k + q < K) ? a[(size_t)a_row * K + a_k + q] : 0.0f;
            bv[q] = (b_k < K && b_col + q < N) ? b[(size_t)b_k * N + b_col + q] : 0.0f;
        }
        a_regs = make_float4(av[0], av[1], av[2], av[3]);
        b_regs = make_float4(bv[0], bv[1], bv[2], bv[3]);
    }
    // ANCHOR_END: load_slice_branches
}

// Registers -> shared: A transposed into (k, row), B as it is, (k, column).
__device__ __forceinline__ void store_slice_shared(float (*a_tile_shared)[BM + A_PAD],
                                                   float (*b_tile_shared)[BN],
                                                   const float4& a_regs,
                                                   const float4& b_regs) {
    int tid = threadIdx.x;
    int a_row = tid / 2, a_k = (tid % 2) * 4;
    a_tile_shared[a_k + 0][a_row] = a_regs.x;
    a_tile_shared[a_k + 1][a_row] = a_regs.y;
    a_tile_shared[a_k + 2][a_row] = a_regs.z;
    a_tile_shared[a_k + 3][a_row] = a_regs.w;
    *reinterpret_cast<float4*>(&b_tile_shared[tid / 32][(tid % 32) * 4]) = b_regs;
}
// ANCHOR_END: load_tiles

// ANCHOR: regs_8x8
// Step 4: 2D register blocking. Thread (tr, tc) = (tid/16, tid%16) owns the contiguous
// 8 x 8 block of C at rows tr*8.., columns tc*8..; per k it reads 8 + 8 floats of
// shared memory and does 64 fused multiply-adds. `vec` = false forces scalar global
// loads (this step); step 5 is the same kernel launched with `vec` = true where
// K and N allow it.
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_regs8x8(const float* __restrict__ a, const float* __restrict__ b,
               float* __restrict__ c, int M, int N, int K, int vec) {
    __shared__ __align__(16) float a_tile_shared[BK][BM + A_PAD];  // (k, row of C)
    __shared__ __align__(16) float b_tile_shared[BK][BN];          // (k, column of C)
    int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    float c_regs[TM][TN] = {};  // (8 rows, 8 columns) of this thread's results
    float a_regs[TM], b_regs[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        float4 a_load, b_load;
        load_slice_regs(a, b, M, N, K, block_row, block_col, k0, vec != 0, a_load,
                        b_load);
        store_slice_shared(a_tile_shared, b_tile_shared, a_load, b_load);
        __syncthreads();  // the slice is in shared memory before anyone reads it
        // ANCHOR: register_outer_product
        for (int k = 0; k < BK; ++k) {
            for (int i = 0; i < TM; ++i) a_regs[i] = a_tile_shared[k][tr * TM + i];
            for (int j = 0; j < TN; ++j) b_regs[j] = b_tile_shared[k][tc * TN + j];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) c_regs[i][j] += a_regs[i] * b_regs[j];
        }
        // ANCHOR_END: register_outer_product
        // everyone is done reading before the next slice overwrites it
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i) {
        int row = block_row + tr * TM + i;
        for (int j = 0; j < TN; ++j) {
            int col = block_col + tc * TN + j;
            if (row < M && col < N) c[(size_t)row * N + col] = c_regs[i][j];
        }
    }
}
// ANCHOR_END: regs_8x8

// ANCHOR: quad_double_buffer
// Step 6: the same 128 x 128 x 8 tiling with two changes.
// (a) Each thread's 8 x 8 results are four 4 x 4 quadrants, 64 rows and 64 columns
//     apart: rows tr*4.. and 64+tr*4.., columns tc*4.. and 64+tc*4... Every shared read
//     is then a float4, and the 8 lanes of a quarter-warp read 8 consecutive float4 (no
//     bank conflict).
// (b) Two shared buffers: while the block computes on one slice, each thread's loads of
//     the next slice are in flight into registers; one __syncthreads per slice instead
//     of two.
extern "C" __global__ void __launch_bounds__(THREADS)
matmul_quad_db(const float* __restrict__ a, const float* __restrict__ b,
               float* __restrict__ c, int M, int N, int K, int vec) {
    // (buffer, k, row of C)
    __shared__ __align__(16) float a_tile_shared[2][BK][BM + A_PAD];
    // (buffer, k, column of C)
    __shared__ __align__(16) float b_tile_shared[2][BK][BN];
    int block_row = blockIdx.y * BM, block_col = blockIdx.x * BN;
    int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    float c_regs[TM][TN] = {};  // (2 x 4 rows, 2 x 4 columns) of this thread's results
    float a_regs[TM], b_regs[TN];
    float4 a_load, b_load;
    int slices = (K + BK - 1) / BK;
    load_slice_regs(a, b, M, N, K, block_row, block_col, 0, vec != 0, a_load, b_load);
    store_slice_shared(a_tile_shared[0], b_tile_shared[0], a_load, b_load);
    __syncthreads();  // slice 0 is in buffer 0 before anyone reads it
    // ANCHOR: double_buffer_loop
    for (int s = 0; s < slices; ++s) {
        int cur = s & 1;
        bool more = s + 1 < slices;
        if (more)
            load_slice_regs(a, b, M, N, K, block_row, block_col, (s + 1) * BK, vec != 0,
                            a_load, b_load);
        for (int k = 0; k < BK; ++k) {
            const float* a_at_k = a_tile_shared[cur][k];  // (row of C)
            const float* b_at_k = b_tile_shared[cur][k];  // (column of C)
            float4 a_lo = *reinterpret_cast<const float4*>(&a_at_k[tr * 4]);
            float4 a_hi = *reinterpret_cast<const float4*>(&a_at_k[64 + tr * 4]);
            float4 b_lo = *reinterpret_cast<const float4*>(&b_at_k[tc * 4]);
            float4 b_hi = *reinterpret_cast<const float4*>(&b_at_k[64 + tc * 4]);
            a_regs[0] = a_lo.x; a_regs[1] = a_lo.y; a_regs[2] = a_lo.z;
            a_regs[3] = a_lo.w; a_regs[4] = a_hi.x; a_regs[5] = a_hi.y;
            a_regs[6] = a_hi.z; a_regs[7] = a_hi.w;
            b_regs[0] = b_lo.x; b_regs[1] = b_lo.y; b_regs[2] = b_lo.z;
            b_regs[3] = b_lo.w; b_regs[4] = b_hi.x; b_regs[5] = b_hi.y;
            b_regs[6] = b_hi.z; b_regs[7] = b_hi.w;
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) c_regs[i][j] += a_regs[i] * b_regs[j];
        }
        // Buffer cur^1 was last read in step s-1, and every thread passed the
        // barrier after it.
        if (more)
            store_slice_shared(a_tile_shared[cur ^ 1], b_tile_shared[cur ^ 1], a_load,
                               b_load);
        // slice s+1 is complete in buffer cur^1, and buffer cur is no longer read
        __syncthreads();
    }
    // ANCHOR_END: double_buffer_loop
    for (int i = 0; i < TM; ++i) {
        int row = block_row + (i < 4 ? tr * 4 + i : 64 + tr * 4 + (i - 4));
        for (int j = 0; j < TN; ++j) {
            int col = block_col + (j < 4 ? tc * 4 + j : 64 + tc * 4 + (j - 4));
            if (row < M && col < N) c[(size_t)row * N + col] = c_regs[i][j];
        }
    }
}
// ANCHOR_END: quad_double_buffer

// ANCHOR: generic_pointer
// The lecture's rule "pointers only to global memory" was that of compute capability
// 1.x. Since Fermi (2.0) a pointer is a generic address: one function serves global
// and shared data, and the hardware tells the spaces apart at run time.
// __noinline__ keeps the function whole, so its PTX shows the generic load.
constexpr int GENERIC_BLOCK = 256;

__device__ __noinline__ float window_sum(const float* p, int i, int count,
                                         int* space) {
    if (space != nullptr) {  // which window the generic address falls in
        space[0] = __isGlobal(p);
        space[1] = __isShared(p);
    }
    float left = i > 0 ? p[i - 1] : 0.0f;
    float right = i + 1 < count ? p[i + 1] : 0.0f;
    return (left + p[i]) + right;
}

// Each block sums a 3-wide window over its chunk of `in` twice: once through a
// pointer into global memory, once through a pointer to a copy in shared memory.
extern "C" __global__ void generic_window(const float* in, float* from_global,
                                          float* from_shared, int* spaces, int n) {
    __shared__ float chunk_shared[GENERIC_BLOCK];  // this block's elements of `in`
    int base = blockIdx.x * GENERIC_BLOCK;
    int count = min(GENERIC_BLOCK, n - base);
    int t = threadIdx.x;
    if (t < count) chunk_shared[t] = in[base + t];
    __syncthreads();  // the chunk is complete before any thread reads a neighbour
    if (t >= count) return;
    bool first = blockIdx.x == 0 && t == 0;  // one thread reports the spaces
    from_global[base + t] =
        window_sum(in + base, t, count, first ? spaces : nullptr);
    from_shared[base + t] =
        window_sum(chunk_shared, t, count, first ? spaces + 2 : nullptr);
}
// ANCHOR_END: generic_pointer
