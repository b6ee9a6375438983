/* Programs for issue 10's holes 2-4, one per argument. Each prints what the
 * program can observe (results, and the CUDA error codes the runtime gives
 * at calls whose result does not depend on timing) and exits 0; the GPU suite
 * runs each without and with encore and compares output and exit status.
 *
 *   gpu_do_no_harm sticky          a kernel faults (illegal address) while
 *                                   later launches of a hot loop are held: no
 *                                   hang, the same sticky error at the sync
 *   gpu_do_no_harm smem-lowered    a sequence with 40 KB of dynamic shared
 *                                   memory is captured, then the function's
 *                                   limit is lowered to 16 KB: the next launch
 *                                   must fail at the call, as without encore
 *   gpu_do_no_harm invalid-launch  launches the driver refuses (block too
 *                                   large, grid too large, shared memory above
 *                                   the maximum) in the middle of a hot loop:
 *                                   each returns the driver's error at the call
 *   gpu_do_no_harm set-attribute   cudaFuncSetAttribute before every launch
 *                                   (as CUTLASS does): results only; the replay
 *                                   fraction is read from encore's report
 *   gpu_do_no_harm blocking-copy   (built with --default-stream per-thread as
 *                                   gpu_do_no_harm_ptds) launches, 2 ms of host
 *                                   work, then a blocking copy: the copy must
 *                                   see this iteration's results */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_check.h"

#define N 1024

__global__ void step_k(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a + 1.0f;
}
__global__ void fault_k(float *x, int really) {
    if (really) *(volatile float *)(x + (1ull << 40)) = 1.0f; /* far outside any allocation */
}
__global__ void smem_k(float *x, int n) {
    extern __shared__ float buf[];
    int i = threadIdx.x;
    buf[i] = (float)i;
    __syncthreads();
    if (i < n) x[i] += buf[(i + 1) % blockDim.x];
}

static void hot_iteration(float *x, cudaStream_t s) {
    for (int k = 0; k < 16; k++) step_k<<<N / 256, 256, 0, s>>>(x, 0.5f, N);
}

static int sticky(void) {
    float *x;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    for (int it = 0; it < 10; it++) { /* warm up: encore captures the loop */
        hot_iteration(x, s);
        CHECK(cudaStreamSynchronize(s));
    }
    printf("before fault %.3f\n", checksum(x, N));
    hot_iteration(x, s);                  /* held by encore */
    fault_k<<<1, 1, 0, s>>>(x, 1);        /* faults on the GPU */
    for (int it = 0; it < 5; it++) hot_iteration(x, s); /* may be held; their return codes depend on timing */
    cudaError_t e = cudaStreamSynchronize(s);
    printf("sync after fault: %s\n", cudaGetErrorName(e));
    printf("device sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    printf("malloc after fault: %s\n", cudaGetErrorName(cudaMalloc(&x, 16)));
    return 0;
}

static int smem_lowered(void) {
    float *x;
    cudaStream_t s;
    const int big = 40 * 1024, small = 16 * 1024;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    CHECK(cudaFuncSetAttribute(smem_k, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
    for (int it = 0; it < 10; it++) {
        for (int k = 0; k < 8; k++) smem_k<<<1, 256, big, s>>>(x, N);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s));
    }
    printf("before lowering %.3f\n", checksum(x, N));
    CHECK(cudaFuncSetAttribute(smem_k, cudaFuncAttributeMaxDynamicSharedMemorySize, small));
    int failed_at = -1;
    cudaError_t first = cudaSuccess;
    for (int k = 0; k < 8; k++) {
        smem_k<<<1, 256, big, s>>>(x, N);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess && failed_at < 0) { failed_at = k; first = e; }
    }
    printf("after lowering: first failure at launch %d: %s\n", failed_at, cudaGetErrorName(first));
    printf("sync: %s\n", cudaGetErrorName(cudaStreamSynchronize(s)));
    printf("after %.3f\n", checksum(x, N));
    return 0;
}

static int invalid_launch(void) {
    float *x;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    for (int it = 0; it < 10; it++) {
        hot_iteration(x, s);
        CHECK(cudaStreamSynchronize(s));
    }
    const char *what[] = {"block 2048", "grid.y 70000", "smem 1 MB", "grid 0"};
    for (int t = 0; t < 4; t++) {
        for (int k = 0; k < 8; k++) step_k<<<N / 256, 256, 0, s>>>(x, 0.5f, N); /* held: a hot prefix */
        switch (t) {
        case 0: step_k<<<1, 2048, 0, s>>>(x, 0.5f, N); break;
        case 1: step_k<<<dim3(1, 70000), 32, 0, s>>>(x, 0.5f, N); break;
        case 2: step_k<<<1, 32, 1 << 20, s>>>(x, 0.5f, N); break;
        case 3: step_k<<<0, 32, 0, s>>>(x, 0.5f, N); break;
        }
        printf("%s: %s\n", what[t], cudaGetErrorName(cudaGetLastError()));
        for (int k = 0; k < 8; k++) step_k<<<N / 256, 256, 0, s>>>(x, 0.5f, N);
        CHECK(cudaStreamSynchronize(s));
        printf("  then %.3f\n", checksum(x, N));
    }
    return 0;
}

static int set_attribute(void) {
    float *x;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    for (int it = 0; it < 200; it++) {
        for (int k = 0; k < 16; k++) {
            CHECK(cudaFuncSetAttribute(smem_k, cudaFuncAttributeMaxDynamicSharedMemorySize, 40 * 1024));
            smem_k<<<1, 256, 40 * 1024, s>>>(x, N);
        }
        CHECK(cudaStreamSynchronize(s));
    }
    printf("set-attribute %.3f\n", checksum(x, N));
    return 0;
}

static int blocking_copy(void) {
    float *x;
    float h[N];
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    struct timespec nap = {0, 2000000};
    for (int it = 0; it < 30; it++) {
        hot_iteration(x, 0);           /* the per-thread default stream */
        nanosleep(&nap, NULL);         /* encore's deadline releases what it holds */
        CHECK(cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost));
        double sum = 0;
        for (int i = 0; i < N; i++) sum += h[i];
        printf("iteration %d %.3f\n", it, sum);
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *what = argc == 2 ? argv[1] : "";
    CHECK(cudaSetDevice(0));
    if (!strcmp(what, "sticky")) return sticky();
    if (!strcmp(what, "smem-lowered")) return smem_lowered();
    if (!strcmp(what, "invalid-launch")) return invalid_launch();
    if (!strcmp(what, "set-attribute")) return set_attribute();
    if (!strcmp(what, "blocking-copy")) return blocking_copy();
    fprintf(stderr, "usage: gpu_do_no_harm sticky|smem-lowered|invalid-launch|set-attribute|blocking-copy\n");
    return 2;
}
