/* encore: held launches replayed at their graph's end, not at the call after it
 * (ENCORE_GRAPH_END, a trial, off).
 *
 * A hold ends when a launch continues no graph, when the sequence reaches its
 * longest, or at a call of the program that observes the stream (a
 * synchronize, an event wait, a copy to the host). Until then the GPU waits
 * for what is held. A graph whose sequence ended at such a call when it was
 * captured, and that no longer graph continues in the trie, most likely ends
 * at that call again: then the held launches that complete it are replayed as
 * soon as the last of them comes, and the GPU runs them while the host works
 * toward its call (on the simulator, a step that reads its result after 500 us
 * of host work no longer waits out the flush deadline every step).
 *
 * A guess that was wrong shows: a launch or stream operation is recorded on
 * the stream before any call of the program. Each costs the node 4 points of
 * its score, each call that came at its end (after a replay there, or ending
 * launches held to it) gives one back, up to 4: the graph replays at its end
 * while the score is not negative. So one wrong guess leaves a node's end on,
 * and where work often goes on the graph waits for its calls, and the longer
 * sequence is learnt and captured as before. The replay itself is the
 * sequence's end (core/streams/sequence.c, enc_sequence_end_at_graph_end).
 *
 * Off by default: on the H200 (2026-11-27, calls 45 and 46) it moved no
 * workload beyond the noise, and a jitted JAX step guessed wrong at each of
 * its 608 tries a process (a stream operation came after its graph's end
 * before the next call: what ends its sequence when held is no call when
 * nothing is held): active / passive 1.064 [1.001, 1.197] with it, 1.003
 * [0.980, 1.115] without, in the same processes. */
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/state/gate.h"

void enc_graph_end_update(enc_store *s, uint32_t id) {
    enc_trie_node *t = &s->nodes[id];
    int early = t->graphs != NULL && t->first_child == ENC_NO_NODE;
    for (const enc_graph *g = t->graphs; g && early; g = g->next_at_node) early = g->ends_at_call;
    t->end_early = (uint8_t)early;
}

void enc_graph_end_mark(enc_stream_state *st, uint32_t node) {
    ENC_TSTAT_ADD(holds_at_graph_end, 1);
    if (!st->early_node) __atomic_fetch_add(&enc_hot.n_early, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&st->early_node, node, __ATOMIC_RELAXED); /* read unlocked by enc_core_flush_all */
}

#define ENC_END_SCORE_MAX 4
#define ENC_END_SCORE_MIN (-32)
#define ENC_END_WRONG 4

static void score(enc_stream_state *st, uint32_t id, int d) {
    if (id == 0 || id >= st->store.nnodes) return; /* the trie was rebuilt since (its nodes renumbered) */
    enc_trie_node *t = &st->store.nodes[id];
    int v = t->end_score + d;
    t->end_score = (int8_t)(v > ENC_END_SCORE_MAX ? ENC_END_SCORE_MAX : v < ENC_END_SCORE_MIN ? ENC_END_SCORE_MIN : v);
}

/* st no longer waits to learn whether its last replay at a graph's end was right; returns that node. */
static uint32_t unmark(enc_stream_state *st) {
    uint32_t id = st->early_node;
    __atomic_store_n(&st->early_node, 0, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&enc_hot.n_early, 1, __ATOMIC_RELAXED);
    return id;
}

void enc_graph_end_call(enc_stream_state *st) {
    if (st->held && st->store.nodes[st->node].end_early) score(st, st->node, 1); /* held to its end: the call came */
    if (st->early_node) score(st, unmark(st), 1);
}

void enc_graph_end_wrong(enc_stream_state *st) {
    ENC_TSTAT_ADD(graph_ends_wrong, 1);
    score(st, unmark(st), -ENC_END_WRONG);
    ENC_DEBUG("work came on a stream after a graph replayed at its end, before any call of the program");
}
