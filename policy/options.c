/* encore: the ENCORE_* options (see options.h for the table).
 *
 * Every row of ENC_OPTIONS is parsed once, from the environment, by the same
 * code that parses its default. A value that does not parse or is out of
 * range gives one warning naming the variable, the value and the default
 * used, and the default stays. ENCORE_* names that are no option (typos such
 * as ENCORE_MIN_REPEAT) give one warning each, with the closest option name.
 *
 * Nothing here allocates: values are parsed in place, strings are copied into
 * the fixed buffers of enc_opt, and warnings go through enc_log (a stack
 * buffer and one write). enc_options_init() depends on no other constructor,
 * so it may be called from the library's own constructor, and it is safe to
 * call from several threads at once (the first parses, the others wait; a
 * call made by the parsing thread itself, e.g. from a hook, returns at once). */
#include "policy/options.h"

#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

enc_options enc_opt __attribute__((aligned(64)));

const enc_option_desc enc_option_table[] = {
#define ENC_OPT_ROW(field, env, type, def, min, max, help) \
    {#field, env, type, def, min, max, help, offsetof(enc_options, field)},
    ENC_OPTIONS(ENC_OPT_ROW)
#undef ENC_OPT_ROW
};

enum {
#define ENC_OPT_ONE(field, env, type, def, min, max, help) +1
    ENC_OPT_N = 0 ENC_OPTIONS(ENC_OPT_ONE)
#undef ENC_OPT_ONE
};

const int enc_option_count = ENC_OPT_N;

/* The storage of each field must match its type. */
#define ENC_OPT_SIZE_ENC_OPT_BOOL sizeof(int)
#define ENC_OPT_SIZE_ENC_OPT_INT sizeof(int64_t)
#define ENC_OPT_SIZE_ENC_OPT_DURATION sizeof(int64_t)
#define ENC_OPT_SIZE_ENC_OPT_STRING ENC_OPT_STRLEN
#define ENC_OPT_SIZE_ENC_OPT_LEVEL sizeof(int)
#define ENC_OPT_CHECK(field, env, type, def, min, max, help) \
    _Static_assert(sizeof(((enc_options *)0)->field) == ENC_OPT_SIZE_##type, "type of enc_options." #field);
ENC_OPTIONS(ENC_OPT_CHECK)
#undef ENC_OPT_CHECK

static unsigned char enc_opt_src[ENC_OPT_N];

static const char *const enc_level_names[] = {"error", "warn", "info", "debug", "trace"};

/* ENCORE_* names that are no library option but are used by encore's own
 * tools (scripts/encore); they are not reported as unknown. */
static const char *const enc_opt_foreign[] = {"ENCORE_BUILD_DIR"};

/* Deprecated names that still set an option; using one warns, naming both. */
static const struct enc_opt_alias {
    const char *old_env, *env;
} enc_opt_aliases[] = {
    {"ENCORE_MAX_CHUNK", "ENCORE_MAX_SEQUENCE"},
    {"ENCORE_MIN_CHUNK", "ENCORE_MIN_SEQUENCE"},
};
#define ENC_OPT_NALIASES (sizeof enc_opt_aliases / sizeof enc_opt_aliases[0])

const char *enc_log_level_name(int level) {
    if (level < 0 || level > 4) return "?";
    return enc_level_names[level];
}

/* ---- storage access ------------------------------------------------------ */

static void *enc_opt_ptr(int i) { return (char *)&enc_opt + enc_option_table[i].offset; }

static void enc_opt_store(int i, int64_t v) {
    switch (enc_option_table[i].type) {
    case ENC_OPT_BOOL:
    case ENC_OPT_LEVEL: __atomic_store_n((int *)enc_opt_ptr(i), (int)v, __ATOMIC_RELAXED); break;
    case ENC_OPT_INT:
    case ENC_OPT_DURATION: __atomic_store_n((int64_t *)enc_opt_ptr(i), v, __ATOMIC_RELAXED); break;
    case ENC_OPT_STRING: break;
    }
}

int64_t enc_option_int(int i) {
    if (i < 0 || i >= ENC_OPT_N) return 0;
    switch (enc_option_table[i].type) {
    case ENC_OPT_BOOL:
    case ENC_OPT_LEVEL: return *(const int *)enc_opt_ptr(i);
    case ENC_OPT_INT:
    case ENC_OPT_DURATION: return *(const int64_t *)enc_opt_ptr(i);
    case ENC_OPT_STRING: break;
    }
    return 0;
}

const char *enc_option_str(int i) {
    if (i < 0 || i >= ENC_OPT_N || enc_option_table[i].type != ENC_OPT_STRING) return "";
    return (const char *)enc_opt_ptr(i);
}

enum enc_opt_source enc_option_source(int i) {
    if (i < 0 || i >= ENC_OPT_N) return ENC_OPT_FROM_DEFAULT;
    return (enum enc_opt_source)enc_opt_src[i];
}

/* ---- value parsers: [b, e) is the trimmed text; 0 = ok, -1 = bad ---------- */

static int enc_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static int enc_word_eq(const char *b, const char *e, const char *word) {
    size_t n = (size_t)(e - b);
    return strlen(word) == n && strncasecmp(b, word, n) == 0;
}

static int enc_parse_bool(const char *b, const char *e, int64_t *out) {
    static const char *const yes[] = {"1", "on", "true", "yes"};
    static const char *const no[] = {"0", "off", "false", "no"};
    for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
        if (enc_word_eq(b, e, yes[k])) {
            *out = 1;
            return 0;
        }
        if (enc_word_eq(b, e, no[k])) {
            *out = 0;
            return 0;
        }
    }
    return -1;
}

/* Decimal integer with an optional sign; no overflow. */
static int enc_parse_int(const char *b, const char *e, int64_t *out) {
    int neg = 0;
    if (b < e && (*b == '+' || *b == '-')) neg = *b++ == '-';
    if (b == e) return -1;
    uint64_t v = 0;
    for (; b < e; b++) {
        if (*b < '0' || *b > '9') return -1;
        v = v * 10 + (uint64_t)(*b - '0');
        if (v > (uint64_t)INT64_MAX) return -1;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* Duration in microseconds: "500", "500us", "2ms", "1.5ms", "1s" (no unit:
 * microseconds; units are case-insensitive; "usec", "msec", "sec", "µs" also
 * accepted; fractions are rounded to the nearest microsecond). */
static int enc_parse_duration(const char *b, const char *e, int64_t *out) {
    const char *p = b;
    uint64_t whole = 0, frac = 0, frac_div = 1;
    int digits = 0;
    if (p < e && *p == '+') p++;
    for (; p < e && *p >= '0' && *p <= '9'; p++, digits++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > 1000000000000000ULL) /* far beyond any sane duration */
            return -1;
    }
    if (p < e && *p == '.') {
        p++;
        for (; p < e && *p >= '0' && *p <= '9'; p++, digits++) {
            if (frac_div < 1000000000000ULL) { /* ignore digits past 1e-12 */
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_div *= 10;
            }
        }
    }
    if (digits == 0) return -1;
    while (p < e && enc_is_space(*p)) p++;
    uint64_t scale;
    if (p == e || enc_word_eq(p, e, "us") || enc_word_eq(p, e, "usec") || enc_word_eq(p, e, "\xc2\xb5s"))
        scale = 1;
    else if (enc_word_eq(p, e, "ms") || enc_word_eq(p, e, "msec"))
        scale = 1000;
    else if (enc_word_eq(p, e, "s") || enc_word_eq(p, e, "sec"))
        scale = 1000000;
    else
        return -1;
    uint64_t v = whole * scale + (frac * scale + frac_div / 2) / frac_div;
    if (v > (uint64_t)INT64_MAX) return -1;
    *out = (int64_t)v;
    return 0;
}

static int enc_parse_level(const char *b, const char *e, int64_t *out) {
    if (e - b == 1 && *b >= '0' && *b <= '4') {
        *out = *b - '0';
        return 0;
    }
    for (int k = 0; k < 5; k++) {
        if (enc_word_eq(b, e, enc_level_names[k])) {
            *out = k;
            return 0;
        }
    }
    if (enc_word_eq(b, e, "warning")) {
        *out = ENC_LOG_WARN;
        return 0;
    }
    if (enc_word_eq(b, e, "err")) {
        *out = ENC_LOG_ERROR;
        return 0;
    }
    return -1;
}

/* ---- formatting ------------------------------------------------------------ */

static int enc_format_duration(int64_t us, char *buf, size_t cap) {
    if (us != 0 && us % 1000000 == 0) return snprintf(buf, cap, "%llds", (long long)(us / 1000000));
    if (us != 0 && us % 1000 == 0) return snprintf(buf, cap, "%lldms", (long long)(us / 1000));
    return snprintf(buf, cap, "%lldus", (long long)us);
}

int enc_option_format(int i, char *buf, size_t cap) {
    if (i < 0 || i >= ENC_OPT_N) {
        if (cap) buf[0] = '\0';
        return 0;
    }
    int64_t v = enc_option_int(i);
    switch (enc_option_table[i].type) {
    case ENC_OPT_BOOL:
    case ENC_OPT_INT: return snprintf(buf, cap, "%lld", (long long)v);
    case ENC_OPT_DURATION: return enc_format_duration(v, buf, cap);
    case ENC_OPT_LEVEL: return snprintf(buf, cap, "%s", enc_log_level_name((int)v));
    case ENC_OPT_STRING: return snprintf(buf, cap, "%s", enc_option_str(i));
    }
    return 0;
}

/* A user's value made safe to print: at most 64 bytes, control characters as
 * '?', "..." when cut. */
static const char *enc_show_value(const char *v, char *buf, size_t cap) {
    size_t n = 0, lim = cap - 4;
    if (lim > 64) lim = 64;
    for (; v[n] && n < lim; n++) buf[n] = ((unsigned char)v[n] < 0x20 || v[n] == 0x7f) ? '?' : v[n];
    if (v[n]) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

/* ---- parsing one row ------------------------------------------------------- */

/* Parse `text` for row i into *out. 0 ok, -1 not parseable, -2 out of range. */
static int enc_parse_value(int i, const char *text, int64_t *out) {
    const enc_option_desc *d = &enc_option_table[i];
    const char *b = text, *e = text + strlen(text);
    while (b < e && enc_is_space(*b)) b++;
    while (e > b && enc_is_space(e[-1])) e--;
    int rc = -1;
    switch (d->type) {
    case ENC_OPT_BOOL: rc = enc_parse_bool(b, e, out); break;
    case ENC_OPT_INT: rc = enc_parse_int(b, e, out); break;
    case ENC_OPT_DURATION: rc = enc_parse_duration(b, e, out); break;
    case ENC_OPT_LEVEL: rc = enc_parse_level(b, e, out); break;
    case ENC_OPT_STRING: return strlen(text) < ENC_OPT_STRLEN ? 0 : -2;
    }
    if (rc != 0) return -1;
    if (d->type != ENC_OPT_BOOL && d->type != ENC_OPT_LEVEL && (*out < d->min || *out > d->max)) return -2;
    return 0;
}

static void enc_set_default(int i) {
    const enc_option_desc *d = &enc_option_table[i];
    enc_opt_src[i] = ENC_OPT_FROM_DEFAULT;
    if (d->type == ENC_OPT_STRING) {
        char *dst = (char *)enc_opt_ptr(i);
        size_t n = strlen(d->def);
        if (n >= ENC_OPT_STRLEN) n = ENC_OPT_STRLEN - 1;
        memcpy(dst, d->def, n);
        dst[n] = '\0';
        return;
    }
    int64_t v = 0;
    if (enc_parse_value(i, d->def, &v) != 0) {
        /* A bad default is a bug in options.h; the unit tests catch it. */
        ENC_WARN_ONCE("internal: the default of %s (%s) does not parse", d->env, d->def);
        v = d->min;
    }
    enc_opt_store(i, v);
}

/* `name` is the variable the value came from (the option's, or its old name). */
static void enc_warn_bad(int i, const char *name, const char *value, int rc) {
    const enc_option_desc *d = &enc_option_table[i];
    char shown[80], defv[40], lo[32], hi[32];
    enc_show_value(value, shown, sizeof shown);
    if (d->type == ENC_OPT_DURATION) {
        int64_t dv = 0;
        enc_parse_value(i, d->def, &dv);
        enc_format_duration(dv, defv, sizeof defv);
        enc_format_duration(d->min, lo, sizeof lo);
        enc_format_duration(d->max, hi, sizeof hi);
    } else {
        snprintf(defv, sizeof defv, "%s", d->def[0] ? d->def : "\"\"");
        snprintf(lo, sizeof lo, "%lld", (long long)d->min);
        snprintf(hi, sizeof hi, "%lld", (long long)d->max);
    }
    switch (d->type) {
    case ENC_OPT_BOOL:
        enc_log(ENC_LOG_WARN, "%s=%s is not a valid boolean (1/0, on/off, true/false, yes/no); using the default %s",
                name, shown, defv);
        break;
    case ENC_OPT_INT:
        enc_log(ENC_LOG_WARN, "%s=%s is %s (%s..%s); using the default %s", name, shown,
                rc == -2 ? "out of range" : "not a valid integer", lo, hi, defv);
        break;
    case ENC_OPT_DURATION:
        if (rc == -2)
            enc_log(ENC_LOG_WARN, "%s=%s is out of range (%s..%s); using the default %s", name, shown, lo, hi, defv);
        else
            enc_log(ENC_LOG_WARN,
                    "%s=%s is not a valid duration (%s..%s, e.g. 500us, 2ms, 1s; no unit means microseconds); "
                    "using the default %s",
                    name, shown, lo, hi, defv);
        break;
    case ENC_OPT_LEVEL:
        enc_log(ENC_LOG_WARN,
                "%s=%s is not a valid log level (error, warn, info, debug, trace or 0..4); using the default %s", name,
                shown, defv);
        break;
    case ENC_OPT_STRING:
        enc_log(ENC_LOG_WARN, "%s=%s is too long (at most %d bytes); using the default %s", name, shown,
                ENC_OPT_STRLEN - 1, defv);
        break;
    }
}

/* The value of row i's variable or, if that is unset, of its old name (with
 * a warning naming both); *name: the variable it came from. */
static const char *enc_lookup_row(int i, const char *(*lookup)(const char *, void *), void *ctx, const char **name) {
    const char *env = enc_option_table[i].env;
    const char *value = lookup ? lookup(env, ctx) : NULL;
    *name = env;
    for (size_t k = 0; k < ENC_OPT_NALIASES && lookup; k++) {
        const struct enc_opt_alias *a = &enc_opt_aliases[k];
        const char *old = strcmp(a->env, env) == 0 ? lookup(a->old_env, ctx) : NULL;
        if (old == NULL || old[0] == '\0') continue;
        if (value != NULL && value[0] != '\0') {
            enc_log(ENC_LOG_WARN, "%s is the deprecated name of %s; both are set, so %s is ignored", a->old_env, env,
                    a->old_env);
        } else {
            enc_log(ENC_LOG_WARN, "%s is deprecated; it is now called %s (its value is used)", a->old_env, env);
            value = old;
            *name = a->old_env;
        }
    }
    return value;
}

static void enc_parse_row(int i, const char *(*lookup)(const char *, void *), void *ctx) {
    const enc_option_desc *d = &enc_option_table[i];
    enc_set_default(i);
    const char *name;
    const char *value = enc_lookup_row(i, lookup, ctx, &name);
    if (value == NULL || value[0] == '\0') return; /* unset or empty: the default, silently */
    int64_t v = 0;
    int rc = enc_parse_value(i, value, &v);
    if (rc != 0) {
        enc_opt_src[i] = ENC_OPT_FROM_BAD_ENV;
        enc_warn_bad(i, name, value, rc);
        return;
    }
    enc_opt_src[i] = ENC_OPT_FROM_ENV;
    if (d->type == ENC_OPT_STRING) {
        char *dst = (char *)enc_opt_ptr(i);
        size_t n = strlen(value);
        memcpy(dst, value, n + 1);
    } else {
        enc_opt_store(i, v);
    }
}

/* ---- ENCORE_TRIAL ----------------------------------------------------------- */

#define ENC_TRIAL_MAX 8
static struct {
    int n, on;
    int row[ENC_TRIAL_MAX];
    int64_t val[ENC_TRIAL_MAX], base[ENC_TRIAL_MAX];
} enc_trial;

static int enc_row_of_env(const char *b, const char *e) {
    for (int i = 0; i < ENC_OPT_N; i++)
        if (enc_word_eq(b, e, enc_option_table[i].env)) return i;
    return -1;
}

/* One item [b, e) of ENCORE_TRIAL ("ENCORE_NAME=value"): 0 taken, -1 warned and left out. */
static int enc_trial_item(const char *b, const char *e) {
    while (b < e && enc_is_space(*b)) b++;
    while (e > b && enc_is_space(e[-1])) e--;
    if (b == e) return 0;
    const char *eq = memchr(b, '=', (size_t)(e - b));
    int i = eq ? enc_row_of_env(b, eq) : -1;
    const enc_option_desc *d = i >= 0 ? &enc_option_table[i] : NULL;
    char text[64];
    int64_t v = 0;
    if (!d || d->type == ENC_OPT_STRING || d->type == ENC_OPT_LEVEL || strcmp(d->field, "enabled") == 0 ||
        (size_t)(e - eq - 1) >= sizeof text) {
        enc_log(ENC_LOG_WARN, "ENCORE_TRIAL: '%.*s' is not ENCORE_NAME=value for a numeric option; left out",
                (int)(e - b), b);
        return -1;
    }
    memcpy(text, eq + 1, (size_t)(e - eq - 1));
    text[e - eq - 1] = '\0';
    if (enc_parse_value(i, text, &v) != 0) {
        enc_log(ENC_LOG_WARN, "ENCORE_TRIAL: %s=%s is not a valid value; left out", d->env, text);
        return -1;
    }
    if (enc_trial.n == ENC_TRIAL_MAX) {
        enc_log(ENC_LOG_WARN, "ENCORE_TRIAL: at most %d settings; %.*s left out", ENC_TRIAL_MAX, (int)(e - b), b);
        return -1;
    }
    enc_trial.row[enc_trial.n] = i;
    enc_trial.val[enc_trial.n++] = v;
    return 0;
}

static void enc_trial_parse(const char *s) {
    enc_trial.n = enc_trial.on = 0;
    for (const char *b = s; *b;) {
        const char *e = strchr(b, ';');
        if (!e) e = b + strlen(b);
        enc_trial_item(b, e);
        b = *e ? e + 1 : e;
    }
}

int enc_options_trial(int on) {
    if (on < 0) return enc_trial.n;
    on = on != 0;
    if (enc_trial.n == 0 || enc_trial.on == on) return enc_trial.n;
    for (int k = 0; k < enc_trial.n; k++) {
        if (on) enc_trial.base[k] = enc_option_int(enc_trial.row[k]);
        enc_opt_store(enc_trial.row[k], on ? enc_trial.val[k] : enc_trial.base[k]);
    }
    enc_trial.on = on;
    return enc_trial.n;
}

static int enc_row_of(const char *field) {
    for (int i = 0; i < ENC_OPT_N; i++)
        if (strcmp(enc_option_table[i].field, field) == 0) return i;
    return -1;
}

void enc_options_parse(const char *(*lookup)(const char *name, void *ctx), void *ctx) {
    /* The log level first, so that it governs the warnings of the others. */
    for (int i = 0; i < ENC_OPT_N; i++)
        if (enc_option_table[i].type == ENC_OPT_LEVEL) enc_parse_row(i, lookup, ctx);
    enc_log_threshold = enc_opt.log_level;
    for (int i = 0; i < ENC_OPT_N; i++)
        if (enc_option_table[i].type != ENC_OPT_LEVEL) enc_parse_row(i, lookup, ctx);

    /* Cross-option rule: the shortest sequence worth a graph cannot be longer than the longest. */
    if (enc_opt.min_sequence > enc_opt.max_sequence) {
        int r = enc_row_of("min_sequence");
        enc_log(ENC_LOG_WARN, "%s=%lld is larger than %s=%lld; using the default %s", enc_option_table[r].env,
                (long long)enc_opt.min_sequence, enc_option_table[enc_row_of("max_sequence")].env,
                (long long)enc_opt.max_sequence, enc_option_table[r].def);
        enc_set_default(r);
        enc_opt_src[r] = ENC_OPT_FROM_BAD_ENV;
        if (enc_opt.min_sequence > enc_opt.max_sequence) enc_opt.min_sequence = enc_opt.max_sequence;
    }
    enc_trial_parse(enc_opt.trial);
}

/* ---- unknown ENCORE_* names -------------------------------------------------- */

#define ENC_NAME_MAX 64

static int enc_upper(int c) { return (c >= 'a' && c <= 'z') ? c - 'a' + 'A' : c; }

/* Case-insensitive Levenshtein distance of the first ENC_NAME_MAX bytes. */
static int enc_edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    int row0[ENC_NAME_MAX + 1], row1[ENC_NAME_MAX + 1];
    if (na > ENC_NAME_MAX) na = ENC_NAME_MAX;
    if (nb > ENC_NAME_MAX) nb = ENC_NAME_MAX;
    int *prev = row0, *cur = row1;
    for (size_t j = 0; j <= nb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int cost = enc_upper((unsigned char)a[i - 1]) != enc_upper((unsigned char)b[j - 1]);
            int best = prev[j - 1] + cost;
            if (prev[j] + 1 < best) best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            cur[j] = best;
        }
        int *t = prev;
        prev = cur;
        cur = t;
    }
    return prev[nb];
}

/* Case-insensitive: does [h, h+nh) contain [n, n+nn)? */
static int enc_contains(const char *h, size_t nh, const char *n, size_t nn) {
    if (nn == 0 || nn > nh) return 0;
    for (size_t i = 0; i + nn <= nh; i++)
        if (strncasecmp(h + i, n, nn) == 0) return 1;
    return 0;
}

static const char *enc_closest_name(const char *name, size_t n) {
    const char *best = NULL;
    int best_d = 1 << 30;
    const size_t pre = 7; /* "ENCORE_" */
    for (int i = 0; i < ENC_OPT_N; i++) {
        const char *cand = enc_option_table[i].env;
        size_t nc = strlen(cand);
        int d = enc_edit_distance(name, n, cand, nc);
        if (d < best_d) {
            best_d = d;
            best = cand;
        }
    }
    size_t tail = n > pre ? n - pre : 0;
    int limit = (int)(tail / 3);
    if (limit < 2) limit = 2;
    if (best && best_d <= limit) return best;
    /* ENCORE_DEADLINE -> ENCORE_FLUSH_DEADLINE: the tail is part of a name. */
    if (tail >= 4) {
        for (int i = 0; i < ENC_OPT_N; i++) {
            const char *cand = enc_option_table[i].env;
            size_t nc = strlen(cand);
            if (nc > pre && (enc_contains(cand + pre, nc - pre, name + pre, tail) ||
                             enc_contains(name + pre, tail, cand + pre, nc - pre)))
                return cand;
        }
    }
    return NULL;
}

int enc_options_check_environ(char *const *envp) {
    int unknown = 0;
    if (!envp) return 0;
    for (char *const *p = envp; *p; p++) {
        const char *ent = *p;
        const char *eq = strchr(ent, '=');
        size_t n = eq ? (size_t)(eq - ent) : strlen(ent);
        if (n < 6 || strncasecmp(ent, "ENCORE", 6) != 0 || (n > 6 && ent[6] != '_')) continue;
        int known = 0;
        for (int i = 0; i < ENC_OPT_N && !known; i++)
            known = strlen(enc_option_table[i].env) == n && strncmp(enc_option_table[i].env, ent, n) == 0;
        for (size_t k = 0; k < sizeof enc_opt_foreign / sizeof enc_opt_foreign[0] && !known; k++)
            known = strlen(enc_opt_foreign[k]) == n && strncmp(enc_opt_foreign[k], ent, n) == 0;
        for (size_t k = 0; k < ENC_OPT_NALIASES && !known; k++)
            known = strlen(enc_opt_aliases[k].old_env) == n && strncmp(enc_opt_aliases[k].old_env, ent, n) == 0;
        if (known) continue;
        unknown++;
        char shown[80];
        char name[ENC_NAME_MAX + 1];
        size_t nn = n < ENC_NAME_MAX ? n : ENC_NAME_MAX;
        memcpy(name, ent, nn);
        name[nn] = '\0';
        enc_show_value(name, shown, sizeof shown);
        const char *sugg = enc_closest_name(ent, n);
        if (sugg)
            enc_log(ENC_LOG_WARN, "unknown variable %s ignored; did you mean %s?", shown, sugg);
        else
            enc_log(ENC_LOG_WARN, "unknown variable %s ignored ('scripts/encore --help' lists the options)", shown);
    }
    return unknown;
}

/* ---- start-up ------------------------------------------------------------------ */

static const char *enc_getenv_lookup(const char *name, void *ctx) {
    (void)ctx;
    return getenv(name);
}

static int enc_opt_state;  /* 0 not parsed, 1 parsing, 2 done */
static int enc_opt_parser; /* thread id of the parsing thread */

void enc_options_init(void) {
    if (__atomic_load_n(&enc_opt_state, __ATOMIC_ACQUIRE) == 2) return;
    int self = (int)syscall(SYS_gettid);
    int expected = 0;
    if (__atomic_compare_exchange_n(&enc_opt_state, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&enc_opt_parser, self, __ATOMIC_RELAXED);
        enc_options_parse(enc_getenv_lookup, NULL);
        enc_options_check_environ(environ);
        /* ENCORE_PRINT_CONFIG: the engine calls enc_options_print() once the
         * rest of start-up is done. */
        __atomic_store_n(&enc_opt_state, 2, __ATOMIC_RELEASE);
        return;
    }
    if (__atomic_load_n(&enc_opt_parser, __ATOMIC_RELAXED) == self)
        return; /* re-entered from the parsing thread: defaults/partial values */
    while (__atomic_load_n(&enc_opt_state, __ATOMIC_ACQUIRE) != 2) sched_yield();
}

void enc_options_print(void) {
    char val[ENC_OPT_STRLEN + 64], note[64];
    enc_log_plain("effective configuration (ENCORE_PRINT_CONFIG=1):");
    for (int i = 0; i < ENC_OPT_N; i++) {
        const enc_option_desc *d = &enc_option_table[i];
        int n = snprintf(val, sizeof val, "%s=", d->env);
        if (n < 0) n = 0;
        if ((size_t)n < sizeof val) enc_option_format(i, val + n, sizeof val - (size_t)n);
        switch (enc_opt_src[i]) {
        case ENC_OPT_FROM_ENV: snprintf(note, sizeof note, " (set; default %s)", d->def[0] ? d->def : "\"\""); break;
        case ENC_OPT_FROM_BAD_ENV: snprintf(note, sizeof note, " (bad value ignored)"); break;
        default: note[0] = '\0'; break;
        }
        enc_log_plain("  %-32s # %s%s", val, d->help, note);
    }
}
