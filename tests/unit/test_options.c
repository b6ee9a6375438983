/* Unit tests of policy/options.c: every row parsed from good and bad values,
 * bool spellings, durations with units, log levels, unknown ENCORE_* names,
 * deprecated names, the configuration listing and thread-safe initialisation. */
#include "policy/options.h"
#include "base/log.h"
#include "testhelper.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>

/* ---- a fake environment ---------------------------------------------------- */

static const char *fake_env[16][2];
static int fake_n;

static const char *fake_lookup(const char *name, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < fake_n; i++)
        if (strcmp(fake_env[i][0], name) == 0)
            return fake_env[i][1];
    return NULL;
}

/* Parse with ENV=VALUE pairs (NULL-terminated list), capturing the log. */
static const char *parse_with(const char *first, ...)
{
    fake_n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *name = first; name && fake_n < 16; name = va_arg(ap, const char *)) {
        fake_env[fake_n][0] = name;
        fake_env[fake_n][1] = va_arg(ap, const char *);
        fake_n++;
    }
    va_end(ap);
    th_capture_begin();
    enc_options_parse(fake_lookup, NULL);
    return th_capture_end();
}

static int row_of(const char *env)
{
    for (int i = 0; i < enc_option_count; i++)
        if (strcmp(enc_option_table[i].env, env) == 0)
            return i;
    return -1;
}

static int64_t value_of(const char *env)
{
    return enc_option_int(row_of(env));
}

static int64_t default_of(const char *env)
{
    parse_with(NULL);
    return value_of(env);
}

/* ---- good values of every row ----------------------------------------------- */

struct good { const char *env, *text; int64_t want; const char *want_str; };
static const struct good goods[] = {
    {"ENCORE", "0", 0, NULL},
    {"ENCORE", "on", 1, NULL},
    {"ENCORE_MIN_REPEATS", "5", 5, NULL},
    {"ENCORE_MIN_REPEATS", "1", 1, NULL},
    {"ENCORE_MIN_REPEATS", "1000000", 1000000, NULL},
    {"ENCORE_MIN_REPEATS", " 7 ", 7, NULL},
    {"ENCORE_MIN_REPEATS", "+3", 3, NULL},
    {"ENCORE_MAX_SEQUENCE", "64", 64, NULL},
    {"ENCORE_MAX_SEQUENCE", "4096", 4096, NULL},
    {"ENCORE_MIN_SEQUENCE", "3", 3, NULL},
    {"ENCORE_MAX_GRAPHS", "16", 16, NULL},
    {"ENCORE_FLUSH_DEADLINE", "500", 500, NULL},
    {"ENCORE_FLUSH_DEADLINE", "2ms", 2000, NULL},
    {"ENCORE_MAX_GAP", "25us", 25, NULL},
    {"ENCORE_HOLD_BUDGET", "0", 0, NULL},
    {"ENCORE_HOLD_RAMP", "1", 1, NULL},
    {"ENCORE_HOLD_RAMP", "2", 2, NULL},
    {"ENCORE_TAIL_CUT", "2", 2, NULL},
    {"ENCORE_INCLUDE", "gemm*,relu*", 0, "gemm*,relu*"},
    {"ENCORE_EXCLUDE", "*nccl*", 0, "*nccl*"},
    {"ENCORE_REPORT", "yes", 1, NULL},
    {"ENCORE_REPORT_FILE", "/tmp/r-%p.txt", 0, "/tmp/r-%p.txt"},
    {"ENCORE_LOG", "/tmp/encore-%p.jsonl", 0, "/tmp/encore-%p.jsonl"},
    {"ENCORE_LOG_LEVEL", "debug", ENC_LOG_DEBUG, NULL},
    {"ENCORE_PRINT_CONFIG", "true", 1, NULL},
    {"ENCORE_STATS", "1", 1, NULL},
    {"ENCORE_WRAP_PASS", "yes", 1, NULL},
    {"ENCORE_NVTX", "on", 1, NULL},
    {"ENCORE_PATCH", "on", 1, NULL},
    {"ENCORE_HOLD_RULE", "off", 0, NULL},
    {"ENCORE_SELF_CHECK", "0", 0, NULL},
    {"ENCORE_SELF_CHECK", "2", 2, NULL},
    {"ENCORE_SELF_CHECK_AFTER", "0", 0, NULL},
    {"ENCORE_SELF_CHECK_AFTER", "250ms", 250000, NULL},
    {"ENCORE_GRAPH_END", "1", 1, NULL},
    {"ENCORE_PAUSE_END", "on", 1, NULL},
    {"ENCORE_DEVICE_PATCH", "1", 1, NULL},
    {"ENCORE_CUT_BACKOFF", "1", 1, NULL},
    {"ENCORE_EVENT_NODES", "off", 0, NULL},
    {"ENCORE_TRIAL", "ENCORE_HOLD_RAMP=1", 0, "ENCORE_HOLD_RAMP=1"},
};

/* ---- bad values of every non-string row --------------------------------------- */

struct bad { const char *env, *text, *want_msg; };
static const struct bad bads[] = {
    {"ENCORE", "maybe", "ENCORE=maybe is not a valid boolean (1/0, on/off, true/false, yes/no); using the default 1"},
    {"ENCORE", "2", "ENCORE=2 is not a valid boolean"},
    {"ENCORE_MIN_REPEATS", "abc", "ENCORE_MIN_REPEATS=abc is not a valid integer (1..1000000); using the default 3"},
    {"ENCORE_MIN_REPEATS", "0", "ENCORE_MIN_REPEATS=0 is out of range (1..1000000); using the default 3"},
    {"ENCORE_MIN_REPEATS", "1000001", "ENCORE_MIN_REPEATS=1000001 is out of range"},
    {"ENCORE_MIN_REPEATS", "3x", "ENCORE_MIN_REPEATS=3x is not a valid integer"},
    {"ENCORE_MIN_REPEATS", "99999999999999999999999", "is not a valid integer"},
    {"ENCORE_MIN_REPEATS", "-1", "ENCORE_MIN_REPEATS=-1 is out of range"},
    {"ENCORE_MAX_SEQUENCE", "1", "ENCORE_MAX_SEQUENCE=1 is out of range (2..4096); using the default 128"},
    {"ENCORE_MAX_SEQUENCE", "lots", "ENCORE_MAX_SEQUENCE=lots is not a valid integer (2..4096); using the default 128"},
    {"ENCORE_MIN_SEQUENCE", "0", "ENCORE_MIN_SEQUENCE=0 is out of range (1..4096); using the default 2"},
    {"ENCORE_MAX_GRAPHS", "1.5", "ENCORE_MAX_GRAPHS=1.5 is not a valid integer (1..1000000); using the default 1024"},
    {"ENCORE_FLUSH_DEADLINE", "fast", "ENCORE_FLUSH_DEADLINE=fast is not a valid duration (1us..10s"},
    {"ENCORE_FLUSH_DEADLINE", "0", "ENCORE_FLUSH_DEADLINE=0 is out of range (1us..10s); using the default 200us"},
    {"ENCORE_FLUSH_DEADLINE", "11s", "ENCORE_FLUSH_DEADLINE=11s is out of range (1us..10s); using the default 200us"},
    {"ENCORE_MAX_GAP", "0", "ENCORE_MAX_GAP=0 is out of range (1us..10s); using the default 100us"},
    {"ENCORE_HOLD_BUDGET", "11s", "ENCORE_HOLD_BUDGET=11s is out of range (0us..10s); using the default 30us"},
    {"ENCORE_REPORT", "please", "ENCORE_REPORT=please is not a valid boolean (1/0, on/off, true/false, yes/no); using the default 0"},
    {"ENCORE_LOG_LEVEL", "loud", "ENCORE_LOG_LEVEL=loud is not a valid log level (error, warn, info, debug, trace or 0..4); using the default warn"},
    {"ENCORE_LOG_LEVEL", "5", "ENCORE_LOG_LEVEL=5 is not a valid log level"},
    {"ENCORE_PRINT_CONFIG", "nope", "ENCORE_PRINT_CONFIG=nope is not a valid boolean"},
    {"ENCORE_STATS", "enable", "ENCORE_STATS=enable is not a valid boolean"},
    {"ENCORE_WRAP_PASS", "2", "ENCORE_WRAP_PASS=2 is not a valid boolean"},
    {"ENCORE_NVTX", "maybe", "ENCORE_NVTX=maybe is not a valid boolean"},
    {"ENCORE_PATCH", "sometimes", "ENCORE_PATCH=sometimes is not a valid boolean"},
    {"ENCORE_HOLD_RAMP", "3", "ENCORE_HOLD_RAMP=3 is out of range (0..2)"},
    {"ENCORE_TAIL_CUT", "65", "ENCORE_TAIL_CUT=65 is out of range (0..64)"},
    {"ENCORE_HOLD_RULE", "maybe", "ENCORE_HOLD_RULE=maybe is not a valid boolean"},
    {"ENCORE_GRAPH_END", "later", "ENCORE_GRAPH_END=later is not a valid boolean"},
    {"ENCORE_PAUSE_END", "soon", "ENCORE_PAUSE_END=soon is not a valid boolean"},
    {"ENCORE_DEVICE_PATCH", "gpu", "ENCORE_DEVICE_PATCH=gpu is not a valid boolean"},
    {"ENCORE_CUT_BACKOFF", "2", "ENCORE_CUT_BACKOFF=2 is out of range (0..1)"},
    {"ENCORE_EVENT_NODES", "some", "ENCORE_EVENT_NODES=some is not a valid boolean"},
    {"ENCORE_SELF_CHECK", "3", "ENCORE_SELF_CHECK=3 is out of range (0..2)"},
    {"ENCORE_SELF_CHECK_AFTER", "11s", "ENCORE_SELF_CHECK_AFTER=11s is out of range (0us..10s); using the default 1s"},
};

/* ---- threads ------------------------------------------------------------------------ */

static int64_t seen_by_thread[8];
static void *init_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    enc_options_init();
    seen_by_thread[k] = enc_opt.min_repeats;
    return NULL;
}

int main(int argc, char **argv)
{
    th_init(argc, argv);

    TEST("options: table has a row per enc_options field, defaults parse silently") {
        EXPECT_EQ_INT(enc_option_count, 30);
        const char *out = parse_with(NULL);
        EXPECT_STR_EQ(out, "");
        EXPECT_EQ_INT(enc_opt.enabled, 1);
        EXPECT_EQ_INT(enc_opt.min_repeats, 3);
        EXPECT_EQ_INT(enc_opt.max_sequence, 128);
        EXPECT_EQ_INT(enc_opt.min_sequence, 2);
        EXPECT_EQ_INT(enc_opt.max_graphs, 1024);
        EXPECT_EQ_INT(enc_opt.flush_deadline, 200);
        EXPECT_STR_EQ(enc_opt.include, "");
        EXPECT_STR_EQ(enc_opt.exclude, "");
        EXPECT_EQ_INT(enc_opt.report, 0);
        EXPECT_STR_EQ(enc_opt.report_file, "");
        EXPECT_STR_EQ(enc_opt.log_path, "");
        EXPECT_EQ_INT(enc_opt.log_level, ENC_LOG_WARN);
        EXPECT_EQ_INT(enc_opt.print_config, 0);
        EXPECT_EQ_INT(enc_opt.stats, 0);
        EXPECT_EQ_INT(enc_opt.wrap_pass, 0);
        EXPECT_EQ_INT(enc_opt.nvtx, 0);
        EXPECT_EQ_INT(enc_opt.patch, 1);
        EXPECT_EQ_INT(enc_opt.hold_rule, 1);
        EXPECT_EQ_INT(enc_opt.self_check, 1);
        EXPECT_EQ_INT(enc_opt.hold_budget, 30);
        EXPECT_EQ_INT(enc_opt.tail_cut, 0);
        for (int i = 0; i < enc_option_count; i++) {
            EXPECT(enc_option_source(i) == ENC_OPT_FROM_DEFAULT);
            EXPECT(enc_option_table[i].help && enc_option_table[i].help[0]);
            EXPECT(strncmp(enc_option_table[i].env, "ENCORE", 6) == 0);
        }
    }

    TEST("options: every row parses a good value") {
        for (size_t k = 0; k < sizeof goods / sizeof goods[0]; k++) {
            const struct good *g = &goods[k];
            const char *out = parse_with(g->env, g->text, NULL);
            EXPECT_STR_EQ(out, "");
            int r = row_of(g->env);
            EXPECT(r >= 0);
            EXPECT(enc_option_source(r) == ENC_OPT_FROM_ENV);
            if (g->want_str)
                EXPECT_STR_EQ(enc_option_str(r), g->want_str);
            else
                EXPECT_EQ_INT(enc_option_int(r), g->want);
        }
        /* every row is covered */
        for (int i = 0; i < enc_option_count; i++) {
            int covered = 0;
            for (size_t k = 0; k < sizeof goods / sizeof goods[0]; k++)
                covered |= strcmp(goods[k].env, enc_option_table[i].env) == 0;
            EXPECT(covered);
        }
    }

    TEST("options: a bad value warns once (variable, value, default) and keeps the default") {
        for (size_t k = 0; k < sizeof bads / sizeof bads[0]; k++) {
            const struct bad *b = &bads[k];
            int64_t def = default_of(b->env);
            const char *out = parse_with(b->env, b->text, NULL);
            EXPECT_STR_CONTAINS(out, b->want_msg);
            EXPECT(strncmp(out, "encore: ", 8) == 0);
            EXPECT_EQ_INT(th_count_lines(out), 1);
            EXPECT_EQ_INT(value_of(b->env), def);
            EXPECT(enc_option_source(row_of(b->env)) == ENC_OPT_FROM_BAD_ENV);
        }
        for (int i = 0; i < enc_option_count; i++) {
            if (enc_option_table[i].type == ENC_OPT_STRING)
                continue;
            int covered = 0;
            for (size_t k = 0; k < sizeof bads / sizeof bads[0]; k++)
                covered |= strcmp(bads[k].env, enc_option_table[i].env) == 0;
            EXPECT(covered);
        }
    }

    TEST("options: the documented warning text, exactly") {
        const char *out = parse_with("ENCORE_MIN_REPEATS", "abc", NULL);
        EXPECT_STR_EQ(out, "encore: ENCORE_MIN_REPEATS=abc is not a valid integer (1..1000000); using the default 3\n");
    }

    TEST("options: several bad values give one warning each, good ones still apply") {
        const char *out = parse_with("ENCORE_MIN_REPEATS", "x", "ENCORE_MAX_SEQUENCE", "0", "ENCORE_MAX_GRAPHS", "8",
                                     "ENCORE_REPORT", "2", NULL);
        EXPECT_EQ_INT(th_count_lines(out), 3);
        EXPECT_EQ_INT(enc_opt.max_graphs, 8);
        EXPECT_EQ_INT(enc_opt.min_repeats, 3);
        EXPECT_EQ_INT(enc_opt.max_sequence, 128);
        EXPECT_EQ_INT(enc_opt.report, 0);
    }

    TEST("options: unset and empty values mean the default, silently") {
        const char *out = parse_with("ENCORE_MIN_REPEATS", "", "ENCORE_REPORT", "", "ENCORE_LOG", "", NULL);
        EXPECT_STR_EQ(out, "");
        EXPECT_EQ_INT(enc_opt.min_repeats, 3);
        EXPECT(enc_option_source(row_of("ENCORE_MIN_REPEATS")) == ENC_OPT_FROM_DEFAULT);
    }

    TEST("options: every bool spelling, any case, with blanks") {
        static const char *const yes[] = {"1", "on", "ON", "On", "true", "TRUE", "True", "yes", "YES", "Yes", " yes ", "\ttrue"};
        static const char *const no[] = {"0", "off", "OFF", "Off", "false", "FALSE", "False", "no", "NO", "No", " 0 ", "off\n"};
        for (size_t k = 0; k < sizeof yes / sizeof yes[0]; k++) {
            const char *out = parse_with("ENCORE_REPORT", yes[k], "ENCORE", no[k], NULL);
            EXPECT_STR_EQ(out, "");
            EXPECT_EQ_INT(enc_opt.report, 1);
            EXPECT_EQ_INT(enc_opt.enabled, 0);
        }
        static const char *const bad[] = {"y", "n", "2", "-1", "oui", "t", "f", "enabled", "1 1"};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            const char *out = parse_with("ENCORE_STATS", bad[k], NULL);
            EXPECT_STR_CONTAINS(out, "is not a valid boolean");
            EXPECT_EQ_INT(enc_opt.stats, 0);
        }
    }

    TEST("options: durations with units (no unit = microseconds)") {
        static const struct { const char *text; int64_t us; } d[] = {
            {"500", 500}, {"500us", 500}, {"2ms", 2000}, {"1s", 1000000}, {"1.5ms", 1500},
            {"0.25ms", 250}, {"2 ms", 2000}, {"2MS", 2000}, {"3usec", 3}, {"4msec", 4000},
            {"1sec", 1000000}, {"10s", 10000000}, {"1", 1}, {"\xc2\xb5s", -1}, {"7\xc2\xb5s", 7},
            {"0.0005s", 500}, {" 200us ", 200}, {"+5ms", 5000},
        };
        for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
            const char *out = parse_with("ENCORE_FLUSH_DEADLINE", d[k].text, NULL);
            if (d[k].us < 0) {
                EXPECT_STR_CONTAINS(out, "is not a valid duration");
                continue;
            }
            EXPECT_STR_EQ(out, "");
            EXPECT_EQ_INT(enc_opt.flush_deadline, d[k].us);
        }
        static const char *const bad[] = {"ms", "2h", "2 m s", "-5", "5ns", "1e3", "1..2ms", ".ms", "2ms2"};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            const char *out = parse_with("ENCORE_FLUSH_DEADLINE", bad[k], NULL);
            EXPECT_STR_CONTAINS(out, "is not a valid duration (1us..10s, e.g. 500us, 2ms, 1s; no unit means "
                                     "microseconds); using the default 200us");
            EXPECT_EQ_INT(enc_opt.flush_deadline, 200);
        }
        const char *out = parse_with("ENCORE_FLUSH_DEADLINE", "0.4us", NULL);
        EXPECT_STR_CONTAINS(out, "is out of range (1us..10s)");
    }

    TEST("options: log levels by name or number, and they set the threshold") {
        static const struct { const char *text; int level; } l[] = {
            {"error", 0}, {"warn", 1}, {"warning", 1}, {"info", 2}, {"debug", 3}, {"trace", 4},
            {"ERROR", 0}, {"Debug", 3}, {"0", 0}, {"1", 1}, {"2", 2}, {"3", 3}, {"4", 4}, {"err", 0},
        };
        for (size_t k = 0; k < sizeof l / sizeof l[0]; k++) {
            const char *out = parse_with("ENCORE_LOG_LEVEL", l[k].text, NULL);
            EXPECT_STR_EQ(out, "");
            EXPECT_EQ_INT(enc_opt.log_level, l[k].level);
            EXPECT_EQ_INT(enc_log_threshold, l[k].level);
        }
        /* at level error, bad values of other options are not printed */
        const char *out = parse_with("ENCORE_LOG_LEVEL", "error", "ENCORE_MIN_REPEATS", "abc", NULL);
        EXPECT_STR_EQ(out, "");
        EXPECT_EQ_INT(enc_opt.min_repeats, 3);
        parse_with(NULL);
        EXPECT_EQ_INT(enc_log_threshold, ENC_LOG_WARN);
    }

    TEST("options: strings are kept verbatim; too long ones warn") {
        const char *out = parse_with("ENCORE_INCLUDE", " gemm_*, *relu* ", NULL);
        EXPECT_STR_EQ(out, "");
        EXPECT_STR_EQ(enc_opt.include, " gemm_*, *relu* ");
        static char longv[ENC_OPT_STRLEN + 10];
        memset(longv, 'a', sizeof longv - 1);
        out = parse_with("ENCORE_LOG", longv, NULL);
        EXPECT_STR_CONTAINS(out, "ENCORE_LOG=aaaa");
        EXPECT_STR_CONTAINS(out, "...");
        EXPECT_STR_CONTAINS(out, "is too long (at most 511 bytes); using the default \"\"");
        EXPECT_STR_EQ(enc_opt.log_path, "");
        longv[ENC_OPT_STRLEN - 1] = '\0';
        out = parse_with("ENCORE_LOG", longv, NULL);
        EXPECT_STR_EQ(out, "");
        EXPECT_EQ_INT(strlen(enc_opt.log_path), ENC_OPT_STRLEN - 1);
    }

    TEST("options: control characters in a bad value are not echoed") {
        const char *out = parse_with("ENCORE_MIN_REPEATS", "1\x1b[31m", NULL);
        EXPECT_STR_CONTAINS(out, "ENCORE_MIN_REPEATS=1?[31m is not a valid integer");
        EXPECT_STR_LACKS(out, "\x1b");
    }

    TEST("options: ENCORE_MIN_SEQUENCE larger than ENCORE_MAX_SEQUENCE falls back") {
        const char *out = parse_with("ENCORE_MIN_SEQUENCE", "300", "ENCORE_MAX_SEQUENCE", "100", NULL);
        EXPECT_STR_CONTAINS(out, "ENCORE_MIN_SEQUENCE=300 is larger than ENCORE_MAX_SEQUENCE=100; using the default 2");
        EXPECT_EQ_INT(enc_opt.min_sequence, 2);
        EXPECT_EQ_INT(enc_opt.max_sequence, 100);
    }

    TEST("options: ENCORE_TRIAL's settings replace the effective values while on, and are taken back") {
        const char *out = parse_with("ENCORE_TRIAL", " ENCORE_HOLD_RAMP=1; encore_hold_budget=60us;ENCORE_MAX_SEQUENCE=4",
                                     "ENCORE_HOLD_BUDGET", "45us", NULL);
        EXPECT_STR_EQ(out, "");
        EXPECT_EQ_INT(enc_options_trial(-1), 3);
        EXPECT_EQ_INT(enc_opt.hold_budget, 45); /* parsing does not put them in place */
        EXPECT_EQ_INT(enc_options_trial(1), 3);
        EXPECT_EQ_INT(enc_opt.hold_ramp, 1);
        EXPECT_EQ_INT(enc_opt.hold_budget, 60);
        EXPECT_EQ_INT(enc_opt.max_sequence, 4);
        enc_options_trial(1); /* again: the effective values saved the first time stay */
        enc_options_trial(0);
        EXPECT_EQ_INT(enc_opt.hold_ramp, 0);
        EXPECT_EQ_INT(enc_opt.hold_budget, 45);
        EXPECT_EQ_INT(enc_opt.max_sequence, 128);
        enc_options_trial(0);
        EXPECT_EQ_INT(enc_opt.hold_budget, 45);
    }

    TEST("options: a bad ENCORE_TRIAL item warns, naming ENCORE_TRIAL, and is left out") {
        const char *out = parse_with("ENCORE_TRIAL", "ENCORE_HOLD_RAMP=maybe;ENCORE_LOG=/tmp/x;ENCORE=0;ENCORE_MAX_GAP=9us",
                                     NULL);
        EXPECT_STR_CONTAINS(out, "encore: ENCORE_TRIAL: ENCORE_HOLD_RAMP=maybe is not a valid value; left out");
        EXPECT_STR_CONTAINS(out, "ENCORE_TRIAL: 'ENCORE_LOG=/tmp/x' is not ENCORE_NAME=value for a numeric option");
        EXPECT_STR_CONTAINS(out, "ENCORE_TRIAL: 'ENCORE=0' is not ENCORE_NAME=value for a numeric option");
        EXPECT_EQ_INT(th_count_lines(out), 3);
        EXPECT_EQ_INT(enc_options_trial(1), 1);
        EXPECT_EQ_INT(enc_opt.max_gap, 9);
        EXPECT_EQ_INT(enc_opt.enabled, 1);
        enc_options_trial(0);
        EXPECT_EQ_INT(enc_opt.max_gap, 100);
    }

    TEST("options: without ENCORE_TRIAL, a trial changes nothing") {
        parse_with(NULL);
        EXPECT_EQ_INT(enc_options_trial(1), 0);
        EXPECT_EQ_INT(enc_opt.hold_ramp, 0);
        EXPECT_EQ_INT(enc_opt.max_sequence, 128);
    }

    TEST("options: a deprecated name still sets its option, with one warning naming both") {
        const char *out = parse_with("ENCORE_MAX_CHUNK", "64", "ENCORE_MIN_CHUNK", "4", NULL);
        EXPECT_EQ_INT(enc_opt.max_sequence, 64);
        EXPECT_EQ_INT(enc_opt.min_sequence, 4);
        EXPECT(enc_option_source(row_of("ENCORE_MAX_SEQUENCE")) == ENC_OPT_FROM_ENV);
        EXPECT_EQ_INT(th_count_lines(out), 2);
        EXPECT_STR_CONTAINS(out, "encore: ENCORE_MAX_CHUNK is deprecated; it is now called ENCORE_MAX_SEQUENCE (its value is used)\n");
        EXPECT_STR_CONTAINS(out, "encore: ENCORE_MIN_CHUNK is deprecated; it is now called ENCORE_MIN_SEQUENCE (its value is used)\n");
    }

    TEST("options: with both names set, the new one wins and the old one is named as ignored") {
        const char *out = parse_with("ENCORE_MAX_CHUNK", "64", "ENCORE_MAX_SEQUENCE", "32", NULL);
        EXPECT_EQ_INT(enc_opt.max_sequence, 32);
        EXPECT_STR_EQ(out, "encore: ENCORE_MAX_CHUNK is the deprecated name of ENCORE_MAX_SEQUENCE; both are set, so "
                           "ENCORE_MAX_CHUNK is ignored\n");
    }

    TEST("options: a bad value under a deprecated name is reported under that name") {
        const char *out = parse_with("ENCORE_MAX_CHUNK", "1", NULL);
        EXPECT_EQ_INT(enc_opt.max_sequence, 128);
        EXPECT_STR_CONTAINS(out, "encore: ENCORE_MAX_CHUNK=1 is out of range (2..4096); using the default 128\n");
        parse_with(NULL);
    }

    TEST("options: deprecated names are not reported as unknown") {
        char *env[] = {"ENCORE_MAX_CHUNK=64", "ENCORE_MIN_CHUNK=2", "ENCORE_MAX_SEQUENCE=64", NULL};
        th_capture_begin();
        int n = enc_options_check_environ(env);
        const char *out = th_capture_end();
        EXPECT_EQ_INT(n, 0);
        EXPECT_STR_EQ(out, "");
    }

    TEST("options: unknown ENCORE_ names warn with the closest name") {
        char *env[] = {
            "PATH=/usr/bin", "ENCORE_MIN_REPEAT=3", "ENCORE_REPORT=1", "ENCORE=1",
            "ENCORE_DEADLINE=2ms", "ENCORE_ZZZQQQ=1", "encore_report=1", "ENCOREX=1",
            "ENCORE_BUILD_DIR=/tmp/b", "NOT_ENCORE_X=1", "ENCORE_MAX_GRAPH=4", "ENCORE_REPROT=1", NULL,
        };
        th_capture_begin();
        int n = enc_options_check_environ(env);
        const char *out = th_capture_end();
        EXPECT_EQ_INT(n, 6);
        EXPECT_EQ_INT(th_count_lines(out), 6);
        EXPECT_STR_CONTAINS(out, "encore: unknown variable ENCORE_MIN_REPEAT ignored; did you mean ENCORE_MIN_REPEATS?\n");
        EXPECT_STR_CONTAINS(out, "unknown variable ENCORE_DEADLINE ignored; did you mean ENCORE_FLUSH_DEADLINE?");
        EXPECT_STR_CONTAINS(out, "unknown variable encore_report ignored; did you mean ENCORE_REPORT?");
        EXPECT_STR_CONTAINS(out, "unknown variable ENCORE_MAX_GRAPH ignored; did you mean ENCORE_MAX_GRAPHS?");
        EXPECT_STR_CONTAINS(out, "unknown variable ENCORE_REPROT ignored; did you mean ENCORE_REPORT?");
        EXPECT_STR_CONTAINS(out, "unknown variable ENCORE_ZZZQQQ ignored ('scripts/encore --help' lists the options)");
        EXPECT_STR_LACKS(out, "ENCOREX");
        EXPECT_STR_LACKS(out, "BUILD_DIR");
        EXPECT_STR_LACKS(out, "NOT_ENCORE");
    }

    TEST("options: print lists every variable with its value and help") {
        parse_with("ENCORE_MIN_REPEATS", "5", "ENCORE_FLUSH_DEADLINE", "3000", "ENCORE_MAX_SEQUENCE", "zz", NULL);
        th_capture_begin();
        enc_options_print();
        const char *out = th_capture_end();
        EXPECT_EQ_INT(th_count_lines(out), enc_option_count + 1);
        EXPECT_EQ_INT(th_count(out, "encore: "), enc_option_count + 1);
        for (int i = 0; i < enc_option_count; i++) {
            char want[128];
            snprintf(want, sizeof want, "encore:   %s=", enc_option_table[i].env);
            EXPECT_STR_CONTAINS(out, want);
            EXPECT_STR_CONTAINS(out, enc_option_table[i].help);
        }
        EXPECT_STR_CONTAINS(out, "ENCORE_MIN_REPEATS=5 ");
        EXPECT_STR_CONTAINS(out, "(set; default 3)");
        EXPECT_STR_CONTAINS(out, "ENCORE_FLUSH_DEADLINE=3ms ");
        EXPECT_STR_CONTAINS(out, "ENCORE_MAX_SEQUENCE=128 ");
        EXPECT_STR_CONTAINS(out, "(bad value ignored)");
        EXPECT_STR_CONTAINS(out, "ENCORE_LOG_LEVEL=warn ");
        /* printed even when the log level is error */
        parse_with("ENCORE_LOG_LEVEL", "error", NULL);
        th_capture_begin();
        enc_options_print();
        out = th_capture_end();
        EXPECT_EQ_INT(th_count_lines(out), enc_option_count + 1);
        parse_with(NULL);
    }

    TEST("options: enc_option_format gives text the environment accepts") {
        char buf[64];
        parse_with("ENCORE_FLUSH_DEADLINE", "2s", "ENCORE_LOG_LEVEL", "4", NULL);
        enc_option_format(row_of("ENCORE_FLUSH_DEADLINE"), buf, sizeof buf);
        EXPECT_STR_EQ(buf, "2s");
        enc_option_format(row_of("ENCORE_LOG_LEVEL"), buf, sizeof buf);
        EXPECT_STR_EQ(buf, "trace");
        enc_option_format(row_of("ENCORE"), buf, sizeof buf);
        EXPECT_STR_EQ(buf, "1");
        EXPECT_STR_EQ(enc_log_level_name(2), "info");
        EXPECT_STR_EQ(enc_log_level_name(9), "?");
        parse_with(NULL);
    }

    TEST("options: enc_options_init reads the environment once, from many threads") {
        setenv("ENCORE_MIN_REPEATS", "7", 1);
        setenv("ENCORE_MAX_GRAPH", "3", 1); /* typo: warned about */
        th_capture_begin();
        pthread_t t[8];
        for (int k = 0; k < 8; k++)
            pthread_create(&t[k], NULL, init_thread, (void *)(intptr_t)k);
        for (int k = 0; k < 8; k++)
            pthread_join(t[k], NULL);
        setenv("ENCORE_MIN_REPEATS", "9", 1);
        enc_options_init(); /* a second call changes nothing */
        const char *out = th_capture_end();
        for (int k = 0; k < 8; k++)
            EXPECT_EQ_INT(seen_by_thread[k], 7);
        EXPECT_EQ_INT(enc_opt.min_repeats, 7);
        EXPECT_EQ_INT(th_count(out, "ENCORE_MAX_GRAPH "), 1);
        EXPECT_STR_CONTAINS(out, "did you mean ENCORE_MAX_GRAPHS?");
    }

    return th_report();
}
