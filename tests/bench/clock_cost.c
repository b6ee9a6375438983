/* What a clock read costs on this machine (encore reads CLOCK_MONOTONIC a few
 * times per held sequence: core/state/types.h enc_now_ns). In a VM whose clock
 * source the vDSO cannot read, each read is a system call.
 *
 *   cc -O2 -o clock_cost clock_cost.c && ./clock_cost
 * Output: RESULT clock=<name> ns_per_read=<f> */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>

static double ns_per_read(clockid_t c, long n) {
    struct timespec t0, t1, x;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) clock_gettime(c, &x);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n;
}

int main(void) {
    static const struct { clockid_t c; const char *name; } clocks[] = {
        {CLOCK_MONOTONIC, "monotonic"}, {CLOCK_MONOTONIC_COARSE, "monotonic_coarse"}, {CLOCK_MONOTONIC_RAW, "monotonic_raw"}};
    for (unsigned i = 0; i < sizeof clocks / sizeof clocks[0]; i++)
        printf("RESULT clock=%s ns_per_read=%.1f\n", clocks[i].name, ns_per_read(clocks[i].c, 2000000));
    return 0;
}
