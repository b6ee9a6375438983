/* encore: the one logging path.
 *
 * Every message encore prints starts with "encore: ". Formatting happens in a
 * stack buffer and is written with one write(2); nothing here allocates, so it
 * is safe from any hook, from a destructor and after a fork. */
#ifndef ENCORE_LOG_H
#define ENCORE_LOG_H

enum enc_log_level {
    ENC_LOG_ERROR = 0, /* internal failure: encore switches itself off */
    ENC_LOG_WARN = 1,  /* something the user should know (bad option, capture failure) */
    ENC_LOG_INFO = 2,  /* start-up, configuration */
    ENC_LOG_DEBUG = 3, /* per-sequence events */
    ENC_LOG_TRACE = 4  /* per-launch events: slow */
};

/* Current threshold, set from ENCORE_LOG_LEVEL by enc_options_init(); messages
 * above it are dropped. Warnings and errors also go to the warning sink
 * whatever the threshold (see enc_log_set_warning_sink). */
extern int enc_log_threshold;

void enc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Warn once per call site: `static int once; enc_warn_once(&once, ...)`. */
void enc_warn_once(int *once_flag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Redirect the log (and report) file descriptor; default is 2 (stderr). */
void enc_log_set_fd(int fd);
int enc_log_fd(void);

/* One line with the "encore: " prefix whatever the threshold, not forwarded
 * to the JSON log (used for the ENCORE_PRINT_CONFIG listing). */
void enc_log_plain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write all of buf to fd, retrying on EINTR and short writes. 0 or -1. */
int enc_write_all(int fd, const char *buf, unsigned long len);

/* ---- the warning sink ---------------------------------------------------------
 * Warnings and errors are also handed, without the prefix and the newline, to
 * one sink: the JSON log's (core/observe/eventlog.c registers enc_report_event_warning
 * in enc_report_init). A warning the sink logs itself is printed but not handed
 * to it again. Until a sink is registered, warnings are kept instead. */
typedef void (*enc_log_sink_fn)(const char *msg);
void enc_log_set_warning_sink(enc_log_sink_fn sink);

/* Warnings with nowhere to go yet: those logged before a sink is registered,
 * and those the sink hands back with enc_log_keep() (its file is not open). The
 * first ENC_LOG_KEPT are kept with the time they came; later ones are only
 * counted. Safe from any thread; no allocation. */
#define ENC_LOG_KEPT 8
#define ENC_LOG_KEPT_LEN 512
void enc_log_keep(const char *msg);
/* True if any warning was ever kept (taken or not): a cheap test before
 * calling enc_log_take_kept(). */
int enc_log_any_kept(void);
/* Call fn for every kept warning not taken yet, in order, each once over the
 * life of the process. Returns the number of warnings that were not kept the
 * first time that number is not 0, and 0 otherwise (so it is told once). */
typedef void (*enc_log_kept_fn)(double unix_time, const char *msg, void *ctx);
unsigned enc_log_take_kept(enc_log_kept_fn fn, void *ctx);

#define ENC_DEBUG(...)                                                               \
    do {                                                                             \
        if (enc_log_threshold >= ENC_LOG_DEBUG) enc_log(ENC_LOG_DEBUG, __VA_ARGS__); \
    } while (0)
#define ENC_WARN_ONCE(...)                      \
    do {                                        \
        static int enc_once_;                   \
        enc_warn_once(&enc_once_, __VA_ARGS__); \
    } while (0)

#endif
