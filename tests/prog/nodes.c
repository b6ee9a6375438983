/* Stream operations inside replayed sequences (core/graphs/nodes.c), one behaviour
 * per mode; every iteration prints what an observer saw, so a record, wait,
 * copy or memset issued out of order (or too late) changes the output.
 *
 *   record     a record of a non-timing event mid-iteration; the host
 *              synchronises on the event, then reads a page-locked buffer a
 *              copy before the record filled
 *   observer   the same, but another thread synchronises on the event and
 *              reads the buffer (the main thread waits for it)
 *   forkjoin   s1 records e1, s2 waits for it, works, records e2, s1 waits
 *              for e2: fork/join every iteration
 *   copy       a page-locked host-to-device copy and a device-to-device copy
 *              mid-iteration
 *   pageable   the same copy from pageable host memory (changed by the host
 *              after the call): it ends the sequence
 *   memset     a memset mid-iteration
 *   rerecord   s2 waits for e1 (recorded on s1), then s1 records e1 again
 *              while s2's wait may still be held, and s2 waits again (two
 *              kernels after each wait, so that s2's sequences are graphs)
 *   copyring   the copy mode's copies with ends from a ring of RING buffers:
 *              a new page-locked source and device destination every
 *              iteration (the kernels' arguments stay the same)
 *   setring    a memset of a new device buffer from the ring, to a new value,
 *              every iteration, then a copy from it
 *   eventring  forkjoin with its two events taken from a ring of RING pairs
 *   waitrecord s1 waits for e1 (recorded on s2 after s2 wrote z), reads z,
 *              and records e1 itself, which s2 waits for before writing z
 *              again: one event for both directions, as NCCL's (s1's wait and
 *              record may be one graph's nodes)
 *   eventchurn forkjoin with two events created for the iteration and
 *              destroyed at its end (as PyTorch's collectives do): a graph
 *              may not keep a destroyed event, nor be patched from one
 *   churncapture eventchurn, but every third iteration destroys its events
 *              while the program captures a third stream (global mode) and
 *              replays that graph: encore makes no driver call meanwhile
 *
 *   prog_nodes MODE [iterations] */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256u

static prog_kernels k;
static CUdeviceptr x, y, z;
static CUevent e1, e2;
static uint32_t *pin;
#define RING 8
static uint32_t *pin_ring[RING];
static CUdeviceptr dev_ring[RING];
static CUevent ev_ring[RING][2];
static uint64_t seen;

static void *observer(void *arg) {
    (void)arg;
    prog_thread_init();
    CK(drv.cuEventSynchronize(e1));
    seen = prog_hash_buf(PROG_HASH_INIT, pin, N);
    return NULL;
}

/* The program captures s3 (global mode: unsafe calls anywhere would invalidate
 * it), destroys events a and b meanwhile, then replays what it captured. */
static CUstream s3;
static CUdeviceptr w3; /* s3's own buffer: nothing orders s3 with s1 and s2 */
static void capture_while(CUevent a, CUevent b) {
    CUgraph g;
    CUgraphExec ge;
    CK(drv.cuStreamBeginCapture(s3, CU_STREAM_CAPTURE_MODE_GLOBAL));
    k_mix(&k, s3, w3, 5, N);
    CK(drv.cuEventDestroy(a));
    CK(drv.cuEventDestroy(b));
    k_stamp(&k, s3, w3, N);
    CK(drv.cuStreamEndCapture(s3, &g));
    CK(drv.cuGraphInstantiateWithFlags(&ge, g, 0));
    CK(drv.cuGraphLaunch(ge, s3));
    CK(drv.cuStreamSynchronize(s3));
    CK(drv.cuGraphExecDestroy(ge));
    CK(drv.cuGraphDestroy(g));
}

static void iteration(const char *mode, CUstream s1, CUstream s2, int it) {
    k_mix(&k, s1, x, 7, N); /* the same arguments every iteration: a graph per iteration */
    k_add(&k, s1, y, x, N);
    if (!strcmp(mode, "record") || !strcmp(mode, "observer")) {
        CK(drv.cuMemcpyDtoHAsync(pin, y, N * 4, s1));
        CK(drv.cuEventRecord(e1, s1));
        k_stamp(&k, s1, y, N);
        k_axpy(&k, s1, x, y, 3, N);
        if (!strcmp(mode, "record")) {
            CK(drv.cuEventSynchronize(e1));
            seen = prog_hash_buf(PROG_HASH_INIT, pin, N);
        } else {
            pthread_t t;
            pthread_create(&t, NULL, observer, NULL);
            pthread_join(t, NULL);
        }
        printf("iteration %3d event saw %016llx\n", it, (unsigned long long)seen);
    } else if (!strcmp(mode, "forkjoin") || !strcmp(mode, "eventring") || !strcmp(mode, "eventchurn") ||
               !strcmp(mode, "churncapture")) {
        CUevent a = e1, b = e2;
        int fresh = !strcmp(mode, "eventchurn") || !strcmp(mode, "churncapture"); /* events of this iteration */
        if (!strcmp(mode, "eventring")) {
            a = ev_ring[it % RING][0];
            b = ev_ring[it % RING][1];
        } else if (fresh) {
            CK(drv.cuEventCreate(&a, CU_EVENT_DISABLE_TIMING));
            CK(drv.cuEventCreate(&b, CU_EVENT_DISABLE_TIMING));
        }
        CK(drv.cuEventRecord(a, s1));
        CK(drv.cuStreamWaitEvent(s2, a, 0));
        k_axpy(&k, s2, z, y, 5, N);
        k_stamp(&k, s2, z, N);
        CK(drv.cuEventRecord(b, s2));
        CK(drv.cuStreamWaitEvent(s1, b, 0));
        k_add(&k, s1, x, z, N);
        if (!strcmp(mode, "churncapture") && it % 3 == 2) {
            capture_while(a, b);
        } else if (fresh) {
            CK(drv.cuEventDestroy(a)); /* their records and waits may still be pending or held */
            CK(drv.cuEventDestroy(b));
        }
    } else if (!strcmp(mode, "waitrecord")) {
        k_mix(&k, s2, z, (uint32_t)it, N); /* s2 writes z */
        k_stamp(&k, s2, z, N);
        CK(drv.cuEventRecord(e1, s2));
        CK(drv.cuStreamWaitEvent(s1, e1, 0)); /* s1 reads z after s2's writes */
        k_add(&k, s1, x, z, N);
        k_stamp(&k, s1, x, N);
        CK(drv.cuEventRecord(e1, s1));        /* the same event, recorded after s1's reads */
        CK(drv.cuStreamWaitEvent(s2, e1, 0)); /* s2 writes z again only then */
    } else if (!strcmp(mode, "copy") || !strcmp(mode, "pageable")) {
        static uint32_t pageable[N];
        uint32_t *src = !strcmp(mode, "copy") ? pin : pageable;
        for (uint32_t i = 0; i < N; i++) src[i] = (uint32_t)it * 31u + i;
        CK(drv.cuMemcpyHtoDAsync(z, src, N * 4, s1));
        if (src == pageable) memset(pageable, 0xee, sizeof pageable); /* staged at the call: no effect */
        k_add(&k, s1, y, z, N);
        CK(drv.cuMemcpyDtoDAsync(z, y, N * 4, s1));
        k_axpy(&k, s1, x, z, 7, N);
        CK(drv.cuStreamSynchronize(s1)); /* the host writes src again next iteration */
    } else if (!strcmp(mode, "copyring")) {
        uint32_t *src = pin_ring[it % RING];
        for (uint32_t i = 0; i < N; i++) src[i] = (uint32_t)it * 17u + i;
        CK(drv.cuMemcpyHtoDAsync(z, src, N * 4, s1));
        k_add(&k, s1, y, z, N);
        CK(drv.cuMemcpyDtoDAsync(dev_ring[it % RING], y, N * 4, s1));
        k_axpy(&k, s1, x, z, 7, N);
        CK(drv.cuStreamSynchronize(s1)); /* the host writes a source again RING iterations later */
    } else if (!strcmp(mode, "setring")) {
        CK(drv.cuMemsetD32Async(dev_ring[it % RING], (unsigned)it * 3u + 1u, N / 2, s1));
        CK(drv.cuMemcpyDtoDAsync(z, dev_ring[it % RING], N * 4, s1));
        k_add(&k, s1, y, z, N);
        k_stamp(&k, s1, y, N);
        CK(drv.cuStreamSynchronize(s1)); /* a flush point: one sequence per iteration */
    } else if (!strcmp(mode, "memset")) {
        CK(drv.cuMemsetD32Async(z, 5u, N / 2, s1));
        k_add(&k, s1, y, z, N);
        k_stamp(&k, s1, y, N);
        CK(drv.cuStreamSynchronize(s1));
    } else if (!strcmp(mode, "rerecord")) {
        CK(drv.cuEventRecord(e1, s1));
        CK(drv.cuStreamWaitEvent(s2, e1, 0));
        k_copy(&k, s2, z, y, N); /* y as of the first record */
        k_stamp(&k, s2, z, N);   /* two kernels: a graph of one is never captured */
        k_mix(&k, s1, x, 99, N); /* s1 writes only x meanwhile */
        CK(drv.cuEventRecord(e1, s1)); /* again, while s2's wait may be held */
        CK(drv.cuStreamWaitEvent(s2, e1, 0));
        k_add(&k, s2, z, x, N); /* x after the mix */
        k_stamp(&k, s2, z, N);
        CK(drv.cuEventRecord(e2, s2));
        CK(drv.cuStreamWaitEvent(s1, e2, 0)); /* s1 writes y next iteration */
    }
}

int main(int argc, char **argv) {
    if (argc < 2)
        prog_die("usage: prog_nodes record|observer|forkjoin|copy|pageable|memset|rerecord|copyring|setring|eventring "
                 "|eventchurn|churncapture|waitrecord [iterations]");
    const char *mode = argv[1];
    int iters = argc > 2 ? atoi(argv[2]) : 60;
    prog_init();
    prog_kernels_load(&k, 0);
    CUstream s1 = prog_stream(CU_STREAM_NON_BLOCKING), s2 = prog_stream(CU_STREAM_NON_BLOCKING);
    s3 = prog_stream(CU_STREAM_NON_BLOCKING);
    w3 = prog_alloc(N);
    x = prog_alloc(N);
    y = prog_alloc(N);
    z = prog_alloc(N);
    k_fill(&k, s1, x, 1, N);
    k_fill(&k, s1, y, 2, N);
    k_fill(&k, s1, z, 3, N);
    CK(drv.cuStreamSynchronize(s1));
    CK(drv.cuMemHostAlloc((void **)&pin, N * 4, 0));
    CK(drv.cuEventCreate(&e1, CU_EVENT_DISABLE_TIMING));
    CK(drv.cuEventCreate(&e2, CU_EVENT_DISABLE_TIMING));
    for (int r = 0; r < RING; r++) {
        CK(drv.cuMemHostAlloc((void **)&pin_ring[r], N * 4, 0));
        dev_ring[r] = prog_alloc(N);
        k_fill(&k, s1, dev_ring[r], (uint32_t)r + 10u, N);
        CK(drv.cuEventCreate(&ev_ring[r][0], CU_EVENT_DISABLE_TIMING));
        CK(drv.cuEventCreate(&ev_ring[r][1], CU_EVENT_DISABLE_TIMING));
    }
    for (int it = 0; it < iters; it++) {
        iteration(mode, s1, s2, it);
        if (it % 10 == 9) {
            CK(drv.cuStreamSynchronize(s1));
            CK(drv.cuStreamSynchronize(s2));
            printf("iteration %3d x %016llx z %016llx\n", it, (unsigned long long)prog_hash_dev(s1, x, N),
                   (unsigned long long)prog_hash_dev(s1, z, N));
        }
    }
    CK(drv.cuStreamSynchronize(s2));
    uint64_t ring = PROG_HASH_INIT;
    for (int r = 0; r < RING; r++) ring = ring * 31u + prog_hash_dev(s1, dev_ring[r], N);
    printf("ring %016llx\n", (unsigned long long)ring);
    prog_finish(s1, x, y, N);
    return 0;
}
