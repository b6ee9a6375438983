/* encore: the stream-state table (issuing work on a stream: core/graphs/issue.c;
 * the table's variables: core/state/gate.c).
 *
 * One state per stream the program launches on: explicit streams keyed by
 * handle, the legacy default stream per context, per-thread default streams
 * per context and thread. Launches find theirs through a small per-thread
 * cache; a miss takes the table lock. A destroyed stream's state is marked
 * dead and reused for the next new stream (its generation changes, so
 * thread caches notice); so is a per-thread stream's state when its thread
 * exits (a thread-specific key's destructor). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "policy/options.h"

static pthread_mutex_t states_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct enc_thread_stream tls_cache; /* enc_thr.streams (base/thread.h) */

void enc_stream_forget_thread(void) {
    enc_tid_forget();
    memset(enc_thr.streams, 0, sizeof enc_thr.streams);
}

/* ---- the table ------------------------------------------------------------------ */

static int state_init(enc_stream_state *st) {
    if (enc_record_init(&st->seq, (uint32_t)enc_opt.max_sequence) != 0 || enc_store_init(&st->store) != 0) return -1;
    enc_mutex_init(&st->mu);
    enc_rest_forget(st); /* the first window */
    return 0;
}

static void state_free(enc_stream_state *st) {
    if (!st) return;
    free(st->seq.recs);
    free(st->seq.arena);
    enc_store_free(&st->store);
    free(st);
}

/* Ask the driver what a new state's stream is (blocking or not, its context). */
/* kind, blocking and ctx are read without the state's lock by other threads'
 * legacy_order (core/path/launch.c): they are written whole, atomically, and
 * never through a passing value. */
static void state_query(enc_stream_state *st) {
    int blocking = 1;
    if (st->kind == ENC_STREAM_EXPLICIT) {
        unsigned flags = 0;
        CUcontext c = NULL;
        ENC_GUARDED {
            if (enc_drv.streamGetFlags(st->handle, &flags) == CUDA_SUCCESS && (flags & CU_STREAM_NON_BLOCKING))
                blocking = 0;
            if (enc_drv.streamGetCtx(st->handle, &c) == CUDA_SUCCESS) __atomic_store_n(&st->ctx, c, __ATOMIC_RELAXED);
        }
    }
    __atomic_store_n(&st->blocking, blocking, __ATOMIC_RELAXED);
    enc_context_note(__atomic_load_n(&st->ctx, __ATOMIC_RELAXED)); /* a primary context is named at its reset */
    __atomic_store_n(&st->needs_init, 0, __ATOMIC_RELEASE);        /* publishes blocking and ctx */
}

static void state_name(enc_stream_state *st, int kind, void *key, CUcontext ctx, pid_t owner) {
    __atomic_store_n(&st->kind, kind, __ATOMIC_RELAXED);
    st->handle = kind == ENC_STREAM_EXPLICIT ? (CUstream)key : NULL;
    __atomic_store_n(&st->ctx, ctx, __ATOMIC_RELAXED);
    st->owner = owner;
    __atomic_store_n(&st->needs_init, 1, __ATOMIC_RELAXED);
    st->attrs_differ = 0;
    st->attr_gen = 0; /* checked at its first launch if any stream's attributes were ever set */
    st->mixed_prio = 0;
    st->limits = NULL; /* another stream, maybe of another device */
}

/* The way that hit moves to the front: a thread launching on one stream finds it at the first compare. */
static enc_stream_state *cache_lookup(int kind, void *key, CUcontext ctx) {
    for (int i = 0; i < ENC_THREAD_STREAMS; i++) {
        tls_cache *c = &enc_thr.streams[i];
        if (c->st && c->kind == kind && c->key == key && c->ctx == ctx &&
            __atomic_load_n(&c->st->gen, __ATOMIC_ACQUIRE) == c->gen) {
            if (i == 0) return c->st;
            tls_cache hit = *c;
            *c = enc_thr.streams[0];
            enc_thr.streams[0] = hit;
            return hit.st;
        }
    }
    return NULL;
}

static void cache_remember(int kind, void *key, CUcontext ctx, enc_stream_state *st) {
    tls_cache *c = &enc_thr.streams[enc_thr.streams_next++ & (ENC_THREAD_STREAMS - 1)];
    c->kind = (uint8_t)kind;
    c->rests = 0;
    c->key = key;
    c->ctx = ctx;
    c->st = st;
    c->gen = __atomic_load_n(&st->gen, __ATOMIC_ACQUIRE);
}

void enc_stream_note_rests(CUstream s, const enc_stream_state *st) {
    tls_cache *c = &enc_thr.streams[0];
    if (c->st == st && c->key == (void *)s && c->kind == ENC_STREAM_EXPLICIT && c->ctx == NULL) c->rests = 1;
}

/* With states_mu held: the live state of that stream, or NULL. */
static enc_stream_state *table_find(int n, int kind, void *key, CUcontext ctx, pid_t owner) {
    for (int i = 0; i < n; i++) {
        enc_stream_state *s = enc_states[i];
        if (!s->dead && __atomic_load_n(&s->kind, __ATOMIC_RELAXED) == kind &&
            (kind == ENC_STREAM_EXPLICIT ? s->handle == (CUstream)key
                                         : __atomic_load_n(&s->ctx, __ATOMIC_RELAXED) == ctx) &&
            (kind != ENC_STREAM_PER_THREAD || s->owner == owner))
            return s;
    }
    return NULL;
}

/* With states_mu held: a destroyed stream's state, renamed, or NULL. */
static enc_stream_state *table_reuse(int n, int kind, void *key, CUcontext ctx, pid_t owner) {
    enc_stream_state *st = NULL;
    for (int i = 0; i < n && !st; i++)
        if (enc_states[i]->dead) st = enc_states[i];
    if (!st) return NULL;
    enc_mutex_lock(&st->mu);
    enc_rest_stream_gone(st); /* before the new name: what the old stream's window showed */
    state_name(st, kind, key, ctx, owner);
    st->gap_ns = 0; /* the old stream's pace says nothing of the new one's */
    st->sparse = 0;
    st->seq_cap = st->pace_cap = st->deadline_cap = 0;
    st->deadline_cuts = st->deadline_flips = st->deadline_quick = 0;
    st->deadline_since = 0;
    st->cap_votes = 0;
    __atomic_store_n(&st->ramp, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->since_flush, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->flush_len, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->flush_len_same, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->flush_sig, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&st->flush_sig_run, 0, __ATOMIC_RELAXED);
    enc_rest_forget(st); /* nor whether its launches repeated */
    st->dead = 0;
    __atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
    enc_mutex_unlock(&st->mu);
    return st;
}

/* With states_mu held: a new state at enc_states[n], or NULL. */
static enc_stream_state *table_add(int n, int kind, void *key, CUcontext ctx, pid_t owner) {
    if (n >= ENC_MAX_STATES) return NULL;
    enc_stream_state *st = calloc(1, sizeof *st);
    if (!st || state_init(st) != 0) {
        if (st) ENC_WARN_ONCE("out of memory for stream state: launches on new streams run eagerly");
        state_free(st);
        return NULL;
    }
    state_name(st, kind, key, ctx, owner);
    enc_states[n] = st;
    __atomic_store_n(&enc_hot.nstates, n + 1, __ATOMIC_RELEASE);
    return st;
}

/* ---- per-thread states of exited threads ------------------------------------------ */

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;

/* With states_mu held: st's thread exited. Release what it holds (on its
 * side stream, ordered after where the hold began: the thread's own
 * per-thread stream may already be gone), learn nothing from it, free its
 * side stream and events, and leave the state for the next new stream. */
static void reclaim_thread_state(enc_stream_state *st) {
    enc_mutex_lock(&st->mu);
    st->owner = 0;                      /* no thread owns it: a release goes through the side stream */
    if (st->open) st->seq.poisoned = 1; /* nothing to learn */
    enc_sequence_end(st, ENC_FLUSH_STREAM_CALL);
    enc_store_forget(&st->store);
    st->anchor_set = 0;
    if (st->join_pending) {
        __atomic_store_n(&st->join_pending, 0, __ATOMIC_RELAXED); /* read without the lock (join_own_sides) */
        __atomic_fetch_sub(&enc_hot.n_join_pending, 1, __ATOMIC_RELAXED);
    }
    /* Not while the program captures (core/path/prog_capture.c: encore makes no
     * driver call of its own then; destroying a stream may synchronise): the
     * handles are let go, a stream and two events per thread that exits
     * during a capture. */
    if (!__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED)) {
        if (st->side && enc_drv.streamDestroy) enc_drv.streamDestroy(st->side); /* its work completes first */
        if (st->ev_start && enc_drv.eventDestroy) enc_drv.eventDestroy(st->ev_start);
        if (st->ev_done && enc_drv.eventDestroy) enc_drv.eventDestroy(st->ev_done);
    }
    st->side = NULL;
    st->ev_start = st->ev_done = NULL;
    st->dead = 1;
    __atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
    enc_mutex_unlock(&st->mu);
}

/* The destructor of exit_key: this thread exits. */
static void thread_exit(void *arg) {
    (void)arg;
    if (!__atomic_load_n(&enc_hot.active, __ATOMIC_ACQUIRE))
        return; /* off, or a forked child: the driver is not ours */
    pid_t me = enc_tid();
    ENC_GUARDED {
        pthread_mutex_lock(&states_mu);
        int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
        for (int i = 0; i < n; i++) {
            enc_stream_state *st = enc_states[i];
            if (st->kind == ENC_STREAM_PER_THREAD && !st->dead && st->owner == me) reclaim_thread_state(st);
        }
        pthread_mutex_unlock(&states_mu);
    }
}

static void exit_key_create(void) { exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0; }

/* This thread has a per-thread state now: reclaim it when the thread exits. */
static void watch_thread_exit(void) {
    pthread_once(&exit_key_once, exit_key_create);
    if (exit_key_ok && !pthread_getspecific(exit_key)) pthread_setspecific(exit_key, (void *)1);
}

static enc_stream_state *state_lookup(int kind, void *key, CUcontext ctx, int create) {
    enc_stream_state *st = cache_lookup(kind, key, ctx);
    if (st) return st;
    pid_t owner = kind == ENC_STREAM_PER_THREAD ? enc_tid() : 0;
    pthread_mutex_lock(&states_mu);
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    st = table_find(n, kind, key, ctx, owner);
    if (!st && create) st = table_reuse(n, kind, key, ctx, owner);
    if (!st && create) st = table_add(n, kind, key, ctx, owner);
    pthread_mutex_unlock(&states_mu);
    if (st) cache_remember(kind, key, ctx, st);
    if (st && kind == ENC_STREAM_PER_THREAD) watch_thread_exit();
    return st;
}

int enc_stream_count(void) {
    pthread_mutex_lock(&states_mu);
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&states_mu);
    return n;
}

static enc_stream_state *stream_for_slow(CUstream s, int per_thread, int create) __attribute__((noinline));

/* The usual case first: an explicit stream, the last one this thread named
 * (the cache's first way), its state set up. */
enc_stream_state *enc_stream_for(CUstream s, int per_thread, int create) {
    const tls_cache *c = &enc_thr.streams[0];
    if (__builtin_expect(c->key == (void *)s && s != NULL && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD, 1) &&
        c->st && c->kind == ENC_STREAM_EXPLICIT && c->ctx == NULL &&
        __atomic_load_n(&c->st->gen, __ATOMIC_ACQUIRE) == c->gen &&
        !__atomic_load_n(&c->st->needs_init, __ATOMIC_ACQUIRE))
        return c->st;
    return stream_for_slow(s, per_thread, create);
}

static enc_stream_state *stream_for_slow(CUstream s, int per_thread, int create) {
    int kind;
    if (s == NULL)
        kind = per_thread ? ENC_STREAM_PER_THREAD : ENC_STREAM_LEGACY;
    else if (s == CU_STREAM_LEGACY)
        kind = ENC_STREAM_LEGACY;
    else if (s == CU_STREAM_PER_THREAD)
        kind = ENC_STREAM_PER_THREAD;
    else
        kind = ENC_STREAM_EXPLICIT;
    CUcontext ctx = NULL;
    if (kind != ENC_STREAM_EXPLICIT) {
        CUresult r = CUDA_SUCCESS;
        ENC_GUARDED r = enc_drv.ctxGetCurrent(&ctx);
        if (r != CUDA_SUCCESS || !ctx) return NULL;
    }
    enc_stream_state *st = state_lookup(kind, kind == ENC_STREAM_EXPLICIT ? (void *)s : NULL, ctx, create);
    if (st && __atomic_load_n(&st->needs_init, __ATOMIC_ACQUIRE) && create) {
        enc_mutex_lock(&st->mu);
        /* Not while the program captures: asking a capturing stream's flags
         * invalidates a global-mode capture (docs/driver-rules.md). The
         * stream's launches pass straight through meanwhile; it is asked at
         * its first launch after the capture. */
        if (st->needs_init && !__atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED)) state_query(st);
        enc_mutex_unlock(&st->mu);
    }
    return st;
}

void enc_stream_retire(enc_stream_state *st) {
    pthread_mutex_lock(&states_mu);
    enc_mutex_lock(&st->mu);
    enc_sequence_end(st, ENC_FLUSH_STREAM_CALL);
    enc_pending_err_orphan(st);
    enc_store_forget(&st->store);
    st->anchor_set = 0;
    st->dead = 1; /* free for the next new stream; thread caches see the new generation */
    st->handle = NULL;
    __atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
    enc_mutex_unlock(&st->mu);
    pthread_mutex_unlock(&states_mu);
}

void enc_stream_pass_all(enum enc_flush_reason why) {
    pthread_mutex_lock(&states_mu); /* a state added after this sees the raised count */
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&states_mu);
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        enc_mutex_lock(&st->mu);
        if (st->open) enc_sequence_end(st, why);
        enc_mutex_unlock(&st->mu);
    }
}

/* With st->mu held: forget the per-thread machinery's handles. */
static void forget_side(enc_stream_state *st) {
    st->ev_start = st->ev_done = NULL;
    st->side = NULL;
    if (st->join_pending) {
        __atomic_store_n(&st->join_pending, 0, __ATOMIC_RELAXED); /* read without the lock (join_own_sides) */
        __atomic_fetch_sub(&enc_hot.n_join_pending, 1, __ATOMIC_RELAXED);
    }
}

void enc_stream_context_gone(CUcontext ctx) {
    pthread_mutex_lock(&states_mu);
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        enc_mutex_lock(&st->mu);
        /* A stream not asked yet (st->ctx NULL, or needs_init) has learnt
         * nothing: forgetting it costs nothing, and it may be one of ctx's.
         * A context not named (ctx NULL) is none whose streams learnt
         * anything (core/path/context.c): the others keep what they learnt. */
        int unasked = !st->ctx || __atomic_load_n(&st->needs_init, __ATOMIC_RELAXED);
        if (!st->dead && ((ctx && st->ctx == ctx) || unasked)) {
            enc_sequence_discard(st);
            enc_store_abandon(&st->store);
            forget_side(st);
            if (st->kind == ENC_STREAM_EXPLICIT) { /* destroyed with its context: as enc_stream_retire */
                st->dead = 1;
                st->handle = NULL;
                __atomic_store_n(&st->gen, st->gen + 1, __ATOMIC_RELEASE);
            }
        }
        enc_mutex_unlock(&st->mu);
    }
    pthread_mutex_unlock(&states_mu);
}
