/* encore: hold only where holding pays.
 *
 * Holding launches pays when the hold ends in a replay (one graph launch for
 * many); a hold that ends otherwise (the held launches diverged from every
 * graph, or a flush point came before a graph's sequence was complete) only
 * delayed them: the GPU may have idled meanwhile. So each start of a hold
 * (a child of the trie's root: the first launch of some graph's sequence)
 * keeps its last holds' outcomes, and when they do not pay, holding there is
 * given up for a while:
 *   - given up after HOLD_FAILS_MAX holds in a row without a replay, or when
 *     fewer than half of the last HOLD_WINDOW holds replayed;
 *   - while given up, sequences that begin there run eagerly (they are still
 *     recorded and counted towards capture: learning goes on);
 *   - after BACKOFF_FIRST << k such sequences (k: the times given up before,
 *     capped at BACKOFF_MAX_SHIFT) one hold is tried again, and one more
 *     failure gives up again;
 *   - a new graph captured from that start, or HOLD_WINDOW replays in a row,
 *     forgets the back-off;
 *   - while given up, the sequences run eagerly there are watched: when the
 *     last SHADOW_RESUME of them would each have replayed a graph, exactly or
 *     once patched, holding resumes at once, as a probe. A serving loop's entry,
 *     whose holds fail while new batch sizes come and whose other requests
 *     have their graphs, so holds again after two requests instead of eight
 *     or more. On the H200 the changing-batch server had run 6,980 launches
 *     eagerly this way in a process (1,850 since), and ran at 0.944 of eager
 *     against 0.834 with ENCORE_HOLD_RULE=0 (docs/bench/2026-11-27-h200-engine-ab.md).
 * A program that never repeats so converges to pass-through cost (one probe
 * per up to 4096 sequences), and one that starts repeating later is picked up
 * again (at once when it captures a new graph). ENCORE_HOLD_RULE=0 holds
 * wherever a graph's sequence begins, as before the rule. The state lives in
 * the trie nodes (enc_trie_node); compacting the trie starts it afresh.
 * Captures that never replay are given up the same way (below).
 * Everything here runs with the stream's mutex held. */
#define _GNU_SOURCE
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"
#include "core/graphs/worth.h"
#include "core/observe/nvtx.h"
#include "policy/options.h"

#define HOLD_FAILS_MAX 4     /* holds in a row without a replay: give up */
#define HOLD_WINDOW 8        /* the last holds kept (bits of hold_hist) */
#define HOLD_MIN_PAID 4      /* ... of which fewer replayed than this: give up */
#define BACKOFF_FIRST 8u     /* sequences run eagerly after the first give-up */
#define BACKOFF_MAX_SHIFT 9u /* ... doubling with each give-up, up to 8 << 9 = 4096 */
#define SHADOW_RESUME 2u     /* sequences in a row, run eagerly at a given-up start, that would have replayed */

static const enc_layout *start_layout(const enc_trie_node *t) { return enc_layout_cached(t->f); }

/* Holding resumes at given-up start t, as a probe: one more failure gives up again. */
static void resume_probe(enc_trie_node *t, const char *why) {
    t->hold_skip = 0;
    t->hold_fails = HOLD_FAILS_MAX - 1;
    t->hold_hist = 0;
    t->hold_n = 0;
    ENC_TSTAT_ADD(holds_resumed, 1);
    enc_event_hold_resumed(start_layout(t), why);
}

/* A sequence begins at a given-up start: 1 if it is the one to try again. */
int enc_hold_skip_slow(enc_stream_state *st, uint32_t start) {
    enc_trie_node *t = &st->store.nodes[start];
    if (--t->hold_skip != 0) return 0;
    resume_probe(t, "back-off");
    return 1;
}

static void give_up(enc_trie_node *t) {
    uint32_t k = t->hold_backoff < BACKOFF_MAX_SHIFT ? t->hold_backoff : BACKOFF_MAX_SHIFT;
    t->hold_skip = BACKOFF_FIRST << k;
    if (t->hold_backoff < 255) t->hold_backoff++;
    ENC_TSTAT_ADD(holds_given_up, 1);
    enc_event_hold_given_up(start_layout(t), (uint32_t)__builtin_popcount(t->hold_hist), t->hold_n, t->hold_skip);
    t->hold_fails = 0;
    t->hold_hist = 0;
    t->hold_n = 0;
}

void enc_hold_outcome(enc_stream_state *st, int replayed) {
    ENC_TSTAT_ADD(holds, 1);
    if (replayed) {
        ENC_TSTAT_ADD(holds_replayed, 1);
        st->win_replays++; /* the stream's learning pays (rest.c) */
    } else {
        uint64_t now = enc_now_ns(), held = now > st->held_since ? now - st->held_since : 0;
        ENC_TSTAT_ADD(held_unpaid_ns, held);
        ENC_ACCT_ADD(st, ENC_ACCT_UNPAID_NS, held);
    }
    uint32_t start = st->hold_start;
    if (!enc_opt.hold_rule || start == ENC_TRIE_ROOT || start >= st->store.nnodes) return;
    enc_trie_node *t = &st->store.nodes[start];
    if (t->parent != ENC_TRIE_ROOT) return; /* the trie was rebuilt meanwhile */
    t->hold_hist = (uint8_t)((t->hold_hist << 1) | (replayed ? 1 : 0));
    if (t->hold_n < HOLD_WINDOW) t->hold_n++;
    if (replayed) {
        t->hold_fails = 0;
        if (t->hold_n == HOLD_WINDOW && t->hold_hist == 0xff) t->hold_backoff = 0; /* pays steadily again */
        return;
    }
    if (t->hold_fails < 255) t->hold_fails++;
    if (t->hold_fails >= HOLD_FAILS_MAX ||
        (t->hold_n == HOLD_WINDOW && __builtin_popcount(t->hold_hist) < HOLD_MIN_PAID))
        give_up(t);
}

void enc_hold_new_graph(enc_store *s, uint32_t node) {
    if (node == ENC_NO_NODE || node == ENC_TRIE_ROOT) return;
    while (s->nodes[node].parent != ENC_TRIE_ROOT) node = s->nodes[node].parent;
    enc_trie_node *t = &s->nodes[node];
    if (t->hold_skip) {
        ENC_TSTAT_ADD(holds_resumed, 1);
        enc_event_hold_resumed(start_layout(t), "new graph");
    }
    t->hold_skip = 0;
    t->hold_fails = 0;
    t->hold_hist = 0;
    t->hold_n = 0;
    t->hold_backoff = 0;
}

/* ---- captures at a start that stopped repeating ------------------------------------
 * A start given up DOUBT_BACKOFF times or more in a row (no graph captured
 * there, and no run of HOLD_WINDOW replays, in between), whose last
 * DOUBT_SEQS sequences or more matched none of its graphs (replayed, or ran
 * eagerly while holding there was given up, a graph of theirs captured),
 * has stopped repeating: a sequence seen ENCORE_MIN_REPEATS times there is
 * weak evidence, and its graph would likely never replay (torch.compile's
 * own-graph warm-up left two such graphs of three on the H200). A capture
 * due there waits for ENCORE_MIN_REPEATS << (backoff - DOUBT_BACKOFF + 1)
 * sightings, at most << DOUBT_MAX_SHIFT; a sequence that keeps coming is
 * captured all the same, a little later. A start whose holds fail because
 * new paths keep coming after it (a server's batch sizes, each with its own
 * kernels) keeps matching graphs it has, and captures at the third sighting:
 * asking more there had cost a serving loop 15 points of replayed launches
 * on the H200 (docs/bench/2026-11-26-h200-worth-copysize-hotpath.md). */
#define DOUBT_BACKOFF 2u
#define DOUBT_SEQS 32u
#define DOUBT_MAX_SHIFT 3u

/* The trie node where st's open sequence starts (a root child), or NULL (empty, or no graph starts so). */
static enc_trie_node *sequence_start(const enc_stream_state *st) {
    if (st->seq.n == 0) return NULL;
    uint32_t start = enc_store_child(&st->store, ENC_TRIE_ROOT, st->seq.recs[0].sfp);
    return start == ENC_NO_NODE ? NULL : &st->store.nodes[start];
}

/* A sequence ran eagerly at given-up start t: hold_hist, unused while no hold begins there, keeps
 * whether those sequences would have replayed; SHADOW_RESUME such in a row resume holding, as a probe. */
static void shadow(enc_trie_node *t, int would) {
    t->hold_hist = (uint8_t)((t->hold_hist << 1) | (would ? 1 : 0));
    if (t->hold_n < HOLD_WINDOW) t->hold_n++;
    const uint8_t all = (uint8_t)((1u << SHADOW_RESUME) - 1u);
    if (t->hold_n >= SHADOW_RESUME && (t->hold_hist & all) == all) resume_probe(t, "would have replayed");
}

void enc_hold_start_seen(enc_stream_state *st, int matched) {
    enc_trie_node *t = sequence_start(st);
    if (!t) return;
    if (matched)
        t->since_match = 0;
    else if (t->since_match < UINT16_MAX)
        t->since_match++;
    if (t->hold_skip && enc_opt.hold_rule) shadow(t, enc_would_replay(st));
}

void enc_hold_start_replayed(enc_stream_state *st) {
    enc_trie_node *t = sequence_start(st);
    if (!t) return;
    t->since_match = 0;
    t->replayed = 1;
}

/* ---- sightings in one flush interval --------------------------------------------
 * A candidate (a sequence, its structure, its configuration) seen
 * ENCORE_MIN_REPEATS times between two flush points of its stream is due
 * only at ONE_INTERVAL times that many, unless it came again after a flush
 * point. Where a stream's sequences are cut depends on where its anchor is
 * (the first launch after a flush point: sequence.c), and a program's first
 * step is not its later ones. CuPy's first CG solve makes a call that
 * flushes everything in its first iteration, and the launch after it
 * anchors the stream inside the loop; the solve's sequences, cut from
 * there, came three times in it and never after, since later solves are cut
 * from their first launch (on the H200, 11 of 25 processes left 7 to 12
 * graphs never replayed; call 58's trace; prog_worth cgalloc: 5 of 24
 * before, 0 of 19 now). A loop that runs long between flush points is
 * captured all the same, a few iterations later; a structure that recurs
 * inside a step (a network's layers) too. */
#define ONE_INTERVAL 2u

void enc_cand_sighted(const enc_stream_state *st, enc_candidate *c) {
    uint16_t iv = (uint16_t)__atomic_load_n(&st->flush_points, __ATOMIC_RELAXED);
    if (c->count++ == 0)
        c->iv = iv;
    else if (c->iv != iv)
        c->spanned = 1;
}

int enc_capture_enough(const enc_candidate *c, uint32_t need) {
    return c->count >= (c->spanned || need < 2 ? need : need * ONE_INTERVAL);
}

/* ---- a prefix cut by the program ---------------------------------------------------
 * A sequence whose path is a strict prefix of graphs' paths, ended by the
 * program (a synchronize or a read-back inside those paths, where none came
 * before), asks twice ENCORE_MIN_REPEATS sightings, even at a loop's entry
 * (below); and where it is the very beginning of such a graph, its
 * arguments too (the same work, cut earlier: a flush point that moved), as
 * many as a start that stopped repeating does at most
 * (<< DOUBT_MAX_SHIFT). Flush points that move (a warm-up, a phase change)
 * cut prefixes that come a few times and never again: torch.compile's
 * own-graph warm-up read back after 1, 2, 4, 5 or 8 of a graph's 8 fills;
 * its prefixes of 2 and 5 fills, those fills' very arguments, came six times
 * each (H200, call 75), and captured at their second sighting (call 71) or
 * their sixth (calls 73, 74) never replayed. A step's last chunk, cut by its
 * synchronize where longer chunks of the same kernels on other buffers go
 * on, is captured at its sixth sighting. Prefixes that encore's own limits
 * cut (ENCORE_MAX_SEQUENCE, the hold budget's cap, the flush deadline) keep
 * the rules of their start: the cap settles (core/state/types.h), and its
 * sequences replay while it holds. */

/* The trie node where st's open sequence ends, if it is such a prefix; else ENC_NO_NODE. */
static uint32_t cut_short(const enc_stream_state *st) {
    if (st->seq.end_why == ENC_FLUSH_SEQUENCE_FULL || st->seq.end_why == ENC_FLUSH_DEADLINE ||
        st->seq.end_why == ENC_FLUSH_PAUSE)
        return ENC_NO_NODE;
    uint32_t node = enc_store_path_end(&st->store, st->seq.recs, st->seq.n);
    if (node == ENC_NO_NODE || node == ENC_TRIE_ROOT) return ENC_NO_NODE;
    const enc_trie_node *e = &st->store.nodes[node];
    return e->refs && !e->graphs ? node : ENC_NO_NODE;
}

/* Does a graph whose path passes through trie node `e` begin with st's open sequence's very
 * arguments? Walks every graph: asked only of a prefix that has twice ENCORE_MIN_REPEATS sightings. */
static int same_arguments(const enc_stream_state *st, uint32_t e) {
    const enc_store *s = &st->store;
    for (uint32_t id = 1; id < s->nnodes; id++) {
        for (const enc_graph *g = s->nodes[id].graphs; g; g = g->next_at_node) {
            uint32_t up = g->node;
            for (uint32_t d = g->len; d > st->seq.n && up != ENC_TRIE_ROOT; d--) up = s->nodes[up].parent;
            if (up != e) continue;
            uint32_t i = 0;
            while (i < st->seq.n && g->recs[i].afp == st->seq.recs[i].afp) i++;
            if (i == st->seq.n) return 1;
        }
    }
    return 0;
}

/* The shift of the sightings candidate c asks as such a prefix (0: it is none). */
static uint32_t prefix_shift(const enc_stream_state *st, const enc_candidate *c, uint32_t need) {
    uint32_t node = cut_short(st);
    if (node == ENC_NO_NODE) return 0;
    int same = enc_capture_enough(c, need << 1) && same_arguments(st, node);
    ENC_DEBUG("a prefix of %u launches of graphs' paths (%s), ended by %s: sighting %u", st->seq.n,
              same ? "their arguments" : "other arguments, or not due", enc_flush_reason_name(st->seq.end_why),
              c->count);
    return same ? DOUBT_MAX_SHIFT : 1;
}

/* ---- captures at a loop's entry ----------------------------------------------------
 * The other way round: a start where a sequence replayed, and one matched a
 * graph of its within the last DOUBT_SEQS sequences, is a loop's entry that
 * keeps coming (a server's request, a training step). A new path from it (a
 * batch size's kernels) is captured one sighting sooner, at
 * ENCORE_MIN_REPEATS - 1 (at least 2): a serving loop whose requests take
 * one of 32 paths after their first kernel replayed 68% of its launches at
 * the third sighting and 79% at the second (prog_worth buckets; on the
 * H200's changing-batch server the sighting made no difference, the hold
 * rule did: docs/bench/2026-11-27-h200-engine-ab.md). A set-up run twice
 * begins where nothing replayed yet, and still waits for the third. */
int enc_capture_due(const enc_stream_state *st, const enc_candidate *c) {
    uint32_t need = (uint32_t)enc_opt.min_repeats;
    /* Where the host paused (graph_end.c), a stall that came twice at one place (a garbage collection) cuts
     * sequences that never come again: twice the sightings, at a loop's entry too */
    if (st->seq.at_pause) return enc_capture_enough(c, need << 1);
    const enc_trie_node *t = enc_opt.hold_rule ? sequence_start(st) : NULL;
    if (!t) return enc_capture_enough(c, need);
    uint32_t least = need > 2 ? need - 1 : need; /* the fewest any rule below asks */
    if (!enc_capture_enough(c, least)) return 0; /* not due whatever the rule: no trie walk for it */
    uint32_t shift = prefix_shift(st, c, need), b = t->hold_backoff;
    if (!shift && t->replayed && t->since_match < DOUBT_SEQS) return 1;
    if (b >= DOUBT_BACKOFF && t->since_match >= DOUBT_SEQS) {
        uint32_t doubt = b - DOUBT_BACKOFF + 1 < DOUBT_MAX_SHIFT ? b - DOUBT_BACKOFF + 1 : DOUBT_MAX_SHIFT;
        if (doubt > shift) shift = doubt;
    }
    return enc_capture_enough(c, need << shift);
}

/* ---- captures that never replay ---------------------------------------------------
 * The same back-off for capturing, kept at the trie node where the captured
 * sequences end (their structure: kernels and configurations): where
 * CAP_UNPAID_MAX graphs were captured that have not replayed yet, and more
 * than one in CAP_UNPAID_SHARE of the graphs captured there, the next
 * BACKOFF_FIRST << k captures due there are refused (a sequence due for
 * capture that comes again is one more), then one is made; the first replay
 * of a graph there, when fewer than CAP_UNPAID_MAX remain unreplayed, forgets
 * the back-off. Sequences of one structure whose arguments never come again
 * the same way (new buffers every step and no patching, say) so stop paying
 * for captures that never replay, while a long loop body, whose sequences
 * differ in structure, is captured whole before any of it replays. */
#define CAP_UNPAID_MAX 4
#define CAP_UNPAID_SHARE 8

int enc_capture_admits(enc_stream_state *st) {
    if (!enc_opt.hold_rule || st->seq.n == 0) return 1;
    uint32_t node = enc_store_path_end(&st->store, st->seq.recs, st->seq.n);
    if (node == ENC_NO_NODE) return 1;
    enc_trie_node *t = &st->store.nodes[node];
    if (t->cap_skip) {
        if (--t->cap_skip == 0) return 1; /* a probe */
        ENC_TSTAT_ADD(captures_refused, 1);
        return 0;
    }
    if (t->cap_unpaid < CAP_UNPAID_MAX || (uint32_t)t->cap_unpaid * CAP_UNPAID_SHARE < t->caps) return 1;
    uint32_t k = t->cap_backoff < BACKOFF_MAX_SHIFT ? t->cap_backoff : BACKOFF_MAX_SHIFT;
    t->cap_skip = BACKOFF_FIRST << k;
    if (t->cap_backoff < 255) t->cap_backoff++;
    ENC_TSTAT_ADD(captures_given_up, 1);
    ENC_TSTAT_ADD(captures_refused, 1);
    enc_event_capture_given_up(st->seq.recs[0].L, t->cap_unpaid, t->caps, t->cap_skip);
    return 0;
}

void enc_capture_note(enc_store *s, uint32_t node) {
    if (node == ENC_NO_NODE || node == ENC_TRIE_ROOT) return;
    enc_trie_node *t = &s->nodes[node];
    if (t->caps == UINT16_MAX) { /* keep the share, forget the oldest */
        t->caps /= 2;
        t->cap_unpaid /= 2;
    }
    t->caps++;
    t->cap_unpaid++;
}

void enc_capture_paid(enc_store *s, uint32_t node) {
    ENC_TSTAT_ADD(graphs_replayed, 1);
    if (node == ENC_NO_NODE || node == ENC_TRIE_ROOT || node >= s->nnodes) return;
    enc_trie_node *t = &s->nodes[node];
    if (t->cap_unpaid) t->cap_unpaid--;
    if (t->cap_unpaid < CAP_UNPAID_MAX) {
        t->cap_skip = 0;
        t->cap_backoff = 0;
    }
}
