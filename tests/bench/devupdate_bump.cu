// The program's kernel for devupdate_driver_probe.c (its own module, as a program's would be):
//   nvcc -arch=sm_90 -cubin devupdate_bump.cu -o bump.cubin
extern "C" __global__ void bump(float *x, int n, float v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] + v;
}
