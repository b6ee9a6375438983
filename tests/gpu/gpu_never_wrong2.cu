/* Programs for issue 26's holes 1-3 on a real GPU, one per argument. Each
 * prints what the program can observe (results, and the CUDA error codes of
 * calls whose result does not depend on timing) and exits 0; the GPU suite
 * runs each without and with encore and compares output and exit status.
 *
 *   gpu_never_wrong2 graph-waits-held-record
 *       stream A: an increment of x, an event record of E, more work; on
 *       stream B, between them, the program's own graph: an event-wait node
 *       on E, then a kernel copying x to y. The graph must see this
 *       iteration's record of E (y == x), although encore may be holding it
 *       with A's launches.
 *   gpu_never_wrong2 registration-dies-with-reset
 *       a host buffer registered with cudaHostRegister, copied from in a hot
 *       loop; then cudaDeviceReset (the registration is gone, the buffer is
 *       pageable again); the loop goes on with the buffer overwritten right
 *       after each cudaMemcpyAsync (legal for pageable memory: the copy is
 *       staged before the call returns)
 *   gpu_never_wrong2 misaligned-memset
 *       a hot loop with cuMemsetD32Async; then one memset on an address that
 *       is not 4-byte aligned: the call must return the driver's error, and
 *       the results after it must not change */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"

#define N 1024

__global__ void inc_k(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
__global__ void copy_k(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
__global__ void mix_k(float *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = z[i] * 0.5f + 1.0f;
}

static int graph_waits_held_record(void) {
    float *x, *y, *z;
    cudaStream_t a, b;
    cudaEvent_t e;
    CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&y, N * sizeof(float)));
    CHECK(cudaMalloc(&z, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    CHECK(cudaMemset(y, 0, N * sizeof(float)));
    CHECK(cudaMemset(z, 0, N * sizeof(float)));
    CHECK(cudaEventRecord(e, a));
    CHECK(cudaDeviceSynchronize());

    /* the program's own graph: wait on E, then y = x */
    cudaGraph_t g;
    cudaGraphNode_t wait, copy;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddEventWaitNode(&wait, g, NULL, 0, e));
    cudaKernelNodeParams kp = {};
    int n = N;
    void *args[] = {&y, &x, &n};
    kp.func = (void *)copy_k;
    kp.gridDim = dim3(N / 256);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&copy, g, &wait, 1, &kp));
    cudaGraphExec_t ge;
    CHECK(cudaGraphInstantiate(&ge, g, 0));

    for (int it = 0; it < 40; it++) {
        inc_k<<<N / 256, 256, 0, a>>>(x, N);
        CHECK(cudaEventRecord(e, a));
        for (int k = 0; k < 4; k++) mix_k<<<N / 256, 256, 0, a>>>(z, N);
        CHECK(cudaGraphLaunch(ge, b));
        for (int k = 0; k < 4; k++) mix_k<<<N / 256, 256, 0, a>>>(z, N);
        float h;
        CHECK(cudaStreamSynchronize(b)); /* the graph, and through its wait node A's increment */
        CHECK(cudaMemcpy(&h, y, sizeof h, cudaMemcpyDeviceToHost));
        printf("iteration %d y[0] %.1f\n", it, h);
    }
    CHECK(cudaDeviceSynchronize());
    printf("x %.3f y %.3f z %.3f\n", checksum(x, N), checksum(y, N), checksum(z, N));
    return 0;
}

static void register_loop(float *buf, float *d, cudaStream_t s, int from, int to, int scribble) {
    for (int it = from; it < to; it++) {
        for (int i = 0; i < N; i++) buf[i] = (float)(it * 3 + i % 5);
        CHECK(cudaMemcpyAsync(d, buf, N * sizeof(float), cudaMemcpyHostToDevice, s));
        if (scribble) memset(buf, 0xff, N * sizeof(float)); /* legal for pageable memory */
        for (int k = 0; k < 4; k++) inc_k<<<N / 256, 256, 0, s>>>(d, N);
        CHECK(cudaStreamSynchronize(s));
        printf("iteration %d %.3f\n", it, checksum(d, N));
    }
}

static int registration_dies_with_reset(void) {
    float *buf = (float *)aligned_alloc(4096, N * sizeof(float));
    float *d;
    cudaStream_t s;
    CHECK(cudaHostRegister(buf, N * sizeof(float), cudaHostRegisterDefault));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    register_loop(buf, d, s, 0, 10, 0);
    CHECK(cudaDeviceReset()); /* the registration, the stream and d are gone */
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&d, N * sizeof(float)));
    register_loop(buf, d, s, 10, 40, 1);
    free(buf);
    return 0;
}

static int misaligned_memset(void) {
    float *x, *m;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&x, N * sizeof(float)));
    CHECK(cudaMalloc(&m, N * sizeof(float)));
    CHECK(cudaMemset(x, 0, N * sizeof(float)));
    CHECK(cudaMemset(m, 0, N * sizeof(float)));
    for (int it = 0; it < 20; it++) {
        inc_k<<<N / 256, 256, 0, s>>>(x, N);
        CUresult r = cuMemsetD32Async((CUdeviceptr)m, 0x3f800000u + it, N / 2, (CUstream)s);
        if (r != CUDA_SUCCESS) printf("aligned memset %d: %d\n", it, (int)r);
        inc_k<<<N / 256, 256, 0, s>>>(x, N);
        CHECK(cudaStreamSynchronize(s));
    }
    inc_k<<<N / 256, 256, 0, s>>>(x, N);
    CUresult r = cuMemsetD32Async((CUdeviceptr)m + 2, 0x40000000u, N / 2, (CUstream)s);
    printf("misaligned memset: %d\n", (int)r);
    inc_k<<<N / 256, 256, 0, s>>>(x, N);
    printf("sync: %s\n", cudaGetErrorName(cudaStreamSynchronize(s)));
    printf("x %.3f m %.3f\n", checksum(x, N), checksum(m, N));
    return 0;
}

int main(int argc, char **argv) {
    const char *what = argc == 2 ? argv[1] : "";
    CHECK(cudaSetDevice(0));
    if (!strcmp(what, "graph-waits-held-record")) return graph_waits_held_record();
    if (!strcmp(what, "registration-dies-with-reset")) return registration_dies_with_reset();
    if (!strcmp(what, "misaligned-memset")) return misaligned_memset();
    fprintf(stderr, "usage: gpu_never_wrong2 graph-waits-held-record|registration-dies-with-reset|misaligned-memset\n");
    return 2;
}
