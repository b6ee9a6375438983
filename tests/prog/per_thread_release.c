/* The per-thread default stream (entry points fetched with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, stream handle 0): a hot
 * sequence (a slow kernel first), then about 1 ms of host work, so that
 * encore's deadline releases the held launches from its own thread (onto a
 * side stream it must order the owner's stream after), then a call that
 * orders work after the stream's earlier work:
 *   copy     a blocking cuMemcpyDtoH of the result
 *   memset   a blocking-API cuMemsetD32 of the result, then the copy
 *   htod     a blocking cuMemcpyHtoD over the sequence's input, then a
 *            cuStreamSynchronize and the copy
 *   event    an event recorded on the stream, a non-blocking stream
 *            waiting for it and copying the result there, then as copy
 *   legacy   the result copied on the legacy stream (which waits for the
 *            per-thread stream), then as copy
 *   priority the stream's priority set to -4 (cuStreamSetAttribute) first,
 *            then as copy: released launches must run at it too (the
 *            simulator's sim.priority_kernels, sim.priority_sum)
 * Iteration i must print iteration i's data.
 *
 *   prog_per_thread_release copy|memset|htod|priority */
#include "prog.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 512u
#define ITERATIONS 30

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "copy") && strcmp(argv[1], "memset") && strcmp(argv[1], "htod") &&
                      strcmp(argv[1], "event") && strcmp(argv[1], "legacy") && strcmp(argv[1], "priority")))
        prog_die("usage: prog_per_thread_release copy|memset|htod|event|legacy|priority");
    const char *mode = argv[1];
    prog_init_with(PROG_ACCESS_PROCADDR_PTDS);
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = NULL; /* this thread's per-thread default stream */
    if (!strcmp(mode, "priority")) {
        CUstreamAttrValue v;
        memset(&v, 0, sizeof v);
        v.priority = -4;
        CK(drv.cuStreamSetAttribute(s, CU_LAUNCH_ATTRIBUTE_PRIORITY, &v));
    }
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    CK(drv.cuStreamSynchronize(s));
    uint32_t host[N], pattern[N];
    CUstream other = prog_stream(CU_STREAM_NON_BLOCKING);
    CUevent ev;
    CK(drv.cuEventCreate(&ev, 0)); /* a timing event: its record ends the sequence (core/graphs/nodes.c), so the deadline release comes first */
    for (int it = 0; it < ITERATIONS; it++) {
        k_delay(&k, s, 5000);
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        usleep(1000); /* host work: the held launches are released by encore's deadline */
        if (!strcmp(mode, "memset")) {
            CK(drv.cuMemsetD32(y, (unsigned)it * 7u, N / 2));
        } else if (!strcmp(mode, "htod")) {
            for (uint32_t i = 0; i < N; i++)
                pattern[i] = (uint32_t)it * 1000u + i;
            CK(drv.cuMemcpyHtoD(x, pattern, sizeof pattern));
            CK(drv.cuStreamSynchronize(s));
        } else if (!strcmp(mode, "event") || !strcmp(mode, "legacy")) {
            CUstream on = other;
            if (!strcmp(mode, "event")) {
                CK(drv.cuEventRecord(ev, s));
                CK(drv.cuStreamWaitEvent(other, ev, 0));
            } else {
                on = CU_STREAM_LEGACY;
            }
            CK(drv.cuMemcpyDtoHAsync(host, y, sizeof host, on));
            CK(drv.cuStreamSynchronize(on));
            printf("iteration %2d %s y %016llx\n", it, mode,
                   (unsigned long long)prog_hash_buf(PROG_HASH_INIT, host, N));
        }
        CK(drv.cuMemcpyDtoH(host, y, sizeof host));
        unsigned long long hy = prog_hash_buf(PROG_HASH_INIT, host, N);
        CK(drv.cuMemcpyDtoH(host, x, sizeof host));
        printf("iteration %2d y %016llx x %016llx\n", it, hy,
               (unsigned long long)prog_hash_buf(PROG_HASH_INIT, host, N));
    }
    prog_report_launches();
    return 0;
}
