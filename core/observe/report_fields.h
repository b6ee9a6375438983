/* encore: what the report's two outputs share (internal to core/report*.c).
 *
 * One list of fields, in the order of the JSON summary, drives both the
 * human-readable table (report_table.c) and the summary line (report.c): each
 * number has its JSON key and its table label in one row here, so neither
 * output names a number the other does not. The rows of the summed counters
 * come from their one list (ENC_TSTAT_COUNTERS, stats_counters.h). The same
 * top lists (sequences by launch calls saved, divergence reasons by count)
 * serve both. */
#ifndef ENCORE_REPORT_FIELDS_H
#define ENCORE_REPORT_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/observe/report.h"

enum enc_field_kind {
    ENC_FIELD_COUNT,  /* a uint64_t: a table row (with a percentage of `whole` if set) and a JSON integer */
    ENC_FIELD_PCT,    /* JSON only: the count at off as a percentage of `whole`, one decimal */
    ENC_FIELD_FLAG,   /* JSON only: an int as 0/1 */
    ENC_FIELD_I64,    /* JSON only: an int64_t */
    ENC_FIELD_GROUP,  /* named counts (enc_count_group): table rows and a JSON object */
    ENC_FIELD_BY_CALL /* the flush points by CUDA call: rows (shares of the flushes) and a JSON object */
};

/* A group of counts: uint64_t counts[n] in enc_summary, with the JSON key
 * and the table label of each. */
typedef struct enc_count_group {
    const char *const *keys;
    const char *const *labels;
    int n;
    int pct;             /* table rows show their share of the group's total */
    int skip_zero;       /* table rows of 0 are left out */
    int nested;          /* table rows one level deeper (a breakdown of the row above) */
    int stats_only;      /* in the table only with ENCORE_STATS, in a section of its own after the top lists, */
    const char *heading; /* ... under this heading */
} enc_count_group;

#define ENC_NO_WHOLE ((size_t)-1)
#define ENC_WHOLE(count) offsetof(enc_summary, count) /* a row's whole (stats_counters.h's column too) */

typedef struct enc_report_field {
    enum enc_field_kind kind;
    const char *key;   /* JSON key */
    const char *label; /* table row (a group: its total's; the flush points: the line above them); NULL: none */
    size_t off;        /* offsetof(enc_summary, the value or the group's counts) */
    size_t whole;      /* offsetof(enc_summary, the count that is 100%), or ENC_NO_WHOLE */
    const enc_count_group *group;
} enc_report_field;

extern const enc_report_field enc_report_fields[];
extern const int enc_report_nfields;

/* The uint64_t at off in s (a count, or the first of a group's). */
static inline const uint64_t *enc_report_at(const enc_summary *s, size_t off) {
    return (const uint64_t *)(const void *)((const char *)s + off);
}

uint64_t enc_report_group_total(const enc_summary *s, const enc_report_field *f);
double enc_report_pct(uint64_t part, uint64_t whole);

/* Indices of the best ENC_REPORT_TOP entries, best first; how many. */
size_t enc_report_top_seqs(const enc_seq_info *v, size_t n, size_t idx[ENC_REPORT_TOP]);
size_t enc_report_top_divs(const enc_div_info *v, size_t n, size_t idx[ENC_REPORT_TOP]);

#endif
