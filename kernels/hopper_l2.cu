// Kernels of the chapter "Asynchronous memory on Hopper": a kernel that streams a large
// array while it looks up a small table, the workload of the L2 access-policy window,
// and the table read again and again.
// Needs: compute capability 7.0 (plain loads and stores).

// ANCHOR: lookup
// The index of element i's table entry: a multiplicative hash, so lookups land all over
// the table (the CPU reference computes the same in wrapping 32-bit arithmetic).
__device__ __forceinline__ unsigned lookup_index(unsigned i, unsigned table_len) {
    unsigned h = i * 2654435761u;
    h ^= h >> 15;
    return h % table_len;
}

// out[i] = stream[i] * table[lookup_index(i)] over n4 float4s: the stream is read once,
// the table again and again (one 4-byte lookup, one 32-byte sector, per float4).
// Launch: 1D grid, one thread per float4; blocks of 256 threads.
extern "C" __global__ void l2_lookup(const float* __restrict__ table,
                                     unsigned table_len,
                                     const float4* __restrict__ stream,
                                     float4* __restrict__ out, long long n4) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n4) return;
    const float t = table[lookup_index((unsigned)i, table_len)];
    const float4 v = stream[i];
    out[i] = make_float4(v.x * t, v.y * t, v.z * t, v.w * t);
}
// ANCHOR_END: lookup

// ANCHOR: reread
// Four 32-bit words summed with wrapping arithmetic (the CPU does the same).
__device__ __forceinline__ unsigned sum4(uint4 v) { return v.x + v.y + v.z + v.w; }

// A table reused across a stream: the block sums its share of the table, copies its
// share of the stream (`in` to `out`), then, if `twice`, sums the table again, walking
// it backwards. Between a line's two uses 2 x 16 x n4s bytes of stream pass through L2.
// Each block writes first + 2 * second (wrapping) after the stream, at
// ((unsigned*)(out + n4s))[blockIdx.x], so the check sees both passes. Launch: a 1-D
// grid whose blocks are all resident at once (the passes then run in step across the
// GPU), 256 threads.
extern "C" __global__ void l2_reread(const uint4* __restrict__ table, long long n4t,
                                     const uint4* __restrict__ in,
                                     uint4* __restrict__ out, long long n4s,
                                     int twice) {
    unsigned* partial = (unsigned*)(out + n4s);  // gridDim.x words after the stream
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned once = 0, second = 0;
    for (long long i = first; i < n4t; i += stride) once += sum4(table[i]);
    for (long long i = first; i < n4s; i += stride) out[i] = in[i];
    for (long long i = first; twice && i < n4t; i += stride)
        second += sum4(table[n4t - 1 - i]);
    unsigned s = once + 2u * second;
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
    __shared__ unsigned warp_sum[32];  // one per warp of the block
    if (threadIdx.x % 32 == 0) warp_sum[threadIdx.x / 32] = s;
    __syncthreads();  // every warp's sum is in before thread 0 adds them
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int w = 0; w < (int)(blockDim.x + 31) / 32; ++w) total += warp_sum[w];
        partial[blockIdx.x] = total;
    }
}
// ANCHOR_END: reread
