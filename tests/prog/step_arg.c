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
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), r = prog_alloc(4);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    CK(drv.cuStreamSynchronize(s));

    for (int it = 0; it < iterations; it++) {
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_mix(&k, s, x, (uint32_t)it, N); /* the step */
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, y, N);
        uint32_t h[4];
        CK(drv.cuMemcpyDtoHAsync(h, r, sizeof h, s));
        CK(drv.cuStreamSynchronize(s));
        printf("step %3d reduce %08x\n", it, h[0]);
    }
    unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N);
    printf("final x %016llx y %016llx\n", hx, hy);
    prog_report_launches();
    return 0;
}
