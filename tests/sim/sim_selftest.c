/* Self-test of the simulated CUDA driver: one behaviour per function.
 * Linked directly against libcuda.so.1 (the simulator); kernels come from
 * libsimkernels.so (SIMKERNELS_PATH) and from this program itself
 * ("simcuda:" with an empty path: the executable is linked with -rdynamic). */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simkernel.h"

#ifndef SIMKERNELS_PATH
#error "SIMKERNELS_PATH must name libsimkernels.so"
#endif

/* ---- kernels defined in the main program ---- */
/* wait_flag(uint32_t *flag, uint32_t value, uint32_t timeout_ms, uint32_t *timed_out):
 * spins until *flag == value; after timeout_ms gives up and sets *timed_out = 1. */
static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
static void wait_flag_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *flag = *(uint32_t **)args[0];
    uint32_t value = *(uint32_t *)args[1], timeout = *(uint32_t *)args[2];
    uint32_t *timed_out = *(uint32_t **)args[3];
    double t0 = mono_ms();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != value) {
        if (mono_ms() - t0 > timeout) {
            __atomic_store_n(timed_out, 1, __ATOMIC_RELEASE);
            return;
        }
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
}
SIMCUDA_KERNEL(wait_flag, wait_flag_body, sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t), sizeof(uint32_t *));

/* cluster_x(u32 *out, u32 add): *out = the launch's cluster width + add */
static void cluster_x_body(const simcuda_dims *d, void **args) {
    **(uint32_t **)args[0] = d->cluster[0] + *(uint32_t *)args[1];
}
SIMCUDA_KERNEL(cluster_x, cluster_x_body, sizeof(uint32_t *), sizeof(uint32_t));

/* ---- harness ---- */
static int g_pass, g_fail, g_cur_failed;
static const char *g_cur;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "  %s:%d: %s: check failed: %s\n", __FILE__, __LINE__, g_cur, #cond); \
            g_cur_failed = 1;                                                            \
        }                                                                                \
    } while (0)
#define CK(call)                                                                         \
    do {                                                                                 \
        CUresult rc_ = (call);                                                           \
        if (rc_ != CUDA_SUCCESS) {                                                       \
            const char *n_ = NULL;                                                       \
            cuGetErrorName(rc_, &n_);                                                    \
            fprintf(stderr, "  %s:%d: %s: %s -> %s\n", __FILE__, __LINE__, g_cur, #call, n_ ? n_ : "?"); \
            g_cur_failed = 1;                                                            \
            return;                                                                      \
        }                                                                                \
    } while (0)
#define EXPECT_RC(call, want)                                                            \
    do {                                                                                 \
        CUresult rc_ = (call);                                                           \
        if (rc_ != (want)) {                                                             \
            fprintf(stderr, "  %s:%d: %s: %s -> %d, want %d\n", __FILE__, __LINE__, g_cur, #call, (int)rc_, (int)(want)); \
            g_cur_failed = 1;                                                            \
        }                                                                                \
    } while (0)

static void run(const char *name, void (*fn)(void)) {
    g_cur = name;
    g_cur_failed = 0;
    fn();
    if (g_cur_failed) {
        g_fail++;
        printf("FAIL %s\n", name);
    } else {
        g_pass++;
        printf("ok   %s\n", name);
    }
    fflush(stdout);
}

static CUcontext g_ctx;
static CUmodule g_mod, g_main_mod;
static CUfunction f_fill, f_add, f_axpy, f_scale_add, f_copy, f_hash, f_flag_set, f_sleep, f_wait;

#define N 1024

static CUresult launch1(CUfunction f, CUstream s, void **params) { return cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL); }
static CUresult k_fill(CUstream s, CUdeviceptr p, uint32_t v, uint32_t n) {
    void *a[] = {&p, &v, &n};
    return launch1(f_fill, s, a);
}
static CUresult k_hash(CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t n, uint32_t salt) {
    void *a[] = {&dst, &src, &n, &salt};
    return launch1(f_hash, s, a);
}
static CUresult k_scale_add(CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t mul, uint32_t add, uint32_t n) {
    void *a[] = {&dst, &src, &mul, &add, &n};
    return launch1(f_scale_add, s, a);
}
static CUresult k_sleep(CUstream s, uint32_t us) {
    void *a[] = {&us};
    return launch1(f_sleep, s, a);
}
static CUresult k_flag_set(CUstream s, CUdeviceptr p, uint32_t v) {
    void *a[] = {&p, &v};
    return launch1(f_flag_set, s, a);
}
static CUresult k_wait(CUstream s, CUdeviceptr flag, uint32_t v, uint32_t timeout_ms, CUdeviceptr timed_out) {
    void *a[] = {&flag, &v, &timeout_ms, &timed_out};
    return launch1(f_wait, s, a);
}

/* host models of the kernels */
static uint32_t mix32(uint32_t h, uint32_t v) {
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}
static void h_hash(uint32_t *dst, const uint32_t *src, uint32_t n, uint32_t salt) {
    for (uint32_t i = 0; i < n; i++) dst[i] = mix32(mix32(dst[i], src[i]), salt ^ i);
}

static int all_eq(const uint32_t *v, size_t n, uint32_t x) {
    for (size_t i = 0; i < n; i++)
        if (v[i] != x) return 0;
    return 1;
}

static void setup(void) {
    CUdevice dev;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&g_ctx, dev));
    CK(cuCtxSetCurrent(g_ctx));
    CK(cuModuleLoadData(&g_mod, "simcuda:" SIMKERNELS_PATH));
    CK(cuModuleLoadData(&g_main_mod, "simcuda:"));
    CK(cuModuleGetFunction(&f_fill, g_mod, "fill_u32"));
    CK(cuModuleGetFunction(&f_add, g_mod, "add_u32"));
    CK(cuModuleGetFunction(&f_axpy, g_mod, "axpy_f32"));
    CK(cuModuleGetFunction(&f_scale_add, g_mod, "scale_add_u32"));
    CK(cuModuleGetFunction(&f_copy, g_mod, "copy_u32"));
    CK(cuModuleGetFunction(&f_hash, g_mod, "hash_mix"));
    CK(cuModuleGetFunction(&f_flag_set, g_mod, "spin_flag_set"));
    CK(cuModuleGetFunction(&f_sleep, g_mod, "sleep_us"));
    CK(cuModuleGetFunction(&f_wait, g_main_mod, "wait_flag"));
    CUfunction again;
    CK(cuModuleGetFunction(&again, g_mod, "fill_u32"));
    CHECK(again == f_fill);
    EXPECT_RC(cuModuleGetFunction(&again, g_mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
}

/* ------------------------------------------------------------------------ */
static void test_device_and_context(void) {
    int v = 0, n = 0;
    char name[64];
    CK(cuDriverGetVersion(&v));
    CHECK(v == 13000);
    CK(cuDeviceGetCount(&n));
    CHECK(n == 1);
    CK(cuDeviceGetName(name, sizeof name, 0));
    CHECK(strlen(name) > 0);
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
    CHECK(v == 1024);
    CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    CHECK(v == 32);
    CUcontext c, cur;
    CK(cuCtxCreate(&c, NULL, 0, 0));
    CK(cuCtxGetCurrent(&cur));
    CHECK(cur == c);
    CK(cuCtxPushCurrent(g_ctx));
    CK(cuCtxGetCurrent(&cur));
    CHECK(cur == g_ctx);
    CK(cuCtxPopCurrent(&cur));
    CHECK(cur == g_ctx);
    CK(cuCtxSynchronize_v2(c));
    CK(cuCtxDestroy(c)); /* it was current: popped, g_ctx is current again */
    CK(cuCtxGetCurrent(&cur));
    CHECK(cur == g_ctx);
    CK(cuCtxSetCurrent(g_ctx));
    CK(cuCtxSynchronize());
    unsigned api = 0;
    CK(cuCtxGetApiVersion(NULL, &api));
    CHECK(api >= 3020);
    EXPECT_RC(cuCtxSetCurrent((CUcontext)&v), CUDA_ERROR_INVALID_CONTEXT);
}

/* work on one stream runs in order, asynchronously to the host */
static void test_stream_order(void) {
    CUstream s;
    CUdeviceptr x, y;
    uint32_t hx[N], hy[N], out[N];
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    for (int i = 0; i < N; i++) hy[i] = (uint32_t)i * 2654435761u;
    CK(cuMemcpyHtoDAsync(y, hy, sizeof hy, s));
    CK(cuMemsetD32Async(x, 17, N, s));
    for (int i = 0; i < N; i++) hx[i] = 17;
    for (uint32_t k = 0; k < 100; k++) {
        CK(k_hash(s, x, y, N, k));
        h_hash(hx, hy, N, k);
        if (k % 10 == 3) {
            CK(cuMemcpyDtoDAsync(y, x, N * 4, s));
            memcpy(hy, hx, sizeof hy);
        }
    }
    CK(cuMemcpyDtoHAsync(out, x, sizeof out, s)); /* pageable destination: returns when done */
    CHECK(memcmp(out, hx, sizeof out) == 0);
    CK(cuStreamSynchronize(s));
    CK(cuStreamQuery(s));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
}

/* the legacy stream waits for blocking streams and they wait for it */
static void test_legacy_sync_blocking(void) {
    CUstream b;
    CUdeviceptr x, y, flag, tout;
    uint32_t out[N], want[N], hy[N], t = 0;
    CK(cuStreamCreate(&b, CU_STREAM_DEFAULT));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    CK(cuMemAlloc(&flag, 4));
    CK(cuMemAlloc(&tout, 4));
    for (int i = 0; i < N; i++) hy[i] = (uint32_t)i ^ 0x5a5a;
    CK(cuMemcpyHtoD(y, hy, sizeof hy));
    for (uint32_t rep = 0; rep < 5; rep++) {
        CK(k_sleep(b, 500));
        CK(k_fill(b, x, 7, N));
        CK(k_sleep(NULL, 300));
        CK(k_hash(NULL, x, y, N, rep));     /* legacy: after b's fill */
        CK(k_hash(b, x, y, N, rep + 100));  /* b: after the legacy op */
        CK(cuStreamSynchronize(b));
        CK(cuMemcpyDtoH(out, x, sizeof out));
        for (int i = 0; i < N; i++) want[i] = 7;
        h_hash(want, hy, N, rep);
        h_hash(want, hy, N, rep + 100);
        CHECK(memcmp(out, want, sizeof out) == 0);
    }
    /* prove the wait: legacy work that would release a blocked blocking
     * stream cannot run before it, so the wait times out */
    CK(cuMemsetD32(flag, 0, 1));
    CK(cuMemsetD32(tout, 0, 1));
    CK(k_wait(b, flag, 1, 100, tout));
    CK(k_flag_set(NULL, flag, 1));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(&t, tout, 4));
    CHECK(t == 1);
    /* a blocking copy waits for blocking streams too */
    CK(k_sleep(b, 1000));
    CK(k_fill(b, x, 99, N));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 99));
    CK(cuStreamDestroy(b));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
    CK(cuMemFree(flag));
    CK(cuMemFree(tout));
}

/* a non-blocking stream does not synchronise with the legacy stream */
static void test_nonblocking_no_legacy_sync(void) {
    CUstream nb;
    CUdeviceptr flag, tout;
    uint32_t t = 9;
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&flag, 4));
    CK(cuMemAlloc(&tout, 4));
    CK(cuMemsetD32(flag, 0, 1));
    CK(cuMemsetD32(tout, 0, 1));
    CK(cuCtxSynchronize());
    CK(k_wait(nb, flag, 1, 5000, tout)); /* released by legacy work */
    CK(k_flag_set(NULL, flag, 1));
    CK(cuStreamSynchronize(NULL));
    CK(cuStreamSynchronize(nb));
    CK(cuMemcpyDtoH(&t, tout, 4));
    CHECK(t == 0);
    unsigned fl = 0;
    CK(cuStreamGetFlags(nb, &fl));
    CHECK(fl == CU_STREAM_NON_BLOCKING);
    CK(cuStreamDestroy(nb));
    CK(cuMemFree(flag));
    CK(cuMemFree(tout));
}

/* events order work across streams */
static void test_events_cross_stream(void) {
    CUstream s1, s2;
    CUevent e, t0, t1;
    CUdeviceptr x, y;
    uint32_t out[N];
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&t0, 0));
    CK(cuEventCreate(&t1, 0));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    CK(cuEventQuery(e)); /* never recorded: complete */
    for (uint32_t rep = 0; rep < 5; rep++) {
        CK(cuEventRecord(t0, s1));
        CK(k_sleep(s1, 1000));
        CK(k_fill(s1, x, 5 + rep, N));
        CK(cuEventRecord(e, s1));
        CK(cuEventRecord(t1, s1));
        CK(cuStreamWaitEvent(s2, e, 0));
        CK(k_scale_add(s2, y, x, 2, 0, N));
        CK(cuStreamSynchronize(s2));
        CK(cuMemcpyDtoH(out, y, sizeof out));
        CHECK(all_eq(out, N, 2 * (5 + rep)));
    }
    CK(cuEventSynchronize(t1));
    CK(cuEventQuery(t1));
    float ms = -1;
    CK(cuEventElapsedTime(&ms, t0, t1));
    CHECK(ms >= 0.5f);
    EXPECT_RC(cuEventElapsedTime(&ms, e, t1), CUDA_ERROR_INVALID_HANDLE);
    CK(k_sleep(s1, 20000));
    CK(cuEventRecord(e, s1));
    EXPECT_RC(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    CK(cuEventSynchronize(e));
    CK(cuEventQuery(e));
    CK(cuEventDestroy(e));
    CK(cuEventDestroy(t0));
    CK(cuEventDestroy(t1));
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
}

/* capture + instantiate + launch gives the eager result; captured work does
 * not run during capture */
static void enqueue_seq(CUstream s, CUdeviceptr x, CUdeviceptr y, int *err) {
    *err |= cuMemsetD32Async(x, 3, N, s) != CUDA_SUCCESS;
    for (uint32_t k = 0; k < 20; k++) {
        *err |= k_hash(s, x, y, N, k * 7 + 1) != CUDA_SUCCESS;
        if (k == 10) *err |= cuMemcpyDtoDAsync(y, x, N * 4, s) != CUDA_SUCCESS;
    }
}

static void test_capture_matches_eager(void) {
    CUstream s;
    CUdeviceptr x, y;
    uint32_t hy[N], eager[N], graph[N];
    int err = 0;
    unsigned long long k0, g0, gk0, k1, g1, gk1;
    simcuda_get_stats_fn stats = (simcuda_get_stats_fn)dlsym(RTLD_DEFAULT, "simcuda_get_stats");
    CHECK(stats != NULL);
    if (!stats) return;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    for (int i = 0; i < N; i++) hy[i] = (uint32_t)i * 31u + 5;

    CK(cuMemcpyHtoD(y, hy, sizeof hy));
    enqueue_seq(s, x, y, &err);
    CHECK(!err);
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(eager, x, sizeof eager));

    CK(cuMemcpyHtoD(y, hy, sizeof hy));
    CK(cuMemsetD32(x, 0xdead, N));
    CK(cuCtxSynchronize());
    stats(&k0, &g0, &gk0);
    CUstreamCaptureStatus st;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuStreamIsCapturing(s, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    enqueue_seq(s, x, y, &err);
    CHECK(!err);
    cuuint64_t id = 0;
    CUgraph cg = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t nd = 0;
    CK(cuStreamGetCaptureInfo(s, &st, &id, &cg, &deps, &edges, &nd));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && cg != NULL && nd == 1);
    CUgraph g;
    CK(cuStreamEndCapture(s, &g));
    CHECK(g == cg);
    CK(cuStreamIsCapturing(s, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
    CK(cuMemcpyDtoH(graph, x, sizeof graph));
    CHECK(all_eq(graph, N, 0xdead)); /* nothing ran */
    stats(&k1, &g1, &gk1);
    CHECK(k1 == k0);
    size_t nn = 0;
    CK(cuGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 22);
    CUgraphExec ex;
    CK(cuGraphInstantiate(&ex, g, 0));
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(graph, x, sizeof graph));
    CHECK(memcmp(graph, eager, sizeof graph) == 0);
    stats(&k1, &g1, &gk1);
    CHECK(g1 == g0 + 1);
    CHECK(gk1 == gk0 + 20);
    CHECK(k1 == k0 + 20);
    /* the legacy stream cannot capture */
    EXPECT_RC(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    /* syncing a capturing stream fails and invalidates the capture */
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(s, x, 1, N));
    EXPECT_RC(cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CK(cuStreamIsCapturing(s, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CUgraph bad = (CUgraph)1;
    EXPECT_RC(cuStreamEndCapture(s, &bad), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(bad == NULL);
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
}

/* exec kernel-node parameter update, and whole-graph update */
static void test_exec_node_params(void) {
    CUstream s;
    CUdeviceptr x;
    uint32_t out[N];
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    CUgraph g, g2, g3;
    CUgraphNode n1, n2, m1, m2;
    uint32_t v = 1, n = N, mul = 2, add = 1;
    void *fa[] = {&x, &v, &n};
    void *sa[] = {&x, &x, &mul, &add, &n};
    CUDA_KERNEL_NODE_PARAMS p = {0};
    p.func = f_fill;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 64; p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = fa;
    CK(cuGraphCreate(&g, 0));
    CK(cuGraphAddKernelNode(&n1, g, NULL, 0, &p));
    CUDA_KERNEL_NODE_PARAMS q = p;
    q.func = f_scale_add;
    q.kernelParams = sa;
    CK(cuGraphAddKernelNode(&n2, g, &n1, 1, &q));
    v = 1000; /* the node copied its arguments */
    CUgraphExec ex;
    CK(cuGraphInstantiateWithFlags(&ex, g, 0));
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 3));
    CUDA_KERNEL_NODE_PARAMS got;
    CK(cuGraphKernelNodeGetParams(n1, &got));
    CHECK(got.func == f_fill && got.blockDimX == 64 && *(uint32_t *)got.kernelParams[1] == 1);
    v = 9;
    CK(cuGraphExecKernelNodeSetParams(ex, n1, &p));
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 19));
    CK(cuGraphKernelNodeGetParams(n1, &got)); /* the graph itself is unchanged */
    CHECK(*(uint32_t *)got.kernelParams[1] == 1);
    /* whole-graph update with the same topology */
    v = 4;
    CK(cuGraphCreate(&g2, 0));
    CK(cuGraphAddKernelNode(&m1, g2, NULL, 0, &p));
    CK(cuGraphAddKernelNode(&m2, g2, &m1, 1, &q));
    CUgraphExecUpdateResultInfo info;
    CK(cuGraphExecUpdate(ex, g2, &info));
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 9));
    /* different topology: refused */
    CK(cuGraphCreate(&g3, 0));
    CK(cuGraphAddKernelNode(&m1, g3, NULL, 0, &p));
    EXPECT_RC(cuGraphExecUpdate(ex, g3, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    CK(cuGraphDestroy(g2));
    CK(cuGraphDestroy(g3));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
}

/* A kernel captured with programmatic stream serialization after a kernel
 * gets a programmatic edge: the dependency query without edge data refuses
 * it (CUDA_ERROR_LOSSY_QUERY, as the driver did for llama.cpp's graphs), the
 * one with edge data (12.3) names it. */
static void test_programmatic_edges(void) {
    CUstream s;
    CUdeviceptr x;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    uint32_t v = 1, n = N;
    void *fa[] = {&x, &v, &n};
    CUlaunchAttribute a = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
    a.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig cfg = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64, .blockDimY = 1,
                          .blockDimZ = 1, .hStream = s, .attrs = &a, .numAttrs = 1};
    CUgraph g;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(cuLaunchKernel(f_fill, 1, 1, 1, 64, 1, 1, 0, s, fa, NULL));
    CK(cuLaunchKernelEx(&cfg, f_fill, fa, NULL));
    CK(cuStreamEndCapture(s, &g));
    CUgraphNode nodes[2], dep[2];
    size_t nn = 2, nd = 2;
    CK(cuGraphGetNodes(g, nodes, &nn));
    CHECK(nn == 2);
    PFN_cuGraphNodeGetDependencies_v10000 v1 = NULL;
    CUdriverProcAddressQueryResult q;
    CK(cuGetProcAddress("cuGraphNodeGetDependencies", (void **)&v1, 10000, 0, &q));
    CUgraphNode second = NULL;
    for (size_t i = 0; i < nn; i++) {
        size_t k = 2;
        if (v1(nodes[i], dep, &k) == CUDA_ERROR_LOSSY_QUERY) second = nodes[i];
    }
    CHECK(second != NULL); /* the first node has no edge: it answers */
    CUgraphEdgeData ed[2];
    CK(cuGraphNodeGetDependencies_v2(second, dep, ed, &nd));
    CHECK(nd == 1 && ed[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
}

/* A node keeps its cluster shape when its arguments are patched
 * (gpu_nodes_probe rule 14: the driver does). */
static void test_cluster_shape_survives_an_argument_patch(void) {
    CUfunction f;
    CK(cuModuleGetFunction(&f, g_main_mod, "cluster_x"));
    CUstream s;
    CUdeviceptr x;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, 4));
    uint32_t add = 0, out = 0;
    void *args[] = {&x, &add};
    CUlaunchAttribute a = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
    a.value.clusterDim.x = 2;
    a.value.clusterDim.y = a.value.clusterDim.z = 1;
    CUlaunchConfig cfg = {.gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32, .blockDimY = 1,
                          .blockDimZ = 1, .hStream = s, .attrs = &a, .numAttrs = 1};
    CUgraph g;
    CUgraphExec ex;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(cuLaunchKernelEx(&cfg, f, args, NULL));
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiateWithFlags(&ex, g, 0));
    CUgraphNode node;
    size_t nn = 1;
    CK(cuGraphGetNodes(g, &node, &nn));
    add = 10;
    CUDA_KERNEL_NODE_PARAMS p = {.func = f, .gridDimX = 2, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
                                 .blockDimY = 1, .blockDimZ = 1, .kernelParams = args};
    CK(cuGraphExecKernelNodeSetParams(ex, node, &p));
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(&out, x, 4));
    CHECK(out == 12); /* the new argument, the old shape */
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
}

/* cuGetProcAddress picks the ABI variant by version and flags */
static void *sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static void expect_proc(const char *name, int ver, cuuint64_t flags, const char *exported) {
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = cuGetProcAddress(name, &p, ver, flags, &st);
    void *want = sym(exported);
    if (rc != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || !want || p != want) {
        fprintf(stderr, "  %s: cuGetProcAddress(%s, %d, %llu) -> rc %d, %p; want %s = %p\n", g_cur, name, ver,
                (unsigned long long)flags, (int)rc, p, exported, want);
        g_cur_failed = 1;
    }
}

static void test_get_proc_address(void) {
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, LEG = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    expect_proc("cuCtxSynchronize", 12000, 0, "cuCtxSynchronize");
    expect_proc("cuCtxSynchronize", 12090, 0, "cuCtxSynchronize");
    expect_proc("cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2");
    expect_proc("cuMemcpyHtoDAsync", 12000, 0, "cuMemcpyHtoDAsync_v2");
    expect_proc("cuMemcpyHtoDAsync", 12000, PT, "cuMemcpyHtoDAsync_v2_ptsz");
    expect_proc("cuLaunchKernel", 13000, PT, "cuLaunchKernel_ptsz");
    expect_proc("cuLaunchKernel", 13000, LEG, "cuLaunchKernel");
    expect_proc("cuMemcpyDtoH", 13000, PT, "cuMemcpyDtoH_v2_ptds");
    expect_proc("cuModuleGetFunction", 13000, PT, "cuModuleGetFunction");
    expect_proc("cuStreamBeginCapture", 13000, PT, "cuStreamBeginCapture_v2_ptsz");
    expect_proc("cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture");
    expect_proc("cuStreamGetCaptureInfo", 12030, 0, "cuStreamGetCaptureInfo_v3");
    expect_proc("cuStreamGetCaptureInfo", 11030, PT, "cuStreamGetCaptureInfo_v2_ptsz");
    expect_proc("cuGraphInstantiate", 11000, 0, "cuGraphInstantiate_v2");
    expect_proc("cuGraphInstantiate", 12000, 0, "cuGraphInstantiate_v2"); /* as driver 580 answers */
    expect_proc("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
    expect_proc("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2");
    expect_proc("cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
    expect_proc("cuCtxCreate", 11040, 0, "cuCtxCreate_v3");
    expect_proc("cuEventElapsedTime", 12080, 0, "cuEventElapsedTime_v2");
    expect_proc("cuGraphLaunch", 12000, PT, "cuGraphLaunch_ptsz");
    /* not found: CUDA_SUCCESS, *pfn NULL and the status says why (driver 580) */
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st;
    EXPECT_RC(cuGetProcAddress("cuNoSuchFunction", &p, 13000, 0, &st), CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    EXPECT_RC(cuGetProcAddress("cuLibraryLoadData", &p, 11080, 0, &st), CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    /* a name with per-thread variants, asked per-thread below their version */
    p = (void *)1;
    EXPECT_RC(cuGetProcAddress("cuLaunchKernel", &p, 6050, PT, &st), CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    EXPECT_RC(cuGetProcAddress("cuLaunchKernel_ptsz", &p, 13000, 0, &st), CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    EXPECT_RC(cuGetProcAddress("cuLaunchKernel", &p, 13000, 4, &st), CUDA_ERROR_INVALID_VALUE);
    /* the v1 ABI entry point (4 arguments) */
    PFN_cuGetProcAddress_v11030 old = (PFN_cuGetProcAddress_v11030)sym("cuGetProcAddress");
    CHECK(old != NULL);
    if (old) {
        CK(old("cuGetProcAddress", &p, 11030, 0));
        CHECK(p == (void *)old);
    }
}

/* per-thread default streams of two threads are independent */
typedef struct pt_arg {
    CUdeviceptr flag, tout;
    unsigned long long id;
    CUresult rc;
} pt_arg;

static PFN_cuLaunchKernel_v7000_ptsz p_launch_ptsz;
static PFN_cuStreamSynchronize_v7000_ptsz p_sync_ptsz;

static void *pt_waiter(void *arg) {
    pt_arg *a = arg;
    a->rc = cuCtxSetCurrent(g_ctx);
    if (!a->rc) a->rc = cuStreamGetId(CU_STREAM_PER_THREAD, &a->id);
    uint32_t v = 1, to = 3000;
    void *args[] = {&a->flag, &v, &to, &a->tout};
    if (!a->rc) a->rc = p_launch_ptsz(f_wait, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    if (!a->rc) a->rc = p_sync_ptsz(NULL);
    return NULL;
}

static void *pt_setter(void *arg) {
    pt_arg *a = arg;
    struct timespec ts = {0, 20 * 1000000};
    nanosleep(&ts, NULL); /* let the waiter block its stream first */
    a->rc = cuCtxSetCurrent(g_ctx);
    if (!a->rc) a->rc = cuStreamGetId(CU_STREAM_PER_THREAD, &a->id);
    if (!a->rc) a->rc = k_flag_set(CU_STREAM_PER_THREAD, a->flag, 1);
    if (!a->rc) a->rc = cuStreamSynchronize(CU_STREAM_PER_THREAD);
    return NULL;
}

static void test_per_thread_streams(void) {
    CUstream nb;
    pt_arg a = {0}, b = {0};
    uint32_t t = 9;
    p_launch_ptsz = (PFN_cuLaunchKernel_v7000_ptsz)sym("cuLaunchKernel_ptsz");
    p_sync_ptsz = (PFN_cuStreamSynchronize_v7000_ptsz)sym("cuStreamSynchronize_ptsz");
    CHECK(p_launch_ptsz && p_sync_ptsz);
    if (!p_launch_ptsz || !p_sync_ptsz) return;
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&a.flag, 4));
    CK(cuMemAlloc(&a.tout, 4));
    CK(cuMemsetD32(a.flag, 0, 1));
    CK(cuMemsetD32(a.tout, 0, 1));
    CK(cuCtxSynchronize());
    b = a;
    pthread_t ta, tb;
    pthread_create(&ta, NULL, pt_waiter, &a);
    pthread_create(&tb, NULL, pt_setter, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.rc == CUDA_SUCCESS && b.rc == CUDA_SUCCESS);
    CHECK(a.id != b.id);
    CK(cuMemcpyDtoH(&t, a.tout, 4));
    CHECK(t == 0);
    /* in the _ptsz variants NULL is the per-thread stream, which still
     * synchronises with the legacy stream */
    CUdeviceptr x;
    uint32_t out[N];
    CK(cuMemAlloc(&x, N * 4));
    CK(k_sleep(NULL, 1000));
    CK(k_fill(NULL, x, 5, N));
    uint32_t n = N, mul = 3, add = 0;
    void *sa[] = {&x, &x, &mul, &add, &n};
    CK(p_launch_ptsz(f_scale_add, 1, 1, 1, 1, 1, 1, 0, NULL, sa, NULL));
    CK(p_sync_ptsz(NULL));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 15));
    CK(cuStreamDestroy(nb));
    CK(cuMemFree(x));
    CK(cuMemFree(a.flag));
    CK(cuMemFree(a.tout));
}

/* the `extra` launch form matches the kernelParams form */
static void test_extra_buffer_launch(void) {
    CUdeviceptr x, y1, y2;
    float hx[N], hy[N], o1[N], o2[N];
    for (int i = 0; i < N; i++) { hx[i] = (float)i * 0.5f; hy[i] = (float)(N - i); }
    CK(cuMemAlloc(&x, sizeof hx));
    CK(cuMemAlloc(&y1, sizeof hy));
    CK(cuMemAlloc(&y2, sizeof hy));
    CK(cuMemcpyHtoD(x, hx, sizeof hx));
    CK(cuMemcpyHtoD(y1, hy, sizeof hy));
    CK(cuMemcpyHtoD(y2, hy, sizeof hy));
    float a = 3.0f;
    uint32_t n = N;
    void *params[] = {&a, &x, &y1, &n};
    CK(cuLaunchKernel(f_axpy, 4, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
    struct { float a; uint32_t pad; CUdeviceptr x, y; uint32_t n; } buf = {a, 0, x, y2, n};
    size_t size = sizeof buf;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CK(cuLaunchKernel(f_axpy, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
    memset(&buf, 0, sizeof buf); /* copied at launch */
    size = 0; /* a shorter buffer is taken (NCCL's), an empty one is not */
    EXPECT_RC(cuLaunchKernel(f_axpy, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_VALUE);
    CK(cuMemcpyDtoH(o1, y1, sizeof o1));
    CK(cuMemcpyDtoH(o2, y2, sizeof o2));
    CHECK(memcmp(o1, o2, sizeof o1) == 0);
    CHECK(o1[10] == 3.0f * 5.0f + (float)(N - 10));
    CK(cuMemFree(x));
    CK(cuMemFree(y1));
    CK(cuMemFree(y2));
}

/* natural-alignment parameter layout */
static void test_param_info(void) {
    size_t off = 99, sz = 99;
    static const size_t axo[] = {0, 8, 16, 24}, axs[] = {4, 8, 8, 4};
    for (size_t i = 0; i < 4; i++) {
        CK(cuFuncGetParamInfo(f_axpy, i, &off, &sz));
        CHECK(off == axo[i] && sz == axs[i]);
    }
    EXPECT_RC(cuFuncGetParamInfo(f_axpy, 4, &off, &sz), CUDA_ERROR_INVALID_VALUE);
    static const size_t sao[] = {0, 8, 16, 20, 24};
    for (size_t i = 0; i < 5; i++) {
        CK(cuFuncGetParamInfo(f_scale_add, i, &off, &sz));
        CHECK(off == sao[i]);
    }
    CUlibrary lib;
    CUkernel k;
    CK(cuLibraryLoadData(&lib, "simcuda:" SIMKERNELS_PATH, NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&k, lib, "fill_u32"));
    CK(cuKernelGetParamInfo(k, 2, &off, &sz));
    CHECK(off == 12 && sz == 4);
    EXPECT_RC(cuKernelGetParamInfo(k, 3, &off, &sz), CUDA_ERROR_INVALID_VALUE);
    CK(cuLibraryUnload(lib));
}

/* the library API; a CUkernel may be launched as a CUfunction */
static void test_library_kernels(void) {
    CUlibrary lib;
    CUkernel k;
    CUfunction f;
    CUmodule m, fm;
    const char *name = NULL;
    CUdeviceptr x;
    uint32_t out[N];
    CK(cuLibraryLoadData(&lib, "simcuda:" SIMKERNELS_PATH, NULL, NULL, 0, NULL, NULL, 0));
    CK(cuLibraryGetKernel(&k, lib, "fill_u32"));
    CK(cuKernelGetFunction(&f, k));
    CK(cuLibraryGetModule(&m, lib));
    CK(cuFuncGetModule(&fm, f));
    CHECK(m == fm);
    CK(cuFuncGetName(&name, f));
    CHECK(name && strcmp(name, "fill_u32") == 0);
    CK(cuKernelGetName(&name, k));
    CHECK(name && strcmp(name, "fill_u32") == 0);
    CK(cuMemAlloc(&x, N * 4));
    uint32_t v = 42, n = N;
    void *a[] = {&x, &v, &n};
    CK(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, a, NULL));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 42));
    int attr = 0;
    CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000));
    CK(cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
    CHECK(attr == 100000);
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 90000, NULL, a, NULL));
    CK(cuCtxSynchronize());
    CK(cuMemFree(x));
    CK(cuLibraryUnload(lib));
    EXPECT_RC(cuKernelGetFunction(&f, k), CUDA_ERROR_INVALID_HANDLE);
}

/* invalid launch configurations fail synchronously */
static void test_launch_validation(void) {
    CUdeviceptr x;
    CK(cuMemAlloc(&x, 4));
    uint32_t v = 1, n = 1;
    void *a[] = {&x, &v, &n};
    EXPECT_RC(cuLaunchKernel(f_fill, 1, 1, 1, 1025, 1, 1, 0, NULL, a, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(f_fill, 1, 1, 1, 32, 32, 2, 0, NULL, a, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(f_fill, 0, 1, 1, 32, 1, 1, 0, NULL, a, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(f_fill, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel(f_fill, 1, 1, 1, 32, 1, 1, 60000, NULL, a, NULL), CUDA_ERROR_INVALID_VALUE);
    EXPECT_RC(cuLaunchKernel((CUfunction)&v, 1, 1, 1, 32, 1, 1, 0, NULL, a, NULL), CUDA_ERROR_INVALID_HANDLE);
    CUlaunchConfig cfg = {0};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32; cfg.blockDimY = cfg.blockDimZ = 1;
    CK(cuLaunchKernelEx(&cfg, f_fill, a, NULL));
    cfg.blockDimX = 2048;
    EXPECT_RC(cuLaunchKernelEx(&cfg, f_fill, a, NULL), CUDA_ERROR_INVALID_VALUE);
    CK(cuCtxSynchronize());
    CK(cuMemFree(x));
}

/* async copies from pageable memory are staged at call time */
static void test_pageable_async_copy(void) {
    CUstream s;
    CUdeviceptr x;
    uint32_t h[N], out[N], *pinned;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAllocHost((void **)&pinned, N * 4));
    for (int i = 0; i < N; i++) h[i] = 11;
    CK(k_sleep(s, 2000));
    CK(cuMemcpyHtoDAsync(x, h, sizeof h, s));
    for (int i = 0; i < N; i++) h[i] = 12; /* too late to matter */
    CK(cuMemcpyDtoHAsync(pinned, x, N * 4, s)); /* pinned: truly async */
    CK(cuStreamSynchronize(s));
    CHECK(all_eq(pinned, N, 11));
    CK(cuMemcpyDtoHAsync(out, x, sizeof out, s));
    CHECK(all_eq(out, N, 11));
    CK(cuMemFreeHost(pinned));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
}

/* fork/join capture across two streams with events */
static void test_fork_join_capture(void) {
    CUstream s1, s2;
    CUevent fork, join;
    CUdeviceptr x, y, z;
    uint32_t out[N];
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    CK(cuMemAlloc(&z, N * 4));
    CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(k_fill(s1, x, 2, N));
    CK(cuEventRecord(fork, s1));
    CK(cuStreamWaitEvent(s2, fork, 0));
    CK(k_scale_add(s2, y, x, 10, 0, N)); /* y = 20 */
    CK(k_scale_add(s1, z, x, 100, 0, N)); /* z = 200, concurrent with y */
    CK(cuEventRecord(join, s2));
    CK(cuStreamWaitEvent(s1, join, 0));
    uint32_t n = N;
    void *aa[] = {&x, &y, &z, &n};
    CK(launch1(f_add, s1, aa)); /* x = y + z = 220 */
    CUgraph g;
    CK(cuStreamEndCapture(s1, &g));
    size_t nn = 0;
    CK(cuGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 4);
    CUgraphExec ex;
    CK(cuGraphInstantiate(&ex, g, 0));
    for (int rep = 0; rep < 10; rep++) {
        CK(cuMemsetD32Async(x, 0, N, s2));
        CK(cuStreamSynchronize(s2));
        CK(cuGraphLaunch(ex, s2));
        CK(cuStreamSynchronize(s2));
        CK(cuMemcpyDtoH(out, x, sizeof out));
        CHECK(all_eq(out, N, 220));
    }
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    /* a forked stream that is not joined back */
    CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CK(k_fill(s1, x, 2, N));
    CK(cuEventRecord(fork, s1));
    CK(cuStreamWaitEvent(s2, fork, 0));
    CK(k_fill(s2, y, 3, N));
    g = (CUgraph)1;
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
    CHECK(g == NULL);
    CUstreamCaptureStatus st;
    CK(cuStreamIsCapturing(s2, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
    /* waiting on an event recorded outside the capture */
    CK(cuEventRecord(join, s2));
    CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    EXPECT_RC(cuStreamWaitEvent(s1, join, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    EXPECT_RC(cuStreamEndCapture(s1, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CK(cuCtxSynchronize());
    CK(cuEventDestroy(fork));
    CK(cuEventDestroy(join));
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
    CK(cuMemFree(z));
}

/* capture modes, implicit legacy sync, and the failure hooks */
static void test_capture_rules_and_fail_hooks(void) {
    CUstream b, nb;
    CUdeviceptr x, tmp;
    CUgraph g;
    CK(cuStreamCreate(&b, CU_STREAM_DEFAULT));
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    /* global mode: cuMemAlloc is prohibited and invalidates the capture */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(k_fill(nb, x, 1, N));
    EXPECT_RC(cuMemAlloc(&tmp, 16), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_RC(cuStreamEndCapture(nb, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* relaxed mode: allowed */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(nb, x, 1, N));
    CK(cuMemAlloc(&tmp, 16));
    CK(cuStreamEndCapture(nb, &g));
    CK(cuGraphDestroy(g));
    CK(cuMemFree(tmp));
    /* thread mode exchange */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(cuMemAlloc(&tmp, 16)); /* this thread is relaxed: allowed, although its capture is global */
    CK(cuThreadExchangeStreamCaptureMode(&mode));
    CK(cuStreamEndCapture(nb, &g));
    CK(cuGraphDestroy(g));
    CK(cuMemFree(tmp));
    /* legacy-stream work while a blocking stream captures */
    CK(cuStreamBeginCapture(b, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(b, x, 1, N));
    EXPECT_RC(k_fill(NULL, x, 2, N), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    EXPECT_RC(cuStreamEndCapture(b, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* ...but a non-blocking capture does not care */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(nb, x, 1, N));
    CK(k_fill(NULL, x, 2, N));
    CK(cuStreamEndCapture(nb, &g));
    /* failure hooks */
    setenv("SIMCUDA_FAIL_INSTANTIATE", "1", 1);
    CUgraphExec ex;
    EXPECT_RC(cuGraphInstantiate(&ex, g, 0), CUDA_ERROR_INVALID_VALUE);
    unsetenv("SIMCUDA_FAIL_INSTANTIATE");
    CK(cuGraphInstantiate(&ex, g, 0));
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    setenv("SIMCUDA_FAIL_CAPTURE", "1", 1);
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(nb, x, 1, N));
    EXPECT_RC(cuStreamEndCapture(nb, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    unsetenv("SIMCUDA_FAIL_CAPTURE");
    CUstreamCaptureStatus st;
    CK(cuStreamIsCapturing(nb, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
    CK(cuCtxSynchronize());
    CK(cuStreamDestroy(b));
    CK(cuStreamDestroy(nb));
    CK(cuMemFree(x));
}

/* an executable graph launched on two streams runs one launch at a time */
static void test_graph_exec_serialised(void) {
    CUstream s1, s2;
    CUdeviceptr x, y;
    uint32_t hx[N], hy[N], out[N];
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    for (int i = 0; i < N; i++) { hx[i] = 1; hy[i] = (uint32_t)i; }
    CK(cuMemcpyHtoD(x, hx, sizeof hx));
    CK(cuMemcpyHtoD(y, hy, sizeof hy));
    CUgraph g;
    CK(cuStreamBeginCapture(s1, CU_STREAM_CAPTURE_MODE_RELAXED));
    for (uint32_t k = 0; k < 8; k++) CK(k_hash(s1, x, y, N, k));
    CK(cuStreamEndCapture(s1, &g));
    CUgraphExec ex;
    CK(cuGraphInstantiate(&ex, g, 0));
    for (int r = 0; r < 6; r++) {
        CK(cuGraphLaunch(ex, (r & 1) ? s2 : s1));
        for (uint32_t k = 0; k < 8; k++) h_hash(hx, hy, N, k);
    }
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(memcmp(out, hx, sizeof out) == 0);
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
}

/* A kernel node of f over 1 block of 32 threads (the launch1 shape). */
static CUresult add_knode(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd, CUfunction f, void **a) {
    CUDA_KERNEL_NODE_PARAMS p = {.func = f, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
                                 .blockDimY = 1, .blockDimZ = 1, .kernelParams = a};
    return cuGraphAddKernelNode_v2(n, g, deps, nd, &p);
}

/* event record and wait nodes the program adds itself (cuGraphAddEvent*Node)
 * are resolved at each launch: a wait node waits for the event's latest
 * record as of the launch; a record node's record is the event's latest
 * from the launch on (later waits and queries see it) */
static void test_program_event_nodes(void) {
    CUstream s1, s2;
    CUevent e, got;
    CUdeviceptr x, y;
    uint32_t out[N];
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    /* wait node -> y = 2 * x */
    CUgraph gw;
    CUgraphNode wn, kn;
    uint32_t n = N, two = 2, zero = 0;
    void *sa[] = {&y, &x, &two, &zero, &n};
    CK(cuGraphCreate(&gw, 0));
    CK(cuGraphAddEventWaitNode(&wn, gw, NULL, 0, e));
    CK(add_knode(&kn, gw, &wn, 1, f_scale_add, sa));
    CK(cuGraphEventWaitNodeGetEvent(wn, &got));
    CHECK(got == e);
    EXPECT_RC(cuGraphEventRecordNodeGetEvent(wn, &got), CUDA_ERROR_INVALID_VALUE);
    CUgraphExec xw;
    CK(cuGraphInstantiate(&xw, gw, 0));
    for (uint32_t rep = 0; rep < 4; rep++) {
        CK(k_sleep(s1, 2000));
        CK(k_fill(s1, x, 5 + rep, N));
        CK(cuEventRecord(e, s1));
        CK(cuGraphLaunch(xw, s2));
        CK(cuStreamSynchronize(s2));
        CK(cuMemcpyDtoH(out, y, sizeof out));
        CHECK(all_eq(out, N, 2 * (5 + rep)));
    }
    /* sleep -> x = 9 -> record node; a wait issued after the launch waits for it */
    CUgraph gr;
    CUgraphNode sn, fn, rn;
    uint32_t us = 5000, nine = 9;
    void *pa[] = {&us}, *fa[] = {&x, &nine, &n};
    CK(cuGraphCreate(&gr, 0));
    CK(add_knode(&sn, gr, NULL, 0, f_sleep, pa));
    CK(add_knode(&fn, gr, &sn, 1, f_fill, fa));
    CK(cuGraphAddEventRecordNode(&rn, gr, &fn, 1, e));
    CK(cuGraphEventRecordNodeGetEvent(rn, &got));
    CHECK(got == e);
    CUgraphNodeType type;
    CK(cuGraphNodeGetType(rn, &type));
    CHECK(type == CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    CUgraphExec xr;
    CK(cuGraphInstantiate(&xr, gr, 0));
    CK(cuCtxSynchronize());
    CK(cuGraphLaunch(xr, s1));
    EXPECT_RC(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    CK(cuStreamWaitEvent(s2, e, 0));
    CK(k_scale_add(s2, y, x, 2, 0, N));
    CK(cuStreamSynchronize(s2));
    CK(cuMemcpyDtoH(out, y, sizeof out));
    CHECK(all_eq(out, N, 18));
    CK(cuEventSynchronize(e));
    CK(cuGraphExecDestroy(xw));
    CK(cuGraphExecDestroy(xr));
    CK(cuGraphDestroy(gw));
    CK(cuGraphDestroy(gr));
    CK(cuEventDestroy(e));
    CK(cuStreamDestroy(s1));
    CK(cuStreamDestroy(s2));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
}

/* host functions, callbacks and stream-ordered allocation */
static int g_host_hits;
static void host_fn(void *ud) { __atomic_add_fetch((int *)ud, 1, __ATOMIC_SEQ_CST); }
static void CUDA_CB stream_cb(CUstream h, CUresult st, void *ud) {
    (void)h;
    if (st == CUDA_SUCCESS) __atomic_add_fetch((int *)ud, 10, __ATOMIC_SEQ_CST);
}
static void test_host_funcs_and_async_alloc(void) {
    CUstream s;
    CUdeviceptr x;
    uint32_t out[N];
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAllocAsync(&x, N * 4, s));
    CK(k_sleep(s, 1000));
    CK(k_fill(s, x, 8, N));
    CK(cuLaunchHostFunc(s, host_fn, &g_host_hits));
    CK(cuStreamAddCallback(s, stream_cb, &g_host_hits, 0));
    CK(cuMemcpyDtoHAsync(out, x, sizeof out, s));
    CK(cuMemFreeAsync(x, s));
    CK(cuStreamSynchronize(s));
    CHECK(all_eq(out, N, 8));
    CHECK(__atomic_load_n(&g_host_hits, __ATOMIC_SEQ_CST) == 11);
    size_t fr = 0, tot = 0;
    CK(cuMemGetInfo(&fr, &tot));
    CHECK(fr <= tot && tot > 0);
    CUmemorytype mt = 0;
    CK(cuMemAlloc(&x, 64));
    CK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, x + 8));
    CHECK(mt == CU_MEMORYTYPE_DEVICE);
    CK(cuMemFree(x));
    CK(cuStreamDestroy(s));
}

/* rules seen on a real driver (580.159.04, see sim_probe.c) */
static void *end_capture_elsewhere(void *arg) {
    CUstream s = arg;
    CUgraph g = NULL;
    cuCtxSetCurrent(g_ctx);
    return (void *)(intptr_t)cuStreamEndCapture(s, &g);
}

static void test_capture_observed_rules(void) {
    CUstream nb, other;
    CUdeviceptr x, a = 0;
    CUevent e;
    CUgraph g;
    CUstreamCaptureStatus st;
    uint32_t v = 5;
    CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CK(cuMemAlloc(&x, N * 4));
    /* synchronising the context fails while one of its streams captures */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(nb, x, 1, N));
    EXPECT_RC(cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_RC(cuStreamEndCapture(nb, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* global mode: a blocking copy is fine, a stream sync is not */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(k_fill(nb, x, 1, N));
    CK(cuMemcpyHtoD(x, &v, 4));
    CK(cuStreamIsCapturing(nb, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    EXPECT_RC(cuStreamSynchronize(other), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    EXPECT_RC(cuStreamEndCapture(nb, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* an event recorded in a capture */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(k_fill(nb, x, 1, N));
    CK(cuEventRecord(e, nb));
    EXPECT_RC(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
    EXPECT_RC(cuStreamEndCapture(nb, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_RC(cuEventQuery(e), CUDA_ERROR_INVALID_VALUE);
    CK(cuEventRecord(e, other));
    CK(cuEventSynchronize(e));
    CK(cuEventQuery(e));
    /* stream-ordered allocation inside a capture: graph allocation nodes */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(cuMemAllocAsync(&a, N * 4, nb));
    CK(k_fill(nb, a, 6, N));
    void *ca[] = {&x, &a, &(uint32_t){N}};
    CK(launch1(f_copy, nb, ca));
    CK(cuMemFreeAsync(a, nb));
    CK(cuStreamEndCapture(nb, &g));
    size_t nn = 0;
    CK(cuGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 4);
    CUgraphNode nodes[4];
    CUgraphNodeType t0 = CU_GRAPH_NODE_TYPE_EMPTY, t3 = CU_GRAPH_NODE_TYPE_EMPTY;
    nn = 4;
    CK(cuGraphGetNodes(g, nodes, &nn));
    CK(cuGraphNodeGetType(nodes[0], &t0));
    CK(cuGraphNodeGetType(nodes[3], &t3));
    CHECK(t0 == CU_GRAPH_NODE_TYPE_MEM_ALLOC && t3 == CU_GRAPH_NODE_TYPE_MEM_FREE);
    CUgraphExec ex;
    uint32_t out[N];
    CK(cuGraphInstantiate(&ex, g, 0));
    CK(cuGraphLaunch(ex, nb));
    CK(cuStreamSynchronize(nb));
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 6));
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    /* ending a global-mode capture from another thread fails and ends it */
    CK(cuStreamBeginCapture(nb, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CK(k_fill(nb, x, 1, N));
    pthread_t t;
    void *trc = NULL;
    pthread_create(&t, NULL, end_capture_elsewhere, nb);
    pthread_join(t, &trc);
    CHECK((CUresult)(intptr_t)trc == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    CK(cuStreamIsCapturing(nb, &st));
    CHECK(st == CU_STREAM_CAPTURE_STATUS_NONE);
    CK(cuCtxSynchronize());
    CK(cuEventDestroy(e));
    CK(cuStreamDestroy(nb));
    CK(cuStreamDestroy(other));
    CK(cuMemFree(x));
}

/* A context's end ends its host registrations (the memory is pageable again)
 * and frees its page-locked and device memory. */
static void test_memory_goes_with_its_context(void) {
    static uint32_t buf[1024] __attribute__((aligned(4096)));
    CUcontext c, cur;
    CK(cuCtxCreate(&c, NULL, 0, 0));
    CK(cuMemHostRegister(buf, sizeof buf, 0));
    CHECK(cuMemHostRegister(buf, sizeof buf, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CUdeviceptr d;
    CK(cuMemAlloc(&d, 4096));
    size_t free0, free1, total;
    CK(cuMemGetInfo(&free0, &total));
    CK(cuCtxDestroy(c));
    CK(cuCtxGetCurrent(&cur));
    CHECK(cur == g_ctx);
    CK(cuMemGetInfo(&free1, &total));
    CHECK(free1 == free0 + 4096);
    CK(cuMemHostRegister(buf, sizeof buf, 0)); /* not registered any more */
    CK(cuMemHostUnregister(buf));
}

/* Stream operations the driver refuses at the call (issue 26): memsets not
 * aligned to their element size, copies running past a device allocation;
 * a captured memset node's update to a misaligned destination is refused
 * too, and SIMCUDA_FAIL_EXEC_SET_PARAMS_ONCE refuses one update alone. */
static void test_op_errors(void) {
    CUstream s;
    CUdeviceptr x, y;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuMemAlloc(&x, N * 4));
    CK(cuMemAlloc(&y, N * 4));
    CHECK(cuMemsetD32Async(x + 2, 1, 4, s) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemsetD16Async(x + 1, 1, 4, s) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemsetD32_v2(x + 1, 1, 4) == CUDA_ERROR_INVALID_VALUE);
    CK(cuMemsetD8Async(x + 1, 1, 4, s));
    CK(cuMemsetD16Async(x + 2, 1, 4, s));
    CHECK(cuMemsetD2D32Async(x + 2, 64, 1, 4, 2, s) == CUDA_ERROR_INVALID_VALUE); /* 2D: the same rule */
    CHECK(cuMemsetD2D16Async(x + 1, 64, 1, 4, 2, s) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemsetD2D32_v2(x + 2, 64, 1, 4, 2) == CUDA_ERROR_INVALID_VALUE);
    CK(cuMemsetD2D8Async(x + 1, 64, 1, 4, 2, s));
    CK(cuMemsetD2D32Async(y, 64, 9, 4, 2, s)); /* words 0-3 and 16-19 */
    CK(cuStreamSynchronize(s));
    uint32_t rows[20];
    CK(cuMemcpyDtoH(rows, y, sizeof rows));
    CHECK(rows[0] == 9 && rows[3] == 9 && rows[4] != 9 && rows[16] == 9 && rows[19] == 9);
    CHECK(cuMemcpyAsync(y, x + 8, N * 4, s) == CUDA_ERROR_INVALID_VALUE); /* source past its allocation */
    CHECK(cuMemcpyAsync(y + 8, x, N * 4, s) == CUDA_ERROR_INVALID_VALUE); /* destination past its allocation */
    CK(cuMemcpyAsync(y + 8, x, N * 4 - 8, s));
    /* a memset node: its update to a misaligned destination is refused, an aligned one taken */
    CUgraph g;
    CUgraphExec ex;
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CK(cuMemsetD32Async(x, 7, N, s));
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiateWithFlags(&ex, g, 0));
    CUgraphNode node;
    size_t nn = 1;
    CK(cuGraphGetNodes(g, &node, &nn));
    CUDA_MEMSET_NODE_PARAMS p;
    CK(cuGraphMemsetNodeGetParams(node, &p));
    CUDA_MEMSET_NODE_PARAMS q = p;
    q.dst = y + 2;
    CHECK(cuGraphExecMemsetNodeSetParams(ex, node, &q, NULL) == CUDA_ERROR_INVALID_VALUE);
    q.dst = y;
    CK(cuGraphExecMemsetNodeSetParams(ex, node, &q, NULL));
    q.width = N / 2; /* another width: taken (rule 16, an H200) */
    CK(cuGraphExecMemsetNodeSetParams(ex, node, &q, NULL));
    q.elementSize = 1; /* another element size: refused */
    CHECK(cuGraphExecMemsetNodeSetParams(ex, node, &q, NULL) == CUDA_ERROR_INVALID_VALUE);
    setenv("SIMCUDA_FAIL_EXEC_SET_PARAMS_ONCE", "1", 1);
    CHECK(cuGraphExecMemsetNodeSetParams(ex, node, &p, NULL) == CUDA_ERROR_INVALID_VALUE);
    CK(cuGraphExecMemsetNodeSetParams(ex, node, &p, NULL));
    unsetenv("SIMCUDA_FAIL_EXEC_SET_PARAMS_ONCE");
    CK(cuGraphLaunch(ex, s));
    CK(cuStreamSynchronize(s));
    uint32_t out[N];
    CK(cuMemcpyDtoH(out, x, sizeof out));
    CHECK(all_eq(out, N, 7));
    CK(cuGraphExecDestroy(ex));
    CK(cuGraphDestroy(g));
    CK(cuStreamDestroy(s));
    CK(cuMemFree(x));
    CK(cuMemFree(y));
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    run("setup", setup);
    if (g_fail) {
        printf("%d passed, %d failed\n", g_pass, g_fail);
        return 1;
    }
    run("device_and_context", test_device_and_context);
    run("stream_order", test_stream_order);
    run("legacy_sync_blocking", test_legacy_sync_blocking);
    run("nonblocking_no_legacy_sync", test_nonblocking_no_legacy_sync);
    run("events_cross_stream", test_events_cross_stream);
    run("capture_matches_eager", test_capture_matches_eager);
    run("exec_node_params", test_exec_node_params);
    run("programmatic_edges", test_programmatic_edges);
    run("cluster_shape_survives_an_argument_patch", test_cluster_shape_survives_an_argument_patch);
    run("get_proc_address", test_get_proc_address);
    run("per_thread_streams", test_per_thread_streams);
    run("extra_buffer_launch", test_extra_buffer_launch);
    run("param_info", test_param_info);
    run("library_kernels", test_library_kernels);
    run("launch_validation", test_launch_validation);
    run("pageable_async_copy", test_pageable_async_copy);
    run("fork_join_capture", test_fork_join_capture);
    run("capture_rules_and_fail_hooks", test_capture_rules_and_fail_hooks);
    run("graph_exec_serialised", test_graph_exec_serialised);
    run("program_event_nodes", test_program_event_nodes);
    run("capture_observed_rules", test_capture_observed_rules);
    run("host_funcs_and_async_alloc", test_host_funcs_and_async_alloc);
    run("memory_goes_with_its_context", test_memory_goes_with_its_context);
    run("op_errors", test_op_errors);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
