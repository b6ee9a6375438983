/* The program captures a graph itself, across three streams joined by
 * events (the pattern of CUDA's simpleCudaGraphs sample): blocking streams
 * created with default flags; a capture begun on s1; s2 and s3 forked into
 * it with an event; a memset on each, an event recorded after each; s1 waits
 * for the first, runs a kernel, waits for the second, runs a second kernel;
 * an asynchronous copy back and a host function; the capture ends, the graph
 * is instantiated and launched. Between captures the program runs a hot
 * sequence eagerly on s1 and on the legacy stream, so that encore holds
 * launches there when each capture begins.
 *
 * A stream that joins a capture through an event wait captures too, and
 * while a capture is live the driver forbids, in global mode from any thread
 * (thread-local: from the capturing thread), every "unsafe" call and all
 * legacy-stream work (the capture involves blocking streams): encore must
 * make no such call from any of its threads.
 *
 *   prog_capture_fork_join global|thread-local|relaxed [hot-thread|fresh-stream]
 *
 * fresh-stream: every capture runs on a stream created just before it, so the
 * first launch encore sees on that stream comes while it captures (the GPU
 * showed encore asking such a stream's flags then: docs/driver-rules.md).
 *
 * hot-thread: a second host thread (its capture interaction mode relaxed, as
 * a program must set it to synchronise during another thread's global
 * capture) runs a hot loop on its own non-blocking stream the whole time,
 * so encore holds and replays launches on another stream while the program
 * captures. */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define N 256u
#define ITERATIONS 12
#define HOT_ITERATIONS 200

static prog_kernels k;
static CUstreamCaptureMode mode;
static int hot_started; /* iterations of the hot loop done (atomic) */
static unsigned long long hot_results[HOT_ITERATIONS];

static void CUDA_CB host_count(void *ud)
{
    (*(uint32_t *)ud)++;
}

static void *hot_thread(void *arg)
{
    (void)arg;
    prog_thread_init();
    CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
    CK(drv.cuThreadExchangeStreamCaptureMode(&relaxed));
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, s, x, 3, N);
    k_fill(&k, s, y, 4, N);
    uint32_t *h;
    CK(drv.cuMemHostAlloc((void **)&h, N * sizeof *h, 0));
    for (int it = 0; it < HOT_ITERATIONS; it++) {
        k_mix(&k, s, x, 11, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 5, N);
        CK(drv.cuMemcpyDtoHAsync(h, y, N * sizeof *h, s));
        CK(drv.cuStreamSynchronize(s));
        hot_results[it] = prog_hash_buf(PROG_HASH_INIT, h, N);
        __atomic_store_n(&hot_started, it + 1, __ATOMIC_RELEASE);
        usleep(300); /* spread the loop over the other thread's captures */
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "global"))
        mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    else if (argc >= 2 && !strcmp(argv[1], "thread-local"))
        mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    else if (argc >= 2 && !strcmp(argv[1], "relaxed"))
        mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    else
        prog_die("usage: prog_capture_fork_join global|thread-local|relaxed [hot-thread|fresh-stream]");
    int with_hot = argc >= 3 && !strcmp(argv[2], "hot-thread");
    int fresh = argc >= 3 && !strcmp(argv[2], "fresh-stream");
    prog_init();
    prog_kernels_load(&k, 0);
    CUstream s1 = prog_stream(CU_STREAM_DEFAULT), s2 = prog_stream(CU_STREAM_DEFAULT),
             s3 = prog_stream(CU_STREAM_DEFAULT);
    CUevent fork_ev, ev1, ev2;
    CK(drv.cuEventCreate(&fork_ev, CU_EVENT_DISABLE_TIMING));
    CK(drv.cuEventCreate(&ev1, CU_EVENT_DISABLE_TIMING));
    CK(drv.cuEventCreate(&ev2, CU_EVENT_DISABLE_TIMING));
    CUdeviceptr in = prog_alloc(N), out = prog_alloc(N), res = prog_alloc(4), a = prog_alloc(N), b = prog_alloc(N);
    uint32_t *host_in, *host_res, *host_count_p;
    CK(drv.cuMemHostAlloc((void **)&host_in, N * sizeof *host_in, 0));
    CK(drv.cuMemHostAlloc((void **)&host_res, 4 * sizeof *host_res, 0));
    CK(drv.cuMemHostAlloc((void **)&host_count_p, sizeof *host_count_p, 0));
    *host_count_p = 0;
    k_fill(&k, s1, a, 1, N);
    k_fill(&k, CU_STREAM_LEGACY, b, 2, N);
    CK(drv.cuCtxSynchronize());

    pthread_t hot;
    if (with_hot) {
        if (pthread_create(&hot, NULL, hot_thread, NULL))
            prog_die("pthread_create failed");
        while (__atomic_load_n(&hot_started, __ATOMIC_ACQUIRE) < 10) /* its sequences are hot by now */
            usleep(100);
    }

    for (int it = 0; it < ITERATIONS; it++) {
        /* eager hot sequences: held by encore when the capture begins */
        k_mix(&k, s1, a, 5, N);
        k_add(&k, s1, a, a, N);
        k_stamp(&k, s1, a, N);
        k_mix(&k, CU_STREAM_LEGACY, b, 7, N);
        k_add(&k, CU_STREAM_LEGACY, b, b, N);
        k_stamp(&k, CU_STREAM_LEGACY, b, N);
        for (uint32_t i = 0; i < N; i++)
            host_in[i] = (uint32_t)(it * 1000u + i);

        CUstream cs = fresh ? prog_stream(CU_STREAM_DEFAULT) : s1; /* the capturing stream */
        if (fresh) /* nothing of encore's is open now: it meets cs first inside the capture */
            CK(drv.cuCtxSynchronize());
        CK(drv.cuStreamBeginCapture(cs, mode));
        CK(drv.cuEventRecord(fork_ev, cs));
        CK(drv.cuStreamWaitEvent(s2, fork_ev, 0));
        CK(drv.cuStreamWaitEvent(s3, fork_ev, 0));
        CK(drv.cuMemcpyHtoDAsync(in, host_in, N * sizeof *host_in, cs));
        CK(drv.cuMemsetD32Async(out, 0, N, s2));
        CK(drv.cuEventRecord(ev1, s2));
        CK(drv.cuMemsetD32Async(res, 0, 4, s3));
        CK(drv.cuEventRecord(ev2, s3));
        CK(drv.cuStreamWaitEvent(cs, ev1, 0));
        k_add(&k, cs, out, in, N);
        CK(drv.cuStreamWaitEvent(cs, ev2, 0));
        k_reduce(&k, cs, res, out, N);
        CK(drv.cuMemcpyDtoHAsync(host_res, res, 4 * sizeof *host_res, cs));
        CK(drv.cuLaunchHostFunc(cs, host_count, host_count_p));
        CUgraph g;
        CK(drv.cuStreamEndCapture(cs, &g));
        CUgraphExec exec;
        CK(drv.cuGraphInstantiateWithFlags(&exec, g, 0));
        CK(drv.cuGraphDestroy(g));
        CK(drv.cuGraphLaunch(exec, cs));
        CK(drv.cuStreamSynchronize(cs));
        printf("iteration %2d sum %08x host functions %u", it, host_res[0], *host_count_p);
        CK(drv.cuGraphLaunch(exec, cs));
        CK(drv.cuStreamSynchronize(cs));
        CK(drv.cuGraphExecDestroy(exec));
        if (fresh)
            CK(drv.cuStreamDestroy(cs));
        printf(" again %08x %u\n", host_res[0], *host_count_p);
    }
    if (with_hot) {
        pthread_join(hot, NULL);
        for (int it = 0; it < HOT_ITERATIONS; it += 10)
            printf("hot %3d %016llx\n", it, hot_results[it]);
    }
    printf("a %016llx b %016llx\n", (unsigned long long)prog_hash_dev(s1, a, N),
           (unsigned long long)prog_hash_dev(CU_STREAM_LEGACY, b, N));
    prog_report_launches();
    return 0;
}
