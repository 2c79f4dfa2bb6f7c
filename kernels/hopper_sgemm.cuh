// What the FP32 matrix multiplies of the chapter "Asynchronous memory on Hopper" share:
// the zero-filling copies, and the warp-tiled kernel as a template over its tile, its
// slice and how the slice reaches shared memory. Included by hopper_sgemm_warp.cu (the
// kernels fed through registers, any GPU) and hopper_sgemm.cu (those fed by cp.async,
// 8.0); a kernel file includes cp_async.cuh first. The cp.async paths are branches of
// `if constexpr`, so a kernel fed through registers holds none of their instructions.

// ANCHOR: sgemm_copy
// A copy of `bytes` (4 or 16) from global into shared memory that reads only `valid`
// of them (0 or `bytes`) and fills the rest with zeros: the out-of-range part of a tile
// costs no global traffic and needs no second code path. With valid = 0 the source is
// never read; it is still a valid address (the matrix's first element).
__device__ __forceinline__ void cp_async_16z(float* smem, const float* gmem,
                                             bool valid) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(gmem),
                 "r"(n)
                 : "memory");
}
__device__ __forceinline__ void cp_async_4z(float* smem, const float* gmem,
                                            bool valid) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    int n = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(s), "l"(gmem),
                 "r"(n)
                 : "memory");
}
// ANCHOR_END: sgemm_copy

// ---------------------------------------------------------------------------------
// Warp-tiled kernels. The block tile is 128 rows x BN (128 or 256) columns of C, 256
// threads as 8 warps in a 4 x 2 grid; a warp owns 32 rows x BN/2 columns, and its lane
// (ty, tx) = (lane / 8, lane % 8) owns rows ty*4.. and 16+ty*4.. of the warp's rows
// and BN/64 groups of 4 columns, 32 apart, from tx*4. A is stored k-major, (k, row), so
// that both operands are read as float4: per step of k a warp reads 4 consecutive
// float4 of A (64 bytes) and, per group, 8 consecutive float4 of B (128 bytes), each a
// single shared-memory wavefront. The whole slice is unrolled, and each step's
// operands are read into a second set of registers while the previous step's
// multiply-adds run.
#define WT_BM 128
#define WT_A_LD (WT_BM + 4)  // k = 0 and k = 4 of one warp's stores fall 16 banks apart

// How a slice reaches shared memory.
#define WT_REGS 0     // A and B: global -> registers, stored at the end of the slice
#define WT_ASYNC 1    // A and B by cp.async (A as 4-byte copies, transposed on the way)
#define WT_B_ASYNC 2  // A through registers, B by cp.async

template <int BK, int BN>
struct WarpTile {
    static constexpr int QN = BN / 64;                // groups of 4 columns per thread
    static constexpr int A_FLOATS = BK * WT_A_LD;     // (k, row), row pitch WT_A_LD
    static constexpr int STAGE = A_FLOATS + BK * BN;  // then B: (k, column)
    static constexpr int A_LOADS = BK / 8;            // float4 of A per thread
    static constexpr int B_LOADS = BK * BN / 1024;    // float4 of B per thread
    static constexpr int B_LANES = BN / 4;            // threads per k row of B
};

// ANCHOR: warp_load
// A slice of A into registers: thread tid takes float4 j at row tid/2, k (tid%2)*4+8j
// (one 16-byte load when K is a multiple of 4, else four checked 4-byte loads; zero
// outside A). At the slice's end the float4 goes into the stage transposed, as four
// 4-byte stores: k = 0 and k = 4 of one warp fall 16 banks apart.
template <int BK, int BN>
__device__ __forceinline__ void wt_load_a(const float* __restrict__ a, int M, int K,
                                          int block_row, int k0, bool vec_a,
                                          float4 (&ra)[WarpTile<BK, BN>::A_LOADS]) {
    const int tid = threadIdx.x;
    const int row = block_row + tid / 2;
#pragma unroll
    for (int j = 0; j < WarpTile<BK, BN>::A_LOADS; ++j) {
        const int k = k0 + (tid % 2) * 4 + 8 * j;
        const float* p = a + (size_t)row * K + k;
        if (vec_a) {
            ra[j] = row < M && k < K ? *reinterpret_cast<const float4*>(p)
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
        } else {
            const bool in = row < M;
            ra[j].x = in && k < K ? p[0] : 0.f;
            ra[j].y = in && k + 1 < K ? p[1] : 0.f;
            ra[j].z = in && k + 2 < K ? p[2] : 0.f;
            ra[j].w = in && k + 3 < K ? p[3] : 0.f;
        }
    }
}
template <int BK, int BN>
__device__ __forceinline__ void wt_store_a(
    float* stage, const float4 (&ra)[WarpTile<BK, BN>::A_LOADS]) {
    const int tid = threadIdx.x;
    float* a_t = stage + ((tid % 2) * 4) * WT_A_LD + tid / 2;
#pragma unroll
    for (int j = 0; j < WarpTile<BK, BN>::A_LOADS; ++j) {
        a_t[(8 * j + 0) * WT_A_LD] = ra[j].x;
        a_t[(8 * j + 1) * WT_A_LD] = ra[j].y;
        a_t[(8 * j + 2) * WT_A_LD] = ra[j].z;
        a_t[(8 * j + 3) * WT_A_LD] = ra[j].w;
    }
}
// ANCHOR_END: warp_load

// B into registers: float4 j at k tid/(BN/4) + j*1024/BN, column (tid%(BN/4))*4; the
// store into the stage is one 16-byte store.
template <int BK, int BN>
__device__ __forceinline__ void wt_load_b(const float* __restrict__ b, int N, int K,
                                          int block_col, int k0, bool vec_b,
                                          float4 (&rb)[WarpTile<BK, BN>::B_LOADS]) {
    using T = WarpTile<BK, BN>;
    const int tid = threadIdx.x;
#pragma unroll
    for (int j = 0; j < T::B_LOADS; ++j) {
        const int k = k0 + tid / T::B_LANES + (256 / T::B_LANES) * j;
        const int col = block_col + (tid % T::B_LANES) * 4;
        const float* p = b + (size_t)k * N + col;
        if (vec_b) {
            rb[j] = k < K && col < N ? *reinterpret_cast<const float4*>(p)
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
        } else {
            const bool in = k < K;
            rb[j].x = in && col < N ? p[0] : 0.f;
            rb[j].y = in && col + 1 < N ? p[1] : 0.f;
            rb[j].z = in && col + 2 < N ? p[2] : 0.f;
            rb[j].w = in && col + 3 < N ? p[3] : 0.f;
        }
    }
}
template <int BK, int BN>
__device__ __forceinline__ void wt_store_b(
    float* stage, const float4 (&rb)[WarpTile<BK, BN>::B_LOADS]) {
    using T = WarpTile<BK, BN>;
    const int tid = threadIdx.x;
    float* b_t = stage + T::A_FLOATS + (tid / T::B_LANES) * BN + (tid % T::B_LANES) * 4;
#pragma unroll
    for (int j = 0; j < T::B_LOADS; ++j)
        *reinterpret_cast<float4*>(&b_t[(256 / T::B_LANES) * j * BN]) = rb[j];
}

// The same elements by cp.async, zero-filled outside the matrices: A as four 4-byte
// copies per float4 (transposed on the way), B as one 16-byte copy (four 4-byte ones
// when N is not a multiple of 4).
template <int BK, int BN>
__device__ __forceinline__ void wt_copy_a(float* stage, const float* __restrict__ a,
                                          int M, int K, int block_row, int k0) {
    const int tid = threadIdx.x;
    const int row = block_row + tid / 2;
    float* a_t = stage + ((tid % 2) * 4) * WT_A_LD + tid / 2;
#pragma unroll
    for (int j = 0; j < WarpTile<BK, BN>::A_LOADS; ++j) {
        const int k = k0 + (tid % 2) * 4 + 8 * j;
        const float* p = a + (size_t)row * K + k;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const bool ok = row < M && k + q < K;
            cp_async_4z(&a_t[(8 * j + q) * WT_A_LD], ok ? p + q : a, ok);
        }
    }
}
template <int BK, int BN>
__device__ __forceinline__ void wt_copy_b(float* stage, const float* __restrict__ b,
                                          int N, int K, int block_col, int k0,
                                          bool vec_b) {
    using T = WarpTile<BK, BN>;
    const int tid = threadIdx.x;
    float* b_t = stage + T::A_FLOATS + (tid / T::B_LANES) * BN + (tid % T::B_LANES) * 4;
#pragma unroll
    for (int j = 0; j < T::B_LOADS; ++j) {
        const int k = k0 + tid / T::B_LANES + (256 / T::B_LANES) * j;
        const int col = block_col + (tid % T::B_LANES) * 4;
        const float* p = b + (size_t)k * N + col;
        float* dst = &b_t[(256 / T::B_LANES) * j * BN];
        if (vec_b) {
            const bool ok = k < K && col < N;
            cp_async_16z(dst, ok ? p : b, ok);
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const bool ok = k < K && col + q < N;
                cp_async_4z(dst + q, ok ? p + q : b, ok);
            }
        }
    }
}

// ANCHOR: warp_step
// One step of k: this thread's 8 values of A and 4*QN of B, each read as float4.
template <int BK, int BN>
__device__ __forceinline__ void wt_read_step(const float* stage, int k, int a_off,
                                             int b_off, float (&fa)[8],
                                             float (&fb)[4 * (BN / 64)]) {
    using T = WarpTile<BK, BN>;
    const float* a_k = stage + k * WT_A_LD + a_off;
    const float* b_k = stage + T::A_FLOATS + k * BN + b_off;
    *reinterpret_cast<float4*>(&fa[0]) = *reinterpret_cast<const float4*>(a_k);
    *reinterpret_cast<float4*>(&fa[4]) = *reinterpret_cast<const float4*>(a_k + 16);
#pragma unroll
    for (int q = 0; q < T::QN; ++q)
        *reinterpret_cast<float4*>(&fb[4 * q]) =
            *reinterpret_cast<const float4*>(b_k + 32 * q);
}
// One k step of the warp tile: 8 x 4 QN FMAs from the registers of that step.
template <int NB>
__device__ __forceinline__ void wt_fma_step(const float (&fa)[8], const float (&fb)[NB],
                                            float (&acc)[8][NB]) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < NB; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
}
// ANCHOR_END: warp_step

// ANCHOR: warp_main
// fetch(s) starts slice s on its way (into registers, or by cp.async into its stage);
// land(s) stores what it left in registers and waits for its copies. Slice s + STAGES
// - 1 is fetched while slice s is multiplied (STAGES = 2 when registers hold a slice).
// One barrier per slice, after land(s + 1): the slice is complete for everyone, and
// everyone has read the stage the next fetch overwrites. With SKIP, a warp whose
// results all lie outside C (the last row or column of tiles) only fetches and lands.
template <int BK, int BN, int STAGES, int MODE, bool SKIP>
__device__ __forceinline__ void sgemm_warp(const float* __restrict__ a,
                                           const float* __restrict__ b,
                                           float* __restrict__ c, int M, int N, int K) {
    using T = WarpTile<BK, BN>;
    constexpr int QN = T::QN;
    static_assert(MODE == WT_ASYNC || STAGES == 2, "registers hold one slice");
    extern __shared__ __align__(16) float smem[];  // (STAGES, T::STAGE)
    const int block_row = blockIdx.y * WT_BM, block_col = blockIdx.x * BN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int a_off = (warp / 2) * 32 + (lane / 8) * 4;        // row in the tile
    const int b_off = (warp % 2) * (BN / 2) + (lane % 8) * 4;  // column in the tile
    const bool vec_a = K % 4 == 0, vec_b = N % 4 == 0;
    const int slices = (K + BK - 1) / BK;
    const bool active = !SKIP || (block_row + (warp / 2) * 32 < M &&
                                  block_col + (warp % 2) * (BN / 2) < N);
    float4 ra[T::A_LOADS], rb[T::B_LOADS];
    auto fetch = [&](int s) {
        float* st = smem + (s % STAGES) * T::STAGE;
        if constexpr (MODE == WT_ASYNC)
            wt_copy_a<BK, BN>(st, a, M, K, block_row, s * BK);
        else
            wt_load_a<BK, BN>(a, M, K, block_row, s * BK, vec_a, ra);
        if constexpr (MODE == WT_REGS)
            wt_load_b<BK, BN>(b, N, K, block_col, s * BK, vec_b, rb);
        else
            wt_copy_b<BK, BN>(st, b, N, K, block_col, s * BK, vec_b);
        if constexpr (MODE != WT_REGS) cp_async_commit();
    };
    auto land = [&](int s) {
        float* st = smem + (s % STAGES) * T::STAGE;
        if constexpr (MODE != WT_ASYNC) wt_store_a<BK, BN>(st, ra);
        if constexpr (MODE == WT_REGS) wt_store_b<BK, BN>(st, rb);
        if constexpr (MODE != WT_REGS) cp_async_wait<STAGES - 2>();
    };
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < slices) {
            fetch(s);
        } else if constexpr (MODE != WT_REGS) {
            cp_async_commit();  // one group per slice, empty past the end
        }
    }
    land(0);
    __syncthreads();
    // Every warp runs the same loop and meets the same barriers; an idle warp (SKIP)
    // only skips the shared-memory reads and the FMAs (active is the same for a warp).
    float acc[8][4 * QN];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4 * QN; ++j) acc[i][j] = 0.0f;
    float fa[2][8], fb[2][4 * QN];
    if (active) wt_read_step<BK, BN>(smem, 0, a_off, b_off, fa[0], fb[0]);
    constexpr int LAST = (BK - 1) % 2;  // the registers that hold step BK - 1
    for (int s = 0; s < slices; ++s) {
        const float* cur = smem + (s % STAGES) * T::STAGE;
        const float* next = smem + ((s + 1) % STAGES) * T::STAGE;
        if (s + STAGES - 1 < slices) fetch(s + STAGES - 1);
        else if constexpr (MODE != WT_REGS) cp_async_commit();
        if (active) {
#pragma unroll
            for (int k = 0; k + 1 < BK; ++k) {
                wt_read_step<BK, BN>(cur, k + 1, a_off, b_off, fa[(k + 1) % 2],
                                     fb[(k + 1) % 2]);
                wt_fma_step(fa[k % 2], fb[k % 2], acc);
            }
        }
        if (s + 1 < slices) {
            land(s + 1);
            __syncthreads();
            if (active)
                wt_read_step<BK, BN>(next, 0, a_off, b_off, fa[1 - LAST], fb[1 - LAST]);
        }
        if (active) wt_fma_step(fa[LAST], fb[LAST], acc);
    }
    if constexpr (MODE != WT_REGS) cp_async_wait<0>();  // no copy outlives the block
    const bool vec_c = N % 4 == 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = block_row + a_off + (i / 4) * 16 + i % 4;
        if (row >= M) continue;
#pragma unroll
        for (int q = 0; q < QN; ++q) {
            const int col = block_col + b_off + 32 * q;
            float* out = c + (size_t)row * N + col;
            if (vec_c && col + 4 <= N) {
                *reinterpret_cast<float4*>(out) =
                    make_float4(acc[i][4 * q], acc[i][4 * q + 1], acc[i][4 * q + 2],
                                acc[i][4 * q + 3]);
            } else {
                for (int j = 0; j < 4; ++j)
                    if (col + j < N) out[j] = acc[i][4 * q + j];
            }
        }
    }
}
// ANCHOR_END: warp_main
