// encore benchmark 2: small cuBLAS GEMMs plus elementwise kernels.
//
// Each iteration: one counter kernel, then for every size s (default 64, 128,
// 256) and every layer l (default 4): Y = W[s][l] * X[s] (cublasSgemm, s x s x s)
// followed by an elementwise kernel X = 0.5 * tanh(Y + b + 1e-3 * (counter % 7)).
// The state carries over between iterations and the counter makes every
// iteration's result differ, so the final checksum covers every launch.
// cuBLAS gets a fixed workspace (cublasSetWorkspace) so that eager, encore and
// stream capture all use the same algorithms and results can be compared bitwise.
//
//   bench_cublas [--iters N] [--warmup W] [--graph] [--sizes 64,128,256] [--layers L]
//   bench_cublas --schedule LETTERS [--blocks B] [--steps S] [--warmup W] ...
//
// With --schedule (the paired method, tests/bench/bench_paired.py), after the
// warm-up and the checksum, B timed blocks of S iterations run, block i as letter
// schedule[i % len] says (tests/bench/encore_switch.h): E as it is, P encore
// switched off (passive), A encore switched on, G encore off and the
// iteration replayed as the program's own graph, B encore off and every launch
// skipped by libskiplaunch.so preloaded before encore (the launch-free bound in
// the same process; the outputs are garbage after it, the checksum comes first). Output:
//   BLOCK workload=cublas i=<i> state=<letter> steps=<S> us_per_step=<f> t0_ns=<ns> t1_ns=<ns>
// (t0_ns, t1_ns: CLOCK_MONOTONIC at the block's start and end, for tests/bench/breakdown.py)
//   RESULT workload=cublas status=ok checksum=<hex> us_per_step=<median> blocks=<B> switch=<0|1> bound_switch=<0|1>
//
// Output: one line
//   RESULT bench=cublas ... us_per_iter=<f> cpu_ns_per_launch=<f> checksum=<hex>
// where cpu_ns_per_launch divides the launch loop's thread CPU time by the API
// calls that launch work (a GEMM counts as one, whatever cuBLAS launches for it).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "encore_switch.h"

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "bench_cublas: %s failed at %s:%d: %s (%s)\n", #call, __FILE__, \
                    __LINE__, cudaGetErrorString(e_), cudaGetErrorName(e_));              \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)
#define CB(call)                                                                          \
    do {                                                                                  \
        cublasStatus_t s_ = (call);                                                       \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                \
            fprintf(stderr, "bench_cublas: %s failed at %s:%d: status %d\n", #call, __FILE__, \
                    __LINE__, (int)s_);                                                   \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

#define MAX_SIZES 8
#define MAX_LAYERS 64
#define WORKSPACE_BYTES (8u << 20)

__global__ void k_counter(unsigned *ctr) { ctr[0] += 1u; }

__global__ void k_act(float *x, const float *y, const float *b, const unsigned *ctr, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 0.5f * tanhf(y[i] + b[i % s] + 1e-3f * (float)(ctr[0] % 7u));
}

struct layer_set {
    int s;
    float *x, *y;
    float *w[MAX_LAYERS], *b[MAX_LAYERS];
};

static int g_nsizes, g_layers;
static struct layer_set g_sets[MAX_SIZES];
static unsigned *g_ctr;

static int launch_iteration(cublasHandle_t h, cudaStream_t st) {
    const float one = 1.0f, zero = 0.0f;
    int calls = 1;
    k_counter<<<1, 1, 0, st>>>(g_ctr);
    for (int si = 0; si < g_nsizes; si++) {
        struct layer_set *L = &g_sets[si];
        int s = L->s, n = s * s;
        for (int l = 0; l < g_layers; l++) {
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, s, s, s, &one, L->w[l], s, L->x, s, &zero, L->y, s);
            k_act<<<(n + 255) / 256, 256, 0, st>>>(L->x, L->y, L->b[l], g_ctr, n, s);
            calls += 2;
        }
    }
    return calls;
}

static float *dev_fill(size_t n, uint64_t *rng, float scale) {
    float *h = (float *)malloc(n * sizeof *h), *d = NULL;
    if (!h) { fprintf(stderr, "bench_cublas: out of memory\n"); exit(1); }
    for (size_t i = 0; i < n; i++)
        h[i] = scale * ((float)(bench_rng_next(rng) >> 40) / (float)(1u << 24) * 2.0f - 1.0f);
    CK(cudaMalloc((void **)&d, n * sizeof *d));
    CK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
    free(h);
    return d;
}

/* The FNV-1a hash of every size's x, copied back (the outputs compared across variants). */
static uint64_t outputs_hash(void) {
    uint64_t hsum = BENCH_FNV_INIT;
    for (int si = 0; si < g_nsizes; si++) {
        size_t n = (size_t)g_sets[si].s * g_sets[si].s;
        float *hx = (float *)malloc(n * sizeof *hx);
        if (!hx) { fprintf(stderr, "bench_cublas: out of memory\n"); exit(1); }
        CK(cudaMemcpy(hx, g_sets[si].x, n * sizeof *hx, cudaMemcpyDeviceToHost));
        hsum = bench_fnv1a(hsum, hx, n * sizeof *hx);
        free(hx);
    }
    return hsum;
}

int main(int argc, char **argv) {
    int iters = 500, warmup = 50, graph = 0, blocks = 12, steps = 50;
    const char *sizes = "64,128,256", *schedule = NULL;
    g_layers = 4;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--iters")) { iters = (int)bench_parse_long(a, v, 1, 100000000); i++; }
        else if (!strcmp(a, "--warmup")) { warmup = (int)bench_parse_long(a, v, 0, 100000000); i++; }
        else if (!strcmp(a, "--layers")) { g_layers = (int)bench_parse_long(a, v, 1, MAX_LAYERS); i++; }
        else if (!strcmp(a, "--sizes") && v) { sizes = v; i++; }
        else if (!strcmp(a, "--graph")) graph = 1;
        else if (!strcmp(a, "--schedule") && v) { schedule = v; i++; }
        else if (!strcmp(a, "--blocks")) { blocks = (int)bench_parse_long(a, v, 1, 100000); i++; }
        else if (!strcmp(a, "--steps")) { steps = (int)bench_parse_long(a, v, 1, 100000000); i++; }
        else {
            fprintf(stderr, "usage: bench_cublas [--iters N] [--warmup W] [--graph] [--sizes 64,128,256] [--layers L]"
                            " [--schedule EPAG... --blocks B --steps S]\n");
            return 2;
        }
    }
    {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", sizes);
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (g_nsizes == MAX_SIZES) { fprintf(stderr, "bench_cublas: at most %d sizes\n", MAX_SIZES); return 2; }
            g_sets[g_nsizes++].s = (int)bench_parse_long("--sizes", tok, 1, 8192);
        }
        if (!g_nsizes) { fprintf(stderr, "bench_cublas: no sizes\n"); return 2; }
    }

    CK(cudaSetDevice(0));
    CK(cudaFree(0));
    cudaStream_t st = 0, cap = 0; // the legacy default stream
    cublasHandle_t h;
    CB(cublasCreate(&h));
    void *ws = NULL;
    CK(cudaMalloc(&ws, WORKSPACE_BYTES));
    CB(cublasSetWorkspace(h, ws, WORKSPACE_BYTES));
    CB(cublasSetStream(h, st));

    uint64_t rng = 0x5eed1234abcdull;
    for (int si = 0; si < g_nsizes; si++) {
        struct layer_set *L = &g_sets[si];
        size_t n = (size_t)L->s * L->s;
        float ws_scale = 1.0f / (float)L->s;
        L->x = dev_fill(n, &rng, 0.5f);
        L->y = dev_fill(n, &rng, 0.0f);
        for (int l = 0; l < g_layers; l++) {
            L->w[l] = dev_fill(n, &rng, 2.0f * ws_scale * 16.0f);
            L->b[l] = dev_fill((size_t)L->s, &rng, 0.1f);
        }
    }
    CK(cudaMalloc((void **)&g_ctr, sizeof *g_ctr));
    CK(cudaMemset(g_ctr, 0, sizeof *g_ctr));
    CK(cudaDeviceSynchronize());
    size_t free0 = 0, free1 = 0, total = 0;
    CK(cudaMemGetInfo(&free0, &total));

    cudaGraphExec_t exec = NULL;
    double capture_us = 0;
    int calls_per_iter = 0;
    if (schedule) {
        for (const char *c = schedule; *c; c++)
            if (!strchr("EPAGBT", *c)) { fprintf(stderr, "bench_cublas: schedule letters are E, P, A, G, B, T\n"); return 2; }
        if (!*schedule) { fprintf(stderr, "bench_cublas: empty schedule\n"); return 2; }
        graph = strchr(schedule, 'G') != NULL; /* the program's own graph, for G blocks */
    }
    encore_switch_fn sw = schedule ? encore_switch_find() : NULL;
    encore_switch_fn skip = schedule ? skiplaunch_switch_find() : NULL; /* B blocks */
    if (schedule && strchr(schedule, 'B') && !skip) {
        printf("RESULT workload=cublas status=error error=no_skiplaunch_switch_for_B_blocks\n");
        return 1;
    }
    if (graph) {
        uint64_t t0 = bench_now_ns();
        cudaGraph_t g;
        CK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
        CB(cublasSetStream(h, cap));
        CK(cudaStreamBeginCapture(cap, cudaStreamCaptureModeThreadLocal));
        calls_per_iter = launch_iteration(h, cap);
        CK(cudaStreamEndCapture(cap, &g));
        CB(cublasSetStream(h, st));
        CK(cudaGraphInstantiate(&exec, g, 0));
        CK(cudaGraphUpload(exec, st));
        CK(cudaGraphDestroy(g));
        CK(cudaStreamSynchronize(st));
        capture_us = (double)(bench_now_ns() - t0) / 1e3;
    }

    if (schedule) { /* warm-up (eager, or encore learning), the checksum, then the blocks */
        for (int w = 0; w < warmup; w++) {
            calls_per_iter = launch_iteration(h, st);
            CK(cudaStreamSynchronize(st));
        }
        /* Taken here, the same in every process whatever its blocks (encore's
         * replays during the warm-up included): outputs compare across variants. */
        uint64_t hsum = outputs_hash();
        double *us = (double *)malloc((size_t)blocks * sizeof *us);
        if (!us) { fprintf(stderr, "bench_cublas: out of memory\n"); return 1; }
        size_t len = strlen(schedule);
        for (int b = 0; b < blocks; b++) {
            char letter = schedule[(size_t)b % len];
            if (encore_block_set(sw, skip, letter) != 0) {
                printf("RESULT workload=cublas status=error error=switch_failed\n");
                return 1;
            }
            uint64_t t0 = bench_now_ns();
            for (int i = 0; i < steps; i++) {
                if (letter == 'G') CK(cudaGraphLaunch(exec, st));
                else launch_iteration(h, st);
                CK(cudaStreamSynchronize(st));
            }
            uint64_t t1 = bench_now_ns();
            us[b] = (double)(t1 - t0) / 1e3 / steps;
            printf("BLOCK workload=cublas i=%d state=%c steps=%d us_per_step=%.3f t0_ns=%llu t1_ns=%llu\n", b, letter,
                   steps, us[b], (unsigned long long)t0, (unsigned long long)t1);
            fflush(stdout);
        }
        encore_block_set(sw, skip, 'A');
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        double *sorted = (double *)malloc((size_t)blocks * sizeof *sorted);
        if (!sorted) { fprintf(stderr, "bench_cublas: out of memory\n"); return 1; }
        memcpy(sorted, us, (size_t)blocks * sizeof *sorted);
        for (int i = 1; i < blocks; i++) /* insertion sort: a few dozen blocks */
            for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                double t = sorted[j];
                sorted[j] = sorted[j - 1];
                sorted[j - 1] = t;
            }
        printf("RESULT workload=cublas status=ok checksum=%016llx us_per_step=%.3f blocks=%d steps=%d "
               "calls_per_iter=%d switch=%d bound_switch=%d\n",
               (unsigned long long)hsum, sorted[blocks / 2], blocks, steps, calls_per_iter, sw != NULL, skip != NULL);
        return 0;
    }
    uint64_t w0 = bench_now_ns(), first_ns = 0;
    for (int w = 0; w < warmup; w++) {
        uint64_t t0 = bench_now_ns();
        if (graph) CK(cudaGraphLaunch(exec, st));
        else calls_per_iter = launch_iteration(h, st);
        CK(cudaStreamSynchronize(st));
        if (w == 0) first_ns = bench_now_ns() - t0;
    }
    uint64_t warm_ns = bench_now_ns() - w0;
    CK(cudaGetLastError());

    uint64_t *iter_ns = (uint64_t *)malloc((size_t)iters * sizeof *iter_ns);
    if (!iter_ns) { fprintf(stderr, "bench_cublas: out of memory\n"); return 1; }
    uint64_t cpu_ns = 0;
    uint64_t start = bench_now_ns();
    for (int i = 0; i < iters; i++) {
        uint64_t t0 = bench_now_ns();
        uint64_t c0 = bench_thread_cpu_ns();
        if (graph) cudaGraphLaunch(exec, st);
        else calls_per_iter = launch_iteration(h, st);
        cpu_ns += bench_thread_cpu_ns() - c0;
        CK(cudaStreamSynchronize(st));
        iter_ns[i] = bench_now_ns() - t0;
    }
    uint64_t wall_ns = bench_now_ns() - start;
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemGetInfo(&free1, &total));

    uint64_t hsum = outputs_hash();
    unsigned ctr = 0;
    CK(cudaMemcpy(&ctr, g_ctr, sizeof ctr, cudaMemcpyDeviceToHost));
    hsum = bench_fnv1a(hsum, &ctr, sizeof ctr);

    double med_us = (double)bench_median_u64(iter_ns, (size_t)iters) / 1e3;
    long long launches = (long long)iters * calls_per_iter;
    char cap_s[32] = "na";
    if (graph) snprintf(cap_s, sizeof cap_s, "%.1f", capture_us);
    printf("bench_cublas: %s sizes=%s layers=%d: %.2f us/iter (median %.2f), %.1f CPU ns per launching call\n",
           graph ? "graph" : "eager", sizes, g_layers, (double)wall_ns / 1e3 / iters, med_us,
           (double)cpu_ns / (double)launches);
    printf("RESULT bench=cublas mode=%s sizes=%s layers=%d iters=%d warmup=%d calls_per_iter=%d launches=%lld "
           "us_per_iter=%.3f us_med=%.3f cpu_ns_per_launch=%.1f cpu_us_per_iter=%.3f warmup_us=%.1f "
           "first_iter_us=%.1f capture_us=%s mem_added_kib=%lld counter=%u checksum=%016llx\n",
           graph ? "graph" : "eager", sizes, g_layers, iters, warmup, calls_per_iter, launches,
           (double)wall_ns / 1e3 / iters, med_us, (double)cpu_ns / (double)launches, (double)cpu_ns / 1e3 / iters,
           (double)warm_ns / 1e3, (double)first_ns / 1e3, cap_s, ((long long)free0 - (long long)free1) / 1024, ctr,
           (unsigned long long)hsum);
    fflush(stdout);

    if (exec) cudaGraphExecDestroy(exec);
    cublasDestroy(h);
    free(iter_ns);
    return 0;
}
