// Issue 15: one process driving two GPUs (scripts/gpu/multi).
//
//   prog_multi_nccl eager ITER   per iteration on each device: mix, add, stamp on
//                                its stream, then one NCCL all-reduce (int32 sum,
//                                ncclGroupStart/End over both devices), then add
//   prog_multi_nccl graph ITER   the same iteration captured once per device (the
//                                all-reduce inside the graphs) and replayed: the
//                                manual-graph baseline; output must equal eager's
//   prog_multi_nccl paired ITER [BLOCK]  the benchmark in one process: blocks of
//                                BLOCK (100) iterations with encore on (A), with
//                                encore switched off (P, its in-process switch)
//                                and replaying the manual graph (G), in rotating
//                                order; stderr gets the per-round ratios A/P and
//                                G/P and their medians ("paired ...")
//   prog_multi_nccl peer ITER    no NCCL: device 0's kernels, a peer copy to
//                                device 1 on device 0's stream, an event, device
//                                1's stream waits for it, device 1's kernels;
//                                device 0's next copy waits until device 1
//                                has read the last one (race-free)
//   prog_multi_nccl rules 0      the driver's answers to the multi-device rules the
//                                simulator models (tests/sim/sim_multidev.c)
//
// NCCL is dlopen'ed (libnccl.so.2: $NCCL_LIB, else the soname search) and the few
// prototypes it needs are declared here, so nccl.h is not needed. stdout is the
// results (hashes), identical with and without encore; stderr has the timing
// ("time_ms=<ms> iterations=<n> mode=<m>").
#include <cuda_runtime.h>
#include <dlfcn.h>

#include "../bench/encore_switch.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define NDEV 2

#define CK(x)                                                                                       \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e_));       \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

typedef struct ncclComm *ncclComm_t;
typedef int (*nccl_init_all_t)(ncclComm_t *, int, const int *);
typedef int (*nccl_all_reduce_t)(const void *, void *, size_t, int, int, ncclComm_t, cudaStream_t);
typedef int (*nccl_group_t)(void);
typedef int (*nccl_destroy_t)(ncclComm_t);
typedef const char *(*nccl_err_t)(int);
enum { NCCL_INT32 = 2, NCCL_SUM = 0 };
static struct {
    nccl_init_all_t init_all;
    nccl_all_reduce_t all_reduce;
    nccl_group_t group_start, group_end;
    nccl_destroy_t destroy;
    nccl_err_t err;
} nccl;

#define NK(x)                                                                                       \
    do {                                                                                            \
        int r_ = (x);                                                                               \
        if (r_ != 0) {                                                                              \
            fprintf(stderr, "%s:%d: %s: nccl error %d %s\n", __FILE__, __LINE__, #x, r_,            \
                    nccl.err ? nccl.err(r_) : "");                                                  \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

static void nccl_load(void) {
    const char *p = getenv("NCCL_LIB");
    void *h = dlopen(p && *p ? p : "libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "dlopen libnccl.so.2: %s (set NCCL_LIB)\n", dlerror());
        exit(77);
    }
    nccl.init_all = (nccl_init_all_t)dlsym(h, "ncclCommInitAll");
    nccl.all_reduce = (nccl_all_reduce_t)dlsym(h, "ncclAllReduce");
    nccl.group_start = (nccl_group_t)dlsym(h, "ncclGroupStart");
    nccl.group_end = (nccl_group_t)dlsym(h, "ncclGroupEnd");
    nccl.destroy = (nccl_destroy_t)dlsym(h, "ncclCommDestroy");
    nccl.err = (nccl_err_t)dlsym(h, "ncclGetErrorString");
    if (!nccl.init_all || !nccl.all_reduce || !nccl.group_start || !nccl.group_end || !nccl.destroy) {
        fprintf(stderr, "libnccl.so.2 lacks an entry point\n");
        exit(77);
    }
}

__device__ static uint32_t mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}
__global__ void k_mix(uint32_t *x, uint32_t salt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = mix32(x[i] + salt) & 0xffffu; // small values: the int32 sum never overflows
}
__global__ void k_add(uint32_t *y, const uint32_t *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (y[i] + x[i]) & 0xffffu;
}
__global__ void k_stamp(uint32_t *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (y[i] * 3u + (uint32_t)i) & 0xffffu;
}

static cudaStream_t S[NDEV];
static uint32_t *X[NDEV], *Y[NDEV], *Z[NDEV];
static ncclComm_t comms[NDEV];
#define G ((N + 255) / 256), 256

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void setup(int with_nccl) {
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    if (n < NDEV) {
        fprintf(stderr, "needs %d GPUs, found %d\n", NDEV, n);
        exit(77);
    }
    for (int d = 0; d < NDEV; d++) {
        CK(cudaSetDevice(d));
        CK(cudaStreamCreateWithFlags(&S[d], cudaStreamNonBlocking));
        CK(cudaMalloc(&X[d], N * 4));
        CK(cudaMalloc(&Y[d], N * 4));
        CK(cudaMalloc(&Z[d], N * 4));
        CK(cudaMemsetAsync(X[d], 0, N * 4, S[d]));
        CK(cudaMemsetAsync(Y[d], 0, N * 4, S[d]));
        CK(cudaMemsetAsync(Z[d], 0, N * 4, S[d]));
        k_mix<<<G, 0, S[d]>>>(X[d], 11u + d, N);
        CK(cudaStreamSynchronize(S[d]));
    }
    if (with_nccl) {
        int devs[NDEV] = {0, 1};
        nccl_load();
        NK(nccl.init_all(comms, NDEV, devs));
    }
}

static void iteration(int it) {
    for (int d = 0; d < NDEV; d++) {
        CK(cudaSetDevice(d));
        k_mix<<<G, 0, S[d]>>>(X[d], 5u + d, N);
        k_add<<<G, 0, S[d]>>>(Y[d], X[d], N);
        k_stamp<<<G, 0, S[d]>>>(Y[d], N);
    }
    NK(nccl.group_start());
    for (int d = 0; d < NDEV; d++) NK(nccl.all_reduce(Y[d], Z[d], N, NCCL_INT32, NCCL_SUM, comms[d], S[d]));
    NK(nccl.group_end());
    for (int d = 0; d < NDEV; d++) {
        CK(cudaSetDevice(d));
        k_add<<<G, 0, S[d]>>>(X[d], Z[d], N);
    }
    (void)it;
}

static uint64_t hash_dev(int d, const uint32_t *p) {
    static uint32_t h[N];
    CK(cudaSetDevice(d));
    CK(cudaMemcpyAsync(h, p, N * 4, cudaMemcpyDeviceToHost, S[d]));
    CK(cudaStreamSynchronize(S[d]));
    uint64_t x = 1469598103934665603ull;
    for (int i = 0; i < N; i++) x = (x ^ h[i]) * 1099511628211ull;
    return x;
}

static void print_all(const char *what) {
    for (int d = 0; d < NDEV; d++)
        printf("%s device %d x %016llx y %016llx z %016llx\n", what, d, (unsigned long long)hash_dev(d, X[d]),
               (unsigned long long)hash_dev(d, Y[d]), (unsigned long long)hash_dev(d, Z[d]));
}

static void sync_all(void) {
    for (int d = 0; d < NDEV; d++) {
        CK(cudaSetDevice(d));
        CK(cudaStreamSynchronize(S[d]));
    }
}

static void run_eager(int iters) {
    for (int it = 0; it < 3; it++) iteration(it); // warm-up (NCCL's first launches, encore's learning)
    sync_all();
    double t0 = now_ms();
    for (int it = 3; it < iters; it++) {
        iteration(it);
        if (it % 100 == 99) print_all("checkpoint"); // a synchronisation, as a training loop's logging
    }
    sync_all();
    fprintf(stderr, "time_ms=%.3f iterations=%d mode=eager\n", now_ms() - t0, iters - 3);
}

static cudaGraph_t g[NDEV];
static cudaGraphExec_t ge[NDEV];

static void capture_graphs(void) {
    for (int d = 0; d < NDEV; d++) {
        CK(cudaSetDevice(d));
        CK(cudaStreamBeginCapture(S[d], cudaStreamCaptureModeRelaxed));
    }
    iteration(-1);
    for (int d = 0; d < NDEV; d++) {
        CK(cudaSetDevice(d));
        CK(cudaStreamEndCapture(S[d], &g[d]));
        CK(cudaGraphInstantiate(&ge[d], g[d], 0));
    }
}

static void run_graph(int iters) {
    for (int it = 0; it < 3; it++) iteration(it);
    sync_all();
    capture_graphs();
    double t0 = now_ms();
    for (int it = 3; it < iters; it++) {
        for (int d = 0; d < NDEV; d++) {
            CK(cudaSetDevice(d));
            CK(cudaGraphLaunch(ge[d], S[d]));
        }
        if (it % 100 == 99) print_all("checkpoint");
    }
    sync_all();
    fprintf(stderr, "time_ms=%.3f iterations=%d mode=graph\n", now_ms() - t0, iters - 3);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Rounds of three blocks (encore on, encore off, the manual graph) in rotating
// order, every block between two synchronisations of both devices. The work
// is the same iteration in every block, so the output does not depend on it.
static void run_paired(int iters, int block) {
    encore_switch_fn sw = encore_switch_find();
    for (int it = 0; it < 3; it++) iteration(it);
    sync_all();
    encore_switch_set(sw, 0); // the program's own capture is checked apart (graph mode under encore)
    capture_graphs();
    enum { M_ON, M_OFF, M_GRAPH };
    int rounds = (iters - 3) / (3 * block);
    if (rounds < 1) rounds = 1;
    double *ra = (double *)calloc((size_t)rounds, sizeof(double)), *rg = (double *)calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        double ms[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            int mode = (r + k) % 3;
            if (encore_switch_set(sw, mode == M_ON)) {
                fprintf(stderr, "encoreSetActive failed\n");
                exit(2);
            }
            sync_all();
            double t0 = now_ms();
            for (int i = 0; i < block; i++) {
                if (mode == M_GRAPH) {
                    for (int d = 0; d < NDEV; d++) {
                        CK(cudaSetDevice(d));
                        CK(cudaGraphLaunch(ge[d], S[d]));
                    }
                } else {
                    iteration(i);
                }
            }
            sync_all();
            ms[mode] = now_ms() - t0;
        }
        ra[r] = ms[M_ON] / ms[M_OFF];
        rg[r] = ms[M_GRAPH] / ms[M_OFF];
        fprintf(stderr, "round %d: on %.3f ms, off %.3f ms, graph %.3f ms\n", r, ms[M_ON], ms[M_OFF], ms[M_GRAPH]);
    }
    encore_switch_set(sw, 1);
    double ma = median(ra, rounds), mg = median(rg, rounds);
    fprintf(stderr, "paired encore/off=%.4f (min %.4f, max %.4f) graph/off=%.4f (min %.4f, max %.4f) rounds=%d block=%d switch=%d\n",
            ma, ra[0], ra[rounds - 1], mg, rg[0], rg[rounds - 1], rounds, block, sw != NULL);
    free(ra);
    free(rg);
}

static void run_peer(int iters) {
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, 1, 0));
    printf("device 1 can access device 0: %d\n", can);
    CK(cudaSetDevice(1));
    if (can) CK(cudaDeviceEnablePeerAccess(0, 0));
    cudaEvent_t copied, consumed;
    CK(cudaSetDevice(0));
    CK(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    CK(cudaSetDevice(1));
    CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
    double t0 = now_ms();
    for (int it = 0; it < iters; it++) {
        CK(cudaSetDevice(0));
        k_mix<<<G, 0, S[0]>>>(X[0], 5u, N);
        k_add<<<G, 0, S[0]>>>(Y[0], X[0], N);
        k_stamp<<<G, 0, S[0]>>>(Y[0], N);
        // Y[1] is overwritten only after device 1 has read the previous copy:
        // without this wait the program races with itself (the first version
        // did; on two H100s its output then depended on timing, with or without encore)
        CK(cudaStreamWaitEvent(S[0], consumed, 0));
        CK(cudaSetDevice(1)); // the copy goes to device 0's stream with device 1 current
        CK(cudaMemcpyPeerAsync(Y[1], 1, Y[0], 0, N * 4, S[0]));
        CK(cudaEventRecord(copied, S[0]));
        CK(cudaStreamWaitEvent(S[1], copied, 0));
        k_add<<<G, 0, S[1]>>>(X[1], Y[1], N);
        CK(cudaEventRecord(consumed, S[1]));
        k_stamp<<<G, 0, S[1]>>>(X[1], N);
        CK(cudaMemcpyAsync(Z[1], X[1], N * 4, cudaMemcpyDeviceToDevice, S[1]));
        if (it % 100 == 99) print_all("checkpoint");
    }
    sync_all();
    fprintf(stderr, "time_ms=%.3f iterations=%d mode=peer\n", now_ms() - t0, iters);
}

static void rules(void) {
    cudaEvent_t e0;
    CK(cudaSetDevice(0));
    CK(cudaEventCreateWithFlags(&e0, cudaEventDisableTiming));
    CK(cudaSetDevice(1));
    k_mix<<<G, 0, S[0]>>>(X[0], 1u, N); // device 0's stream, device 1 current
    printf("rule: kernel launch to another device's stream: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("rule: event of device 0 recorded on device 1's stream: %s\n",
           cudaGetErrorName(cudaEventRecord(e0, S[1])));
    cudaGetLastError();
    CK(cudaSetDevice(0));
    CK(cudaEventRecord(e0, S[0]));
    CK(cudaSetDevice(1));
    printf("rule: device 1's stream waits for device 0's event: %s\n", cudaGetErrorName(cudaStreamWaitEvent(S[1], e0, 0)));
    printf("rule: cudaEventSynchronize of device 0's event, device 1 current: %s\n",
           cudaGetErrorName(cudaEventSynchronize(e0)));
    printf("rule: memcpy async on device 0's stream, device 1 current: %s\n",
           cudaGetErrorName(cudaMemcpyAsync(Z[0], Y[0], 16, cudaMemcpyDeviceToDevice, S[0])));
    CK(cudaDeviceSynchronize());
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "eager";
    int iters = argc > 2 ? atoi(argv[2]) : 500;
    int with_nccl = !strcmp(mode, "eager") || !strcmp(mode, "graph") || !strcmp(mode, "paired");
    setup(with_nccl);
    if (!strcmp(mode, "eager")) run_eager(iters);
    else if (!strcmp(mode, "graph")) run_graph(iters);
    else if (!strcmp(mode, "paired")) run_paired(iters, argc > 3 ? atoi(argv[3]) : 100);
    else if (!strcmp(mode, "peer")) run_peer(iters);
    else if (!strcmp(mode, "rules")) rules();
    else {
        fprintf(stderr, "usage: prog_multi_nccl eager|graph|paired|peer|rules [iterations [block]]\n");
        return 2;
    }
    if (strcmp(mode, "rules")) print_all("final");
    fflush(stdout);
    // The graphs hold NCCL's persistent plans: they go before the communicators
    // (with them still alive, ncclCommDestroy waited forever on an H100 pair).
    for (int d = 0; d < NDEV; d++) {
        if (ge[d]) CK(cudaGraphExecDestroy(ge[d]));
        if (g[d]) CK(cudaGraphDestroy(g[d]));
    }
    if (with_nccl)
        for (int d = 0; d < NDEV; d++) nccl.destroy(comms[d]);
    return 0;
}
