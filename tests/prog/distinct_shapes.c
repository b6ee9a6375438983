/* A server-like loop: every request has a new shape (here a new grid size),
 * and each shape's launch sequence repeats a few times (captured, replayed)
 * and never again. Graphs are evicted (ENCORE_MAX_GRAPHS), and what encore
 * keeps to find them (the trie of sequences) must be reclaimed with them:
 * memory and the number of live executable graphs stay bounded (the program
 * reports its RSS, the simulator its live executable graphs).
 *
 *   prog_distinct_shapes [shapes (default 10000)] [repeats (default 3)] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 512u

int main(int argc, char **argv)
{
    int shapes = argc > 1 ? atoi(argv[1]) : 10000, repeats = argc > 2 ? atoi(argv[2]) : 3;
    prog_init();
    prog_kernels k;
    CUdeviceptr x, y;
    CUstream s = prog_stream_xy(&k, N, &x, &y);
    uint32_t host[N], n = N, salt = 5;
    void *pm[] = {&x, &salt, &n}, *ps[] = {&y, &n}, *pa[] = {&y, &x, &n};
    unsigned long long all = PROG_HASH_INIT;
    for (int i = 0; i < shapes; i++) {
        unsigned grid = 8u + (unsigned)i; /* a new shape per request */
        for (int r = 0; r < repeats; r++) {
            prog_launch(k.mix, grid, PROG_BLOCK, 0, s, pm);
            prog_launch(k.stamp, grid, PROG_BLOCK, 0, s, ps);
            prog_launch(k.add, grid, PROG_BLOCK, 0, s, pa);
            CK(drv.cuMemcpyDtoHAsync(host, y, sizeof host, s));
            CK(drv.cuStreamSynchronize(s));
            all = prog_hash_buf(all, host, N);
        }
        if (i % 1000 == 0)
            printf("shape %5d %016llx\n", i, all);
    }
    printf("shapes %d all %016llx\n", shapes, all);
    prog_report_launches();
    prog_report_rss();
    return 0;
}
