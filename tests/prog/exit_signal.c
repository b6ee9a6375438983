/* A signal handler calls exit() while the main thread launches through
 * encore.
 *
 *   prog_exit_signal [processes (default 20)]
 *
 * The program starts the given number of processes of itself (argument
 * "child"), one after the other. Each sets a timer and launches in a tight
 * loop; the timer's SIGALRM handler calls exit(0), as timeout and SIGTERM
 * handlers of training scripts do. exit() is not async-signal-safe, but
 * the process must still end: encore's exit handler runs on the thread it
 * interrupted, often inside encore's launch path with a stream's lock held,
 * and must neither wait for that lock nor for anything else. A process
 * still alive after 5 s is killed and counted as hung (0 without encore).
 * The parent then runs a short hot loop of its own (its results are
 * compared, as in every test). */
#define _GNU_SOURCE
#include "prog.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 16u

extern char **environ;

static void on_alarm(int sig) {
    (void)sig;
    exit(0);
}

__attribute__((noreturn)) static void child(int index) {
    prog_kernels k;
    CUdeviceptr x, y, r;
    CUstream s = prog_hot_setup(&k, N, &x, &y, &r);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    /* the signal comes at another point of the loop in each process */
    struct itimerval t = {.it_value = {.tv_usec = 5000 + 500 * (index % 11)}};
    setitimer(ITIMER_REAL, &t, NULL);
    for (;;) { /* no synchronisation: the thread is in encore's launch path most of the time */
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
    }
}

/* The environment without SIMCUDA_STATS: the children's statistics would mix with the parent's. */
static char **child_env(void) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 1, sizeof *env);
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "SIMCUDA_STATS=", 14) != 0) env[j++] = environ[i];
    return env;
}

/* 1 if the process ended within 5 s (*failed: not with status 0), else kill it and return 0. */
static int reaped(pid_t pid, int *failed) {
    struct timespec nap = {0, 5000000};
    for (int i = 0; i < 1000; i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            *failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            return 1;
        }
        nanosleep(&nap, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "child") == 0) child(atoi(argv[2]));
    int processes = argc > 1 ? atoi(argv[1]) : 20;
    char **env = child_env();
    int hung = 0, failed = 0;
    for (int i = 0; i < processes; i++) {
        char index[16];
        snprintf(index, sizeof index, "%d", i);
        char *args[] = {argv[0], "child", index, NULL};
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            execve("/proc/self/exe", args, env);
            _exit(127);
        }
        if (!reaped(pid, &failed)) hung++;
    }
    printf("processes that hung at exit: %d of %d, that failed: %d\n", hung, processes, failed);

    prog_kernels k;
    CUdeviceptr x, y, r;
    CUstream s = prog_hot_setup(&k, N, &x, &y, &r);
    for (int it = 0; it < 10; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_reduce(&k, s, r, y, N);
        prog_print_reduce(s, r, "iteration", it);
    }
    prog_finish(s, x, y, N);
    return 0;
}
