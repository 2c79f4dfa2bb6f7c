// Kernels of the chapter "Coalescing, alignment and the matrix transpose".
//
// Compiled at run time by NVRTC, which has no standard headers: sizes and indices are
// `unsigned long long` (u64 below). Each kernel's comment gives its launch
// configuration and parameters; src/coalescing/measure.rs launches them, and
// src/coalescing/patterns.rs and transpose.rs mirror their index arithmetic to count
// sectors and shared-memory banks.
// Needs: compute capability 7.0 (nothing newer than Volta).

typedef unsigned long long u64;

// ANCHOR: affine_read
// Loads each thread issues before its first store. Bytes in flight hide the latency
// of device memory: the copy kernel keeps 16 bytes in flight per thread (one float4),
// one 4-byte load would keep 4.
#define LOADS_IN_FLIGHT 8

// dst[i] = src[offset + i * stride] for i < n, both arrays in global memory. The
// loads follow the pattern under study and the stores are always contiguous, so two
// runs differ only in the sectors their loads touch. The grid strides over i.
template <typename T>
__device__ __forceinline__ void affine_read(const T* __restrict__ src,
                                            T* __restrict__ dst, u64 n, u64 stride,
                                            u64 offset) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (LOADS_IN_FLIGHT - 1) * step < n; i += LOADS_IN_FLIGHT * step) {
        T loaded[LOADS_IN_FLIGHT];  // registers
#pragma unroll
        for (int u = 0; u < LOADS_IN_FLIGHT; ++u) {
            // One warp-wide load: lane l reads element offset + (i0 + l) * stride.
            loaded[u] = src[offset + (i + u * step) * stride];
        }
#pragma unroll
        for (int u = 0; u < LOADS_IN_FLIGHT; ++u) {
            dst[i + u * step] = loaded[u];
        }
    }
    for (; i < n; i += step) {  // the last, partial round
        dst[i] = src[offset + i * stride];
    }
}

// Launch: any 1D grid, blocks of 256 threads.
// Parameters: (src, dst, n, stride, offset).
extern "C" __global__ void affine_read_f32(const float* __restrict__ src,
                                           float* __restrict__ dst, u64 n,
                                           u64 stride, u64 offset) {
    affine_read(src, dst, n, stride, offset);
}

extern "C" __global__ void affine_read_f64(const double* __restrict__ src,
                                           double* __restrict__ dst, u64 n,
                                           u64 stride, u64 offset) {
    affine_read(src, dst, n, stride, offset);
}
// ANCHOR_END: affine_read

// ANCHOR: particles
// A particle as an array of structs stores it: seven floats, 28 bytes, 4-byte
// aligned; the layout of the #[repr(C)] `Particle` in src/coalescing/reference.rs.
struct Particle {
    float x, y, z;     // position: read and written
    float vx, vy, vz;  // velocity: read
    float mass;        // not used by the drift, yet it shares sectors with the rest
};
static_assert(sizeof(Particle) == 28, "Particle must be seven packed floats");

// Particles each thread loads before it stores any: loads in flight hide latency.
#define PARTICLES_PER_THREAD 4

// Moves every particle by its velocity, p += v * dt (fmaf: the CPU reference uses
// f32::mul_add). Array of structs: one pointer, the same field every 28 bytes.
// Launch: any 1D grid, blocks of 256 threads. Parameters: (particles, n, dt).
extern "C" __global__ void drift_aos(Particle* __restrict__ particles, u64 n,
                                     float dt) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x; first < n;
         first += PARTICLES_PER_THREAD * step) {
        float x[PARTICLES_PER_THREAD], y[PARTICLES_PER_THREAD];  // registers
        float z[PARTICLES_PER_THREAD], vx[PARTICLES_PER_THREAD];
        float vy[PARTICLES_PER_THREAD], vz[PARTICLES_PER_THREAD];
#pragma unroll
        for (int u = 0; u < PARTICLES_PER_THREAD; ++u) {
            const u64 i = first + u * step;
            if (i < n) {
                x[u] = particles[i].x;
                y[u] = particles[i].y;
                z[u] = particles[i].z;
                vx[u] = particles[i].vx;
                vy[u] = particles[i].vy;
                vz[u] = particles[i].vz;
            }
        }
#pragma unroll
        for (int u = 0; u < PARTICLES_PER_THREAD; ++u) {
            const u64 i = first + u * step;
            if (i < n) {
                particles[i].x = fmaf(vx[u], dt, x[u]);
                particles[i].y = fmaf(vy[u], dt, y[u]);
                particles[i].z = fmaf(vz[u], dt, z[u]);
            }
        }
    }
}

// The same drift on a struct of arrays: one array per field, so every warp-wide load
// or store is 32 consecutive floats. The mass array is not passed: nothing reads it.
// Launch: any 1D grid, blocks of 256 threads.
// Parameters: (x, y, z, vx, vy, vz, n, dt).
extern "C" __global__ void drift_soa(float* __restrict__ x, float* __restrict__ y,
                                     float* __restrict__ z,
                                     const float* __restrict__ vx,
                                     const float* __restrict__ vy,
                                     const float* __restrict__ vz, u64 n, float dt) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    for (u64 first = (u64)blockIdx.x * blockDim.x + threadIdx.x; first < n;
         first += PARTICLES_PER_THREAD * step) {
        float px[PARTICLES_PER_THREAD], py[PARTICLES_PER_THREAD];  // registers
        float pz[PARTICLES_PER_THREAD], wx[PARTICLES_PER_THREAD];
        float wy[PARTICLES_PER_THREAD], wz[PARTICLES_PER_THREAD];
#pragma unroll
        for (int u = 0; u < PARTICLES_PER_THREAD; ++u) {
            const u64 i = first + u * step;
            if (i < n) {
                px[u] = x[i];
                py[u] = y[i];
                pz[u] = z[i];
                wx[u] = vx[i];
                wy[u] = vy[i];
                wz[u] = vz[i];
            }
        }
#pragma unroll
        for (int u = 0; u < PARTICLES_PER_THREAD; ++u) {
            const u64 i = first + u * step;
            if (i < n) {
                x[i] = fmaf(wx[u], dt, px[u]);
                y[i] = fmaf(wy[u], dt, py[u]);
                z[i] = fmaf(wz[u], dt, pz[u]);
            }
        }
    }
}
// ANCHOR_END: particles

// The transposes. `in` is rows x cols and `out` cols x rows, both row-major floats in
// global memory: out[c][r] = in[r][c]. A row of `in` starts in_pitch floats after the
// one before it, a row of `out` out_pitch floats after the one before it: pitch = cols
// (in) and rows (out) for packed matrices, more for rows padded to an alignment. A
// block of 32 x ROWS threads covers one SIDE x SIDE tile of `in`, so each thread
// handles (SIDE / 32) * (SIDE / ROWS) elements. Sizes need not be multiples of the
// tile: every access checks its row and column.
//
// Launch: grid (ceil(cols / SIDE), ceil(rows / SIDE)), block (32, ROWS).
// Parameters: (in, out, rows, cols, in_pitch, out_pitch).

// Not a transpose: the tiles, threads and loads of the transposes, but every element
// is stored where it came from. The transposes' own ceiling: what 4-byte accesses in
// this block shape reach.
template <int ROWS>
__device__ __forceinline__ void copy_tile(const float* __restrict__ in,
                                          float* __restrict__ out, u64 rows,
                                          u64 cols, u64 in_pitch, u64 out_pitch) {
    const u64 col = (u64)blockIdx.x * 32 + threadIdx.x;
    float loaded[32 / ROWS];  // registers: every load is issued before any store
#pragma unroll
    for (int k = 0; k < 32 / ROWS; ++k) {
        const u64 row = (u64)blockIdx.y * 32 + threadIdx.y + k * ROWS;
        if (row < rows && col < cols) loaded[k] = in[row * in_pitch + col];
    }
#pragma unroll
    for (int k = 0; k < 32 / ROWS; ++k) {
        const u64 row = (u64)blockIdx.y * 32 + threadIdx.y + k * ROWS;
        if (row < rows && col < cols) out[row * out_pitch + col] = loaded[k];
    }
}

// ANCHOR: transpose_naive
// A warp reads 32 consecutive floats of a row of `in` (4 sectors) and writes them as
// 32 floats of a column of `out`, `rows` floats apart (32 sectors).
template <int ROWS>
__device__ __forceinline__ void transpose_naive(const float* __restrict__ in,
                                                float* __restrict__ out, u64 rows,
                                                u64 cols, u64 in_pitch,
                                                u64 out_pitch) {
    const u64 col = (u64)blockIdx.x * 32 + threadIdx.x;
    float loaded[32 / ROWS];  // registers
#pragma unroll
    for (int k = 0; k < 32 / ROWS; ++k) {
        const u64 row = (u64)blockIdx.y * 32 + threadIdx.y + k * ROWS;
        if (row < rows && col < cols) loaded[k] = in[row * in_pitch + col];
    }
#pragma unroll
    for (int k = 0; k < 32 / ROWS; ++k) {
        const u64 row = (u64)blockIdx.y * 32 + threadIdx.y + k * ROWS;
        if (row < rows && col < cols) out[col * out_pitch + row] = loaded[k];
    }
}
// ANCHOR_END: transpose_naive

// ANCHOR: transpose_tiled
// Stages a SIDE x SIDE tile in shared memory so that both global accesses are
// coalesced. A warp reads SIDE consecutive floats of a row of `in` and stores them as
// a row of tile_shared; after the barrier, a warp reads a *column* of tile_shared and
// writes it as SIDE consecutive floats of a row of `out`. PAD unused words at the end
// of each tile row shift every row PAD banks along: with PAD odd, the 32 words of a
// column lie in 32 different banks.
template <int SIDE, int PAD, int ROWS>
__device__ __forceinline__ void transpose_tiled(const float* __restrict__ in,
                                                float* __restrict__ out, u64 rows,
                                                u64 cols, u64 in_pitch,
                                                u64 out_pitch) {
    __shared__ float tile_shared[SIDE][SIDE + PAD];
    const u64 first_row = (u64)blockIdx.y * SIDE;  // of `in`; first column of `out`
    const u64 first_col = (u64)blockIdx.x * SIDE;  // of `in`; first row of `out`
#pragma unroll
    for (int j = 0; j < SIDE; j += ROWS) {
#pragma unroll
        for (int i = 0; i < SIDE; i += 32) {
            const int r = threadIdx.y + j, c = threadIdx.x + i;  // within the tile
            if (first_row + r < rows && first_col + c < cols) {
                tile_shared[r][c] = in[(first_row + r) * in_pitch + first_col + c];
            }
        }
    }
    __syncthreads();  // the whole tile is in tile_shared before any column is read
#pragma unroll
    for (int j = 0; j < SIDE; j += ROWS) {
#pragma unroll
        for (int i = 0; i < SIDE; i += 32) {
            // Row r of the output tile is column r of the input tile.
            const int r = threadIdx.y + j, c = threadIdx.x + i;
            if (first_col + r < cols && first_row + c < rows) {
                out[(first_col + r) * out_pitch + first_row + c] = tile_shared[c][r];
            }
        }
    }
}
// ANCHOR_END: transpose_tiled

// ANCHOR: transpose_entries
extern "C" __global__ void copy_tile_32x8(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    copy_tile<8>(in, out, rows, cols, in_pitch, out_pitch);
}

extern "C" __global__ void transpose_naive_32x8(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    transpose_naive<8>(in, out, rows, cols, in_pitch, out_pitch);
}

// One element per thread, 32 x 32 threads per 32 x 32 tile. The padded one is the SDK
// kernel of the CS6963 lecture (a BLOCK_DIM x (BLOCK_DIM + 1) tile); the unpadded one
// is that kernel with its padding taken out.
extern "C" __global__ void transpose_tile_32x32(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    transpose_tiled<32, 0, 32>(in, out, rows, cols, in_pitch, out_pitch);
}

extern "C" __global__ void transpose_tile_padded_32x32(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    transpose_tiled<32, 1, 32>(in, out, rows, cols, in_pitch, out_pitch);
}

// Four elements per thread: 32 x 8 threads per 32 x 32 tile.
extern "C" __global__ void transpose_tile_32x8(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    transpose_tiled<32, 0, 8>(in, out, rows, cols, in_pitch, out_pitch);
}

extern "C" __global__ void transpose_tile_padded_32x8(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    transpose_tiled<32, 1, 8>(in, out, rows, cols, in_pitch, out_pitch);
}

// Sixteen elements per thread: 32 x 8 threads per 64 x 64 tile.
extern "C" __global__ void transpose_tile64_padded_32x8(const float* __restrict__ in,
    float* __restrict__ out, u64 rows, u64 cols, u64 in_pitch, u64 out_pitch) {
    transpose_tiled<64, 1, 8>(in, out, rows, cols, in_pitch, out_pitch);
}
// ANCHOR_END: transpose_entries

// The read-only data path. A load marked non-coherent (`ld.global.nc`: what __ldg
// emits, and what the compiler emits by itself for a `const T* __restrict__` it sees
// is only read) promises that nothing writes the data while the kernel runs.
// Launch: one thread per element (per four elements for gather4_*), blocks of 256.

// ANCHOR: readonly_stream
// Streaming copy, one element per thread: every byte is read once.
// Parameters: (src, dst, n).
extern "C" __global__ void copy_plain(const float* src, float* dst, u64 n) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

extern "C" __global__ void copy_ldg(const float* src, float* dst, u64 n) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = __ldg(&src[i]);
}
// ANCHOR_END: readonly_stream

// ANCHOR: readonly_gather
// Gather with reuse: out[i] = table[index[i]], a small table read over and over.
// Parameters: (table, index, out, n).
extern "C" __global__ void gather_plain(const float* table, const unsigned int* index,
                                        float* out, u64 n) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[index[i]];
}

extern "C" __global__ void gather_ldg(const float* table, const unsigned int* index,
                                      float* out, u64 n) {
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __ldg(&table[__ldg(&index[i])]);
}
// ANCHOR_END: readonly_gather

// ANCHOR: readonly_gather4
// The same gather, four elements per thread, written the natural way: load, store,
// load, store. With plain pointers `out` might alias `table` or `index`, so no load
// may move above an earlier store; marked read-only, all eight loads may go first.
// Parameters: (table, index, out, n); grid: ceil(n / (4 * 256)) blocks.
extern "C" __global__ void gather4_plain(const float* table,
                                         const unsigned int* index, float* out,
                                         u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        out[i] = table[index[i]];
        out[i + step] = table[index[i + step]];
        out[i + 2 * step] = table[index[i + 2 * step]];
        out[i + 3 * step] = table[index[i + 3 * step]];
    } else {
        for (u64 j = i; j < n; j += step) out[j] = table[index[j]];
    }
}

// Identical but for the qualifiers.
extern "C" __global__ void gather4_restrict(const float* __restrict__ table,
                                            const unsigned int* __restrict__ index,
                                            float* __restrict__ out, u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        out[i] = table[index[i]];
        out[i + step] = table[index[i + step]];
        out[i + 2 * step] = table[index[i + 2 * step]];
        out[i + 3 * step] = table[index[i + 3 * step]];
    } else {
        for (u64 j = i; j < n; j += step) out[j] = table[index[j]];
    }
}

// The qualifiers one at a time. `const` alone promises nothing about aliasing: `out`
// may still point into `table`.
extern "C" __global__ void gather4_const(const float* table,
                                         const unsigned int* index, float* out,
                                         u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        out[i] = table[index[i]];
        out[i + step] = table[index[i + step]];
        out[i + 2 * step] = table[index[i + 2 * step]];
        out[i + 3 * step] = table[index[i + 3 * step]];
    } else {
        for (u64 j = i; j < n; j += step) out[j] = table[index[j]];
    }
}

// `__restrict__` without `const`: no pointer aliases another, and the kernel happens
// to store through `out` only.
extern "C" __global__ void gather4_restrict_only(float* __restrict__ table,
                                                 unsigned int* __restrict__ index,
                                                 float* __restrict__ out, u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        out[i] = table[index[i]];
        out[i + step] = table[index[i + step]];
        out[i + 2 * step] = table[index[i + 2 * step]];
        out[i + 3 * step] = table[index[i + 3 * step]];
    } else {
        for (u64 j = i; j < n; j += step) out[j] = table[index[j]];
    }
}

// `__restrict__` on `out` alone: its stores cannot change what `table` and `index`
// hold (a no-alias promise), but nothing says `table` and `index` are read-only.
extern "C" __global__ void gather4_restrict_out(const float* table,
                                                const unsigned int* index,
                                                float* __restrict__ out, u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        out[i] = table[index[i]];
        out[i + step] = table[index[i + step]];
        out[i + 2 * step] = table[index[i + 2 * step]];
        out[i + 3 * step] = table[index[i + 3 * step]];
    } else {
        for (u64 j = i; j < n; j += step) out[j] = table[index[j]];
    }
}

// Plain pointers, but the source itself issues all eight loads before the first store:
// ordinary coherent loads in the order the qualifiers would have allowed.
extern "C" __global__ void gather4_loads_first(const float* table,
                                               const unsigned int* index, float* out,
                                               u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        const unsigned int k0 = index[i], k1 = index[i + step];  // registers
        const unsigned int k2 = index[i + 2 * step], k3 = index[i + 3 * step];
        const float v0 = table[k0], v1 = table[k1], v2 = table[k2], v3 = table[k3];
        out[i] = v0;
        out[i + step] = v1;
        out[i + 2 * step] = v2;
        out[i + 3 * step] = v3;
    } else {
        for (u64 j = i; j < n; j += step) out[j] = table[index[j]];
    }
}

// Plain pointers, every load through __ldg.
extern "C" __global__ void gather4_ldg(const float* table, const unsigned int* index,
                                       float* out, u64 n) {
    const u64 step = (u64)gridDim.x * blockDim.x;
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 3 * step < n) {
        out[i] = __ldg(&table[__ldg(&index[i])]);
        out[i + step] = __ldg(&table[__ldg(&index[i + step])]);
        out[i + 2 * step] = __ldg(&table[__ldg(&index[i + 2 * step])]);
        out[i + 3 * step] = __ldg(&table[__ldg(&index[i + 3 * step])]);
    } else {
        for (u64 j = i; j < n; j += step) out[j] = __ldg(&table[__ldg(&index[j])]);
    }
}
// ANCHOR_END: readonly_gather4
