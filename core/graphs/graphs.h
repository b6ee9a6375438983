/* encore: the graphs floor (core/graphs/): learning and capturing
 * (learn.c), release and replay (replay.c), the hold rule (hold.c; the
 * capture rule: worth.h), the process-wide graph bound (room.c), rare events
 * told to the observers (events.c). Its other headers: store.h (a stream's
 * store), layout.h (parameter layouts), issue.h (issuing on a stream),
 * nodes.h (stream operations as nodes, the event table).
 *
 * Floor rule: files here use core/state/, core/observe/ and below, never
 * core/streams/ or core/path/ (scripts/check-includes); no callback from
 * above is registered here. What they need of a stream is its state
 * (core/state/stream_state.h), passed in. */
#ifndef ENCORE_GRAPHS_H
#define ENCORE_GRAPHS_H

#include <cuda.h>
#include <stdint.h>

#include "base/enums.h"
#include "core/state/stream_state.h"

/* ---- learn.c: candidates, capture, a graph's kernel nodes ------------------------ */

/* The candidate for `hash` in `table` (ENC_CAND_CAP slots), or NULL. With
 * `create`, a free slot or the least-counted counting candidate near its home
 * is taken over when it is not there. */
enc_candidate *enc_cand_find(enc_candidate *table, uint64_t hash, int create);
/* Count the ended sequence towards capture, and capture it when it is due. */
void enc_learn_sequence(enc_stream_state *st);
/* ctx was destroyed (NULL: any context): forget encore's capture stream there. */
void enc_learn_context_gone(CUcontext ctx);
/* encore's capture stream of ctx (created if needed, with ctx current), or NULL. */
CUstream enc_learn_capture_stream(CUcontext ctx);

/* ---- replay.c: matching, release, replay, patching ------------------------------- */

/* Release what st holds at a flush point; the sequence goes on. */
void enc_release_at_flush_point(enc_stream_state *st, enum enc_flush_reason why);
/* Release what st holds as its sequence ends. */
void enc_release_at_sequence_end(enc_stream_state *st, enum enc_flush_reason why);
/* A launch of f (layout L, NULL if not known yet) continues no graph from
 * the node st holds at: note the divergence (if `note` and no graph ends
 * there), then release. */
void enc_release_on_divergence(enc_stream_state *st, CUfunction f, const enc_layout *L, int note);
/* Would st's sequence, recorded without holding, have replayed a graph (exactly or once patched)? */
int enc_would_replay(const enc_stream_state *st);

/* ---- hold.c: hold only where holding pays ------------------------------------------ */
/* A hold that ends without a replay costs (the GPU may idle while launches wait); a start (a root child of
 * the trie) whose holds keep ending so is given up for a while: launches that would begin a hold there run
 * eagerly. (The capture rule, core/graphs/worth.h, gives up captures that never replay.) */
int enc_hold_skip_slow(enc_stream_state *st, uint32_t start);
/* May a hold start at root child `start` now? (counts a sequence seen there while given up) */
static inline int enc_hold_admits(enc_stream_state *st, uint32_t start) {
    return __builtin_expect(st->store.nodes[start].hold_skip == 0, 1) || enc_hold_skip_slow(st, start);
}
/* The hold that started at st->hold_start ended, with a replay or not (with st->mu held). */
void enc_hold_outcome(enc_stream_state *st, int replayed);
/* A graph was captured at `node`: holding at its sequence's start is tried afresh. */
void enc_hold_new_graph(enc_store *s, uint32_t node);

/* ---- graph_end.c: held launches replayed at their graph's end ------------------------ */
/* Recompute whether held launches that reach trie node `id` replay at once (its graphs' sequences ended at a
 * call of the program, and no longer graph continues from it). */
void enc_graph_end_update(enc_store *s, uint32_t id);
/* st's held launches were replayed at the end of trie node `node`'s graph (with st->mu held). */
void enc_graph_end_mark(enc_stream_state *st, uint32_t node);
/* ... or st's sequence ended at pause `slot`, where the host paused before (ENCORE_PAUSE_END); `held`: what it
 * held was replayed or issued there. */
void enc_graph_end_mark_pause(enc_stream_state *st, uint32_t slot, int held);
/* The flush deadline released st's held launches (the host paused; with st->mu held): the sequence ends before
 * its next launch, and where it ended (launches since the flush point, the last one's structure) is learnt. */
void enc_graph_end_deadline(enc_stream_state *st, int replayed);
/* The open sequence's last launch is where the host paused before, and the pause is due: its slot, or -1. The
 * first test is inline: one load and a bit test a launch where no pause was learnt (launch.c). */
int enc_pause_due_slow(const enc_stream_state *st, uint32_t pos);
static inline int enc_pause_due(const enc_stream_state *st) {
    if (__builtin_expect(st->pause_bits == 0, 1)) return -1;
    uint32_t pos = __atomic_load_n(&st->since_flush, __ATOMIC_RELAXED) + st->seq.n;
    if (!((st->pause_bits >> (pos & 63)) & 1)) return -1;
    return enc_pause_due_slow(st, pos);
}
/* A call of the program came on st (a flush point, with st->mu held): the last replay at a graph's end was
 * right, or launches held to such an end waited for it (called before they are released). */
void enc_graph_end_call(enc_stream_state *st);
/* Work is recorded on st after a replay at a graph's end, before any call of the program: that node's graphs
 * wait for their end again, unless the end was a pause's and the work came after a pause again. */
void enc_graph_end_work(enc_stream_state *st);

/* ---- room.c: the process-wide graph limit ------------------------------------------ */

/* Room for one more graph under ENCORE_MAX_GRAPHS: evicts the process's least
 * recently used graphs as needed. With self->mu held (self does not hold
 * launches). Returns 0 if there is no room (the streams that have graphs are
 * busy). */
int enc_reclaim_graph_room(enc_stream_state *self);

/* ---- events.c: rare events, counted and written to the report and event log ------ */

/* A graph of len launches (recs) was captured; returns its sequence id. */
uint64_t enc_event_graph_captured(uint32_t len, const enc_rec *recs, uint64_t capture_ns, uint64_t instantiate_ns);
void enc_event_capture_failed(const char *what, CUresult r);
void enc_event_divergence(enum enc_divergence_kind kind, const enc_layout *expected, const enc_layout *got, int arg,
                          uint32_t pos);
void enc_event_graph_evicted(const enc_graph *g);
/* g was launched in place of n held launches (patched: arguments patched in first). */
void enc_event_graph_hit(const enc_graph *g, uint32_t n, int patched);
void enc_event_disabled(const char *why);
/* Holding at a start whose first launch is of `L` was given up (skip: sequences it runs eagerly before the next
 * try), or resumed (`why`: "back-off" or "new graph"). */
void enc_event_hold_given_up(const enc_layout *L, uint32_t replayed, uint32_t holds, uint32_t skip);
void enc_event_hold_resumed(const enc_layout *L, const char *why);

#endif
