/* A hot loop whose middle kernel takes the iteration number by value (a step
 * counter, as optimisers and random-number offsets do): every iteration
 * differs from the last in that one argument.
 *
 *   prog_step_arg [iterations (default 60)] [ring (default 0)]
 *
 * encore captures the sequence once and, each iteration, patches the new
 * step into its graph before replaying it (with ENCORE_PATCH=0 such
 * iterations run eagerly). The values depend on the step, so a replay with a
 * stale step changes the printed checksums.
 *
 * With ring > 0 every launch's pointers also change: iteration i works on
 * buffer pair i % ring (as a program cycling through a pool of activations
 * does), so every node of the graph is patched, every iteration.
 *
 * PROG_STEP_SYNC_EVERY=K: the host reads the result back only every K
 * iterations (and after the last), so that it runs ahead of the GPU. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>

#define N 1024u
#define RING_MAX 64

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 60;
    int ring = argc > 2 ? atoi(argv[2]) : 0;
    if (ring < 0 || ring > RING_MAX) ring = 0;
    const char *ev = getenv("PROG_STEP_SYNC_EVERY");
    int every = ev && atoi(ev) > 0 ? atoi(ev) : 1;
    prog_kernels k;
    CUdeviceptr x, y, r, xs[RING_MAX], ys[RING_MAX];
    CUstream s = prog_hot_setup(&k, N, &x, &y, &r);
    prog_ring_buffers(&k, s, N, ring, 7, xs, ys);

    for (int it = 0; it < iterations; it++) {
        if (ring) {
            x = xs[it % ring];
            y = ys[it % ring];
        }
        k_add(&k, s, y, x, N);
        k_stamp(&k, s, y, N);
        k_mix(&k, s, x, (uint32_t)it, N); /* the step */
        k_axpy(&k, s, x, y, 3, N);
        k_reduce(&k, s, r, y, N);
        if (it % every == every - 1 || it == iterations - 1) prog_print_reduce(s, r, "step", it);
    }
    prog_finish(s, x, y, N);
    return 0;
}
