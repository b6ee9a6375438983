/* encore demo on the simulated driver: demo.cu's loop through the driver API.
 *
 * The same iteration as demo.cu (a copy of the solution, 40 steps of five
 * tiny kernels, one kernel measuring the change, one synchronous copy of that
 * scalar to the host: 202 launches an iteration on the legacy default stream,
 * the same arguments every iteration), written against cuda.h and linked with the simulated
 * libcuda.so.1, whose "kernels" are the host functions in libdemokernels.so
 * (demo_kernels.c). Fewer iterations than demo.cu: it is there to show what
 * encore does, not how fast.
 *
 *   demo_sim [--test] [iterations (default 100)]
 *
 * Stdout as demo.cu's. --test (for the CTest test, which compares stdout
 * byte for byte with and without encore) leaves out the time line and prints
 * "launches_made=<N>" on stderr. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define STEPS 40
#define WARMUP 5
#define THREADS 256
#define BLOCKS 16

#ifndef DEMO_KERNELS_PATH
#error "DEMO_KERNELS_PATH (absolute path of libdemokernels.so) must be defined"
#endif

static void check(CUresult r, const char *what, int line)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "?";
    fprintf(stderr, "demo_sim: %s failed at line %d: %s\n", what, line, name);
    exit(2);
}
#define CHECK(x) check((x), #x, __LINE__)

static unsigned long long launches;

static void launch(CUfunction fn, unsigned grid, void **params)
{
    CHECK(cuLaunchKernel(fn, grid, 1, 1, THREADS, 1, 1, 0, NULL /* legacy default stream */, params, NULL));
    launches++;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < len; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    int test = 0, iterations = 100;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--test"))
            test = 1;
        else if ((iterations = atoi(argv[i])) < 1) {
            fprintf(stderr, "usage: demo_sim [--test] [iterations (default 100)]\n");
            return 2;
        }
    }

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction k_jacobi, k_axpy, k_scale_shift, k_clamp, k_copy, k_change;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, "simcuda:" DEMO_KERNELS_PATH));
    CHECK(cuModuleGetFunction(&k_jacobi, mod, "jacobi"));
    CHECK(cuModuleGetFunction(&k_axpy, mod, "axpy"));
    CHECK(cuModuleGetFunction(&k_scale_shift, mod, "scale_shift"));
    CHECK(cuModuleGetFunction(&k_clamp, mod, "clamp"));
    CHECK(cuModuleGetFunction(&k_copy, mod, "copy"));
    CHECK(cuModuleGetFunction(&k_change, mod, "change"));

    const float h = 1.0f / (N + 1);
    float h2 = h * h;
    int n = N;
    CUdeviceptr u, v, f, w, old, res;
    CHECK(cuMemAlloc(&u, N * sizeof(float)));
    CHECK(cuMemAlloc(&v, N * sizeof(float)));
    CHECK(cuMemAlloc(&f, N * sizeof(float)));
    CHECK(cuMemAlloc(&w, N * sizeof(float)));
    CHECK(cuMemAlloc(&old, N * sizeof(float)));
    CHECK(cuMemAlloc(&res, sizeof(float)));

    static float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)((i * 37) % 101) / 101.0f - 0.25f;
    CHECK(cuMemcpyHtoD(f, host, N * sizeof(float)));
    CHECK(cuMemsetD32(u, 0, N));
    CHECK(cuMemsetD32(v, 0, N));
    CHECK(cuMemsetD32(w, 0, N));

    /* Parameters: kernelParams point at these; their values never change, so
     * every iteration's launches are identical. */
    float a[STEPS], sc = 0.999f, t[STEPS], lo = -4.0f, hi = 4.0f;
    for (int s = 0; s < STEPS; s++) {
        a[s] = 0.25f + 0.01f * (float)(s % 7);
        t[s] = 0.0001f * (float)(s % 3);
    }
    void *p_jacobi_uv[] = {&v, &u, &f, &h2, &n};
    void *p_jacobi_vu[] = {&u, &v, &f, &h2, &n};
    void *p_clamp[] = {&w, &lo, &hi, &n};
    void *p_copy[] = {&old, &u, &n};
    void *p_change[] = {&res, &u, &old, &n};

    uint64_t sum = 1469598103934665603ull;
    float r = 0.0f;
    double t0 = 0.0;
    for (int it = 0; it < WARMUP + iterations; it++) {
        if (it == WARMUP)
            t0 = now_us();
        launch(k_copy, BLOCKS, p_copy);
        for (int s = 0; s < STEPS; s++) {
            void *p_axpy[] = {&w, &u, &a[s], &n};
            void *p_scale_shift[] = {&w, &sc, &t[s], &n};
            launch(k_jacobi, BLOCKS, p_jacobi_uv);
            launch(k_jacobi, BLOCKS, p_jacobi_vu);
            launch(k_axpy, BLOCKS, p_axpy);
            launch(k_scale_shift, BLOCKS, p_scale_shift);
            launch(k_clamp, BLOCKS, p_clamp);
        }
        launch(k_change, 1, p_change);
        CHECK(cuMemcpyDtoH(&r, res, sizeof r)); /* the host waits here */
        sum = fnv1a(sum, &r, sizeof r);
    }
    double us = (now_us() - t0) / iterations;

    CHECK(cuMemcpyDtoH(host, u, N * sizeof(float)));
    sum = fnv1a(sum, host, N * sizeof(float));
    CHECK(cuMemcpyDtoH(host, w, N * sizeof(float)));
    sum = fnv1a(sum, host, N * sizeof(float));

    printf("demo: %d tiny kernels and 1 copy to the host per iteration, %d warm-up + %d timed iterations "
           "(simulated driver)\n",
           STEPS * 5 + 2, WARMUP, iterations);
    printf("iterations %d\n", iterations);
    printf("launches_per_iteration %d\n", STEPS * 5 + 2);
    if (!test)
        printf("us_per_iteration %.1f\n", us);
    printf("change %.6g\n", (double)r);
    printf("checksum %016llx\n", (unsigned long long)sum);
    fflush(stdout);
    if (test)
        fprintf(stderr, "launches_made=%llu\n", launches);

    CHECK(cuMemFree(u));
    CHECK(cuMemFree(v));
    CHECK(cuMemFree(f));
    CHECK(cuMemFree(w));
    CHECK(cuMemFree(old));
    CHECK(cuMemFree(res));
    CHECK(cuModuleUnload(mod));
    return 0;
}
