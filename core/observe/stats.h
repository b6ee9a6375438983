/* encore: statistics kept by the engine and read by the report.
 *
 * Hot-path counters live in per-thread blocks (plain relaxed stores, no
 * locked instructions); enc_stats_snapshot() adds them up. Rare events
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

#define ENC_FLUSH_CALLS_TOP 5 /* flush points listed by CUDA call */
#define ENC_MAX_CAUSES 1024   /* entry ids a flush can be attributed to */

/* Per stream: the time estimate's measured inputs (enc_stream_state.acct, added with its mutex held). */
enum enc_acct { ENC_ACCT_REPLAYED = 0, ENC_ACCT_REPLAY_NS, ENC_ACCT_CAPTURE_NS, ENC_ACCT_UNPAID_NS, ENC_ACCT_COUNT };
#define ENC_ACCT_ADD(st, i, v) __atomic_store_n(&(st)->acct[i], (st)->acct[i] + (v), __ATOMIC_RELAXED)

#define ENC_STREAMS_SHOWN 8 /* streams listed by the report's time by stream */
/* One stream's time estimate (core/streams/worth.c). */
typedef struct enc_stream_time {
    int index; /* its stream state's (the report's "stream #index") */
    int kind;  /* enum enc_stream_kind (core/state/stream_state.h) */
    uint64_t launches, replayed, saved_ns, lost_ns;
    int64_t balance_ns;
} enc_stream_time;

typedef struct enc_summary {
    uint64_t calls[ENC_CLASS_COUNT]; /* hook calls per class (the program's own calls) */
    uint64_t launches_seen;          /* every kernel launch the program made */
    uint64_t launches_replayed;      /* of those, issued as part of a graph */
    uint64_t launches_eager;         /* issued one by one (never held or held then released) */
    uint64_t graphs_captured;
    uint64_t graph_launches;         /* replays */
    uint64_t graph_launches_patched; /* of those, with changed arguments patched into the graph first */
    uint64_t nodes_patched;          /* nodes those patches wrote (patches per patched replay: / the above) */
    uint64_t graph_structures;       /* places (structures) that got a first graph: graphs per structure */
    uint64_t graphs_evicted;
    uint64_t capture_failures;
    uint64_t oom_retries; /* program allocations made again after encore freed its graphs for memory */
    uint64_t divergences;
    uint64_t divergences_by_kind[ENC_DIV_KIND_COUNT];
    uint64_t flushes[ENC_FLUSH_REASON_COUNT];  /* times held launches were released, per reason */
    uint64_t eager_by[ENC_EAGER_REASON_COUNT]; /* launches_eager, by why */
    uint64_t learnt[ENC_LEARN_OUTCOME_COUNT]; /* sequences that ended without a replay, by what learning made of them */
    /* The CUDA calls that issued held launches most often (flush points), best first. */
    int n_flush_calls;
    const char *flush_call_names[ENC_FLUSH_CALLS_TOP];
    uint64_t flush_call_counts[ENC_FLUSH_CALLS_TOP];
    uint64_t deferred_ns; /* CPU time of recording and holding a held launch (sampled), without release_ns */
    uint64_t deferred_samples;
    uint64_t release_ns;            /* CPU time of sequence ends a sampled launch caused (release, replay, learning) */
    uint64_t release_samples;       /* those ends (full, or the anchor came again) */
    uint64_t holds;                 /* holds that ended (core/graphs/hold.c) */
    uint64_t holds_replayed;        /* of those, in a replay */
    uint64_t held_unpaid_ns;        /* time launches were held in holds that did not replay */
    uint64_t holds_given_up;        /* times holding at a start was given up */
    uint64_t holds_resumed;         /* times it was tried again (back-off, or a new graph there) */
    uint64_t streams_left_alone;    /* times a stream's launches came further apart than ENCORE_MAX_GAP */
    uint64_t streams_rested;        /* times a stream's launches replayed nothing and stopped being recorded (rest.c) */
    uint64_t launches_unrecorded;   /* launches passed through while their stream rested */
    uint64_t streams_rested_losing; /* of streams_rested, because its windows lost time (rest.c) */
    uint64_t streams_rested_own_graphs; /* of streams_rested, decided at the program's own graph launch */
    uint64_t streams_rested_process;    /* of streams_rested, new streams of a process whose streams did not pay */
    uint64_t program_graph_launches;    /* graphs the program launched itself (cuGraphLaunch) */
    uint64_t switched_off;              /* times the program switched encore off (encoreSetActive(0)) */
    uint64_t launches_passive;          /* launches made while it was switched off (issued, counted) */
    uint64_t graphs_replayed;           /* graphs that replayed at least once */
    uint64_t captured_never_replayed;   /* graphs_captured - graphs_replayed (so far) */
    uint64_t captures_given_up;         /* times capturing at a start whose graphs never replayed was given up */
    uint64_t captures_refused;          /* captures due there and not made meanwhile */
    /* Time (core/observe/stats.c enc_stats_time): measured inputs, then the estimate. */
    uint64_t launch_ns, launch_samples;         /* the driver's time in sampled eager launches */
    uint64_t record_ns, record_samples;         /* encore's time recording those (sampled ones alone) */
    uint64_t replay_ns;                         /* patching and launching graphs (every replay) */
    uint64_t capture_ns;                        /* capturing and instantiating (every capture, failed ones too) */
    uint64_t per_launch_ns;                     /* launch_ns / launch_samples */
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

/* One captured sequence (its graph), for the report's top list. */
typedef struct enc_seq_info {
    uint64_t id;
    uint32_t length;        /* launches in the graph */
    uint64_t hits;          /* graph launches */
    const char *kernels[3]; /* names of the first kernels (may be NULL) */
    int evicted;
} enc_seq_info;

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
    uint64_t calls[ENC_CLASS_COUNT];
    uint64_t launches_seen, launches_replayed, launches_eager, graph_launches, graph_launches_patched;
    uint64_t nodes_patched, graph_structures;
    uint64_t divergences, divergences_by_kind[ENC_DIV_KIND_COUNT];
    uint64_t flushes[ENC_FLUSH_REASON_COUNT];
    uint64_t eager_by[ENC_EAGER_REASON_COUNT];
    uint64_t learnt[ENC_LEARN_OUTCOME_COUNT];
    uint64_t flushes_by_cause[ENC_MAX_CAUSES];
    uint64_t deferred_ns, deferred_samples, release_ns, release_samples;
    uint64_t holds, holds_replayed, held_unpaid_ns, holds_given_up, holds_resumed;
    uint64_t streams_left_alone, switched_off, launches_passive;
    uint64_t streams_rested, launches_unrecorded, streams_rested_losing;
    uint64_t streams_rested_own_graphs, program_graph_launches, streams_rested_process;
    uint64_t graphs_replayed, captures_given_up, captures_refused;
    uint64_t launch_ns, launch_samples, replay_ns, capture_ns, record_ns, record_samples;
    int in_use; /* a live thread writes it; atomic (an exited thread's block goes to the next new thread) */
    struct enc_tstats *next;
} enc_tstats;

enc_tstats *enc_tstats_slow(void);
/* Count one hook call of class `cls` (thread-local, no locked instruction). */
void enc_stats_count_call(int cls);
extern __thread enc_tstats *enc_tstats_tls __attribute__((tls_model("initial-exec")));
static inline enc_tstats *enc_tstats_get(void) {
    enc_tstats *t = enc_tstats_tls;
    return __builtin_expect(t != 0, 1) ? t : enc_tstats_slow();
}
#define ENC_TSTAT_ADD(field, v)                                                  \
    do {                                                                         \
        enc_tstats *t_ = enc_tstats_get();                                       \
        if (t_) __atomic_store_n(&t_->field, t_->field + (v), __ATOMIC_RELAXED); \
    } while (0)
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
