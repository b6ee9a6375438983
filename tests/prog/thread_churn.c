/* Thousands of short-lived host threads, each launching a short hot sequence
 * on its own per-thread default stream (CU_STREAM_PER_THREAD) and exiting.
 * encore keeps a state per stream it sees; a per-thread stream's state must
 * be reclaimed when its thread exits, so memory stays bounded (the program
 * reports its RSS) and a new thread's launches never fall back to flushing
 * everything for want of a state.
 *
 * With "exit-held", each thread launches the sequence once more and exits
 * without waiting for it (encore holds it then: reclaiming the thread's state
 * must issue it); the main thread synchronises and prints every thread's y.
 *
 *   prog_thread_churn [threads (default 4300)] [at once (default 4)] [exit-held] */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256u
#define REPEATS 5

static prog_kernels k;
static CUdeviceptr xs, ys;
static unsigned long long *results;
static int exit_held;

static void *worker(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    prog_thread_init();
    CUstream s = CU_STREAM_PER_THREAD;
    CUdeviceptr x = xs + t * N * sizeof(uint32_t), y = ys + t * N * sizeof(uint32_t);
    k_fill(&k, s, x, (uint32_t)t, N);
    k_fill(&k, s, y, (uint32_t)t * 3u, N);
    uint32_t host[N];
    unsigned long long h = PROG_HASH_INIT;
    for (int r = 0; r < REPEATS; r++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        CK(drv.cuMemcpyDtoHAsync(host, y, sizeof host, s));
        CK(drv.cuStreamSynchronize(s));
        h = prog_hash_buf(h, host, N);
    }
    results[t] = h;
    if (exit_held) { /* once more, and exit with it in flight */
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4300, at_once = argc > 2 ? atoi(argv[2]) : 4;
    exit_held = argc > 3 && strcmp(argv[3], "exit-held") == 0;
    if (threads < 1 || at_once < 1 || (argc > 3 && !exit_held))
        prog_die("usage: prog_thread_churn [threads] [at once] [exit-held]");
    prog_init();
    prog_kernels_load(&k, 0);
    CK(drv.cuMemAlloc(&xs, (size_t)threads * N * sizeof(uint32_t)));
    CK(drv.cuMemAlloc(&ys, (size_t)threads * N * sizeof(uint32_t)));
    results = calloc((size_t)threads, sizeof *results);
    pthread_t *th = calloc((size_t)at_once, sizeof *th);
    if (!results || !th)
        prog_die("out of memory");
    for (int t0 = 0; t0 < threads; t0 += at_once) {
        int n = threads - t0 < at_once ? threads - t0 : at_once;
        for (int i = 0; i < n; i++)
            if (pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)(t0 + i)))
                prog_die("pthread_create failed");
        for (int i = 0; i < n; i++)
            pthread_join(th[i], NULL);
    }
    unsigned long long h = PROG_HASH_INIT;
    for (int t = 0; t < threads; t++) {
        h = prog_hash_u64(h, results[t]);
        if (t % 500 == 0)
            printf("thread %4d %016llx\n", t, results[t]);
    }
    printf("threads %d all %016llx\n", threads, h);
    if (exit_held) {
        CK(drv.cuCtxSynchronize());
        size_t bytes = (size_t)threads * N * sizeof(uint32_t);
        uint32_t *all = malloc(bytes);
        if (!all)
            prog_die("out of memory");
        CK(drv.cuMemcpyDtoH(all, ys, bytes));
        for (int t = 0; t < threads; t++)
            if (t % 50 == 0 || t == threads - 1)
                printf("thread %4d y after exit %016llx\n", t,
                       (unsigned long long)prog_hash_buf(PROG_HASH_INIT, all + (size_t)t * N, N));
        printf("every y after exit %016llx\n", (unsigned long long)prog_hash_buf(PROG_HASH_INIT, all, (uint32_t)(bytes / 4)));
        free(all);
    }
    prog_report_launches();
    prog_report_rss();
    return 0;
}
