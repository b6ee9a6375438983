/* An iteration of 1000 launches, each with its own arguments, repeated. With
 * ENCORE_MAX_SEQUENCE=64 encore must cut it into sequences of at most 64 launches
 * (at least 16 different graphs) and replay those. With a host that works
 * between launches (spin_ns), ENCORE_HOLD_BUDGET cuts them shorter still.
 *
 * With "sync", each iteration ends with a host sleep (if given) and a
 * cuStreamSynchronize instead of the copy back, and the checksums are printed
 * once at the end: with large buffers the GPU is behind the host there (the
 * host waits in the synchronize), after a long enough sleep it is not.
 *
 *   prog_chunking [iterations (default 12)] [launches per iteration (default 1000)]
 *                 [host work before each launch in ns (default 0)]
 *                 [elements a buffer (default 64)] [host sleep before the synchronize in us (default 0)] [sync] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NBUF 4

static void host_work(long ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

static void print_hashes(CUstream s, const CUdeviceptr *b, uint32_t n, int it)
{
    printf("iteration %2d", it);
    for (int i = 0; i < NBUF; i++)
        printf(" %016llx", (unsigned long long)prog_hash_dev(s, b[i], n));
    printf("\n");
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 12;
    int per_iteration = argc > 2 ? atoi(argv[2]) : 1000;
    long spin_ns = argc > 3 ? atol(argv[3]) : 0;
    uint32_t N = argc > 4 ? (uint32_t)atol(argv[4]) : 64u;
    long sleep_us = argc > 5 ? atol(argv[5]) : 0;
    int sync_only = argc > 6 && strcmp(argv[6], "sync") == 0;
    if (N < 1 || sleep_us < 0) prog_die("usage: prog_chunking [iterations] [launches] [host ns] [elements] [sleep us] [sync]");
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
        if (sync_only) {
            if (sleep_us) {
                struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
                nanosleep(&ts, NULL);
            }
            CK(drv.cuStreamSynchronize(s));
            continue;
        }
        print_hashes(s, b, N, it);
    }
    if (sync_only) print_hashes(s, b, N, iterations);
    prog_report_launches();
    return 0;
}
