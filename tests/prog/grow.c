/* Shapes that change every step (issue 30): a decoding loop whose working
 * length grows by one block of elements a step, as attention over a KV cache
 * that grows by a token. The kernels and their order stay the same; the grid
 * of three of them and their length argument grow. Every step prints a
 * checksum of what the grown kernels wrote, so a launch replayed with the
 * grid of an earlier step (fewer blocks: part of the data untouched) changes
 * the output.
 *
 *   grow     the length grows by PROG_BLOCK elements every step, wrapping at
 *            MAX_BLOCKS (a new sequence of lengths every MAX_BLOCKS steps)
 *   steps    the length takes a few values in turn (a serving loop with
 *            batch-size buckets): each comes again
 *
 *   prog_grow MODE [steps] */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKS 512u
#define N (MAX_BLOCKS * PROG_BLOCK)

static prog_kernels k;

static uint32_t length_at(const char *mode, int it) {
    if (!strcmp(mode, "steps")) {
        static const uint32_t buckets[] = {1, 2, 4, 8, 16, 32, 64};
        return buckets[(unsigned)it % (sizeof buckets / sizeof *buckets)] * PROG_BLOCK;
    }
    return (8u + (uint32_t)it % (MAX_BLOCKS - 8u)) * PROG_BLOCK;
}

static void loop(const char *mode, int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    for (int it = 0; it < steps; it++) {
        uint32_t n = length_at(mode, it);
        k_mix(&k, s, x, 5, N);     /* fixed shape */
        k_add(&k, s, y, x, n);     /* grid and length follow n */
        k_axpy(&k, s, x, y, 3, n); /* ... */
        k_stamp(&k, s, y, N);      /* fixed shape */
        k_add(&k, s, x, y, n);     /* ... */
        k_reduce(&k, s, r, x, N);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "grow";
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    if (strcmp(mode, "grow") && strcmp(mode, "steps")) {
        fprintf(stderr, "prog_grow: unknown mode %s\n", mode);
        return 2;
    }
    prog_init();
    prog_kernels_load(&k, 0);
    loop(mode, steps);
    return 0;
}
