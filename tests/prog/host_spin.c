/* A kernel increments a flag in host-mapped memory and the host spins on the
 * flag WITHOUT calling CUDA (as a host waiting for a GPU-side signal does).
 * If encore holds the flag's launch, only the flush deadline can issue it;
 * the program must still finish.
 *
 *   prog_host_spin end      hot sequence mix(x) add(y,x) flag_inc(f), spin, then sync
 *   prog_host_spin middle   hot sequence mix(x) flag_inc(f) [spin] add(y,x) mix(y):
 *                           the spin is in the middle of the sequence
 *   prog_host_spin middle-trial   the same, but the first half of the iterations do not spin
 *                           (encore learns, holds and replays, its deadline's thread starts);
 *                           then the program's switch turns trial blocks on (encoreSetActive(2)),
 *                           where ENCORE_TRIAL's settings hold, its ENCORE_FLUSH_DEADLINE too
 *
 * A spin that lasts more than 30 s ends the program with status 3. */
#include "prog.h"
#include "../bench/encore_switch.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N 512u
#define ITERATIONS 30

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void spin(volatile uint32_t *flag, uint32_t want, int it)
{
    double t0 = now();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != want) {
        if (now() - t0 > 30.0) {
            fprintf(stderr, "prog_host_spin: iteration %d: flag still %u after 30 s, wanted %u\n", it,
                    (unsigned)__atomic_load_n(flag, __ATOMIC_ACQUIRE), (unsigned)want);
            fflush(stdout);
            _Exit(3);
        }
        sched_yield();
    }
}

int main(int argc, char **argv)
{
    int trial = argc > 1 && !strcmp(argv[1], "middle-trial");
    int middle = trial || (argc > 1 && !strcmp(argv[1], "middle"));
    if (argc != 2 || (!middle && strcmp(argv[1], "end")))
        prog_die("usage: prog_host_spin end|middle|middle-trial");
    prog_init();
    encore_switch_fn sw = trial ? encore_switch_find() : NULL;
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    uint32_t *flag_host;
    CK(drv.cuMemHostAlloc((void **)&flag_host, sizeof(uint32_t), CU_MEMHOSTALLOC_DEVICEMAP));
    *flag_host = 0;
    CUdeviceptr flag, x = prog_alloc(N), y = prog_alloc(N);
    CK(drv.cuMemHostGetDevicePointer(&flag, flag_host, 0));
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    CK(drv.cuStreamSynchronize(s));

    for (int it = 0; it < ITERATIONS; it++) {
        k_mix(&k, s, x, 5, N);
        if (middle) {
            k_flag_inc(&k, s, flag);
            if (trial && it == ITERATIONS / 2 && encore_switch_set(sw, 2) != 0)
                prog_die("encoreSetActive failed");
            if (!trial || it >= ITERATIONS / 2)
                spin(flag_host, (uint32_t)it + 1, it);
            k_add(&k, s, y, x, N);
            k_mix(&k, s, y, 7, N);
        } else {
            k_add(&k, s, y, x, N);
            k_flag_inc(&k, s, flag);
            spin(flag_host, (uint32_t)it + 1, it);
        }
        unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N);
        printf("iteration %2d flag %u x %016llx y %016llx\n", it, (unsigned)*flag_host, hx, hy);
    }
    CK(drv.cuMemFreeHost(flag_host));
    prog_report_launches();
    return 0;
}
