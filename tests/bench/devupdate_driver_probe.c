/* Device-side graph updates the way encore would make them (issue 30): driver API only, the updater kernel a
 * module loaded from its bytes (devupdate_updater.cu, linked with the device runtime at build time), the
 * program's kernel from a module of its own, the launches captured on a non-blocking stream in relaxed mode
 * (as encore captures), each made device-updatable through cuLaunchKernelEx's attribute. devupdate_probe.cu
 * showed the CUDA runtime's way on the H200 (call 87: 8 nodes updated for 1.5 us of host time a launch,
 * against 4.8 patched from the host); this asks whether encore's way works too:
 *   - the updater module loads (cuModuleLoadData) and the capture with the attribute is accepted;
 *   - every launch takes its own slot's updates (arguments), and a grid update from the device works;
 *   - the host's time a launch: slot written and graph launched, against the same graph with empty slots.
 * Each v is a multiple of 0.25 below 4, so every sum is exact and the result depends on every launch's own
 * arguments (an update applied one launch late changes it).
 *
 *   nvcc -arch=sm_90 -rdc=true -c devupdate_updater.cu -o u.o
 *   nvcc -arch=sm_90 -dlink u.o -lcudadevrt -cubin -o updater.cubin
 *   nvcc -arch=sm_90 -cubin devupdate_bump.cu -o bump.cubin
 *   cc -O2 -I$CUDA/include devupdate_driver_probe.c -o devupdate_driver_probe -lcuda
 *   devupdate_driver_probe updater.cubin bump.cubin [--n N] [--iters I]
 *
 * Output: "RESULT what=... " lines; check=ok or the first difference. Not part of encore or its tests. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "devupdate_slot.h"

#define CK(call)                                                                       \
    do {                                                                               \
        CUresult e_ = (call);                                                          \
        if (e_ != CUDA_SUCCESS) {                                                      \
            const char *s_ = NULL;                                                     \
            cuGetErrorString(e_, &s_);                                                 \
            printf("RESULT what=failed call=\"%s\" line=%d error=%d (%s)\n", #call, __LINE__, (int)e_, s_ ? s_ : "?"); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

enum { ELEMS = 1024, THREADS = 256, RING = 64, MAXN = 32 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("RESULT what=failed reading %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) exit(1);
    fclose(f);
    return b;
}

static float value(long it, int node) { return (float)((it * 7 + node * 3) % 13) * 0.25f; }

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: devupdate_driver_probe updater.cubin bump.cubin [--n N] [--iters I]\n");
        return 2;
    }
    int N = 8, ITERS = 2000;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n")) N = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--iters")) ITERS = atoi(argv[i + 1]);
    }
    if (N < 1 || N > MAXN) N = 8;
    CUdevice dev;
    CUcontext ctx;
    int drv = 0;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuDriverGetVersion(&drv));
    CUmodule mu, mb;
    CUfunction upd, bump;
    CK(cuModuleLoadData(&mu, read_file(argv[1])));
    CK(cuModuleGetFunction(&upd, mu, "encore_updater"));
    CK(cuModuleLoadData(&mb, read_file(argv[2])));
    CK(cuModuleGetFunction(&bump, mb, "bump"));
    printf("RESULT what=modules-loaded driver=%d n=%d iters=%d\n", drv, N, ITERS);

    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr x, counter, ring_d;
    CK(cuMemAlloc(&x, ELEMS * sizeof(float)));
    CK(cuMemsetD32(x, 0, ELEMS));
    CK(cuMemAlloc(&counter, sizeof(unsigned)));
    CK(cuMemsetD32(counter, 0, 1));
    enc_dev_slot *ring;
    CK(cuMemHostAlloc((void **)&ring, RING * sizeof *ring, CU_MEMHOSTALLOC_DEVICEMAP));
    memset(ring, 0, RING * sizeof *ring);
    CK(cuMemHostGetDevicePointer(&ring_d, ring, 0));
    for (int k = 0; k < RING; k++) ring[k].done = 1;

    /* capture: the updater, then N device-updatable bump launches */
    int elems = ELEMS;
    unsigned mask = RING - 1;
    float v0[MAXN];
    CUgraphDeviceNode nodes[MAXN];
    CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    void *uargs[3] = {&ring_d, &mask, &counter};
    CK(cuLaunchKernel(upd, 1, 1, 1, 64, 1, 1, 0, s, uargs, NULL));
    for (int j = 0; j < N; j++) {
        v0[j] = value(0, j);
        CUlaunchAttribute at;
        memset(&at, 0, sizeof at);
        at.id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
        at.value.deviceUpdatableKernelNode.deviceUpdatable = 1;
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = (ELEMS + THREADS - 1) / THREADS, cfg.gridDimY = 1, cfg.gridDimZ = 1;
        cfg.blockDimX = THREADS, cfg.blockDimY = 1, cfg.blockDimZ = 1;
        cfg.hStream = s;
        cfg.attrs = &at;
        cfg.numAttrs = 1;
        void *args[3] = {&x, &elems, &v0[j]};
        CK(cuLaunchKernelEx(&cfg, bump, args, NULL));
        nodes[j] = at.value.deviceUpdatableKernelNode.devNode;
    }
    CUgraph g;
    CUgraphExec e;
    CK(cuStreamEndCapture(s, &g));
    CK(cuGraphInstantiate(&e, g, 0));
    printf("RESULT what=captured-instantiated node0=%p\n", (void *)nodes[0]);

    /* ITERS launches, each with its own v for every node (sync after each: the regime of a decoding loop) */
    double expect = 0, t_dev = 0, t_empty = 0;
    float cur[MAXN];
    memcpy(cur, v0, sizeof cur);
    long launches = 0;
    for (int round = 0; round < 2; round++) { /* round 0: every node updated; round 1: empty slots */
        for (int it = 0; it < ITERS; it++, launches++) {
            enc_dev_slot *sl = &ring[launches & mask];
            while (!sl->done) { /* the updater has not taken it yet: the ring is full */
            }
            double a = now_us();
            sl->done = 0;
            sl->rc = 0;
            sl->n = round == 0 ? (uint32_t)N : 0;
            for (int j = 0; j < (int)sl->n; j++) {
                enc_dev_update *u = &sl->u[j];
                u->node = nodes[j];
                u->kind = ENC_DEV_PARAM;
                u->offset = 12; /* bump(float *x, int n, float v): v after the pointer and the int */
                u->size = sizeof(float);
                cur[j] = value(it + 1, j);
                memcpy(u->value, &cur[j], sizeof(float));
            }
            CK(cuGraphLaunch(e, s));
            double b = now_us();
            if (round == 0) t_dev += b - a; else t_empty += b - a;
            for (int j = 0; j < N; j++) expect = (float)((float)expect + cur[j]);
            CK(cuStreamSynchronize(s));
            if (sl->rc) {
                printf("RESULT what=updates check=failed rc=%d at launch %ld\n", sl->rc, launches);
                return 1;
            }
        }
    }
    float h[ELEMS];
    CK(cuMemcpyDtoH(h, x, sizeof h));
    int ok = h[0] == (float)expect && h[ELEMS - 1] == (float)expect;
    printf("RESULT what=argument-updates check=%s (elem0 %g last %g want %g) host_us_updated=%.3f host_us_empty=%.3f\n",
           ok ? "ok" : "DIFFERS", h[0], h[ELEMS - 1], expect, t_dev / ITERS, t_empty / ITERS);

    /* one grid update from the device: node 0 cut to one block; elements past it miss node 0's v */
    enc_dev_slot *sl = &ring[launches & mask];
    while (!sl->done) {
    }
    sl->done = 0;
    sl->rc = 0;
    sl->n = 1;
    sl->u[0].node = nodes[0];
    sl->u[0].kind = ENC_DEV_GRID;
    sl->u[0].grid[0] = 1, sl->u[0].grid[1] = 1, sl->u[0].grid[2] = 1;
    CK(cuGraphLaunch(e, s));
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(h, x, sizeof h));
    float first = (float)expect, last = (float)expect;
    for (int j = 0; j < N; j++) {
        first = first + cur[j];
        if (j) last = last + cur[j];
    }
    ok = sl->rc == 0 && h[0] == first && h[ELEMS - 1] == last;
    printf("RESULT what=grid-update check=%s (elem0 %g want %g, last %g want %g, rc %d)\n", ok ? "ok" : "DIFFERS", h[0],
           first, h[ELEMS - 1], last, sl->rc);
    return 0;
}
