/* The same five-launch sequence, with the same arguments, ITERATIONS times on
 * one stream, each iteration ended by a copy back and a synchronisation.
 * This is the pattern encore exists for: after ENCORE_MIN_REPEATS
 * iterations it should be captured once and replayed from then on.
 *
 *   prog_hot_loop [iterations (default 100)] [blocking|non-blocking|legacy] [host gap us] [pause ms] [poll]
 *
 * host gap: host work between the launches of every iteration; pause: a
 * one-off pause of the host inside iteration 1's launches (a JIT compile, a
 * first allocation, data loading). poll: iterations end by recording an event and
 * spinning on cuEventQuery until the GPU gets there (a program that never waits in a
 * synchronizing call); the checksums are printed at the end only.
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
    int pause_ms = argc > 4 ? atoi(argv[4]) : 0;    /* once, inside iteration 1 */
    int poll = argc > 5 && !strcmp(argv[5], "poll");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s;
    if (!strcmp(kind, "legacy"))
        s = CU_STREAM_LEGACY;
    else
        s = prog_stream(!strcmp(kind, "blocking") ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING);

    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    CUevent done;
    CK(drv.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));

    for (int it = 0; it < iterations; it++) {
        k_mix(&k, s, x, 5, N);
        if (host_gap_us) usleep(host_gap_us);
        if (pause_ms && it == 1) usleep((useconds_t)pause_ms * 1000u);
        k_add(&k, s, y, x, N);
        if (host_gap_us) usleep(host_gap_us);
        k_stamp(&k, s, y, N);
        if (host_gap_us) usleep(host_gap_us);
        k_axpy(&k, s, x, y, 3, N);
        if (host_gap_us) usleep(host_gap_us);
        k_reduce(&k, s, r, y, N);
        if (!poll) {
            prog_print_reduce(s, r, "iteration", it);
            continue;
        }
        CK(drv.cuEventRecord(done, s));
        CUresult q;
        while ((q = drv.cuEventQuery(done)) == CUDA_ERROR_NOT_READY)
            ;
        CK(q);
    }
    if (poll) prog_print_reduce(s, r, "last iteration", iterations - 1);
    prog_finish(s, x, y, N);
    return 0;
}
