/* The program captures graphs itself: every iteration it captures the same
 * three launches on its own stream, instantiates the graph and launches it
 * three times, while a hot sequence runs eagerly on a second stream (its
 * first launch issued before the capture begins, the second after it ends).
 * encore must leave the captured stream alone (the launches belong in the
 * program's graph, however often the same sequence is captured) and may
 * replay only the eager stream.
 *
 *   prog_own_capture global|thread-local|relaxed   (the capture mode) */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 30
#define GRAPH_LAUNCHES 3

int main(int argc, char **argv)
{
    CUstreamCaptureMode mode;
    if (argc == 2 && !strcmp(argv[1], "global"))
        mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    else if (argc == 2 && !strcmp(argv[1], "thread-local"))
        mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    else if (argc == 2 && !strcmp(argv[1], "relaxed"))
        mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    else
        prog_die("usage: prog_own_capture global|thread-local|relaxed");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream sc = prog_stream(CU_STREAM_NON_BLOCKING), se = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), z = prog_alloc(N), w = prog_alloc(N);
    k_fill(&k, se, x, 1, N);
    k_fill(&k, se, y, 2, N);
    k_fill(&k, sc, z, 3, N);
    k_fill(&k, sc, w, 4, N);
    CK(drv.cuCtxSynchronize());

    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, se, x, 5, N);

        CK(drv.cuStreamBeginCapture(sc, mode));
        CUstreamCaptureStatus st;
        CK(drv.cuStreamIsCapturing(sc, &st));
        if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
            prog_die("iteration %d: stream not capturing after cuStreamBeginCapture (status %d)", it, (int)st);
        k_mix(&k, sc, z, 9, N);
        k_add(&k, sc, w, z, N);
        k_stamp(&k, sc, w, N);
        CUgraph g;
        CK(drv.cuStreamEndCapture(sc, &g));
        CUgraphExec exec;
        CK(drv.cuGraphInstantiateWithFlags(&exec, g, 0));
        CK(drv.cuGraphDestroy(g));

        k_add(&k, se, y, x, N);
        for (int l = 0; l < GRAPH_LAUNCHES; l++)
            CK(drv.cuGraphLaunch(exec, sc));
        k_axpy(&k, se, x, y, 3, N);

        unsigned long long hz = prog_hash_dev(sc, z, N), hw = prog_hash_dev(sc, w, N);
        unsigned long long hx = prog_hash_dev(se, x, N), hy = prog_hash_dev(se, y, N);
        CK(drv.cuGraphExecDestroy(exec));
        printf("iteration %2d x %016llx y %016llx z %016llx w %016llx\n", it, hx, hy, hz, hw);
    }
    prog_report_launches();
    return 0;
}
