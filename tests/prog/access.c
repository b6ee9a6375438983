/* One workload, reaching the driver by each of the ways real programs do.
 *
 * Built three times:
 *   prog_access                 table filled at run time; argv[1] picks how:
 *                               procaddr       cudart-style: dlsym cuGetProcAddress_v2, ask it for
 *                                              "cuGetProcAddress", everything else through that
 *                                              (cudaVersion 13000, flags 0)
 *                               procaddr-ptds  the same with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 *                                              (stream 0 is then the per-thread default stream)
 *                               dlsym          Triton-style: dlopen + dlsym of each exported name
 *                               dlsym-ptsz     dlsym of the _ptsz/_ptds exports
 *   prog_access_direct          linked against libcuda.so.1, calls cuLaunchKernel & co. by name
 *   prog_access_direct_ptsz     the same compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM
 *
 * The workload: three streams (a blocking one, a non-blocking one and the
 * default stream), STEPS identical steps of launches in all three launch
 * forms (cuLaunchKernel with a parameter array, cuLaunchKernelEx with launch
 * attributes, cuLaunchKernel with an `extra` argument buffer), one
 * cross-stream dependency through an event, copies back, both
 * cuCtxSynchronize flavours (the void one, asked for at version 12000, and the
 * CUcontext one, asked for at 13000), and a checksum line per step. Only
 * explicit synchronisation orders the streams, so the output is the same
 * under legacy and per-thread default-stream semantics. */
#include "progutil.h"

#ifdef PROG_DIRECT
#include <cuda.h>
#define CU(fn) fn
#define MODE_NAME "direct"
#else
#include "drv.h"
#define CU(fn) drv.fn
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 2048u
#define STEPS 30
#define GRID ((N + 63u) / 64u)

static void check(CUresult r, const char *what, int line)
{
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        if (CU(cuGetErrorName)(r, &name) != CUDA_SUCCESS || !name)
            name = "?";
        prog_die("access.c:%d: %s failed: %d (%s)", line, what, (int)r, name);
    }
}
#define C(call) check((call), #call, __LINE__)

static CUfunction fn_mix, fn_add, fn_stamp, fn_packed, fn_reduce;

static void launch(CUfunction f, unsigned grid, unsigned shmem, CUstream s, void **params)
{
    prog_count_launch();
    C(CU(cuLaunchKernel)(f, grid, 1, 1, 64, 1, 1, shmem, s, params, NULL));
}

static void launch_ex(CUfunction f, unsigned grid, CUstream s, void **params, int priority)
{
    CUlaunchAttribute attrs[2];
    memset(attrs, 0, sizeof attrs);
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attrs[0].value.priority = priority;
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid;
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = 64;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.hStream = s;
    cfg.attrs = attrs;
    cfg.numAttrs = 2;
    prog_count_launch();
    C(CU(cuLaunchKernelEx)(&cfg, f, params, NULL));
}

static void launch_extra(CUfunction f, unsigned grid, CUstream s, void *buf, size_t size)
{
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    prog_count_launch();
    C(CU(cuLaunchKernel)(f, grid, 1, 1, 64, 1, 1, 0, s, NULL, extra));
}

/* packed(u8 a, u64 b, u16 c, u32 *dst, u32 n) as an argument buffer: offsets 0, 8, 16, 24, 32 */
static void launch_packed_extra(CUstream s, uint8_t a, uint64_t b, uint16_t c, CUdeviceptr dst, uint32_t n)
{
    unsigned char buf[40];
    memset(buf, 0, sizeof buf);
    memcpy(buf + 0, &a, sizeof a);
    memcpy(buf + 8, &b, sizeof b);
    memcpy(buf + 16, &c, sizeof c);
    memcpy(buf + 24, &dst, sizeof dst);
    memcpy(buf + 32, &n, sizeof n);
    launch_extra(fn_packed, GRID, s, buf, 36);
}

/* reduce(u32 *out, const u32 *src, u32 n) as an argument buffer: offsets 0, 8, 16 */
static void launch_reduce_extra(CUstream s, CUdeviceptr out, CUdeviceptr src, uint32_t n)
{
    unsigned char buf[24];
    memset(buf, 0, sizeof buf);
    memcpy(buf + 0, &out, sizeof out);
    memcpy(buf + 8, &src, sizeof src);
    memcpy(buf + 16, &n, sizeof n);
    launch_extra(fn_reduce, 1, s, buf, 20);
}

static CUfunction get_fn(CUmodule mod, const char *name)
{
    CUfunction f;
    C(CU(cuModuleGetFunction)(&f, mod, name));
    return f;
}

int main(int argc, char **argv)
{
#ifndef PROG_DIRECT
    const char *mode = argc > 1 ? argv[1] : "procaddr";
    prog_drv_load(prog_access_parse(mode));
#else
    (void)argc;
    (void)argv;
#endif
    C(CU(cuInit)(0));
    CUdevice dev;
    CUcontext ctx;
    C(CU(cuDeviceGet)(&dev, 0));
    C(CU(cuDevicePrimaryCtxRetain)(&ctx, dev));
    C(CU(cuCtxSetCurrent)(ctx));

    char image[4096];
    snprintf(image, sizeof image, "simcuda:%s", prog_kernels_path(0));
    CUmodule mod;
    C(CU(cuModuleLoadData)(&mod, image));
    fn_mix = get_fn(mod, "mix");
    fn_add = get_fn(mod, "add");
    fn_stamp = get_fn(mod, "stamp");
    fn_packed = get_fn(mod, "packed");
    fn_reduce = get_fn(mod, "reduce");

    CUstream s1, s2, s0 = 0;
    C(CU(cuStreamCreate)(&s1, CU_STREAM_DEFAULT));
    C(CU(cuStreamCreate)(&s2, CU_STREAM_NON_BLOCKING));
    CUevent ev;
    C(CU(cuEventCreate)(&ev, CU_EVENT_DISABLE_TIMING));

    enum { BA, BB, BD, BE, BF, NBUF };
    CUdeviceptr buf[NBUF], red;
    uint32_t *host = malloc(N * sizeof *host);
    if (!host)
        prog_die("out of memory");
    for (int b = 0; b < NBUF; b++) {
        C(CU(cuMemAlloc)(&buf[b], N * sizeof(uint32_t)));
        for (uint32_t i = 0; i < N; i++)
            host[i] = (uint32_t)b * 0x01000193u + i * 2654435761u;
        C(CU(cuMemcpyHtoD)(buf[b], host, N * sizeof(uint32_t)));
    }
    C(CU(cuMemAlloc)(&red, 4 * sizeof(uint32_t)));
    C(CU(cuMemsetD32)(red, 0, 4));
    C(CU(cuCtxSynchronize)());

    uint32_t n = N, salt_a = 11, salt_d = 22, salt_e = 33;
    for (int step = 0; step < STEPS; step++) {
        /* s2 (non-blocking): D */
        void *p_mix_d[] = {&buf[BD], &salt_d, &n};
        launch(fn_mix, GRID, 0, s2, p_mix_d);
        void *p_stamp_d[] = {&buf[BD], &n};
        launch(fn_stamp, GRID / 2, 256, s2, p_stamp_d);
        C(CU(cuEventRecord)(ev, s2));

        /* s1 (blocking): A, B; reads D after the event */
        void *p_mix_a[] = {&buf[BA], &salt_a, &n};
        launch(fn_mix, GRID, 0, s1, p_mix_a);
        void *p_add_ba[] = {&buf[BB], &buf[BA], &n};
        launch(fn_add, GRID, 0, s1, p_add_ba);
        void *p_stamp_b[] = {&buf[BB], &n};
        launch(fn_stamp, GRID, 128, s1, p_stamp_b);
        uint8_t pa = 7;
        uint64_t pb = 0x123456789abcdefULL;
        uint16_t pc = 4242;
        void *p_packed_b[] = {&pa, &pb, &pc, &buf[BB], &n};
        launch_ex(fn_packed, GRID, s1, p_packed_b, 0);
        C(CU(cuStreamWaitEvent)(s1, ev, 0));
        void *p_add_ad[] = {&buf[BA], &buf[BD], &n};
        launch(fn_add, GRID, 0, s1, p_add_ad);
        CUdeviceptr red_b = red, red_d = red + 4, red_f = red + 8;
        launch_reduce_extra(s1, red_b, buf[BB], n);
        void *p_red_d[] = {&red_d, &buf[BD], &n};
        launch(fn_reduce, 1, 0, s1, p_red_d);

        /* stream 0 (legacy, or per-thread): E, F */
        void *p_mix_e[] = {&buf[BE], &salt_e, &n};
        launch(fn_mix, GRID, 0, s0, p_mix_e);
        void *p_add_fe[] = {&buf[BF], &buf[BE], &n};
        launch(fn_add, GRID, 0, s0, p_add_fe);
        launch_packed_extra(s0, 3, 0xfedcba9876543210ULL, 77, buf[BF], n);
        launch_reduce_extra(s0, red_f, buf[BF], n);

        /* copies back, explicit synchronisation only */
        uint32_t r[4];
        C(CU(cuMemcpyDtoHAsync)(host, buf[BA], N * sizeof(uint32_t), s1));
        C(CU(cuStreamSynchronize)(s1));
        uint64_t ha = prog_hash_buf(PROG_HASH_INIT, host, N);
        C(CU(cuStreamSynchronize)(s2));
        C(CU(cuStreamSynchronize)(s0));
        if (step % 2)
            C(CU(cuCtxSynchronize_v2)(ctx));
        else
            C(CU(cuCtxSynchronize)());
        C(CU(cuMemcpyDtoH)(r, red, sizeof r));
        C(CU(cuMemcpyDtoH)(host, buf[BF], N * sizeof(uint32_t)));
        uint64_t hf = prog_hash_buf(PROG_HASH_INIT, host, N);
        printf("step %2d A %016llx F %016llx red %08x %08x %08x\n", step, (unsigned long long)ha,
               (unsigned long long)hf, r[0], r[1], r[2]);
    }

    for (int b = 0; b < NBUF; b++)
        C(CU(cuMemFree)(buf[b]));
    C(CU(cuMemFree)(red));
    C(CU(cuEventDestroy)(ev));
    C(CU(cuStreamDestroy)(s1));
    C(CU(cuStreamDestroy)(s2));
    C(CU(cuModuleUnload)(mod));
    free(host);
    prog_report_launches();
    return 0;
}
