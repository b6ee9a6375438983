/* Hold only where holding pays (core/graphs/hold.c): a sequence that was captured
 * and then diverges at its last launch every iteration (a step counter
 * there) is held to its end and released eagerly each time, so encore gives
 * up holding at its start after a few such holds.
 *
 *   prog_hold_rule MODE [iterations (default 200)]
 *
 * Sequence A: add(y, x) stamp(y) axpy(x, y, 3) mix(x, salt); then x is
 * copied back (a flush point). Its first WARMUP iterations use salt 0 (A is
 * captured and replays), then:
 *   diverge    salt = the iteration: every hold of A diverges at its end
 *   never      salt = the iteration + 1 from the first iteration on: A never
 *              repeats as a whole
 *   later      salt = the iteration for `iterations`, then salt 0 again for
 *              as many: the graph of A matches again, and the back-off's
 *              next try finds it
 *   new-graph  the same, but salt 1 from then on: a new graph of A is
 *              captured, and holding at A's start is tried again at once
 *   mostly     salt = the iteration in two iterations of three, else 0:
 *              never 4 failed holds in a row, but only one in three replays
 *   beside     salt = the iteration, and after each A, on the same stream,
 *              sequence B: copy(y, x) add(x, y) mix(y, 3), the same every
 *              iteration (then y is copied back): B keeps replaying
 * The values depend on every launch, so a replay of a stale graph changes
 * the printed checksums. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024u
#define WARMUP 4

static void sequence_a(const prog_kernels *k, CUstream s, CUdeviceptr x, CUdeviceptr y, uint32_t salt) {
    k_add(k, s, y, x, N);
    k_stamp(k, s, y, N);
    k_axpy(k, s, x, y, 3, N);
    k_mix(k, s, x, salt, N);
}

static void sequence_b(const prog_kernels *k, CUstream s, CUdeviceptr x, CUdeviceptr y) {
    k_copy(k, s, y, x, N);
    k_add(k, s, x, y, N);
    k_mix(k, s, y, 3, N);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int iterations = argc > 2 ? atoi(argv[2]) : 200;
    int diverge = !strcmp(mode, "diverge"), later = !strcmp(mode, "later"), new_graph = !strcmp(mode, "new-graph"),
        beside = !strcmp(mode, "beside"), mostly = !strcmp(mode, "mostly"), never = !strcmp(mode, "never");
    if (!diverge && !later && !new_graph && !beside && !mostly && !never)
        prog_die("usage: prog_hold_rule diverge|never|later|new-graph|mostly|beside [iterations]");
    prog_init();
    prog_kernels k;
    CUdeviceptr x, y;
    CUstream s = prog_stream_xy(&k, N, &x, &y);

    int total = WARMUP + iterations * (later || new_graph ? 2 : 1);
    for (int it = 0; it < total; it++) {
        uint32_t salt = (uint32_t)it;
        if (never)
            salt = (uint32_t)it + 1;
        else if (it < WARMUP)
            salt = 0;
        else if (it >= WARMUP + iterations)
            salt = later ? 0 : 1;
        else if (mostly && it % 3 == 0)
            salt = 0;
        sequence_a(&k, s, x, y, salt);
        unsigned long long hx = prog_hash_dev(s, x, N);
        printf("iteration %3d salt %3u x %016llx", it, salt, hx);
        if (beside) {
            sequence_b(&k, s, x, y);
            printf(" y %016llx", (unsigned long long)prog_hash_dev(s, y, N));
        }
        printf("\n");
    }
    prog_report_launches();
    return 0;
}
