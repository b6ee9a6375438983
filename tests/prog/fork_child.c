/* A process forks while encore holds launches back; the child makes a
 * device-wide CUDA call and exits.
 *
 *   prog_fork_child [iterations before the fork (default 10)]
 *
 * The parent runs the hot loop until encore replays it, launches the first
 * two kernels of the next iteration (held back by encore), then forks. The
 * child's cuCtxSynchronize must not issue or wait for the parent's held
 * launches (they belong to the parent; the driver's streams do not exist in
 * a forked child): without encore it returns at once, and so it must with
 * encore. A child that hangs is killed by alarm() and the parent says so.
 * The parent then finishes its iterations: its results must not change. */
#include "prog.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 1024u

static void iteration_tail(prog_kernels *k, CUstream s, CUdeviceptr x, CUdeviceptr y, CUdeviceptr r, int it)
{
    k_stamp(k, s, y, N);
    k_axpy(k, s, x, y, 3, N);
    k_reduce(k, s, r, y, N);
    prog_print_reduce(s, r, "iteration", it);
}

int main(int argc, char **argv)
{
    int before = argc > 1 ? atoi(argv[1]) : 10;
    prog_kernels k;
    CUdeviceptr x, y, r;
    CUstream s = prog_hot_setup(&k, N, &x, &y, &r);

    for (int it = 0; it < before; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        iteration_tail(&k, s, x, y, r, it);
    }
    /* the next iteration's first two launches: encore holds them back */
    k_mix(&k, s, x, 5, N);
    k_add(&k, s, y, x, N);

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 2;
    }
    if (pid == 0) {
        alarm(10);
        CUresult rc = drv.cuCtxSynchronize();
        printf("child: cuCtxSynchronize returned %s\n", rc == CUDA_SUCCESS ? "success" : "an error");
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        perror("waitpid");
        return 2;
    }
    if (WIFSIGNALED(status))
        printf("child: killed by signal %d%s\n", WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
    else
        printf("child: exited with status %d\n", WEXITSTATUS(status));

    iteration_tail(&k, s, x, y, r, before);
    for (int it = before + 1; it < before + 5; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        iteration_tail(&k, s, x, y, r, it);
    }
    prog_finish(s, x, y, N);
    return 0;
}
