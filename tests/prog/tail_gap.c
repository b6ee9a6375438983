/* A loop whose steps end with slow host work: STEPS steps of 32 launches and
 * one more on one stream, then GAP_US of host work (a decode loop's sampling
 * and bookkeeping), then a copy back and a synchronisation. The step's last
 * sequence is that one launch (the 32 fill the length cap), too short to be
 * captured, and it spans the host work: its pace says little about how fast
 * the stream's launches come.
 *
 *   prog_tail_gap STEPS GAP_US
 *
 * Each step's x is hashed and folded into the printed value, so a launch
 * that ran out of order, twice or not at all changes the output. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define N 512u

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 0, gap_us = argc > 2 ? atoi(argv[2]) : -1;
    if (steps <= 0 || gap_us < 0) prog_die("usage: prog_tail_gap STEPS GAP_US");
    prog_init();
    prog_kernels k;
    CUdeviceptr x, y;
    CUstream s = prog_stream_xy(&k, N, &x, &y);
    uint64_t folded = 0;
    for (int it = 0; it < steps; it++) {
        for (int i = 0; i < 16; i++) {
            k_mix(&k, s, x, (uint32_t)i, N);
            k_add(&k, s, y, x, N);
        }
        k_stamp(&k, s, y, N);
        usleep((useconds_t)gap_us);
        folded = folded * 31 + prog_hash_dev(s, x, N);
        if (it % 50 == 49) printf("x %4d %016llx\n", it, (unsigned long long)folded);
    }
    printf("y %016llx\n", (unsigned long long)prog_hash_dev(s, y, N));
    prog_report_launches();
    return 0;
}
