// Kernels of the chapter "Asynchronous memory on Hopper": the synchronisation ladder's
// cluster rungs (rounds through distributed shared memory, and the barrier alone with a
// release or a relaxed arrival), and an exchange between the blocks of a cluster
// through distributed shared memory or through global memory. The other rungs are in
// kernels/hopper_sync.cu.
//
// Cluster barriers, `mapa` and `ld.shared::cluster` are PTX of sm_90 (no `sm_90a`
// features are used), written in kernels/cluster.cuh.
// Needs: compute capability 9.0 (thread-block clusters and distributed shared memory).

#include "cluster.cuh"

__device__ __forceinline__ unsigned warp_sum(unsigned v) {
    for (int d = 16; d > 0; d >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, d);
    }
    return v;
}

// The same rounds with the cluster barrier: thread 0 writes the round number into its
// own shared memory; after the barrier, the last thread reads it from the next block of
// the cluster through distributed shared memory. Launch: 1D grid of clusters
// (cuLaunchKernelEx); any block size.
extern "C" __global__ void ladder_cluster(int iters, unsigned* __restrict__ errors) {
    __shared__ unsigned slot;
    const unsigned next = (cluster_rank() + 1) % cluster_blocks();
    unsigned bad = 0;
    for (int i = 0; i < iters; ++i) {
        if (threadIdx.x == 0) *(volatile unsigned*)&slot = i + 1;
        cluster_sync();  // every block's write is visible to the cluster
        if (threadIdx.x == blockDim.x - 1)
            bad += (dsmem_load(&slot, next) != (unsigned)(i + 1));
        cluster_sync();  // every read is done before the next write
    }
    if (threadIdx.x == blockDim.x - 1) errors[blockIdx.x] = bad;
}

// The cluster barrier alone: `iters` arrivals and waits with no memory access between
// them. No compiler removes a barrier; the count of passes is kept by an asm statement
// that NVVM may neither drop nor fold into `iters`: a loop cut short fails the check.
// passed[block] = iters when every barrier was passed.
// Launch: 1D grid of clusters (cuLaunchKernelEx); any block size.
// Parameters: (iters, passed[grid]).
extern "C" __global__ void barrier_cluster(int iters, unsigned* __restrict__ passed) {
    unsigned count = 0;
    for (int i = 0; i < iters; ++i) {
        cluster_sync();
        asm volatile("add.u32 %0, %0, 1;" : "+r"(count));
    }
    if (threadIdx.x == blockDim.x - 1) passed[blockIdx.x] = count;
}

// The same with a relaxed arrival: `barrier.cluster.arrive.relaxed` releases no write
// (the wait still acquires), so the difference from barrier_cluster is what the release
// costs. Safe here only because nothing is read across the barrier.
// Launch and parameters as barrier_cluster.
extern "C" __global__ void barrier_cluster_relaxed(int iters,
                                                   unsigned* __restrict__ passed) {
    unsigned count = 0;
    for (int i = 0; i < iters; ++i) {
        asm volatile("barrier.cluster.arrive.relaxed.aligned;\n\t"
                     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
        asm volatile("add.u32 %0, %0, 1;" : "+r"(count));
    }
    if (threadIdx.x == blockDim.x - 1) passed[blockIdx.x] = count;
}

// The block's sum of its `per_block` words of `in`, in thread 0 (wrapping unsigned
// sums: exact, whatever the order).
__device__ unsigned block_sum(const unsigned* __restrict__ in, int per_block) {
    __shared__ unsigned warp_sums[32];
    const unsigned* mine = in + (unsigned long long)blockIdx.x * per_block;
    unsigned s = 0;
    for (int i = threadIdx.x; i < per_block; i += blockDim.x) s += mine[i];
    s = warp_sum(s);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();  // every warp's sum is written
    s = 0;
    if (threadIdx.x < 32) {
        s = threadIdx.x < (blockDim.x + 31) / 32 ? warp_sums[threadIdx.x] : 0;
        s = warp_sum(s);
    }
    return s;
}

// ANCHOR: exchange_dsmem
// `rounds` all-reduces inside each cluster: every block publishes a value in its own
// shared memory, and after the barrier each block's first warp reads all of the
// cluster's values from their blocks' shared memory (lane t from block t) and adds
// them. out[block] = sum over rounds r of (sum over the cluster's blocks of (partial +
// r)). Launch: 1D grid of clusters of at most 32 blocks; blocks of 256 threads.
// Parameters: (in[grid * per_block], per_block, rounds, out[grid]).
extern "C" __global__ void exchange_dsmem(const unsigned* __restrict__ in,
                                          int per_block, int rounds,
                                          unsigned* __restrict__ out) {
    __shared__ unsigned slot;
    const unsigned partial = block_sum(in, per_block);
    const unsigned blocks = cluster_blocks();
    unsigned acc = 0;
    for (int r = 0; r < rounds; ++r) {
        if (threadIdx.x == 0) *(volatile unsigned*)&slot = partial + r;
        cluster_sync();  // every block's value is published
        if (threadIdx.x < 32) {
            unsigned v = threadIdx.x < blocks ? dsmem_load(&slot, threadIdx.x) : 0;
            acc += warp_sum(v);
        }
        cluster_sync();  // every read is done before the next round's write
    }
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
// ANCHOR_END: exchange_dsmem

// The same all-reduces through global memory: each block publishes into slots[block],
// and the readers load their cluster's slots past L1 (ld.global.cg) after the same
// barrier. Parameters: (in, per_block, rounds, slots[grid], out[grid]).
extern "C" __global__ void exchange_global(const unsigned* __restrict__ in,
                                           int per_block, int rounds,
                                           unsigned* __restrict__ slots,
                                           unsigned* __restrict__ out) {
    const unsigned partial = block_sum(in, per_block);
    const unsigned blocks = cluster_blocks();
    const unsigned first = blockIdx.x - cluster_rank();
    unsigned acc = 0;
    for (int r = 0; r < rounds; ++r) {
        if (threadIdx.x == 0) __stcg(&slots[blockIdx.x], partial + r);
        cluster_sync();  // every block's value is in L2
        if (threadIdx.x < 32) {
            unsigned v = threadIdx.x < blocks ? __ldcg(&slots[first + threadIdx.x]) : 0;
            acc += warp_sum(v);
        }
        cluster_sync();  // every read is done before the next round's write
    }
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
