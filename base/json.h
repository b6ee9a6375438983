/* encore: a small JSON writer into a fixed buffer.
 *
 * The writer places the commas and checks the nesting itself (jemalloc's
 * emitter is the model): the caller says what comes, never where a ',' goes.
 *
 *   enc_json j;
 *   enc_json_init(&j, buf, sizeof buf);
 *   enc_json_object_begin(&j);              {
 *   enc_json_kv_u64(&j, "seq", 7);            "seq":7
 *   enc_json_key(&j, "kernels");              ,"kernels":
 *   enc_json_array_begin(&j);                 [
 *   enc_json_str(&j, "gemm", 256);              "gemm"
 *   enc_json_array_end(&j);                   ]
 *   enc_json_object_end(&j);                }
 *   size_t n = enc_json_finish(&j);         the length, newline included
 *
 * Nothing allocates. A value that does not fit, or a misuse (a value where an
 * object wants a key, an end that matches no begin, nesting deeper than
 * ENC_JSON_DEPTH), marks the writer failed: later calls do nothing and
 * enc_json_finish() returns 0, so a cut or malformed line is never written. */
#ifndef ENCORE_JSON_H
#define ENCORE_JSON_H

#include <stddef.h>
#include <stdint.h>

#define ENC_JSON_DEPTH 8

typedef struct enc_json {
    char *buf;
    size_t cap, len;
    int failed;
    int depth;                                   /* open objects and arrays */
    int after_key;                               /* a key was written; its value comes next */
    unsigned char in_object[ENC_JSON_DEPTH + 1]; /* per depth: 1 object, 0 array (depth 0: top level) */
    unsigned char has_items[ENC_JSON_DEPTH + 1]; /* per depth: a value came already (the next needs a comma) */
} enc_json;

void enc_json_init(enc_json *j, char *buf, size_t cap);

/* Nesting. begin is a value (in an array, after a key, or at the top). */
void enc_json_object_begin(enc_json *j);
void enc_json_object_end(enc_json *j);
void enc_json_array_begin(enc_json *j);
void enc_json_array_end(enc_json *j);

/* A key, in an object; its value comes next. */
void enc_json_key(enc_json *j, const char *key);

/* Values. */
void enc_json_u64(enc_json *j, uint64_t v);
void enc_json_i64(enc_json *j, int64_t v);
void enc_json_double(enc_json *j, double v, int decimals); /* null if not finite */
void enc_json_bool(enc_json *j, int v);
/* A string: escaped, valid UTF-8 (bad bytes become U+FFFD), at most max_out
 * bytes between the quotes (a cut one ends in "..."); NULL gives null. */
void enc_json_str(enc_json *j, const char *s, size_t max_out);

/* key and value in one call. */
void enc_json_kv_u64(enc_json *j, const char *key, uint64_t v);
void enc_json_kv_i64(enc_json *j, const char *key, int64_t v);
void enc_json_kv_double(enc_json *j, const char *key, double v, int decimals);
void enc_json_kv_bool(enc_json *j, const char *key, int v);
void enc_json_kv_str(enc_json *j, const char *key, const char *s, size_t max_out);

/* End the line: appends '\n' and a NUL (not counted). Returns the length, or 0
 * if the writer failed or something is still open. */
size_t enc_json_finish(enc_json *j);

/* Length of the valid UTF-8 character at s (at most `avail` bytes; 1 for
 * ASCII), 0 if it is not valid. */
size_t enc_utf8_len(const unsigned char *s, size_t avail);

#endif
