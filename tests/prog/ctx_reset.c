/* The program resets the primary context (cudaDeviceReset) between two hot
 * loops, then makes it current again and starts over: new module, streams
 * and buffers. After the reset every stream, event and graph of the context
 * is gone: encore must drop its own (its capture stream, the side streams
 * and events of per-thread streams, its graphs) and never use a stale
 * handle, and the second loop must be captured and replayed like the first.
 * Each phase runs a hot loop on an explicit stream and one on the
 * per-thread default stream.
 *
 *   prog_ctx_reset [reset|release]   (release: drop the primary context's last
 *                                     reference instead, which destroys it too) */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 30

static void phase(const char *what)
{
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream streams[2] = {prog_stream(CU_STREAM_NON_BLOCKING), CU_STREAM_PER_THREAD};
    for (int i = 0; i < 2; i++) {
        CUstream s = streams[i];
        CUdeviceptr x, y, r;
        prog_hot_buffers(&k, s, N, &x, &y, &r);
        for (int it = 0; it < ITERATIONS; it++) {
            k_mix(&k, s, x, 5, N);
            k_add(&k, s, y, x, N);
            k_stamp(&k, s, y, N);
            k_axpy(&k, s, x, y, 3, N);
            k_reduce(&k, s, r, y, N);
            char label[64];
            snprintf(label, sizeof label, "%s %s", what, i ? "per-thread" : "stream");
            prog_print_reduce(s, r, label, it);
        }
    }
}

int main(int argc, char **argv)
{
    int release = argc > 1 && !strcmp(argv[1], "release");
    prog_init();
    phase("before");
    prog_reset_primary(release);
    phase("after");
    prog_report_launches();
    return 0;
}
