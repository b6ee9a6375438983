/* encore benchmark: a native launch loop for the paired method (tests/bench/bench
 * --method pairs|switch), on a GPU or on the simulated driver.
 *
 *   bench_native --module PATH [--pattern norepeat|random|repeat|ring|step] [--k 16] [--n 4096]
 *                [--blocks 9] [--steps 50] [--warmup 20] [--check-steps 20]
 *                [--schedule LETTERS] [--host-us U] [--host-kb K]
 *
 * A step is K launches on one non-blocking stream and a host synchronisation:
 *   norepeat  mix(x, salt) K times with a salt that is new at every launch:
 *             the kernel and configuration repeat, the arguments never (encore
 *             patches one graph: see random for a loop that never repeats)
 *   random    K launches whose kernel (mix or add) and grid size (one of 8)
 *             come from a generator that never returns to a state: the
 *             sequence's structure never repeats (encore's worst case)
 *   repeat    mix(x, i) and add(y, x) alternating, the same every step
 *   ring      repeat's launches on buffer pair (x, y) number step % 64: every
 *             pointer is new each step, and comes again only 64 steps later
 *             (a pool of activation buffers); G: one graph per pair
 *   step      repeat's launches, the first one's salt the step number (a step
 *             counter by value); G: one graph whose first node the program
 *             patches itself each step (cuGraphExecKernelNodeSetParams)
 * --host-us U: the host spins U microseconds before every launch, as a framework's
 * own work between launches would (Python, a dispatcher): a slower host.
 * --host-kb K: the host writes a byte in every cache line of a K KiB buffer
 * before every launch, as a framework's own memory traffic between launches
 * would: encore's state is no longer in the caches when the launch comes.
 * The module is a PTX file (bench_native_kernels.ptx on a GPU) or, on the
 * simulated driver, tests/prog's libprogkernels.so (same names and
 * parameters). The driver is reached through dlsym (encore interposes it).
 *
 * After the warm-up, x and y are filled afresh, check-steps steps run and x's
 * checksum is printed (the same step sequence in every process: outputs are
 * compared across variants). Then `blocks` timed blocks of `steps` steps;
 * block i runs as letter schedule[i % len] says (tests/bench/encore_switch.h):
 *   E  as it is (default schedule "E")
 *   P  encore switched off (passive)    A  encore switched on (active)
 *   G  encore off, the step replayed as the program's own CUDA graph (not norepeat)
 *   D  encore bypassed: launches and syncs through the driver's own entry
 *      points (tests/bench/direct_driver.h), exactly as without encore:
 *      "eager" in the same process as the other blocks; encore's switch is
 *      left as it is, so a schedule of E and D blocks never touches it and
 *      encore's self-check (ENCORE_SELF_CHECK) runs in the E blocks
 *   B  the launch-free bound: encore off and every launch skipped by
 *      libskiplaunch.so, preloaded before encore (LD_PRELOAD=libskiplaunch.so:
 *      libencore.so SKIPLAUNCH_SWITCH=1; tests/bench/skip_launch.c); P and A
 *      blocks then launch as usual. x and y are garbage after a B block: the
 *      checksum is taken before the timed blocks.
 * Output:
 *   BLOCK workload=native-<pattern> i=<i> state=<letter> steps=<S> us_per_step=<f> t0_ns=<ns> t1_ns=<ns>
 *   (t0_ns, t1_ns: CLOCK_MONOTONIC at the block's start and end, for tests/bench/breakdown.py)
 *   RESULT workload=native-<pattern> checksum=<hex> us_per_step=<median> blocks=<B> switch=<0|1> bound_switch=<0|1>
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"
#include "direct_driver.h"
#include "encore_switch.h"

#define NB_FUNCS(X)                                                                                                  \
    X(cuInit, CUresult (*)(unsigned))                                                                                \
    X(cuDeviceGet, CUresult (*)(CUdevice *, int))                                                                    \
    X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext *, CUdevice))                                                 \
    X(cuCtxSetCurrent, CUresult (*)(CUcontext))                                                                      \
    X(cuModuleLoad, CUresult (*)(CUmodule *, const char *))                                                          \
    X(cuModuleGetFunction, CUresult (*)(CUfunction *, CUmodule, const char *))                                       \
    X(cuMemAlloc_v2, CUresult (*)(CUdeviceptr *, size_t))                                                            \
    X(cuMemcpyDtoH_v2, CUresult (*)(void *, CUdeviceptr, size_t))                                                    \
    X(cuStreamCreate, CUresult (*)(CUstream *, unsigned))                                                            \
    X(cuStreamSynchronize, CUresult (*)(CUstream))                                                                   \
    X(cuLaunchKernel, CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                                   CUstream, void **, void **))                                                      \
    X(cuStreamBeginCapture_v2, CUresult (*)(CUstream, CUstreamCaptureMode))                                          \
    X(cuStreamEndCapture, CUresult (*)(CUstream, CUgraph *))                                                         \
    X(cuGraphInstantiateWithFlags, CUresult (*)(CUgraphExec *, CUgraph, unsigned long long))                         \
    X(cuGraphLaunch, CUresult (*)(CUgraphExec, CUstream))                                                          \
    X(cuGraphGetRootNodes, CUresult (*)(CUgraph, CUgraphNode *, size_t *))                                           \
    X(cuGraphExecKernelNodeSetParams_v2, CUresult (*)(CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *))

#define NB_DECL(name, type) static __typeof__(type) p_##name;
NB_FUNCS(NB_DECL)
/* D blocks: the driver's own launch and synchronize (direct_driver.h) */
static __typeof__(p_cuLaunchKernel) d_cuLaunchKernel;
static __typeof__(p_cuStreamSynchronize) d_cuStreamSynchronize;

static void ck(CUresult r, const char *what) {
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "bench_native: %s failed (CUresult %d)\n", what, (int)r);
        exit(1);
    }
}
#define CK(call) ck((call), #call)

static void load_driver(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "bench_native: dlopen libcuda.so.1: %s\n", dlerror());
        exit(1);
    }
#define NB_LOAD(name, type)                                                   \
    {                                                                         \
        void *p = dlsym(lib, #name);                                          \
        if (!p) {                                                             \
            fprintf(stderr, "bench_native: libcuda.so.1 has no %s\n", #name); \
            exit(1);                                                          \
        }                                                                     \
        memcpy(&p_##name, &p, sizeof p);                                      \
    }
    NB_FUNCS(NB_LOAD)
    void *l = direct_driver_sym("libcuda.so", "cuLaunchKernel");
    void *y = direct_driver_sym("libcuda.so", "cuStreamSynchronize");
    memcpy(&d_cuLaunchKernel, &l, sizeof l);
    memcpy(&d_cuStreamSynchronize, &y, sizeof y);
}

#define RING 64

static struct {
    int repeat, ring, stepc, random, k; /* repeat: also for ring and step */
    int direct;                         /* a D block: the driver's own entry points */
    uint64_t rng;                       /* random: the generator's state */
    unsigned n;
    uint64_t host_ns;                   /* --host-us: host work before each launch */
    unsigned char *host_buf;            /* --host-kb: memory the host touches before each launch */
    size_t host_bytes;
    CUfunction fill, mix, add;
    CUstream s;
    CUdeviceptr x, y;                   /* the pair this step works on */
    CUdeviceptr xs[RING], ys[RING];     /* ring: the pairs */
    uint32_t counter;                   /* norepeat: salts; ring and step: the step number */
    CUgraphExec exec, execs[RING];      /* G: the program's graph(s) */
    CUgraphNode first;                  /* step, G: the node the program patches */
} B;

static void launch_grid(CUfunction f, unsigned grid, void **params) {
    unsigned block = 128;
    if (B.host_ns) /* --host-us: the host's own work before this launch */
        for (uint64_t end = bench_now_ns() + B.host_ns; bench_now_ns() < end;) {
        }
    for (size_t i = 0; i < B.host_bytes; i += 64) /* --host-kb: the host's own memory traffic */
        B.host_buf[i]++;
    CK((B.direct ? d_cuLaunchKernel : p_cuLaunchKernel)(f, grid, 1, 1, block, 1, 1, 0, B.s, params, NULL));
}

static void launch(CUfunction f, void **params) { launch_grid(f, (B.n + 127) / 128, params); }

/* random: xorshift64* from a state that is never reset after the start: no sequence of
 * K choices comes again in a run (2^64 states). The kernels still cover x (grid 1..all). */
static void launch_random(void) {
    B.rng ^= B.rng >> 12;
    B.rng ^= B.rng << 25;
    B.rng ^= B.rng >> 27;
    uint64_t r = B.rng * 0x2545f4914f6cdd1dull;
    unsigned full = (B.n + 127) / 128, grid = full - (unsigned)((r >> 40) % 8) * (full / 8);
    if (r >> 63) {
        void *a[] = {&B.y, &B.x, &B.n};
        launch_grid(B.add, grid, a);
    } else {
        uint32_t salt = (uint32_t)(r >> 8);
        void *a[] = {&B.x, &salt, &B.n};
        launch_grid(B.mix, grid, a);
    }
}

static void launch_step(void) {
    for (int i = 0; i < B.k; i++) {
        if (B.random)
            launch_random();
        else if (B.repeat && (i & 1)) {
            void *a[] = {&B.y, &B.x, &B.n};
            launch(B.add, a);
        } else {
            uint32_t salt = !B.repeat        ? (B.counter++ * 2654435761u) ^ 0x5bd1e995u
                            : B.stepc && !i ? B.counter * 2654435761u
                                            : (uint32_t)i;
            void *a[] = {&B.x, &salt, &B.n};
            launch(B.mix, a);
        }
    }
}

/* step: the program's own patch of its graph's first node (the step's salt). */
static void patch_first(void) {
    uint32_t salt = B.counter * 2654435761u;
    void *a[] = {&B.x, &salt, &B.n};
    unsigned block = 128, grid = (B.n + block - 1) / block;
    CUDA_KERNEL_NODE_PARAMS kp = {.func = B.mix, .gridDimX = grid, .gridDimY = 1, .gridDimZ = 1,
                                  .blockDimX = block, .blockDimY = 1, .blockDimZ = 1, .kernelParams = a};
    CK(p_cuGraphExecKernelNodeSetParams_v2(B.exec, B.first, &kp));
}

static void step(int graph) {
    if (B.ring) {
        B.x = B.xs[B.counter % RING];
        B.y = B.ys[B.counter % RING];
    }
    if (graph && B.stepc) patch_first();
    if (graph)
        CK(p_cuGraphLaunch(B.ring ? B.execs[B.counter % RING] : B.exec, B.s));
    else
        launch_step();
    if (B.ring || B.stepc) B.counter++;
    CK((B.direct ? d_cuStreamSynchronize : p_cuStreamSynchronize)(B.s));
}

static void fill_xy(void) {
    int pairs = B.ring ? RING : 1;
    for (int j = 0; j < pairs; j++) {
        uint32_t one = 1u + 2u * (uint32_t)j, two = 2u + 2u * (uint32_t)j;
        CUdeviceptr *x = B.ring ? &B.xs[j] : &B.x, *y = B.ring ? &B.ys[j] : &B.y;
        void *a[] = {x, &one, &B.n}, *b[] = {y, &two, &B.n};
        launch(B.fill, a);
        launch(B.fill, b);
    }
    if (B.ring || B.stepc) B.counter = 0;
    B.rng = 0x9e3779b97f4a7c15ull;
    CK(p_cuStreamSynchronize(B.s));
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *module = NULL, *pattern = "norepeat", *schedule = "E";
    int blocks = 9, steps = 50, warmup = 20, check_steps = 20;
    B.k = 16;
    B.n = 4096;
    for (int i = 1; i < argc; i += 2) { /* --name value pairs */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "bench_native: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--module"))
            module = v;
        else if (!strcmp(a, "--pattern"))
            pattern = v;
        else if (!strcmp(a, "--k"))
            B.k = atoi(v);
        else if (!strcmp(a, "--n"))
            B.n = (unsigned)atoi(v);
        else if (!strcmp(a, "--blocks"))
            blocks = atoi(v);
        else if (!strcmp(a, "--steps"))
            steps = atoi(v);
        else if (!strcmp(a, "--warmup"))
            warmup = atoi(v);
        else if (!strcmp(a, "--check-steps"))
            check_steps = atoi(v);
        else if (!strcmp(a, "--schedule"))
            schedule = v;
        else if (!strcmp(a, "--host-us"))
            B.host_ns = (uint64_t)(atof(v) * 1000.0);
        else if (!strcmp(a, "--host-kb"))
            B.host_bytes = (size_t)atol(v) * 1024u;
        else {
            fprintf(stderr, "bench_native: unknown argument %s\n", a);
            return 2;
        }
    }
    B.ring = !strcmp(pattern, "ring");
    B.stepc = !strcmp(pattern, "step");
    B.random = !strcmp(pattern, "random");
    B.repeat = !strcmp(pattern, "repeat") || B.ring || B.stepc;
    if (!module || (!B.repeat && !B.random && strcmp(pattern, "norepeat")) || B.k < 1 || blocks < 1 || steps < 1 || !*schedule ||
        strspn(schedule, "EPAGDBT") != strlen(schedule)) {
        fprintf(stderr, "bench_native: usage: --module PATH [--pattern norepeat|random|repeat|ring|step] "
                        "[--schedule E|PA|PAG|DAP|PAB...]\n");
        return 2;
    }
    if (B.host_bytes && !(B.host_buf = calloc(B.host_bytes, 1))) {
        fprintf(stderr, "bench_native: --host-kb: out of memory\n");
        return 2;
    }
    int want_graph = strchr(schedule, 'G') != NULL;
    if (want_graph && !B.repeat) {
        printf("RESULT workload=native-%s status=unsupported error=no_graph_mode_when_nothing_repeats\n", pattern);
        return 0;
    }
    encore_switch_fn sw = encore_switch_find();
    encore_switch_fn skip = skiplaunch_switch_find(); /* B blocks: libskiplaunch.so's switch */
    if (strchr(schedule, 'B') && !skip) {
        printf("RESULT workload=native-%s status=error error=no_skiplaunch_switch_for_B_blocks\n", pattern);
        return 1;
    }
    load_driver();
    if (strchr(schedule, 'D') && (!d_cuLaunchKernel || !d_cuStreamSynchronize)) {
        printf("RESULT workload=native-%s status=error error=driver_entry_points_not_found_for_D_blocks\n", pattern);
        return 1;
    }
    CUdevice dev;
    CUcontext ctx;
    CK(p_cuInit(0));
    CK(p_cuDeviceGet(&dev, 0));
    CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(p_cuCtxSetCurrent(ctx));
    CUmodule mod;
    CK(p_cuModuleLoad(&mod, module));
    CK(p_cuModuleGetFunction(&B.fill, mod, "fill"));
    CK(p_cuModuleGetFunction(&B.mix, mod, "mix"));
    CK(p_cuModuleGetFunction(&B.add, mod, "add"));
    CK(p_cuStreamCreate(&B.s, CU_STREAM_NON_BLOCKING));
    for (int j = 0; j < (B.ring ? RING : 1); j++) {
        CK(p_cuMemAlloc_v2(B.ring ? &B.xs[j] : &B.x, B.n * sizeof(uint32_t)));
        CK(p_cuMemAlloc_v2(B.ring ? &B.ys[j] : &B.y, B.n * sizeof(uint32_t)));
    }
    fill_xy();
    for (int i = 0; i < warmup; i++) step(0);
    /* the check: the same steps from the same state in every process */
    fill_xy();
    for (int i = 0; i < check_steps; i++) step(0);
    uint32_t *host = malloc(B.n * sizeof(uint32_t));
    if (!host) return 1;
    uint64_t sum = BENCH_FNV_INIT;
    for (int j = 0; j < (B.ring ? RING : 1); j++) {
        CK(p_cuMemcpyDtoH_v2(host, B.ring ? B.xs[j] : B.x, B.n * sizeof(uint32_t)));
        sum = bench_fnv1a(sum, host, B.n * sizeof(uint32_t));
    }
    free(host);
    if (want_graph) {
        encore_switch_set(sw, 0);
        for (int j = 0; j < (B.ring ? RING : 1); j++) {
            CUgraph g;
            if (B.ring) {
                B.x = B.xs[j];
                B.y = B.ys[j];
            }
            CK(p_cuStreamBeginCapture_v2(B.s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
            launch_step();
            CK(p_cuStreamEndCapture(B.s, &g));
            CK(p_cuGraphInstantiateWithFlags(B.ring ? &B.execs[j] : &B.exec, g, 0));
            if (B.stepc) {
                size_t nroots = 1;
                CK(p_cuGraphGetRootNodes(g, &B.first, &nroots));
            }
        }
        for (int i = 0; i < 3; i++) step(1);
        encore_switch_set(sw, 1);
    }
    double *us = calloc((size_t)blocks, sizeof(double));
    if (!us) return 1;
    size_t len = strlen(schedule);
    for (int b = 0; b < blocks; b++) {
        char st = schedule[b % len];
        B.direct = st == 'D';
        if (encore_block_set(sw, skip, st) != 0) {
            fprintf(stderr, "bench_native: encoreSetActive or skiplaunchSetActive failed\n");
            return 1;
        }
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < steps; i++) step(st == 'G');
        uint64_t t1 = bench_now_ns();
        us[b] = (double)(t1 - t0) / 1e3 / steps;
        printf("BLOCK workload=native-%s i=%d state=%c steps=%d us_per_step=%.3f t0_ns=%llu t1_ns=%llu\n", pattern, b,
               st, steps, us[b], (unsigned long long)t0, (unsigned long long)t1);
        fflush(stdout);
    }
    B.direct = 0;
    encore_block_set(sw, skip, 'A');
    qsort(us, (size_t)blocks, sizeof *us, cmp_double);
    printf("RESULT workload=native-%s status=ok checksum=%016llx us_per_step=%.3f blocks=%d steps=%d k=%d switch=%d "
           "bound_switch=%d\n",
           pattern, (unsigned long long)sum, us[blocks / 2], blocks, steps, B.k, sw != NULL, skip != NULL);
    free(us);
    return 0;
}
