// Kernels of the chapter "Asynchronous memory on Hopper": a tiled copy and a transpose
// moved by the Tensor Memory Accelerator (TMA), with an mbarrier saying when a tile has
// landed. The padded-tile transpose and the plain copy of the same pitched matrices, which
// any GPU runs, are in kernels/hopper_pitched.cu.
//
// Compiled at run time by NVRTC for compute_90: cp.async.bulk.tensor and the mbarrier's
// transaction counts are PTX of sm_90. Matrices are row-major with a row pitch (in
// elements) that may exceed the row length: the TMA needs every row to start on a
// 16-byte boundary, which a side that is not a multiple of 4 floats only has when
// pitched.
// Needs: compute capability 9.0 (the tensor memory accelerator and its transaction barriers).

// A CUtensorMap as the kernel receives it: 128 opaque bytes, encoded on the host by
// cuTensorMapEncodeTiled and passed by value as a `const __grid_constant__` parameter.
struct __align__(64) TensorMap {
    unsigned long long opaque[16];
};

// ANCHOR: mbarrier
// An mbarrier in shared memory counts arrivals and, since sm_90, bytes: a TMA copy
// completes its bytes on it, and the phase flips once the expected arrivals and bytes
// are in.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)),
                 "r"(arrivals));
    // The initialised barrier must be visible to the TMA (the async proxy).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// One arrival that also announces `bytes` to come.
__device__ __forceinline__ void mbar_expect_bytes(unsigned long long* bar,
                                                  unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                     smem_addr(bar)),
                 "r"(bytes)
                 : "memory");
}
// Spins until the barrier's phase `parity` has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{\n\t.reg .pred p;\n\t"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
            "selp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
    }
}
// ANCHOR_END: mbarrier

// ANCHOR: tma_ops
// The box of `map` whose first element is at (column x, row y) into shared memory; the
// bytes complete on `bar`. Elements outside the tensor arrive as zeros.
__device__ __forceinline__ void tma_load_2d(void* smem, const TensorMap* map, int x,
                                            int y, unsigned long long* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(smem)),
        "l"(map), "r"(x), "r"(y), "r"(smem_addr(bar))
        : "memory");
}
// The box at (x, y) of `map` from shared memory; elements outside the tensor are not
// written. Waits until the TMA has read the shared memory (it may then be reused).
__device__ __forceinline__ void tma_store_2d(const TensorMap* map, int x, int y,
                                             const void* smem) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"
                 " [%0, {%1, %2}], [%3];" ::"l"(map),
                 "r"(x), "r"(y), "r"(smem_addr(smem))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
// Makes this thread's ordinary shared-memory writes visible to the TMA.
__device__ __forceinline__ void fence_to_tma() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// ANCHOR_END: tma_ops

#define TILE 32

// ANCHOR: tma_copy
// Copies a matrix tile by tile: one thread asks the TMA for a 32 x 32 box, every thread
// waits on the mbarrier, and the same thread hands the box back to the TMA for the
// store. No thread computes an address or loads an element. Launch: grid (ceil(cols /
// 32), ceil(rows / 32)); blocks of 32 threads.
extern "C" __global__ void tma_copy(const __grid_constant__ TensorMap src,
                                    const __grid_constant__ TensorMap dst) {
    __shared__ __align__(128) float tile[TILE * TILE];
    __shared__ __align__(8) unsigned long long bar;
    const int x = blockIdx.x * TILE, y = blockIdx.y * TILE;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        mbar_expect_bytes(&bar, sizeof(tile));  // the whole box, edges included
        tma_load_2d(tile, &src, x, y, &bar);
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    mbar_wait(&bar, 0);
    if (threadIdx.x == 0) tma_store_2d(&dst, x, y, tile);
}
// ANCHOR_END: tma_copy

// ANCHOR: tma_transpose
// Element (row, col) of a 32 x 32 float tile whose 128-byte rows the TMA wrote with the
// 128-byte swizzle: the row's eight 16-byte chunks are permuted by XOR with (row % 8),
// so a column read touches 8 different banks instead of 1.
__device__ __forceinline__ int swz(int row, int col) {
    return row * TILE + ((((col >> 2) ^ (row & 7)) << 2) | (col & 3));
}

// out (cols x rows) = in (rows x cols) transposed: the TMA loads a swizzled 32 x 32 box
// of `in`, the block transposes it in shared memory, and the TMA stores it as a box of
// `out`. Launch: grid (ceil(cols / 32), ceil(rows / 32)); blocks of (32, 8) threads.
extern "C" __global__ void tma_transpose(const __grid_constant__ TensorMap in,
                                         const __grid_constant__ TensorMap out) {
    __shared__ __align__(1024) float a[TILE * TILE];  // (row, col) of in, swizzled
    __shared__ __align__(1024) float b[TILE * TILE];  // (col, row): a tile of out
    __shared__ __align__(8) unsigned long long bar;
    const int x = blockIdx.x * TILE, y = blockIdx.y * TILE;
    const int t = threadIdx.y * TILE + threadIdx.x;
    if (t == 0) {
        mbar_init(&bar, 1);
        mbar_expect_bytes(&bar, sizeof(a));
        tma_load_2d(a, &in, x, y, &bar);
    }
    __syncthreads();  // the barrier is initialised before anyone waits on it
    mbar_wait(&bar, 0);
    for (int k = threadIdx.y; k < TILE; k += 8) {  // row k of b is column k of a
        b[swz(k, threadIdx.x)] = a[swz(threadIdx.x, k)];
    }
    fence_to_tma();
    __syncthreads();  // b is complete (and visible to the TMA) before the store
    if (t == 0) tma_store_2d(&out, y, x, b);
}
// ANCHOR_END: tma_transpose
