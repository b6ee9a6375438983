/* The program's memory as encore must see it (issue 26): page-locked host
 * memory that stops being page-locked, device memory given back
 * stream-ordered, device memory that runs out, a context that goes away
 * while the program captures. One behaviour per mode; every iteration of a
 * hot loop copies a host buffer to the device (cuMemcpyHtoDAsync), runs four
 * kernels on it and prints their reduction.
 *
 *   register    a buffer of the program's own (malloc) is registered
 *               (cuMemHostRegister) and copied from, page-locked; then the
 *               primary context is reset (cudaDeviceReset), which ends the
 *               registration: the same buffer is pageable, and the program
 *               overwrites it right after each copy call (the driver staged
 *               it at the call). A copy held as page-locked would read the
 *               overwritten buffer at its graph's replay
 *   release     the same, the context destroyed by the release of its last
 *               reference (cuDevicePrimaryCtxRelease)
 *   hostalloc   the buffer comes from cuMemAllocHost; the reset frees it, and
 *               the program's malloc hands its address out again (pageable)
 *   freeasync   8,300 device buffers allocated and given back with
 *               cuMemFreeAsync (run with SIMCUDA_NO_ADDRESS_REUSE=1: no
 *               address comes twice), then the hot loop from page-locked
 *               memory: its copies are held as before (no stale range fills
 *               encore's table)
 *   poolcopy    the hot loop's device buffer is a stream-ordered allocation
 *               (cuMemAllocAsync): copies into it are held
 *   oom         (SIMCUDA_DEVICE_MEMORY set) after the hot loop, the program
 *               allocates exactly the device memory it left free: encore's
 *               graphs may not cost it that allocation
 *   unnamed     (SIMCUDA_DEVICES=2) hot loops on both devices; device 0's
 *               primary context is reset while the program captures a stream
 *               of device 1 (encore makes no driver call then): device 1's
 *               graphs stay and replay, none leaks, device 0 starts over
 *
 *   prog_mem_reset MODE */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 512u
#define BYTES (N * 4u)
#define ITERATIONS 30

static prog_kernels k;

/* The hot loop on s: host -> z, kernels, reduction. `pageable`: the host
 * buffer is overwritten right after each copy call. */
static void hot_loop(CUstream s, uint32_t *host, CUdeviceptr z, int pageable, const char *what) {
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    for (int it = 0; it < ITERATIONS; it++) {
        for (uint32_t i = 0; i < N; i++) host[i] = (uint32_t)it * 31u + i;
        k_mix(&k, s, x, 5, N);
        CK(drv.cuMemcpyHtoDAsync(z, host, BYTES, s)); /* mid-sequence: held, or the sequence ends here */
        if (pageable) memset(host, 0xee, BYTES);      /* staged at the call: no effect */
        k_add(&k, s, y, z, N);
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, x, N);
        prog_print_reduce(s, r, what, it);
    }
}

static void phase(uint32_t *host, int pageable, const char *what) {
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    hot_loop(s, host, prog_alloc(N), pageable, what);
}

/* A page-aligned buffer of the program's own at `want`'s address, if malloc
 * hands it out again (the others tried are freed); else any. */
static uint32_t *malloc_at(void *want) {
    enum { TRIES = 512 };
    static void *tried[TRIES];
    int n = 0;
    uint32_t *got = NULL;
    while (n < TRIES && !got) {
        size_t sz = n % 3 == 0 ? 4096 : n % 3 == 1 ? BYTES : 8192;
        void *p = n % 2 ? malloc(sz) : aligned_alloc(4096, (sz + 4095) & ~(size_t)4095);
        if (!p) prog_die("out of host memory");
        if (p == want)
            got = p;
        else
            tried[n++] = p;
    }
    if (!got) got = tried[--n];
    fprintf(stderr, "mem_reset: the freed page-locked address %s handed out again\n", got == want ? "was" : "was not");
    while (n > 0) free(tried[--n]);
    return got;
}

static void mode_register(int release) {
    uint32_t *buf = aligned_alloc(4096, 4096);
    CK(drv.cuMemHostRegister(buf, 4096, 0));
    phase(buf, 0, "registered");
    prog_reset_primary(release); /* the registration ends with the context */
    phase(buf, 1, "pageable again");
    free(buf);
}

static void mode_hostalloc(void) {
    void *pin;
    CK(drv.cuMemAllocHost(&pin, BYTES));
    phase(pin, 0, "page-locked");
    prog_reset_primary(0); /* frees it */
    uint32_t *buf = malloc_at(pin);
    phase(buf, 1, "malloc");
    free(buf);
}

static void mode_freeasync(void) {
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    for (int i = 0; i < 8300; i++) {
        CUdeviceptr d;
        CK(drv.cuMemAlloc(&d, 256));
        CK(drv.cuMemFreeAsync(d, s));
        CK(drv.cuMemAllocAsync(&d, 256, s));
        CK(drv.cuMemFreeAsync(d, s));
    }
    CK(drv.cuStreamSynchronize(s));
    uint32_t *pin;
    CK(drv.cuMemHostAlloc((void **)&pin, BYTES, 0));
    hot_loop(s, pin, prog_alloc(N), 0, "after 8300 frees");
}

static void mode_poolcopy(void) {
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    uint32_t *pin;
    CK(drv.cuMemHostAlloc((void **)&pin, BYTES, 0));
    CUdeviceptr z;
    CK(drv.cuMemAllocAsync(&z, BYTES, s));
    hot_loop(s, pin, z, 0, "stream-ordered");
    CK(drv.cuMemFreeAsync(z, s));
    CK(drv.cuStreamSynchronize(s));
}

static void mode_oom(void) {
    size_t free0, free1, total;
    CK(drv.cuMemGetInfo(&free0, &total)); /* nothing launched yet: encore has no graph */
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    uint32_t *pin;
    CK(drv.cuMemHostAlloc((void **)&pin, BYTES, 0));
    CUdeviceptr z = prog_alloc(N);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    CK(drv.cuStreamSynchronize(s));
    CK(drv.cuMemGetInfo(&free1, &total)); /* this program's buffers only (the fills run no graph) */
    for (int it = 0; it < ITERATIONS; it++) {
        for (uint32_t i = 0; i < N; i++) pin[i] = (uint32_t)it * 31u + i;
        k_mix(&k, s, x, 5, N);
        CK(drv.cuMemcpyHtoDAsync(z, pin, BYTES, s));
        k_add(&k, s, y, z, N);
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, x, N);
        prog_print_reduce(s, r, "before filling memory", it);
    }
    CUdeviceptr all;
    CK(drv.cuMemAlloc(&all, free1)); /* the last byte the program left free */
    CK(drv.cuMemsetD32Async(all, 7u, N, s));
    CK(drv.cuMemcpyDtoDAsync(z, all, BYTES, s));
    k_add(&k, s, y, z, N);
    k_reduce(&k, s, r, y, N);
    prog_print_reduce(s, r, "memory full", 0);
    CK(drv.cuMemFree(all));
    printf("device memory: %zu bytes in use before the fill\n", free0 - free1);
}

/* ---- unnamed: two devices ----------------------------------------------- */

static void two_loops(CUcontext ctx[2], prog_kernels K[2], CUstream S[2], CUdeviceptr X[2], CUdeviceptr Y[2],
                      CUdeviceptr R[2], int only, const char *what) {
    for (int it = 0; it < ITERATIONS; it++)
        for (int d = 0; d < 2; d++) {
            if (only >= 0 && d != only) continue;
            CK(drv.cuCtxSetCurrent(ctx[d]));
            k_mix(&K[d], S[d], X[d], 5, N);
            k_add(&K[d], S[d], Y[d], X[d], N);
            k_axpy(&K[d], S[d], X[d], Y[d], 3, N);
            k_reduce(&K[d], S[d], R[d], Y[d], N);
            char label[64];
            snprintf(label, sizeof label, "%s device %d", what, d);
            prog_print_reduce(S[d], R[d], label, it);
        }
}

static void device_setup(int d, CUcontext ctx[2], prog_kernels K[2], CUstream S[2], CUdeviceptr X[2],
                         CUdeviceptr Y[2], CUdeviceptr R[2]) {
    CUdevice dev;
    CK(drv.cuDeviceGet(&dev, d));
    CK(drv.cuDevicePrimaryCtxRetain(&ctx[d], dev));
    CK(drv.cuCtxSetCurrent(ctx[d]));
    prog_kernels_load(&K[d], 0);
    S[d] = prog_stream(CU_STREAM_NON_BLOCKING);
    prog_hot_buffers(&K[d], S[d], N, &X[d], &Y[d], &R[d]);
}

static void mode_unnamed(void) {
    CUcontext ctx[2];
    prog_kernels K[2];
    CUstream S[2];
    CUdeviceptr X[2], Y[2], R[2];
    for (int d = 0; d < 2; d++) device_setup(d, ctx, K, S, X, Y, R);
    two_loops(ctx, K, S, X, Y, R, -1, "before");
    /* device 1 captures a stream of its own; meanwhile device 0 is reset */
    CK(drv.cuCtxSetCurrent(ctx[1]));
    CUstream cap = prog_stream(CU_STREAM_NON_BLOCKING);
    CK(drv.cuStreamBeginCapture(cap, CU_STREAM_CAPTURE_MODE_RELAXED));
    k_mix(&K[1], cap, Y[1], 9, N);
    CUdevice dev0;
    CK(drv.cuDeviceGet(&dev0, 0));
    CK(drv.cuDevicePrimaryCtxReset(dev0));
    CUgraph g;
    CK(drv.cuStreamEndCapture(cap, &g));
    CUgraphExec ge;
    CK(drv.cuGraphInstantiateWithFlags(&ge, g, 0));
    CK(drv.cuGraphLaunch(ge, cap));
    CK(drv.cuStreamSynchronize(cap));
    CK(drv.cuGraphExecDestroy(ge));
    CK(drv.cuGraphDestroy(g));
    two_loops(ctx, K, S, X, Y, R, 1, "device 1 after the reset");
    device_setup(0, ctx, K, S, X, Y, R);
    two_loops(ctx, K, S, X, Y, R, -1, "after");
}

int main(int argc, char **argv) {
    if (argc < 2) prog_die("usage: prog_mem_reset register|release|hostalloc|freeasync|poolcopy|oom|unnamed");
    const char *mode = argv[1];
    prog_init();
    if (!strcmp(mode, "register") || !strcmp(mode, "release"))
        mode_register(!strcmp(mode, "release"));
    else if (!strcmp(mode, "hostalloc"))
        mode_hostalloc();
    else if (!strcmp(mode, "freeasync"))
        mode_freeasync();
    else if (!strcmp(mode, "poolcopy"))
        mode_poolcopy();
    else if (!strcmp(mode, "oom"))
        mode_oom();
    else if (!strcmp(mode, "unnamed"))
        mode_unnamed();
    else
        prog_die("unknown mode");
    prog_report_launches();
    return 0;
}
