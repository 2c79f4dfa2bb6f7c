// What the two files of the tiled CMM program share: kernels/cmm_tiled.cu (every
// kernel but one) and kernels/cmm_tiled_async.cu (the 32-bit min-plus kernel, which streams
// its strips with cp.async). The keys, the tiles and the batch layout are described at the
// top of kernels/cmm_tiled.cu.

typedef unsigned long long u64;
typedef unsigned int u32;

#define TILE 64
#define THREADS 256                               // minplus: 16 x 16 threads, 4 x 4 cells each
#define SPLIT_BITS 16
#define HALF 32                                   // minplus: c values staged per pass

// Many chains in one launch (the batch): chain z = blockIdx.z has its n + 1 dimensions at
// dims_global + z (n + 1) and its stride x stride keys at key_global + z stride^2. A single
// chain is the batch of one (gridDim.z = 1).
__device__ __forceinline__ size_t chain_offset_dims(int n)
{
    return (size_t)blockIdx.z * (size_t)(n + 1);
}
__device__ __forceinline__ size_t chain_offset_keys(int stride)
{
    return (size_t)blockIdx.z * (size_t)stride * (size_t)stride;
}
