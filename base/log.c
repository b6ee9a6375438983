/* encore: the one logging path (see log.h).
 *
 * A message is formatted into a stack buffer as "encore: [level: ]text\n" and
 * written with one write(2) (continued only after a short write, retried on
 * EINTR). Nothing allocates. Messages longer than the buffer are cut and end
 * in "...". Warnings and errors are also handed to the warning sink the
 * report registers (kept in a small fixed table until there is one); a
 * thread-local flag stops a warning raised while forwarding from being
 * forwarded again. */
#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ENC_LOG_PREFIX "encore: "
#define ENC_LOG_BUFSZ 1024

int enc_log_threshold = ENC_LOG_WARN;

static int enc_log_fd_ = 2;

static enc_log_sink_fn enc_log_sink_;

static __thread int enc_log_forwarding_ __attribute__((tls_model("initial-exec")));

int enc_write_all(int fd, const char *buf, unsigned long len) {
    if (fd < 0) return -1;
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (w == 0) return -1;
        buf += w;
        len -= (unsigned long)w;
    }
    return 0;
}

void enc_log_set_fd(int fd) { __atomic_store_n(&enc_log_fd_, fd, __ATOMIC_RELAXED); }

int enc_log_fd(void) { return __atomic_load_n(&enc_log_fd_, __ATOMIC_RELAXED); }

/* Format "encore: <word>fmt..." into buf (cap >= 16), guaranteed to end in
 * exactly one '\n'. Returns the length, newline included. */
static size_t enc_log_format(char *buf, size_t cap, const char *word, const char *fmt, va_list ap) {
    size_t len = 0;
    const size_t plen = sizeof(ENC_LOG_PREFIX) - 1;
    memcpy(buf, ENC_LOG_PREFIX, plen);
    len = plen;
    if (word) {
        size_t wl = strlen(word);
        memcpy(buf + len, word, wl);
        len += wl;
    }
    /* Leave room for the newline and the terminating NUL. */
    size_t room = cap - len - 1;
    int n = vsnprintf(buf + len, room, fmt, ap);
    if (n < 0) n = 0;
    if ((size_t)n >= room) {
        /* Cut: vsnprintf wrote room-1 bytes; end them with "...". */
        len += room - 1;
        memcpy(buf + len - 3, "...", 3);
    } else {
        len += (size_t)n;
    }
    while (len > plen && buf[len - 1] == '\n') len--;
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}

static void enc_log_emit(int level, int forward, const char *fmt, va_list ap) {
    int print = level <= enc_log_threshold;
    forward = forward && level <= ENC_LOG_WARN && !enc_log_forwarding_;
    if (!print && !forward) return;

    const char *word = NULL;
    if (level == ENC_LOG_DEBUG)
        word = "debug: ";
    else if (level >= ENC_LOG_TRACE)
        word = "trace: ";

    char buf[ENC_LOG_BUFSZ];
    size_t len = enc_log_format(buf, sizeof buf, word, fmt, ap);
    if (print) {
        int saved = errno;
        (void)enc_write_all(enc_log_fd(), buf, len);
        errno = saved;
    }
    if (forward) {
        buf[len - 1] = '\0'; /* drop the newline */
        const char *msg = buf + sizeof(ENC_LOG_PREFIX) - 1;
        enc_log_sink_fn sink = __atomic_load_n(&enc_log_sink_, __ATOMIC_ACQUIRE);
        enc_log_forwarding_ = 1;
        if (sink)
            sink(msg);
        else
            enc_log_keep(msg);
        enc_log_forwarding_ = 0;
    }
}

void enc_log(int level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    enc_log_emit(level, 1, fmt, ap);
    va_end(ap);
}

void enc_warn_once(int *once_flag, const char *fmt, ...) {
    if (__atomic_exchange_n(once_flag, 1, __ATOMIC_RELAXED)) return;
    va_list ap;
    va_start(ap, fmt);
    enc_log_emit(ENC_LOG_WARN, 1, fmt, ap);
    va_end(ap);
}

void enc_log_plain(const char *fmt, ...) {
    char buf[ENC_LOG_BUFSZ];
    va_list ap;
    va_start(ap, fmt);
    size_t len = enc_log_format(buf, sizeof buf, NULL, fmt, ap);
    va_end(ap);
    int saved = errno;
    (void)enc_write_all(enc_log_fd(), buf, len);
    errno = saved;
}

/* ---- the warning sink and the kept warnings ----------------------------------- */

void enc_log_set_warning_sink(enc_log_sink_fn sink) { __atomic_store_n(&enc_log_sink_, sink, __ATOMIC_RELEASE); }

enum { ENC_KEPT_EMPTY = 0, ENC_KEPT_READY = 2, ENC_KEPT_TAKEN = 3 };

static struct enc_kept {
    int state; /* ENC_KEPT_*; a claimed slot is EMPTY until its text is in */
    double time;
    char msg[ENC_LOG_KEPT_LEN];
} enc_kept_[ENC_LOG_KEPT];
static unsigned enc_kept_claimed_, enc_kept_dropped_;
static int enc_kept_dropped_told_;

void enc_log_keep(const char *msg) {
    unsigned i = __atomic_fetch_add(&enc_kept_claimed_, 1, __ATOMIC_ACQ_REL);
    if (i >= ENC_LOG_KEPT) {
        __atomic_fetch_add(&enc_kept_dropped_, 1, __ATOMIC_RELAXED);
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    enc_kept_[i].time = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    size_t n = strnlen(msg, sizeof enc_kept_[i].msg - 1); /* cut, as a log line may be */
    memcpy(enc_kept_[i].msg, msg, n);
    enc_kept_[i].msg[n] = '\0';
    __atomic_store_n(&enc_kept_[i].state, ENC_KEPT_READY, __ATOMIC_RELEASE);
}

int enc_log_any_kept(void) { return __atomic_load_n(&enc_kept_claimed_, __ATOMIC_RELAXED) != 0; }

unsigned enc_log_take_kept(enc_log_kept_fn fn, void *ctx) {
    unsigned n = __atomic_load_n(&enc_kept_claimed_, __ATOMIC_ACQUIRE);
    if (n > ENC_LOG_KEPT) n = ENC_LOG_KEPT;
    for (unsigned i = 0; i < n; i++) {
        int ready = ENC_KEPT_READY;
        if (__atomic_load_n(&enc_kept_[i].state, __ATOMIC_RELAXED) == ENC_KEPT_READY && /* no locked op if not */
            __atomic_compare_exchange_n(&enc_kept_[i].state, &ready, ENC_KEPT_TAKEN, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            fn(enc_kept_[i].time, enc_kept_[i].msg, ctx);
    }
    unsigned dropped = __atomic_load_n(&enc_kept_dropped_, __ATOMIC_RELAXED);
    if (dropped && !__atomic_load_n(&enc_kept_dropped_told_, __ATOMIC_RELAXED) &&
        !__atomic_exchange_n(&enc_kept_dropped_told_, 1, __ATOMIC_RELAXED))
        return dropped;
    return 0;
}
