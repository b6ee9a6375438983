// encore demo: a small iterative solver that launches many tiny kernels.
//
// Each iteration saves the current solution, makes 40 relaxation steps of
// five small kernels (two Jacobi sweeps of a 1-D Poisson problem, then three
// elementwise updates of a smoothed copy), measures how much the solution
// changed with one reduction kernel and copies that scalar back to the host
// with cudaMemcpy (a sync point): 202 launches an iteration, every one with
// the same arguments each iteration. Each kernel runs for a
// few microseconds, so the loop is bound by launch overhead -- the case
// encore is for: it captures the repeating sequence into CUDA graphs once and
// replays them.
//
//   demo [iterations (default 300)]
//
// Everything runs on the legacy default stream; cudart is linked statically
// (nvcc's default). Stdout:
//   demo: <description>
//   iterations <N>
//   launches_per_iteration <L>
//   us_per_iteration <microseconds, host clock, timed iterations only>
//   change <the last iteration's change>
//   checksum <64-bit hash of the final arrays and of every change>
// The checksum must be the same with and without encore.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096          // elements per array: tiny on purpose
#define STEPS 40        // relaxation steps per iteration, 5 kernels each
#define WARMUP 20       // iterations before the clock starts
#define THREADS 256
#define BLOCKS 16

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cudaError_t err_ = (x);                                                          \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "demo: %s failed at line %d: %s\n", #x, __LINE__,           \
                    cudaGetErrorString(err_));                                           \
            exit(2);                                                                     \
        }                                                                                \
    } while (0)
#define CHECK_LAUNCH() CHECK(cudaGetLastError())

// One Jacobi sweep of -u'' = f with u = 0 at both ends: out = (in[i-1] + in[i+1] + h^2 f[i]) / 2.
__global__ void jacobi(float *out, const float *in, const float *f, float h2, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float l = i > 0 ? in[i - 1] : 0.0f;
        float r = i < n - 1 ? in[i + 1] : 0.0f;
        out[i] = 0.5f * (l + r + h2 * f[i]);
    }
}

// old = u
__global__ void copy(float *old, const float *u, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        old[i] = u[i];
}

// w = w * 0.5 + a * u
__global__ void axpy(float *w, const float *u, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        w[i] = w[i] * 0.5f + a * u[i];
}

// w = w * s + t
__global__ void scale_shift(float *w, float s, float t, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        w[i] = w[i] * s + t;
}

// w = clamp(w, lo, hi)
__global__ void clamp(float *w, float lo, float hi, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        w[i] = fminf(fmaxf(w[i], lo), hi);
}

// res[0] = sum |u[i] - old[i]|: one block, fixed order (deterministic).
__global__ void change(float *res, const float *u, const float *old, int n)
{
    __shared__ float part[THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += fabsf(u[i] - old[i]);
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        res[0] = part[0];
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
    int iterations = argc > 1 ? atoi(argv[1]) : 300;
    if (iterations < 1) {
        fprintf(stderr, "usage: demo [iterations (default 300)]\n");
        return 2;
    }
    const float h = 1.0f / (N + 1), h2 = h * h;

    float *u, *v, *f, *w, *old, *res;
    CHECK(cudaMalloc(&u, N * sizeof(float)));
    CHECK(cudaMalloc(&v, N * sizeof(float)));
    CHECK(cudaMalloc(&f, N * sizeof(float)));
    CHECK(cudaMalloc(&w, N * sizeof(float)));
    CHECK(cudaMalloc(&old, N * sizeof(float)));
    CHECK(cudaMalloc(&res, sizeof(float)));

    float *host = (float *)malloc(N * sizeof(float));
    if (!host) {
        fprintf(stderr, "demo: out of memory\n");
        return 2;
    }
    for (int i = 0; i < N; i++)
        host[i] = (float)((i * 37) % 101) / 101.0f - 0.25f; // a bumpy right-hand side
    CHECK(cudaMemcpy(f, host, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(u, 0, N * sizeof(float)));
    CHECK(cudaMemset(v, 0, N * sizeof(float)));
    CHECK(cudaMemset(w, 0, N * sizeof(float)));

    uint64_t sum = 1469598103934665603ull;
    float r = 0.0f;
    double t0 = 0.0;
    for (int it = 0; it < WARMUP + iterations; it++) {
        if (it == WARMUP)
            t0 = now_us();
        copy<<<BLOCKS, THREADS>>>(old, u, N);
        CHECK_LAUNCH();
        for (int s = 0; s < STEPS; s++) {
            jacobi<<<BLOCKS, THREADS>>>(v, u, f, h2, N);
            CHECK_LAUNCH();
            jacobi<<<BLOCKS, THREADS>>>(u, v, f, h2, N);
            CHECK_LAUNCH();
            axpy<<<BLOCKS, THREADS>>>(w, u, 0.25f + 0.01f * (float)(s % 7), N);
            CHECK_LAUNCH();
            scale_shift<<<BLOCKS, THREADS>>>(w, 0.999f, 0.0001f * (float)(s % 3), N);
            CHECK_LAUNCH();
            clamp<<<BLOCKS, THREADS>>>(w, -4.0f, 4.0f, N);
            CHECK_LAUNCH();
        }
        change<<<1, THREADS>>>(res, u, old, N);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(&r, res, sizeof r, cudaMemcpyDeviceToHost)); // the host waits here
        sum = fnv1a(sum, &r, sizeof r);
    }
    double us = (now_us() - t0) / iterations;

    CHECK(cudaMemcpy(host, u, N * sizeof(float), cudaMemcpyDeviceToHost));
    sum = fnv1a(sum, host, N * sizeof(float));
    CHECK(cudaMemcpy(host, w, N * sizeof(float), cudaMemcpyDeviceToHost));
    sum = fnv1a(sum, host, N * sizeof(float));

    printf("demo: %d tiny kernels and 1 copy to the host per iteration, %d warm-up + %d timed iterations\n",
           STEPS * 5 + 2, WARMUP, iterations);
    printf("iterations %d\n", iterations);
    printf("launches_per_iteration %d\n", STEPS * 5 + 2);
    printf("us_per_iteration %.1f\n", us);
    printf("change %.6g\n", (double)r);
    printf("checksum %016llx\n", (unsigned long long)sum);

    CHECK(cudaFree(u));
    CHECK(cudaFree(v));
    CHECK(cudaFree(f));
    CHECK(cudaFree(w));
    CHECK(cudaFree(old));
    CHECK(cudaFree(res));
    free(host);
    return 0;
}
