// Thread-block clusters without cooperative_groups (NVRTC ships none of its headers):
// a block's rank in its cluster, the cluster's size, the cluster barrier and a read of
// another block's shared memory, each a PTX instruction or two of sm_90 (no `sm_90a`
// features). Included by the kernel files that launch clusters (hopper_cluster.cu,
// atax.cu).

// ANCHOR: cluster_helpers
// This block's rank in its cluster and the cluster's size in blocks.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned cluster_blocks() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}

// Every thread of every block of the cluster arrives, then waits for all the others.
// Release on arrival and acquire on the wait: writes before the barrier (shared, global
// or another block's shared memory) are visible to every thread of the cluster after
// it.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Reads the word at `local` (an address in this block's shared memory) in the shared
// memory of block `rank` of the cluster: `mapa` turns the address into that block's
// window of the cluster's shared address space.
__device__ __forceinline__ unsigned dsmem_load(const unsigned* local, unsigned rank) {
    unsigned addr = (unsigned)__cvta_generic_to_shared(local);
    unsigned remote, v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                 : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(remote) : "memory");
    return v;
}
// ANCHOR_END: cluster_helpers
