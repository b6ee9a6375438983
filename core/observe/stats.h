/* encore: statistics kept by the engine and read by the report.
 *
 * Hot-path counters live in per-thread blocks (plain relaxed stores, no
 * locked instructions); enc_stats_snapshot() adds them up. Those that are
 * one uint64_t each come from one list, ENC_TSTAT_COUNTERS
 * (core/observe/stats_counters.h), which also gives their report rows. Rare events
 * (captures, divergences) are recorded under the engine's locks.
 *
 * Floor rule (core/observe/, the lowest floor of the engine: statistics,
 * the event log, the report, NVTX, kernel names, tools): the observers are
 * told, and never name the engine; they use only policy/ and base/
 * (scripts/check-includes). What they need from above is passed in, or asked
 * through the one registered callback struct: enc_stats_engine
 * (core/observe/stats_engine.h). */
#ifndef ENCORE_STATS_H
#define ENCORE_STATS_H

#include <stdint.h>

#include "base/enums.h"
#include "base/thread.h"
#include "core/observe/stats_counters.h"

#define ENC_FLUSH_CALLS_TOP 5 /* flush points listed by CUDA call */
#define ENC_MAX_CAUSES 1024   /* entry ids a flush can be attributed to */

/* Per stream: the time estimate's measured inputs (enc_stream_state.acct, added with its mutex held). */
enum enc_acct { ENC_ACCT_REPLAYED = 0, ENC_ACCT_REPLAY_NS, ENC_ACCT_CAPTURE_NS, ENC_ACCT_UNPAID_NS, ENC_ACCT_COUNT };
#define ENC_ACCT_ADD(st, i, v) __atomic_store_n(&(st)->acct[i], (st)->acct[i] + (v), __ATOMIC_RELAXED)

#define ENC_STREAMS_SHOWN 8 /* streams listed by the report's time by stream */

/* The driver's time for an eager launch, sampled: a histogram of 250 ns bins
 * (the last holds every sample of 12 us and more), whose median is the cost
 * of a launch in the time estimate. A mean over a few dozen samples read two
 * to three times the median where a few launches waited (Hugging Face
 * generate on an H200, 2026-11-28: 9.4 us a launch from 115 samples). */
#define ENC_LAUNCH_BINS 48
#define ENC_LAUNCH_BIN_NS 250u
static inline unsigned enc_launch_bin(uint64_t ns) {
    uint64_t b = ns / ENC_LAUNCH_BIN_NS;
    return b < ENC_LAUNCH_BINS - 1 ? (unsigned)b : ENC_LAUNCH_BINS - 1;
}
/* The median of a launch histogram (the middle of its bin), 0 if it is empty. */
static inline uint64_t enc_launch_median_ns(const uint64_t *bins) {
    uint64_t n = 0, below = 0;
    for (int i = 0; i < ENC_LAUNCH_BINS; i++) n += bins[i];
    for (int i = 0; i < ENC_LAUNCH_BINS && n; i++) {
        below += bins[i];
        if (2 * below >= n) return (uint64_t)i * ENC_LAUNCH_BIN_NS + ENC_LAUNCH_BIN_NS / 2;
    }
    return 0;
}
/* One stream's time estimate (core/streams/worth.c). */
typedef struct enc_stream_time {
    int index; /* its stream state's (the report's "stream #index") */
    int kind;  /* enum enc_stream_kind (core/state/stream_state.h) */
    uint64_t launches, replayed, saved_ns, lost_ns;
    int64_t balance_ns;
} enc_stream_time;

/* One captured sequence (its graph), for the report's lists. */
typedef struct enc_seq_info {
    uint64_t id;
    uint32_t length;        /* launches in the graph */
    uint64_t hits;          /* graph launches */
    const char *kernels[3]; /* names of the first kernels (may be NULL) */
    int evicted;
} enc_seq_info;

#define ENC_UNREPLAYED_SHOWN 8 /* graphs captured that never replayed, named by the report */

typedef struct enc_summary {
    ENC_TSTAT_COUNTERS(ENC_TSTAT_FIELD) /* the summed counters, one list (stats_counters.h); the rest: */
    uint64_t calls[ENC_CLASS_COUNT];    /* hook calls per class (the program's own calls) */
    uint64_t graphs_captured;
    uint64_t graphs_evicted;
    uint64_t capture_failures;
    uint64_t oom_retries; /* program allocations made again after encore freed its graphs for memory */
    uint64_t divergences_by_kind[ENC_DIV_KIND_COUNT];
    uint64_t flushes[ENC_FLUSH_REASON_COUNT];  /* times held launches were released, per reason */
    uint64_t eager_by[ENC_EAGER_REASON_COUNT]; /* launches_eager, by why */
    uint64_t learnt[ENC_LEARN_OUTCOME_COUNT]; /* sequences that ended without a replay, by what learning made of them */
    /* The CUDA calls that issued held launches most often (flush points), best first. */
    int n_flush_calls;
    const char *flush_call_names[ENC_FLUSH_CALLS_TOP];
    uint64_t flush_call_counts[ENC_FLUSH_CALLS_TOP];
    uint64_t captured_never_replayed; /* graphs_captured - graphs_replayed (so far) */
    int n_unreplayed; /* the first of those captured, in order: filled at exit (report.c), not by a snapshot */
    enc_seq_info unreplayed[ENC_UNREPLAYED_SHOWN];
    /* Time (core/streams/worth.c enc_stats_time): the estimate, from the measured inputs (ENC_TSTAT_TIME...). */
    uint64_t per_launch_ns;                     /* the median of launch_hist */
    uint64_t per_launch_mean_ns;                /* launch_ns / launch_samples */
    uint64_t launch_hist[ENC_LAUNCH_BINS];      /* the sampled eager launches' times, summed over threads */
    uint64_t self_check_permille;               /* the checks' mean active / passive x 1000 (0: none decided) */
    uint64_t recording_ns;                      /* estimate: launches recorded x encore's time recording one */
    uint64_t time_saved_ns;                     /* launches_replayed x per_launch_ns */
    uint64_t time_lost_ns;                      /* replay_ns + capture_ns + held_unpaid_ns + recording_ns */
    int64_t time_balance_ns;                    /* saved - lost */
    int n_streams;                              /* streams that recorded launches; the first ENC_STREAMS_SHOWN: */
    enc_stream_time streams[ENC_STREAMS_SHOWN]; /* ... those that recorded the most, most first */
    uint64_t event_nodes_turned_back; /* event nodes turned back to encore's placeholder: their event destroyed */
    uint64_t events_not_held;         /* 1: events churn, records and waits end sequences again (nodes.c) */
    int disabled;                     /* encore switched itself off after an internal failure */
} enc_summary;

/* One divergence reason, aggregated by (kind, expected kernel, got kernel, argument). */
typedef struct enc_div_info {
    enum enc_divergence_kind kind;
    const char *expected; /* kernel name expected at that position (may be NULL) */
    const char *got;      /* kernel name that came (may be NULL for ENC_DIV_SHORT) */
    int arg_index;        /* first differing argument for ENC_DIV_ARGS, else -1 */
    uint32_t position;    /* position in the sequence where it diverged */
    uint64_t count;
} enc_div_info;

void enc_stats_snapshot(enc_summary *out);
/* Calls fn for every sequence ever captured (evicted ones too). */
/* From now on the lists below are read only if their lock is free at once (exit inside encore, core/path/init.c). */
void enc_stats_no_wait(void);
void enc_stats_foreach_seq(void (*fn)(const enc_seq_info *, void *), void *ctx);
void enc_stats_foreach_divergence(void (*fn)(const enc_div_info *, void *), void *ctx);
/* True once the program has made any CUDA call through encore. */
int enc_stats_touched(void);

/* ---- engine side ----------------------------------------------------------
 * Per-thread counters: only the owning thread writes (relaxed atomic stores,
 * no locked instruction); snapshots read them with relaxed loads. */
typedef struct enc_tstats {
    /* What every launch touches, in the first cache line (the block is aligned to one): calls[],
     * then launches_seen and the rest of ENC_TSTAT_LAUNCHES (first in the list). */
    uint64_t calls[ENC_CLASS_COUNT];
    ENC_TSTAT_COUNTERS(ENC_TSTAT_FIELD) /* the summed counters, one list (stats_counters.h); the arrays: */
    uint64_t divergences_by_kind[ENC_DIV_KIND_COUNT];
    uint64_t flushes[ENC_FLUSH_REASON_COUNT];
    uint64_t eager_by[ENC_EAGER_REASON_COUNT];
    uint64_t learnt[ENC_LEARN_OUTCOME_COUNT];
    uint64_t launch_hist[ENC_LAUNCH_BINS];
    uint64_t flushes_by_cause[ENC_MAX_CAUSES];
    int in_use; /* a live thread writes it; atomic (an exited thread's block goes to the next new thread) */
    struct enc_tstats *next;
} __attribute__((aligned(64))) enc_tstats;

enc_tstats *enc_tstats_slow(void);
/* Count one hook call of class `cls` (thread-local, no locked instruction). */
void enc_stats_count_call(int cls);
static inline enc_tstats *enc_tstats_get(void) {
    enc_tstats *t = enc_thr.tstats;
    return __builtin_expect(t != 0, 1) ? t : enc_tstats_slow();
}
#define ENC_TSTAT_ADD(field, v)                                                  \
    do {                                                                         \
        enc_tstats *t_ = enc_tstats_get();                                       \
        if (t_) __atomic_store_n(&t_->field, t_->field + (v), __ATOMIC_RELAXED); \
    } while (0)
/* One sampled eager launch: its time into the mean and the histogram. */
static inline void enc_stats_launch_sample(uint64_t ns) {
    enc_tstats *t = enc_tstats_get();
    if (!t) return;
    unsigned b = enc_launch_bin(ns);
    __atomic_store_n(&t->launch_ns, t->launch_ns + ns, __ATOMIC_RELAXED);
    __atomic_store_n(&t->launch_samples, t->launch_samples + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->launch_hist[b], t->launch_hist[b] + 1, __ATOMIC_RELAXED);
}
/* n launches issued one by one, for `why` (enum enc_eager_reason). */
#define ENC_COUNT_EAGER(why, n)                                                                \
    do {                                                                                       \
        enc_tstats *t_ = enc_tstats_get();                                                     \
        if (t_) {                                                                              \
            __atomic_store_n(&t_->launches_eager, t_->launches_eager + (n), __ATOMIC_RELAXED); \
            __atomic_store_n(&t_->eager_by[why], t_->eager_by[why] + (n), __ATOMIC_RELAXED);   \
        }                                                                                      \
    } while (0)

/* Which CUDA call is flushing on this thread (entry id + 1; 0: none, e.g. a
 * open sequence that filled up, or the deadline). Set by the caller of the core's
 * flush functions; held launches they issue are counted against it. */
extern __thread int enc_flush_cause __attribute__((tls_model("initial-exec")));
/* Names for the cause ids (the interposer's entry names), registered once. */
void enc_stats_set_cause_names(const char *const *names, int n);
static inline void enc_stats_count_flush(void) {
    int c = enc_flush_cause;
    if (c > 0 && c <= ENC_MAX_CAUSES) ENC_TSTAT_ADD(flushes_by_cause[c - 1], 1);
}

/* Rare events, recorded under the stats lock. */
uint64_t enc_stats_new_seq(uint32_t length, const char *k0, const char *k1, const char *k2);
void enc_stats_seq_hit(uint64_t id, uint64_t hits);
void enc_stats_seq_evicted(uint64_t id);
void enc_stats_divergence(enum enc_divergence_kind kind, const char *expected, const char *got, int arg_index,
                          uint32_t position);
void enc_stats_graph_captured(void);
void enc_stats_graph_evicted(void);
void enc_stats_capture_failed(void);
void enc_stats_oom_retry(void);
void enc_stats_set_disabled(void);
void enc_stats_touch(void);
extern int enc_stats_touched_flag; /* enc_stats_touched(), for inline readers */

#endif
