/* encore: statistics.
 *
 * Hot counters are per thread (enc_tstats, see stats.h); sequences and
 * divergence reasons are rare and kept in small tables under one lock. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/observe/stats.h"
#include "core/observe/stats_engine.h"
#include "core/observe/topk.h"

static enc_tstats *all_tstats; /* every thread's block, pushed once per thread */
static uint64_t g_captured, g_evicted, g_capture_failures, g_oom_retries;
static int g_disabled;
int enc_stats_touched_flag; /* read inline by enc_core_launch_passes (engine.h) */

/* Blocks are never freed: a thread that exits leaves its counts in its block
 * and the block to the next new thread, which goes on adding to them. So
 * there are as many blocks as threads ever alive at once, not ever made. */
static pthread_key_t tstats_key;
static pthread_once_t tstats_key_once = PTHREAD_ONCE_INIT;
static int tstats_key_ok;

static void tstats_release(void *block) {
    enc_thr.tstats = NULL; /* a later count from this thread's exit takes a block again */
    __atomic_store_n(&((enc_tstats *)block)->in_use, 0, __ATOMIC_RELEASE);
}

static void tstats_key_create(void) { tstats_key_ok = pthread_key_create(&tstats_key, tstats_release) == 0; }

/* A block an exited thread left, taken, or NULL. */
static enc_tstats *tstats_reuse(void) {
    for (enc_tstats *t = __atomic_load_n(&all_tstats, __ATOMIC_ACQUIRE); t; t = t->next) {
        int free_ = 0;
        if (!__atomic_load_n(&t->in_use, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&t->in_use, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return t;
    }
    return NULL;
}

enc_tstats *enc_tstats_slow(void) {
    pthread_once(&tstats_key_once, tstats_key_create);
    enc_tstats *t = tstats_key_ok ? tstats_reuse() : NULL;
    if (!t) {
        if (posix_memalign((void **)&t, _Alignof(enc_tstats), sizeof *t) != 0)
            return NULL; /* once per thread alive at once */
        memset(t, 0, sizeof *t);
        t->in_use = 1;
        t->next = __atomic_load_n(&all_tstats, __ATOMIC_ACQUIRE);
        while (!__atomic_compare_exchange_n(&all_tstats, &t->next, t, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {}
    }
    if (tstats_key_ok) pthread_setspecific(tstats_key, t);
    enc_thr.tstats = t;
    return t;
}

void enc_stats_count_call(int cls) { ENC_TSTAT_ADD(calls[cls], 1); }
void enc_stats_graph_captured(void) { __atomic_fetch_add(&g_captured, 1, __ATOMIC_RELAXED); }
void enc_stats_graph_evicted(void) { __atomic_fetch_add(&g_evicted, 1, __ATOMIC_RELAXED); }
void enc_stats_oom_retry(void) { __atomic_fetch_add(&g_oom_retries, 1, __ATOMIC_RELAXED); }
void enc_stats_capture_failed(void) { __atomic_fetch_add(&g_capture_failures, 1, __ATOMIC_RELAXED); }
void enc_stats_set_disabled(void) { __atomic_store_n(&g_disabled, 1, __ATOMIC_RELAXED); }
void enc_stats_touch(void) {
    if (!__atomic_load_n(&enc_stats_touched_flag, __ATOMIC_RELAXED))
        __atomic_store_n(&enc_stats_touched_flag, 1, __ATOMIC_RELAXED);
}
int enc_stats_touched(void) { return __atomic_load_n(&enc_stats_touched_flag, __ATOMIC_RELAXED); }

__thread int enc_flush_cause __attribute__((tls_model("initial-exec")));
static const char *const *cause_names;
static int n_cause_names;

void enc_stats_set_cause_names(const char *const *names, int n) {
    n_cause_names = n < ENC_MAX_CAUSES ? n : ENC_MAX_CAUSES;
    __atomic_store_n(&cause_names, names, __ATOMIC_RELEASE);
}

static int count_greater(const void *a, const void *b) { return *(const uint64_t *)a > *(const uint64_t *)b; }

/* The ENC_FLUSH_CALLS_TOP largest cause counts, best first (ties: lower id). */
static void top_causes(enc_summary *s, const uint64_t *by_cause) {
    const char *const *names = __atomic_load_n(&cause_names, __ATOMIC_ACQUIRE);
    if (!names) return;
    size_t idx[ENC_FLUSH_CALLS_TOP];
    size_t k = enc_top_k(by_cause, (size_t)n_cause_names, sizeof *by_cause, count_greater, idx, ENC_FLUSH_CALLS_TOP);
    for (size_t i = 0; i < k && by_cause[idx[i]]; i++, s->n_flush_calls++) {
        s->flush_call_names[i] = names[idx[i]];
        s->flush_call_counts[i] = by_cause[idx[i]];
    }
}

static const enc_stats_engine *engine; /* atomic */

void enc_stats_register(const enc_stats_engine *e) { __atomic_store_n(&engine, e, __ATOMIC_RELEASE); }

void enc_stats_snapshot(enc_summary *s) {
    uint64_t by_cause[ENC_MAX_CAUSES]; /* 8 KiB of stack: snapshots are rare (exit) */
    memset(s, 0, sizeof *s);
    memset(by_cause, 0, sizeof by_cause);
    for (enc_tstats *t = __atomic_load_n(&all_tstats, __ATOMIC_ACQUIRE); t; t = t->next) {
#define RD(f) __atomic_load_n(&t->f, __ATOMIC_RELAXED)
#define SUM(name, label, whole, meaning) s->name += RD(name);
        ENC_TSTAT_COUNTERS(SUM) /* the summed counters (stats_counters.h), then the arrays */
#undef SUM
        for (int i = 0; i < ENC_CLASS_COUNT; i++) s->calls[i] += RD(calls[i]);
        for (int i = 0; i < ENC_DIV_KIND_COUNT; i++) s->divergences_by_kind[i] += RD(divergences_by_kind[i]);
        for (int i = 0; i < ENC_FLUSH_REASON_COUNT; i++) s->flushes[i] += RD(flushes[i]);
        for (int i = 0; i < ENC_EAGER_REASON_COUNT; i++) s->eager_by[i] += RD(eager_by[i]);
        for (int i = 0; i < ENC_LEARN_OUTCOME_COUNT; i++) s->learnt[i] += RD(learnt[i]);
        for (int i = 0; i < ENC_LAUNCH_BINS; i++) s->launch_hist[i] += RD(launch_hist[i]);
        for (int i = 0; i < ENC_MAX_CAUSES; i++) by_cause[i] += RD(flushes_by_cause[i]);
#undef RD
    }
    top_causes(s, by_cause);
    s->self_check_permille = s->self_checks ? s->self_check_permille_sum / s->self_checks : 0;
    s->graphs_captured = __atomic_load_n(&g_captured, __ATOMIC_RELAXED);
    const enc_stats_engine *e = __atomic_load_n(&engine, __ATOMIC_ACQUIRE);
    if (e && e->turned_back) s->event_nodes_turned_back = e->turned_back(&s->events_not_held);
    s->graphs_evicted = __atomic_load_n(&g_evicted, __ATOMIC_RELAXED);
    s->capture_failures = __atomic_load_n(&g_capture_failures, __ATOMIC_RELAXED);
    s->oom_retries = __atomic_load_n(&g_oom_retries, __ATOMIC_RELAXED);
    s->disabled = __atomic_load_n(&g_disabled, __ATOMIC_RELAXED);
    s->captured_never_replayed = s->graphs_captured > s->graphs_replayed ? s->graphs_captured - s->graphs_replayed : 0;
    if (e && e->time) e->time(s);
}

/* ---- sequences and divergence reasons ------------------------------------ */

#define MAX_SEQS 4096
#define MAX_DIVS 256
#define NAME_LEN 96

typedef struct seq_rec {
    uint64_t id, hits;
    uint32_t length;
    int evicted;
    char names[3][NAME_LEN];
} seq_rec;

typedef struct div_rec {
    enum enc_divergence_kind kind;
    int arg_index;
    uint32_t position;
    uint64_t count;
    char expected[NAME_LEN], got[NAME_LEN];
} div_rec;

static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;
static int stats_no_wait;

void enc_stats_no_wait(void) { __atomic_store_n(&stats_no_wait, 1, __ATOMIC_RELAXED); }

/* The lock for reading the lists: 0 (skip them) if it is not free at once after enc_stats_no_wait. */
static int lock_for_reading(void) {
    if (__atomic_load_n(&stats_no_wait, __ATOMIC_RELAXED)) return pthread_mutex_trylock(&stats_mu) == 0;
    pthread_mutex_lock(&stats_mu);
    return 1;
}
static seq_rec *seqs; /* allocated on first capture */
static int nseqs;
static uint64_t next_seq_id = 1;
static div_rec divs[MAX_DIVS];
static int ndivs;

static void copy_name(char *dst, const char *src) {
    if (!src) {
        dst[0] = 0;
        return;
    }
    strncpy(dst, src, NAME_LEN - 1);
    dst[NAME_LEN - 1] = 0;
}

/* A listed sequence's record is seqs[id - 1] (ids past MAX_SEQS are not
 * listed; a record lost to a failed allocation keeps id 0): replays find it
 * without a search. */
uint64_t enc_stats_new_seq(uint32_t length, const char *k0, const char *k1, const char *k2) {
    pthread_mutex_lock(&stats_mu);
    uint64_t id = next_seq_id++;
    if (!seqs) __atomic_store_n(&seqs, calloc(MAX_SEQS, sizeof *seqs), __ATOMIC_RELEASE);
    if (seqs && id <= MAX_SEQS) {
        seq_rec *r = &seqs[id - 1];
        r->id = id;
        r->length = length;
        copy_name(r->names[0], k0);
        copy_name(r->names[1], k1);
        copy_name(r->names[2], k2);
        nseqs = (int)id;
    }
    pthread_mutex_unlock(&stats_mu);
    return id;
}

static seq_rec *find_seq(seq_rec *all, uint64_t id) {
    return all && id - 1 < MAX_SEQS && all[id - 1].id == id ? &all[id - 1] : NULL;
}

/* At every replay, from any stream's thread: no lock. The record was written
 * before its graph existed, so before the graph could be replayed. */
void enc_stats_seq_hit(uint64_t id, uint64_t hits) {
    seq_rec *r = find_seq(__atomic_load_n(&seqs, __ATOMIC_ACQUIRE), id);
    if (r) __atomic_store_n(&r->hits, hits, __ATOMIC_RELAXED);
}

void enc_stats_seq_evicted(uint64_t id) {
    pthread_mutex_lock(&stats_mu);
    seq_rec *r = find_seq(seqs, id);
    if (r) r->evicted = 1;
    pthread_mutex_unlock(&stats_mu);
}

void enc_stats_divergence(enum enc_divergence_kind kind, const char *expected, const char *got, int arg_index,
                          uint32_t position) {
    pthread_mutex_lock(&stats_mu);
    const char *e = expected ? expected : "", *g = got ? got : "";
    int i;
    for (i = 0; i < ndivs; i++)
        if (divs[i].kind == kind && divs[i].arg_index == arg_index && divs[i].position == position &&
            strncmp(divs[i].expected, e, NAME_LEN - 1) == 0 && strncmp(divs[i].got, g, NAME_LEN - 1) == 0)
            break;
    if (i == ndivs && ndivs < MAX_DIVS) {
        div_rec *d = &divs[ndivs++];
        d->kind = kind;
        d->arg_index = arg_index;
        d->position = position;
        copy_name(d->expected, e);
        copy_name(d->got, g);
    }
    if (i < MAX_DIVS) divs[i].count++;
    pthread_mutex_unlock(&stats_mu);
}

void enc_stats_foreach_seq(void (*fn)(const enc_seq_info *, void *), void *ctx) {
    if (!lock_for_reading()) return;
    for (int i = 0; i < nseqs; i++) {
        if (!seqs[i].id) continue; /* lost to a failed allocation */
        enc_seq_info s = {.id = seqs[i].id,
                          .length = seqs[i].length,
                          .hits = __atomic_load_n(&seqs[i].hits, __ATOMIC_RELAXED),
                          .evicted = seqs[i].evicted};
        for (int k = 0; k < 3; k++) s.kernels[k] = seqs[i].names[k][0] ? seqs[i].names[k] : NULL;
        fn(&s, ctx);
    }
    pthread_mutex_unlock(&stats_mu);
}

void enc_stats_foreach_divergence(void (*fn)(const enc_div_info *, void *), void *ctx) {
    if (!lock_for_reading()) return;
    for (int i = 0; i < ndivs; i++) {
        enc_div_info d = {.kind = divs[i].kind,
                          .arg_index = divs[i].arg_index,
                          .position = divs[i].position,
                          .count = divs[i].count,
                          .expected = divs[i].expected[0] ? divs[i].expected : NULL,
                          .got = divs[i].got[0] ? divs[i].got : NULL};
        fn(&d, ctx);
    }
    pthread_mutex_unlock(&stats_mu);
}
