/* An iteration of 1000 launches, each with its own arguments, repeated. With
 * ENCORE_MAX_SEQUENCE=64 encore must cut it into sequences of at most 64 launches
 * (at least 16 different graphs) and replay those. With a host that works
 * between launches (spin_ns), ENCORE_HOLD_BUDGET cuts them shorter still.
 *
 *   prog_chunking [iterations (default 12)] [launches per iteration (default 1000)]
 *                 [host work before each launch in ns (default 0)] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 64u
#define NBUF 4

static void host_work(long ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 12;
    int per_iteration = argc > 2 ? atoi(argv[2]) : 1000;
    long spin_ns = argc > 3 ? atol(argv[3]) : 0;
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr b[NBUF];
    for (int i = 0; i < NBUF; i++) {
        b[i] = prog_alloc(N);
        k_fill(&k, s, b[i], (uint32_t)i * 1000u, N);
    }
    for (int it = 0; it < iterations; it++) {
        for (int i = 0; i < per_iteration; i++) {
            if (spin_ns) host_work(spin_ns);
            k_mix(&k, s, b[i % NBUF], (uint32_t)i, N);
        }
        printf("iteration %2d", it);
        for (int i = 0; i < NBUF; i++)
            printf(" %016llx", (unsigned long long)prog_hash_dev(s, b[i], N));
        printf("\n");
    }
    prog_report_launches();
    return 0;
}
