/* encore: the end-of-run hit-rate report and the JSON-lines log (ENCORE_LOG).
 *
 * The engine calls, in this order:
 *   enc_options_init();            policy/options.h
 *   enc_report_init();             records ENCORE_LOG, opens nothing yet, and
 *                                  registers the log's warning sink (base/log.h)
 *   enc_report_event_*(...);       as things happen, from any thread
 *   enc_report_at_exit();          once, at exit, from any thread
 *
 * The JSON log is opened at the first event (or at exit, if the process made
 * CUDA calls), so processes that never touch CUDA (compilers, shells) leave no
 * file behind. Warnings logged before it opens are kept (a few, by base/log)
 * and written after its start event. Every line is one write(2) on an
 * O_APPEND descriptor.
 *
 * Where things are: enc_report_init and the events in core/observe/eventlog.c (with
 * the key list of every event at its top); the list of the report's fields,
 * the JSON summary and the exit path in core/observe/report.c; the table in
 * core/observe/report_table.c; the JSON writer in base/json.c. */
#ifndef ENCORE_REPORT_H
#define ENCORE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/observe/stats.h"

/* One version, CMake's project(VERSION), passed as -DENCORE_VERSION_STRING. */
#ifndef ENCORE_VERSION_STRING
#define ENCORE_VERSION_STRING "unknown"
#endif

/* Entries in the report's top lists (sequences, divergence reasons). */
#define ENC_REPORT_TOP 10

/* Divergence events written in full per kind before rate limiting (then at
 * most one per kind per second, with a count of those left out). */
#define ENC_REPORT_DIV_EVENTS_FIRST 5

void enc_report_init(void);
void enc_report_event_capture(uint64_t seq_id, uint32_t length, const char *first_kernel, double capture_us,
                              double instantiate_us);
void enc_report_event_divergence(const enc_div_info *d);
void enc_report_event_evict(uint64_t seq_id, uint64_t hits);
void enc_report_event_capture_failure(uint64_t seq_id, const char *what, int cuda_error);
void enc_report_event_warning(const char *msg);
/* The program switched encore on or off (encoreSetActive): the launch totals so far, so that a
 * benchmark can tell what its active blocks alone replayed. */
void enc_report_event_switch(int active);
/* event "hold_given_up" (replayed of the last holds, skip: sequences run eagerly before the next try) or
 * "hold_resumed" (why); first_kernel: the first kernel of the sequences starting there (may be NULL). */
void enc_report_event_hold(const char *event, const char *first_kernel, uint32_t replayed, uint32_t holds,
                           uint32_t skip, const char *why);

/* Once (later calls do nothing), at exit, from any thread. If the process
 * made CUDA calls (enc_stats_touched()): prints the table when ENCORE_REPORT,
 * ENCORE_STATS or ENCORE_REPORT_FILE ask for it and writes the summary line
 * to the JSON log when ENCORE_LOG is set. */
void enc_report_at_exit(void);

/* Launch calls a captured sequence saved: (length - 1) x hits, since each
 * replay issues one graph launch instead of `length` kernel launches. */
uint64_t enc_report_saved(const enc_seq_info *s);

/* q, one of the sequences enc_stats_foreach_seq walks: if its graph never replayed (no hits), s's list
 * of such graphs keeps it when it is among the first ENC_UNREPLAYED_SHOWN captured (the lowest ids),
 * in order. The table and the JSON summary name them (enc_summary.unreplayed). */
void enc_report_note_unreplayed(enc_summary *s, const enc_seq_info *q);

/* Pure formatting, for the tests and for enc_report_at_exit. seqs and divs
 * may be in any order and of any size: both functions show the top
 * ENC_REPORT_TOP sequences by launch calls saved and divergence reasons by
 * count, so the table and the JSON summary always list the same entries.
 *
 * enc_report_write_table writes the human-readable table to fd through a
 * fixed buffer (show_calls adds hook calls per class); 0, or -1 if a write
 * failed. enc_report_format_summary writes the JSON summary line (newline
 * included) into buf and returns its length, or 0 if it did not fit. */
int enc_report_write_table(int fd, const enc_summary *s, const enc_seq_info *seqs, size_t nseqs,
                           const enc_div_info *divs, size_t ndivs, int pid, int show_calls);
size_t enc_report_format_summary(char *buf, size_t cap, const enc_summary *s, const enc_seq_info *seqs, size_t nseqs,
                                 const enc_div_info *divs, size_t ndivs, int pid);

/* The JSON name of a kind of divergence: "kernel", "config", "args", "short". */
const char *enc_report_div_kind_key(int kind);

#endif
