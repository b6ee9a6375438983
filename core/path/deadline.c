/* encore: the flush deadline.
 *
 * A program that waits for the GPU by spinning on host memory makes no CUDA
 * call that would release what its streams hold. A helper thread, started at
 * the first hold, releases launches held longer than ENCORE_FLUSH_DEADLINE,
 * so such a program cannot hang. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "base/guard.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "policy/options.h"

#define MIN_NAP_NS 20000 /* the thread wakes at most every 20 us */

/* Release st's launches if they have been held longer than deadline_ns. */
static void release_if_late(enc_stream_state *st, uint64_t now, uint64_t deadline_ns) {
    if (!__atomic_load_n(&st->held, __ATOMIC_RELAXED)) return;
    /* not late yet: leave the mutex alone (a trylock takes its cache line from the launching thread) */
    if (now - __atomic_load_n(&st->held_since, __ATOMIC_RELAXED) < deadline_ns) return;
    if (enc_mutex_trylock(&st->mu) != 0) return;
    if (st->held && now - st->held_since >= deadline_ns) enc_release_at_flush_point(st, ENC_FLUSH_DEADLINE);
    enc_mutex_unlock(&st->mu);
}

/* Half the deadline, at least MIN_NAP_NS. */
static struct timespec nap_for(int64_t dl) {
    int64_t ns = dl / 2 > MIN_NAP_NS ? dl / 2 : MIN_NAP_NS;
    return (struct timespec){ns / 1000000000, ns % 1000000000};
}

static void *deadline_main(void *arg) {
    (void)arg;
    enc_guard_set_for_good(); /* everything this thread does is encore's own */
    for (;;) {
        /* read each round: ENCORE_TRIAL may switch the deadline in a benchmark's trial blocks */
        int64_t dl = enc_opt_get_i64(&enc_opt.flush_deadline) * 1000;
        struct timespec nap = nap_for(dl);
        nanosleep(&nap, NULL);
        if (!__atomic_load_n(&enc_hot.n_held, __ATOMIC_RELAXED)) continue;
        uint64_t now = enc_now_ns();
        int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
        for (int i = 0; i < n; i++) release_if_late(enc_states[i], now, (uint64_t)dl);
        enc_core_act_on_requests(); /* a release failed stickily: no lock held here */
    }
    return NULL;
}

static pthread_once_t deadline_once = PTHREAD_ONCE_INIT;

static void deadline_spawn(void) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* it takes no signal: the program's handlers run on the program's threads */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    /* started from a launch, with its stream's lock held: switch off later */
    if (pthread_create(&t, &a, deadline_main, NULL) != 0)
        enc_request_disable_why("could not start the flush-deadline thread");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
}

void enc_deadline_start(void) { pthread_once(&deadline_once, deadline_spawn); }
