/* The program's own graphs with event nodes on events whose records or
 * waits encore may hold (issue 26): a graph launch must see every record and
 * wait made before it, whatever the stream. Each iteration repeats the same
 * launches on streams A and C (hot sequences encore holds once it has
 * learnt them) and launches the program's graph G on stream B; then the
 * context is synchronised and what the kernels wrote is printed.
 *
 *   wait-add        A: mix(y), stamp(y), record E.  G on B: [wait node E] ->
 *                   copy(z, y) -> stamp(z). G built with cuGraphAddEventWaitNode
 *   wait-capture    the same G captured on B with
 *                   cuStreamWaitEvent(B, E, CU_EVENT_WAIT_EXTERNAL)
 *   record-add      A: mix(y), record E.  C: wait E, copy(z, y), flag_inc
 *                   (C's wait is for A's record).  G on B: flag_wait(flag
 *                   >= 1) -> mix(w) -> [record node E] (cuGraphAddEventRecordNode):
 *                   G runs only after C's flag_inc, so a wait on E issued
 *                   after G's launch waits for G's record: a deadlock, which
 *                   flag_wait ends after a timeout, counting it (printed)
 *   record-capture  the same G captured on B with
 *                   cuEventRecordWithFlags(E, B, CU_EVENT_RECORD_EXTERNAL)
 *   rerecord-add    A: mix(y), stamp(y), record E.  G on B: delay -> mix(w) ->
 *                   [record node E].  C: wait E (G's record, the latest),
 *                   copy(z, w): an earlier record of E issued after G's
 *                   launch would let C read w before G wrote it
 *
 * [upload]: cuGraphUpload(G, B) before each launch (A's work stays held over it).
 *
 *   prog_graph_events MODE [iterations] [upload] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256u
#define TIMEOUT_MS 300u

static prog_kernels k;
static CUstream sa, sb, sc;
static CUevent ev;
static CUdeviceptr y, z, w, flag;

/* A kernel node of f, the usual 1-D configuration for n elements (grid 1 when n is 0). */
static CUgraphNode knode(CUgraph g, CUgraphNode dep, CUfunction f, void **params, uint32_t n) {
    CUDA_KERNEL_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = n ? PROG_GRID(n) : 1;
    p.blockDimX = n ? PROG_BLOCK : 1;
    p.gridDimY = p.gridDimZ = p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = params;
    CUgraphNode node;
    CK(drv.cuGraphAddKernelNode(&node, g, dep ? &dep : NULL, dep ? 1 : 0, &p));
    return node;
}

/* G for the wait modes: wait for E, then copy(z, y), stamp(z). */
static CUgraph build_wait(int capture) {
    CUgraph g;
    uint32_t n = N;
    if (capture) {
        CK(drv.cuStreamBeginCapture(sb, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CK(drv.cuStreamWaitEvent(sb, ev, CU_EVENT_WAIT_EXTERNAL));
        k_copy(&k, sb, z, y, N);
        k_stamp(&k, sb, z, N);
        CK(drv.cuStreamEndCapture(sb, &g));
        return g;
    }
    CK(drv.cuGraphCreate(&g, 0));
    CUgraphNode wn;
    CK(drv.cuGraphAddEventWaitNode(&wn, g, NULL, 0, ev));
    void *cp[] = {&z, &y, &n}, *sp[] = {&z, &n};
    CUgraphNode c = knode(g, wn, k.copy, cp, N);
    knode(g, c, k.stamp, sp, N);
    return g;
}

/* G for the record modes: flag_wait(flag >= 1) (record-*) or delay (rerecord-*), mix(w), then record E. */
static CUgraph build_record(int capture, int delay) {
    CUgraph g;
    uint32_t n = N, one = 1, timeout = TIMEOUT_MS, salt = 3, us = 20000;
    if (capture) {
        CK(drv.cuStreamBeginCapture(sb, CU_STREAM_CAPTURE_MODE_GLOBAL));
        if (delay)
            k_delay(&k, sb, us);
        else
            k_flag_wait(&k, sb, flag, one, timeout);
        k_mix(&k, sb, w, salt, N);
        CK(drv.cuEventRecordWithFlags(ev, sb, CU_EVENT_RECORD_EXTERNAL));
        CK(drv.cuStreamEndCapture(sb, &g));
        return g;
    }
    CK(drv.cuGraphCreate(&g, 0));
    void *fp[] = {&flag, &one, &timeout}, *dp[] = {&us}, *mp[] = {&w, &salt, &n};
    CUgraphNode first = delay ? knode(g, NULL, k.delay, dp, 0) : knode(g, NULL, k.flag_wait, fp, 0);
    CUgraphNode m = knode(g, first, k.mix, mp, N);
    CUgraphNode rn;
    CK(drv.cuGraphAddEventRecordNode(&rn, g, &m, 1, ev));
    return g;
}

static uint64_t hash_sync(CUdeviceptr d, uint32_t n) {
    uint32_t buf[N];
    CK(drv.cuMemcpyDtoH(buf, d, n * sizeof(uint32_t)));
    return prog_hash_buf(PROG_HASH_INIT, buf, n);
}

int main(int argc, char **argv) {
    if (argc < 2)
        prog_die("usage: prog_graph_events wait-add|wait-capture|record-add|record-capture|rerecord-add "
                 "[iterations] [upload]");
    const char *mode = argv[1];
    int iters = argc > 2 ? atoi(argv[2]) : 12, upload = argc > 3 && !strcmp(argv[3], "upload");
    int wait = !strncmp(mode, "wait-", 5), rerecord = !strcmp(mode, "rerecord-add");
    int capture = !strcmp(mode, "wait-capture") || !strcmp(mode, "record-capture");
    if (!wait && !rerecord && strcmp(mode, "record-add") && strcmp(mode, "record-capture"))
        prog_die("unknown mode %s", mode);
    prog_init();
    prog_kernels_load(&k, 0);
    sa = prog_stream(CU_STREAM_NON_BLOCKING);
    sb = prog_stream(CU_STREAM_NON_BLOCKING);
    sc = prog_stream(CU_STREAM_NON_BLOCKING);
    y = prog_alloc(N);
    z = prog_alloc(N);
    w = prog_alloc(N);
    flag = prog_alloc(2); /* [0] raised by C, [1] flag_wait's timeouts */
    k_fill(&k, sa, y, 1, N);
    k_fill(&k, sa, z, 2, N);
    k_fill(&k, sa, w, 3, N);
    CK(drv.cuMemsetD32(flag, 0, 2));
    CK(drv.cuCtxSynchronize());
    CK(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));

    CUgraph g = wait ? build_wait(capture) : build_record(capture, rerecord);
    CUgraphExec ge;
    CK(drv.cuGraphInstantiateWithFlags(&ge, g, 0));
    CK(drv.cuGraphDestroy(g));

    for (int it = 0; it < iters; it++) {
        CK(drv.cuMemsetD32(flag, 0, 1)); /* the legacy stream: ordered by the synchronisation below */
        CK(drv.cuCtxSynchronize());
        k_mix(&k, sa, y, 7, N);
        if (wait || rerecord) /* two kernels: a sequence of one kernel is never captured */
            k_stamp(&k, sa, y, N);
        CK(drv.cuEventRecord(ev, sa));
        if (!wait && !rerecord) { /* C waits for A's record; G waits for C's flag */
            CK(drv.cuStreamWaitEvent(sc, ev, 0));
            k_copy(&k, sc, z, y, N);
            k_flag_inc(&k, sc, flag);
        }
        if (upload)
            CK(drv.cuGraphUpload(ge, sb));
        CK(drv.cuGraphLaunch(ge, sb));
        if (rerecord) { /* C waits for G's record, the latest */
            CK(drv.cuStreamWaitEvent(sc, ev, 0));
            k_copy(&k, sc, z, w, N);
        }
        CK(drv.cuCtxSynchronize());
        uint32_t timeouts;
        CK(drv.cuMemcpyDtoH(&timeouts, flag + sizeof(uint32_t), sizeof timeouts));
        printf("iteration %2d y %016llx z %016llx w %016llx timeouts %u\n", it, (unsigned long long)hash_sync(y, N),
               (unsigned long long)hash_sync(z, N), (unsigned long long)hash_sync(w, N), timeouts);
    }
    CK(drv.cuGraphExecDestroy(ge));
    CK(drv.cuEventDestroy(ev));
    prog_report_launches();
    return 0;
}
