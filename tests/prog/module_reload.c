/* Modules unloaded after their kernels were replayed, and other modules
 * loaded in their place. Phases: libprogkernels.so, then
 * libprogkernels_alt.so (the same kernel names, other arithmetic), then
 * libprogkernels.so again; each phase loads the module, runs a hot loop and
 * unloads it. A function handle of a new module may have the value an
 * unloaded one had, so a graph captured with the old module's kernels must
 * never be replayed for the new one. */
#include "prog.h"

#include <stdio.h>

#define N 512u
#define ITERATIONS 20

int main(void)
{
    prog_init();
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    static const int alt_of_phase[] = {0, 1, 0};
    for (int phase = 0; phase < 3; phase++) {
        prog_kernels k;
        prog_kernels_load(&k, alt_of_phase[phase]);
        k_fill(&k, s, x, 1, N);
        k_fill(&k, s, y, 2, N);
        for (int it = 0; it < ITERATIONS; it++) {
            k_mix(&k, s, x, 5, N);
            k_add(&k, s, y, x, N);
            k_mix(&k, s, y, 7, N);
            unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N);
            printf("phase %d iteration %2d x %016llx y %016llx\n", phase, it, hx, hy);
        }
        prog_kernels_unload(&k);
    }
    prog_report_launches();
    return 0;
}
