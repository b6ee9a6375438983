/* A stream whose launches never repeat rests (core/rest.c): after its first
 * 16,384 launches replayed nothing and almost none of its sequences had come
 * before, its launches pass through unrecorded; a loop that starts later is
 * picked up when the rest ends (a probe window).
 *
 *   prog_rest never STEPS    STEPS steps of 16 launches and a copy back (the
 *                            step's flush point); each launch's kernel (mix,
 *                            add or stamp) and size (64 to 512 elements, 1 to
 *                            4 blocks) come from a generator that never
 *                            returns to a state: no sequence ever repeats
 *   prog_rest later STEPS [LOOP]
 *                            the same, then LOOP (default STEPS) steps of one
 *                            fixed loop of 16 launches: it replays once the
 *                            stream's rest is over
 *   prog_rest long STEPS ITER
 *                            ITER iterations of a loop whose body is STEPS
 *                            random steps, the same ones every iteration
 *                            (the generator starts afresh): a body longer
 *                            than the first window, still being learnt there
 * Every launch's result feeds the next, and each step's x is hashed and
 * folded into the printed value (every 64 steps), so a launch that ran out
 * of order, twice or not at all changes the output. */
#include "prog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 512u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static void random_step(const prog_kernels *k, CUstream s, CUdeviceptr x, CUdeviceptr y) {
    for (int i = 0; i < 16; i++) {
        uint64_t r = next();
        uint32_t n = 64u << ((r >> 20) % 4); /* 64..512: 1 to 4 blocks */
        switch ((r >> 40) % 3) {
        case 0: k_mix(k, s, x, (uint32_t)r, n); break;
        case 1: k_add(k, s, x, y, n); break;
        default: k_stamp(k, s, y, n); break;
        }
    }
}

static void fixed_step(const prog_kernels *k, CUstream s, CUdeviceptr x, CUdeviceptr y) {
    for (int i = 0; i < 8; i++) {
        k_mix(k, s, x, (uint32_t)i, N);
        k_add(k, s, y, x, N);
    }
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int steps = argc > 2 ? atoi(argv[2]) : 0;
    int later = !strcmp(mode, "later");
    int loop = argc > 3 ? atoi(argv[3]) : steps;
    int lng = !strcmp(mode, "long"), iters = lng ? loop : 1;
    if ((!later && !lng && strcmp(mode, "never")) || steps <= 0)
        prog_die("usage: prog_rest never STEPS | later STEPS [LOOP] | long STEPS ITER");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    CUdeviceptr x = prog_alloc(N), y = prog_alloc(N);
    k_fill(&k, s, x, 1, N);
    k_fill(&k, s, y, 2, N);
    uint64_t folded = 0;
    int total = lng ? steps * iters : steps + (later ? loop : 0);
    for (int it = 0; it < total; it++) {
        if (lng && it % steps == 0) rng = 0x9e3779b97f4a7c15ull; /* the body again */
        if (lng || it < steps)
            random_step(&k, s, x, y);
        else
            fixed_step(&k, s, x, y);
        folded = folded * 31 + prog_hash_dev(s, x, N);
        if (it % 64 == 63) printf("step %5d x %016llx\n", it, (unsigned long long)folded);
    }
    printf("y %016llx\n", (unsigned long long)prog_hash_dev(s, y, N));
    prog_report_launches();
    return 0;
}
