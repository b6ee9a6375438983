/* encore: one bound on encore's graphs for the whole process
 * (ENCORE_MAX_GRAPHS): a capture evicts the process's least recently used
 * graphs first, from any stream whose lock is free. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>

#include "core/graphs/graphs.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "policy/options.h"

#define EVICT_TRIES 4 /* evictions tried for one capture (other streams may be busy) */

/* ---- one least-recently-used bound for the process ------------------------------ */

/* The state whose store has the process's least recently used graph, or NULL.
 * Called with self->mu held; another state is only tried: one whose mutex is
 * taken now is in use, and passed over. */
static enc_stream_state *lru_owner(enc_stream_state *self) {
    enc_stream_state *best = NULL;
    uint64_t best_used = UINT64_MAX;
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *o = enc_states[i];
        if (!__atomic_load_n(&o->store.ngraphs, __ATOMIC_RELAXED)) continue;
        if (o != self && enc_mutex_trylock(&o->mu) != 0) continue;
        const enc_graph *g = enc_store_lru(&o->store);
        if (g && g->last_used < best_used) {
            best_used = g->last_used;
            best = o;
        }
        if (o != self) enc_mutex_unlock(&o->mu);
    }
    return best;
}

/* Evict the process's least recently used graph; 0 if none could be. */
static int evict_one(enc_stream_state *self) {
    enc_stream_state *o = lru_owner(self);
    if (!o || (o != self && enc_mutex_trylock(&o->mu) != 0)) return 0;
    enc_store_evict_lru(&o->store); /* its least recently used one, again: it may have been used since */
    if (!o->held) enc_store_compact(&o->store, 0);
    if (o != self) enc_mutex_unlock(&o->mu);
    return 1;
}

int enc_reclaim_graph_room(enc_stream_state *self) {
    for (int i = 0; i < EVICT_TRIES && __atomic_load_n(&enc_n_graphs, __ATOMIC_RELAXED) >= enc_opt.max_graphs; i++)
        if (!evict_one(self)) break;
    return __atomic_load_n(&enc_n_graphs, __ATOMIC_RELAXED) < enc_opt.max_graphs;
}
