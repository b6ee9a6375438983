/* A stream whose launches never repeat rests (core/streams/rest.c): after its first
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
 *   prog_rest renew STEPS LOOP
 *                            "never" until the stream rests, then the stream
 *                            is destroyed and a new one made (its handle may
 *                            be the old one's): LOOP fixed steps on it are
 *                            learnt and replayed at once, nothing of the
 *                            old stream's rest carries over
 *   prog_rest churn STEPS STREAMS
 *                            "never" on STREAMS streams one after another,
 *                            STEPS steps each (a stream made for each
 *                            request, destroyed after it): none lives long
 *                            enough to finish a window, and after a few the
 *                            process backs off: new streams begin resting
 *   prog_rest legacy STEPS   "never" on a blocking stream, and before each
 *                            step the fixed loop on the legacy stream, which
 *                            reads the blocking stream's x into its own z:
 *                            the legacy stream's loop is held when the
 *                            resting stream launches, and must run first
 *                            (legacy-stream implicit synchronisation)
 *   prog_rest threads STEPS  two threads, each "never" on a stream and
 *                            buffers of its own, at once: their streams rest
 *                            (and pass launches through without a lock)
 *                            while the other thread's launches come
 * Every launch's result feeds the next, and each step's x is hashed and
 * folded into the printed value (every 64 steps), so a launch that ran out
 * of order, twice or not at all changes the output. */
#include "prog.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 512u
#define SEED 0x9e3779b97f4a7c15ull

typedef struct run {
    prog_kernels *k;
    CUstream s;
    CUdeviceptr x, y;
    uint64_t rng, folded;
    int steps, loop, lng, iters, later, renew, legacy, churn, id;
    char out[64][48]; /* threads: lines kept until both end, printed in order */
    int nout;
} run;

static uint64_t next(run *r) {
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return r->rng * 0x2545f4914f6cdd1dull;
}

static void random_step(run *r) {
    for (int i = 0; i < 16; i++) {
        uint64_t v = next(r);
        uint32_t n = 64u << ((v >> 20) % 4); /* 64..512: 1 to 4 blocks */
        switch ((v >> 40) % 3) {
        case 0: k_mix(r->k, r->s, r->x, (uint32_t)v, n); break;
        case 1: k_add(r->k, r->s, r->x, r->y, n); break;
        default: k_stamp(r->k, r->s, r->y, n); break;
        }
    }
}

static void fixed_step(run *r) {
    for (int i = 0; i < 8; i++) {
        k_mix(r->k, r->s, r->x, (uint32_t)i, N);
        k_add(r->k, r->s, r->y, r->x, N);
    }
}

/* A stream (non-blocking, but for legacy) and two buffers of its own, filled. */
static void setup(run *r, prog_kernels *k, int id, unsigned flags) {
    r->k = k;
    r->id = id;
    r->rng = SEED + (uint64_t)id;
    r->s = prog_stream(flags);
    r->x = prog_alloc(N);
    r->y = prog_alloc(N);
    k_fill(k, r->s, r->x, 1 + (uint32_t)id, N);
    k_fill(k, r->s, r->y, 2 + (uint32_t)id, N);
}

static void note(run *r, const char *what, int step, uint64_t v) {
    if (r->nout < 64)
        snprintf(r->out[r->nout++], sizeof r->out[0], "%s%d %5d %016llx", what, r->id, step, (unsigned long long)v);
}

/* legacy: the legacy stream's loop, which reads x (written by r->s) into z. */
static void legacy_step(run *r, CUdeviceptr z) {
    for (int i = 0; i < 8; i++) {
        k_mix(r->k, NULL, z, (uint32_t)i, N);
        k_add(r->k, NULL, z, r->x, N);
    }
}

static void go(run *r) {
    int total = r->lng || r->churn ? r->steps * r->iters : r->steps + (r->later ? r->loop : 0);
    CUdeviceptr z = r->legacy ? prog_alloc(N) : 0;
    if (z) k_fill(r->k, NULL, z, 3, N);
    for (int it = 0; it < total; it++) {
        if (r->lng && it % r->steps == 0) r->rng = SEED; /* the body again */
        if (r->renew && it == r->steps) {                /* the rested stream goes, a new one comes */
            CK(drv.cuStreamSynchronize(r->s));
            CK(drv.cuStreamDestroy(r->s));
            r->s = prog_stream(CU_STREAM_NON_BLOCKING);
        }
        if (r->churn && it && it % r->steps == 0) { /* the request is over: its stream goes, the next one's comes */
            CK(drv.cuStreamSynchronize(r->s));
            CK(drv.cuStreamDestroy(r->s));
            r->s = prog_stream(CU_STREAM_NON_BLOCKING);
        }
        if (r->legacy) legacy_step(r, z);
        if (r->lng || r->churn || it < r->steps)
            random_step(r);
        else
            fixed_step(r);
        r->folded = r->folded * 31 + prog_hash_dev(r->s, r->x, N);
        if (r->legacy && it % 64 == 63) r->folded = r->folded * 31 + prog_hash_dev(NULL, z, N);
        if (it % 64 == 63) note(r, "x", it, r->folded);
    }
    note(r, "y", total, prog_hash_dev(r->s, r->y, N));
}

static void *thread_main(void *arg) {
    prog_thread_init();
    go((run *)arg);
    return NULL;
}

static void print(const run *r) {
    for (int i = 0; i < r->nout; i++) printf("%s\n", r->out[i]);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    int steps = argc > 2 ? atoi(argv[2]) : 0, more = argc > 3 ? atoi(argv[3]) : 0;
    int later = !strcmp(mode, "later"), lng = !strcmp(mode, "long"), threads = !strcmp(mode, "threads");
    int renew = !strcmp(mode, "renew"), legacy = !strcmp(mode, "legacy"), churn = !strcmp(mode, "churn");
    if ((!later && !lng && !threads && !renew && !legacy && !churn && strcmp(mode, "never")) || steps <= 0 ||
        ((lng || renew || churn) && more <= 0))
        prog_die("usage: prog_rest never STEPS | later STEPS [LOOP] | long STEPS ITER | threads STEPS | "
                 "renew STEPS LOOP | legacy STEPS | churn STEPS STREAMS");
    prog_init();
    prog_kernels k;
    prog_kernels_load(&k, 0);
    static run r[2];
    for (int i = 0; i < (threads ? 2 : 1); i++) {
        setup(&r[i], &k, i, legacy ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING);
        r[i].steps = steps;
        r[i].later = later || renew;
        r[i].renew = renew;
        r[i].legacy = legacy;
        r[i].loop = more ? more : steps;
        r[i].lng = lng;
        r[i].churn = churn;
        r[i].iters = more;
    }
    if (threads) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, &r[1]) != 0) prog_die("pthread_create failed");
        go(&r[0]);
        pthread_join(t, NULL);
        print(&r[1]);
    } else {
        go(&r[0]);
    }
    print(&r[0]);
    prog_report_launches();
    return 0;
}
