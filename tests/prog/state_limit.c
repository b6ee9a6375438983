/* More live streams than encore keeps states for (4,096): a stream that
 * gets no state passes through as it would without encore. Its launches do
 * not issue what other streams hold (only the legacy stream's launches
 * would: it waits for every blocking stream), so a hot loop on a stream that
 * has a state keeps its whole sequence, and keeps replaying it, while a
 * stateless stream launches in the middle of every iteration.
 *
 *   prog_state_limit [streams (default 4200)] [iterations (default 50)] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 256u

int main(int argc, char **argv)
{
    int streams = argc > 1 ? atoi(argv[1]) : 4200, iterations = argc > 2 ? atoi(argv[2]) : 50;
    if (streams < 1 || iterations < 1)
        prog_die("usage: prog_state_limit [streams] [iterations]");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream a = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), z = prog_alloc(N);
    k_fill(&k, a, x, 1, N);
    k_fill(&k, a, y, 2, N);
    CUstream *many = calloc((size_t)streams, sizeof *many);
    if (!many)
        prog_die("out of memory");
    for (int i = 0; i < streams; i++) { /* one launch each: encore gives each a state while it has one */
        many[i] = prog_stream(CU_STREAM_NON_BLOCKING);
        k_fill(&k, many[i], z, 7, N);
    }
    CK(drv.cuCtxSynchronize());
    CUstream last = many[streams - 1];
    uint32_t host[N];
    for (int it = 0; it < iterations; it++) {
        k_mix(&k, a, x, 5, N);
        k_add(&k, a, y, x, N);
        k_fill(&k, last, z, (uint32_t)it, N); /* a stream without a state, mid-sequence */
        k_stamp(&k, a, y, N);
        k_axpy(&k, a, x, y, 3, N);
        CK(drv.cuMemcpyDtoHAsync(host, y, sizeof host, a));
        CK(drv.cuStreamSynchronize(a));
        printf("iteration %3d y %016llx z %016llx\n", it, (unsigned long long)prog_hash_buf(PROG_HASH_INIT, host, N),
               (unsigned long long)prog_hash_dev(last, z, N));
    }
    for (int i = 0; i < streams; i++)
        CK(drv.cuStreamDestroy(many[i]));
    prog_report_launches();
    return 0;
}
