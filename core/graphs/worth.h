/* encore: the capture rule of core/graphs/hold.c, for the files that capture
 * (learn.c), replay (replay.c) and report (events.c): captures that never
 * replay are given up where they end, with a back-off. */
#ifndef ENCORE_WORTH_H
#define ENCORE_WORTH_H

#include "core/state/stream_state.h"

/* One more sighting of candidate c, st's open sequence (its structure, its configuration): counted, and
 * whether it came in another of st's flush intervals than the first (hold.c). */
void enc_cand_sighted(const enc_stream_state *st, enc_candidate *c);
/* Are c's sightings (st's open sequence, its structure or its configuration) enough to capture it, where
 * it begins? (hold.c) */
int enc_capture_due(const enc_stream_state *st, const enc_candidate *c);
/* ... `need` sightings asked for (ENCORE_MIN_REPEATS, or fewer or more where it begins). */
int enc_capture_enough(const enc_candidate *c, uint32_t need);
/* st's open sequence ended; it matched a graph of its start (had a graph) or not. */
void enc_hold_start_seen(enc_stream_state *st, int matched);
/* st's open sequence ended, replayed. */
void enc_hold_start_replayed(enc_stream_state *st);
/* May st's open sequence be captured, as graphs of its structure replayed? (counts a refusal) */
int enc_capture_admits(enc_stream_state *st);
/* A graph ending at trie node `node` was captured. */
void enc_capture_note(enc_store *s, uint32_t node);
/* A graph ending at `node` replayed for the first time. */
void enc_capture_paid(enc_store *s, uint32_t node);
/* Capturing sequences that begin with a launch of `L` was given up there: `unpaid` of the `caps` graphs
 * captured there never replayed; `skip`: captures refused before the next try. */
void enc_event_capture_given_up(const enc_layout *L, uint32_t unpaid, uint32_t caps, uint32_t skip);

#endif
