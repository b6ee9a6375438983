/* The program's memory under encore on a GPU (issue 26; the simulator's
 * tests are tests/prog/mem_reset.c). One case per run; every iteration of a
 * hot loop copies a host buffer to the device (cudaMemcpyAsync), runs small
 * kernels and prints a checksum. Every CUDA error ends the program with exit
 * status 1, naming the call.
 *
 *   register-reset  a malloc'd buffer is registered (cudaHostRegister) and
 *                   copied from, page-locked; cudaDeviceReset ends the
 *                   registration; the same buffer, pageable again, is copied
 *                   from and overwritten right after each call (the driver
 *                   staged it): a copy encore held as page-locked would read
 *                   the overwritten buffer
 *   mallochost-reset  the buffer comes from cudaMallocHost; the reset frees
 *                   it and malloc is asked for its address again (the run
 *                   says on stderr whether it came back)
 *   fill            the program finds how much device memory it can take
 *                   (256 MiB, then 2 MiB blocks, until one fails), gives it
 *                   back, runs the hot loop (encore captures graphs), then
 *                   takes exactly as much again: with encore's graphs holding
 *                   device memory the last block may fail, and encore must
 *                   free its graphs and retry (report: oom_retries)
 *
 *   gpu_memory register-reset|mallochost-reset|fill */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define ITER 40
#define MAX_BLOCKS 65536

#define CHECK(call)                                                                                     \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "gpu_memory: %s failed: %s (%d)\n", #call, cudaGetErrorString(e_), (int)e_); \
            exit(1);                                                                                    \
        }                                                                                               \
    } while (0)

__global__ void mix_k(unsigned *x, unsigned salt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * 2654435761u + salt + (unsigned)i;
}
__global__ void add_k(unsigned *y, const unsigned *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += z[i];
}
__global__ void axpy_k(unsigned *x, const unsigned *y, unsigned a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += a * y[i];
}

/* The hot loop: host -> z mid-iteration (`pageable`: the host buffer is
 * overwritten right after the call), kernels, a checksum of x. */
static void hot_loop(unsigned *host, int pageable, const char *what) {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned *x, *y, *z, *out;
    CHECK(cudaMalloc(&x, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&y, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&z, N * sizeof(unsigned)));
    CHECK(cudaMallocHost(&out, N * sizeof(unsigned)));
    CHECK(cudaMemsetAsync(x, 1, N * sizeof(unsigned), s));
    CHECK(cudaMemsetAsync(y, 2, N * sizeof(unsigned), s));
    for (int it = 0; it < ITER; it++) {
        for (int i = 0; i < N; i++) host[i] = (unsigned)it * 31u + (unsigned)i;
        mix_k<<<N / 256, 256, 0, s>>>(x, 5, N);
        CHECK(cudaMemcpyAsync(z, host, N * sizeof(unsigned), cudaMemcpyHostToDevice, s));
        if (pageable) memset(host, 0xee, N * sizeof(unsigned)); /* staged at the call: no effect */
        add_k<<<N / 256, 256, 0, s>>>(y, z, N);
        axpy_k<<<N / 256, 256, 0, s>>>(x, y, 3, N);
        CHECK(cudaMemcpyAsync(out, x, N * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        unsigned long long sum = 0;
        for (int i = 0; i < N; i++) sum = sum * 1099511628211ull + out[i];
        printf("%s %d checksum %016llx\n", what, it, sum);
    }
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(z));
    CHECK(cudaFreeHost(out));
    CHECK(cudaStreamDestroy(s));
}

static void register_reset(void) {
    unsigned *buf = (unsigned *)aligned_alloc(4096, N * sizeof(unsigned));
    CHECK(cudaHostRegister(buf, N * sizeof(unsigned), cudaHostRegisterDefault));
    hot_loop(buf, 0, "registered");
    CHECK(cudaDeviceReset()); /* the registration ends with the context */
    hot_loop(buf, 1, "pageable again");
    free(buf);
}

static void mallochost_reset(void) {
    unsigned *pin;
    CHECK(cudaMallocHost(&pin, N * sizeof(unsigned)));
    hot_loop(pin, 0, "page-locked");
    CHECK(cudaDeviceReset()); /* frees it */
    void *tried[512];
    int n = 0;
    unsigned *buf = NULL;
    while (n < 512 && !buf) {
        void *p = n % 2 ? malloc(N * sizeof(unsigned)) : aligned_alloc(4096, N * sizeof(unsigned));
        if (p == (void *)pin)
            buf = (unsigned *)p;
        else
            tried[n++] = p;
    }
    fprintf(stderr, "gpu_memory: the freed page-locked address %s handed out again\n", buf ? "was" : "was not");
    if (!buf) buf = (unsigned *)tried[--n];
    while (n > 0) free(tried[--n]);
    hot_loop(buf, 1, "malloc");
    free(buf);
}

/* Take device memory in blocks of `big`, then of `small`, until one fails
 * (`fixed`: exactly counts[0] and counts[1] of them, each must succeed);
 * counts[0], counts[1]: how many of each. Given back at the end. */
static void *blocks[MAX_BLOCKS];
static void take(size_t big, size_t small, int counts[2], int fixed) {
    int n = 0;
    size_t sizes[2] = {big, small};
    for (int k = 0; k < 2; k++) {
        int c = 0;
        while (n < MAX_BLOCKS && (!fixed || c < counts[k])) {
            cudaError_t e = cudaMalloc(&blocks[n], sizes[k]);
            if (e != cudaSuccess) {
                if (fixed) {
                    fprintf(stderr, "gpu_memory: block %d of %d (%zu bytes) failed: %s\n", c, counts[k], sizes[k],
                            cudaGetErrorString(e));
                    exit(1);
                }
                (void)cudaGetLastError(); /* not sticky */
                break;
            }
            n++;
            c++;
        }
        counts[k] = c;
    }
    while (n > 0) CHECK(cudaFree(blocks[--n]));
}

/* Free device memory, on stderr (it differs with encore: not part of the compared output). */
static void say_free(const char *when) {
    size_t f = 0, t = 0;
    CHECK(cudaMemGetInfo(&f, &t));
    fprintf(stderr, "gpu_memory: free %zu bytes %s\n", f, when);
}

static void fill(void) {
    unsigned *pin;
    CHECK(cudaMallocHost(&pin, N * sizeof(unsigned)));
    CHECK(cudaFree(0));
    say_free("at the start");
    int counts[2];
    take(256u << 20, 2u << 20, counts, 0); /* nothing launched yet: encore has no graph */
    say_free("before the hot loop");
    hot_loop(pin, 0, "before filling memory");
    say_free("after the hot loop");
    take(256u << 20, 2u << 20, counts, 1); /* exactly as much again */
    printf("device memory: taken again in full\n");
    fprintf(stderr, "gpu_memory: %d blocks of 256 MiB and %d of 2 MiB\n", counts[0], counts[1]);
    hot_loop(pin, 0, "after filling memory");
    CHECK(cudaFreeHost(pin));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "register-reset";
    if (!strcmp(mode, "register-reset"))
        register_reset();
    else if (!strcmp(mode, "mallochost-reset"))
        mallochost_reset();
    else if (!strcmp(mode, "fill"))
        fill();
    else {
        fprintf(stderr, "usage: gpu_memory register-reset|mallochost-reset|fill\n");
        return 2;
    }
    return 0;
}
