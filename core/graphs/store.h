/* encore: a stream's sequence store (store.c): the trie of its captured
 * sequences, their graphs, eviction. */
#ifndef ENCORE_STORE_H
#define ENCORE_STORE_H

#include <stdint.h>

#include "core/state/stream_state.h"

extern int enc_n_graphs; /* graphs alive, all streams; atomic (ENCORE_MAX_GRAPHS bounds it: reclaim.c) */

int enc_store_init(enc_store *s); /* 0, or -1 out of memory (free with enc_store_free) */
void enc_store_free(enc_store *s);
/* The child of `parent` reached by a launch of structure `sfp`, or ENC_NO_NODE. */
static inline uint32_t enc_store_child_slot(const enc_store *s, uint32_t parent, uint64_t sfp) {
    uint64_t h = sfp ^ ((uint64_t)parent * ENC_GOLDEN_64);
    h ^= h >> 29;
    return (uint32_t)h & (s->child_cap - 1);
}
static inline uint32_t enc_store_child(const enc_store *s, uint32_t parent, uint64_t sfp) {
    uint32_t mask = s->child_cap - 1;
    for (uint32_t i = enc_store_child_slot(s, parent, sfp);; i = (i + 1) & mask) {
        uint32_t id = s->child_tab[i];
        if (id == ENC_NO_NODE) return ENC_NO_NODE;
        if (s->nodes[id].parent == parent && s->nodes[id].sfp == sfp) return id;
    }
}
/* enc_store_child for a held walk, which repeats: the child last taken from `parent` is tried
 * first, by the structure remembered beside it, without reading the child (held launches cost
 * mostly cache misses: docs/maintainers.md). A node's last_child is set only here, to a child
 * the table found, and is 0 in a node made since the trie was last cleared (add_node, trie_clear
 * in store.c): children are never taken out one at a time, so a remembered one is a child of
 * `parent` with that structure. Else the table is asked and the answer remembered. */
static inline uint32_t enc_store_step(enc_store *s, uint32_t parent, uint64_t sfp) {
    enc_trie_node *p = &s->nodes[parent];
    if (p->last_child && p->last_child_sfp == sfp) return p->last_child;
    uint32_t c = enc_store_child(s, parent, sfp);
    if (c != ENC_NO_NODE) {
        p->last_child = c;
        p->last_child_sfp = sfp;
    }
    return c;
}
/* The node where the path of recs[0..n) ends (the root for none), or ENC_NO_NODE: no graph's
 * sequence begins so. */
static inline uint32_t enc_store_path_end(const enc_store *s, const enc_rec *recs, uint32_t n) {
    uint32_t node = ENC_TRIE_ROOT;
    for (uint32_t i = 0; i < n && node != ENC_NO_NODE; i++) node = enc_store_child(s, node, recs[i].sfp);
    return node;
}
/* Walk (creating) the path for recs[0..n); returns the end node, or ENC_NO_NODE out of memory. */
uint32_t enc_store_insert(enc_store *s, const enc_rec *recs, uint32_t n);
/* Hang g at its trie node (g->node) and count it. */
void enc_store_add_graph(enc_store *s, enc_graph *g);
/* Unhang and free g. Its candidate counts again from zero if `evicted`, else never again. */
void enc_store_drop_graph(enc_store *s, enc_graph *g, int evicted);
/* Drop the graphs with a launch of f (or of the other kind of handle, which may name the same
 * code; `kernel`: f is a CUkernel; NULL: every graph); their candidates count again from zero. */
void enc_store_drop_graphs_of(enc_store *s, unsigned stamp); /* graphs launching a layout marked with stamp */
/* No graph names ev any more (nodes.c enc_graph_unname_event); those that cannot stop go, for good. */
void enc_store_unname_event(enc_store *s, CUevent ev);
enc_graph *enc_store_lru(const enc_store *s); /* the least recently used graph of the store, or NULL */
void enc_store_evict_lru(enc_store *s);
int enc_store_evict_all(enc_store *s); /* every graph evicted (its candidate counts again); how many */
/* Drop every graph that names a retired layout (its code is unloaded); their candidates count again. Returns how many were dropped. */
int enc_store_drop_retired(enc_store *s);
/* Rebuild the trie from the live graphs when more than half of its nodes are dead (with `force`:
 * when any is), so that evicted graphs' paths do not pile up. Never while the stream holds (held
 * launches name a trie node). Returns 1 if it rebuilt. */
int enc_store_compact(enc_store *s, int force);
/* Drop every graph, the trie and the candidates. */
void enc_store_forget(enc_store *s);
/* The same, for graphs whose context is gone: their handles are forgotten, not destroyed. */
void enc_store_abandon(enc_store *s);
/* Free a graph that is in no trie (any more), its executable and graph too. */
void enc_graph_free(enc_graph *g);

#endif
