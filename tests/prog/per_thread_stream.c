/* Two host threads, each running a hot sequence on its own per-thread
 * default stream. encore must keep the two apart (they are different
 * streams although both are "stream 0") and replay each.
 *
 *   prog_per_thread_stream ptsz     entry points fetched with
 *                                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 *                                   (cuLaunchKernel_ptsz & co.), stream handle 0
 *   prog_per_thread_stream handle   the default entry points with CU_STREAM_PER_THREAD
 *
 * Each thread copies its results back itself after synchronising its stream;
 * the main thread prints them after joining. */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 40
#define THREADS 2

static prog_kernels k;
static CUstream stream;
static unsigned long long results[THREADS][ITERATIONS];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    prog_thread_init();
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, stream, x, (uint32_t)t * 11u, N);
    k_fill(&k, stream, y, (uint32_t)t * 13u, N);
    uint32_t host[N];
    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, stream, x, 5u + (uint32_t)t, N);
        k_add(&k, stream, y, x, N);
        k_stamp(&k, stream, y, N);
        k_axpy(&k, stream, x, y, 3, N);
        CK(drv.cuStreamSynchronize(stream));
        CK(drv.cuMemcpyDtoH(host, y, sizeof host));
        results[t][it] = prog_hash_buf(PROG_HASH_INIT, host, N);
    }
    CK(drv.cuMemFree(x));
    CK(drv.cuMemFree(y));
    return NULL;
}

int main(int argc, char **argv)
{
    int ptsz = argc > 1 && !strcmp(argv[1], "ptsz");
    if (argc != 2 || (!ptsz && strcmp(argv[1], "handle")))
        prog_die("usage: prog_per_thread_stream ptsz|handle");
    prog_init_with(ptsz ? PROG_ACCESS_PROCADDR_PTDS : PROG_ACCESS_PROCADDR);
    prog_kernels_load(&k, 0);
    stream = ptsz ? (CUstream)0 : CU_STREAM_PER_THREAD;
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t))
            prog_die("pthread_create failed");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int it = 0; it < ITERATIONS; it++) {
        printf("iteration %2d", it);
        for (int t = 0; t < THREADS; t++)
            printf(" %016llx", results[t][it]);
        printf("\n");
    }
    prog_report_launches();
    return 0;
}
