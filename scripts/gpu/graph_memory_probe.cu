// Which step of a stream capture keeps device memory after everything is destroyed? (issue 26's
// out-of-memory case: with encore, one 2 MiB block fewer fits after a hot loop it captured.)
// Prints cudaMemGetInfo's free bytes after each step; no encore.  nvcc -arch=sm_90 -o p this.cu
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
__global__ void k(float *x) { x[threadIdx.x] += 1.0f; }
static size_t last;
static void say(const char *what) {
    size_t f, t;
    cudaMemGetInfo(&f, &t);
    printf("%-40s free %zu (%+lld)\n", what, f, (long long)f - (long long)last);
    last = f;
}
int main(void) {
    float *x;
    cudaMalloc(&x, 1024);
    cudaDeviceSynchronize();
    say("start");
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    say("non-blocking stream created");
    cudaEvent_t ev;
    cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    say("event created");
    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    for (int i = 0; i < 3; i++) k<<<1, 32, 0, s>>>(x);
    cudaGraph_t g;
    cudaStreamEndCapture(s, &g);
    say("captured");
    cudaGraphExec_t ge;
    cudaGraphInstantiate(&ge, g, 0);
    say("instantiated");
    cudaGraphLaunch(ge, s);
    cudaStreamSynchronize(s);
    say("launched");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaDeviceSynchronize();
    say("exec and graph destroyed");
    cuCtxSynchronize();
    say("cuCtxSynchronize");
    cudaDeviceGraphMemTrim(0);
    say("cudaDeviceGraphMemTrim");
    cudaStreamDestroy(s);
    cudaDeviceSynchronize();
    say("capture stream destroyed");
    cudaEventDestroy(ev);
    say("event destroyed");
    // a second round on a fresh stream: does the memory come back with the first capture only?
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    k<<<1, 32, 0, s>>>(x);
    k<<<1, 32, 0, s>>>(x);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0);
    cudaGraphLaunch(ge, s);
    cudaStreamSynchronize(s);
    say("second capture, instantiate, launch");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
    cudaDeviceSynchronize();
    say("second round destroyed");
    return 0;
}
