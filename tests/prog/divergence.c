/* A hot five-launch sequence that, in a few iterations, differs from the hot
 * one at one position: the first, the middle or the last launch. encore must
 * notice the difference (another kernel, another launch configuration, or
 * other argument bytes) and issue what it held eagerly, in the original
 * order, and go on replaying the hot sequence afterwards.
 *
 *   prog_divergence first|middle|last kernel|config|args
 *
 * Hot sequence (position: launch; same-signature replacement for "kernel";
 * what changes for "args"):
 *   0 first:  mix(x, 5)      fill(x, 5)    salt 5 -> 6
 *   1:        add(y, x)
 *   2 middle: mix(y, 7)      fill(y, 7)    salt 7 -> 8
 *   3:        axpy(x, y, 3)
 *   4 last:   add(x, y, n)   copy(x, y, n) n -> n/2
 * "config" launches the position with half the threads per block (its
 * structure; a grid that changes is patched like an argument: prog_grow). */
#include "prog.h"

#include <stdio.h>
#include <string.h>

#define N 1024u
#define ITERATIONS 40

static int odd_iteration(int it)
{
    return it == 10 || it == 11 || it == 20 || it == 30;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        prog_die("usage: prog_divergence first|middle|last kernel|config|args");
    int pos = !strcmp(argv[1], "first") ? 0 : !strcmp(argv[1], "middle") ? 2 : !strcmp(argv[1], "last") ? 4 : -1;
    const char *kind = argv[2];
    if (pos < 0 || (strcmp(kind, "kernel") && strcmp(kind, "config") && strcmp(kind, "args")))
        prog_die("usage: prog_divergence first|middle|last kernel|config|args");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, s, x, 100, N);
    k_fill(&k, s, y, 200, N);

    for (int it = 0; it < ITERATIONS; it++) {
        int odd = odd_iteration(it);
        for (int p = 0; p < 5; p++) {
            int here = odd && p == pos;
            int other_kernel = here && !strcmp(kind, "kernel");
            unsigned grid = PROG_GRID(N), block = here && !strcmp(kind, "config") ? PROG_BLOCK / 2 : PROG_BLOCK;
            int other_args = here && !strcmp(kind, "args");
            uint32_t n = N, a = 3, salt;
            void *p2[] = {&x, &y, &a, &n};
            switch (p) {
            case 0:
                salt = other_args ? 6 : 5;
                prog_launch(other_kernel ? k.fill : k.mix, grid, block, 0, s, (void *[]){&x, &salt, &n});
                break;
            case 1:
                prog_launch(k.add, grid, block, 0, s, (void *[]){&y, &x, &n});
                break;
            case 2:
                salt = other_args ? 8 : 7;
                prog_launch(other_kernel ? k.fill : k.mix, grid, block, 0, s, (void *[]){&y, &salt, &n});
                break;
            case 3:
                prog_launch(k.axpy, grid, block, 0, s, p2);
                break;
            case 4:
                n = other_args ? N / 2 : N;
                prog_launch(other_kernel ? k.copy : k.add, grid, block, 0, s, (void *[]){&x, &y, &n});
                break;
            }
        }
        unsigned long long hx = prog_hash_dev(s, x, N), hy = prog_hash_dev(s, y, N);
        printf("iteration %2d%s x %016llx y %016llx\n", it, odd ? " (differs)" : "", hx, hy);
    }
    prog_report_launches();
    return 0;
}
