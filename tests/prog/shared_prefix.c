/* Two hot sequences on one stream that begin alike, chosen in a fixed
 * pseudo-random order. encore must capture both and replay, each time, the
 * one the program actually issues.
 *
 *   prog_shared_prefix branch   P = mix(x) add(y,x) mix(y) add(x,y)
 *                               Q = mix(x) add(y,x) copy(z,y) stamp(z)   (common prefix of 2)
 *   prog_shared_prefix extend   P = mix(x) add(y,x) mix(y)
 *                               Q = mix(x) add(y,x) mix(y) stamp(z)      (P is a prefix of Q)
 *
 * In "extend", a held P is complete before it is known whether Q's last
 * launch follows: only the flush point (the copy back) tells. */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 512u
#define ITERATIONS 80

int main(int argc, char **argv)
{
    int extend = argc > 1 && !strcmp(argv[1], "extend");
    if (argc != 2 || (!extend && strcmp(argv[1], "branch")))
        prog_die("usage: prog_shared_prefix branch|extend");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N), z = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    k_fill(&k, s, z, 3, N);

    uint32_t lcg = 12345;
    for (int it = 0; it < ITERATIONS; it++) {
        lcg = lcg * 1103515245u + 12345u;
        int q = (lcg >> 16) & 1;
        k_mix(&k, s, x, 5, N);
        k_add(&k, s, y, x, N);
        if (extend) {
            k_mix(&k, s, y, 7, N);
            if (q)
                k_stamp(&k, s, z, N);
        } else if (q) {
            k_copy(&k, s, z, y, N);
            k_stamp(&k, s, z, N);
        } else {
            k_mix(&k, s, y, 7, N);
            k_add(&k, s, x, y, N);
        }
        unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N), hz = prog_hash_dev(s, z, N);
        printf("iteration %2d %c x %016llx y %016llx z %016llx\n", it, q ? 'Q' : 'P', hx, hy, hz);
    }
    prog_report_launches();
    return 0;
}
