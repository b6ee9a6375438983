/* encore: the JSON-lines event log (ENCORE_LOG), as the rest of the report
 * sees it.
 *
 * core/observe/eventlog.c owns the log file: enc_report_init() and the
 * enc_report_event_* functions of report.h are there. The end-of-run report
 * (core/observe/report.c) writes its summary line through these, and opens
 * ENCORE_REPORT_FILE with the same path and error helpers. */
#ifndef ENCORE_EVENTLOG_H
#define ENCORE_EVENTLOG_H

#include <stddef.h>

#include "base/json.h"
#include "core/observe/stats.h"

#define ENC_JSON_NAME_MAX 256 /* output bytes of one kernel name in JSON */

/* The log's descriptor for this process, opening the file (and writing the
 * start event and the kept warnings) if need be; -1 if there is no log.
 * open_it = 0: only an already open log. */
int enc_eventlog_fd(int open_it);

/* Write one line (len 0: nothing); the first failed write warns once. */
void enc_eventlog_write(int fd, const char *line, size_t len);

/* Start a line, {"event":...,"time":...,"pid":..., into buf; the caller adds
 * its keys and ends it with enc_eventlog_end (the line's length, newline
 * included, or 0 if it did not fit). */
void enc_eventlog_begin(enc_json *j, char *buf, size_t cap, const char *event, double unix_time, int pid);
size_t enc_eventlog_end(enc_json *j);

/* The keys of one divergence reason, in its event and in the summary. */
void enc_eventlog_div_fields(enc_json *j, const enc_div_info *d);

/* ---- helpers shared with ENCORE_REPORT_FILE ------------------------------- */

double enc_now_unix(void);
/* Expand %p (process id) and %% in a path template. 0, or -1 if too long. */
int enc_expand_path(const char *tmpl, char *out, size_t cap, int pid);
/* open(2) for appending (created 0644, close-on-exec); -1 and errno on failure. */
int enc_open_append(const char *path);
/* Words for the errno values open(2) gives for a bad path (strerror may
 * allocate). */
const char *enc_errno_text(int e);

#endif
