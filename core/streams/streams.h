/* encore: the streams floor (core/streams/): the stream-state table
 * (stream.c), each device's primary context (primary.c), recording a launch
 * (record.c) and a stream's open sequence (sequence.c). Resting and the
 * time estimate: core/streams/rest.h.
 *
 * Floor rule: files here use core/graphs/, core/state/, core/observe/ and
 * below, never core/path/ (scripts/check-includes); no callback from above
 * is registered here. */
#ifndef ENCORE_STREAMS_H
#define ENCORE_STREAMS_H

#include <cuda.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/enums.h"
#include "core/state/gate.h"
#include "core/state/stream_state.h"
#include "policy/options.h"

/* ---- stream.c: the stream-state table (its variables: core/state/gate.h) --------- */

/* The state of the stream a call names (NULL: legacy, or per-thread for
 * _ptsz/_ptds entry points), created if `create`; NULL if there is none. */
enc_stream_state *enc_stream_for(CUstream s, int per_thread, int create);
/* A launch on explicit stream s (state st) rested: if st is this thread's most recent stream state,
 * its next launch there takes the shortest way (core/path/launch.c enc_core_launch_rests). */
void enc_stream_note_rests(CUstream s, const enc_stream_state *st);
/* The stream was destroyed: end its sequence, forget what it learnt, free the state for reuse. */
void enc_stream_retire(enc_stream_state *st);
/* States in enc_states, read under the table's lock (one added later is added after what this thread did). */
int enc_stream_count(void);
void enc_stream_forget_thread(void); /* a forked child: this thread's cached id and states are its parent's */
/* The program begins a capture (enc_hot.prog_capturing is raised already): take
 * states_mu and every state's mutex once, ending each open sequence (what is
 * held is issued): the barrier of prog_capture.c. */
void enc_stream_pass_all(enum enc_flush_reason why);
/* ctx was destroyed (NULL: one not named: only streams that learnt nothing):
 * its streams, side streams, events, graphs are gone: forget the handles. */
void enc_stream_context_gone(CUcontext ctx);

/* ---- primary.c: each device's primary context --------------------------------------- */

void enc_context_note(CUcontext ctx); /* a stream's, first known: a primary context is remembered (context.c) */
CUcontext enc_context_known_primary(CUdevice dev); /* NULL: not looked up */
void enc_context_remember_primary(CUdevice dev, CUcontext c);

/* ---- record.c: recording and fingerprinting a launch into a sequence ------------ */

int enc_record_init(enc_seq *seq, uint32_t max_launches); /* 0, or -1 out of memory */
/* Record launch l (layout L) as the pending launch recs[n]. Returns 0, or a negative
 * code if it cannot be recorded (nothing of it is kept), which enc_record_why names. */
int enc_record_launch(enc_seq *seq, const enc_launch *l, const enc_layout *L);
const char *enc_record_why(int code);
/* The pending launch becomes part of the sequence. A poisoned sequence is
 * never learnt: its counts no longer matter (and its pending record may not
 * have been written). */
static inline void enc_record_commit(enc_seq *seq) {
    if (!seq->poisoned) seq->nops += (uint32_t)seq->recs[seq->n].L->is_op;
    seq->n++;
}
/* The sequence's hashes (hash, shash) over recs[0..n), folded in order: computed when
 * learning reads them, at the sequence's end, not at every launch (a held sequence
 * replayed exactly never needs them). Only for a sequence that is not poisoned. */
void enc_record_hash(enc_seq *seq);
/* An empty sequence (the arena's memory is kept). */
void enc_record_reset(enc_seq *seq);
/* The pending launch, taken out of the sequence to begin the next one: its
 * record, and where its bytes lie in the arena (past arena_used, untouched
 * while the sequence ends: releasing and learning only read the arena). */
typedef struct enc_detached_rec {
    enc_rec rec;
    size_t off, len;
} enc_detached_rec;
enc_detached_rec enc_record_detach_pending(enc_seq *seq);
/* Make a detached launch the pending launch of the (empty) sequence. */
void enc_record_attach_pending(enc_seq *seq, const enc_detached_rec *p);

/* ---- sequence.c: a stream's open sequence: open, record, cut, end ---------------- */

void enc_sequence_open(enc_stream_state *st);
/* After enc_record_launch returned rc: a launch not recorded poisons the sequence (0); the first
 * recorded launch after a flush point anchors; one half a longest sequence or more past the anchor
 * that is the anchor again ends the sequence before it (since_anchor already counts it). */
int enc_sequence_recorded(enc_stream_state *st, const enc_layout *L, int rc);
/* ENCORE_LOG_LEVEL=trace: the launch just recorded (rc: enc_record_launch's result), one line. */
void enc_sequence_trace_launch(const enc_stream_state *st, const enc_layout *L, int rc);
/* Open the sequence if needed and record l as its pending launch; when l is
 * the anchor coming again, the sequence ends before it. Returns 1 if recorded,
 * 0 if not (the sequence is poisoned). Inline: the usual launch, recorded and
 * too close to the anchor to be it again, only counts. */
static inline int enc_sequence_record(enc_stream_state *st, const enc_launch *l, const enc_layout *L) {
    if (!st->open) enc_sequence_open(st);
    int rc = enc_record_launch(&st->seq, l, L);
    if (__builtin_expect(enc_hot.trace, 0)) enc_sequence_trace_launch(st, L, rc);
    if (__builtin_expect(rc == 0 && st->anchor_set, 1) && ++st->since_anchor < (uint32_t)enc_opt.max_sequence / 2)
        return 1;
    return enc_sequence_recorded(st, L, rc);
}
/* The sequence ends (a flush point, or ENC_FLUSH_SEQUENCE_FULL): release, learn, reset. */
void enc_sequence_end(enc_stream_state *st, enum enc_flush_reason why);
/* The same, caused by the launch being recorded (full, or its anchor came again): timed. */
void enc_sequence_end_at_launch(enc_stream_state *st, enum enc_flush_reason why);
/* ENCORE_GRAPH_END (core/graphs/graph_end.c): held launches that reached trie node c complete a graph whose
 * sequence ended at a call of the program, and no longer graph goes on from there. */
static inline int enc_sequence_graph_end_due(const enc_stream_state *st, uint32_t c) {
    /* the option first: off (the default), c's node is not read (a cache miss a held launch) */
    return __builtin_expect(enc_opt.graph_end, 0) && st->store.nodes[c].end_early && st->store.nodes[c].end_score >= 0;
}
/* ... so the sequence ends now, its graph replayed (with st->mu held). */
void enc_sequence_end_at_graph_end(enc_stream_state *st);
/* The sequence ends where the host paused before (pause `slot`, ENCORE_PAUSE_END: graph_end.c), what it holds
 * replayed or issued now (with st->mu held). */
void enc_sequence_end_at_pause(enc_stream_state *st, uint32_t slot);
/* The stream's context is gone: drop the open sequence, held launches too, issuing nothing. */
void enc_sequence_discard(enc_stream_state *st);
/* The longest sequence for launches this far apart (ENCORE_HOLD_BUDGET), the
 * stream's for its pace, and where its open one ends (ENCORE_HOLD_RAMP). */
uint32_t enc_sequence_cap_for_pace(uint64_t gap_ns);
uint32_t enc_sequence_cap(const enc_stream_state *st);
uint32_t enc_sequence_limit(const enc_stream_state *st);
/* ENCORE_HOLD_RAMP: whether sequences start short after a flush point now
 * (1, or 2 while the host waits for the GPU), and the host's wait in one
 * synchronizing call, for 2. */
int enc_sequence_ramps(void);
/* A flush point on a stream with nothing open (no lock needed), and whether
 * st's last recorded launch ends its sequence under ENCORE_TAIL_CUT. */
void enc_sequence_flush_point(enc_stream_state *st);
int enc_sequence_tail_due(enc_stream_state *st);
void enc_sequence_note_wait(uint64_t ns);

#endif
