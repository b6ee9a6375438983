/* The legacy default stream used together with a blocking and a
 * non-blocking stream, relying on the legacy stream's implicit
 * synchronisation: work on the legacy stream waits for all earlier work on
 * blocking streams, and later work on blocking streams waits for it. The
 * non-blocking stream is ordered by nothing but its own synchronisation.
 * encore may hold the blocking stream's launches, but a legacy-stream call
 * must see them done (and the blocking stream's next launch must see the
 * legacy work done).
 *
 * Per iteration:
 *   blocking b:      delay, mix(x), add(y, x)
 *   legacy (0):      add(z, y)                 waits for b's add
 *   blocking b:      mix(y)                    waits for the legacy add (reads y first)
 *   CU_STREAM_LEGACY: stamp(z)
 *   non-blocking nb: mix(w), stamp(w)
 *   copies back with cuMemcpyDtoH (legacy, blocking); nb synchronised explicitly */
#include "prog.h"

#include <stdio.h>

#define N 512u
#define ITERATIONS 40

int main(void)
{
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream b = prog_stream(CU_STREAM_DEFAULT), nb = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), z = prog_alloc(N), w = prog_alloc(N);
    k_fill(&k, 0, x, 1, N);
    k_fill(&k, 0, y, 2, N);
    k_fill(&k, 0, z, 3, N);
    k_fill(&k, nb, w, 4, N);
    CK(drv.cuCtxSynchronize());
    uint32_t host[N];

    for (int it = 0; it < ITERATIONS; it++) {
        k_delay(&k, b, 200);
        k_mix(&k, b, x, 5, N);
        k_add(&k, b, y, x, N);
        k_add(&k, 0, z, y, N);
        k_mix(&k, b, y, 7, N);
        k_stamp(&k, CU_STREAM_LEGACY, z, N);
        k_mix(&k, nb, w, 3, N);
        k_stamp(&k, nb, w, N);

        CK(drv.cuMemcpyDtoH(host, z, sizeof host));
        unsigned long long hz = prog_hash_buf(PROG_HASH_INIT, host, N);
        CK(drv.cuMemcpyDtoH(host, y, sizeof host));
        unsigned long long hy = prog_hash_buf(PROG_HASH_INIT, host, N);
        CK(drv.cuStreamSynchronize(nb));
        CK(drv.cuMemcpyDtoH(host, w, sizeof host));
        unsigned long long hw = prog_hash_buf(PROG_HASH_INIT, host, N);
        printf("iteration %2d y %016llx z %016llx w %016llx\n", it, hy, hz, hw);
    }
    prog_report_launches();
    return 0;
}
