/* A hot loop whose middle kernel takes the iteration number by value (a step
 * counter, as optimisers and random-number offsets do): every iteration
 * differs from the last in that one argument.
 *
 *   prog_step_arg [iterations (default 60)]
 *
 * encore captures the sequence once and, each iteration, patches the new
 * step into its graph before replaying it (with ENCORE_PATCH=0 such
 * iterations run eagerly). The values depend on the step, so a replay with a
 * stale step changes the printed checksums. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 1024u

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 60;
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);

    for (int it = 0; it < iterations; it++) {
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_mix(&k, s, x, (uint32_t)it, N); /* the step */
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
    return 0;
}
