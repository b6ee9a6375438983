/* encore: the end-of-run report's human-readable table (see report.h).
 *
 * The rows come from enc_report_fields (report_fields.h), the same list the
 * JSON summary is written from; then the encore time per held launch, the top
 * sequences, the most frequent divergences, the hook calls by class (with
 * ENCORE_STATS) and a few plain notes. Kernel names are shown by the readable
 * part of their mangled name. Lines go through a fixed buffer and write(2);
 * nothing allocates. */
#include "core/observe/report.h"
#include "core/observe/names.h"
#include "core/observe/report_fields.h"

#include "base/json.h"
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ENC_TABLE_NAME_MAX 48 /* bytes of a kernel name in the table */
#define ENC_LABEL_W 34

/* "1234567" -> "1,234,567" */
static const char *fmt_count(uint64_t v, char buf[32]) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    int o = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

/* ---- text writer: fixed buffer, flushed with write(2) ------------------------------- */

typedef struct enc_bw {
    int fd;
    int err;
    size_t len;
    char buf[8192];
} enc_bw;

static void bw_flush(enc_bw *b) {
    if (b->len && !b->err && enc_write_all(b->fd, b->buf, b->len) != 0) b->err = 1;
    b->len = 0;
}

static void bw_put(enc_bw *b, const char *s, size_t n) {
    while (n > 0) {
        if (b->len == sizeof b->buf) bw_flush(b);
        size_t k = sizeof b->buf - b->len;
        if (k > n) k = n;
        memcpy(b->buf + b->len, s, k);
        b->len += k;
        s += k;
        n -= k;
    }
}

__attribute__((format(printf, 2, 3))) static void bw_fmt(enc_bw *b, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    bw_put(b, line, (size_t)n);
}

/* A kernel name for the table: demangled to its readable part, control
 * characters as '?', cut at max bytes (on a UTF-8 boundary) with "...", "?"
 * for NULL. */
static const char *table_name(const char *s, char *buf, size_t cap, size_t max) {
    char shortened[256];
    if (!s || !*s) return "?";
    if (enc_name_readable(s, shortened, sizeof shortened)) s = shortened;
    if (max > cap - 4) max = cap - 4;
    size_t n = strlen(s);
    int cut = n > max;
    if (cut) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    for (size_t i = 0; i < n;) {
        size_t l = enc_utf8_len((const unsigned char *)s + i, n - i);
        if (l <= 1) {
            unsigned char c = (unsigned char)s[i];
            buf[i] = (l == 0 || c < 0x20 || c == 0x7f) ? '?' : (char)c;
            i++;
        } else {
            memcpy(buf + i, s + i, l);
            i += l;
        }
    }
    if (cut) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

/* ---- rows ------------------------------------------------------------------------------ */

static void row(enc_bw *b, const char *indent, const char *label, uint64_t v) {
    char num[32];
    bw_fmt(b, "  %s%-*s %13s\n", indent, ENC_LABEL_W - (int)strlen(indent), label, fmt_count(v, num));
}

static void row_pct(enc_bw *b, const char *indent, const char *label, uint64_t v, uint64_t whole) {
    char num[32];
    bw_fmt(b, "  %s%-*s %13s  %5.1f%%\n", indent, ENC_LABEL_W - (int)strlen(indent), label, fmt_count(v, num),
           enc_report_pct(v, whole));
}

/* A group's rows, indented under its total's row (if it has one). */
static void group_rows(enc_bw *b, const enc_summary *s, const enc_report_field *f) {
    const enc_count_group *g = f->group;
    const uint64_t *c = enc_report_at(s, f->off);
    uint64_t total = enc_report_group_total(s, f);
    if (f->label) row(b, "", f->label, total);
    const char *indent = g->nested ? "    " : "  ";
    for (int i = 0; i < g->n; i++) {
        if (g->skip_zero && !c[i]) continue;
        if (g->pct)
            row_pct(b, indent, g->labels[i], c[i], total);
        else
            row(b, indent, g->labels[i], c[i]);
    }
}

/* The flush points by CUDA call, as shares of all flushes. */
static void by_call_rows(enc_bw *b, const enc_summary *s, const enc_report_field *f) {
    if (s->n_flush_calls <= 0) return;
    uint64_t flushes = 0;
    for (int r = 0; r < ENC_FLUSH_REASON_COUNT; r++) flushes += s->flushes[r];
    bw_fmt(b, "    %s\n", f->label);
    for (int k = 0; k < s->n_flush_calls && k < ENC_FLUSH_CALLS_TOP; k++)
        row_pct(b, "    ", s->flush_call_names[k] ? s->flush_call_names[k] : "?", s->flush_call_counts[k], flushes);
}

/* Every field with a table row, in the list's order (stats-only groups come later). */
static void field_rows(enc_bw *b, const enc_summary *s) {
    for (int i = 0; i < enc_report_nfields; i++) {
        const enc_report_field *f = &enc_report_fields[i];
        if (f->kind == ENC_FIELD_COUNT && f->label) {
            if (f->whole == ENC_NO_WHOLE)
                row(b, "", f->label, *enc_report_at(s, f->off));
            else
                row_pct(b, "", f->label, *enc_report_at(s, f->off), *enc_report_at(s, f->whole));
        } else if (f->kind == ENC_FIELD_GROUP && !f->group->stats_only) {
            group_rows(b, s, f);
        } else if (f->kind == ENC_FIELD_BY_CALL) {
            by_call_rows(b, s, f);
        }
    }
}

/* The groups shown only with ENCORE_STATS, each under its heading. */
static void stats_only_rows(enc_bw *b, const enc_summary *s) {
    for (int i = 0; i < enc_report_nfields; i++) {
        const enc_report_field *f = &enc_report_fields[i];
        if (f->kind != ENC_FIELD_GROUP || !f->group->stats_only) continue;
        bw_fmt(b, "\n  %s\n", f->group->heading);
        group_rows(b, s, f);
    }
}

/* Sampled CPU times: recording and holding a launch, and apart from it the
 * sequence end a launch may cause (the release or replay of what was held,
 * learning, capturing), per end. */
static void deferred_row(enc_bw *b, const enc_summary *s) {
    char num[32];
    if (s->deferred_samples) {
        double us = (double)s->deferred_ns / (double)s->deferred_samples / 1000.0;
        bw_fmt(b, "  %-*s %10.2f us  (average of %s sampled launches)\n", ENC_LABEL_W, "encore time per held launch",
               us, fmt_count(s->deferred_samples, num));
    }
    if (s->release_samples) {
        double us = (double)s->release_ns / (double)s->release_samples / 1000.0;
        bw_fmt(b, "  %-*s %10.2f us  (average of %s sampled)\n", ENC_LABEL_W, "  per sequence end at a launch", us,
               fmt_count(s->release_samples, num));
    }
}

/* ---- time, first --------------------------------------------------------------------------- */

static void ms_row(enc_bw *b, const char *label, double ns, const char *how) {
    bw_fmt(b, "  %-*s %+10.3f ms%s%s\n", ENC_LABEL_W, label, ns / 1e6, how[0] ? "  " : "", how);
}

/* The estimate by stream: the streams that recorded the most launches. */
static void stream_rows(enc_bw *b, const enc_summary *s) {
    static const char *const kinds[] = {"stream", "legacy stream", "per-thread stream"};
    int n = s->n_streams < ENC_STREAMS_SHOWN ? s->n_streams : ENC_STREAMS_SHOWN;
    if (n < 2) return; /* one stream: the total is its */
    bw_fmt(b, "    by stream (%d of %d):%*s saved        lost     balance\n", n, s->n_streams, 9, "");
    for (int i = 0; i < n; i++) {
        const enc_stream_time *t = &s->streams[i];
        char label[64], num[32];
        snprintf(label, sizeof label, "%s #%d", t->kind >= 0 && t->kind < 3 ? kinds[t->kind] : "stream", t->index);
        bw_fmt(b, "      %-24s %+9.3f %+11.3f %+11.3f ms  (%s launches recorded)\n", label, (double)t->saved_ns / 1e6,
               -(double)t->lost_ns / 1e6, (double)t->balance_ns / 1e6, fmt_count(t->launches, num));
    }
}

/* What encore saved and cost in host time (core/streams/worth.c enc_stats_time), and
 * whether it paid: a high replayed share alone is no gain. */
static void time_rows(enc_bw *b, const enc_summary *s) {
    char how[160], num[32];
    if (s->self_checks) /* measured, not estimated: it leads */
        bw_fmt(b, "  %-*s %10.3f x   as long as passing through (the self-check's mean of %llu check%s)\n", ENC_LABEL_W,
               "steps with encore active (measured)", (double)s->self_check_permille / 1e3,
               (unsigned long long)s->self_checks, s->self_checks == 1 ? "" : "s");
    if (s->launch_samples)
        snprintf(how, sizeof how,
                 "(%s launches replayed x %.2f us, the driver's median time of %s eager launches timed here)",
                 fmt_count(s->launches_replayed, num), (double)s->per_launch_ns / 1e3,
                 fmt_count(s->launch_samples, (char[32]){0}));
    else
        snprintf(how, sizeof how, "(no eager launch was timed: the cost of one is not known)");
    ms_row(b, "host time saved (estimate)", (double)s->time_saved_ns, how);
    ms_row(b, "host time lost (estimate)", -(double)s->time_lost_ns, "");
    snprintf(how, sizeof how, "(%s replays)", fmt_count(s->graph_launches, num));
    ms_row(b, "  graph launches and patches", -(double)s->replay_ns, how);
    snprintf(how, sizeof how, "(%s graphs, %s never replayed)", fmt_count(s->graphs_captured, num),
             fmt_count(s->captured_never_replayed, (char[32]){0}));
    ms_row(b, "  captures and instantiations", -(double)s->capture_ns, how);
    ms_row(b, "  holds that did not replay", -(double)s->held_unpaid_ns, "(launches kept from the GPU)");
    ms_row(b, "  recording launches", -(double)s->recording_ns, "(encore's time recording one x launches recorded)");
    stream_rows(b, s);
    ms_row(b, "balance", (double)s->time_balance_ns,
           s->time_balance_ns > 0  ? "encore saved time"
           : s->launches_seen == 0 ? ""
                                   : "encore cost more than it saved: the replayed share below is no gain");
}

/* ---- top lists ---------------------------------------------------------------------------- */

static void top_seq_row(enc_bw *b, size_t rank, const enc_seq_info *q) {
    char n1[32], n2[32], kn[3][ENC_TABLE_NAME_MAX + 8];
    int nk = 0;
    for (int j = 0; j < 3; j++)
        if (q->kernels[j]) table_name(q->kernels[j], kn[nk++], sizeof kn[0], ENC_TABLE_NAME_MAX);
    bw_fmt(b, "  %3zu %10llu %7u %12s %14s  %s%s%s%s%s%s%s\n", rank, (unsigned long long)q->id, q->length,
           fmt_count(q->hits, n1), fmt_count(enc_report_saved(q), n2), nk > 0 ? kn[0] : "?", nk > 1 ? ", " : "",
           nk > 1 ? kn[1] : "", nk > 2 ? ", " : "", nk > 2 ? kn[2] : "",
           q->length > (uint32_t)nk && nk > 0 ? ", ..." : "", q->evicted ? "  (evicted)" : "");
}

/* The column heads of top_seq_row's lists. */
static void seq_columns(enc_bw *b) {
    bw_fmt(b, "  %3s %10s %7s %12s %14s  %s\n", "#", "seq", "length", "replays", "saved", "first kernels");
}

static void top_seqs(enc_bw *b, const enc_summary *s, const enc_seq_info *seqs, size_t nseqs) {
    char num[32];
    size_t idx[ENC_REPORT_TOP];
    size_t n = enc_report_top_seqs(seqs, nseqs, idx);
    if (!n) return;
    bw_fmt(b, "\n  top sequences by launch calls saved (saved = (length - 1) x replays)\n");
    seq_columns(b);
    for (size_t k = 0; k < n; k++) top_seq_row(b, k + 1, &seqs[idx[k]]);
    if (s->graphs_captured > n)
        bw_fmt(b, "  (%zu of %s captured sequences shown)\n", n, fmt_count(s->graphs_captured, num));
}

/* The first graphs captured that never replayed, the first captured first: their seq is the capture
 * events' in the JSON log (ENCORE_LOG), which say when each came and what it cost. */
static void unreplayed(enc_bw *b, const enc_summary *s) {
    char num[32];
    int n = s->n_unreplayed < ENC_UNREPLAYED_SHOWN ? s->n_unreplayed : ENC_UNREPLAYED_SHOWN;
    if (n <= 0) return;
    bw_fmt(b, "\n  captured, never replayed (the first captured first)\n");
    seq_columns(b);
    for (int k = 0; k < n; k++) top_seq_row(b, (size_t)k + 1, &s->unreplayed[k]);
    if (s->captured_never_replayed > (uint64_t)n)
        bw_fmt(b, "  (%d of %s shown)\n", n, fmt_count(s->captured_never_replayed, num));
}

/* "what differed" and "expected -> got" of a divergence reason. */
static void div_words(const enc_div_info *d, char *what, size_t wcap, char *where, size_t cap) {
    char e[ENC_TABLE_NAME_MAX + 8], g[ENC_TABLE_NAME_MAX + 8];
    const char *en = table_name(d->expected, e, sizeof e, ENC_TABLE_NAME_MAX);
    const char *gn = table_name(d->got, g, sizeof g, ENC_TABLE_NAME_MAX);
    switch (d->kind) {
    case ENC_DIV_KERNEL:
        snprintf(what, wcap, "kernel");
        snprintf(where, cap, "%s -> %s", en, gn);
        break;
    case ENC_DIV_CONFIG:
        snprintf(what, wcap, "launch config");
        snprintf(where, cap, "%s", en);
        break;
    case ENC_DIV_ARGS:
        if (d->arg_index >= 0)
            snprintf(what, wcap, "argument %d", d->arg_index);
        else
            snprintf(what, wcap, "arguments");
        snprintf(where, cap, "%s", en);
        break;
    case ENC_DIV_SHORT:
        snprintf(what, wcap, "ended early");
        snprintf(where, cap, "%s -> (a flush point came first)", en);
        break;
    default:
        snprintf(what, wcap, "?");
        snprintf(where, cap, "%s -> %s", en, gn);
        break;
    }
}

static void top_divs(enc_bw *b, const enc_div_info *divs, size_t ndivs) {
    size_t idx[ENC_REPORT_TOP];
    size_t n = enc_report_top_divs(divs, ndivs, idx);
    if (!n) return;
    bw_fmt(b, "\n  most frequent divergences (held launches that stopped matching every captured sequence)\n");
    bw_fmt(b, "  %3s %10s  %-18s %8s  %s\n", "#", "count", "what differed", "position", "expected -> got");
    for (size_t k = 0; k < n; k++) {
        const enc_div_info *d = &divs[idx[k]];
        char num[32], what[32], where[2 * ENC_TABLE_NAME_MAX + 40];
        div_words(d, what, sizeof what, where, sizeof where);
        bw_fmt(b, "  %3zu %10s  %-18s %8u  %s\n", k + 1, fmt_count(d->count, num), what, d->position, where);
    }
}

/* ---- notes ---------------------------------------------------------------------------------- */

/* A few plain words for whoever reads this the first time. */
static void notes(enc_bw *b, const enc_summary *s) {
    static const char *const text[] = {
        "encore switched itself off after an internal error (see the warnings above); later launches went "
        "straight to the driver",
        "nothing was captured: a launch sequence must repeat ENCORE_MIN_REPEATS times between flush points "
        "(ENCORE=0 turns capture off)",
        "some captures failed; those sequences run eagerly (ENCORE_LOG has the CUDA errors)",
        "held launches diverged more often than graphs replayed; the reasons above show which kernels vary "
        "(ENCORE_EXCLUDE keeps a kernel out of capture)",
        "most sequences had fewer than two kernels (one kernel between event operations, as JAX issues op by op): "
        "a graph of them saves nothing, so they ran eagerly",
    };
    const int when[] = {
        s->disabled,
        s->launches_seen > 0 && s->graphs_captured == 0,
        s->capture_failures > 0,
        s->graphs_captured > 0 && s->divergences > s->graph_launches,
        s->learnt[ENC_LEARN_UNDER_TWO] * 2 > s->launches_seen - s->launches_replayed && s->launches_seen > 0,
    };
    int noted = 0;
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        if (!when[i]) continue;
        if (!noted++) bw_put(b, "\n", 1);
        bw_fmt(b, "  note: %s\n", text[i]);
    }
}

int enc_report_write_table(int fd, const enc_summary *s, const enc_seq_info *seqs, size_t nseqs,
                           const enc_div_info *divs, size_t ndivs, int pid, int show_calls) {
    enc_bw b;
    b.fd = fd;
    b.err = 0;
    b.len = 0;
    bw_fmt(&b, "encore report (pid %d, version %s)\n", pid, ENCORE_VERSION_STRING);
    time_rows(&b, s);
    field_rows(&b, s);
    deferred_row(&b, s);
    top_seqs(&b, s, seqs, nseqs);
    unreplayed(&b, s);
    top_divs(&b, divs, ndivs);
    if (show_calls) stats_only_rows(&b, s);
    notes(&b, s);
    bw_flush(&b);
    return b.err ? -1 : 0;
}
