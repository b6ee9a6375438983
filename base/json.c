/* encore: a small JSON writer into a fixed buffer (see json.h).
 *
 * Before every value the writer looks at where it is: in an array, a comma if
 * the array has items already; in an object, only right after a key (the key
 * wrote the comma); at the top, only once. */
#include "base/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void enc_json_init(enc_json *j, char *buf, size_t cap) {
    memset(j, 0, sizeof *j);
    j->buf = buf;
    j->cap = cap;
    if (cap == 0 || !buf) j->failed = 1;
}

static void raw(enc_json *j, const char *s, size_t n) {
    if (j->failed || j->len + n >= j->cap) {
        j->failed = 1;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
}

__attribute__((format(printf, 2, 3))) static void rawf(enc_json *j, const char *fmt, ...) {
    if (j->failed) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->buf + j->len, j->cap - j->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= j->cap - j->len) {
        j->failed = 1;
        return;
    }
    j->len += (size_t)n;
}

/* Before a value: is one allowed here, and does it need a comma? */
static void value_begins(enc_json *j) {
    if (j->failed) return;
    int d = j->depth;
    if (j->in_object[d]) {
        if (!j->after_key) {
            j->failed = 1; /* an object wants a key first */
            return;
        }
    } else if (j->has_items[d]) {
        if (d == 0) {
            j->failed = 1; /* one value per line */
            return;
        }
        raw(j, ",", 1);
    }
    j->after_key = 0;
    j->has_items[d] = 1;
}

static void open_(enc_json *j, char c, int object) {
    value_begins(j);
    if (j->failed) return;
    if (j->depth == ENC_JSON_DEPTH) {
        j->failed = 1;
        return;
    }
    raw(j, &c, 1);
    j->depth++;
    j->in_object[j->depth] = (unsigned char)object;
    j->has_items[j->depth] = 0;
}

static void close_(enc_json *j, char c, int object) {
    if (j->failed) return;
    if (j->depth == 0 || j->in_object[j->depth] != object || j->after_key) {
        j->failed = 1;
        return;
    }
    raw(j, &c, 1);
    j->depth--;
}

void enc_json_object_begin(enc_json *j) { open_(j, '{', 1); }
void enc_json_object_end(enc_json *j) { close_(j, '}', 1); }
void enc_json_array_begin(enc_json *j) { open_(j, '[', 0); }
void enc_json_array_end(enc_json *j) { close_(j, ']', 0); }

static void str_body(enc_json *j, const char *s, size_t max_out);

void enc_json_key(enc_json *j, const char *key) {
    if (j->failed) return;
    int d = j->depth;
    if (!j->in_object[d] || j->after_key || !key) {
        j->failed = 1;
        return;
    }
    if (j->has_items[d]) raw(j, ",", 1);
    j->has_items[d] = 1;
    str_body(j, key, j->cap);
    raw(j, ":", 1);
    j->after_key = 1;
}

void enc_json_u64(enc_json *j, uint64_t v) {
    value_begins(j);
    rawf(j, "%llu", (unsigned long long)v);
}

void enc_json_i64(enc_json *j, int64_t v) {
    value_begins(j);
    rawf(j, "%lld", (long long)v);
}

void enc_json_double(enc_json *j, double v, int decimals) {
    value_begins(j);
    if (!isfinite(v))
        raw(j, "null", 4);
    else
        rawf(j, "%.*f", decimals, v);
}

void enc_json_bool(enc_json *j, int v) {
    value_begins(j);
    if (v)
        raw(j, "true", 4);
    else
        raw(j, "false", 5);
}

void enc_json_str(enc_json *j, const char *s, size_t max_out) {
    value_begins(j);
    if (!s)
        raw(j, "null", 4);
    else
        str_body(j, s, max_out);
}

void enc_json_kv_u64(enc_json *j, const char *key, uint64_t v) {
    enc_json_key(j, key);
    enc_json_u64(j, v);
}

void enc_json_kv_i64(enc_json *j, const char *key, int64_t v) {
    enc_json_key(j, key);
    enc_json_i64(j, v);
}

void enc_json_kv_double(enc_json *j, const char *key, double v, int decimals) {
    enc_json_key(j, key);
    enc_json_double(j, v, decimals);
}

void enc_json_kv_bool(enc_json *j, const char *key, int v) {
    enc_json_key(j, key);
    enc_json_bool(j, v);
}

void enc_json_kv_str(enc_json *j, const char *key, const char *s, size_t max_out) {
    enc_json_key(j, key);
    enc_json_str(j, s, max_out);
}

size_t enc_json_finish(enc_json *j) {
    if (j->depth != 0 || j->after_key || !j->has_items[0]) j->failed = 1;
    raw(j, "\n", 1);
    if (j->failed) return 0;
    j->buf[j->len] = '\0'; /* raw() always leaves room for it */
    return j->len;
}

/* ---- strings ------------------------------------------------------------------ */

size_t enc_utf8_len(const unsigned char *s, size_t avail) {
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (n > avail) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t k = 2; k < n; k++)
        if (s[k] < 0x80 || s[k] > 0xBF) return 0;
    return n;
}

/* The escaped form of the character at p: into esc (or *piece = p itself);
 * *adv gets the input bytes it stands for. Returns the output length. */
static size_t escape_one(const unsigned char *p, size_t avail, char esc[8], const char **piece, size_t *adv) {
    unsigned c = *p;
    *piece = esc;
    *adv = 1;
    if (c == '"' || c == '\\') {
        esc[0] = '\\';
        esc[1] = (char)c;
        return 2;
    }
    if (c < 0x20 || c == 0x7f) {
        switch (c) {
        case '\n': memcpy(esc, "\\n", 2); return 2;
        case '\t': memcpy(esc, "\\t", 2); return 2;
        case '\r': memcpy(esc, "\\r", 2); return 2;
        default: return (size_t)snprintf(esc, 8, "\\u%04x", c);
        }
    }
    size_t n = c < 0x80 ? 1 : enc_utf8_len(p, avail);
    if (n == 0) {
        memcpy(esc, "\\ufffd", 6);
        return 6;
    }
    *piece = (const char *)p;
    *adv = n;
    return n;
}

/* "s" escaped, at most max_out bytes between the quotes (cut: "..."). */
static void str_body(enc_json *j, const char *s, size_t max_out) {
    raw(j, "\"", 1);
    size_t out = 0, avail = strlen(s);
    const unsigned char *p = (const unsigned char *)s;
    while (avail > 0 && !j->failed) {
        char esc[8];
        const char *piece;
        size_t adv, n = escape_one(p, avail, esc, &piece, &adv);
        if (out + n > max_out) {
            raw(j, "...", 3);
            break;
        }
        raw(j, piece, n);
        out += n;
        p += adv;
        avail -= adv;
    }
    raw(j, "\"", 1);
}
