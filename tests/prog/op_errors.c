/* Stream operations the driver refuses, made where encore holds and replays
 * a hot sequence (issue 26, hole 3): each call must return exactly what the
 * driver returns for it, at the call, and nothing refused may run. encore
 * holds an operation only when the driver would take it (a memset aligned to
 * its element size, an event and device memory of the stream's context, a
 * copy inside its allocations) and issues any other eagerly.
 *
 * The hot sequence on stream s is mix x, OP, add y += x, stamp y. After 8
 * hot iterations, one iteration makes OP one the driver refuses, then 3 hot
 * ones; twice. OP by case:
 *   memset   cuMemsetD32Async of half of y, to the iteration's value;
 *            refused: 2 bytes into y (CUDA_ERROR_INVALID_VALUE)
 *   record   (two devices) cuEventRecord of an event of s's device;
 *            refused: an event of device 1 (CUDA_ERROR_INVALID_HANDLE)
 *   copy     cuMemcpyAsync of all of z into y; refused: from 16 bytes into
 *            z, past z's allocation (CUDA_ERROR_INVALID_VALUE)
 *   memset-null, copy-null, record-null  the same operations, refused with
 *            a NULL: device address 0 as the memset's destination or the
 *            copy's source, no event to record
 * Every iteration prints OP's return code, its stream's synchronisation's
 * and y's hash.
 *
 *   prog_op_errors memset|record|copy|memset-null|copy-null|record-null */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u

static prog_kernels k;
static CUstream s;
static CUdeviceptr x, y, z;
static CUevent e0, e_other; /* s's device's event; device 1's (record) */

static CUresult op(const char *c, int it, int refused)
{
    if (!strcmp(c, "memset-null"))
        return drv.cuMemsetD32Async(refused ? 0 : y, (unsigned)it, N / 2, s);
    if (!strcmp(c, "copy-null"))
        return drv.cuMemcpyAsync(y, refused ? 0 : z, N * sizeof(uint32_t), s);
    if (!strcmp(c, "record-null"))
        return drv.cuEventRecord(refused ? NULL : e0, s);
    if (!strcmp(c, "memset"))
        return drv.cuMemsetD32Async(y + (refused ? 2 : 0), (unsigned)it, N / 2, s);
    if (!strcmp(c, "record"))
        return drv.cuEventRecord(refused ? e_other : e0, s);
    return drv.cuMemcpyAsync(y, z + (refused ? 16 : 0), N * sizeof(uint32_t), s);
}

static void iteration(const char *c, int it, int refused)
{
    k_mix(&k, s, x, 5 + (uint32_t)(it % 3), N);
    CUresult r = op(c, it, refused);
    k_add(&k, s, y, x, N);
    k_stamp(&k, s, y, N);
    printf("%-7s %2d %s %s synchronize %s", refused ? "refused" : "hot", it, c, prog_err_name(r),
           prog_err_name(drv.cuStreamSynchronize(s)));
    printf(" y %016llx\n", (unsigned long long)prog_hash_dev(s, y, N));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    static const char *cases[] = {"memset", "record", "copy", "memset-null", "copy-null", "record-null"};
    int known = 0;
    for (unsigned i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
        known |= !strcmp(argv[1], cases[i]);
    if (!known)
        prog_die("usage: prog_op_errors memset|record|copy|memset-null|copy-null|record-null");
    const char *c = argv[1];
    prog_init();
    if (!strcmp(c, "record")) {
        int n = 0;
        CK(drv.cuDeviceGetCount(&n));
        if (n < 2)
            prog_die("needs two devices (SIMCUDA_DEVICES=2), found %d", n);
        CUdevice d1;
        CUcontext c1;
        CK(drv.cuDeviceGet(&d1, 1));
        CK(drv.cuDevicePrimaryCtxRetain(&c1, d1));
        CK(drv.cuCtxSetCurrent(c1));
        CK(drv.cuEventCreate(&e_other, CU_EVENT_DISABLE_TIMING));
        CK(drv.cuCtxSetCurrent(prog_ctx));
    }
    prog_kernels_load(&k, 0);
    s = prog_stream(CU_STREAM_NON_BLOCKING);
    CK(drv.cuEventCreate(&e0, CU_EVENT_DISABLE_TIMING));
    x = prog_alloc(N);
    y = prog_alloc(N);
    z = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    k_fill(&k, s, z, 3, N);
    int it = 0;
    for (; it < 8; it++)
        iteration(c, it, 0);
    for (int round = 0; round < 2; round++) {
        iteration(c, it++, 1);
        for (int i = 0; i < 3; i++)
            iteration(c, it++, 0);
    }
    prog_report_launches();
    return 0;
}
