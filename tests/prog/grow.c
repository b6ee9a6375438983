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
 *   grow-on  the grid grows by one block every step and never comes back;
 *            the length follows it up to MAX_BLOCKS, then the blocks past it
 *            find nothing to do (a kernel launched over a cache's whole
 *            reserved length): no configuration is ever seen twice
 *   steps    the length takes a few values in turn (a serving loop with
 *            batch-size buckets): each comes again
 *   serve    a serving loop: each request brings 1..64 blocks of input
 *            (a seeded draw), copied in from page-locked host memory, its
 *            answer's rows set by a memset, both run through the kernels
 *            and the answer copied back (the sizes of both copies and of
 *            the memset follow the request), then read by the host
 *   serve-kernels  the same, with kernels chosen by the request's size, as
 *            a BLAS library chooses its matrix product by shape: they
 *            change at 16 and at 40 blocks (three paths)
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

/* Step it's grid (blocks), and its length in *n. */
static unsigned grid_at(const char *mode, int it, uint32_t *n) {
    if (!strcmp(mode, "grow-on")) { /* the grid grows on; the length stops at the buffer's */
        unsigned grid = 8u + (unsigned)it;
        *n = grid < MAX_BLOCKS ? grid * PROG_BLOCK : N;
        return grid;
    }
    *n = length_at(mode, it);
    return PROG_GRID(*n);
}

/* k_add and k_axpy with a grid of their own (at least the length's). */
static void add_on(CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t n, unsigned grid) {
    void *p[] = {&dst, &src, &n};
    prog_launch(k.add, grid, PROG_BLOCK, 0, s, p);
}

static void axpy_on(CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t a, uint32_t n, unsigned grid) {
    void *p[] = {&dst, &src, &a, &n};
    prog_launch(k.axpy, grid, PROG_BLOCK, 0, s, p);
}

static void loop(const char *mode, int steps) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    for (int it = 0; it < steps; it++) {
        uint32_t n;
        unsigned grid = grid_at(mode, it, &n);
        k_mix(&k, s, x, 5, N);        /* fixed shape */
        add_on(s, y, x, n, grid);     /* grid and length follow the step */
        axpy_on(s, x, y, 3, n, grid); /* ... */
        k_stamp(&k, s, y, N);         /* fixed shape */
        add_on(s, x, y, n, grid);     /* ... */
        k_reduce(&k, s, r, x, N);
        prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
}

static void serve(int steps, int by_size) {
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x, y, r;
    prog_hot_buffers(&k, s, N, &x, &y, &r);
    uint32_t *in, *out;
    CK(drv.cuMemHostAlloc((void **)&in, 64 * PROG_BLOCK * sizeof *in, 0));
    CK(drv.cuMemHostAlloc((void **)&out, 64 * PROG_BLOCK * sizeof *out, 0));
    uint64_t rng = 1234;
    for (int it = 0; it < steps; it++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t n = (1u + (uint32_t)(rng >> 33) % 64u) * PROG_BLOCK;
        for (uint32_t i = 0; i < n; i++) in[i] = (uint32_t)it * 2654435761u + i;
        CK(drv.cuMemcpyHtoDAsync(x, in, n * sizeof *in, s)); /* the request's rows */
        CK(drv.cuMemsetD32Async(y, (uint32_t)it, n, s));     /* its answer's rows, cleared */
        k_add(&k, s, y, x, n);
        if (by_size && n > 16 * PROG_BLOCK)
            k_mix(&k, s, x, 3, n);
        else
            k_axpy(&k, s, x, y, 3, n);
        k_stamp(&k, s, y, n);
        if (by_size && n > 40 * PROG_BLOCK) k_add(&k, s, y, x, n);
        CK(drv.cuMemcpyDtoHAsync(out, y, n * sizeof *out, s)); /* the answer */
        CK(drv.cuStreamSynchronize(s));
        printf("request %3d rows %4u answer %016llx\n", it, n,
               (unsigned long long)prog_hash_buf(PROG_HASH_INIT, out, n));
    }
    CK(drv.cuMemFreeHost(in));
    CK(drv.cuMemFreeHost(out));
    prog_finish(s, x, y, N);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "grow";
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    if (strcmp(mode, "grow") && strcmp(mode, "grow-on") && strcmp(mode, "steps") && strcmp(mode, "serve") &&
        strcmp(mode, "serve-kernels")) {
        fprintf(stderr, "prog_grow: unknown mode %s\n", mode);
        return 2;
    }
    prog_init();
    prog_kernels_load(&k, 0);
    if (!strncmp(mode, "serve", 5))
        serve(steps, !strcmp(mode, "serve-kernels"));
    else
        loop(mode, steps);
    return 0;
}
