/* A flush point in the middle of a hot sequence. The hot sequence writes
 * host-mapped memory; in some iterations the program stops after the second
 * of four launches, waits for the stream (or for an event recorded on it) to
 * become idle by polling, and then reads the mapped memory directly, without
 * any CUDA call. encore holds the first launches while they match the hot
 * sequence, so the poll must issue them first; otherwise the poll sees an
 * idle stream at once and the host reads stale values.
 *
 *   prog_flush_mid_match stream-query|event-record
 *
 * Hot sequence: mix(m, 5) add(m, x) | mix(x, 9) add(x, m), m mapped, x device. */
#include "prog.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 40

int main(int argc, char **argv)
{
    int use_event = argc > 1 && !strcmp(argv[1], "event-record");
    if (argc != 2 || (!use_event && strcmp(argv[1], "stream-query")))
        prog_die("usage: prog_flush_mid_match stream-query|event-record");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUevent ev;
    CK(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    uint32_t *m_host;
    CK(drv.cuMemHostAlloc((void **)&m_host, N * sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr m, x = prog_alloc(N);
    CK(drv.cuMemHostGetDevicePointer(&m, m_host, 0));
    for (uint32_t i = 0; i < N; i++)
        m_host[i] = i * 7u;
    k_fill(&k, s, x, 3, N);

    for (int it = 0; it < ITERATIONS; it++) {
        int stop = it >= 6 && it % 5 == 1;
        k_mix(&k, s, m, 5, N);
        k_add(&k, s, m, x, N);
        if (stop) {
            CUresult r;
            if (use_event) {
                CK(drv.cuEventRecord(ev, s));
                while ((r = drv.cuEventQuery(ev)) == CUDA_ERROR_NOT_READY)
                    sched_yield();
            } else {
                while ((r = drv.cuStreamQuery(s)) == CUDA_ERROR_NOT_READY)
                    sched_yield();
            }
            CK(r);
            printf("iteration %2d middle m %016llx\n", it, (unsigned long long)prog_hash_buf(PROG_HASH_INIT, m_host, N));
        }
        k_mix(&k, s, x, 9, N);
        k_add(&k, s, x, m, N);
        CK(drv.cuStreamSynchronize(s));
        unsigned long long hm = prog_hash_buf(PROG_HASH_INIT, m_host, N);
        unsigned long long hx = prog_hash_dev(s, x, N);
        printf("iteration %2d end m %016llx x %016llx\n", it, hm, hx);
    }
    CK(drv.cuMemFreeHost(m_host));
    prog_report_launches();
    return 0;
}
