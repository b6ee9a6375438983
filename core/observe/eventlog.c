/* encore: the JSON-lines event log (see report.h and eventlog.h).
 *
 * JSON log (ENCORE_LOG=path, %p -> process id): one JSON object per line,
 * appended with one write(2) each (O_APPEND), so several threads and several
 * processes may share a file. Every line has
 *   "event"  one of start, capture, capture_failure, divergence, evict,
 *            hold_given_up, hold_resumed, capture_given_up, warning, summary
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
 *   hold_given_up    "first_kernel" (of the sequences starting there),
 *                    "replayed" (of the last "holds" there), "skip"
 *                    (sequences run eagerly there before the next try)
 *   hold_resumed     "first_kernel", "why" (back-off | new graph)
 *   capture_given_up the same fields as hold_given_up, of captures: "replayed"
 *                    (of the "holds" graphs captured there), "skip" (captures
 *                    refused there before the next try)
 *   warning          "message" (the text printed on stderr, no prefix)
 *   summary          the numbers of the report table (written by
 *                    core/observe/report.c, one list of fields for both):
 *                    "version", "launches_seen", "launches_replayed",
 *                    "launches_eager", "replay_pct" (one decimal),
 *                    "graphs_captured", "graph_launches",
 *                    "graph_launches_patched", "nodes_patched",
 *                    "graph_structures", "graphs_evicted",
 *                    "capture_failures", "event_nodes_turned_back",
 *                    "events_not_held" (0/1), "divergences",
 *                    "divergences_by_kind" {kernel, config, args, short},
 *                    "flushes" {stream_call, all_call, legacy_order,
 *                    deadline, sequence_full, capture, opaque_launch, exit},
 *                    "flushes_by_call" {<CUDA entry point>: count} (the
 *                    calls that issued held launches most often, at most 5),
 *                    "calls" {pass, launch, flush_stream, flush_all},
 *                    "holds", "holds_replayed", "held_unpaid_ns",
 *                    "holds_given_up", "holds_resumed",
 *                    "streams_left_alone", "streams_rested",
 *                    "launches_unrecorded", "switched_off", "launches_passive",
 *                    "deferred_ns", "deferred_samples", "release_ns",
 *                    "release_samples", "disabled" (0/1),
 *                    "top_sequences" [{seq, length, hits, saved, kernels[],
 *                    evicted}] ordered by saved = (length - 1) * hits,
 *                    "never_replayed" [the same fields] the first 8 graphs
 *                    captured that never replayed, the first captured first,
 *                    "top_divergences" [{kind, expected, got, arg_index,
 *                    position, count}] ordered by count
 * Strings are JSON-escaped and valid UTF-8 (bad bytes become U+FFFD); kernel
 * names are cut at 256 bytes (ending in "..."). The log file is opened at the
 * first event, or at exit if the process made CUDA calls; warnings from
 * before that (at most 8) follow the start event. A forked child writes its
 * own start event (to its own file if the path has %p).
 *
 * Warnings reach the log through the sink that enc_report_init() registers
 * with base/log; those that come before the log opens are kept there.
 *
 * Nothing here allocates: lines are built in fixed buffers on the stack
 * (base/json.h) and written with write(2). */
#include "core/observe/eventlog.h"
#include "core/observe/report.h"

#include "base/log.h"
#include "policy/options.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ENC_JSON_MSG_MAX 1100 /* output bytes of a warning message */
#define ENC_EVENT_BUF 8192    /* one event line */

/* ---- small helpers ------------------------------------------------------------ */

double enc_now_unix(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int gettid_(void) { return (int)syscall(SYS_gettid); }

const char *enc_errno_text(int e) {
    switch (e) {
    case ENOENT: return "no such file or directory";
    case EACCES: return "permission denied";
    case EPERM: return "operation not permitted";
    case EROFS: return "read-only file system";
    case ENOSPC: return "no space left on device";
    case EISDIR: return "is a directory";
    case ENOTDIR: return "a path component is not a directory";
    case ENAMETOOLONG: return "file name too long";
    case EMFILE:
    case ENFILE: return "too many open files";
    case ELOOP: return "too many symbolic links";
    case EDQUOT: return "disk quota exceeded";
    default: return "error";
    }
}

int enc_expand_path(const char *tmpl, char *out, size_t cap, int pid) {
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
        if (o + n >= cap) return -1;
        memcpy(out + o, s, n);
        o += n;
    }
    out[o] = '\0';
    return 0;
}

int enc_open_append(const char *path) {
    int fd;
    do { fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644); } while (fd < 0 && errno == EINTR);
    return fd;
}

/* ---- lines ---------------------------------------------------------------------- */

void enc_eventlog_begin(enc_json *j, char *buf, size_t cap, const char *event, double unix_time, int pid) {
    enc_json_init(j, buf, cap);
    enc_json_object_begin(j);
    enc_json_kv_str(j, "event", event, 64);
    enc_json_kv_double(j, "time", unix_time, 6);
    enc_json_kv_i64(j, "pid", pid);
}

size_t enc_eventlog_end(enc_json *j) {
    enc_json_object_end(j);
    return enc_json_finish(j);
}

void enc_eventlog_div_fields(enc_json *j, const enc_div_info *d) {
    enc_json_kv_str(j, "kind", enc_report_div_kind_key((int)d->kind), 32);
    enc_json_kv_str(j, "expected", d->expected, ENC_JSON_NAME_MAX);
    enc_json_kv_str(j, "got", d->got, ENC_JSON_NAME_MAX);
    enc_json_kv_i64(j, "arg_index", d->arg_index);
    enc_json_kv_u64(j, "position", d->position);
    enc_json_kv_u64(j, "count", d->count);
}

/* ---- the log file ----------------------------------------------------------------- */

enum { LOG_CLOSED = 0, LOG_OPENING, LOG_OPEN, LOG_OFF };

static int g_inited;                    /* enc_report_init ran */
static char g_log_tmpl[ENC_OPT_STRLEN]; /* ENCORE_LOG as given */
static double g_started;                /* Unix time of enc_report_init */
static int g_log_state;                 /* LOG_* */
static int g_log_fd = -1;
static int g_log_pid; /* process the open fd belongs to */
static int g_log_opener_pid, g_log_opener_tid;
static int g_log_write_failed;

void enc_eventlog_write(int fd, const char *line, size_t len) {
    if (len == 0) return;
    if (enc_write_all(fd, line, len) != 0 && !__atomic_exchange_n(&g_log_write_failed, 1, __ATOMIC_RELAXED)) {
        int e = errno;
        enc_log(ENC_LOG_WARN, "writing the JSON log (ENCORE_LOG) failed: %s; later events may be missing",
                enc_errno_text(e));
    }
}

static void write_warning_event(double t, const char *msg, void *fdp) {
    int fd = *(int *)fdp;
    char buf[ENC_EVENT_BUF];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, "warning", t, (int)getpid());
    enc_json_kv_str(&j, "message", msg, ENC_JSON_MSG_MAX);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

/* Write out the warnings base/log kept from before the log opened. */
static void write_kept_warnings(int fd) {
    unsigned dropped = enc_log_take_kept(write_warning_event, &fd);
    if (dropped) {
        char msg[96];
        snprintf(msg, sizeof msg, "%u more warnings from before the log opened were not kept", dropped);
        write_warning_event(enc_now_unix(), msg, &fd);
    }
}

/* /proc/self/cmdline with the arguments joined by spaces. */
static void read_cmdline(char *buf, size_t cap) {
    buf[0] = '\0';
    int fd;
    do { fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC); } while (fd < 0 && errno == EINTR);
    if (fd < 0) return;
    size_t n = 0;
    while (n < cap - 1) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    close(fd);
    while (n > 0 && buf[n - 1] == '\0') n--;
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0') buf[i] = ' ';
    buf[n] = '\0';
}

/* "options":{field: effective value} for every row of policy/options.h. */
static void json_options(enc_json *j) {
    enc_json_key(j, "options");
    enc_json_object_begin(j);
    for (int i = 0; i < enc_option_count; i++) {
        const enc_option_desc *d = &enc_option_table[i];
        switch (d->type) {
        case ENC_OPT_BOOL: enc_json_kv_bool(j, d->field, (int)enc_option_int(i)); break;
        case ENC_OPT_INT:
        case ENC_OPT_DURATION: enc_json_kv_i64(j, d->field, enc_option_int(i)); break;
        case ENC_OPT_LEVEL: enc_json_kv_str(j, d->field, enc_log_level_name((int)enc_option_int(i)), 16); break;
        case ENC_OPT_STRING: enc_json_kv_str(j, d->field, enc_option_str(i), ENC_OPT_STRLEN + 64); break;
        }
    }
    enc_json_object_end(j);
}

static void write_start_event(int fd, int pid) {
    char buf[ENC_EVENT_BUF], exe[1024], cmd[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    read_cmdline(cmd, sizeof cmd);

    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, "start", enc_now_unix(), pid);
    enc_json_kv_i64(&j, "ppid", getppid());
    enc_json_kv_str(&j, "version", ENCORE_VERSION_STRING, 32);
    enc_json_kv_str(&j, "exe", exe, sizeof exe);
    enc_json_kv_str(&j, "cmdline", cmd, sizeof cmd);
    enc_json_kv_double(&j, "started", g_started, 6);
    json_options(&j);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

/* Open the log for this process. Called with g_log_state == OPENING, by the
 * thread that set it. reuse_fd: a forked child keeps the parent's file. */
static void log_open(int reuse_fd) {
    int pid = (int)getpid();
    int fd = reuse_fd;
    if (fd < 0) {
        char path[4096];
        if (enc_expand_path(g_log_tmpl, path, sizeof path, pid) != 0) {
            __atomic_store_n(&g_log_state, LOG_OFF, __ATOMIC_RELEASE);
            enc_log(ENC_LOG_WARN, "ENCORE_LOG path is too long; the JSON log is off");
            return;
        }
        fd = enc_open_append(path);
        if (fd < 0) {
            int e = errno;
            __atomic_store_n(&g_log_state, LOG_OFF, __ATOMIC_RELEASE);
            enc_log(ENC_LOG_WARN, "cannot open ENCORE_LOG file %s: %s; the JSON log is off", path, enc_errno_text(e));
            return;
        }
    }
    g_log_fd = fd;
    g_log_pid = pid;
    write_start_event(fd, pid);
    write_kept_warnings(fd);
    __atomic_store_n(&g_log_state, LOG_OPEN, __ATOMIC_RELEASE);
}

/* Move the log from state `st` to OPENING and open it; 0 if another thread
 * moved it first. */
static int try_open(int st, int reuse_fd) {
    if (!__atomic_compare_exchange_n(&g_log_state, &st, LOG_OPENING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return 0;
    __atomic_store_n(&g_log_opener_pid, (int)getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&g_log_opener_tid, gettid_(), __ATOMIC_RELAXED);
    log_open(reuse_fd);
    return 1;
}

int enc_eventlog_fd(int open_it) {
    if (!__atomic_load_n(&g_inited, __ATOMIC_ACQUIRE)) return -1;
    int pid = (int)getpid();
    for (int spins = 0;; spins++) {
        int st = __atomic_load_n(&g_log_state, __ATOMIC_ACQUIRE);
        if (st == LOG_OFF) return -1;
        if (st == LOG_OPEN && g_log_pid == pid) {
            if (enc_log_any_kept()) write_kept_warnings(g_log_fd);
            return g_log_fd;
        }
        if (st == LOG_OPEN || st == LOG_CLOSED) {
            if (!open_it) return -1;
            /* A forked child gets its own file if the path has %p, else the same. */
            int reuse = st == LOG_OPEN && !strstr(g_log_tmpl, "%p") ? g_log_fd : -1;
            try_open(st, reuse);
            continue;
        }
        /* OPENING: by this very thread (re-entered) -> nothing; by a thread of
         * a parent process that forked meanwhile -> take over; else wait. */
        if (!open_it || __atomic_load_n(&g_log_opener_tid, __ATOMIC_RELAXED) == gettid_()) return -1;
        if (__atomic_load_n(&g_log_opener_pid, __ATOMIC_RELAXED) != pid) {
            __atomic_compare_exchange_n(&g_log_state, &st, g_log_fd >= 0 ? LOG_OPEN : LOG_CLOSED, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE);
            continue;
        }
        if (spins > 100000) return -1; /* never hang the program for a log line */
        sched_yield();
    }
}

void enc_report_init(void) {
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL)) return;
    g_started = enc_now_unix();
    snprintf(g_log_tmpl, sizeof g_log_tmpl, "%s", enc_opt.log_path);
    if (g_log_tmpl[0] == '\0') __atomic_store_n(&g_log_state, LOG_OFF, __ATOMIC_RELEASE);
    __atomic_store_n(&g_inited, 1, __ATOMIC_RELEASE);
    enc_log_set_warning_sink(enc_report_event_warning);
}

/* ---- events ------------------------------------------------------------------------ */

void enc_report_event_warning(const char *msg) {
    if (!msg) return;
    if (__atomic_load_n(&g_log_state, __ATOMIC_ACQUIRE) == LOG_OFF) return;
    int fd = enc_eventlog_fd(0);
    if (fd < 0) {
        enc_log_keep(msg);
        return;
    }
    write_warning_event(enc_now_unix(), msg, &fd);
}

void enc_report_event_capture(uint64_t seq_id, uint32_t length, const char *first_kernel, double capture_us,
                              double instantiate_us) {
    int fd = enc_eventlog_fd(1);
    if (fd < 0) return;
    char buf[ENC_EVENT_BUF];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, "capture", enc_now_unix(), (int)getpid());
    enc_json_kv_u64(&j, "seq", seq_id);
    enc_json_kv_u64(&j, "length", length);
    enc_json_kv_str(&j, "first_kernel", first_kernel, ENC_JSON_NAME_MAX);
    enc_json_kv_double(&j, "capture_us", capture_us, 1);
    enc_json_kv_double(&j, "instantiate_us", instantiate_us, 1);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

/* Divergence events per kind: the first ENC_REPORT_DIV_EVENTS_FIRST, then at
 * most one a second. */
static struct {
    uint64_t seen;
    uint64_t logged_at;
    int64_t last_ms;
} g_div_rate[ENC_DIV_KIND_COUNT + 1];

/* 1 if the n-th divergence of kind k is written; *suppressed: those left out since the last one written. */
static int div_rate_admits(int k, uint64_t *n, uint64_t *suppressed) {
    *n = __atomic_add_fetch(&g_div_rate[k].seen, 1, __ATOMIC_RELAXED);
    int64_t now = now_ms();
    if (*n > ENC_REPORT_DIV_EVENTS_FIRST) {
        int64_t last = __atomic_load_n(&g_div_rate[k].last_ms, __ATOMIC_RELAXED);
        if (now - last < 1000 ||
            !__atomic_compare_exchange_n(&g_div_rate[k].last_ms, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 0;
    } else {
        __atomic_store_n(&g_div_rate[k].last_ms, now, __ATOMIC_RELAXED);
    }
    uint64_t prev = __atomic_exchange_n(&g_div_rate[k].logged_at, *n, __ATOMIC_RELAXED);
    *suppressed = *n > prev + 1 ? *n - prev - 1 : 0;
    return 1;
}

void enc_report_event_divergence(const enc_div_info *d) {
    if (!d || !__atomic_load_n(&g_inited, __ATOMIC_ACQUIRE) ||
        __atomic_load_n(&g_log_state, __ATOMIC_ACQUIRE) == LOG_OFF)
        return;
    int k = (int)d->kind;
    if (k < 0 || k >= ENC_DIV_KIND_COUNT) k = ENC_DIV_KIND_COUNT;
    uint64_t n, suppressed;
    if (!div_rate_admits(k, &n, &suppressed)) return;
    int fd = enc_eventlog_fd(1);
    if (fd < 0) return;
    char buf[ENC_EVENT_BUF];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, "divergence", enc_now_unix(), (int)getpid());
    enc_eventlog_div_fields(&j, d);
    enc_json_kv_u64(&j, "n", n);
    enc_json_kv_u64(&j, "suppressed", suppressed);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

void enc_report_event_evict(uint64_t seq_id, uint64_t hits) {
    int fd = enc_eventlog_fd(1);
    if (fd < 0) return;
    char buf[512];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, "evict", enc_now_unix(), (int)getpid());
    enc_json_kv_u64(&j, "seq", seq_id);
    enc_json_kv_u64(&j, "hits", hits);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

void enc_report_event_capture_failure(uint64_t seq_id, const char *what, int cuda_error) {
    int fd = enc_eventlog_fd(1);
    if (fd < 0) return;
    char buf[ENC_EVENT_BUF];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, "capture_failure", enc_now_unix(), (int)getpid());
    enc_json_kv_u64(&j, "seq", seq_id);
    enc_json_kv_str(&j, "what", what, ENC_JSON_MSG_MAX);
    enc_json_kv_i64(&j, "cuda_error", cuda_error);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

void enc_report_event_switch(int active) {
    int fd = enc_eventlog_fd(1);
    if (fd < 0) return;
    enc_summary sum;
    memset(&sum, 0, sizeof sum);
    enc_stats_snapshot(&sum);
    char buf[ENC_EVENT_BUF];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, active ? "switch_on" : "switch_off", enc_now_unix(), (int)getpid());
    enc_json_kv_u64(&j, "launches_seen", sum.launches_seen);
    enc_json_kv_u64(&j, "launches_replayed", sum.launches_replayed);
    enc_json_kv_u64(&j, "launches_passive", sum.launches_passive);
    enc_json_kv_u64(&j, "graph_launches", sum.graph_launches);
    enc_json_kv_u64(&j, "sync_wait_ns", sum.sync_wait_ns);
    enc_json_kv_u64(&j, "sync_waits", sum.sync_waits);
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}

void enc_report_event_hold(const char *event, const char *first_kernel, uint32_t replayed, uint32_t holds,
                           uint32_t skip, const char *why) {
    int fd = enc_eventlog_fd(1);
    if (fd < 0) return;
    char buf[ENC_EVENT_BUF];
    enc_json j;
    enc_eventlog_begin(&j, buf, sizeof buf, event, enc_now_unix(), (int)getpid());
    if (first_kernel) enc_json_kv_str(&j, "first_kernel", first_kernel, ENC_JSON_NAME_MAX);
    if (why) {
        enc_json_kv_str(&j, "why", why, 32);
    } else {
        enc_json_kv_u64(&j, "replayed", replayed);
        enc_json_kv_u64(&j, "holds", holds);
        enc_json_kv_u64(&j, "skip", skip);
    }
    enc_eventlog_write(fd, buf, enc_eventlog_end(&j));
}
