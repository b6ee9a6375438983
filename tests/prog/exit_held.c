/* The program ends while encore holds launches: a hot loop whose last
 * iteration is launched and never synchronised, then main returns. The
 * driver tears itself down at exit (the simulated driver does so from an
 * exit handler registered at cuInit, i.e. before a preloaded library's
 * handler runs). encore must issue what it holds before that teardown, or
 * issue nothing the driver can no longer take: it must neither hang nor
 * crash at exit, and every launch must run as without encore (the
 * simulator's kernel count, made after its teardown drained the work, is
 * compared).
 *
 *   prog_exit_held [iterations] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 512u

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a hang under encore still shows how far the program got */
    int iterations = argc > 1 ? atoi(argv[1]) : 20;
    prog_kernels k;
    CUdeviceptr x, y, r;
    CUstream s = prog_hot_setup(&k, N, &x, &y, &r);
    for (int it = 0; it < iterations; it++) {
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, y, N);
        if (it < iterations - 1)
            prog_print_reduce(s, r, "iteration", it);
    }
    printf("returning with the last iteration in flight\n");
    prog_report_launches();
    return 0;
}
