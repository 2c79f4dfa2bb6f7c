// Asynchronous copies from global into shared memory (cp.async, PTX of sm_80 and later)
// and their groups, for the kernel files that stream through shared memory:
// hopper_async.cu, hopper_sgemm.cu.

// ANCHOR: cp_async
// Starts a 16-byte copy from global memory into shared memory, past L1 (.cg); the
// thread goes on at once. The copies a thread starts are grouped by commit, and
// wait_group<N> waits until at most N of the thread's groups are still in flight.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// ANCHOR_END: cp_async
