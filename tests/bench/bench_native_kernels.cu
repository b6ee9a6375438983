// Kernels of bench_native on a GPU (compiled to PTX; on the simulated driver
// bench_native loads tests/prog's libprogkernels.so, which has the same names
// and parameters).
__device__ __forceinline__ unsigned mix32(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

extern "C" __global__ void fill(unsigned *dst, unsigned v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = v + i;
}

extern "C" __global__ void mix(unsigned *dst, unsigned salt, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = mix32(dst[i] ^ salt ^ (i * 0x9e3779b9u));
}

extern "C" __global__ void add(unsigned *dst, const unsigned *src, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] += src[i];
}
