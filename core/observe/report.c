/* encore: the end-of-run report: the list of its fields, the JSON summary
 * line and the exit path (see report.h).
 *
 * The human-readable table is in report_table.c and the JSON-lines log the
 * summary goes to in eventlog.c; both outputs take their numbers, keys and
 * labels from enc_report_fields below. Nothing here allocates: the exit path
 * keeps what it needs in one static block (it runs once, maybe on a thread
 * with a small stack). */
#include "core/observe/report.h"
#include "core/observe/eventlog.h"
#include "core/observe/report_fields.h"
#include "core/observe/topk.h"

#include "base/json.h"
#include "base/log.h"
#include "policy/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#define ENC_SUMMARY_BUF 32768 /* the summary line */

/* ---- names -------------------------------------------------------------------------- */

/* The version, findable in the library file: `encore --version` greps it. */
__attribute__((used)) static const char version_tag[] = "encore-version " ENCORE_VERSION_STRING;

static const char *const div_keys[ENC_DIV_KIND_COUNT] = {"kernel", "config", "args", "short"};
static const char *const div_labels[ENC_DIV_KIND_COUNT] = {"a different kernel came", "launch config differed",
                                                           "arguments differed", "ended early"};
static const char *const flush_keys[ENC_FLUSH_REASON_COUNT] = {"stream_call",   "all_call",      "legacy_order",
                                                               "deadline",      "sequence_full", "capture",
                                                               "opaque_launch", "exit",          "pause"};
static const char *const flush_labels[ENC_FLUSH_REASON_COUNT] = {
    "call on the same stream",
    "device-wide call",
    "legacy default stream order",
    "deadline passed",
    "sequence full (ENCORE_MAX_SEQUENCE)",
    "program began a capture",
    "launch without parameter info",
    "process exit",
    "a graph's end where the host paused",
};
static const char *const eager_keys[ENC_EAGER_REASON_COUNT] = {"learning",   "released", "diverged", "first",
                                                               "left_alone", "resting",  "opaque",   "passive"};
static const char *const eager_labels[ENC_EAGER_REASON_COUNT] = {
    "learning (no graph here yet)", "held, then released", "diverging launch", "first launch of a kernel",
    "stream left alone (MAX_GAP)",  "stream resting",      "not recordable",   "switched off / no state",
};
static const char *const learn_keys[ENC_LEARN_OUTCOME_COUNT] = {
    "short", "unrecorded", "left_alone", "new", "again", "structure_again", "given_up", "no_slot", "few_kernels"};
static const char *const learn_labels[ENC_LEARN_OUTCOME_COUNT] = {
    "shorter than ENCORE_MIN_SEQUENCE", "not recordable (never captured)",
    "stream left alone (MAX_GAP)",      "not seen before",
    "came again (counted to capture)",  "same kernels, other arguments",
    "came again, never captured",       "candidate table full",
    "fewer than two kernels or copies",
};
static const char *const call_keys[ENC_CLASS_COUNT] = {"pass", "launch", "flush_stream", "flush_all"};
static const char *const call_labels[ENC_CLASS_COUNT] = {"pass (straight through)", "launch", "flush-stream",
                                                         "flush-all"};

const char *enc_report_div_kind_key(int kind) {
    return kind >= 0 && kind < ENC_DIV_KIND_COUNT ? div_keys[kind] : "unknown";
}

/* ---- the fields ----------------------------------------------------------------------- */

static const enc_count_group div_group = {.keys = div_keys, .labels = div_labels, .n = ENC_DIV_KIND_COUNT};
static const enc_count_group eager_group = {
    .keys = eager_keys, .labels = eager_labels, .n = ENC_EAGER_REASON_COUNT, .pct = 1, .skip_zero = 1, .nested = 1};
static const enc_count_group learn_group = {
    .keys = learn_keys, .labels = learn_labels, .n = ENC_LEARN_OUTCOME_COUNT, .skip_zero = 1};
static const enc_count_group flush_group = {
    .keys = flush_keys, .labels = flush_labels, .n = ENC_FLUSH_REASON_COUNT, .pct = 1, .skip_zero = 1};
static const enc_count_group call_group = {.keys = call_keys,
                                           .labels = call_labels,
                                           .n = ENC_CLASS_COUNT,
                                           .pct = 1,
                                           .stats_only = 1,
                                           .heading = "hook calls by class (ENCORE_STATS=1)"};

#define AT(f) offsetof(enc_summary, f)
#define NO ENC_NO_WHOLE
/* A row of a summed counter, from its row in core/observe/stats_counters.h. */
#define COUNTER(name, label, whole, meaning) {ENC_FIELD_COUNT, #name, label, AT(name), whole, NULL},

/* In the order of the JSON summary (docs/log.md documents it); the table shows
 * the rows with a label, in the same order. The summed counters come in the
 * parts of their list (ENC_TSTAT_TIME...), each where its rows go; every part
 * but ENC_TSTAT_UNREPORTED is here (clang-format would join those lines to the next). */
/* clang-format off */
const enc_report_field enc_report_fields[] = {
    /* time first (the table shows these in rows of their own, report_table.c time_rows) */
    {ENC_FIELD_I64, "time_balance_ns", NULL, AT(time_balance_ns), NO, NULL},
    {ENC_FIELD_COUNT, "time_saved_ns", NULL, AT(time_saved_ns), NO, NULL},
    {ENC_FIELD_COUNT, "time_lost_ns", NULL, AT(time_lost_ns), NO, NULL},
    {ENC_FIELD_COUNT, "per_launch_ns", NULL, AT(per_launch_ns), NO, NULL},
    {ENC_FIELD_COUNT, "per_launch_mean_ns", NULL, AT(per_launch_mean_ns), NO, NULL},
    ENC_TSTAT_TIME(COUNTER)
    {ENC_FIELD_COUNT, "recording_ns", NULL, AT(recording_ns), NO, NULL},
    ENC_TSTAT_RECORD_TIME(COUNTER)
    ENC_TSTAT_LAUNCHES(COUNTER)
    {ENC_FIELD_GROUP, "eager_by", NULL, AT(eager_by), NO, &eager_group},
    {ENC_FIELD_PCT, "replay_pct", NULL, AT(launches_replayed), AT(launches_seen), NULL},
    {ENC_FIELD_COUNT, "graphs_captured", "graphs captured", AT(graphs_captured), NO, NULL},
    ENC_TSTAT_REPLAYED(COUNTER)
    {ENC_FIELD_COUNT, "captured_never_replayed", "  captured, never replayed", AT(captured_never_replayed),
     AT(graphs_captured), NULL},
    ENC_TSTAT_GRAPHS(COUNTER)
    {ENC_FIELD_COUNT, "graphs_evicted", "  evicted (ENCORE_MAX_GRAPHS)", AT(graphs_evicted), NO, NULL},
    {ENC_FIELD_COUNT, "capture_failures", "  capture failures", AT(capture_failures), NO, NULL},
    {ENC_FIELD_COUNT, "oom_retries", "  freed, allocation retried", AT(oom_retries), NO, NULL},
    {ENC_FIELD_COUNT, "event_nodes_turned_back", "  event nodes turned back", AT(event_nodes_turned_back), NO, NULL},
    {ENC_FIELD_COUNT, "events_not_held", "    events no longer held (1)", AT(events_not_held), NO, NULL},
    {ENC_FIELD_GROUP, "learnt", "sequences ended while learning", AT(learnt), NO, &learn_group},
    ENC_TSTAT_DIVERGENCES(COUNTER)
    {ENC_FIELD_GROUP, "divergences_by_kind", NULL, AT(divergences_by_kind), NO, &div_group},
    ENC_TSTAT_HOLDS(COUNTER)
    {ENC_FIELD_COUNT, "self_check_permille", NULL, AT(self_check_permille), NO, NULL},
    {ENC_FIELD_GROUP, "flushes", "held launches issued (flushes)", AT(flushes), NO, &flush_group},
    {ENC_FIELD_BY_CALL, "flushes_by_call",
     "flush points, by the CUDA call that issued held launches:", AT(flush_call_counts), NO, NULL},
    {ENC_FIELD_GROUP, "calls", NULL, AT(calls), NO, &call_group},
    ENC_TSTAT_HOST(COUNTER)
    {ENC_FIELD_FLAG, "disabled", NULL, AT(disabled), NO, NULL},
};
/* clang-format on */
const int enc_report_nfields = (int)(sizeof enc_report_fields / sizeof enc_report_fields[0]);

#undef COUNTER
#undef AT
#undef NO

uint64_t enc_report_group_total(const enc_summary *s, const enc_report_field *f) {
    const uint64_t *c = enc_report_at(s, f->off);
    uint64_t total = 0;
    for (int i = 0; i < f->group->n; i++) total += c[i];
    return total;
}

double enc_report_pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

/* ---- top lists ------------------------------------------------------------------------ */

uint64_t enc_report_saved(const enc_seq_info *s) { return s->length > 0 ? (uint64_t)(s->length - 1) * s->hits : 0; }

static int seq_better(const void *va, const void *vb) {
    const enc_seq_info *a = va, *b = vb;
    uint64_t sa = enc_report_saved(a), sb = enc_report_saved(b);
    if (sa != sb) return sa > sb;
    if (a->hits != b->hits) return a->hits > b->hits;
    return a->id < b->id;
}

static int div_better(const void *va, const void *vb) {
    const enc_div_info *a = va, *b = vb;
    if (a->count != b->count) return a->count > b->count;
    if (a->kind != b->kind) return a->kind < b->kind;
    return a->position < b->position;
}

size_t enc_report_top_seqs(const enc_seq_info *v, size_t n, size_t idx[ENC_REPORT_TOP]) {
    return enc_top_k(v, n, sizeof *v, seq_better, idx, ENC_REPORT_TOP);
}

size_t enc_report_top_divs(const enc_div_info *v, size_t n, size_t idx[ENC_REPORT_TOP]) {
    return enc_top_k(v, n, sizeof *v, div_better, idx, ENC_REPORT_TOP);
}

/* ---- the JSON summary line -------------------------------------------------------------- */

/* "key":{"names[0]":counts[0],...} (NULL names left out). */
static void json_counts(enc_json *j, const char *key, const char *const *names, const uint64_t *counts, int n) {
    enc_json_key(j, key);
    enc_json_object_begin(j);
    for (int i = 0; i < n; i++)
        if (names[i]) enc_json_kv_u64(j, names[i], counts[i]);
    enc_json_object_end(j);
}

static void json_field(enc_json *j, const enc_summary *s, const enc_report_field *f) {
    switch (f->kind) {
    case ENC_FIELD_COUNT: enc_json_kv_u64(j, f->key, *enc_report_at(s, f->off)); break;
    case ENC_FIELD_PCT:
        enc_json_kv_double(j, f->key, enc_report_pct(*enc_report_at(s, f->off), *enc_report_at(s, f->whole)), 1);
        break;
    case ENC_FIELD_I64: enc_json_kv_i64(j, f->key, *(const int64_t *)(const void *)((const char *)s + f->off)); break;
    case ENC_FIELD_FLAG:
        enc_json_kv_i64(j, f->key, *(const int *)(const void *)((const char *)s + f->off) ? 1 : 0);
        break;
    case ENC_FIELD_GROUP: json_counts(j, f->key, f->group->keys, enc_report_at(s, f->off), f->group->n); break;
    case ENC_FIELD_BY_CALL:
        json_counts(j, f->key, s->flush_call_names, s->flush_call_counts,
                    s->n_flush_calls < ENC_FLUSH_CALLS_TOP ? s->n_flush_calls : ENC_FLUSH_CALLS_TOP);
        break;
    }
}

/* "streams_time":[{stream, kind, launches, replayed, saved_ns, lost_ns, balance_ns}...], the table's by stream. */
static void json_streams(enc_json *j, const enc_summary *s) {
    static const char *const kinds[] = {"explicit", "legacy", "per_thread"};
    int n = s->n_streams < ENC_STREAMS_SHOWN ? s->n_streams : ENC_STREAMS_SHOWN;
    enc_json_key(j, "streams_time");
    enc_json_array_begin(j);
    for (int i = 0; i < n; i++) {
        const enc_stream_time *t = &s->streams[i];
        enc_json_object_begin(j);
        enc_json_kv_i64(j, "stream", t->index);
        enc_json_kv_str(j, "kind", t->kind >= 0 && t->kind < 3 ? kinds[t->kind] : "?", 16);
        enc_json_kv_u64(j, "launches", t->launches);
        enc_json_kv_u64(j, "replayed", t->replayed);
        enc_json_kv_u64(j, "saved_ns", t->saved_ns);
        enc_json_kv_u64(j, "lost_ns", t->lost_ns);
        enc_json_kv_i64(j, "balance_ns", t->balance_ns);
        enc_json_object_end(j);
    }
    enc_json_array_end(j);
}

/* {seq, length, hits, saved, kernels[], evicted} */
static void json_seq(enc_json *j, const enc_seq_info *q) {
    enc_json_object_begin(j);
    enc_json_kv_u64(j, "seq", q->id);
    enc_json_kv_u64(j, "length", q->length);
    enc_json_kv_u64(j, "hits", q->hits);
    enc_json_kv_u64(j, "saved", enc_report_saved(q));
    enc_json_key(j, "kernels");
    enc_json_array_begin(j);
    for (int i = 0; i < 3; i++)
        if (q->kernels[i]) enc_json_str(j, q->kernels[i], ENC_JSON_NAME_MAX);
    enc_json_array_end(j);
    enc_json_kv_bool(j, "evicted", q->evicted);
    enc_json_object_end(j);
}

static void json_top_seqs(enc_json *j, const enc_seq_info *seqs, size_t nseqs) {
    size_t idx[ENC_REPORT_TOP];
    size_t n = enc_report_top_seqs(seqs, nseqs, idx);
    enc_json_key(j, "top_sequences");
    enc_json_array_begin(j);
    for (size_t k = 0; k < n; k++) json_seq(j, &seqs[idx[k]]);
    enc_json_array_end(j);
}

/* "never_replayed": the first graphs captured that never replayed, the first captured first. */
static void json_unreplayed(enc_json *j, const enc_summary *s) {
    int n = s->n_unreplayed < ENC_UNREPLAYED_SHOWN ? s->n_unreplayed : ENC_UNREPLAYED_SHOWN;
    enc_json_key(j, "never_replayed");
    enc_json_array_begin(j);
    for (int k = 0; k < n; k++) json_seq(j, &s->unreplayed[k]);
    enc_json_array_end(j);
}

static void json_top_divs(enc_json *j, const enc_div_info *divs, size_t ndivs) {
    size_t idx[ENC_REPORT_TOP];
    size_t n = enc_report_top_divs(divs, ndivs, idx);
    enc_json_key(j, "top_divergences");
    enc_json_array_begin(j);
    for (size_t k = 0; k < n; k++) {
        enc_json_object_begin(j);
        enc_eventlog_div_fields(j, &divs[idx[k]]);
        enc_json_object_end(j);
    }
    enc_json_array_end(j);
}

size_t enc_report_format_summary(char *buf, size_t cap, const enc_summary *s, const enc_seq_info *seqs, size_t nseqs,
                                 const enc_div_info *divs, size_t ndivs, int pid) {
    enc_json j;
    enc_eventlog_begin(&j, buf, cap, "summary", enc_now_unix(), pid);
    enc_json_kv_str(&j, "version", ENCORE_VERSION_STRING, 32);
    for (int i = 0; i < enc_report_nfields; i++) json_field(&j, s, &enc_report_fields[i]);
    json_streams(&j, s);
    json_top_seqs(&j, seqs, nseqs);
    json_unreplayed(&j, s);
    json_top_divs(&j, divs, ndivs);
    return enc_eventlog_end(&j);
}

/* ---- at exit ------------------------------------------------------------------------------- */

/* Everything the exit path needs, static: it runs once, maybe on a thread
 * with a small stack. */
static struct {
    enc_summary summary;
    enc_seq_info seqs[ENC_REPORT_TOP];
    size_t nseqs;
    enc_div_info divs[ENC_REPORT_TOP];
    size_t ndivs;
    char line[ENC_SUMMARY_BUF];
} g_exit;

/* Keep the ENC_REPORT_TOP best items seen so far in arr (no allocation at exit). */
static void keep_best(void *arr, size_t *n, size_t size, const void *item, int (*better)(const void *, const void *)) {
    char *a = arr;
    if (*n < ENC_REPORT_TOP) {
        memcpy(a + (*n)++ * size, item, size);
        return;
    }
    size_t worst = 0;
    for (size_t i = 1; i < ENC_REPORT_TOP; i++)
        if (better(a + worst * size, a + i * size)) worst = i;
    if (better(item, a + worst * size)) memcpy(a + worst * size, item, size);
}

void enc_report_note_unreplayed(enc_summary *s, const enc_seq_info *q) {
    if (q->hits) return;
    int n = s->n_unreplayed < ENC_UNREPLAYED_SHOWN ? s->n_unreplayed : ENC_UNREPLAYED_SHOWN;
    if (n == ENC_UNREPLAYED_SHOWN && q->id > s->unreplayed[n - 1].id) return; /* captured after those kept */
    int i = n < ENC_UNREPLAYED_SHOWN ? n : n - 1;                             /* a full list drops its last */
    for (; i > 0 && s->unreplayed[i - 1].id > q->id; i--) s->unreplayed[i] = s->unreplayed[i - 1];
    s->unreplayed[i] = *q;
    if (s->n_unreplayed < ENC_UNREPLAYED_SHOWN) s->n_unreplayed++;
}

static void collect_seq(const enc_seq_info *s, void *ctx) {
    (void)ctx;
    keep_best(g_exit.seqs, &g_exit.nseqs, sizeof *s, s, seq_better);
    enc_report_note_unreplayed(&g_exit.summary, s);
}

static void collect_div(const enc_div_info *d, void *ctx) {
    (void)ctx;
    keep_best(g_exit.divs, &g_exit.ndivs, sizeof *d, d, div_better);
}

/* The table (or, quiet: the one line saying the process launched nothing), to
 * ENCORE_REPORT_FILE if set (and it opens), else to the log fd. */
static void print_table(int pid, int quiet) {
    int fd = enc_log_fd(), own = -1;
    if (enc_opt.report_file[0]) {
        char path[4096];
        if (enc_expand_path(enc_opt.report_file, path, sizeof path, pid) != 0) {
            enc_log(ENC_LOG_WARN, "ENCORE_REPORT_FILE path is too long; the report goes to stderr");
        } else if ((own = enc_open_append(path)) < 0) {
            int e = errno;
            enc_log(ENC_LOG_WARN, "cannot open ENCORE_REPORT_FILE %s: %s; the report goes to stderr", path,
                    enc_errno_text(e));
        } else {
            fd = own;
        }
    }
    if (quiet) {
        int n = snprintf(g_exit.line, sizeof g_exit.line,
                         "encore report (pid %d, version %s): encore was loaded; this process launched no "
                         "kernels, so there is nothing to report\n",
                         pid, ENCORE_VERSION_STRING);
        if (n > 0) enc_write_all(fd, g_exit.line, (unsigned long)n);
    } else {
        enc_report_write_table(fd, &g_exit.summary, g_exit.seqs, g_exit.nseqs, g_exit.divs, g_exit.ndivs, pid,
                               enc_opt.stats);
    }
    if (own >= 0) close(own);
}

/* Started by the launcher (scripts/encore sets _ENCORE_LAUNCHER_PID to the pid it execs as)? Only that
 * process says it launched nothing: the helpers it starts (a shell's commands) stay silent. */
static int launcher_process(int pid) {
    const char *v = getenv("_ENCORE_LAUNCHER_PID");
    return v && atoi(v) == pid;
}

static int g_reported; /* enc_report_at_exit ran */

/* A process that never made a hooked call never started encore (it starts at
 * the first one), so no exit handler reports (a started encore always does,
 * before the library's destructors run): in the launcher's process, with
 * a report asked for, say in one line that encore was loaded and nothing
 * launched. Destructors run after the exit handlers: a started encore has
 * reported by now. */
__attribute__((destructor)) static void report_never_started(void) {
    int pid = (int)getpid();
    if (__atomic_load_n(&g_reported, __ATOMIC_ACQUIRE) || !launcher_process(pid)) return;
    enc_options_init();
    if (enc_opt.report || enc_opt.stats || enc_opt.report_file[0]) print_table(pid, 1);
}

void enc_report_at_exit(void) {
    if (__atomic_exchange_n(&g_reported, 1, __ATOMIC_ACQ_REL)) return;
    int want = enc_opt.report || enc_opt.stats || enc_opt.report_file[0];
    if (!enc_stats_touched()) { /* a helper process that never used CUDA: say nothing, but for the launcher's */
        int pid = (int)getpid();
        if (want && launcher_process(pid)) print_table(pid, 1);
        return;
    }

    memset(&g_exit.summary, 0, sizeof g_exit.summary);
    g_exit.nseqs = g_exit.ndivs = 0;
    enc_stats_snapshot(&g_exit.summary);
    enc_stats_foreach_seq(collect_seq, NULL);
    enc_stats_foreach_divergence(collect_div, NULL);
    int pid = (int)getpid();

    if (want) print_table(pid, 0);

    int lfd = enc_eventlog_fd(1);
    if (lfd >= 0) {
        size_t n = enc_report_format_summary(g_exit.line, sizeof g_exit.line, &g_exit.summary, g_exit.seqs,
                                             g_exit.nseqs, g_exit.divs, g_exit.ndivs, pid);
        enc_eventlog_write(lfd, g_exit.line, n);
    }
}
