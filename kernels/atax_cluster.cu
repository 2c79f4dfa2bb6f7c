// ATAX's one-launch pass with its blocks grouped in thread-block clusters (the chapter
// "ATAX"); every other kernel of the chapter is in kernels/atax.cu, and what both are
// made of in kernels/atax_pass.cuh.
// Needs: compute capability 9.0 (thread-block clusters and distributed shared memory).

#include "atax_pass.cuh"

// The atomic pass with its blocks grouped in thread-block clusters: the blocks of a
// cluster add their y together through distributed shared memory first, so that each
// column of the accumulator takes one atomic per cluster instead of one per block.
// Cluster barriers and `mapa` are PTX of sm_90; NVRTC ships no cooperative_groups
// header, so they are written in kernels/cluster.cuh, with the cluster's rank and size.
#include "cluster.cuh"

// The address of `local` (a variable in this block's shared memory) in the shared
// memory of block `rank` of the cluster, as a generic pointer: `mapa` without a state
// space maps generic to generic, so plain loads read the peer's copy.
template <typename T>
__device__ __forceinline__ const T* peer_shared(const T* local, unsigned rank) {
    u64 remote;
    asm("mapa.u64 %0, %1, %2;" : "=l"(remote) : "l"(local), "r"(rank));
    return reinterpret_cast<const T*>(remote);
}

// The blocks' shared y: n elements of T in dynamic shared memory (the host sizes it).
// One untyped array, cast, because every instance of the template shares the name.
template <typename T>
__device__ __forceinline__ T* y_shared_of_block() {
    extern __shared__ __align__(16) unsigned char dynamic_shared[];
    return reinterpret_cast<T*>(dynamic_shared);
}

// The most blocks a cluster of fused_cluster may have: the portable limit, which the
// host never exceeds (it tries 8, then 4, 2, 1).
constexpr unsigned MAX_CLUSTER_BLOCKS = 8;

// ANCHOR: fused_cluster
// Counts this cluster done; true in the block that counted the last of the `clusters`.
// Called by block 0 of the cluster right after a cluster barrier. Only thread 0
// fences: a fence is cumulative, it orders before the count every write thread 0 has
// observed, and the barrier's release and acquire made thread 0 observe every atomic
// addition of every thread of the cluster. One fence per cluster, where
// last_block_done takes one per thread.
__device__ bool last_cluster_done(unsigned* count, unsigned clusters) {
    __shared__ bool last_shared;
    if (threadIdx.x == 0) {
        __threadfence();  // the cluster's additions are visible before it counts itself
        last_shared = atomicAdd(count, 1u) == clusters - 1;
    }
    __syncthreads();  // last_shared is written before anyone reads it
    return last_shared;
}

// The pass of fused_rows, its y left in registers; block b of the cluster stores its y
// in its shared memory; after a cluster barrier, block r adds its share of the columns
// (the r-th of `blocks` consecutive ranges) over the cluster's blocks in rank order,
// reading the peers' shared memory, and adds each sum into `acc` with one atomic. A
// second barrier keeps every block (and its shared memory) alive until the peers have
// read it. The last cluster to finish copies acc to y and clears acc and the count, as
// in fused_atomic. Launch: a 1D grid of whole clusters of at most MAX_CLUSTER_BLOCKS
// blocks; blockDim.x a multiple of 32 with blockDim.x * E >= n; n * sizeof(T) bytes
// of dynamic shared memory.
template <typename T, int E>
__device__ void fused_cluster(const T* a, const T* x, T* acc, T* y, unsigned* count,
                              unsigned m, unsigned n) {
    T* y_shared = y_shared_of_block<T>();  // (n): this block's partial y
    const unsigned t = threadIdx.x;
    T y_reg[E];  // element k: column t + k * blockDim.x
    fused_rows_to_registers<T, E>(a, x, y_reg, m, n);
#pragma unroll
    for (int k = 0; k < E; ++k) {
        unsigned j = t + k * blockDim.x;
        if (j < n) y_shared[j] = y_reg[k];
    }
    cluster_sync();  // every block's y is in its shared memory before a peer reads it
    const unsigned rank = cluster_rank(), blocks = cluster_blocks();
    const unsigned share = (n + blocks - 1) / blocks;
    const unsigned end = min(n, (rank + 1) * share);
    for (unsigned j = rank * share + t; j < end; j += blockDim.x) {
        // All the cluster's loads are issued before the first addition waits on one.
        T part[MAX_CLUSTER_BLOCKS];
#pragma unroll
        for (unsigned b = 0; b < MAX_CLUSTER_BLOCKS; ++b)
            part[b] = b < blocks ? *peer_shared(&y_shared[j], b) : T(0);
        T sum = 0;
#pragma unroll
        for (unsigned b = 0; b < MAX_CLUSTER_BLOCKS; ++b)
            sum += part[b];  // in rank order, the same in every launch
        atomicAdd(&acc[j], sum);
    }
    // No block leaves while a peer may still read its shared memory; and block 0 has
    // seen every addition of the cluster when it counts the cluster done.
    cluster_sync();
    if (rank == 0 && last_cluster_done(count, gridDim.x / blocks))
        copy_and_clear(acc, y, count, n);
}
// ANCHOR_END: fused_cluster

// One entry point per instance of fused_once and fused_atomic (kernels/atax.cu):
// atax_fused_cluster_e<E>_<S>.
#define ATAX_FUSED_CLUSTER(T, S, E)                                                                      \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                                \
        atax_fused_cluster_e##E##_##S(const T* a, const T* x, T* sums, T* y, unsigned* sync, unsigned m, \
                                      unsigned n) {                                                      \
        fused_cluster<T, E>(a, x, sums, y, sync, m, n);                                                  \
    }

ATAX_FUSED_CLUSTER(float, f32, 1)
ATAX_FUSED_CLUSTER(float, f32, 2)
ATAX_FUSED_CLUSTER(float, f32, 4)
ATAX_FUSED_CLUSTER(float, f32, 8)
ATAX_FUSED_CLUSTER(float, f32, 16)
ATAX_FUSED_CLUSTER(double, f64, 1)
ATAX_FUSED_CLUSTER(double, f64, 2)
ATAX_FUSED_CLUSTER(double, f64, 4)
ATAX_FUSED_CLUSTER(double, f64, 8)
