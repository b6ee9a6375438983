/* encore: a stream's sequence store.
 *
 * Each stream keeps what it has learnt: the candidates it counts (learn.c),
 * the graphs it captured, and a trie that finds them. The trie has one node
 * per launch of a captured sequence, keyed on the launch's structure (its
 * structural fingerprint), so a held sequence walks it one launch at a time;
 * graphs hang at the node where their sequence ends. Children are found
 * through one open-addressing table per store, keyed by (parent, structure).
 * Each node counts the graphs whose sequence passes through it; nodes are not
 * freed one by one, but when more than half of them are dead (their graphs
 * evicted or dropped) the trie is rebuilt from the live graphs, so a program
 * whose sequences keep changing does not grow it without bound.
 *
 * The number of graphs is bounded by ENCORE_MAX_GRAPHS across all streams;
 * the process's least recently used graph is evicted (reclaim.c). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "core/graphs/devpatch.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"

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
    s->nodes[parent].end_early = 0; /* a longer graph goes on from there */
    return id;
}

/* Count a graph ending at `node` in (d = 1) or out of (d = -1) the nodes of its path. */
static void path_refs(enc_store *s, uint32_t node, int d) {
    for (uint32_t id = node; id != ENC_TRIE_ROOT; id = s->nodes[id].parent) {
        enc_trie_node *t = &s->nodes[id];
        if (d > 0 && t->refs++ == 0) s->nlive++;
        if (d < 0 && --t->refs == 0) s->nlive--;
    }
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
    int deferred = enc_prog_capture_defer_destroy(g->exec, g->graph, g->ctx);
    if (!deferred) { /* not while the program captures */
        ENC_GUARDED {
            if (g->exec) enc_drv.graphExecDestroy(g->exec); /* an in-flight launch completes first */
            if (g->graph) enc_drv.graphDestroy(g->graph);
        }
    }
    if (g->dev) ENC_GUARDED enc_devpatch_free(g->dev, !deferred); /* a deferred one's ring is left */
    free(g->knodes);
    free(g->recs);
    free(g->arena);
    free(g);
}

/* Hang g at its node (g->node). */
static void hang(enc_store *s, enc_graph *g) {
    g->next_at_node = s->nodes[g->node].graphs;
    s->nodes[g->node].graphs = g;
    path_refs(s, g->node, 1);
    enc_graph_end_update(s, g->node);
}

void enc_store_add_graph(enc_store *s, enc_graph *g) {
    g->last_used = enc_now_ns();
    if (!s->nodes[g->node].graphs) ENC_TSTAT_ADD(graph_structures, 1); /* its structure's first graph */
    hang(s, g);
    enc_hold_new_graph(s, g->node);
    if (enc_graph_has_event_op(g)) __atomic_store_n(&s->ngraphs_ev, s->ngraphs_ev + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->ngraphs, s->ngraphs + 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&enc_n_graphs, 1, __ATOMIC_RELAXED);
}

/* Free g, hanging at no node any more; its candidate goes to `cand_state`, counting from zero. */
static void release(enc_store *s, enc_graph *g, uint8_t cand_state, int evicted) {
    enc_candidate *c = enc_cand_find(s->cands, g->cand_hash, 0);
    if (c) {
        c->state = cand_state;
        c->count = 0;
        c->spanned = 0;
    }
    if (evicted) enc_event_graph_evicted(g);
    if (enc_graph_has_event_op(g)) __atomic_store_n(&s->ngraphs_ev, s->ngraphs_ev - 1, __ATOMIC_RELAXED);
    enc_graph_free(g);
    __atomic_store_n(&s->ngraphs, s->ngraphs - 1, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&enc_n_graphs, 1, __ATOMIC_RELAXED);
}

static void drop(enc_store *s, enc_graph *g, uint8_t cand_state, int evicted) {
    enc_graph **pp = &s->nodes[g->node].graphs;
    while (*pp && *pp != g) pp = &(*pp)->next_at_node;
    if (*pp) {
        *pp = g->next_at_node;
        path_refs(s, g->node, -1);
        enc_graph_end_update(s, g->node);
    }
    release(s, g, cand_state, evicted);
}

void enc_store_drop_graph(enc_store *s, enc_graph *g, int evicted) {
    drop(s, g, evicted ? ENC_CAND_COUNTING : ENC_CAND_NEVER, evicted);
}

static int graph_launches(const enc_graph *g, unsigned stamp) {
    for (uint32_t i = 0; i < g->len; i++)
        if (!g->recs[i].L->is_op && __atomic_load_n(&g->recs[i].L->changed_mark, __ATOMIC_RELAXED) == stamp) return 1;
    return 0;
}

void enc_store_drop_graphs_of(enc_store *s, unsigned stamp) {
    for (uint32_t id = 1; id < s->nnodes && s->ngraphs; id++) {
        enc_graph *next;
        for (enc_graph *g = s->nodes[id].graphs; g; g = next) {
            next = g->next_at_node;
            if (graph_launches(g, stamp)) drop(s, g, ENC_CAND_COUNTING, 0); /* captured again, as things are now */
        }
    }
}

void enc_store_unname_event(enc_store *s, CUevent ev) {
    for (uint32_t id = 1; id < s->nnodes && s->ngraphs_ev; id++)
        for (enc_graph *g = s->nodes[id].graphs, *next; g; g = next) {
            next = g->next_at_node;
            /* never captured again: with events made and destroyed in turn, its handle comes back, and a
             * capture that the next destroy drops again would cost more than it saves */
            if (g->nops && !enc_graph_unname_event(g, ev)) drop(s, g, ENC_CAND_NEVER, 0);
        }
}

enc_graph *enc_store_lru(const enc_store *s) {
    enc_graph *lru = NULL;
    for (uint32_t id = 1; id < s->nnodes; id++)
        for (enc_graph *g = s->nodes[id].graphs; g; g = g->next_at_node)
            if (!lru || g->last_used < lru->last_used) lru = g;
    return lru;
}

void enc_store_evict_lru(enc_store *s) {
    enc_graph *lru = enc_store_lru(s);
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

static int names_retired(const enc_graph *g) {
    for (uint32_t i = 0; i < g->len; i++)
        if (g->recs[i].L->retired) return 1;
    return 0;
}

int enc_store_drop_retired(enc_store *s) {
    int n = 0;
    for (uint32_t id = 1; id < s->nnodes; id++)
        for (enc_graph *g = s->nodes[id].graphs, *next; g; g = next) {
            next = g->next_at_node;
            if (!names_retired(g)) continue;
            drop(s, g, ENC_CAND_COUNTING, 0); /* not evicted: the same sequence may come again with new code */
            n++;
        }
    return n;
}

/* ---- reclaiming dead trie nodes ------------------------------------------------- */

/* Take every graph off the trie: returned as a list linked by next_at_node. */
static enc_graph *unhang_all(enc_store *s) {
    enc_graph *all = NULL;
    for (uint32_t id = 1; id < s->nnodes; id++)
        while (s->nodes[id].graphs) {
            enc_graph *g = s->nodes[id].graphs;
            s->nodes[id].graphs = g->next_at_node;
            g->next_at_node = all;
            all = g;
        }
    return all;
}

static void trie_clear(enc_store *s) {
    s->nnodes = 1;
    s->nlive = 0;
    s->nodes[ENC_TRIE_ROOT].first_child = ENC_NO_NODE;
    s->nodes[ENC_TRIE_ROOT].last_child = 0; /* its children are gone (enc_store_step) */
    clear_child_tab(s);
}

/* Give memory back when a trie of `need` nodes at most uses a quarter of its arrays. */
static void trie_shrink(enc_store *s, uint32_t need) {
    uint32_t cap = TRIE_INITIAL_NODES, slots = TRIE_INITIAL_SLOTS;
    while (cap < need) cap *= 2;
    while (slots < 2 * cap) slots *= 2;
    if (s->cap_nodes >= 4 * cap) {
        enc_trie_node *nn = realloc(s->nodes, cap * sizeof(enc_trie_node));
        if (nn) {
            s->nodes = nn;
            s->cap_nodes = cap;
        }
    }
    uint32_t *t = s->child_cap >= 4 * slots ? malloc(slots * sizeof(uint32_t)) : NULL;
    if (t) {
        free(s->child_tab);
        s->child_tab = t;
        s->child_cap = slots;
        clear_child_tab(s);
    }
}

int enc_store_compact(enc_store *s, int force) {
    uint32_t dead = s->nnodes - 1 - s->nlive;
    if (dead == 0 || (!force && dead * 2 <= s->nnodes - 1)) return 0;
    enc_graph *all = unhang_all(s);
    uint32_t need = 1;
    for (enc_graph *g = all; g; g = g->next_at_node) need += g->len;
    trie_clear(s);
    trie_shrink(s, need);
    while (all) {
        enc_graph *g = all;
        all = g->next_at_node;
        g->node = enc_store_insert(s, g->recs, g->len); /* room enough: the trie held these paths already */
        if (g->node != ENC_NO_NODE)
            hang(s, g);
        else
            release(s, g, ENC_CAND_COUNTING, 0);
    }
    return 1;
}

int enc_store_evict_all(enc_store *s) {
    int n = 0;
    for (uint32_t id = 1; id < s->nnodes; id++)
        for (; s->nodes[id].graphs; n++) enc_store_drop_graph(s, s->nodes[id].graphs, 1);
    return n;
}

void enc_store_forget(enc_store *s) {
    for (uint32_t id = 1; id < s->nnodes; id++)
        while (s->nodes[id].graphs) enc_store_drop_graph(s, s->nodes[id].graphs, 0);
    trie_clear(s);
    memset(s->cands, 0, sizeof s->cands);
}
