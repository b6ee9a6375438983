/* encore: keeping what encore holds on to bounded.
 *
 * ENCORE_MAX_GRAPHS is one bound for the whole process: when it is reached,
 * the least recently used graph of any stream is evicted (graphs carry one
 * clock, enc_now_ns, from their capture or last replay): core/graphs/room.c,
 * asked by each capture. Here: a program out of device memory, and unloads.
 *
 * When code is unloaded, only what belongs to it goes: the parameter layouts
 * of its functions (each layout remembers its module or library, layout.c),
 * the graphs and open sequences that name them, and the trie paths of those
 * graphs. When a context goes away, everything goes (its streams, modules and
 * graphs do).
 *
 * Freeing a retired layout needs a grace period: a launch in another thread
 * may have read it from the cache a moment before it was retired. Layouts are
 * read only with a stream state's mutex held (core/graphs/layout.h), so once the
 * retiring thread has taken every state's mutex after retiring them, no
 * launch still holds one, and none can find one again; the same pass drops
 * every graph and sequence that names one, and what each stream remembers of
 * layouts (core/graphs/layout.h enc_layout_remembered). No launch pays for this (no epoch
 * counter on the launch path); an unload waits at most for each stream's
 * current launch. Unloads go one at a time (the layout cache keeps two
 * buffers, and reuses the older one at the next retirement).
 *
 * Per-thread states of exited threads are reclaimed in stream.c. */
#define _GNU_SOURCE
#include <pthread.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
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

static pthread_mutex_t unload_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- the program runs out of device memory ------------------------------------------ */

/* A program's allocation failed for lack of device memory: encore's graphs
 * take some (ENCORE_MAX_GRAPHS bounds their count, not their bytes), so all
 * of them go (evicted: captured again if their sequences come again), what a
 * stream holds being issued first. 1 if any went: the hook makes the
 * allocation again, once. Not while the program captures: the destruction
 * would wait for its end (core/path/prog_capture.c), freeing nothing now. */
int enc_core_out_of_memory(void) {
    ENC_DEBUG("an allocation failed for lack of device memory; encore holds %d graphs%s",
              __atomic_load_n(&enc_n_graphs, __ATOMIC_RELAXED),
              __atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) ? " (the program captures)" : "");
    if (!__atomic_load_n(&enc_n_graphs, __ATOMIC_RELAXED) || __atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED))
        return 0;
    int freed = 0;
    ENC_GUARDED {
        int n = enc_stream_count();
        for (int i = 0; i < n; i++) {
            enc_stream_state *st = enc_states[i];
            enc_mutex_lock(&st->mu);
            if (st->store.ngraphs && st->held) enc_sequence_end(st, ENC_FLUSH_ALL_CALL);
            if (enc_store_evict_all(&st->store)) {
                enc_store_compact(&st->store, 1);
                freed = 1;
            }
            enc_mutex_unlock(&st->mu);
        }
    }
    if (freed) enc_stats_oom_retry();
    return freed;
}

/* ---- code that goes away ----------------------------------------------------------- */

/* Does st's open sequence name a retired layout? A poisoned sequence that is
 * not held is never read again (and its records may not all be written). */
static int names_retired(const enc_stream_state *st) {
    if (st->seq.poisoned && !st->held) return 0;
    for (uint32_t i = 0; i < st->seq.n; i++)
        if (st->seq.recs[i].L->retired) return 1;
    return 0;
}

/* st lets go of every retired layout: what it holds is released (the code is
 * still loaded), a sequence naming one is never learnt, its graphs naming
 * one are dropped, and its trie keeps no dead path. */
static void let_go(enc_stream_state *st) {
    enc_mutex_lock(&st->mu);
    enc_layout_forget_remembered(st->layouts);
    int stale = names_retired(st);
    if (stale) st->seq.poisoned = 1;
    if (stale || st->held) enc_sequence_end(st, ENC_FLUSH_ALL_CALL);
    enc_store_drop_retired(&st->store);
    enc_store_compact(&st->store, 1);
    enc_mutex_unlock(&st->mu);
}

/* Retire the layouts `pick` chooses, make every state let go of them, free them. */
static void unload(enc_layout_pick pick, const void *arg) {
    pthread_mutex_lock(&unload_mu);
    enc_layout *retired = enc_layouts_retire(pick, arg);
    if (retired) {
        int n = enc_stream_count(); /* under the table's lock: a state added later reads the new cache */
        for (int i = 0; i < n; i++) let_go(enc_states[i]);
        enc_layouts_free(retired);
    }
    pthread_mutex_unlock(&unload_mu);
}

/* A layout whose owner is not known goes with any code. */
static int pick_module(const enc_layout *L, const void *mod) {
    return L->owner_kind == ENC_OWNER_UNKNOWN || (L->owner_kind == ENC_OWNER_MODULE && L->owner == mod);
}

void enc_core_unload_module(CUmodule mod) { unload(pick_module, mod); }

typedef struct library_unload {
    CUlibrary lib;
    CUmodule mod; /* the library's module in the current context, or NULL */
    CUcontext ctx;
} library_unload;

/* A library's CUkernels name it; its CUfunctions (cuKernelGetFunction) name
 * its module in their context. That module is asked of the current context
 * only: CUfunctions of other contexts go with any library. */
static int pick_library(const enc_layout *L, const void *arg) {
    const library_unload *u = arg;
    if (L->owner_kind == ENC_OWNER_LIBRARY) return L->owner == u->lib;
    if (L->owner_kind == ENC_OWNER_MODULE) return !u->mod || L->ctx != u->ctx || L->owner == u->mod;
    return 1;
}

void enc_core_unload_library(CUlibrary lib) {
    library_unload u = {.lib = lib};
    if (enc_drv.ctxGetCurrent(&u.ctx) != CUDA_SUCCESS) u.ctx = NULL;
    if (!u.ctx || !enc_drv.libraryGetModule || enc_drv.libraryGetModule(&u.mod, lib) != CUDA_SUCCESS) u.mod = NULL;
    unload(pick_library, &u);
}

void enc_core_module_unload(void) {
    pthread_mutex_lock(&unload_mu);
    enc_core_flush_all(ENC_FLUSH_ALL_CALL);
    enc_layout *retired = enc_layouts_reset();
    int n = enc_stream_count();
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        enc_mutex_lock(&st->mu);
        enc_layout_forget_remembered(st->layouts);
        if (st->open) st->seq.poisoned = 1; /* nothing to learn: its context goes away */
        enc_sequence_end(st, ENC_FLUSH_ALL_CALL);
        enc_store_forget(&st->store);
        __atomic_store_n(&st->needs_init, 1, __ATOMIC_RELAXED);
        enc_mutex_unlock(&st->mu);
    }
    enc_layouts_free(retired);
    pthread_mutex_unlock(&unload_mu);
}
