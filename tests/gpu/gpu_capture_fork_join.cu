/* The program's own capture, with fork/join over events (issue 10, hole 1).
 *
 * Blocking streams (cudaStreamCreate, default flags). A capture begins on s1
 * in the mode given (global by default); s2 and s3 join it through an event
 * wait, memset their buffers, record events, and s1 joins them back. s1 then
 * launches a kernel, waits on the second event, launches a second kernel,
 * copies the result to pinned host memory and adds a host function. The
 * capture ends, the graph is launched ITER times and the sums are printed.
 * A hot loop of small kernels on another, non-blocking stream in a second
 * thread (its capture interaction mode relaxed) runs all the while (so
 * encore holds launches there during the capture). Every CUDA error ends the program with exit status 1, naming the
 * call.
 *
 *   gpu_capture_fork_join [global|thread-local|relaxed] */
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define ITER 20

#define CHECK(call)                                                                            \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "gpu_capture_fork_join: %s failed: %s (%d)\n", #call,             \
                    cudaGetErrorString(e_), (int)e_);                                          \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

__global__ void add_k(int *dst, const int *a, const int *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] += a[i] + b[i];
}
__global__ void scale_k(int *dst, int f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = dst[i] * f + 1;
}
__global__ void tiny_k(float *x, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = x[i] * a + 1.0f;
}

static int host_calls;
static void CUDART_CB on_host(void *arg) { (void)arg; host_calls++; }

static double hot_sum;
static void *hot_loop(void *arg) {
    (void)arg;
    /* This thread synchronises while the main thread may be capturing in
     * global mode: a correct program relaxes its own interaction mode first
     * (without it, its syncs invalidate the capture or fail, with or without
     * encore, depending on timing). */
    cudaStreamCaptureMode relaxed = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&relaxed));
    cudaStream_t s;
    float *x;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, 256 * sizeof(float)));
    CHECK(cudaMemsetAsync(x, 0, 256 * sizeof(float), s));
    for (int it = 0; it < 400; it++) {
        for (int k = 0; k < 32; k++) tiny_k<<<1, 256, 0, s>>>(x, 0.5f);
        CHECK(cudaGetLastError());
        if (it % 8 == 7) CHECK(cudaStreamSynchronize(s));
    }
    float h[256];
    CHECK(cudaMemcpyAsync(h, x, sizeof h, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    for (int i = 0; i < 256; i++) hot_sum += h[i];
    CHECK(cudaFree(x));
    CHECK(cudaStreamDestroy(s));
    return NULL;
}

int main(int argc, char **argv) {
    cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
    if (argc > 1 && !strcmp(argv[1], "thread-local")) mode = cudaStreamCaptureModeThreadLocal;
    else if (argc > 1 && !strcmp(argv[1], "relaxed")) mode = cudaStreamCaptureModeRelaxed;
    else if (argc > 1 && strcmp(argv[1], "global")) {
        fprintf(stderr, "usage: gpu_capture_fork_join [global|thread-local|relaxed]\n");
        return 2;
    }
    CHECK(cudaSetDevice(0));
    /* warm the hot-loop kernel up so encore has layouts and graphs early */
    pthread_t hot;
    pthread_create(&hot, NULL, hot_loop, NULL);

    cudaStream_t s1, s2, s3;
    CHECK(cudaStreamCreate(&s1));
    CHECK(cudaStreamCreate(&s2));
    CHECK(cudaStreamCreate(&s3));
    cudaEvent_t fork, e2, e3;
    CHECK(cudaEventCreate(&fork));
    CHECK(cudaEventCreate(&e2));
    CHECK(cudaEventCreate(&e3));
    int *a, *b, *d, *h;
    CHECK(cudaMalloc(&a, N * sizeof(int)));
    CHECK(cudaMalloc(&b, N * sizeof(int)));
    CHECK(cudaMalloc(&d, N * sizeof(int)));
    CHECK(cudaMallocHost(&h, N * sizeof(int)));
    CHECK(cudaMemset(d, 0, N * sizeof(int)));
    CHECK(cudaDeviceSynchronize());

    cudaGraph_t g;
    cudaGraphExec_t ge;
    CHECK(cudaStreamBeginCapture(s1, mode));
    CHECK(cudaEventRecord(fork, s1));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    CHECK(cudaStreamWaitEvent(s3, fork, 0));
    CHECK(cudaMemsetAsync(a, 1, N * sizeof(int), s2));
    CHECK(cudaMemsetAsync(b, 2, N * sizeof(int), s3));
    CHECK(cudaEventRecord(e2, s2));
    CHECK(cudaEventRecord(e3, s3));
    CHECK(cudaStreamWaitEvent(s1, e2, 0));
    add_k<<<N / 256, 256, 0, s1>>>(d, a, a, N);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamWaitEvent(s1, e3, 0));
    scale_k<<<N / 256, 256, 0, s1>>>(d, 3, N);
    CHECK(cudaGetLastError());
    add_k<<<N / 256, 256, 0, s1>>>(d, b, a, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, s1));
    CHECK(cudaLaunchHostFunc(s1, on_host, NULL));
    CHECK(cudaStreamEndCapture(s1, &g));
    CHECK(cudaGraphInstantiate(&ge, g, 0));

    long long total = 0;
    for (int it = 0; it < ITER; it++) {
        CHECK(cudaGraphLaunch(ge, s1));
        CHECK(cudaStreamSynchronize(s1));
        long long sum = 0;
        for (int i = 0; i < N; i++) sum += h[i];
        total += sum;
        printf("iteration %d sum %lld\n", it, sum);
    }
    pthread_join(hot, NULL);
    printf("total %lld host_calls %d hot_sum %.3f\n", total, host_calls, hot_sum);
    CHECK(cudaGraphExecDestroy(ge));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFreeHost(h));
    return 0;
}
