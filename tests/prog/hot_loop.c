/* The same five-launch sequence, with the same arguments, ITERATIONS times on
 * one stream, each iteration ended by a copy back and a synchronisation.
 * This is the pattern encore exists for: after ENCORE_MIN_REPEATS
 * iterations it should be captured once and replayed from then on.
 *
 *   prog_hot_loop [iterations (default 100)] [blocking|non-blocking|legacy]
 *
 * The values change every iteration (the kernels accumulate), so a replay
 * that skips, repeats or reorders a launch changes the printed checksums. */
#include <unistd.h>
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024u

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 100;
    const char *kind = argc > 2 ? argv[2] : "non-blocking";
    int host_gap_us = argc > 3 ? atoi(argv[3]) : 0; /* host work between launches */
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s;
    if (!strcmp(kind, "legacy"))
        s = CU_STREAM_LEGACY;
    else
        s = prog_stream(!strcmp(kind, "blocking") ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING);

    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), r = prog_alloc(4);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    CK(drv.cuStreamSynchronize(s));

    for (int it = 0; it < iterations; it++) {
        k_mix(&k, s, x, 5, N);
        if (host_gap_us) usleep(host_gap_us);
        k_add(&k, s, y, x, N);
        if (host_gap_us) usleep(host_gap_us);
        k_stamp(&k, s, y, N);
        if (host_gap_us) usleep(host_gap_us);
        k_axpy(&k, s, x, y, 3, N);
        if (host_gap_us) usleep(host_gap_us);
        k_reduce(&k, s, r, y, N);
        uint32_t h[4];
        CK(drv.cuMemcpyDtoHAsync(h, r, sizeof h, s));
        CK(drv.cuStreamSynchronize(s));
        printf("iteration %3d reduce %08x\n", it, h[0]);
    }
    unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N);
    printf("final x %016llx y %016llx\n", hx, hy);
    prog_report_launches();
    return 0;
}
