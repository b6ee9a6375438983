/* encore: a stream's sequence store.
 *
 * Each stream keeps what it has learnt: the candidates it counts (learn.c),
 * the graphs it captured, and a trie that finds them. The trie has one node
 * per launch of a captured sequence, keyed on the launch's structure (its
 * structural fingerprint), so a held sequence walks it one launch at a time;
 * graphs hang at the node where their sequence ends. Children are found
 * through one open-addressing table per store, keyed by (parent, structure).
 * Nodes are never freed one by one: forgetting drops the whole trie.
 *
 * The number of graphs is bounded by ENCORE_MAX_GRAPHS across all streams;
 * the least recently used graph of the capturing stream is evicted. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "core/internal.h"

#define TRIE_INITIAL_NODES 64  /* grows by doubling */
#define TRIE_INITIAL_SLOTS 128 /* child-table slots; grows by doubling, kept at least twice the nodes */

int enc_n_graphs;

static void clear_child_tab(enc_store *s) { memset(s->child_tab, 0xff, s->child_cap * sizeof(uint32_t)); }

int enc_store_init(enc_store *s) {
    s->cap_nodes = TRIE_INITIAL_NODES;
    s->nodes = calloc(s->cap_nodes, sizeof(enc_trie_node));
    s->child_cap = TRIE_INITIAL_SLOTS;
    s->child_tab = malloc(s->child_cap * sizeof(uint32_t));
    if (!s->nodes || !s->child_tab) return -1;
    clear_child_tab(s);
    s->nnodes = 1; /* the root */
    s->nodes[ENC_TRIE_ROOT].first_child = ENC_NO_NODE;
    return 0;
}

void enc_store_free(enc_store *s) {
    if (s->nodes && s->child_tab) enc_store_forget(s);
    free(s->nodes);
    free(s->child_tab);
    s->nodes = NULL;
    s->child_tab = NULL;
}

/* ---- the trie ------------------------------------------------------------------- */

static void child_tab_insert(enc_store *s, uint32_t id) {
    uint32_t mask = s->child_cap - 1;
    for (uint32_t i = enc_store_child_slot(s, s->nodes[id].parent, s->nodes[id].sfp);; i = (i + 1) & mask)
        if (s->child_tab[i] == ENC_NO_NODE) {
            s->child_tab[i] = id;
            return;
        }
}

/* Room for `extra` more nodes, the child table at most half full. */
static int trie_grow(enc_store *s, uint32_t extra) {
    if (s->nnodes + extra > s->cap_nodes) {
        uint32_t cap = s->cap_nodes;
        while (cap < s->nnodes + extra) cap *= 2;
        enc_trie_node *nn = realloc(s->nodes, cap * sizeof(enc_trie_node));
        if (!nn) return -1;
        s->nodes = nn;
        s->cap_nodes = cap;
    }
    if ((s->nnodes + extra) * 2 > s->child_cap) {
        uint32_t cap = s->child_cap;
        while ((s->nnodes + extra) * 2 > cap) cap *= 2;
        uint32_t *t = malloc(cap * sizeof(uint32_t));
        if (!t) return -1;
        free(s->child_tab);
        s->child_tab = t;
        s->child_cap = cap;
        clear_child_tab(s);
        for (uint32_t id = 1; id < s->nnodes; id++) child_tab_insert(s, id);
    }
    return 0;
}

static uint32_t add_node(enc_store *s, uint32_t parent, const enc_rec *r) {
    uint32_t id = s->nnodes++;
    enc_trie_node *t = &s->nodes[id];
    memset(t, 0, sizeof *t);
    t->parent = parent;
    t->sfp = r->sfp;
    t->first_child = ENC_NO_NODE;
    t->f = r->f;
    memcpy(t->grid, r->grid, sizeof t->grid);
    memcpy(t->block, r->block, sizeof t->block);
    t->smem = r->smem;
    child_tab_insert(s, id);
    if (s->nodes[parent].first_child == ENC_NO_NODE) s->nodes[parent].first_child = id;
    return id;
}

uint32_t enc_store_insert(enc_store *s, const enc_rec *recs, uint32_t n) {
    if (trie_grow(s, n) != 0) return ENC_NO_NODE;
    uint32_t node = ENC_TRIE_ROOT;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t c = enc_store_child(s, node, recs[i].sfp);
        node = c != ENC_NO_NODE ? c : add_node(s, node, &recs[i]);
    }
    return node;
}

/* ---- graphs ----------------------------------------------------------------------- */

void enc_graph_free(enc_graph *g) {
    if (!enc_prog_capture_defer_destroy(g->exec, g->graph)) { /* not while the program captures */
        ENC_GUARDED {
            if (g->exec) enc_drv.graphExecDestroy(g->exec); /* an in-flight launch completes first */
            if (g->graph) enc_drv.graphDestroy(g->graph);
        }
    }
    free(g->knodes);
    free(g->recs);
    free(g->arena);
    free(g);
}

void enc_store_add_graph(enc_store *s, enc_graph *g) {
    g->last_used = ++s->use_clock;
    g->next_at_node = s->nodes[g->node].graphs;
    s->nodes[g->node].graphs = g;
    s->ngraphs++;
    __atomic_fetch_add(&enc_n_graphs, 1, __ATOMIC_RELAXED);
}

void enc_store_drop_graph(enc_store *s, enc_graph *g, int evicted) {
    enc_graph **pp = &s->nodes[g->node].graphs;
    while (*pp && *pp != g) pp = &(*pp)->next_at_node;
    if (*pp) *pp = g->next_at_node;
    enc_candidate *c = enc_cand_find(s->cands, g->cand_hash, 0);
    if (c) {
        c->state = evicted ? ENC_CAND_COUNTING : ENC_CAND_NEVER;
        c->count = 0;
    }
    if (evicted) enc_event_graph_evicted(g);
    enc_graph_free(g);
    s->ngraphs--;
    __atomic_fetch_sub(&enc_n_graphs, 1, __ATOMIC_RELAXED);
}

static int graph_launches(const enc_graph *g, CUfunction f, int kernel) {
    for (uint32_t i = 0; i < g->len; i++)
        if (!f || g->recs[i].f == f || g->recs[i].L->is_kernel != kernel) return 1;
    return 0;
}

void enc_store_drop_graphs_of(enc_store *s, CUfunction f, int kernel) {
    for (uint32_t id = 1; id < s->nnodes && s->ngraphs; id++) {
        enc_graph *next;
        for (enc_graph *g = s->nodes[id].graphs; g; g = next) {
            next = g->next_at_node;
            if (!graph_launches(g, f, kernel)) continue;
            enc_candidate *c = enc_cand_find(s->cands, g->cand_hash, 0);
            enc_store_drop_graph(s, g, 0);
            if (c) c->state = ENC_CAND_COUNTING; /* captured again, with the attributes of now */
        }
    }
}

void enc_store_evict_lru(enc_store *s) {
    enc_graph *lru = NULL;
    for (uint32_t id = 1; id < s->nnodes; id++)
        for (enc_graph *g = s->nodes[id].graphs; g; g = g->next_at_node)
            if (!lru || g->last_used < lru->last_used) lru = g;
    if (lru) enc_store_drop_graph(s, lru, 1);
}

void enc_store_abandon(enc_store *s) {
    for (uint32_t id = 1; id < s->nnodes; id++)
        for (enc_graph *g = s->nodes[id].graphs; g; g = g->next_at_node) {
            g->exec = NULL;
            g->graph = NULL;
        }
    enc_store_forget(s);
}

void enc_store_forget(enc_store *s) {
    for (uint32_t id = 1; id < s->nnodes; id++)
        while (s->nodes[id].graphs) enc_store_drop_graph(s, s->nodes[id].graphs, 0);
    s->nnodes = 1;
    s->nodes[ENC_TRIE_ROOT].first_child = ENC_NO_NODE;
    clear_child_tab(s);
    memset(s->cands, 0, sizeof s->cands);
}
