/* encore benchmark 3: cost of a pass-through driver call.
 *
 * dlopens libcuda.so.1 and calls cheap, pure-query driver entry points many
 * times, through pointers fetched two ways:
 *   dlsym     dlsym(libcuda, "<name>")            (encore's dlsym override)
 *   procaddr  cuGetProcAddress_v2 from dlsym, asked for "cuGetProcAddress"
 *             the way cudart does, then asked for "<name>" (encore's wrapper)
 * Run it without a preload, with LD_PRELOAD=libencore.so and with ENCORE=0:
 * the difference in ns per call is what encore adds to every wrapped call.
 *
 *   bench_passthrough [--calls N] [--funcs a,b,...] [--paths dlsym,procaddr]
 *
 * Output: one line per (function, path)
 *   RESULT bench=passthrough func=<name> path=<dlsym|procaddr> calls=N ns_per_call=<f>
 * The functions: cuCtxGetCurrent, cuCtxGetDevice, cuDriverGetVersion,
 * cuDeviceGetAttribute, cuStreamIsCapturing (legacy stream; it classifies a
 * stream, which encore must answer without flushing anything). */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define N_FUNCS 5
static const char *const func_names[N_FUNCS] = {"cuCtxGetCurrent", "cuCtxGetDevice", "cuDriverGetVersion",
                                                "cuDeviceGetAttribute", "cuStreamIsCapturing"};

static void die(const char *what, int code) {
    fprintf(stderr, "bench_passthrough: %s (%d)\n", what, code);
    exit(1);
}

/* Time `calls` calls of function `fi` through pointer `p`; returns ns per call. */
static double time_calls(int fi, int via_procaddr, void *p, long calls, CUdevice dev, unsigned *sink) {
    CUresult acc = CUDA_SUCCESS;
    unsigned s = 0;
    uint64_t t0 = bench_now_ns();
    switch (fi) {
    case 0: {
        PFN_cuCtxGetCurrent_v4000 f = (PFN_cuCtxGetCurrent_v4000)p;
        CUcontext c = NULL;
        for (long i = 0; i < calls; i++) acc |= f(&c);
        s += c != NULL;
        break;
    }
    case 1: {
        CUdevice d = -1;
#if CUDA_VERSION >= 13000
        /* cuGetProcAddress with version 13000 hands out the v13000 variant,
         * which takes the context (NULL: the current one); dlsym the 1-argument ABI name. */
        if (via_procaddr) {
            PFN_cuCtxGetDevice_v13000 f = (PFN_cuCtxGetDevice_v13000)p;
            for (long i = 0; i < calls; i++) acc |= f(&d, NULL);
            s += (unsigned)d;
            break;
        }
#else
        (void)via_procaddr;
#endif
        PFN_cuCtxGetDevice_v2000 f = (PFN_cuCtxGetDevice_v2000)p;
        for (long i = 0; i < calls; i++) acc |= f(&d);
        s += (unsigned)d;
        break;
    }
    case 2: {
        PFN_cuDriverGetVersion_v2020 f = (PFN_cuDriverGetVersion_v2020)p;
        int v = 0;
        for (long i = 0; i < calls; i++) acc |= f(&v);
        s += (unsigned)v;
        break;
    }
    case 3: {
        PFN_cuDeviceGetAttribute_v2000 f = (PFN_cuDeviceGetAttribute_v2000)p;
        int v = 0;
        for (long i = 0; i < calls; i++) acc |= f(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
        s += (unsigned)v;
        break;
    }
    default: {
        PFN_cuStreamIsCapturing_v10000 f = (PFN_cuStreamIsCapturing_v10000)p;
        CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        for (long i = 0; i < calls; i++) acc |= f((CUstream)0, &st);
        s += (unsigned)st;
        break;
    }
    }
    uint64_t t1 = bench_now_ns();
    if (acc != CUDA_SUCCESS) {
        fprintf(stderr, "bench_passthrough: %s returned an error\n", func_names[fi]);
        exit(1);
    }
    *sink += s;
    return (double)(t1 - t0) / (double)calls;
}

int main(int argc, char **argv) {
    long calls = 10000000;
    const char *funcs = "cuCtxGetCurrent,cuCtxGetDevice,cuDriverGetVersion,cuDeviceGetAttribute,cuStreamIsCapturing";
    const char *paths = "dlsym,procaddr";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--calls")) { calls = bench_parse_long(argv[i], v, 1, 1L << 40); i++; }
        else if (!strcmp(argv[i], "--funcs") && v) { funcs = v; i++; }
        else if (!strcmp(argv[i], "--paths") && v) { paths = v; i++; }
        else {
            fprintf(stderr, "usage: bench_passthrough [--calls N] [--funcs a,b,...] [--paths dlsym,procaddr]\n");
            return 2;
        }
    }

    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "bench_passthrough: dlopen libcuda.so.1: %s\n", dlerror()); return 1; }

    PFN_cuInit_v2000 p_init = (PFN_cuInit_v2000)dlsym(h, "cuInit");
    PFN_cuDeviceGet_v2000 p_devget = (PFN_cuDeviceGet_v2000)dlsym(h, "cuDeviceGet");
    PFN_cuDevicePrimaryCtxRetain_v7000 p_retain = (PFN_cuDevicePrimaryCtxRetain_v7000)dlsym(h, "cuDevicePrimaryCtxRetain");
    PFN_cuCtxSetCurrent_v4000 p_setcur = (PFN_cuCtxSetCurrent_v4000)dlsym(h, "cuCtxSetCurrent");
    PFN_cuGetProcAddress_v12000 p_gpa_v2 = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
    if (!p_init || !p_devget || !p_retain || !p_setcur || !p_gpa_v2) die("missing driver entry points", 0);

    CUresult r;
    CUdevice dev;
    CUcontext ctx;
    if ((r = p_init(0)) != CUDA_SUCCESS) die("cuInit failed", r);
    if ((r = p_devget(&dev, 0)) != CUDA_SUCCESS) die("cuDeviceGet failed", r);
    if ((r = p_retain(&ctx, dev)) != CUDA_SUCCESS) die("cuDevicePrimaryCtxRetain failed", r);
    if ((r = p_setcur(ctx)) != CUDA_SUCCESS) die("cuCtxSetCurrent failed", r);

    /* The cudart way: ask cuGetProcAddress_v2 for "cuGetProcAddress" itself. */
    CUdriverProcAddressQueryResult q;
    PFN_cuGetProcAddress_v12000 gpa = NULL;
    if ((r = p_gpa_v2("cuGetProcAddress", (void **)&gpa, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q)) !=
            CUDA_SUCCESS || !gpa)
        die("cuGetProcAddress(\"cuGetProcAddress\") failed", r);

    unsigned sink = 0;
    for (int fi = 0; fi < N_FUNCS; fi++) {
        if (!strstr(funcs, func_names[fi])) continue;
        for (int path = 0; path < 2; path++) {
            const char *pname = path ? "procaddr" : "dlsym";
            if (!strstr(paths, pname)) continue;
            void *p = NULL;
            if (path == 0) p = dlsym(h, func_names[fi]);
            else if ((r = gpa(func_names[fi], &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &q)) != CUDA_SUCCESS)
                p = NULL;
            if (!p) {
                fprintf(stderr, "bench_passthrough: cannot get %s through %s\n", func_names[fi], pname);
                return 1;
            }
            time_calls(fi, path, p, calls / 100 + 1, dev, &sink); /* warm-up */
            double best = 0, ns[3];
            for (int rep = 0; rep < 3; rep++) ns[rep] = time_calls(fi, path, p, calls / 3 + 1, dev, &sink);
            /* median of the three thirds */
            double a = ns[0], b = ns[1], c = ns[2];
            best = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
            double lo = a < b ? (a < c ? a : c) : (b < c ? b : c);
            double hi = a > b ? (a > c ? a : c) : (b > c ? b : c);
            printf("RESULT bench=passthrough func=%s path=%s calls=%ld ns_per_call=%.2f ns_min=%.2f ns_max=%.2f\n",
                   func_names[fi], pname, 3 * (calls / 3 + 1), best, lo, hi);
            fflush(stdout);
        }
    }
    printf("bench_passthrough: done (sink %u)\n", sink);
    return 0;
}
