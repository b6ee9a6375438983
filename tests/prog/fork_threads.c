/* A process forks again and again while another of its threads launches
 * through encore; each child makes a few CUDA calls and exits.
 *
 *   prog_fork_threads [forks (default 200)] [iterations of each worker (default 20000)]
 *
 * Each of four worker threads runs a hot loop on its own stream whose steps record an event, so that
 * encore replays graphs with event nodes: a launch there, a synchronise, an
 * event record all take its stream's lock inside encore. fork() copies that
 * lock as it is, held by a thread the child does not have. The child calls
 * cuEventDestroy (whose hook walked the stores of graphs with event nodes,
 * taking each one's stream lock), cuStreamSynchronize, a launch and
 * cuCtxSynchronize: in a forked child the driver refuses them at once, and
 * so must encore let them through, taking no lock of its own. A child that
 * hangs is killed by its timer; the parent counts them (0 without encore).
 * The worker's results are printed at the end: they must not change. */
#include "prog.h"

#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 16u
#define WORKERS 4

static prog_kernels k;
static uint64_t results[WORKERS][2];
static CUevent parent_event; /* made by the main thread: the child destroys it */
static int worker_iterations;
static int workers_started, workers_done;

static void *worker(void *arg) {
    int index = (int)(intptr_t)arg;
    prog_thread_init();
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    CUevent ev;
    CK(drv.cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    for (int it = 0; it < worker_iterations; it++) {
        k_mix(&k, s, x, 5, N);
        CK(drv.cuEventRecord(ev, s));
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        if (it % 64 == 63) CK(drv.cuStreamSynchronize(s));
        if (it == 100) __atomic_fetch_add(&workers_started, 1, __ATOMIC_RELEASE); /* graphs with event nodes exist */
    }
    __atomic_fetch_add(&workers_done, 1, __ATOMIC_RELEASE);
    k_reduce(&k, s, r, y, N);
    CK(drv.cuStreamSynchronize(s));
    results[index][0] = prog_hash_dev(s, x, N);
    results[index][1] = prog_hash_dev(s, y, N);
    CK(drv.cuEventDestroy(ev));
    return NULL;
}

/* The child: the parent's CUDA state is not its own; every call must return. */
static void child(void) {
    struct itimerval t = {.it_value = {.tv_usec = 300000}};
    setitimer(ITIMER_REAL, &t, NULL); /* SIGALRM's default action ends a child that hangs */
    drv.cuEventDestroy(parent_event);
    drv.cuStreamSynchronize(NULL);
    drv.cuLaunchKernel(k.nop, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
    drv.cuCtxSynchronize();
    _exit(0);
}

int main(int argc, char **argv) {
    int forks = argc > 1 ? atoi(argv[1]) : 200;
    worker_iterations = argc > 2 ? atoi(argv[2]) : 20000;
    prog_init();
    prog_kernels_load(&k, 0);
    CK(drv.cuEventCreate(&parent_event, CU_EVENT_DISABLE_TIMING));
    pthread_t w[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        if (pthread_create(&w[i], NULL, worker, (void *)(intptr_t)i) != 0) return 2;
    while (__atomic_load_n(&workers_started, __ATOMIC_ACQUIRE) < WORKERS) usleep(100);

    int hung = 0, failed = 0, made = 0;
    fflush(stdout);
    for (int i = 0; i < forks && !__atomic_load_n(&workers_done, __ATOMIC_ACQUIRE); i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) child();
        made++;
        int status = 0;
        if (waitpid(pid, &status, 0) != pid) {
            perror("waitpid");
            return 2;
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            hung++;
        else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed++;
        usleep(50 + 50 * (unsigned)(i % 7)); /* fork at other points of the worker's loop */
    }
    for (int i = 0; i < WORKERS; i++) pthread_join(w[i], NULL);
    for (int i = 0; i < WORKERS; i++)
        printf("worker %d: x %016llx y %016llx\n", i, (unsigned long long)results[i][0],
               (unsigned long long)results[i][1]);
    prog_report_launches();
    fprintf(stderr, "forks=%d\n", made); /* how many forked while the worker ran (run_diff: prog.forks) */
    printf("children that hung: %d, that failed otherwise: %d\n", hung, failed);
    CK(drv.cuEventDestroy(parent_event));
    return 0;
}
