/* A loop that synchronizes its stream at the end of every iteration, with the
 * GPU behind the host there (large buffers: the host waits in the
 * synchronize) or not (the host sleeps before it: the GPU is done by then).
 * The checksums are printed once, at the end.
 *
 *   prog_sync_wait [iterations (default 40)] [launches per iteration (default 24)]
 *                  [elements a buffer (default 64)] [host sleep before the synchronize in us (default 0)]
 *                  [host work before each launch in ns (default 0)] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NBUF 4

static void host_work(long ns) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

int main(int argc, char **argv) {
    int iterations = argc > 1 ? atoi(argv[1]) : 40;
    int per_iteration = argc > 2 ? atoi(argv[2]) : 24;
    uint32_t n = argc > 3 ? (uint32_t)atol(argv[3]) : 64u;
    long sleep_us = argc > 4 ? atol(argv[4]) : 0;
    long spin_ns = argc > 5 ? atol(argv[5]) : 0;
    if (iterations < 1 || per_iteration < 1 || n < 1 || sleep_us < 0)
        prog_die("usage: prog_sync_wait [iterations] [launches] [elements] [sleep us]");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr b[NBUF];
    for (int i = 0; i < NBUF; i++) {
        b[i] = prog_alloc(n);
        k_fill(&k, s, b[i], (uint32_t)i * 1000u, n);
    }
    for (int it = 0; it < iterations; it++) {
        for (int i = 0; i < per_iteration; i++) {
            if (spin_ns) host_work(spin_ns);
            k_mix(&k, s, b[i % NBUF], (uint32_t)i, n);
        }
        if (sleep_us) {
            struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
        CK(drv.cuStreamSynchronize(s));
    }
    for (int i = 0; i < NBUF; i++) printf("buffer %d %016llx\n", i, (unsigned long long)prog_hash_dev(s, b[i], n));
    prog_report_launches();
    return 0;
}
