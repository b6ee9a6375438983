/* encore: what every floor of the engine reads: whether encore is on, the
 * test-only audit hooks, the table of stream states, this thread's id, and
 * the gate of encore's own driver calls while the program captures (the
 * count is raised and lowered by core/path/prog_capture.c, whose opening
 * comment tells the rule). Defined here, at the bottom of the engine, so
 * that the floors above read them without calling up. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/driver.h"
#include "base/guard.h"
#include "core/state/gate.h"

enc_hot_state enc_hot = {.ctx_gen = 1, .func_attr_gen = 1};
void (*enc_audit_enter)(void);
void (*enc_audit_leave)(void);

/* ---- the stream-state table (core/streams/stream.c keeps it) -------------------- */

enc_stream_state *enc_states[ENC_MAX_STATES];

static __thread pid_t my_tid __attribute__((tls_model("initial-exec")));

pid_t enc_tid(void) {
    if (__builtin_expect(!my_tid, 0)) my_tid = gettid();
    return my_tid;
}

void enc_tid_forget(void) { my_tid = 0; }

/* ---- the program's captures: the count ---------------------------------------- */

/* ---- encore's own calls outside a stream state's mutex ------------------------ */

/* The lock for encore's own driver calls that are made without a stream
 * state's mutex (the destruction of graphs deferred while a capture was
 * live, the look-up of a primary context): part of the barrier of
 * core/path/prog_capture.c. */
static pthread_mutex_t own_mu = PTHREAD_MUTEX_INITIALIZER;

int enc_own_calls_begin(void) {
    pthread_mutex_lock(&own_mu);
    if (!__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED)) return 1;
    pthread_mutex_unlock(&own_mu);
    return 0;
}

void enc_own_calls_end(void) { pthread_mutex_unlock(&own_mu); }

void enc_own_calls_barrier(void) {
    pthread_mutex_lock(&own_mu);
    pthread_mutex_unlock(&own_mu);
}

/* ---- graph destruction deferred while a capture is live ---------------------- */

typedef struct deferred_graph {
    CUgraphExec exec;
    CUgraph graph;
    CUcontext ctx; /* the graph's */
    struct deferred_graph *next;
} deferred_graph;

static deferred_graph *deferred; /* guarded by own_mu */

int enc_prog_capture_defer_destroy(CUgraphExec exec, CUgraph graph, CUcontext ctx) {
    if (!__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) || (!exec && !graph)) return 0;
    deferred_graph *d = malloc(sizeof *d);
    if (!d) return 1; /* leaked: never a driver call during the program's capture */
    d->exec = exec;
    d->graph = graph;
    d->ctx = ctx;
    pthread_mutex_lock(&own_mu);
    d->next = deferred;
    __atomic_store_n(&deferred, d, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&own_mu);
    return 1;
}

/* Destroy what was deferred, unless a capture is live again. */
void enc_prog_capture_drain(void) {
    if (!__atomic_load_n(&deferred, __ATOMIC_RELAXED) || !enc_own_calls_begin()) return;
    ENC_GUARDED {
        while (deferred) {
            deferred_graph *d = deferred;
            __atomic_store_n(&deferred, d->next, __ATOMIC_RELAXED);
            if (d->exec) enc_drv.graphExecDestroy(d->exec);
            if (d->graph) enc_drv.graphDestroy(d->graph);
            free(d);
        }
    }
    enc_own_calls_end();
}

/* A context went away: what was deferred of it is forgotten (its handles are
 * gone: never destroy a stale handle); the graphs of other contexts stay, to
 * be destroyed at the capture's end. ctx NULL: a context encore cannot name,
 * none whose streams learnt anything (core/path/context.c): nothing of it here. */
void enc_prog_capture_forget(CUcontext ctx) {
    pthread_mutex_lock(&own_mu);
    for (deferred_graph **pp = &deferred; *pp;) {
        deferred_graph *d = *pp;
        if (!ctx || d->ctx != ctx) {
            pp = &d->next;
            continue;
        }
        __atomic_store_n(pp, d->next, __ATOMIC_RELAXED);
        free(d);
    }
    pthread_mutex_unlock(&own_mu);
}
