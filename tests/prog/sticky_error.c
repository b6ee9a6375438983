/* A kernel faults (an illegal address) on a stream where encore holds and
 * replays a hot sequence. The context takes a sticky error: every later call
 * that touches it returns that error, as the driver does, until the primary
 * context is reset.
 *
 * Phase A: a slow kernel, the faulting kernel, an event record, then the hot
 * sequence (launched while the fault has not happened yet: those launches
 * succeed, and may be held) and a synchronisation, which must return the
 * fault's error exactly as without encore.
 * Phase B: the hot sequence launched again after the fault was reported:
 * every launch returns the sticky error (encore must not hold them and
 * answer success), and the next synchronisation returns it too; encore must
 * not hang when what it holds cannot be issued.
 * Phase C: the primary context is reset; the program starts over (kernels,
 * stream, buffers) and runs the hot loop again.
 * late-sync: phase A waits 400 ms on the host before it synchronises, so the
 * fault happens while encore holds the hot sequence: releasing it (at the
 * synchronisation, or from the deadline thread) fails with the sticky error.
 *
 *   prog_sticky_error [illegal-address|assert] [late-sync] */
#include "prog.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 512u
#define ITERATIONS 10

static prog_kernels k;

static void hot_sequence_rc(CUstream s, CUdeviceptr x, CUdeviceptr y, const char *what)
{
    uint32_t n = N, salt = 5, a = 3;
    void *pm[] = {&x, &salt, &n}, *pa[] = {&y, &x, &n}, *ps[] = {&y, &n}, *px[] = {&x, &y, &a, &n};
    printf("%s: mix %s", what, prog_err_name(prog_launch_rc(k.mix, PROG_GRID(N), PROG_BLOCK, 0, s, pm)));
    printf(" add %s", prog_err_name(prog_launch_rc(k.add, PROG_GRID(N), PROG_BLOCK, 0, s, pa)));
    printf(" stamp %s", prog_err_name(prog_launch_rc(k.stamp, PROG_GRID(N), PROG_BLOCK, 0, s, ps)));
    printf(" axpy %s\n", prog_err_name(prog_launch_rc(k.axpy, PROG_GRID(N), PROG_BLOCK, 0, s, px)));
}

static void hot_loop(CUstream s, CUdeviceptr x, CUdeviceptr y, const char *what)
{
    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        printf("%s %2d y %016llx\n", what, it, (unsigned long long)prog_hash_dev(s, y, N));
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a hang under encore still shows how far the program got */
    uint32_t code = CUDA_ERROR_ILLEGAL_ADDRESS;
    if (argc > 1 && !strcmp(argv[1], "assert"))
        code = CUDA_ERROR_ASSERT;
    prog_init();
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUevent ev;
    CK(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    hot_loop(s, x, y, "before");

    /* A: the fault happens after the hot sequence was launched */
    uint32_t us = 200000, n = N;
    void *pd[] = {&us}, *pf[] = {&x, &code, &n};
    printf("A: delay %s", prog_err_name(prog_launch_rc(k.delay, 1, 1, 0, s, pd)));
    printf(" fault %s", prog_err_name(prog_launch_rc(k.fault, PROG_GRID(N), PROG_BLOCK, 0, s, pf)));
    printf(" record %s\n", prog_err_name(drv.cuEventRecord(ev, s)));
    hot_sequence_rc(s, x, y, "A");
    if (argc > 2 && !strcmp(argv[2], "late-sync"))
        usleep(400000); /* the fault (after 200 ms) happens meanwhile */
    printf("A: synchronize %s\n", prog_err_name(drv.cuStreamSynchronize(s)));

    /* B: after the fault was reported */
    hot_sequence_rc(s, x, y, "B");
    printf("B: synchronize %s\n", prog_err_name(drv.cuStreamSynchronize(s)));
    CUdeviceptr d = 0;
    printf("B: cuMemAlloc %s", prog_err_name(drv.cuMemAlloc(&d, 64)));
    printf(" cuEventQuery %s", prog_err_name(drv.cuEventQuery(ev)));
    printf(" cuCtxSynchronize %s\n", prog_err_name(drv.cuCtxSynchronize()));

    /* C: reset, start over */
    CUdevice dev;
    CK(drv.cuDeviceGet(&dev, 0));
    printf("C: reset %s\n", prog_err_name(drv.cuDevicePrimaryCtxReset(dev)));
    CK(drv.cuDevicePrimaryCtxRetain(&prog_ctx, dev));
    CK(drv.cuCtxSetCurrent(prog_ctx));
    prog_kernels_load(&k, 0);
    s = prog_stream(CU_STREAM_NON_BLOCKING);
    x = prog_alloc(N);
    y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    hot_loop(s, x, y, "after reset");
    prog_report_launches();
    return 0;
}
