/* A scratch buffer allocated, used by a hot sequence and freed every
 * iteration, with no synchronisation between the launches and cuMemFree.
 * cuMemFree waits for the device, so the launches encore holds must be issued
 * before the memory goes (the allocator may hand out the same address again
 * next iteration, and encore may replay a graph that uses it then).
 *
 * Per iteration: t = cuMemAlloc; fill(t) mix(t) add(acc, t) axpy(acc, t);
 * cuMemFree(t); then acc is copied back. */
#include "prog.h"

#include <stdio.h>

#define N 1024u
#define ITERATIONS 40

int main(void)
{
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr acc = prog_alloc(N);
    k_fill(&k, s, acc, 9, N);
    for (int it = 0; it < ITERATIONS; it++) {
        CUdeviceptr t = prog_alloc(N);
        k_fill(&k, s, t, 17, N);
        k_mix(&k, s, t, 5, N);
        k_add(&k, s, acc, t, N);
        k_axpy(&k, s, acc, t, 3, N);
        CK(drv.cuMemFree(t));
        printf("iteration %2d acc %016llx\n", it, (unsigned long long)prog_hash_dev(s, acc, N));
    }
    prog_report_launches();
    return 0;
}
