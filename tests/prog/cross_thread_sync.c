/* One thread launches a hot sequence on its stream and then waits, without
 * calling CUDA, while a second thread synchronises that stream and reads the
 * result. encore holds the first thread's launches while they match, so the
 * second thread's call must issue them (the flush deadline is set long in the
 * test, so only that call can).
 *
 *   prog_cross_thread_sync stream-sync   B: cuStreamSynchronize(s), then copies back
 *   prog_cross_thread_sync event-sync    A records an event after the launches;
 *                                        B: cuEventSynchronize(ev), then copies back
 *   prog_cross_thread_sync memcpy        s is a blocking stream; B: cuMemcpyDtoH alone
 *                                        (the legacy stream waits for s's work)
 *   prog_cross_thread_sync per-thread-memcpy    s is A's per-thread default stream
 *                                        (CU_STREAM_PER_THREAD); B: cuMemcpyDtoH alone
 *   prog_cross_thread_sync per-thread-ctx-sync  the same; B: cuCtxSynchronize, then the copy
 *   prog_cross_thread_sync per-thread-release   the same stream; B only makes encore issue
 *                                        what A's stream holds (a blocking memset of its own
 *                                        buffer, on the legacy stream) and does not wait; A
 *                                        goes on launching at once and copies back itself
 *                                        every fifth iteration
 * In the per-thread modes B issues what A's stream holds; A's next launches
 * must still come after it on A's stream (they read what those wrote). */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 40

enum mode { STREAM_SYNC, EVENT_SYNC, MEMCPY, PT_MEMCPY, PT_CTX_SYNC, PT_RELEASE };
static enum mode mode;
static prog_kernels k;
static CUstream s;
static CUevent ev;
static CUdeviceptr x, y, dummy;
static unsigned long long results[ITERATIONS];

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int launched = -1, read_done = -1;

static void wait_for(int *var, int value)
{
    pthread_mutex_lock(&mu);
    while (*var < value)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void post(int *var, int value)
{
    pthread_mutex_lock(&mu);
    *var = value;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void *producer(void *arg)
{
    (void)arg;
    prog_thread_init();
    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_mix(&k, s, y, 7, N);
        k_axpy(&k, s, x, y, 3, N);
        if (mode == EVENT_SYNC)
            CK(drv.cuEventRecord(ev, s));
        post(&launched, it);
        wait_for(&read_done, it);
        if (mode == PT_RELEASE && it % 5 == 4) {
            uint32_t host[N];
            CK(drv.cuStreamSynchronize(s));
            CK(drv.cuMemcpyDtoH(host, y, sizeof host));
            results[it] = prog_hash_buf(PROG_HASH_INIT, host, N);
        }
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    prog_thread_init();
    uint32_t host[N];
    for (int it = 0; it < ITERATIONS; it++) {
        wait_for(&launched, it);
        if (mode == PT_RELEASE) {
            CK(drv.cuMemsetD32(dummy, (unsigned)it, N));
            post(&read_done, it);
            continue;
        }
        if (mode == STREAM_SYNC)
            CK(drv.cuStreamSynchronize(s));
        else if (mode == EVENT_SYNC)
            CK(drv.cuEventSynchronize(ev));
        else if (mode == PT_CTX_SYNC)
            CK(drv.cuCtxSynchronize());
        CK(drv.cuMemcpyDtoH(host, y, sizeof host));
        results[it] = prog_hash_buf(PROG_HASH_INIT, host, N);
        post(&read_done, it);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "stream-sync"))
        mode = STREAM_SYNC;
    else if (argc == 2 && !strcmp(argv[1], "event-sync"))
        mode = EVENT_SYNC;
    else if (argc == 2 && !strcmp(argv[1], "memcpy"))
        mode = MEMCPY;
    else if (argc == 2 && !strcmp(argv[1], "per-thread-memcpy"))
        mode = PT_MEMCPY;
    else if (argc == 2 && !strcmp(argv[1], "per-thread-ctx-sync"))
        mode = PT_CTX_SYNC;
    else if (argc == 2 && !strcmp(argv[1], "per-thread-release"))
        mode = PT_RELEASE;
    else
        prog_die("usage: prog_cross_thread_sync stream-sync|event-sync|memcpy|per-thread-memcpy|per-thread-ctx-sync|"
                 "per-thread-release");
    prog_init();
    prog_kernels_load(&k, 0);
    if (mode == PT_MEMCPY || mode == PT_CTX_SYNC || mode == PT_RELEASE)
        s = CU_STREAM_PER_THREAD; /* each thread's own: main's for the set-up, A's in the loop */
    else
        s = prog_stream(mode == MEMCPY ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING);
    CK(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    x = prog_alloc(N);
    y = prog_alloc(N);
    dummy = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    CK(drv.cuStreamSynchronize(s));
    pthread_t a, b;
    if (pthread_create(&a, NULL, producer, NULL) || pthread_create(&b, NULL, reader, NULL))
        prog_die("pthread_create failed");
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (int it = 0; it < ITERATIONS; it++)
        printf("iteration %2d y %016llx\n", it, results[it]);
    prog_report_launches();
    return 0;
}
