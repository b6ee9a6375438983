/* Streams that the CUDA semantics leave unordered must stay unordered: a
 * kernel on one stream waits (spinning on device memory) for a kernel on
 * another stream to set a flag. That is only correct because the second
 * stream is not ordered after the first; if encore issued the second
 * stream's work on a stream that is (the legacy default stream, or one
 * joined to the first), the waiting kernel would time out (after 3 s, counted
 * in the output, which ends the program) instead of seeing the flag.
 *
 *   prog_stream_independence per-thread     waiter: a blocking stream; setter: the per-thread
 *                                           default stream (handle 0, _ptsz entry points), which is
 *                                           ordered with the legacy stream only
 *   prog_stream_independence non-blocking   waiter: the legacy default stream; setter: a
 *                                           non-blocking stream
 *
 * Per iteration: waiter: mix(x) flag_wait(flag >= it+1) add(y, x);
 *                setter: mix(z) flag_inc(flag); both synchronised, setter first. */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 30
#define TIMEOUT_MS 3000u

int main(int argc, char **argv)
{
    int per_thread = argc > 1 && !strcmp(argv[1], "per-thread");
    if (argc != 2 || (!per_thread && strcmp(argv[1], "non-blocking")))
        prog_die("usage: prog_stream_independence per-thread|non-blocking");
    prog_init_with(per_thread ? PROG_ACCESS_PROCADDR_PTDS : PROG_ACCESS_PROCADDR);
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream waiter = per_thread ? prog_stream(CU_STREAM_DEFAULT) : CU_STREAM_LEGACY;
    CUstream setter = per_thread ? (CUstream)0 : prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), z = prog_alloc(N), flag = prog_alloc(2);
    CK(drv.cuMemsetD32(flag, 0, 2));
    k_fill(&k, waiter, x, 1, N);
    k_fill(&k, waiter, y, 2, N);
    k_fill(&k, setter, z, 3, N);
    CK(drv.cuCtxSynchronize());

    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, waiter, x, 5, N);
        k_flag_wait(&k, waiter, flag, (uint32_t)it + 1, TIMEOUT_MS);
        k_add(&k, waiter, y, x, N);
        k_mix(&k, setter, z, 7, N);
        k_flag_inc(&k, setter, flag);
        CK(drv.cuStreamSynchronize(setter));
        CK(drv.cuStreamSynchronize(waiter));
        uint32_t f[2];
        CK(drv.cuMemcpyDtoH(f, flag, sizeof f));
        unsigned long long hy = prog_hash_dev(waiter, y, N), hz = prog_hash_dev(setter, z, N);
        printf("iteration %2d flag %u timeouts %u y %016llx z %016llx\n", it, f[0], f[1], hy, hz);
        if (f[1]) {
            printf("the waiting kernel timed out: stopping\n");
            break;
        }
    }
    prog_report_launches();
    return 0;
}
