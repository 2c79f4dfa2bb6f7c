// Kernels of the chapter "Asynchronous memory on Hopper": the synchronisation ladder's
// rungs that any GPU runs, a barrier of a block and a barrier of the whole grid, each
// in two forms: rounds that write and check a value between two barriers, and the
// barrier alone in a loop. The cluster rungs and the exchanges between the blocks of a
// cluster are in kernels/hopper_cluster.cu.
//
// NVRTC ships no cooperative_groups header, so the grid barrier is written here.
// Needs: compute capability 7.0 (the block and grid barriers of any supported GPU).

// ANCHOR: ladder_block
// The ladder's first rung: `iters` rounds of two __syncthreads. Thread 0 writes the
// round number, the block's last thread (another warp) checks it after the first
// barrier; the second barrier keeps the next write from overtaking the check.
// errors[block] counts the rounds whose check failed: 0 when every barrier held.
// Launch: any 1D grid; any block size. Parameters: (iters, errors).
extern "C" __global__ void ladder_block(int iters, unsigned* __restrict__ errors) {
    __shared__ volatile unsigned slot;
    unsigned bad = 0;
    for (int i = 0; i < iters; ++i) {
        if (threadIdx.x == 0) slot = i + 1;
        __syncthreads();  // the write is visible to the whole block
        if (threadIdx.x == blockDim.x - 1) bad += (slot != (unsigned)(i + 1));
        __syncthreads();  // the check is done before the next write
    }
    if (threadIdx.x == blockDim.x - 1) errors[blockIdx.x] = bad;
}
// ANCHOR_END: ladder_block

// ANCHOR: barrier_block
// The same rung without the round: `iters` __syncthreads and no memory access between
// them. No compiler removes a barrier; the count of passes is kept by an asm statement
// that NVVM may neither drop nor fold into `iters`: a loop cut short fails the check.
// passed[block] = iters when every barrier was passed.
// Launch: any 1D grid; any block size. Parameters: (iters, passed).
extern "C" __global__ void barrier_block(int iters, unsigned* __restrict__ passed) {
    unsigned count = 0;
    for (int i = 0; i < iters; ++i) {
        __syncthreads();
        asm volatile("add.u32 %0, %0, 1;" : "+r"(count));
    }
    if (threadIdx.x == blockDim.x - 1) passed[blockIdx.x] = count;
}
// ANCHOR_END: barrier_block

// ANCHOR: grid_barrier
// A barrier across the grid, safe only when every block is resident at once (a
// cooperative launch guarantees it): one thread per block arrives on a counter; the
// last to arrive resets it and advances the generation the others spin on. `bar` holds
// (count, generation), zero before the first launch.
__device__ void grid_sync(unsigned* bar) {
    __syncthreads();  // the block's writes precede its arrival
    if (threadIdx.x == 0) {
        volatile unsigned* generation = bar + 1;
        const unsigned g = *generation;
        __threadfence();  // release: the block's writes before the arrival
        if (atomicAdd(&bar[0], 1) == gridDim.x - 1) {
            atomicExch(&bar[0], 0);
            __threadfence();
            atomicAdd(&bar[1], 1);
        } else {
            while (*generation == g) {
            }
        }
        __threadfence();  // acquire: the other blocks' writes after the barrier
    }
    __syncthreads();  // the whole block waits for its thread 0
}
// ANCHOR_END: grid_barrier

// The same rounds with the grid barrier: each block writes its slot in global memory
// and, after the barrier, checks the next block's.
// Launch: cooperative, 1D grid no larger than the resident blocks; any block size.
// Parameters: (iters, bar[2] zeroed, slots[grid], errors[grid]).
extern "C" __global__ void ladder_grid(int iters, unsigned* __restrict__ bar,
                                       unsigned* __restrict__ slots,
                                       unsigned* __restrict__ errors) {
    const unsigned next = (blockIdx.x + 1) % gridDim.x;
    unsigned bad = 0;
    for (int i = 0; i < iters; ++i) {
        if (threadIdx.x == 0) ((volatile unsigned*)slots)[blockIdx.x] = i + 1;
        grid_sync(bar);  // every block's write is visible to the grid
        if (threadIdx.x == blockDim.x - 1)
            bad += (((volatile unsigned*)slots)[next] != (unsigned)(i + 1));
        grid_sync(bar);  // every read is done before the next write
    }
    if (threadIdx.x == blockDim.x - 1) errors[blockIdx.x] = bad;
}

// The grid barrier alone: `iters` grid barriers and no write or check between them,
// counted as in barrier_block. passed[block] = iters when every barrier was passed.
// Launch: cooperative, 1D grid no larger than the resident blocks; any block size.
// Parameters: (iters, bar[2] zeroed, passed[grid]).
extern "C" __global__ void barrier_grid(int iters, unsigned* __restrict__ bar,
                                        unsigned* __restrict__ passed) {
    unsigned count = 0;
    for (int i = 0; i < iters; ++i) {
        grid_sync(bar);
        asm volatile("add.u32 %0, %0, 1;" : "+r"(count));
    }
    if (threadIdx.x == blockDim.x - 1) passed[blockIdx.x] = count;
}
