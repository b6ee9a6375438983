/* A flush point in the middle of a hot sequence. The hot sequence writes
 * host-mapped memory; in some iterations the program stops after the second
 * of four launches, makes one call that waits for (or polls) the launches
 * issued so far, and then reads the mapped memory directly, without any
 * further CUDA call. encore holds the first launches while they match the
 * hot sequence, so that call must issue them first; otherwise it finds
 * nothing to wait for and the host reads stale values.
 *
 *   prog_flush_mid_match MODE, the call:
 *     stream-query   while (cuStreamQuery(s) == CUDA_ERROR_NOT_READY)
 *     stream-sync    cuStreamSynchronize(s)
 *     event-record   cuEventRecord(ev, s); while (cuEventQuery(ev) == CUDA_ERROR_NOT_READY)
 *     event-sync     cuEventRecord(ev, s); cuEventSynchronize(ev)
 *     ctx-sync       cuCtxSynchronize() (asked for at version 12000)
 *     ctx-sync-v2    cuCtxSynchronize(ctx) (asked for at version 13000)
 *     memcpy         cuMemcpyDtoH of another buffer (s is a blocking stream here, so the
 *                    legacy stream's copy waits for it)
 *
 * Hot sequence: mix(m, 5) add(m, x) | mix(x, 9) add(x, m), m mapped, x device. */
#include "prog.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 40

static const char *const modes[] = {"stream-query", "stream-sync", "event-record", "event-sync",
                                    "ctx-sync",     "ctx-sync-v2", "memcpy"};
enum { STREAM_QUERY, STREAM_SYNC, EVENT_RECORD, EVENT_SYNC, CTX_SYNC, CTX_SYNC_V2, MEMCPY, NMODES };

int main(int argc, char **argv)
{
    int mode = -1;
    for (int i = 0; argc == 2 && i < NMODES; i++)
        if (!strcmp(argv[1], modes[i]))
            mode = i;
    if (mode < 0)
        prog_die("usage: prog_flush_mid_match stream-query|stream-sync|event-record|event-sync|ctx-sync|"
                 "ctx-sync-v2|memcpy");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(mode == MEMCPY ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING);
    CUevent ev;
    CK(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    uint32_t *m_host;
    CK(drv.cuMemHostAlloc((void **)&m_host, N * sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP));
    CUdeviceptr m, x = prog_alloc(N), other = prog_alloc(N);
    CK(drv.cuMemHostGetDevicePointer(&m, m_host, 0));
    for (uint32_t i = 0; i < N; i++)
        m_host[i] = i * 7u;
    k_fill(&k, s, x, 3, N);
    k_fill(&k, s, other, 4, N);
    CK(drv.cuStreamSynchronize(s));
    static uint32_t tmp[N];

    for (int it = 0; it < ITERATIONS; it++) {
        int stop = it >= 6 && it % 5 == 1;
        k_mix(&k, s, m, 5, N);
        k_add(&k, s, m, x, N);
        if (stop) {
            CUresult r = CUDA_SUCCESS;
            switch (mode) {
            case STREAM_QUERY:
                while ((r = drv.cuStreamQuery(s)) == CUDA_ERROR_NOT_READY)
                    sched_yield();
                break;
            case STREAM_SYNC:
                r = drv.cuStreamSynchronize(s);
                break;
            case EVENT_RECORD:
                CK(drv.cuEventRecord(ev, s));
                while ((r = drv.cuEventQuery(ev)) == CUDA_ERROR_NOT_READY)
                    sched_yield();
                break;
            case EVENT_SYNC:
                CK(drv.cuEventRecord(ev, s));
                r = drv.cuEventSynchronize(ev);
                break;
            case CTX_SYNC:
                r = drv.cuCtxSynchronize();
                break;
            case CTX_SYNC_V2:
                r = drv.cuCtxSynchronize_v2(prog_ctx);
                break;
            case MEMCPY:
                r = drv.cuMemcpyDtoH(tmp, other, sizeof tmp);
                break;
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
