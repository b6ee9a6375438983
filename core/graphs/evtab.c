/* encore: what encore knows about the program's events and memory, for the
 * stream operations that become graph nodes (core/graphs/nodes.c).
 *
 *   kinds    event -> the flags it was created with (cuEventCreate) and the
 *            context current then (the event's): only events known not to
 *            time and not to be shared between processes have their records
 *            held (docs/driver-rules.md says why), and only on a stream of
 *            the event's own context (the driver refuses a record of another
 *            device's event: issued eagerly, it returns the driver's error).
 *   holders  (event, record or wait) -> the stream state holding one: a call
 *            that names the event issues that state's held work first.
 *   memory   device allocations (with the context current at the
 *            allocation) and page-locked host ranges, from the program's own
 *            calls: a copy touching anything else is pageable (or not known)
 *            and ends the sequence.
 *
 * The event tables are bounded, open-addressed, with a fixed window of
 * probes per key: readers probe without a lock (a key is in at most one slot
 * of its window; a stale answer can only flush more), writers take one mutex
 * (records and waits being held, creates, destroys: never a kernel launch).
 * Full: the event is treated as not known (the sequence ends, as without
 * this). The memory ranges are a sorted array under a read-write lock; each
 * remembers its context, and goes with it (enc_mem_context_gone). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"

#define EVT_CAP 4096 /* a power of two */
#define EVT_WIN 16   /* slots probed per key */
#define MEM_CAP 8192 /* ranges kept at most */

typedef struct slot {
    uintptr_t key; /* 0: free */
    uintptr_t val;
} slot;

static slot kinds[EVT_CAP], holders[EVT_CAP];
static CUcontext kind_ctx[EVT_CAP]; /* the context of kinds[i]'s event; written before its val */
static pthread_mutex_t tab_mu = PTHREAD_MUTEX_INITIALIZER;
int enc_n_ev_holders; /* live holder entries; atomic */

static inline uint32_t home(uintptr_t key) { return (uint32_t)((key * ENC_GOLDEN_64) >> 40) & (EVT_CAP - 1); }

static slot *find(slot *tab, uintptr_t key) {
    uint32_t h = home(key);
    for (uint32_t i = 0; i < EVT_WIN; i++) {
        slot *s = &tab[(h + i) & (EVT_CAP - 1)];
        if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == key) return s;
    }
    return NULL;
}

/* With tab_mu held: the key's slot, claimed if needed; NULL if its window is full. */
static slot *claim(slot *tab, uintptr_t key) {
    slot *s = find(tab, key);
    if (s) return s;
    uint32_t h = home(key);
    for (uint32_t i = 0; i < EVT_WIN; i++) {
        s = &tab[(h + i) & (EVT_CAP - 1)];
        if (__atomic_load_n(&s->key, __ATOMIC_RELAXED) == 0) {
            __atomic_store_n(&s->val, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
            return s;
        }
    }
    return NULL;
}

static void unclaim(slot *s) {
    __atomic_store_n(&s->val, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->key, 0, __ATOMIC_RELEASE);
}

/* ---- event kinds ---------------------------------------------------------------------- */

/* The calling thread's current context (a thread-local query, allowed during any capture), or NULL. */
static CUcontext current_ctx(void) {
    CUcontext c = NULL;
    if (!enc_drv.ctxGetCurrent || enc_drv.ctxGetCurrent(&c) != CUDA_SUCCESS) return NULL;
    return c;
}

void enc_core_event_created(CUevent ev, unsigned flags) {
    if (!ev) return;
    CUcontext ctx = current_ctx();
    pthread_mutex_lock(&tab_mu);
    slot *s = claim(kinds, (uintptr_t)ev);
    if (s) {
        __atomic_store_n(&kind_ctx[s - kinds], ctx, __ATOMIC_RELAXED);
        __atomic_store_n(&s->val, (uintptr_t)flags + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&tab_mu);
    enc_nodes_unname(ev); /* its handle may be a destroyed event's */
}

void enc_evtab_forget_event(CUevent ev) {
    pthread_mutex_lock(&tab_mu);
    slot *s = find(kinds, (uintptr_t)ev);
    if (s) unclaim(s);
    pthread_mutex_unlock(&tab_mu);
}

int enc_evtab_event_ok(CUevent ev, int record, CUcontext ctx) {
    slot *s = ev ? find(kinds, (uintptr_t)ev) : NULL;
    uintptr_t v = s ? __atomic_load_n(&s->val, __ATOMIC_ACQUIRE) : 0;
    if (!v || __atomic_load_n(&kind_ctx[s - kinds], __ATOMIC_RELAXED) != ctx) return 0;
    unsigned flags = (unsigned)(v - 1);
    if (flags & CU_EVENT_INTERPROCESS) return 0;
    return !record || (flags & CU_EVENT_DISABLE_TIMING);
}

/* ---- holders -------------------------------------------------------------------------- */

static inline uintptr_t holder_key(CUevent ev, int wait) { return (uintptr_t)ev | (uintptr_t)(wait != 0); }

enc_stream_state *enc_evtab_holder(CUevent ev, int wait) {
    slot *s = find(holders, holder_key(ev, wait));
    return s ? (enc_stream_state *)__atomic_load_n(&s->val, __ATOMIC_ACQUIRE) : NULL;
}

int enc_evtab_hold(enc_stream_state *st, CUevent ev, int wait) {
    uintptr_t key = holder_key(ev, wait);
    for (uint32_t i = 0; i < st->n_held_ev; i++)
        if (holder_key(st->held_ev[i], st->held_ev_wait[i]) == key) return 1; /* already */
    if (st->n_held_ev >= ENC_MAX_HELD_EVENTS) return 0;
    pthread_mutex_lock(&tab_mu);
    slot *s = claim(holders, key);
    int ok = s && (s->val == 0 || s->val == (uintptr_t)st);
    if (ok) {
        if (s->val == 0) __atomic_fetch_add(&enc_n_ev_holders, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&s->val, (uintptr_t)st, __ATOMIC_RELEASE);
    } else if (s && s->val == 0) {
        unclaim(s);
    }
    pthread_mutex_unlock(&tab_mu);
    if (!ok) return 0;
    st->held_ev[st->n_held_ev] = ev;
    st->held_ev_wait[st->n_held_ev] = (uint8_t)(wait != 0);
    __atomic_store_n(&st->n_held_ev, st->n_held_ev + 1, __ATOMIC_RELAXED); /* read without the lock */
    return 1;
}

void enc_evtab_release(enc_stream_state *st) {
    if (!st->n_held_ev) return;
    pthread_mutex_lock(&tab_mu);
    for (uint32_t i = 0; i < st->n_held_ev; i++) {
        slot *s = find(holders, holder_key(st->held_ev[i], st->held_ev_wait[i]));
        if (s && s->val == (uintptr_t)st) {
            unclaim(s);
            __atomic_fetch_sub(&enc_n_ev_holders, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&tab_mu);
    __atomic_store_n(&st->n_held_ev, 0, __ATOMIC_RELAXED);
}

/* ---- memory ranges -------------------------------------------------------------------- */

typedef struct range {
    uintptr_t lo, hi; /* [lo, hi) */
    int kind;
    CUcontext ctx; /* current at the call that made it: it goes with that context (device memory: its context) */
} range;

static range mem[MEM_CAP];
static int nmem;
static pthread_rwlock_t mem_rw = PTHREAD_RWLOCK_INITIALIZER;

/* The first range whose end lies above p (nmem if none); with mem_rw held. */
static int first_above(uintptr_t p) {
    int lo = 0, hi = nmem;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (mem[mid].hi <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void enc_core_mem_added(uintptr_t p, size_t n, int kind) {
    if (!p || !n) return;
    CUcontext ctx = current_ctx();
    pthread_rwlock_wrlock(&mem_rw);
    int i = first_above(p);
    while (i < nmem && mem[i].lo < p + n) { /* overlaps a range kept: drop it (freed behind encore's back) */
        memmove(&mem[i], &mem[i + 1], (size_t)(nmem - i - 1) * sizeof *mem);
        nmem--;
    }
    if (nmem < MEM_CAP) {
        memmove(&mem[i + 1], &mem[i], (size_t)(nmem - i) * sizeof *mem);
        mem[i] = (range){p, p + n, kind, ctx};
        nmem++;
    }
    pthread_rwlock_unlock(&mem_rw);
}

void enc_core_mem_removed(uintptr_t p) {
    pthread_rwlock_wrlock(&mem_rw);
    int i = first_above(p);
    if (i < nmem && mem[i].lo == p) {
        memmove(&mem[i], &mem[i + 1], (size_t)(nmem - i - 1) * sizeof *mem);
        nmem--;
    }
    pthread_rwlock_unlock(&mem_rw);
}

/* A context went away (NULL: one encore cannot name): its device memory is
 * freed, its page-locked allocations too, and its host registrations end
 * (the memory is pageable again). A range of no known context goes with any. */
void enc_mem_context_gone(CUcontext ctx) {
    pthread_rwlock_wrlock(&mem_rw);
    int k = 0;
    for (int i = 0; i < nmem; i++)
        if (ctx && mem[i].ctx && mem[i].ctx != ctx) mem[k++] = mem[i];
    nmem = k;
    pthread_rwlock_unlock(&mem_rw);
}

int enc_mem_kind_in(uintptr_t p, size_t n, CUcontext ctx) {
    if (!p || !n || p + n < p) return 0;
    int kind = 0;
    pthread_rwlock_rdlock(&mem_rw);
    int i = first_above(p);
    if (i < nmem && mem[i].lo <= p && p + n <= mem[i].hi &&
        (!ctx || mem[i].kind != ENC_MEM_DEVICE || mem[i].ctx == ctx))
        kind = mem[i].kind;
    pthread_rwlock_unlock(&mem_rw);
    return kind;
}

int enc_mem_kind(uintptr_t p, size_t n) { return enc_mem_kind_in(p, n, NULL); }
