/* Unit tests of a stream's sequence store (core/graphs/store.c): the trie of
 * captured sequences (insert, child lookup, growth) and the graphs that hang
 * in it (add, drop, least-recently-used eviction, forgetting everything).
 * No driver: the graphs here have no executable. */
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
#include "testhelper.h"

/* A launch whose structure is `sfp` (nothing else of it matters to the trie). */
static enc_rec rec_of(uint64_t sfp) {
    enc_rec r;
    memset(&r, 0, sizeof r);
    r.sfp = sfp;
    r.f = (CUfunction)(uintptr_t)(0x1000 + sfp);
    r.grid[0] = r.block[0] = 1;
    return r;
}

/* The node the path of structures sfps[0..n) ends at, walking by child lookups. */
static uint32_t walk(const enc_store *s, const uint64_t *sfps, uint32_t n) {
    uint32_t node = ENC_TRIE_ROOT;
    for (uint32_t i = 0; i < n && node != ENC_NO_NODE; i++) node = enc_store_child(s, node, sfps[i]);
    return node;
}

static uint32_t insert(enc_store *s, const uint64_t *sfps, uint32_t n) {
    enc_rec recs[16];
    for (uint32_t i = 0; i < n; i++) recs[i] = rec_of(sfps[i]);
    return enc_store_insert(s, recs, n);
}

static enc_graph *graph_at(enc_store *s, uint32_t node, uint64_t cand_hash) {
    enc_graph *g = calloc(1, sizeof *g);
    g->node = node;
    g->cand_hash = cand_hash;
    enc_store_add_graph(s, g);
    return g;
}

/* A graph at the end of the launches of functions fs[0..n) (their structure: their handles). */
static enc_layout changed_layout = {.ok = 1}, other_layout = {.ok = 1};
/* A graph of launches of fs[0..n); those of the function `changed` have changed_layout, the others other_layout. */
static enc_graph *graph_of_funcs(enc_store *s, const uintptr_t *fs, uint32_t n, uintptr_t changed, uint64_t cand_hash) {
    enc_rec recs[16];
    for (uint32_t i = 0; i < n; i++) {
        recs[i] = rec_of(fs[i]);
        recs[i].f = (CUfunction)fs[i];
        recs[i].L = fs[i] == changed ? &changed_layout : &other_layout;
    }
    enc_graph *g = graph_at(s, enc_store_insert(s, recs, n), cand_hash);
    g->len = n;
    g->recs = malloc(n * sizeof *recs);
    memcpy(g->recs, recs, n * sizeof *recs);
    return g;
}

/* A graph of the launches sfps[0..n), each of layout L, hanging where its sequence ends. */
static enc_graph *graph_of(enc_store *s, const uint64_t *sfps, uint32_t n, const enc_layout *L, uint64_t cand_hash) {
    enc_graph *g = calloc(1, sizeof *g);
    g->recs = calloc(n, sizeof *g->recs);
    for (uint32_t i = 0; i < n; i++) {
        g->recs[i] = rec_of(sfps[i]);
        g->recs[i].L = L;
    }
    g->len = n;
    g->node = enc_store_insert(s, g->recs, n);
    g->cand_hash = cand_hash;
    enc_store_add_graph(s, g);
    return g;
}

static enc_store *new_store(void) {
    enc_store *s = calloc(1, sizeof *s);
    if (enc_store_init(s) != 0) exit(2);
    return s;
}

static void free_store(enc_store *s) {
    enc_store_free(s);
    free(s);
}

int main(int argc, char **argv) {
    th_init(argc, argv);

    TEST("store: a new store's root has no children") {
        enc_store *s = new_store();
        EXPECT_EQ_INT(s->nnodes, 1);
        EXPECT_EQ_INT(enc_store_child(s, ENC_TRIE_ROOT, 42), ENC_NO_NODE);
        free_store(s);
    }

    TEST("store: an inserted sequence is found launch by launch, ending at the node insert returned") {
        enc_store *s = new_store();
        uint64_t seq[3] = {11, 22, 33};
        uint32_t end = insert(s, seq, 3);
        EXPECT(end != ENC_NO_NODE);
        EXPECT_EQ_INT(walk(s, seq, 3), end);
        EXPECT_EQ_INT(s->nnodes, 4);
        EXPECT_EQ_INT(s->nodes[end].sfp, 33);
        EXPECT_EQ_INT(enc_store_child(s, ENC_TRIE_ROOT, 22), ENC_NO_NODE); /* structure, in order */
        free_store(s);
    }

    TEST("store: a trie node remembers the launch that leads to it, and its parent its first child") {
        enc_store *s = new_store();
        uint64_t seq[2] = {5, 6};
        uint32_t end = insert(s, seq, 2);
        enc_rec r = rec_of(6);
        EXPECT(s->nodes[end].f == r.f);
        uint32_t first = enc_store_child(s, ENC_TRIE_ROOT, 5);
        EXPECT_EQ_INT(s->nodes[end].parent, first);
        EXPECT_EQ_INT(s->nodes[ENC_TRIE_ROOT].first_child, first);
        EXPECT_EQ_INT(s->nodes[first].first_child, end);
        free_store(s);
    }

    TEST("store: sequences sharing a prefix share its nodes") {
        enc_store *s = new_store();
        uint64_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
        uint32_t ea = insert(s, a, 3), eb = insert(s, b, 3);
        EXPECT(ea != eb);
        EXPECT_EQ_INT(s->nnodes, 5); /* root, 1, 2, then 3 and 4 */
        EXPECT_EQ_INT(s->nodes[ea].parent, s->nodes[eb].parent);
        EXPECT_EQ_INT(insert(s, a, 3), ea); /* inserting it again adds nothing */
        EXPECT_EQ_INT(s->nnodes, 5);
        free_store(s);
    }

    TEST("store: the trie grows past its first size and every path is still found") {
        enc_store *s = new_store();
        uint32_t cap0 = s->cap_nodes, slots0 = s->child_cap;
        uint32_t ends[200];
        for (uint64_t k = 0; k < 200; k++) {
            uint64_t seq[3] = {1000 + k, 2000 + k, 3000 + k};
            ends[k] = insert(s, seq, 3);
        }
        EXPECT_EQ_INT(s->nnodes, 601);
        EXPECT(s->cap_nodes > cap0 && s->cap_nodes >= s->nnodes);
        EXPECT(s->child_cap > slots0 && s->child_cap >= 2 * s->nnodes);
        int lost = 0;
        for (uint64_t k = 0; k < 200; k++) {
            uint64_t seq[3] = {1000 + k, 2000 + k, 3000 + k};
            lost += walk(s, seq, 3) != ends[k];
        }
        EXPECT_EQ_INT(lost, 0);
        free_store(s);
    }

    TEST("store: a graph hangs at the node where its sequence ends and is counted") {
        enc_store *s = new_store();
        int before = enc_n_graphs;
        uint64_t seq[2] = {7, 8};
        uint32_t end = insert(s, seq, 2);
        enc_graph *g = graph_at(s, end, 99);
        EXPECT(s->nodes[end].graphs == g);
        EXPECT_EQ_INT(s->ngraphs, 1);
        EXPECT_EQ_INT(enc_n_graphs, before + 1);
        free_store(s);
        EXPECT_EQ_INT(enc_n_graphs, before);
    }

    TEST("store: a dropped graph leaves its node, and its candidate is never counted again") {
        enc_store *s = new_store();
        uint64_t seq[2] = {7, 8};
        uint32_t end = insert(s, seq, 2);
        enc_candidate *c = enc_cand_find(s->cands, 99, 1);
        c->count = 2;
        c->state = ENC_CAND_CAPTURED;
        enc_graph *g1 = graph_at(s, end, 99), *g2 = graph_at(s, end, 123);
        enc_store_drop_graph(s, g1, 0);
        EXPECT(s->nodes[end].graphs == g2 && g2->next_at_node == NULL);
        EXPECT_EQ_INT(s->ngraphs, 1);
        EXPECT_EQ_INT(c->state, ENC_CAND_NEVER);
        EXPECT_EQ_INT(c->count, 0);
        free_store(s);
    }

    TEST("store: eviction drops the least recently used graph, whose candidate counts again") {
        enc_store *s = new_store();
        uint64_t a[1] = {1}, b[1] = {2}, c3[1] = {3};
        enc_graph *ga = graph_at(s, insert(s, a, 1), 10);
        enc_graph *gb = graph_at(s, insert(s, b, 1), 20);
        enc_graph *gc = graph_at(s, insert(s, c3, 1), 30);
        enc_candidate *cb = enc_cand_find(s->cands, 20, 1);
        cb->count = 2;
        cb->state = ENC_CAND_CAPTURED;
        ga->last_used = gc->last_used + 1; /* a was used last; b is now the oldest */
        (void)gc;
        enc_store_evict_lru(s);
        EXPECT_EQ_INT(s->ngraphs, 2);
        EXPECT(s->nodes[walk(s, b, 1)].graphs == NULL);
        EXPECT(s->nodes[walk(s, a, 1)].graphs == ga);
        EXPECT_EQ_INT(cb->state, ENC_CAND_COUNTING);
        EXPECT_EQ_INT(cb->count, 0);
        (void)gb;
        free_store(s);
    }

    TEST("store: dropping a function's graphs keeps the others, and their candidates count again") {
        enc_store *s = new_store();
        uintptr_t with[2] = {0x10, 0x20}, without[2] = {0x30, 0x40};
        enc_graph *keep = graph_of_funcs(s, without, 2, 0x20, 20);
        graph_of_funcs(s, with, 2, 0x20, 10);
        enc_candidate *c = enc_cand_find(s->cands, 10, 1);
        c->count = 2;
        c->state = ENC_CAND_CAPTURED;
        changed_layout.changed_mark = 7; /* enc_layouts_mark_code's stamp for 0x20's code */
        enc_store_drop_graphs_of(s, 7);
        EXPECT_EQ_INT(s->ngraphs, 1);
        EXPECT(s->nodes[keep->node].graphs == keep);
        EXPECT_EQ_INT(c->state, ENC_CAND_COUNTING);
        EXPECT_EQ_INT(c->count, 0);
        free_store(s);
    }

    TEST("store: an older stamp drops nothing (only layouts marked by this change count)") {
        enc_store *s = new_store();
        uintptr_t fs[1] = {0x10};
        graph_of_funcs(s, fs, 1, 0x10, 10);
        changed_layout.changed_mark = 7;
        enc_store_drop_graphs_of(s, 8);
        EXPECT_EQ_INT(s->ngraphs, 1);
        free_store(s);
    }

    TEST("store: a held walk's step (the child last taken tried first) reaches what a child lookup does") {
        enc_store *s = new_store();
        uint64_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4};
        insert(s, a, 3);
        insert(s, b, 3);
        for (int round = 0; round < 3; round++) { /* alternating paths: the remembered child is wrong half the time */
            const uint64_t *p = round % 2 ? b : a;
            uint32_t node = ENC_TRIE_ROOT;
            for (int i = 0; i < 3; i++) {
                uint32_t want = enc_store_child(s, node, p[i]);
                EXPECT_EQ_INT(enc_store_step(s, node, p[i]), want);
                node = want;
            }
            EXPECT_EQ_INT(enc_store_step(s, node, 9), ENC_NO_NODE); /* past the end */
        }
        enc_store_forget(s); /* the nodes' ids are given out again: a remembered child may name another node */
        uint64_t c[2] = {4, 1};
        uint32_t end = insert(s, c, 2);
        EXPECT_EQ_INT(enc_store_step(s, ENC_TRIE_ROOT, 1), ENC_NO_NODE);
        uint32_t first = enc_store_step(s, ENC_TRIE_ROOT, 4);
        EXPECT_EQ_INT(first, enc_store_child(s, ENC_TRIE_ROOT, 4));
        EXPECT_EQ_INT(enc_store_step(s, first, 2), ENC_NO_NODE);
        EXPECT_EQ_INT(enc_store_step(s, first, 1), end);
        free_store(s);
    }

    TEST("store: forgetting frees every graph and leaves only the root and no candidates") {
        enc_store *s = new_store();
        int before = enc_n_graphs;
        uint64_t a[3] = {1, 2, 3}, b[2] = {4, 5};
        graph_at(s, insert(s, a, 3), 10);
        graph_at(s, insert(s, a, 3), 11);
        graph_at(s, insert(s, b, 2), 12);
        enc_cand_find(s->cands, 10, 1)->count = 1;
        enc_store_forget(s);
        EXPECT_EQ_INT(s->ngraphs, 0);
        EXPECT_EQ_INT(enc_n_graphs, before);
        EXPECT_EQ_INT(s->nnodes, 1);
        EXPECT_EQ_INT(s->nodes[ENC_TRIE_ROOT].first_child, ENC_NO_NODE);
        EXPECT_EQ_INT(walk(s, a, 1), ENC_NO_NODE);
        EXPECT(enc_cand_find(s->cands, 10, 0) == NULL);
        uint32_t again = insert(s, b, 2); /* and the store is usable again */
        EXPECT_EQ_INT(walk(s, b, 2), again);
        EXPECT_EQ_INT(s->nnodes, 3);
        free_store(s);
    }

    TEST("store: the least recently used graph is found wherever it hangs") {
        enc_store *s = new_store();
        uint64_t a[2] = {1, 2}, b[3] = {3, 4, 5};
        enc_graph *ga = graph_at(s, insert(s, a, 2), 10), *gb = graph_at(s, insert(s, b, 3), 20);
        ga->last_used = 7;
        gb->last_used = 5;
        EXPECT(enc_store_lru(s) == gb);
        gb->last_used = 9;
        EXPECT(enc_store_lru(s) == ga);
        free_store(s);
    }

    TEST("store: a dropped graph's path is dead; compacting rebuilds the trie from the live graphs") {
        enc_store *s = new_store();
        static enc_layout L;
        uint64_t a[3] = {1, 2, 3}, b[3] = {1, 2, 4}, c[2] = {7, 8};
        enc_graph *ga = graph_of(s, a, 3, &L, 10), *gb = graph_of(s, b, 3, &L, 20), *gc = graph_of(s, c, 2, &L, 30);
        EXPECT_EQ_INT(s->nnodes, 7);
        EXPECT_EQ_INT(s->nlive, 6);
        enc_store_drop_graph(s, gc, 1);
        enc_store_drop_graph(s, gb, 1);
        EXPECT_EQ_INT(s->nlive, 3); /* 1, 2, 3: shared 1, 2 stay alive with a */
        EXPECT_EQ_INT(enc_store_compact(s, 1), 1);
        EXPECT_EQ_INT(s->nnodes, 4);
        EXPECT_EQ_INT(s->nlive, 3);
        EXPECT_EQ_INT(walk(s, a, 3), ga->node);
        EXPECT(s->nodes[ga->node].graphs == ga);
        EXPECT_EQ_INT(walk(s, c, 1), ENC_NO_NODE);
        EXPECT_EQ_INT(s->ngraphs, 1);
        free_store(s);
    }

    TEST("store: after compacting, a held walk's step forgets the children it remembered (their ids are given out again)") {
        enc_store *s = new_store();
        static enc_layout L;
        uint64_t a[3] = {1, 2, 3}, c[2] = {7, 8};
        enc_graph *gc = graph_of(s, c, 2, &L, 30);
        graph_of(s, a, 3, &L, 10);
        uint32_t node = ENC_TRIE_ROOT;
        for (int i = 0; i < 2; i++) node = enc_store_step(s, node, c[i]); /* remembered: root -> 7 -> 8 */
        EXPECT_EQ_INT(node, gc->node);
        enc_store_drop_graph(s, gc, 1);
        EXPECT_EQ_INT(enc_store_compact(s, 1), 1); /* 1, 2, 3 now have the ids 7 and 8 had */
        EXPECT_EQ_INT(enc_store_step(s, ENC_TRIE_ROOT, 7), ENC_NO_NODE);
        node = ENC_TRIE_ROOT;
        for (int i = 0; i < 3; i++) {
            uint32_t want = enc_store_child(s, node, a[i]);
            EXPECT_EQ_INT(enc_store_step(s, node, a[i]), want);
            node = want;
        }
        EXPECT_EQ_INT(enc_store_step(s, node, 8), ENC_NO_NODE);
        free_store(s);
    }

    TEST("store: compacting waits until more than half of the trie is dead, unless forced") {
        enc_store *s = new_store();
        static enc_layout L;
        uint64_t a[3] = {1, 2, 3}, b[2] = {7, 8};
        graph_of(s, a, 3, &L, 10);
        enc_graph *gb = graph_of(s, b, 2, &L, 20);
        enc_store_drop_graph(s, gb, 1); /* 2 of 5 nodes dead */
        EXPECT_EQ_INT(enc_store_compact(s, 0), 0);
        EXPECT_EQ_INT(s->nnodes, 6);
        EXPECT_EQ_INT(enc_store_compact(s, 1), 1);
        EXPECT_EQ_INT(s->nnodes, 4);
        EXPECT_EQ_INT(enc_store_compact(s, 1), 0); /* nothing dead */
        free_store(s);
    }

    TEST("store: a trie that shrank gives its memory back") {
        enc_store *s = new_store();
        static enc_layout L;
        enc_graph *gs[300];
        for (uint64_t k = 0; k < 300; k++) {
            uint64_t seq[3] = {1000 + k, 2000 + k, 3000 + k};
            gs[k] = graph_of(s, seq, 3, &L, 10 + k);
        }
        uint32_t cap = s->cap_nodes, slots = s->child_cap;
        for (int k = 1; k < 300; k++) enc_store_drop_graph(s, gs[k], 1);
        EXPECT_EQ_INT(enc_store_compact(s, 0), 1);
        EXPECT(s->cap_nodes < cap && s->child_cap < slots);
        EXPECT(s->child_cap >= 2 * s->nnodes);
        uint64_t first[3] = {1000, 2000, 3000};
        EXPECT_EQ_INT(walk(s, first, 3), gs[0]->node);
        free_store(s);
    }

    TEST("store: graphs naming a retired layout are dropped, and their candidates count again") {
        enc_store *s = new_store();
        static enc_layout kept, gone;
        gone.retired = 1;
        uint64_t a[2] = {1, 2}, b[2] = {1, 3};
        enc_graph *ga = graph_of(s, a, 2, &kept, 10);
        graph_of(s, b, 2, &gone, 20);
        enc_candidate *cb = enc_cand_find(s->cands, 20, 1);
        cb->count = 2;
        cb->state = ENC_CAND_CAPTURED;
        EXPECT_EQ_INT(enc_store_drop_retired(s), 1);
        EXPECT_EQ_INT(s->ngraphs, 1);
        EXPECT(s->nodes[walk(s, a, 2)].graphs == ga);
        EXPECT(s->nodes[walk(s, b, 2)].graphs == NULL);
        EXPECT_EQ_INT(cb->state, ENC_CAND_COUNTING);
        EXPECT_EQ_INT(cb->count, 0);
        free_store(s);
    }

    return th_report();
}
