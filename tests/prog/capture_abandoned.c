/* The program begins a capture, launches into it, and abandons it by
 * destroying the capturing stream (no cuStreamEndCapture). The driver ends
 * the capture with the stream, so the hot loop that follows (with a
 * synchronisation per iteration, which a live global-mode capture would
 * forbid) runs as usual, and encore must replay it: a capture abandoned this
 * way must not leave encore believing a capture is still live.
 *
 *   prog_capture_abandoned [global|thread-local|relaxed] */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 100

int main(int argc, char **argv)
{
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (argc > 1 && !strcmp(argv[1], "thread-local"))
        mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    else if (argc > 1 && !strcmp(argv[1], "relaxed"))
        mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING), sc = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r, z = prog_alloc(N);
    prog_hot_buffers(&k, s, N, &x, &y, &r);

    CK(drv.cuStreamBeginCapture(sc, mode));
    k_mix(&k, sc, z, 3, N);
    k_add(&k, sc, z, z, N);
    CK(drv.cuStreamDestroy(sc)); /* the capture is abandoned */

    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "iteration", it);
    }
    prog_finish(s, x, y, N);
    return 0;
}
