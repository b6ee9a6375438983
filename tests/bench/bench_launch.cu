// encore benchmark 1: launch-bound loop of tiny kernels.
//
// Each iteration launches K tiny kernels (4 kinds with different signatures,
// about 1 us of GPU work each) and then synchronises the stream. Built with
// nvcc's default static cudart, so under LD_PRELOAD=libencore.so every launch
// reaches encore through cudart's cuGetProcAddress lookups.
//
//   bench_launch [--k K] [--iters N] [--warmup W] [--graph]
//                [--stream legacy|per-thread|nonblocking] [--rotate N]
//                [--random] [--step] [--seed S] [--n ELEMS]
//
//   --graph     capture one iteration (per buffer set with --rotate) on a
//               private non-blocking stream with cudaStreamBeginCapture and
//               cudaGraphLaunch it into the program's stream every iteration
//   --stream    the stream the program launches into (default: the binary's
//               default stream: legacy, or per-thread for bench_launch_ptds
//               which is built with --default-stream per-thread)
//   --rotate N  every pointer argument rotates among N buffer sets, one set
//               per iteration (the same kernels, other argument bytes)
//   --random    every iteration a fresh random kernel/argument sequence from
//               a seeded generator: nothing ever repeats (no --graph)
//   --step      the first kernel of each iteration takes the iteration number
//               by value (a step counter); with --graph the program patches
//               it into its graph every iteration (cudaGraphExecKernelNodeSetParams),
//               as a hand-written graph user would
//
// Output: one line
//   RESULT bench=launch ... us_per_iter=<mean wall us per iteration>
//          cpu_ns_per_launch=<thread CPU ns in the launch loop, sync excluded,
//          per kernel launch> checksum=<FNV-1a of every buffer at the end>
// The checksum depends on every launch of every iteration (warm-up included),
// so equal checksums across variants mean bit-identical results.
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "bench_launch: %s failed at %s:%d: %s (%s)\n", #call, __FILE__, \
                    __LINE__, cudaGetErrorString(e_), cudaGetErrorName(e_));              \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define BLOCK 128
#define BUFS_PER_SET 4
#define RANDOM_POOL 8

__global__ void k_muladd(uint32_t *y, const uint32_t *x, uint32_t a, uint32_t b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = y[i] * a + x[i] + b;
}

__global__ void k_xorshift(uint32_t *y, const uint32_t *x, uint32_t s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (y[i] ^ (x[i] >> (s & 7u))) + s;
}

__global__ void k_rotl(uint32_t *y, uint32_t r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t v = y[i];
        uint32_t k = r & 31u;
        y[i] = ((v << k) | (v >> ((32u - k) & 31u))) + (uint32_t)i;
    }
}

__global__ void k_mix3(uint32_t *z, const uint32_t *x, const uint32_t *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] += (x[i] * 0x9E3779B1u) ^ y[i];
}

struct cfg {
    int k, iters, warmup, graph, rotate, random, step, n;
    uint64_t seed;
    const char *stream;
};

static int g_grid;

static void launch_one(int kind, uint32_t *d, uint32_t *a, uint32_t *b, uint32_t c1, uint32_t c2, int n,
                       cudaStream_t s) {
    switch (kind & 3) {
    case 0: k_muladd<<<g_grid, BLOCK, 0, s>>>(d, a, c1 | 1u, c2, n); break;
    case 1: k_xorshift<<<g_grid, BLOCK, 0, s>>>(d, a, c1, n); break;
    case 2: k_rotl<<<g_grid, BLOCK, 0, s>>>(d, c1, n); break;
    default: k_mix3<<<g_grid, BLOCK, 0, s>>>(d, a, b, n); break;
    }
}

// --graph --step: write this iteration's step into the graph's first kernel.
static void graph_set_step(cudaGraphExec_t e, cudaGraphNode_t node, uint32_t *d, uint32_t *a, long it, int n) {
    uint32_t c1 = (2u * (uint32_t)it + 1u) | 1u, c2 = 0;
    void *args[] = {&d, &a, &c1, &c2, &n};
    cudaKernelNodeParams p = {};
    p.func = (void *)k_muladd;
    p.gridDim = dim3((unsigned)g_grid);
    p.blockDim = dim3(BLOCK);
    p.kernelParams = args;
    CK(cudaGraphExecKernelNodeSetParams(e, node, &p));
}

// One iteration's K launches. `it` selects the buffer set (--rotate); with
// --random the generator state advances and nothing repeats.
static void launch_iteration(const struct cfg *c, uint32_t **bufs, long it, uint64_t *rng, cudaStream_t s) {
    if (c->random) {
        for (int j = 0; j < c->k; j++) {
            uint64_t r = bench_rng_next(rng);
            uint64_t r2 = bench_rng_next(rng);
            int kind = (int)(r & 3);
            uint32_t *d = bufs[(r >> 8) % RANDOM_POOL];
            uint32_t *a = bufs[(r >> 16) % RANDOM_POOL];
            uint32_t *b = bufs[(r >> 24) % RANDOM_POOL];
            launch_one(kind, d, a, b, (uint32_t)r2, (uint32_t)(r2 >> 32), c->n, s);
        }
        return;
    }
    uint32_t **set = bufs + (it % c->rotate) * BUFS_PER_SET;
    for (int j = 0; j < c->k; j++) {
        uint32_t *d = set[j % BUFS_PER_SET];
        uint32_t *a = set[(j + 1) % BUFS_PER_SET];
        uint32_t *b = set[(j + 2) % BUFS_PER_SET];
        uint32_t c1 = c->step && j == 0 ? 2u * (uint32_t)it + 1u : 2u * (uint32_t)j + 1u;
        launch_one(j, d, a, b, c1, (uint32_t)j * 0x9E37u, c->n, s);
    }
}

static void usage(void) {
    fprintf(stderr,
            "usage: bench_launch [--k K] [--iters N] [--warmup W] [--graph] [--stream legacy|per-thread|nonblocking]\n"
            "                    [--rotate N] [--random] [--step] [--seed S] [--n ELEMS]\n");
    exit(2);
}

int main(int argc, char **argv) {
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
    const char *binary_default = "per-thread";
#else
    const char *binary_default = "legacy";
#endif
    struct cfg c = {100, -1, -1, 0, 1, 0, 0, 256, 12345, binary_default};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--k")) { c.k = (int)bench_parse_long(a, v, 1, 1000000); i++; }
        else if (!strcmp(a, "--iters")) { c.iters = (int)bench_parse_long(a, v, 1, 100000000); i++; }
        else if (!strcmp(a, "--warmup")) { c.warmup = (int)bench_parse_long(a, v, 0, 100000000); i++; }
        else if (!strcmp(a, "--rotate")) { c.rotate = (int)bench_parse_long(a, v, 1, 4096); i++; }
        else if (!strcmp(a, "--seed")) { c.seed = (uint64_t)bench_parse_long(a, v, 1, 0x7fffffffffffffffL); i++; }
        else if (!strcmp(a, "--n")) { c.n = (int)bench_parse_long(a, v, 1, 1 << 24); i++; }
        else if (!strcmp(a, "--stream")) { if (!v) usage(); c.stream = v; i++; }
        else if (!strcmp(a, "--graph")) c.graph = 1;
        else if (!strcmp(a, "--random")) c.random = 1;
        else if (!strcmp(a, "--step")) c.step = 1;
        else usage();
    }
    if (strcmp(c.stream, "legacy") && strcmp(c.stream, "per-thread") && strcmp(c.stream, "nonblocking")) usage();
    if (c.graph && c.random) {
        fprintf(stderr, "bench_launch: --graph and --random do not combine (a graph of a sequence that never repeats)\n");
        return 3;
    }
    if (c.graph && c.step && c.rotate != 1) {
        fprintf(stderr, "bench_launch: --graph --step takes no --rotate\n");
        return 3;
    }
    if (c.iters < 0) {
        long it = 60000L / c.k;
        c.iters = (int)(it < 50 ? 50 : it > 2000 ? 2000 : it);
    }
    if (c.warmup < 0) c.warmup = c.iters / 10 < 20 ? 20 : c.iters / 10;
    g_grid = (c.n + BLOCK - 1) / BLOCK;

    CK(cudaSetDevice(0));
    CK(cudaFree(0)); // create the context

    // The program's stream. Launching into stream 0 in each binary keeps the
    // launch path nvcc generates by default (cuLaunchKernel or _ptsz).
    cudaStream_t s = 0, cap = 0;
    if (!strcmp(c.stream, "nonblocking")) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    else if (strcmp(c.stream, binary_default)) s = !strcmp(c.stream, "legacy") ? cudaStreamLegacy : cudaStreamPerThread;

    int nbufs = c.random ? RANDOM_POOL : c.rotate * BUFS_PER_SET;
    uint32_t **bufs = (uint32_t **)calloc((size_t)nbufs, sizeof *bufs);
    uint32_t *host = (uint32_t *)malloc((size_t)c.n * sizeof *host);
    if (!bufs || !host) { fprintf(stderr, "bench_launch: out of memory\n"); return 1; }
    for (int b = 0; b < nbufs; b++) {
        CK(cudaMalloc((void **)&bufs[b], (size_t)c.n * sizeof(uint32_t)));
        for (int i = 0; i < c.n; i++) host[i] = (uint32_t)(b * 0x01000193u) ^ (uint32_t)(i * 2654435761u);
        CK(cudaMemcpy(bufs[b], host, (size_t)c.n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    }
    CK(cudaDeviceSynchronize());
    size_t free0 = 0, free1 = 0, total = 0;
    CK(cudaMemGetInfo(&free0, &total));

    // --graph: one graph per buffer set, captured on a private stream.
    cudaGraphExec_t *execs = NULL;
    cudaGraph_t step_graph = NULL;
    cudaGraphNode_t step_node = NULL; // --graph --step: the node of the first kernel
    double capture_us = 0;
    if (c.graph) {
        uint64_t t0 = bench_now_ns();
        CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
        execs = (cudaGraphExec_t *)calloc((size_t)c.rotate, sizeof *execs);
        for (int r = 0; r < c.rotate; r++) {
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
            launch_iteration(&c, bufs, r, NULL, cap);
            CK(cudaStreamEndCapture(cap, &g));
            CK(cudaGraphInstantiate(&execs[r], g, 0));
            CK(cudaGraphUpload(execs[r], s));
            if (c.step) { // the root of the captured chain is the first launch
                size_t nroot = 1;
                CK(cudaGraphGetRootNodes(g, &step_node, &nroot));
                step_graph = g;
            } else {
                CK(cudaGraphDestroy(g));
            }
        }
        CK(cudaStreamSynchronize(s));
        capture_us = (double)(bench_now_ns() - t0) / 1e3;
    }

    uint64_t rng = c.seed;
    long it = 0;
    // Warm-up: the same work as the timed loop (encore learns and captures here).
    uint64_t w0 = bench_now_ns(), first_ns = 0;
    for (int w = 0; w < c.warmup; w++, it++) {
        uint64_t t0 = bench_now_ns();
        if (c.graph && step_node) graph_set_step(execs[0], step_node, bufs[0], bufs[1], it, c.n);
        if (c.graph) CK(cudaGraphLaunch(execs[it % c.rotate], s));
        else launch_iteration(&c, bufs, it, &rng, s);
        CK(cudaStreamSynchronize(s));
        if (w == 0) first_ns = bench_now_ns() - t0;
    }
    uint64_t warm_ns = bench_now_ns() - w0;
    CK(cudaGetLastError());

    uint64_t *iter_ns = (uint64_t *)malloc((size_t)c.iters * sizeof *iter_ns);
    if (!iter_ns) { fprintf(stderr, "bench_launch: out of memory\n"); return 1; }
    uint64_t cpu_ns = 0;
    uint64_t start = bench_now_ns();
    for (int i = 0; i < c.iters; i++, it++) {
        uint64_t t0 = bench_now_ns();
        uint64_t c0 = bench_thread_cpu_ns();
        if (c.graph && step_node) graph_set_step(execs[0], step_node, bufs[0], bufs[1], it, c.n);
        if (c.graph) cudaGraphLaunch(execs[it % c.rotate], s);
        else launch_iteration(&c, bufs, it, &rng, s);
        cpu_ns += bench_thread_cpu_ns() - c0;
        CK(cudaStreamSynchronize(s));
        iter_ns[i] = bench_now_ns() - t0;
    }
    uint64_t wall_ns = bench_now_ns() - start;
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free1, &total));

    uint64_t h = BENCH_FNV_INIT;
    for (int b = 0; b < nbufs; b++) {
        CK(cudaMemcpy(host, bufs[b], (size_t)c.n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        h = bench_fnv1a(h, host, (size_t)c.n * sizeof(uint32_t));
    }
    double med_us = (double)bench_median_u64(iter_ns, (size_t)c.iters) / 1e3;
    long long launches = (long long)c.iters * c.k;
    char cap_s[32] = "na";
    if (c.graph) snprintf(cap_s, sizeof cap_s, "%.1f", capture_us);

    printf("bench_launch: %s k=%d stream=%s rotate=%d random=%d: %.2f us/iter (median %.2f), "
           "%.1f CPU ns per launch in the launch loop\n",
           c.graph ? "graph" : "eager", c.k, c.stream, c.rotate, c.random, (double)wall_ns / 1e3 / c.iters, med_us,
           (double)cpu_ns / (double)launches);
    printf("RESULT bench=launch mode=%s binary=%s stream=%s k=%d rotate=%d random=%d n=%d iters=%d warmup=%d "
           "launches=%lld us_per_iter=%.3f us_med=%.3f cpu_ns_per_launch=%.1f cpu_us_per_iter=%.3f "
           "warmup_us=%.1f first_iter_us=%.1f capture_us=%s mem_added_kib=%lld checksum=%016llx\n",
           c.graph ? "graph" : "eager", binary_default, c.stream, c.k, c.rotate, c.random, c.n, c.iters, c.warmup,
           launches, (double)wall_ns / 1e3 / c.iters, med_us, (double)cpu_ns / (double)launches,
           (double)cpu_ns / 1e3 / c.iters, (double)warm_ns / 1e3, (double)first_ns / 1e3, cap_s,
           ((long long)free0 - (long long)free1) / 1024, (unsigned long long)h);
    fflush(stdout);

    if (step_graph) cudaGraphDestroy(step_graph);
    if (execs) {
        for (int r = 0; r < c.rotate; r++) cudaGraphExecDestroy(execs[r]);
        free(execs);
    }
    for (int b = 0; b < nbufs; b++) cudaFree(bufs[b]);
    free(bufs);
    free(host);
    free(iter_ns);
    return 0;
}
