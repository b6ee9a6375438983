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
 * [0.980, 1.115] without, in the same processes.
 *
 * Pauses (ENCORE_PAUSE_END, a trial, off). The host may pause inside what encore
 * holds: a decoding step's cache update or sampling in Python, hundreds of
 * microseconds between two launches. Before, the flush deadline released the
 * held launches one by one after 200 us, the sequence went on after the
 * pause (its next launches issued eagerly), and the next step's hold was cut
 * at the same place again: the GPU idled through every pause (Hugging Face
 * generate on the H200, call 88: 3,150-3,990 such cuts a process, 0.8-0.94 s
 * of launches held for nothing, and the deadline's cap flapping between 8 and
 * 4 launches). Now the deadline's release ends the sequence there, before its
 * next launch (sequence.c), so that it is learnt and captured as it is, and
 * where it ended is remembered: the launches since the last flush point (a
 * pause is one, as a synchronize is) and the last one's structure. A place
 * cut twice is due: when a sequence reaches it again it ends there at once
 * (ENC_FLUSH_PAUSE), what it holds replayed or issued, and the GPU runs it
 * during the pause. A place, not a trie node: a pause comes after the 13th
 * launch of a step, say, whose kernels also begin every other sequence. The
 * guess is right when the next work on the stream comes a quarter of the
 * flush deadline later or more, or a call comes first (+1, up to 4), wrong
 * when work comes sooner (-4, and a place that falls below -8 is forgotten);
 * each deadline that cuts a hold there again gives a point back. Off: on the
 * H200 (call 89) it took generate's launches held for nothing to 0.08-0.28 s
 * a process and moved no wall time (0.990 [0.964, 1.022] off / on): the GPU
 * has time to spare there, so the held launches delayed nothing it waited
 * for (docs/bench/2026-11-29-h200-pause-ends.md). */
#include <string.h>

#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/state/gate.h"
#include "policy/options.h"

void enc_graph_end_update(enc_store *s, uint32_t id) {
    enc_trie_node *t = &s->nodes[id];
    int early = t->graphs != NULL && t->first_child == ENC_NO_NODE;
    for (const enc_graph *g = t->graphs; g && early; g = g->next_at_node) early = g->ends_at_call;
    t->end_early = (uint8_t)early;
}

/* early_node of a sequence ended at pause slot s: ENC_EARLY_PAUSE - s (no trie node: score() passes it by) */
#define ENC_EARLY_PAUSE UINT32_MAX
#define IS_PAUSE(id) ((id) > ENC_EARLY_PAUSE - ENC_PAUSES)
/* A stream's places where the host paused: at (launches since the flush point), sfp (the last launch's
 * structure), score (due while not negative, and cut PAUSE_DUE_CUTS times), cuts (the deadline's there). */
#define ENC_PAUSES (sizeof((enc_stream_state *)0)->pauses / sizeof((enc_stream_state *)0)->pauses[0])

static void mark(enc_stream_state *st, uint32_t node) {
    if (!st->early_node) __atomic_fetch_add(&enc_hot.n_early, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&st->early_node, node, __ATOMIC_RELAXED); /* read unlocked by enc_core_flush_all */
}

void enc_graph_end_mark(enc_stream_state *st, uint32_t node) {
    ENC_TSTAT_ADD(holds_at_graph_end, 1);
    mark(st, node);
}

void enc_graph_end_mark_pause(enc_stream_state *st, uint32_t slot, int held) {
    if (held) ENC_TSTAT_ADD(holds_at_pause, 1);
    mark(st, ENC_EARLY_PAUSE - slot);
    st->early_at = enc_now_ns();
}

/* ---- pauses ---------------------------------------------------------------------------- */

#define PAUSE_DUE_CUTS 2 /* deadline cuts at a place before it is due */
#define PAUSE_SCORE_MAX 4
#define PAUSE_FORGET (-8) /* a place scored below this is forgotten */

static void pause_bits(enc_stream_state *st) {
    uint64_t b = 0;
    for (uint32_t i = 0; i < ENC_PAUSES; i++) {
        const struct enc_pause *p = &st->pauses[i];
        if (p->cuts >= PAUSE_DUE_CUTS && p->score >= 0) b |= 1ull << (p->at & 63);
    }
    st->pause_bits = b;
}

static void pause_score(enc_stream_state *st, uint32_t slot, int d) {
    struct enc_pause *p = &st->pauses[slot];
    if (!p->cuts) return; /* forgotten meanwhile */
    int v = p->score + d;
    p->score = (int8_t)(v > PAUSE_SCORE_MAX ? PAUSE_SCORE_MAX : v);
    if (v < PAUSE_FORGET) memset(p, 0, sizeof *p);
    pause_bits(st);
}

int enc_pause_due_slow(const enc_stream_state *st, uint32_t pos) {
    if (!enc_opt.pause_end || st->seq.n == 0) return -1;
    uint64_t sfp = st->seq.recs[st->seq.n - 1].sfp;
    for (uint32_t i = 0; i < ENC_PAUSES; i++) {
        const struct enc_pause *p = &st->pauses[i];
        if (p->at == pos && p->sfp == sfp && p->cuts >= PAUSE_DUE_CUTS && p->score >= 0) return (int)i;
    }
    return -1;
}

/* The deadline cut the open sequence after its seq.n launches: count the place, taking the slot of the least
 * trusted place when it is new. */
static void pause_learn(enc_stream_state *st) {
    uint32_t pos = __atomic_load_n(&st->since_flush, __ATOMIC_RELAXED) + st->seq.n;
    uint64_t sfp = st->seq.recs[st->seq.n - 1].sfp;
    struct enc_pause *p = NULL, *low = &st->pauses[0];
    for (uint32_t i = 0; i < ENC_PAUSES && !p; i++) {
        struct enc_pause *q = &st->pauses[i];
        if (q->cuts && q->at == pos && q->sfp == sfp) p = q;
        if (!q->cuts || (low->cuts && (q->score < low->score || (q->score == low->score && q->cuts < low->cuts))))
            low = q;
    }
    if (!p) {
        p = low;
        *p = (struct enc_pause){.at = pos, .sfp = sfp};
    }
    if (p->cuts < UINT8_MAX) p->cuts++;
    if (p->cuts > PAUSE_DUE_CUTS && p->score < PAUSE_SCORE_MAX) p->score++; /* a pause came here again */
    if (p->cuts == PAUSE_DUE_CUTS)
        ENC_DEBUG("the host paused after the launch %u after a flush point twice: sequences end there", pos);
    pause_bits(st);
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

/* The early replay st->early_node stands for was right (d = 1) or wrong (d = -ENC_END_WRONG). */
static void judged(enc_stream_state *st, int d) {
    uint32_t id = unmark(st);
    if (IS_PAUSE(id))
        pause_score(st, ENC_EARLY_PAUSE - id, d);
    else
        score(st, id, d);
}

void enc_graph_end_call(enc_stream_state *st) {
    if (st->held && st->store.nodes[st->node].end_early) score(st, st->node, 1); /* held to its end: the call came */
    if (st->early_node) judged(st, 1);
}

/* A quarter of the flush deadline: work that comes this long after a replay at a pause's end came after a pause
 * again. */
static uint64_t pause_gap_ns(void) { return (uint64_t)enc_opt_get_i64(&enc_opt.flush_deadline) * 1000 / 4; }

void enc_graph_end_work(enc_stream_state *st) {
    int pause = IS_PAUSE(st->early_node);
    if (pause && enc_now_ns() - st->early_at >= pause_gap_ns()) {
        judged(st, 1); /* the host paused there again */
        return;
    }
    ENC_TSTAT_ADD(graph_ends_wrong, 1);
    judged(st, -ENC_END_WRONG);
    ENC_DEBUG("work came on a stream after a replay at %s",
              pause ? "a pause, without a pause" : "a graph's end, before any call of the program");
}

void enc_graph_end_deadline(enc_stream_state *st, int replayed) {
    if (!enc_opt.pause_end || !st->seq.n) return;
    st->seq.pause_cut = 1;                    /* the sequence ends before its next launch (sequence.c) */
    st->anchor_set = 0;                       /* which anchors, as after a flush point */
    if (replayed) st->seq.fully_replayed = 1; /* learning reads it so, as at a sequence's end */
    pause_learn(st);
}
