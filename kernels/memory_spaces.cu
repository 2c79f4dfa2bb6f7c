// Chapter "Memory spaces": where data lives, and what each place costs.
//
// Every name says where its data lives: `signal_const` is in constant memory, `tile_shared`
// in shared memory, `counts_local` in local memory, `row_registers` in registers; a plain
// pointer argument points into global memory.
//
// NVRTC has no standard headers: every constant is defined here, and
// `cmbook::memory_spaces` repeats them (a CPU test checks that the two agree).
// Needs: compute capability 7.0 (nothing newer than Volta).

#define BLOCK 256            // threads per block of every kernel but the one-thread chases
#define SIGNAL_MAX 8192      // floats in signal_const: 32 KiB of the 64 KiB constant bank
#define CHASE_CONST_MAX 4096 // indices in chase_const_next: 16 KiB
#define HIST_BINS 16         // bins of the per-thread histograms
#define TILE_ROWS 32         // rows of 32 floats in the bandwidth kernels' tile

// ANCHOR: signal
// The lecture's signal example: one input vector applied to many matrices. Block (x, b)
// computes rows x*BLOCK.. of matrix b times the vector. Matrix b is stored column by
// column (element j of row r at j*rows + r), so at each j the lanes of a warp read
// consecutive floats: the matrix stream is coalesced in all three kernels, and only the
// vector's home differs.
__constant__ float signal_const[SIGNAL_MAX];

extern "C" __global__ void apply_signal_const(const float* matrices, float* result,
                                              int rows, int m)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* matrix = matrices + (size_t)blockIdx.y * m * rows;
    float acc = 0.0f; // a register
    for (int j = 0; j < m; ++j)
        // one address per warp: a broadcast
        acc += matrix[(size_t)j * rows + row] * signal_const[j];
    result[(size_t)blockIdx.y * rows + row] = acc;
}

extern "C" __global__ void apply_signal_global(const float* matrices,
                                               const float* signal_global,
                                               float* result, int rows, int m)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* matrix = matrices + (size_t)blockIdx.y * m * rows;
    float acc = 0.0f;
    for (int j = 0; j < m; ++j)
        // an ordinary global load
        acc += matrix[(size_t)j * rows + row] * signal_global[j];
    result[(size_t)blockIdx.y * rows + row] = acc;
}

extern "C" __global__ void apply_signal_readonly(
    const float* __restrict__ matrices, const float* __restrict__ signal_readonly,
    float* __restrict__ result, int rows, int m)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const float* matrix = matrices + (size_t)blockIdx.y * m * rows;
    float acc = 0.0f;
    for (int j = 0; j < m; ++j)
        // the read-only path
        acc += matrix[(size_t)j * rows + row] * __ldg(&signal_readonly[j]);
    result[(size_t)blockIdx.y * rows + row] = acc;
}
// ANCHOR_END: signal

// ANCHOR: walk
// The divergent pattern. The lanes of a warp fall into `distinct` groups (1 to 32); the
// lanes of one group read the same element, so each warp-wide load asks for `distinct`
// different addresses. Each step moves every group to the next element of the
// 8192-float table.
// Group g of warp w starts at word (w * warp_words + g * group_words) of the table.
__device__ __forceinline__ unsigned walk_start_spaced(unsigned long long thread,
                                                      int distinct,
                                                      unsigned group_words,
                                                      unsigned warp_words)
{
    unsigned warp = (unsigned)(thread / 32);
    unsigned group = (unsigned)(thread % 32) % (unsigned)distinct;
    return (warp * warp_words + group * group_words) & (SIGNAL_MAX - 1);
}

__device__ __forceinline__ unsigned walk_start(unsigned long long thread, int distinct)
{
    // 129 g differs for every g < 32; the warps start 97 words apart
    return walk_start_spaced(thread, distinct, 129u, 97u);
}

extern "C" __global__ void walk_const(float* out, unsigned long long n, int distinct,
                                      int steps)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned start = walk_start(i, distinct);
    float acc = 0.0f;
    for (int k = 0; k < steps; ++k)
        // `distinct` addresses: served one after another
        acc += signal_const[(start + k) & (SIGNAL_MAX - 1)];
    out[i] = acc;
}

extern "C" __global__ void walk_global(const float* table_global, float* out,
                                       unsigned long long n, int distinct, int steps)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned start = walk_start(i, distinct);
    float acc = 0.0f;
    for (int k = 0; k < steps; ++k)
        acc += table_global[(start + k) & (SIGNAL_MAX - 1)];
    out[i] = acc;
}

extern "C" __global__ void walk_readonly(const float* __restrict__ table_readonly,
                                         float* __restrict__ out, unsigned long long n,
                                         int distinct, int steps)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned start = walk_start(i, distinct);
    float acc = 0.0f;
    for (int k = 0; k < steps; ++k)
        acc += __ldg(&table_readonly[(start + k) & (SIGNAL_MAX - 1)]);
    out[i] = acc;
}
// ANCHOR_END: walk

// ANCHOR: walk_spaced
// walk_const with the spacing as parameters: groups `group_words` apart within a warp,
// warps `warp_words` apart. walk_const is (129, 97); groups 1 word apart put a warp's
// addresses in one or two 128-byte lines, and warps 0 words apart make every warp of
// the GPU read the same few words, so the constant cache holds what all of them need.
extern "C" __global__ void walk_const_spaced(float* out, unsigned long long n,
                                             int distinct, int steps,
                                             unsigned group_words,
                                             unsigned warp_words)
{
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned start = walk_start_spaced(i, distinct, group_words, warp_words);
    float acc = 0.0f;
    for (int k = 0; k < steps; ++k)
        acc += signal_const[(start + k) & (SIGNAL_MAX - 1)];
    out[i] = acc;
}
// ANCHOR_END: walk_spaced

// ANCHOR: stencil_global
// b[j] = a[j-1] + a[j] + a[j+1], with a[-1] = a[n] = 0. Every a[j] is read by three
// threads (the lecture's group reuse); here the caches are left to catch the repeats.
extern "C" __global__ void stencil3_global(const float* a, float* b,
                                           unsigned long long n)
{
    unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long first =
        blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    for (unsigned long long j = first; j < n; j += threads) {
        float left = j > 0 ? a[j - 1] : 0.0f;
        float right = j + 1 < n ? a[j + 1] : 0.0f;
        b[j] = left + a[j] + right;
    }
}
// ANCHOR_END: stencil_global

// ANCHOR: stencil_tiles
// The same stencil with the reuse made explicit: each block stages blockDim.x + 2
// floats (its elements and one halo element on each side) in `tile`, once, and every
// thread reads its three inputs from there. The block walks over tiles; every thread of
// a block has the same `first`, so all of them reach both barriers the same
// number of times.
__device__ __forceinline__ void stencil3_tiles(const float* a, float* b,
                                               unsigned long long n, float* tile)
{
    unsigned width = blockDim.x;
    for (unsigned long long first = blockIdx.x * (unsigned long long)width; first < n;
         first += (unsigned long long)gridDim.x * width) {
        unsigned long long j = first + threadIdx.x;
        // load: tile[1 + t] holds a[first + t]; tile[0] and
        // tile[width + 1] are the halo
        tile[1 + threadIdx.x] = j < n ? a[j] : 0.0f;
        if (threadIdx.x == 0) tile[0] = first > 0 ? a[first - 1] : 0.0f;
        if (threadIdx.x == width - 1)
            tile[width + 1] = first + width < n ? a[first + width] : 0.0f;
        __syncthreads(); // protects the reads below: neighbours' elements and the halo
                         // are all written
        // compute
        float sum = tile[threadIdx.x] + tile[1 + threadIdx.x] + tile[2 + threadIdx.x];
        __syncthreads(); // protects this tile: no thread overwrites it (next round's
                         // load) while another still reads it
        // write
        if (j < n) b[j] = sum;
    }
}
// ANCHOR_END: stencil_tiles

// ANCHOR: stencil_shared
// Static allocation: the size is fixed when the kernel is compiled.
extern "C" __global__ void stencil3_shared_static(const float* a, float* b,
                                                  unsigned long long n)
{
    __shared__ float tile_shared[BLOCK + 2]; // the host launches exactly BLOCK threads
    stencil3_tiles(a, b, n, tile_shared);
}

// Dynamic allocation: the size is the launch's shared_mem_bytes,
// (blockDim.x + 2) * 4 here.
extern "C" __global__ void stencil3_shared_dynamic(const float* a, float* b,
                                                   unsigned long long n)
{
    extern __shared__ float tile_dynamic[];
    stencil3_tiles(a, b, n, tile_dynamic);
}
// ANCHOR_END: stencil_shared

// ANCHOR: histogram
// Each thread counts the low four bits of the values it visits (i = t, t + threads,
// ...) and writes its 16 counts to counts[bin * threads + t].
extern "C" __global__ void histogram_local(const unsigned* values, unsigned* counts,
                                           unsigned long long n)
{
    unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned counts_local[HIST_BINS];
    for (int bin = 0; bin < HIST_BINS; ++bin) counts_local[bin] = 0;
    for (unsigned long long i = t; i < n; i += threads)
        // index known only at run time: local memory
        counts_local[values[i] & (HIST_BINS - 1)] += 1;
    for (int bin = 0; bin < HIST_BINS; ++bin)
        counts[bin * threads + t] = counts_local[bin];
}

extern "C" __global__ void histogram_registers(const unsigned* values, unsigned* counts,
                                               unsigned long long n)
{
    unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long t = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned counts_registers[HIST_BINS];
#pragma unroll
    for (int bin = 0; bin < HIST_BINS; ++bin) counts_registers[bin] = 0;
    for (unsigned long long i = t; i < n; i += threads) {
        unsigned value_bin = values[i] & (HIST_BINS - 1);
#pragma unroll
        for (int bin = 0; bin < HIST_BINS; ++bin)
            // every index a compile-time constant: registers
            counts_registers[bin] += value_bin == (unsigned)bin;
    }
#pragma unroll
    for (int bin = 0; bin < HIST_BINS; ++bin)
        counts[bin * threads + t] = counts_registers[bin];
}
// ANCHOR_END: histogram

// ANCHOR: chase
// One thread follows a chain: each load's address is the value the previous load
// returned, so no two loads overlap and the time per step is the latency of one load.
// The walk starts at *position and leaves its end there, so the next launch continues
// along the cycle.
extern "C" __global__ void chase_global(const unsigned* next, unsigned* position,
                                        unsigned long long steps)
{
    unsigned p = *position;
    for (unsigned long long s = 0; s < steps; ++s) p = next[p];
    *position = p;
}

extern "C" __global__ void chase_shared(const unsigned* next, unsigned len,
                                        unsigned* position, unsigned long long steps)
{
    extern __shared__ unsigned next_shared[];
    for (unsigned i = threadIdx.x; i < len; i += blockDim.x) next_shared[i] = next[i];
    __syncthreads(); // protects the chase: the whole chain is in shared memory before
                     // thread 0 follows it
    if (threadIdx.x != 0) return;
    unsigned p = *position;
    for (unsigned long long s = 0; s < steps; ++s) p = next_shared[p];
    *position = p;
}

__constant__ unsigned chase_const_next[CHASE_CONST_MAX];

extern "C" __global__ void chase_const(unsigned* position, unsigned long long steps)
{
    unsigned p = *position;
    for (unsigned long long s = 0; s < steps; ++s) p = chase_const_next[p];
    *position = p;
}
// ANCHOR_END: chase

// ANCHOR: bandwidth
// The value at word i of block b's tile: a few bits of a hash, exact as a float.
__device__ __forceinline__ float tile_value(unsigned block, unsigned i)
{
    unsigned h = (block * 1024u + i) * 2654435761u;
    return (float)(h >> 24) * (1.0f / 256.0f) - 0.5f;
}

// Each lane reads a 32-row column of the tile per pass, a different column every pass
// (so no load can be hoisted out of the loop); a warp reads 32 different
// banks: no conflict.
extern "C" __global__ void bandwidth_shared(float* out, int passes)
{
    __shared__ float tile_shared[TILE_ROWS][32];
    for (unsigned i = threadIdx.x; i < TILE_ROWS * 32; i += blockDim.x)
        tile_shared[i / 32][i % 32] = tile_value(blockIdx.x, i);
    __syncthreads(); // protects the reads: the tile is whole before a warp reads rows
                     // other warps wrote
    unsigned lane = threadIdx.x % 32;
    float acc = 0.0f;
    for (int pass = 0; pass < passes; ++pass) {
        unsigned column = (lane + pass) % 32;
#pragma unroll
        for (int row = 0; row < TILE_ROWS; ++row) acc += tile_shared[row][column];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// The same sums with the lane's column held in registers: each add reads its operand
// straight from the register file.
extern "C" __global__ void bandwidth_registers(float* out, int passes)
{
    unsigned lane = threadIdx.x % 32;
    float row_registers[TILE_ROWS];
#pragma unroll
    for (int row = 0; row < TILE_ROWS; ++row)
        row_registers[row] = tile_value(blockIdx.x, row * 32 + lane);
    float acc = 0.0f;
    for (int pass = 0; pass < passes; ++pass) {
#pragma unroll
        for (int row = 0; row < TILE_ROWS; ++row) acc += row_registers[row];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
// ANCHOR_END: bandwidth
