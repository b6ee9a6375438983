/* encore: streams whose learning does not pay rest (rest.c), and the time
 * estimate they and the report read (worth.c). */
#ifndef ENCORE_REST_H
#define ENCORE_REST_H

#include <stdint.h>

#include "core/observe/stats.h"
#include "core/state/stream_state.h"
#include "policy/options.h"

/* A launch on st while it rests: 1 if it passes through unrecorded (no lock taken). */
static inline int enc_rest_take(enc_stream_state *st) {
    if (__atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) <= 0 || __atomic_load_n(&st->join_pending, __ATOMIC_RELAXED))
        return 0;
    return __atomic_sub_fetch(&st->rest_left, 1, __ATOMIC_RELAXED) >= 0;
}
#define ENC_REST_SMALL_SEQUENCES 1024u /* sequences too small to capture, and none other, end a window early */
/* With st->mu held, before a launch is recorded (n 1): counts it into the window, and
 * at the window's end decides. 1 if st rests from now on (this launch included). */
int enc_rest_note_work_slow(enc_stream_state *st, uint32_t n);
/* Inside a window (the usual case), inline: the launch is only counted. */
static inline int enc_rest_note_work(enc_stream_state *st, uint32_t n) {
    if (!enc_opt.hold_rule) return 0;
    if (__atomic_load_n(&st->rest_left, __ATOMIC_RELAXED) >= 0 && st->win_launches + n < st->win_len &&
        st->win_small < ENC_REST_SMALL_SEQUENCES) {
        st->win_launches += n;
        return 0;
    }
    return enc_rest_note_work_slow(st, n);
}
/* With st->mu held, after the program launched a graph of its own on st's stream. */
void enc_rest_program_graph(enc_stream_state *st);
/* With st->mu held: a state that names a new stream starts a first window, or a rest
 * where the process's streams did not pay (the process's back-off). */
void enc_rest_forget(enc_stream_state *st);
/* With st->mu held: st's stream is gone and its state is about to name another; its
 * unfinished window counts for the process's back-off. */
void enc_rest_stream_gone(enc_stream_state *st);

/* ---- worth.c: the time estimate ---------------------------------------------------- */

/* Did st's window (since new_window in rest.c) lose host time? (this thread's measures; 0 if not measured) */
int enc_window_lost_time(const enc_stream_state *st);
/* The time estimate of s from its measured fields, in total and by stream (registered with the statistics:
 * core/observe/stats_engine.h enc_stats_engine). */
void enc_stats_time(enc_summary *s);

#endif
