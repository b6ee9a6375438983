/* ENCORE_MAX_GRAPHS is one bound for the whole process, the least recently
 * used graph evicted first: with the limit reached by two streams' hot
 * loops, a third stream that starts a hot loop of its own must still get
 * graphs (the old streams' are evicted), and replay.
 *
 *   prog_graph_limit [phase-1 iterations] [phase-2 iterations]
 * Run with ENCORE_MAX_GRAPHS=2: phase 1 alternates hot loops on streams A and
 * B, phase 2 runs one on stream C alone. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 512u

static prog_kernels k;

static void step(CUstream s, CUdeviceptr x, CUdeviceptr y, uint32_t salt, const char *what, int it)
{
    k_mix(&k, s, x, salt, N);
    k_add(&k, s, y, x, N);
    k_stamp(&k, s, y, N);
    k_axpy(&k, s, x, y, salt, N);
    printf("%s %3d y %016llx\n", what, it, (unsigned long long)prog_hash_dev(s, y, N));
}

int main(int argc, char **argv)
{
    int it1 = argc > 1 ? atoi(argv[1]) : 20, it2 = argc > 2 ? atoi(argv[2]) : 100;
    prog_init();
    prog_kernels_load(&k, 0);
    CUstream a = prog_stream(CU_STREAM_NON_BLOCKING), b = prog_stream(CU_STREAM_NON_BLOCKING),
             c = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x[3], y[3];
    for (int i = 0; i < 3; i++) {
        x[i] = prog_alloc(N);
        y[i] = prog_alloc(N);
        k_fill(&k, a, x[i], 1u + (uint32_t)i, N);
        k_fill(&k, a, y[i], 7u + (uint32_t)i, N);
    }
    CK(drv.cuStreamSynchronize(a));
    for (int it = 0; it < it1; it++) {
        step(a, x[0], y[0], 3, "A", it);
        step(b, x[1], y[1], 5, "B", it);
    }
    for (int it = 0; it < it2; it++)
        step(c, x[2], y[2], 9, "C", it);
    prog_report_launches();
    return 0;
}
