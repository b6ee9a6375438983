/* encore: the end-of-run report and the JSON-lines log (see report.h).
 *
 * JSON log (ENCORE_LOG=path, %p -> process id): one JSON object per line,
 * appended with one write(2) each (O_APPEND), so several threads and several
 * processes may share a file. Every line has
 *   "event"  one of start, capture, capture_failure, divergence, evict,
 *            warning, summary
 *   "time"   Unix time in seconds (microsecond resolution)
 *   "pid"    the process that wrote it
 * and then, per event:
 *   start            "ppid", "version", "exe" (path of the program),
 *                    "cmdline" (arguments joined by spaces, cut at 1 KiB),
 *                    "started" (Unix time encore started in this process),
 *                    "options" {field: effective value} for every row of
 *                    policy/options.h: booleans as true/false, integers,
 *                    durations in microseconds, the log level by name,
 *                    strings as strings
 *   capture          "seq" (sequence id), "length" (launches in the graph),
 *                    "first_kernel", "capture_us", "instantiate_us"
 *   capture_failure  "seq", "what" (the step that failed), "cuda_error"
 *                    (CUresult, 0 if none)
 *   divergence       "kind" (kernel | config | args | short), "expected",
 *                    "got" (kernel names, null if unknown; got is null for
 *                    short), "arg_index" (first differing argument for args,
 *                    else -1), "position" (index in the sequence), "count"
 *                    (times this reason was seen so far), "n" (divergences
 *                    of this kind so far), "suppressed" (events of this kind
 *                    left out since the previous one written: the first 5 of
 *                    each kind are written, then at most one a second)
 *   evict            "seq", "hits" (replays of the evicted graph)
 *   warning          "message" (the text printed on stderr, no prefix)
 *   summary          the numbers of the report table:
 *                    "version", "launches_seen", "launches_replayed",
 *                    "launches_eager", "replay_pct" (one decimal),
 *                    "graphs_captured", "graph_launches",
 *                    "graph_launches_patched", "graphs_evicted",
 *                    "capture_failures", "divergences",
 *                    "divergences_by_kind" {kernel, config, args, short},
 *                    "flushes" {stream_call, all_call, legacy_order,
 *                    deadline, chunk_end, capture, opaque_launch, exit},
 *                    "flushes_by_call" {<CUDA entry point>: count} (the
 *                    calls that issued held launches most often, at most 5),
 *                    "calls" {pass, launch, flush_stream, flush_all},
 *                    "deferred_ns", "deferred_samples", "disabled" (0/1),
 *                    "top_sequences" [{seq, length, hits, saved, kernels[],
 *                    evicted}] ordered by saved = (length - 1) * hits,
 *                    "top_divergences" [{kind, expected, got, arg_index,
 *                    position, count}] ordered by count
 * Strings are JSON-escaped and valid UTF-8 (bad bytes become U+FFFD); kernel
 * names are cut at 256 bytes (ending in "..."). The log file is opened at the
 * first event, or at exit if the process made CUDA calls; warnings from
 * before that (at most 8) follow the start event. A forked child writes its
 * own start event (to its own file if the path has %p).
 *
 * Nothing here allocates: lines are built in fixed buffers (stack, or static
 * for the once-only exit path) and written with write(2). */
#include "core/report.h"
#include "core/topk.h"

#include "base/log.h"
#include "policy/options.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ENC_JSON_NAME_MAX 256   /* output bytes of one kernel name in JSON */
#define ENC_JSON_MSG_MAX 1100   /* output bytes of a warning message */
#define ENC_EVENT_BUF 8192      /* one event line */
#define ENC_SUMMARY_BUF 32768   /* the summary line */
#define ENC_TABLE_NAME_MAX 48   /* bytes of a kernel name in the table */
#define ENC_PENDING 8           /* warnings kept until the log opens */
#define ENC_PENDING_LEN 512

/* ---- small helpers ----------------------------------------------------------- */

static double enc_now_unix(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t enc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int enc_tid(void)
{
    return (int)syscall(SYS_gettid);
}

/* strerror() may allocate (translations); these are the errors open() gives
 * for a bad path. */
static const char *enc_errno_text(int e)
{
    switch (e) {
    case ENOENT: return "no such file or directory";
    case EACCES: return "permission denied";
    case EPERM: return "operation not permitted";
    case EROFS: return "read-only file system";
    case ENOSPC: return "no space left on device";
    case EISDIR: return "is a directory";
    case ENOTDIR: return "a path component is not a directory";
    case ENAMETOOLONG: return "file name too long";
    case EMFILE: case ENFILE: return "too many open files";
    case ELOOP: return "too many symbolic links";
    case EDQUOT: return "disk quota exceeded";
    default: return "error";
    }
}

/* "1234567" -> "1,234,567" */
static const char *enc_fmt_count(uint64_t v, char buf[32])
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    int o = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

static double enc_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Expand %p (process id) and %% in a path template. 0, or -1 if too long. */
static int enc_expand_path(const char *tmpl, char *out, size_t cap, int pid)
{
    size_t o = 0;
    for (const char *p = tmpl; *p; p++) {
        char piece[24];
        const char *s = piece;
        size_t n;
        if (p[0] == '%' && p[1] == 'p') {
            n = (size_t)snprintf(piece, sizeof piece, "%d", pid);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            piece[0] = '%';
            n = 1;
            p++;
        } else {
            s = p;
            n = 1;
        }
        if (o + n >= cap)
            return -1;
        memcpy(out + o, s, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}

static int enc_open_append(const char *path)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* Length of the valid UTF-8 sequence at s (at most `avail` bytes), 0 if invalid. */
static size_t enc_utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (n > avail)
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xBF)
            return 0;
    return n;
}

/* ---- JSON writer: a fixed buffer; overflow marks the line unusable --------------- */

typedef struct enc_jw {
    char *buf;
    size_t cap, len;
    int overflow;
} enc_jw;

static void jw_raw(enc_jw *w, const char *s, size_t n)
{
    if (w->overflow || w->len + n >= w->cap) {
        w->overflow = 1;
        return;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void jw_cstr(enc_jw *w, const char *s)
{
    jw_raw(w, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void jw_fmt(enc_jw *w, const char *fmt, ...)
{
    if (w->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= w->cap - w->len) {
        w->overflow = 1;
        return;
    }
    w->len += (size_t)n;
}

/* ,"key": (no comma right after { or [) */
static void jw_key(enc_jw *w, const char *key)
{
    if (w->len > 0 && w->buf[w->len - 1] != '{' && w->buf[w->len - 1] != '[')
        jw_raw(w, ",", 1);
    jw_raw(w, "\"", 1);
    jw_cstr(w, key);
    jw_raw(w, "\":", 2);
}

static void jw_u64(enc_jw *w, const char *key, uint64_t v)
{
    jw_key(w, key);
    jw_fmt(w, "%llu", (unsigned long long)v);
}

static void jw_i64(enc_jw *w, const char *key, int64_t v)
{
    jw_key(w, key);
    jw_fmt(w, "%lld", (long long)v);
}

static void jw_double(enc_jw *w, const char *key, double v, int decimals)
{
    jw_key(w, key);
    if (!isfinite(v))
        jw_cstr(w, "null");
    else
        jw_fmt(w, "%.*f", decimals, v);
}

static void jw_bool(enc_jw *w, const char *key, int v)
{
    jw_key(w, key);
    jw_cstr(w, v ? "true" : "false");
}

/* A JSON string value: escaped, valid UTF-8, at most max_out bytes between
 * the quotes (cut ones end in "..."); NULL gives null. */
static void jw_strval(enc_jw *w, const char *s, size_t max_out)
{
    if (!s) {
        jw_cstr(w, "null");
        return;
    }
    jw_raw(w, "\"", 1);
    size_t out = 0, avail = strlen(s);
    const unsigned char *p = (const unsigned char *)s;
    while (avail > 0) {
        char esc[8];
        const char *piece = esc;
        size_t n, adv;
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            n = 2;
            adv = 1;
        } else if (c < 0x20 || c == 0x7f) {
            switch (c) {
            case '\n': memcpy(esc, "\\n", 2); n = 2; break;
            case '\t': memcpy(esc, "\\t", 2); n = 2; break;
            case '\r': memcpy(esc, "\\r", 2); n = 2; break;
            default: n = (size_t)snprintf(esc, sizeof esc, "\\u%04x", c); break;
            }
            adv = 1;
        } else if (c < 0x80) {
            piece = (const char *)p;
            n = adv = 1;
        } else {
            adv = enc_utf8_len(p, avail);
            if (adv == 0) {
                memcpy(esc, "\\ufffd", 6);
                n = 6;
                adv = 1;
            } else {
                piece = (const char *)p;
                n = adv;
            }
        }
        if (out + n > max_out) {
            jw_raw(w, "...", 3);
            break;
        }
        jw_raw(w, piece, n);
        out += n;
        p += adv;
        avail -= adv;
    }
    jw_raw(w, "\"", 1);
}

static void jw_str(enc_jw *w, const char *key, const char *s, size_t max_out)
{
    jw_key(w, key);
    jw_strval(w, s, max_out);
}

/* ---- text writer for the table: fixed buffer, flushed with write(2) ------------ */

typedef struct enc_bw {
    int fd;
    int err;
    size_t len;
    char buf[8192];
} enc_bw;

static void bw_flush(enc_bw *b)
{
    if (b->len && !b->err && enc_write_all(b->fd, b->buf, b->len) != 0)
        b->err = 1;
    b->len = 0;
}

static void bw_put(enc_bw *b, const char *s, size_t n)
{
    while (n > 0) {
        if (b->len == sizeof b->buf)
            bw_flush(b);
        size_t k = sizeof b->buf - b->len;
        if (k > n)
            k = n;
        memcpy(b->buf + b->len, s, k);
        b->len += k;
        s += k;
        n -= k;
    }
}

__attribute__((format(printf, 2, 3))) static void bw_fmt(enc_bw *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    bw_put(b, line, (size_t)n);
}

/* The readable part of an Itanium-mangled C++ name, for the table only (the
 * JSON keeps the exact name): "_Z6k_axpyPfPKffi" -> "k_axpy",
 * "_ZN2at6native6kernelIfEEvT_" -> "at::native::kernel<...>". Only the
 * qualified function name, no parameters; anything unexpected gives 0 and the
 * caller shows the raw name. No allocation (unlike __cxa_demangle). */
static int enc_short_name(const char *m, char *out, size_t cap)
{
    const char *p = m;
    size_t o = 0;
    if (p[0] != '_' || p[1] != 'Z')
        return 0;
    p += 2;
    if (*p == 'L')
        p++;
    int nested = *p == 'N';
    if (nested) {
        p++;
        while (*p == 'r' || *p == 'V' || *p == 'K' || *p == 'R' || *p == 'O')
            p++;
    }
    int parts = 0;
    for (;;) {
        const char *piece = NULL;
        size_t len = 0;
        if (p[0] == 'S' && p[1] == 't') {
            piece = "std";
            len = 3;
            p += 2;
        } else if (*p >= '1' && *p <= '9') {
            while (*p >= '0' && *p <= '9') {
                len = len * 10 + (size_t)(*p - '0');
                if (len > 4096)
                    return 0;
                p++;
            }
            if (strnlen(p, len) < len)
                return 0;
            piece = p;
            p += len;
        } else {
            break;
        }
        if (o + len + 3 >= cap)
            return 0;
        if (parts++) {
            out[o++] = ':';
            out[o++] = ':';
        }
        memcpy(out + o, piece, len);
        o += len;
        if (!nested && piece[0] != 's') /* _ZSt4sort...: std::sort */
            break;
    }
    if (parts == 0)
        return 0;
    if (*p == 'I' && o + 6 < cap) {
        memcpy(out + o, "<...>", 5);
        o += 5;
    }
    out[o] = '\0';
    return 1;
}

/* A kernel name for the table: demangled to its readable part, control
 * characters as '?', cut at max bytes (on a UTF-8 boundary) with "...", "?"
 * for NULL. */
static const char *enc_table_name(const char *s, char *buf, size_t cap, size_t max)
{
    char shortened[256];
    if (!s || !*s)
        return "?";
    if (enc_short_name(s, shortened, sizeof shortened))
        s = shortened;
    if (max > cap - 4)
        max = cap - 4;
    size_t n = strlen(s);
    int cut = n > max;
    if (cut) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
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

/* ---- names ------------------------------------------------------------------------ */

static const char *const enc_div_keys[ENC_DIV_KIND_COUNT] = {"kernel", "config", "args", "short"};
static const char *const enc_div_labels[ENC_DIV_KIND_COUNT] = {
    "a different kernel came", "launch config differed", "arguments differed", "ended early"};
static const char *const enc_flush_keys[ENC_FLUSH_REASON_COUNT] = {
    "stream_call", "all_call", "legacy_order", "deadline", "chunk_end", "capture", "opaque_launch", "exit"};
static const char *const enc_flush_labels[ENC_FLUSH_REASON_COUNT] = {
    "call on the same stream", "device-wide call", "legacy default stream order", "deadline passed",
    "chunk full (ENCORE_MAX_CHUNK)", "program began a capture", "launch without parameter info",
    "process exit"};
static const char *const enc_call_keys[ENC_CLASS_COUNT] = {"pass", "launch", "flush_stream", "flush_all"};
static const char *const enc_call_labels[ENC_CLASS_COUNT] = {
    "pass (straight through)", "launch", "flush-stream", "flush-all"};

const char *enc_report_div_kind_key(int kind)
{
    return kind >= 0 && kind < ENC_DIV_KIND_COUNT ? enc_div_keys[kind] : "unknown";
}

const char *enc_report_flush_reason_key(int reason)
{
    return reason >= 0 && reason < ENC_FLUSH_REASON_COUNT ? enc_flush_keys[reason] : "unknown";
}

/* ---- top lists -------------------------------------------------------------------- */

uint64_t enc_report_saved(const enc_seq_info *s)
{
    return s->length > 0 ? (uint64_t)(s->length - 1) * s->hits : 0;
}

static int enc_seq_better(const enc_seq_info *a, const enc_seq_info *b)
{
    uint64_t sa = enc_report_saved(a), sb = enc_report_saved(b);
    if (sa != sb)
        return sa > sb;
    if (a->hits != b->hits)
        return a->hits > b->hits;
    return a->id < b->id;
}

static int enc_div_better(const enc_div_info *a, const enc_div_info *b)
{
    if (a->count != b->count)
        return a->count > b->count;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->position < b->position;
}

/* Indices of the best ENC_REPORT_TOP of n elements, best first. */
static size_t enc_top(const void *v, size_t n, size_t size, int (*better)(const void *, const void *),
                      size_t idx[ENC_REPORT_TOP])
{
    return enc_top_k(v, n, size, better, idx, ENC_REPORT_TOP);
}

static int enc_seq_better_v(const void *a, const void *b) { return enc_seq_better(a, b); }
static int enc_div_better_v(const void *a, const void *b) { return enc_div_better(a, b); }

static size_t enc_top_seqs(const enc_seq_info *v, size_t n, size_t idx[ENC_REPORT_TOP])
{
    return enc_top(v, n, sizeof *v, enc_seq_better_v, idx);
}

static size_t enc_top_divs(const enc_div_info *v, size_t n, size_t idx[ENC_REPORT_TOP])
{
    return enc_top(v, n, sizeof *v, enc_div_better_v, idx);
}

/* ---- the table -------------------------------------------------------------------- */

#define ENC_LABEL_W 34

static void enc_row(enc_bw *b, const char *label, uint64_t v)
{
    char num[32];
    bw_fmt(b, "  %-*s %13s\n", ENC_LABEL_W, label, enc_fmt_count(v, num));
}

static void enc_row_pct(enc_bw *b, const char *label, uint64_t v, uint64_t whole)
{
    char num[32];
    bw_fmt(b, "  %-*s %13s  %5.1f%%\n", ENC_LABEL_W, label, enc_fmt_count(v, num), enc_pct(v, whole));
}

int enc_report_write_table(int fd, const enc_summary *s, const enc_seq_info *seqs, size_t nseqs,
                           const enc_div_info *divs, size_t ndivs, int pid, int show_calls)
{
    enc_bw b;
    b.fd = fd;
    b.err = 0;
    b.len = 0;
    char num[32], label[64];

    bw_fmt(&b, "encore report (pid %d)\n", pid);
    enc_row(&b, "kernel launches seen", s->launches_seen);
    enc_row_pct(&b, "  replayed through graphs", s->launches_replayed, s->launches_seen);
    enc_row_pct(&b, "  launched eagerly (one by one)", s->launches_eager, s->launches_seen);
    enc_row(&b, "graphs captured", s->graphs_captured);
    enc_row(&b, "  graph launches (replays)", s->graph_launches);
    enc_row(&b, "    with arguments patched in", s->graph_launches_patched);
    enc_row(&b, "  evicted (ENCORE_MAX_GRAPHS)", s->graphs_evicted);
    enc_row(&b, "  capture failures", s->capture_failures);
    enc_row(&b, "divergences", s->divergences);
    for (int k = 0; k < ENC_DIV_KIND_COUNT; k++) {
        snprintf(label, sizeof label, "  %s", enc_div_labels[k]);
        enc_row(&b, label, s->divergences_by_kind[k]);
    }
    uint64_t flushes = 0;
    for (int r = 0; r < ENC_FLUSH_REASON_COUNT; r++)
        flushes += s->flushes[r];
    enc_row(&b, "held launches issued (flushes)", flushes);
    for (int r = 0; r < ENC_FLUSH_REASON_COUNT; r++) {
        if (!s->flushes[r])
            continue;
        snprintf(label, sizeof label, "  %s", enc_flush_labels[r]);
        enc_row_pct(&b, label, s->flushes[r], flushes);
    }
    if (s->n_flush_calls > 0) {
        bw_fmt(&b, "    flush points, by the CUDA call that issued held launches:\n");
        for (int k = 0; k < s->n_flush_calls && k < ENC_FLUSH_CALLS_TOP; k++) {
            snprintf(label, sizeof label, "    %s", s->flush_call_names[k] ? s->flush_call_names[k] : "?");
            enc_row_pct(&b, label, s->flush_call_counts[k], flushes);
        }
    }
    if (s->deferred_samples) {
        double us = (double)s->deferred_ns / (double)s->deferred_samples / 1000.0;
        bw_fmt(&b, "  %-*s %10.2f us  (average of %s sampled launches)\n", ENC_LABEL_W, "encore time per held launch",
               us, enc_fmt_count(s->deferred_samples, num));
    }

    size_t si[ENC_REPORT_TOP];
    size_t ns = enc_top_seqs(seqs, nseqs, si);
    if (ns) {
        bw_fmt(&b, "\n  top sequences by launch calls saved (saved = (length - 1) x replays)\n");
        bw_fmt(&b, "  %3s %10s %7s %12s %14s  %s\n", "#", "seq", "length", "replays", "saved", "first kernels");
        for (size_t k = 0; k < ns; k++) {
            const enc_seq_info *q = &seqs[si[k]];
            char n1[32], n2[32], kn[3][ENC_TABLE_NAME_MAX + 8];
            int nk = 0;
            for (int j = 0; j < 3; j++)
                if (q->kernels[j])
                    enc_table_name(q->kernels[j], kn[nk++], sizeof kn[0], ENC_TABLE_NAME_MAX);
            bw_fmt(&b, "  %3zu %10llu %7u %12s %14s  %s%s%s%s%s%s%s\n", k + 1, (unsigned long long)q->id,
                   q->length, enc_fmt_count(q->hits, n1), enc_fmt_count(enc_report_saved(q), n2),
                   nk > 0 ? kn[0] : "?", nk > 1 ? ", " : "", nk > 1 ? kn[1] : "", nk > 2 ? ", " : "",
                   nk > 2 ? kn[2] : "", q->length > (uint32_t)nk && nk > 0 ? ", ..." : "",
                   q->evicted ? "  (evicted)" : "");
        }
        if (s->graphs_captured > ns)
            bw_fmt(&b, "  (%zu of %s captured sequences shown)\n", ns, enc_fmt_count(s->graphs_captured, num));
    }

    size_t di[ENC_REPORT_TOP];
    size_t nd = enc_top_divs(divs, ndivs, di);
    if (nd) {
        bw_fmt(&b, "\n  most frequent divergences (held launches that stopped matching every captured sequence)\n");
        bw_fmt(&b, "  %3s %10s  %-18s %8s  %s\n", "#", "count", "what differed", "position", "expected -> got");
        for (size_t k = 0; k < nd; k++) {
            const enc_div_info *d = &divs[di[k]];
            char what[32], e[ENC_TABLE_NAME_MAX + 8], g[ENC_TABLE_NAME_MAX + 8], where[2 * ENC_TABLE_NAME_MAX + 40];
            const char *en = enc_table_name(d->expected, e, sizeof e, ENC_TABLE_NAME_MAX);
            const char *gn = enc_table_name(d->got, g, sizeof g, ENC_TABLE_NAME_MAX);
            switch (d->kind) {
            case ENC_DIV_KERNEL:
                snprintf(what, sizeof what, "kernel");
                snprintf(where, sizeof where, "%s -> %s", en, gn);
                break;
            case ENC_DIV_CONFIG:
                snprintf(what, sizeof what, "launch config");
                snprintf(where, sizeof where, "%s", en);
                break;
            case ENC_DIV_ARGS:
                if (d->arg_index >= 0)
                    snprintf(what, sizeof what, "argument %d", d->arg_index);
                else
                    snprintf(what, sizeof what, "arguments");
                snprintf(where, sizeof where, "%s", en);
                break;
            case ENC_DIV_SHORT:
                snprintf(what, sizeof what, "ended early");
                snprintf(where, sizeof where, "%s -> (a flush point came first)", en);
                break;
            default:
                snprintf(what, sizeof what, "?");
                snprintf(where, sizeof where, "%s -> %s", en, gn);
                break;
            }
            bw_fmt(&b, "  %3zu %10s  %-18s %8u  %s\n", k + 1, enc_fmt_count(d->count, num), what, d->position, where);
        }
    }

    if (show_calls) {
        uint64_t total = 0;
        for (int c = 0; c < ENC_CLASS_COUNT; c++)
            total += s->calls[c];
        bw_fmt(&b, "\n  hook calls by class (ENCORE_STATS=1)\n");
        for (int c = 0; c < ENC_CLASS_COUNT; c++) {
            snprintf(label, sizeof label, "  %s", enc_call_labels[c]);
            enc_row_pct(&b, label, s->calls[c], total);
        }
    }

    /* A few plain words for whoever reads this the first time. */
    int noted = 0;
#define ENC_NOTE(...) do { if (!noted++) bw_put(&b, "\n", 1); bw_fmt(&b, "  note: " __VA_ARGS__); } while (0)
    if (s->disabled)
        ENC_NOTE("encore switched itself off after an internal error (see the warnings above); "
                 "later launches went straight to the driver\n");
    if (s->launches_seen > 0 && s->graphs_captured == 0)
        ENC_NOTE("nothing was captured: a launch sequence must repeat ENCORE_MIN_REPEATS times between "
                 "flush points (ENCORE=0 turns capture off)\n");
    if (s->capture_failures > 0)
        ENC_NOTE("some captures failed; those sequences run eagerly (ENCORE_LOG has the CUDA errors)\n");
    if (s->graphs_captured > 0 && s->divergences > s->graph_launches)
        ENC_NOTE("held launches diverged more often than graphs replayed; the reasons above show which kernels "
                 "vary (ENCORE_EXCLUDE keeps a kernel out of capture)\n");
#undef ENC_NOTE
    bw_flush(&b);
    return b.err ? -1 : 0;
}

/* ---- the JSON summary line ------------------------------------------------------------ */

static void enc_ev_begin(enc_jw *w, char *buf, size_t cap, const char *event, double t, int pid)
{
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->overflow = 0;
    jw_raw(w, "{", 1);
    jw_str(w, "event", event, 64);
    jw_double(w, "time", t, 6);
    jw_i64(w, "pid", pid);
}

/* Close the line; its length, or 0 if it overflowed. */
static size_t enc_ev_end(enc_jw *w)
{
    jw_raw(w, "}\n", 2);
    if (w->overflow)
        return 0;
    w->buf[w->len] = '\0';
    return w->len;
}

/* "key":{"names[0]":counts[0],...} (NULL names left out). */
static void jw_counts(enc_jw *w, const char *key, const char *const *names, const uint64_t *counts, int n)
{
    jw_key(w, key);
    jw_raw(w, "{", 1);
    for (int i = 0; i < n; i++)
        if (names[i])
            jw_u64(w, names[i], counts[i]);
    jw_raw(w, "}", 1);
}

/* The fields of one divergence reason, in the summary and in its event. */
static void jw_div_fields(enc_jw *w, const enc_div_info *d)
{
    jw_str(w, "kind", enc_report_div_kind_key((int)d->kind), 32);
    jw_str(w, "expected", d->expected, ENC_JSON_NAME_MAX);
    jw_str(w, "got", d->got, ENC_JSON_NAME_MAX);
    jw_i64(w, "arg_index", d->arg_index);
    jw_u64(w, "position", d->position);
    jw_u64(w, "count", d->count);
}

size_t enc_report_format_summary(char *buf, size_t cap, const enc_summary *s, const enc_seq_info *seqs,
                                 size_t nseqs, const enc_div_info *divs, size_t ndivs, int pid)
{
    enc_jw w;
    enc_ev_begin(&w, buf, cap, "summary", enc_now_unix(), pid);
    jw_str(&w, "version", ENCORE_VERSION_STRING, 32);
    jw_u64(&w, "launches_seen", s->launches_seen);
    jw_u64(&w, "launches_replayed", s->launches_replayed);
    jw_u64(&w, "launches_eager", s->launches_eager);
    jw_double(&w, "replay_pct", enc_pct(s->launches_replayed, s->launches_seen), 1);
    jw_u64(&w, "graphs_captured", s->graphs_captured);
    jw_u64(&w, "graph_launches", s->graph_launches);
    jw_u64(&w, "graph_launches_patched", s->graph_launches_patched);
    jw_u64(&w, "graphs_evicted", s->graphs_evicted);
    jw_u64(&w, "capture_failures", s->capture_failures);
    jw_u64(&w, "divergences", s->divergences);
    jw_counts(&w, "divergences_by_kind", enc_div_keys, s->divergences_by_kind, ENC_DIV_KIND_COUNT);
    jw_counts(&w, "flushes", enc_flush_keys, s->flushes, ENC_FLUSH_REASON_COUNT);
    jw_counts(&w, "flushes_by_call", s->flush_call_names, s->flush_call_counts,
              s->n_flush_calls < ENC_FLUSH_CALLS_TOP ? s->n_flush_calls : ENC_FLUSH_CALLS_TOP);
    jw_counts(&w, "calls", enc_call_keys, s->calls, ENC_CLASS_COUNT);
    jw_u64(&w, "deferred_ns", s->deferred_ns);
    jw_u64(&w, "deferred_samples", s->deferred_samples);
    jw_i64(&w, "disabled", s->disabled ? 1 : 0);

    size_t si[ENC_REPORT_TOP];
    size_t ns = enc_top_seqs(seqs, nseqs, si);
    jw_key(&w, "top_sequences");
    jw_raw(&w, "[", 1);
    for (size_t k = 0; k < ns; k++) {
        const enc_seq_info *q = &seqs[si[k]];
        if (k)
            jw_raw(&w, ",", 1);
        jw_raw(&w, "{", 1);
        jw_u64(&w, "seq", q->id);
        jw_u64(&w, "length", q->length);
        jw_u64(&w, "hits", q->hits);
        jw_u64(&w, "saved", enc_report_saved(q));
        jw_key(&w, "kernels");
        jw_raw(&w, "[", 1);
        int first = 1;
        for (int j = 0; j < 3; j++) {
            if (!q->kernels[j])
                continue;
            if (!first)
                jw_raw(&w, ",", 1);
            first = 0;
            jw_strval(&w, q->kernels[j], ENC_JSON_NAME_MAX);
        }
        jw_raw(&w, "]", 1);
        jw_bool(&w, "evicted", q->evicted);
        jw_raw(&w, "}", 1);
    }
    jw_raw(&w, "]", 1);

    size_t di[ENC_REPORT_TOP];
    size_t nd = enc_top_divs(divs, ndivs, di);
    jw_key(&w, "top_divergences");
    jw_raw(&w, "[", 1);
    for (size_t k = 0; k < nd; k++) {
        const enc_div_info *d = &divs[di[k]];
        if (k)
            jw_raw(&w, ",", 1);
        jw_raw(&w, "{", 1);
        jw_div_fields(&w, d);
        jw_raw(&w, "}", 1);
    }
    jw_raw(&w, "]", 1);
    return enc_ev_end(&w);
}

/* ---- the JSON log file ----------------------------------------------------------------- */

enum { ENC_LOG_CLOSED = 0, ENC_LOG_OPENING, ENC_LOG_OPEN, ENC_LOG_OFF };

static int g_inited;                       /* enc_report_init ran */
static char g_log_tmpl[ENC_OPT_STRLEN];    /* ENCORE_LOG as given */
static double g_started;                   /* Unix time of enc_report_init */
static int g_log_state;                    /* ENC_LOG_* */
static int g_log_fd = -1;
static int g_log_pid;                      /* process the open fd belongs to */
static int g_log_opener_pid, g_log_opener_tid;
static int g_log_write_failed;

static struct enc_pending {
    int state; /* 0 empty, 1 being written, 2 ready, 3 written out */
    double time;
    char msg[ENC_PENDING_LEN];
} g_pending[ENC_PENDING];
static unsigned g_pending_claimed, g_pending_dropped;
static int g_pending_dropped_told;

static void enc_log_line(int fd, const char *line, size_t len)
{
    if (len == 0)
        return;
    if (enc_write_all(fd, line, len) != 0 && !__atomic_exchange_n(&g_log_write_failed, 1, __ATOMIC_RELAXED)) {
        int e = errno;
        enc_log(ENC_LOG_WARN, "writing the JSON log (ENCORE_LOG) failed: %s; later events may be missing",
                enc_errno_text(e));
    }
}

static void enc_write_warning_event(int fd, double t, const char *msg)
{
    char buf[ENC_EVENT_BUF];
    enc_jw w;
    enc_ev_begin(&w, buf, sizeof buf, "warning", t, (int)getpid());
    jw_str(&w, "message", msg, ENC_JSON_MSG_MAX);
    enc_log_line(fd, buf, enc_ev_end(&w));
}

/* Write out the warnings kept from before the log opened. */
static void enc_flush_pending(int fd)
{
    unsigned n = __atomic_load_n(&g_pending_claimed, __ATOMIC_ACQUIRE);
    if (n > ENC_PENDING)
        n = ENC_PENDING;
    for (unsigned i = 0; i < n; i++) {
        int ready = 2;
        if (__atomic_compare_exchange_n(&g_pending[i].state, &ready, 3, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            enc_write_warning_event(fd, g_pending[i].time, g_pending[i].msg);
    }
    unsigned dropped = __atomic_load_n(&g_pending_dropped, __ATOMIC_RELAXED);
    if (dropped && !__atomic_exchange_n(&g_pending_dropped_told, 1, __ATOMIC_RELAXED)) {
        char msg[96];
        snprintf(msg, sizeof msg, "%u more warnings from before the log opened were not kept", dropped);
        enc_write_warning_event(fd, enc_now_unix(), msg);
    }
}

static void enc_keep_pending(const char *msg)
{
    unsigned i = __atomic_fetch_add(&g_pending_claimed, 1, __ATOMIC_ACQ_REL);
    if (i >= ENC_PENDING) {
        __atomic_fetch_add(&g_pending_dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    g_pending[i].time = enc_now_unix();
    snprintf(g_pending[i].msg, sizeof g_pending[i].msg, "%s", msg);
    __atomic_store_n(&g_pending[i].state, 2, __ATOMIC_RELEASE);
}

/* /proc/self/cmdline with the arguments joined by spaces. */
static void enc_read_cmdline(char *buf, size_t cap)
{
    buf[0] = '\0';
    int fd;
    do
        fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return;
    size_t n = 0;
    while (n < cap - 1) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
}

static void enc_write_start_event(int fd, int pid)
{
    char buf[ENC_EVENT_BUF], exe[1024], cmd[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    enc_read_cmdline(cmd, sizeof cmd);

    enc_jw w;
    enc_ev_begin(&w, buf, sizeof buf, "start", enc_now_unix(), pid);
    jw_i64(&w, "ppid", getppid());
    jw_str(&w, "version", ENCORE_VERSION_STRING, 32);
    jw_str(&w, "exe", exe, sizeof exe);
    jw_str(&w, "cmdline", cmd, sizeof cmd);
    jw_double(&w, "started", g_started, 6);
    jw_key(&w, "options");
    jw_raw(&w, "{", 1);
    for (int i = 0; i < enc_option_count; i++) {
        const enc_option_desc *d = &enc_option_table[i];
        switch (d->type) {
        case ENC_OPT_BOOL:
            jw_bool(&w, d->field, (int)enc_option_int(i));
            break;
        case ENC_OPT_INT:
        case ENC_OPT_DURATION:
            jw_i64(&w, d->field, enc_option_int(i));
            break;
        case ENC_OPT_LEVEL:
            jw_str(&w, d->field, enc_log_level_name((int)enc_option_int(i)), 16);
            break;
        case ENC_OPT_STRING:
            jw_str(&w, d->field, enc_option_str(i), ENC_OPT_STRLEN + 64);
            break;
        }
    }
    jw_raw(&w, "}", 1);
    enc_log_line(fd, buf, enc_ev_end(&w));
}

/* Open the log for this process. Called with g_log_state == OPENING, by the
 * thread that set it. reuse_fd: a forked child keeps the parent's file. */
static void enc_log_open(int reuse_fd)
{
    int pid = (int)getpid();
    int fd = reuse_fd;
    if (fd < 0) {
        char path[4096];
        if (enc_expand_path(g_log_tmpl, path, sizeof path, pid) != 0) {
            __atomic_store_n(&g_log_state, ENC_LOG_OFF, __ATOMIC_RELEASE);
            enc_log(ENC_LOG_WARN, "ENCORE_LOG path is too long; the JSON log is off");
            return;
        }
        fd = enc_open_append(path);
        if (fd < 0) {
            int e = errno;
            __atomic_store_n(&g_log_state, ENC_LOG_OFF, __ATOMIC_RELEASE);
            enc_log(ENC_LOG_WARN, "cannot open ENCORE_LOG file %s: %s; the JSON log is off", path,
                    enc_errno_text(e));
            return;
        }
    }
    g_log_fd = fd;
    g_log_pid = pid;
    enc_write_start_event(fd, pid);
    enc_flush_pending(fd);
    __atomic_store_n(&g_log_state, ENC_LOG_OPEN, __ATOMIC_RELEASE);
}

/* The log fd for this process, opening it if need be; -1 if there is none.
 * open_it = 0: only an already open log (warnings do not open it). */
static int enc_log_get(int open_it)
{
    if (!__atomic_load_n(&g_inited, __ATOMIC_ACQUIRE))
        return -1;
    int pid = (int)getpid();
    for (int spins = 0;; spins++) {
        int st = __atomic_load_n(&g_log_state, __ATOMIC_ACQUIRE);
        if (st == ENC_LOG_OFF)
            return -1;
        if (st == ENC_LOG_OPEN) {
            if (g_log_pid == pid) {
                if (__atomic_load_n(&g_pending_claimed, __ATOMIC_RELAXED))
                    enc_flush_pending(g_log_fd);
                return g_log_fd;
            }
            if (!open_it)
                return -1;
            /* A forked child: its own file if the path has %p, else the same. */
            if (__atomic_compare_exchange_n(&g_log_state, &st, ENC_LOG_OPENING, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&g_log_opener_pid, pid, __ATOMIC_RELAXED);
                __atomic_store_n(&g_log_opener_tid, enc_tid(), __ATOMIC_RELAXED);
                enc_log_open(strstr(g_log_tmpl, "%p") ? -1 : g_log_fd);
            }
            continue;
        }
        if (st == ENC_LOG_CLOSED) {
            if (!open_it)
                return -1;
            if (__atomic_compare_exchange_n(&g_log_state, &st, ENC_LOG_OPENING, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&g_log_opener_pid, pid, __ATOMIC_RELAXED);
                __atomic_store_n(&g_log_opener_tid, enc_tid(), __ATOMIC_RELAXED);
                enc_log_open(-1);
            }
            continue;
        }
        /* OPENING: by this very thread (re-entered) -> nothing; by a thread of
         * a parent process that forked meanwhile -> take over; else wait. */
        if (!open_it || __atomic_load_n(&g_log_opener_tid, __ATOMIC_RELAXED) == enc_tid())
            return -1;
        if (__atomic_load_n(&g_log_opener_pid, __ATOMIC_RELAXED) != pid) {
            __atomic_compare_exchange_n(&g_log_state, &st, g_log_fd >= 0 ? ENC_LOG_OPEN : ENC_LOG_CLOSED, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            continue;
        }
        if (spins > 100000)
            return -1; /* never hang the program for a log line */
        sched_yield();
    }
}

void enc_report_init(void)
{
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
        return;
    g_started = enc_now_unix();
    snprintf(g_log_tmpl, sizeof g_log_tmpl, "%s", enc_opt.log_path);
    if (g_log_tmpl[0] == '\0')
        __atomic_store_n(&g_log_state, ENC_LOG_OFF, __ATOMIC_RELEASE);
    __atomic_store_n(&g_inited, 1, __ATOMIC_RELEASE);
}

/* ---- events ------------------------------------------------------------------------------ */

void enc_report_event_warning(const char *msg)
{
    if (!msg)
        return;
    if (__atomic_load_n(&g_log_state, __ATOMIC_ACQUIRE) == ENC_LOG_OFF)
        return;
    int fd = enc_log_get(0);
    if (fd < 0) {
        enc_keep_pending(msg);
        return;
    }
    enc_write_warning_event(fd, enc_now_unix(), msg);
}

void enc_report_event_capture(uint64_t seq_id, uint32_t length, const char *first_kernel, double capture_us,
                              double instantiate_us)
{
    int fd = enc_log_get(1);
    if (fd < 0)
        return;
    char buf[ENC_EVENT_BUF];
    enc_jw w;
    enc_ev_begin(&w, buf, sizeof buf, "capture", enc_now_unix(), (int)getpid());
    jw_u64(&w, "seq", seq_id);
    jw_u64(&w, "length", length);
    jw_str(&w, "first_kernel", first_kernel, ENC_JSON_NAME_MAX);
    jw_double(&w, "capture_us", capture_us, 1);
    jw_double(&w, "instantiate_us", instantiate_us, 1);
    enc_log_line(fd, buf, enc_ev_end(&w));
}

static struct {
    uint64_t seen;
    uint64_t logged_at;
    int64_t last_ms;
} g_div_rate[ENC_DIV_KIND_COUNT + 1];

void enc_report_event_divergence(const enc_div_info *d)
{
    if (!d || !__atomic_load_n(&g_inited, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&g_log_state, __ATOMIC_ACQUIRE) == ENC_LOG_OFF)
        return;
    int k = (int)d->kind;
    if (k < 0 || k >= ENC_DIV_KIND_COUNT)
        k = ENC_DIV_KIND_COUNT;
    uint64_t n = __atomic_add_fetch(&g_div_rate[k].seen, 1, __ATOMIC_RELAXED);
    int64_t now = enc_now_ms();
    if (n > ENC_REPORT_DIV_EVENTS_FIRST) {
        int64_t last = __atomic_load_n(&g_div_rate[k].last_ms, __ATOMIC_RELAXED);
        if (now - last < 1000 ||
            !__atomic_compare_exchange_n(&g_div_rate[k].last_ms, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return;
    } else {
        __atomic_store_n(&g_div_rate[k].last_ms, now, __ATOMIC_RELAXED);
    }
    uint64_t prev = __atomic_exchange_n(&g_div_rate[k].logged_at, n, __ATOMIC_RELAXED);
    uint64_t suppressed = n > prev + 1 ? n - prev - 1 : 0;

    int fd = enc_log_get(1);
    if (fd < 0)
        return;
    char buf[ENC_EVENT_BUF];
    enc_jw w;
    enc_ev_begin(&w, buf, sizeof buf, "divergence", enc_now_unix(), (int)getpid());
    jw_div_fields(&w, d);
    jw_u64(&w, "n", n);
    jw_u64(&w, "suppressed", suppressed);
    enc_log_line(fd, buf, enc_ev_end(&w));
}

void enc_report_event_evict(uint64_t seq_id, uint64_t hits)
{
    int fd = enc_log_get(1);
    if (fd < 0)
        return;
    char buf[512];
    enc_jw w;
    enc_ev_begin(&w, buf, sizeof buf, "evict", enc_now_unix(), (int)getpid());
    jw_u64(&w, "seq", seq_id);
    jw_u64(&w, "hits", hits);
    enc_log_line(fd, buf, enc_ev_end(&w));
}

void enc_report_event_capture_failure(uint64_t seq_id, const char *what, int cuda_error)
{
    int fd = enc_log_get(1);
    if (fd < 0)
        return;
    char buf[ENC_EVENT_BUF];
    enc_jw w;
    enc_ev_begin(&w, buf, sizeof buf, "capture_failure", enc_now_unix(), (int)getpid());
    jw_u64(&w, "seq", seq_id);
    jw_str(&w, "what", what, ENC_JSON_MSG_MAX);
    jw_i64(&w, "cuda_error", cuda_error);
    enc_log_line(fd, buf, enc_ev_end(&w));
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
static void enc_keep_best(void *arr, size_t *n, size_t size, const void *item,
                          int (*better)(const void *, const void *))
{
    char *a = arr;
    if (*n < ENC_REPORT_TOP) {
        memcpy(a + (*n)++ * size, item, size);
        return;
    }
    size_t worst = 0;
    for (size_t i = 1; i < ENC_REPORT_TOP; i++)
        if (better(a + worst * size, a + i * size))
            worst = i;
    if (better(item, a + worst * size))
        memcpy(a + worst * size, item, size);
}

static void enc_collect_seq(const enc_seq_info *s, void *ctx)
{
    (void)ctx;
    enc_keep_best(g_exit.seqs, &g_exit.nseqs, sizeof *s, s, enc_seq_better_v);
}

static void enc_collect_div(const enc_div_info *d, void *ctx)
{
    (void)ctx;
    enc_keep_best(g_exit.divs, &g_exit.ndivs, sizeof *d, d, enc_div_better_v);
}

void enc_report_at_exit(void)
{
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
        return;
    if (!enc_stats_touched())
        return; /* a helper process that never used CUDA: say nothing */

    memset(&g_exit.summary, 0, sizeof g_exit.summary);
    g_exit.nseqs = g_exit.ndivs = 0;
    enc_stats_snapshot(&g_exit.summary);
    enc_stats_foreach_seq(enc_collect_seq, NULL);
    enc_stats_foreach_divergence(enc_collect_div, NULL);
    int pid = (int)getpid();

    if (enc_opt.report || enc_opt.stats || enc_opt.report_file[0]) {
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
        enc_report_write_table(fd, &g_exit.summary, g_exit.seqs, g_exit.nseqs, g_exit.divs, g_exit.ndivs, pid,
                               enc_opt.stats);
        if (own >= 0)
            close(own);
    }

    int lfd = enc_log_get(1);
    if (lfd >= 0) {
        size_t n = enc_report_format_summary(g_exit.line, sizeof g_exit.line, &g_exit.summary, g_exit.seqs,
                                             g_exit.nseqs, g_exit.divs, g_exit.ndivs, pid);
        enc_log_line(lfd, g_exit.line, n);
    }
}
