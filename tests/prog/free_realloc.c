/* A scratch buffer filled by a blocking copy, used by a hot sequence and
 * freed every iteration, with no synchronisation between the launches and
 * cuMemFree. cuMemFree waits for the device, so the launches encore holds
 * must be issued before the memory goes: right after the free the program
 * allocates another buffer (the allocator tends to hand out the same memory
 * again) and overwrites it, which changes the results of any launch that
 * still reads the freed buffer afterwards.
 *
 * Per iteration: t = cuMemAlloc; cuMemcpyHtoD(t); mix(t) add(acc, t) axpy(acc, t);
 * cuMemFree(t); u = cuMemAlloc; cuMemcpyHtoD(u, junk); cuMemFree(u); acc copied back. */
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
    static uint32_t init[N], junk[N];
    for (uint32_t i = 0; i < N; i++) {
        init[i] = i * 2654435761u;
        junk[i] = 0xdeadbeefu ^ i;
    }
    for (int it = 0; it < ITERATIONS; it++) {
        CUdeviceptr t = prog_alloc(N);
        CK(drv.cuMemcpyHtoD(t, init, sizeof init));
        k_mix(&k, s, t, 5, N);
        k_add(&k, s, acc, t, N);
        k_axpy(&k, s, acc, t, 3, N);
        CK(drv.cuMemFree(t));
        CUdeviceptr u = prog_alloc(N);
        CK(drv.cuMemcpyHtoD(u, junk, sizeof junk));
        CK(drv.cuMemFree(u));
        printf("iteration %2d acc %016llx\n", it, (unsigned long long)prog_hash_dev(s, acc, N));
    }
    prog_report_launches();
    return 0;
}
