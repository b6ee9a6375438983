// encore GPU test: many tiny kernels per iteration.
//
// Built three ways (static cudart, -cudart shared, --default-stream per-thread).
// Each iteration launches ITER_LAUNCHES small kernels (four different bodies)
// on the default stream, then a second phase on a private non-blocking
// stream, copies the buffers back (a sync) and prints a checksum of their bits.
// The sequence repeats identically except for one scalar argument that changes
// every 7th iteration and one launch skipped every 11th iteration, so a
// sequence-replaying layer sees both long repeats and divergences.
// Stdout is deterministic; everything else goes to stderr.
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define ITERS 50
#define ITER_LAUNCHES 200
#define PHASE2_LAUNCHES 40

#define CHECK(x)                                                                     \
    do {                                                                             \
        cudaError_t err_ = (x);                                                      \
        if (err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "prog_loop: %s failed at line %d: %s\n", #x, __LINE__, \
                    cudaGetErrorString(err_));                                       \
            exit(2);                                                                 \
        }                                                                            \
    } while (0)

__global__ void k_axpy(float *y, const float *x, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = y[i] * 0.5f + a * x[i];
}

__global__ void k_scale_shift(float *y, float s, float t, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = y[i] * s + t;
}

__global__ void k_mix_int(uint32_t *d, const float *x, uint32_t salt, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        uint32_t v = d[i] ^ (__float_as_uint(x[i]) + salt);
        d[i] = (v << 7) | (v >> 25);
    }
}

__global__ void k_clamp(float *y, float lo, float hi, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = fminf(fmaxf(y[i], lo), hi);
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

int main(void)
{
    float *a, *b, *c;
    uint32_t *d;
    CHECK(cudaMalloc(&a, N * sizeof(float)));
    CHECK(cudaMalloc(&b, N * sizeof(float)));
    CHECK(cudaMalloc(&c, N * sizeof(float)));
    CHECK(cudaMalloc(&d, N * sizeof(uint32_t)));

    float *h = (float *)malloc(N * sizeof(float));
    uint32_t *hd = (uint32_t *)malloc(N * sizeof(uint32_t));
    for (int i = 0; i < N; i++)
        h[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    CHECK(cudaMemcpy(a, h, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, h, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(c, 0, N * sizeof(float)));
    CHECK(cudaMemset(d, 0, N * sizeof(uint32_t)));

    cudaStream_t s2;
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cudaEvent_t ev;
    CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));

    uint64_t total = 1469598103934665603ull;
    unsigned long long launches = 0;
    for (int it = 0; it < ITERS; it++) {
        // Phase 1: default stream (legacy, or per-thread with --default-stream per-thread).
        for (int k = 0; k < ITER_LAUNCHES; k++) {
            if (it % 11 == 10 && k == 103)
                continue; // a launch missing: the sequence is shorter this time
            int blocks = 4 + (k % 4) * 4;
            switch (k % 5) {
            case 0:
                k_axpy<<<blocks, 128>>>(a, b, 0.25f + 0.001f * (float)(k % 13), N);
                break;
            case 1:
                k_scale_shift<<<blocks, 256>>>(b, 0.999f, 0.0001f * (float)(k % 3), N);
                break;
            case 2:
                // the salt changes every 7th iteration: same kernel, other argument bytes
                k_mix_int<<<blocks, 128>>>(d, a, (uint32_t)k + (it % 7 == 6 ? 1000u + (uint32_t)it : 0u), N);
                break;
            case 3:
                k_clamp<<<blocks, 256>>>(a, -4.0f, 4.0f, N);
                break;
            default:
                k_axpy<<<blocks, 256>>>(c, a, 0.125f, N);
                break;
            }
            launches++;
        }
        CHECK(cudaGetLastError());
        // Phase 2: a private non-blocking stream ordered after phase 1 by an event.
        CHECK(cudaEventRecord(ev, 0));
        CHECK(cudaStreamWaitEvent(s2, ev, 0));
        for (int k = 0; k < PHASE2_LAUNCHES; k++) {
            if (k % 2 == 0)
                k_scale_shift<<<8, 128, 0, s2>>>(c, 1.0001f, -0.00005f, N);
            else
                k_mix_int<<<8, 128, 0, s2>>>(d, c, 77u + (uint32_t)k, N);
            launches++;
        }
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s2));
        CHECK(cudaMemcpy(h, c, N * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hd, d, N * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        uint64_t ih = fnv1a(1469598103934665603ull, h, N * sizeof(float));
        ih = fnv1a(ih, hd, N * sizeof(uint32_t));
        total = fnv1a(total, &ih, sizeof ih);
        if (it % 10 == 9 || it == 0)
            printf("iter %d checksum %016llx\n", it, (unsigned long long)ih);
    }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h, a, N * sizeof(float), cudaMemcpyDeviceToHost));
    total = fnv1a(total, h, N * sizeof(float));
    CHECK(cudaMemcpy(h, b, N * sizeof(float), cudaMemcpyDeviceToHost));
    total = fnv1a(total, h, N * sizeof(float));
    printf("launches %llu\n", launches);
    printf("final checksum %016llx\n", (unsigned long long)total);

    CHECK(cudaEventDestroy(ev));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    CHECK(cudaFree(c));
    CHECK(cudaFree(d));
    free(h);
    free(hd);
    return 0;
}
