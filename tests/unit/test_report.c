/* Unit tests of the report (core/observe/report.c, report_table.c, eventlog.c)
 * against a fake stats provider (core/observe/stats.c belongs to the engine): the
 * table, the JSON summary, JSON-log events, escaping, rate limiting, the exit
 * path, forked children.
 *
 * `test_report` runs the behaviours; `test_report --emit DIR` writes
 * DIR/table.txt, DIR/summary.json and DIR/events.jsonl for
 * check_report_json.py, which parses every line with json.loads and checks
 * that the summary's numbers equal the table's. Scenarios that need fresh
 * once-only state (init, exit) run in a forked child. */
#include "core/observe/report.h"
#include "core/observe/report_fields.h"
#include "base/log.h"
#include "policy/options.h"
#include "testhelper.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- the fake stats provider ---------------------------------------------- */

static enc_summary fake_summary;
static enc_seq_info fake_seqs[32];
static size_t fake_nseqs;
static enc_div_info fake_divs[32];
static size_t fake_ndivs;
static int fake_touched;

void enc_stats_snapshot(enc_summary *out)
{
    *out = fake_summary;
}
void enc_stats_foreach_seq(void (*fn)(const enc_seq_info *, void *), void *ctx)
{
    for (size_t i = 0; i < fake_nseqs; i++)
        fn(&fake_seqs[i], ctx);
}
void enc_stats_foreach_divergence(void (*fn)(const enc_div_info *, void *), void *ctx)
{
    for (size_t i = 0; i < fake_ndivs; i++)
        fn(&fake_divs[i], ctx);
}
int enc_stats_touched(void)
{
    return fake_touched;
}

static const char *nasty_name = "op<\"quoted\"\\back\tslash\nnewline\x01\x7f bad\xff\xfe utf8 \xc3\xa9t\xc3\xa9 \xe2\x82\xac";

static void fill_fake(void)
{
    memset(&fake_summary, 0, sizeof fake_summary);
    fake_summary.calls[ENC_CLASS_PASS] = 5000;
    fake_summary.calls[ENC_CLASS_LAUNCH] = 1234567;
    fake_summary.calls[ENC_CLASS_FLUSH_STREAM] = 4321;
    fake_summary.calls[ENC_CLASS_FLUSH_ALL] = 77;
    fake_summary.launches_seen = 1234567;
    fake_summary.launches_replayed = 1200000;
    fake_summary.launches_eager = 34567;
    fake_summary.graphs_captured = 14;
    fake_summary.graph_launches = 50000;
    fake_summary.graph_launches_patched = 1234;
    fake_summary.graphs_evicted = 3;
    fake_summary.capture_failures = 1;
    fake_summary.divergences = 310;
    fake_summary.divergences_by_kind[ENC_DIV_KERNEL] = 290;
    fake_summary.divergences_by_kind[ENC_DIV_CONFIG] = 7;
    fake_summary.divergences_by_kind[ENC_DIV_ARGS] = 11;
    fake_summary.divergences_by_kind[ENC_DIV_SHORT] = 2;
    fake_summary.flushes[ENC_FLUSH_STREAM_CALL] = 4000;
    fake_summary.flushes[ENC_FLUSH_ALL_CALL] = 77;
    fake_summary.flushes[ENC_FLUSH_DEADLINE] = 9;
    fake_summary.flushes[ENC_FLUSH_EXIT] = 1;
    fake_summary.n_flush_calls = 2;
    fake_summary.flush_call_names[0] = "cuStreamSynchronize";
    fake_summary.flush_call_counts[0] = 3000;
    fake_summary.flush_call_names[1] = "cuMemcpyDtoHAsync";
    fake_summary.flush_call_counts[1] = 1000;
    fake_summary.deferred_ns = 123456789;
    fake_summary.deferred_samples = 150000;
    fake_summary.release_ns = 2500000;
    fake_summary.release_samples = 1000;

    /* 14 sequences, unsorted; saved = (length - 1) * hits */
    static const struct { uint32_t len; uint64_t hits; } q[14] = {
        {2, 10}, {24, 10000}, {8, 500}, {3, 7}, {64, 3000}, {2, 1}, {5, 4000},
        {9, 12}, {16, 900}, {4, 4}, {12, 100}, {6, 6}, {7, 70}, {128, 2},
    };
    static const char *names[][3] = {
        {"axpy", "scale", NULL}, {"gemm_kernel", "relu_kernel", "softmax_kernel"}, {"a8", "b8", "c8"},
        {"a3", "b3", "c3"}, {"attention_fwd", "layernorm", "gelu"}, {"one", "two", NULL}, {"k5a", "k5b", "k5c"},
        {"k9", NULL, NULL}, {"conv2d", "batchnorm", "relu"}, {"k4", "k4", "k4"}, {"k12", "k12b", "k12c"},
        {"k6", NULL, NULL}, {"k7", "k7b", NULL}, {NULL, NULL, NULL},
    };
    fake_nseqs = 14;
    for (size_t i = 0; i < fake_nseqs; i++) {
        fake_seqs[i].id = 100 + i;
        fake_seqs[i].length = q[i].len;
        fake_seqs[i].hits = q[i].hits;
        for (int j = 0; j < 3; j++)
            fake_seqs[i].kernels[j] = names[i][j];
        fake_seqs[i].evicted = i == 4;
    }
    fake_seqs[8].kernels[1] = nasty_name;
    /* three graphs that never replayed, noted out of order */
    fake_summary.captured_never_replayed = 3;
    static const uint64_t never_ids[3] = {205, 201, 203};
    for (int i = 0; i < 3; i++) {
        enc_seq_info u = {.id = never_ids[i], .length = 4 + (uint32_t)i, .hits = 0, .kernels = {"fill", "copy", NULL}};
        enc_report_note_unreplayed(&fake_summary, &u);
    }

    fake_ndivs = 5;
    fake_divs[0] = (enc_div_info){ENC_DIV_ARGS, "gemm_kernel", "gemm_kernel", 2, 0, 11};
    fake_divs[1] = (enc_div_info){ENC_DIV_KERNEL, "relu_kernel", "dropout_kernel", -1, 3, 290};
    fake_divs[2] = (enc_div_info){ENC_DIV_CONFIG, "softmax_kernel", "softmax_kernel", -1, 5, 7};
    fake_divs[3] = (enc_div_info){ENC_DIV_SHORT, "layernorm", NULL, -1, 9, 2};
    fake_divs[4] = (enc_div_info){ENC_DIV_KERNEL, nasty_name, NULL, -1, 1, 1};
    fake_touched = 1;
}

/* ---- the summed counters' one list ------------------------------------------------ */

/* One row of ENC_TSTAT_COUNTERS (core/observe/stats_counters.h), as the report should show it. */
typedef struct counter_row {
    const char *name, *label;
    size_t off, whole;
} counter_row;
#define COUNTER_ROW(name, label, whole, meaning) {#name, label, offsetof(enc_summary, name), whole},
static const counter_row counters[] = {ENC_TSTAT_COUNTERS(COUNTER_ROW)};
static const counter_row unreported[] = {ENC_TSTAT_UNREPORTED(COUNTER_ROW)};
#undef COUNTER_ROW

static int same_label(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Rows of enc_report_fields under c's name; each must be c's, as its list row says. */
static int field_rows_of(const counter_row *c)
{
    int n = 0;
    for (int i = 0; i < enc_report_nfields; i++) {
        const enc_report_field *f = &enc_report_fields[i];
        if (strcmp(f->key, c->name) != 0)
            continue;
        n++;
        EXPECT(f->kind == ENC_FIELD_COUNT && f->off == c->off && f->whole == c->whole && same_label(f->label, c->label));
    }
    return n;
}

static int is_unreported(const char *name)
{
    for (size_t i = 0; i < sizeof unreported / sizeof unreported[0]; i++)
        if (strcmp(unreported[i].name, name) == 0)
            return 1;
    return 0;
}

/* ---- helpers ------------------------------------------------------------------ */

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/encore-report-test-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(2);
    }
}

static char file_buf[1 << 20];
static const char *read_file(const char *path)
{
    file_buf[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    size_t n = 0;
    ssize_t r;
    while (n < sizeof file_buf - 1 && (r = read(fd, file_buf + n, sizeof file_buf - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    file_buf[n] = '\0';
    return file_buf;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The table for the fake data, as a string. */
static const char *table_of(int show_calls)
{
    th_capture_begin();
    int fd = enc_log_fd();
    int rc = enc_report_write_table(fd, &fake_summary, fake_seqs, fake_nseqs, fake_divs, fake_ndivs, 4242, show_calls);
    const char *out = th_capture_end();
    EXPECT_EQ_INT(rc, 0);
    return out;
}

/* Run fn in a forked child (fresh once-only state); its exit status. */
static int in_child(void (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        th_current_failed = 0;
        fn();
        fflush(stdout);
        _exit(th_current_failed ? 1 : 0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static const char *env_pairs[16][2];
static int env_n;
static const char *fake_lookup(const char *name, void *ctx)
{
    (void)ctx;
    for (int i = 0; i < env_n; i++)
        if (strcmp(env_pairs[i][0], name) == 0)
            return env_pairs[i][1];
    return NULL;
}
static void set_options(const char *n1, const char *v1, const char *n2, const char *v2)
{
    env_n = 0;
    if (n1) {
        env_pairs[env_n][0] = n1;
        env_pairs[env_n++][1] = v1;
    }
    if (n2) {
        env_pairs[env_n][0] = n2;
        env_pairs[env_n++][1] = v2;
    }
    enc_options_parse(fake_lookup, NULL);
}

/* ---- scenarios that run in a child ------------------------------------------------- */

static char log_path[512], log_tmpl[512];

static void *capture_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (int i = 0; i < 200; i++)
        enc_report_event_capture((uint64_t)(k * 1000 + i), 4, "threaded_kernel", 12.5, 80.25);
    return NULL;
}

/* Events to a log: written with --emit too (events.jsonl). */
static void scenario_events(void)
{
    set_options("ENCORE_LOG", log_tmpl, NULL, NULL);
    th_capture_begin(); /* keep the warnings off the test's stderr */
    enc_log(ENC_LOG_WARN, "a warning before init (kept)");
    enc_report_init();
    enc_log(ENC_LOG_WARN, "a warning after init, before the log opens (kept)");
    EXPECT(!file_exists(log_path)); /* nothing opened until an event */
    enc_report_event_capture(1, 24, "gemm_kernel", 150.0, 2300.5);
    EXPECT(file_exists(log_path));
    enc_report_event_capture(2, 3, nasty_name, 1.0, 2.0);
    enc_report_event_capture(3, 3, NULL, 1.0, 0.0 / 0.0);
    enc_report_event_capture_failure(4, "cuStreamEndCapture", 900);
    enc_report_event_evict(1, 12345);
    enc_div_info d = {ENC_DIV_ARGS, "gemm_kernel", "gemm_kernel", 3, 7, 42};
    enc_report_event_divergence(&d);
    enc_report_event_divergence(&fake_divs[4]);
    enc_log(ENC_LOG_WARN, "a warning after the log opened");
    pthread_t t[4];
    for (int k = 0; k < 4; k++)
        pthread_create(&t[k], NULL, capture_thread, (void *)(intptr_t)k);
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    fill_fake();
    enc_report_at_exit();
    const char *warnings = th_capture_end();
    EXPECT_EQ_INT(th_count_lines(warnings), 3);
    const char *out = read_file(log_path);
    EXPECT(out != NULL);
    if (!out)
        return;
    EXPECT_EQ_INT(th_count(out, "{\"event\":\"start\""), 1);
    EXPECT_EQ_INT(th_count(out, "\"event\":\"capture\""), 803);
    EXPECT_EQ_INT(th_count(out, "\"event\":\"capture_failure\""), 1);
    EXPECT_EQ_INT(th_count(out, "\"event\":\"evict\""), 1);
    EXPECT_EQ_INT(th_count(out, "\"event\":\"divergence\""), 2);
    EXPECT_EQ_INT(th_count(out, "\"event\":\"warning\""), 3);
    EXPECT_EQ_INT(th_count(out, "\"event\":\"summary\""), 1);
    EXPECT_EQ_INT(th_count_lines(out), 1 + 803 + 1 + 1 + 2 + 3 + 1);
    EXPECT(strncmp(out, "{\"event\":\"start\"", 16) == 0);
    EXPECT_STR_CONTAINS(out, "\"version\":\"" ENCORE_VERSION_STRING "\"");
    EXPECT_STR_CONTAINS(out, "\"options\":{\"enabled\":true,\"min_repeats\":3,");
    EXPECT_STR_CONTAINS(out, "\"flush_deadline\":200,");
    EXPECT_STR_CONTAINS(out, "\"log_level\":\"warn\"");
    EXPECT_STR_CONTAINS(out, "\"message\":\"a warning before init (kept)\"");
    EXPECT_STR_CONTAINS(out, "\"seq\":1,\"length\":24,\"first_kernel\":\"gemm_kernel\",\"capture_us\":150.0,\"instantiate_us\":2300.5}");
    EXPECT_STR_CONTAINS(out, "\"first_kernel\":null");
    EXPECT_STR_CONTAINS(out, "\"instantiate_us\":null");
    EXPECT_STR_CONTAINS(out, "\"what\":\"cuStreamEndCapture\",\"cuda_error\":900");
    EXPECT_STR_CONTAINS(out, "\"seq\":1,\"hits\":12345");
    EXPECT_STR_CONTAINS(out, "\"kind\":\"args\",\"expected\":\"gemm_kernel\",\"got\":\"gemm_kernel\",\"arg_index\":3,\"position\":7,\"count\":42");
    EXPECT_STR_CONTAINS(out, "op<\\\"quoted\\\"\\\\back\\tslash\\nnewline\\u0001\\u007f bad\\ufffd\\ufffd utf8 \xc3\xa9t\xc3\xa9 \xe2\x82\xac");
}

/* More warnings before the log opens than are kept: the first 8, then a count. */
static void scenario_many_early_warnings(void)
{
    set_options("ENCORE_LOG", log_tmpl, NULL, NULL);
    th_capture_begin();
    for (int i = 0; i < 6; i++)
        enc_log(ENC_LOG_WARN, "before init %d", i);
    enc_report_init();
    for (int i = 0; i < 5; i++)
        enc_log(ENC_LOG_WARN, "after init %d", i);
    enc_report_event_evict(1, 1);
    enc_report_event_evict(2, 2); /* the count is told once */
    th_capture_end();
    const char *out = read_file(log_path);
    EXPECT(out != NULL);
    if (!out)
        return;
    EXPECT_EQ_INT(th_count(out, "\"event\":\"warning\""), 9);
    EXPECT_STR_CONTAINS(out, "\"message\":\"before init 0\"");
    EXPECT_STR_CONTAINS(out, "\"message\":\"after init 1\"");
    EXPECT_STR_LACKS(out, "after init 2");
    EXPECT_STR_CONTAINS(out, "\"message\":\"3 more warnings from before the log opened were not kept\"");
    const char *first = strstr(out, "before init 0"), *start = strstr(out, "\"event\":\"start\"");
    EXPECT(first && start && start < first);
}

static void scenario_rate_limit(void)
{
    set_options("ENCORE_LOG", log_tmpl, NULL, NULL);
    enc_report_init();
    enc_div_info d = {ENC_DIV_KERNEL, "a", "b", -1, 1, 1};
    enc_div_info c = {ENC_DIV_CONFIG, "a", "a", -1, 1, 1};
    for (int i = 0; i < 100; i++) {
        d.count = (uint64_t)i + 1;
        enc_report_event_divergence(&d);
    }
    for (int i = 0; i < 3; i++)
        enc_report_event_divergence(&c);
    const char *out = read_file(log_path);
    EXPECT(out != NULL);
    if (!out)
        return;
    EXPECT_EQ_INT(th_count(out, "\"kind\":\"kernel\""), ENC_REPORT_DIV_EVENTS_FIRST);
    EXPECT_EQ_INT(th_count(out, "\"kind\":\"config\""), 3);
    usleep(1100 * 1000);
    enc_report_event_divergence(&d);
    out = read_file(log_path);
    EXPECT_EQ_INT(th_count(out, "\"kind\":\"kernel\""), ENC_REPORT_DIV_EVENTS_FIRST + 1);
    EXPECT_STR_CONTAINS(out, "\"n\":101,\"suppressed\":95}");
}

static void scenario_exit_untouched(void)
{
    set_options("ENCORE_LOG", log_tmpl, "ENCORE_REPORT", "1");
    enc_report_init();
    fill_fake();
    fake_touched = 0;
    th_capture_begin();
    enc_report_at_exit();
    const char *out = th_capture_end();
    EXPECT_STR_EQ(out, "");
    EXPECT(!file_exists(log_path));
}

static void scenario_exit_report(void)
{
    set_options("ENCORE_LOG", log_tmpl, "ENCORE_REPORT", "1");
    enc_report_init();
    fill_fake();
    th_capture_begin();
    enc_report_at_exit();
    enc_report_at_exit(); /* once only */
    const char *out = th_capture_end();
    EXPECT_EQ_INT(th_count(out, "encore report (pid "), 1);
    EXPECT_STR_CONTAINS(out, "1,234,567");
    EXPECT_STR_LACKS(out, "hook calls by class");
    const char *log = read_file(log_path);
    EXPECT(log != NULL);
    if (log) {
        EXPECT_EQ_INT(th_count(log, "\"event\":\"summary\""), 1);
        EXPECT_EQ_INT(th_count(log, "\"event\":\"start\""), 1);
        EXPECT_STR_CONTAINS(log, "\"launches_seen\":1234567,");
    }
}

static void scenario_exit_quiet(void)
{
    set_options(NULL, NULL, NULL, NULL);
    enc_report_init();
    fill_fake();
    th_capture_begin();
    enc_report_at_exit();
    const char *out = th_capture_end();
    EXPECT_STR_EQ(out, "");
}

static void scenario_exit_stats(void)
{
    set_options("ENCORE_STATS", "1", NULL, NULL);
    enc_report_init();
    fill_fake();
    th_capture_begin();
    enc_report_at_exit();
    const char *out = th_capture_end();
    EXPECT_STR_CONTAINS(out, "encore report (pid ");
    EXPECT_STR_CONTAINS(out, "hook calls by class (ENCORE_STATS=1)");
}

static char report_tmpl[600], report_path[600];
static void scenario_report_file(void)
{
    set_options("ENCORE_REPORT_FILE", report_tmpl, NULL, NULL);
    enc_report_init();
    fill_fake();
    th_capture_begin();
    enc_report_at_exit();
    const char *out = th_capture_end();
    EXPECT_STR_EQ(out, ""); /* nothing on stderr: it went to the file */
    snprintf(report_path, sizeof report_path, "%s/report-%d.txt", tmpdir, (int)getpid());
    const char *f = read_file(report_path);
    EXPECT(f != NULL);
    if (f)
        EXPECT_STR_CONTAINS(f, "encore report (pid ");
}

static void scenario_bad_log_path(void)
{
    set_options("ENCORE_LOG", "/nonexistent-dir/x/encore.jsonl", "ENCORE_REPORT_FILE", "/nonexistent-dir/r.txt");
    enc_report_init();
    fill_fake();
    th_capture_begin();
    enc_report_event_capture(1, 2, "k", 1, 1);
    enc_report_event_capture(2, 2, "k", 1, 1);
    enc_log(ENC_LOG_WARN, "later warning");
    enc_report_at_exit();
    const char *out = th_capture_end();
    EXPECT_EQ_INT(th_count(out, "cannot open ENCORE_LOG file /nonexistent-dir/x/encore.jsonl: no such file or directory; the JSON log is off"), 1);
    EXPECT_EQ_INT(th_count(out, "cannot open ENCORE_REPORT_FILE /nonexistent-dir/r.txt"), 1);
    EXPECT_STR_CONTAINS(out, "encore report (pid "); /* fell back to the log fd */
}

static void scenario_fork(void)
{
    set_options("ENCORE_LOG", log_tmpl, NULL, NULL); /* log_tmpl has %p here */
    enc_report_init();
    enc_report_event_evict(1, 1);
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        enc_report_event_evict(2, 2);
        _exit(0);
    }
    int st;
    waitpid(child, &st, 0);
    char p1[600], p2[600];
    snprintf(p1, sizeof p1, "%s/fork-%d.jsonl", tmpdir, (int)getpid());
    snprintf(p2, sizeof p2, "%s/fork-%d.jsonl", tmpdir, (int)child);
    const char *a = read_file(p1);
    EXPECT(a != NULL);
    if (a) {
        EXPECT_EQ_INT(th_count(a, "\"event\":\"start\""), 1);
        EXPECT_EQ_INT(th_count(a, "\"event\":\"evict\""), 1);
    }
    const char *b = read_file(p2);
    EXPECT(b != NULL);
    if (b) {
        char want[64];
        snprintf(want, sizeof want, "\"pid\":%d", (int)child);
        EXPECT_EQ_INT(th_count(b, "\"event\":\"start\""), 1);
        EXPECT_STR_CONTAINS(b, "\"seq\":2,\"hits\":2");
        EXPECT_STR_CONTAINS(b, want);
    }
}

static void scenario_no_log(void)
{
    set_options(NULL, NULL, NULL, NULL);
    enc_report_init();
    th_capture_begin();
    enc_report_event_capture(1, 2, "k", 1, 1);
    enc_report_event_divergence(&fake_divs[0]);
    enc_report_event_evict(1, 1);
    enc_report_event_capture_failure(1, "x", 1);
    enc_report_event_warning("w");
    const char *out = th_capture_end();
    EXPECT_STR_EQ(out, "");
}

/* ---- --emit: files for check_report_json.py ------------------------------------------ */

static int emit(const char *dir)
{
    char path[600];
    fill_fake();
    snprintf(path, sizeof path, "%s/table.txt", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || enc_report_write_table(fd, &fake_summary, fake_seqs, fake_nseqs, fake_divs, fake_ndivs, 4242, 1) != 0)
        return 1;
    close(fd);
    static char line[32768];
    size_t n = enc_report_format_summary(line, sizeof line, &fake_summary, fake_seqs, fake_nseqs, fake_divs,
                                         fake_ndivs, 4242);
    if (n == 0)
        return 1;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, line, n) != (ssize_t)n)
        return 1;
    close(fd);
    snprintf(log_path, sizeof log_path, "%s/events.jsonl", dir);
    unlink(log_path);
    snprintf(log_tmpl, sizeof log_tmpl, "%s", log_path);
    int rc = in_child(scenario_events);
    printf("wrote %s/table.txt, summary.json, events.jsonl\n", dir);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--emit") == 0)
        return emit(argv[2]);
    th_init(argc, argv);
    make_tmpdir();
    set_options(NULL, NULL, NULL, NULL);

    TEST("report: the table shows the numbers of a known summary") {
        fill_fake();
        const char *t = table_of(0);
        const char *head = "encore report (pid 4242, version " ENCORE_VERSION_STRING ")\n";
        EXPECT(strncmp(t, head, strlen(head)) == 0);
        EXPECT_STR_CONTAINS(t, "kernel launches seen                   1,234,567\n");
        EXPECT_STR_CONTAINS(t, "replayed through graphs              1,200,000   97.2%\n");
        EXPECT_STR_CONTAINS(t, "launched eagerly (one by one)           34,567    2.8%\n");
        EXPECT_STR_CONTAINS(t, "graphs captured                               14\n");
        EXPECT_STR_CONTAINS(t, "  graph launches (replays)                50,000\n");
        EXPECT_STR_CONTAINS(t, "  evicted (ENCORE_MAX_GRAPHS)                  3\n");
        EXPECT_STR_CONTAINS(t, "  capture failures                             1\n");
        EXPECT_STR_CONTAINS(t, "divergences                                  310\n");
        EXPECT_STR_CONTAINS(t, "a different kernel came                    290\n");
        EXPECT_STR_CONTAINS(t, "launch config differed                       7\n");
        EXPECT_STR_CONTAINS(t, "arguments differed                          11\n");
        EXPECT_STR_CONTAINS(t, "ended early                                  2\n");
        EXPECT_STR_CONTAINS(t, "held launches issued (flushes)             4,087\n");
        EXPECT_STR_CONTAINS(t, "call on the same stream                  4,000   97.9%\n");
        EXPECT_STR_CONTAINS(t, "deadline passed                              9    0.2%\n");
        EXPECT_STR_LACKS(t, "sequence full"); /* zero reasons are left out */
        EXPECT_STR_CONTAINS(t, "0.82 us  (average of 150,000 sampled launches)");
        EXPECT_STR_CONTAINS(t, "\n    per sequence end at a launch           2.50 us  (average of 1,000 sampled)\n");
        EXPECT_STR_LACKS(t, "hook calls by class");
        EXPECT_STR_CONTAINS(t, "\n\n  note: some captures failed");
    }

    TEST("report: a self-check's measured ratio leads, before the estimate") {
        fill_fake();
        fake_summary.self_checks = 3;
        fake_summary.self_check_permille = 781;
        const char *t = table_of(0);
        EXPECT_STR_CONTAINS(t, "steps with encore active (measured)      0.781 x   as long as passing through "
                               "(the self-check's mean of 3 checks)\n");
        const char *m = strstr(t, "steps with encore active (measured)"), *e = strstr(t, "host time saved (estimate)");
        EXPECT(m && e && m < e);
    }

    TEST("report: without a self-check there is no measured row") {
        fill_fake();
        EXPECT_STR_LACKS(table_of(0), "(measured)");
    }

    TEST("report: the time saved per launch is the launches' median, and says how many were timed") {
        fill_fake();
        fake_summary.launch_samples = 40;
        fake_summary.per_launch_ns = 2625;
        EXPECT_STR_CONTAINS(table_of(0), "x 2.62 us, the driver's median time of 40 eager launches timed here)");
    }

    TEST("launch histogram: the median is the middle of its bin, a few slow launches do not move it") {
        uint64_t bins[ENC_LAUNCH_BINS] = {0};
        EXPECT(enc_launch_median_ns(bins) == 0); /* nothing timed */
        bins[enc_launch_bin(2600)] = 30;        /* 30 launches of 2.6 us */
        bins[enc_launch_bin(45000)] = 10;       /* 10 that waited 45 us: a mean of 13.2 us */
        EXPECT(enc_launch_median_ns(bins) == 2625);
        EXPECT(enc_launch_bin(45000) == ENC_LAUNCH_BINS - 1); /* 12 us and more: the last bin */
        EXPECT(enc_launch_bin(0) == 0 && enc_launch_bin(249) == 0 && enc_launch_bin(250) == 1);
        bins[enc_launch_bin(2600)] = 9; /* now most waited: the median goes with them */
        EXPECT(enc_launch_median_ns(bins) == (ENC_LAUNCH_BINS - 1) * ENC_LAUNCH_BIN_NS + ENC_LAUNCH_BIN_NS / 2);
    }

    TEST("report: every summed counter has one field row under its own name, the unreported ones none") {
        /* a part of the list that report.c leaves out would go missing from the JSON and the table */
        for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++) {
            int rows = field_rows_of(&counters[i]), want = is_unreported(counters[i].name) ? 0 : 1;
            if (!EXPECT(rows == want))
                printf("       %s: %d rows, want %d\n", counters[i].name, rows, want);
        }
        EXPECT(sizeof counters / sizeof counters[0] > sizeof unreported / sizeof unreported[0]);
    }

    TEST("report: top sequences ordered by launch calls saved, names cleaned") {
        fill_fake();
        const char *t = table_of(0);
        EXPECT_STR_CONTAINS(t, "saved = (length - 1) x replays");
        EXPECT_STR_CONTAINS(t, "    1        101      24       10,000        230,000  gemm_kernel, relu_kernel, softmax_kernel, ...\n");
        EXPECT_STR_CONTAINS(t, "    2        104      64        3,000        189,000  attention_fwd, layernorm, gelu, ...  (evicted)\n");
        EXPECT_STR_CONTAINS(t, "    3        106       5        4,000         16,000  k5a, k5b, k5c, ...\n");
        EXPECT_STR_CONTAINS(t, "    4        108      16          900         13,500  conv2d, op<\"quoted\"\\back?slash?newline??");
        EXPECT_STR_CONTAINS(t, "   10        111       6            6             30  k6, ...\n");
        EXPECT_STR_LACKS(t, "axpy"); /* 11th by saved */
        EXPECT_STR_CONTAINS(t, "(10 of 14 captured sequences shown)");
        const char *a = strstr(t, "gemm_kernel, relu"), *b = strstr(t, "attention_fwd");
        EXPECT(a && b && a < b);
    }

    TEST("report: divergence reasons with kind, argument, position and names") {
        fill_fake();
        const char *t = table_of(0);
        EXPECT_STR_CONTAINS(t, "most frequent divergences");
        EXPECT_STR_CONTAINS(t, "    1        290  kernel                    3  relu_kernel -> dropout_kernel\n");
        EXPECT_STR_CONTAINS(t, "    2         11  argument 2                0  gemm_kernel\n");
        EXPECT_STR_CONTAINS(t, "    3          7  launch config             5  softmax_kernel\n");
        EXPECT_STR_CONTAINS(t, "    4          2  ended early               9  layernorm -> (a flush point came first)\n");
        EXPECT_STR_CONTAINS(t, "    5          1  kernel                    1  op<\"quoted\"");
        EXPECT_STR_CONTAINS(t, "-> ?\n");
    }

    TEST("report: ENCORE_STATS adds hook calls per class") {
        fill_fake();
        const char *t = table_of(1);
        EXPECT_STR_CONTAINS(t, "hook calls by class (ENCORE_STATS=1)");
        EXPECT_STR_CONTAINS(t, "    pass (straight through)                  5,000    0.4%\n");
        EXPECT_STR_CONTAINS(t, "    launch                               1,234,567   99.2%\n");
        EXPECT_STR_CONTAINS(t, "    flush-stream                             4,321    0.3%\n");
        EXPECT_STR_CONTAINS(t, "    flush-all                                   77    0.0%\n");
    }

    TEST("report: notes for a run that captured nothing or switched off") {
        memset(&fake_summary, 0, sizeof fake_summary);
        fake_summary.launches_seen = 10;
        fake_summary.launches_eager = 10;
        fake_summary.disabled = 1;
        th_capture_begin();
        enc_report_write_table(enc_log_fd(), &fake_summary, NULL, 0, NULL, 0, 1, 0);
        const char *t = th_capture_end();
        EXPECT_STR_CONTAINS(t, "note: encore switched itself off");
        EXPECT_STR_CONTAINS(t, "note: nothing was captured");
        EXPECT_STR_CONTAINS(t, "0.0%");
        EXPECT_STR_LACKS(t, "top sequences");
        EXPECT_STR_LACKS(t, "nan");
        /* an empty summary: no division by zero */
        memset(&fake_summary, 0, sizeof fake_summary);
        th_capture_begin();
        enc_report_write_table(enc_log_fd(), &fake_summary, NULL, 0, NULL, 0, 1, 1);
        t = th_capture_end();
        EXPECT_STR_CONTAINS(t, "kernel launches seen                           0\n");
        EXPECT_STR_LACKS(t, "nan");
    }

    TEST("report: very long kernel names are cut in the table and the JSON") {
        static char longname[5000];
        memset(longname, 'K', sizeof longname - 1);
        fill_fake();
        fake_seqs[1].kernels[0] = longname;
        const char *t = table_of(0);
        EXPECT_STR_CONTAINS(t, "KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK..., relu_kernel");
        static char line[32768];
        size_t n = enc_report_format_summary(line, sizeof line, &fake_summary, fake_seqs, fake_nseqs, fake_divs,
                                             fake_ndivs, 1);
        EXPECT(n > 0);
        EXPECT(n < 20000);
        EXPECT(strchr(line, '\n') == line + n - 1);
        /* all names at their longest still fit the exit buffer */
        for (size_t i = 0; i < fake_nseqs; i++)
            for (int j = 0; j < 3; j++)
                fake_seqs[i].kernels[j] = longname;
        for (size_t i = 0; i < fake_ndivs; i++)
            fake_divs[i].expected = fake_divs[i].got = longname;
        n = enc_report_format_summary(line, sizeof line, &fake_summary, fake_seqs, fake_nseqs, fake_divs,
                                      fake_ndivs, 1);
        EXPECT(n > 0);
        /* too small a buffer: 0, never a cut line */
        n = enc_report_format_summary(line, 200, &fake_summary, fake_seqs, fake_nseqs, fake_divs, fake_ndivs, 1);
        EXPECT_EQ_INT(n, 0);
    }

    TEST("report: JSON summary has every documented key and the table's numbers") {
        fill_fake();
        static char line[32768];
        size_t n = enc_report_format_summary(line, sizeof line, &fake_summary, fake_seqs, fake_nseqs, fake_divs,
                                             fake_ndivs, 4242);
        EXPECT(n > 0);
        EXPECT(strncmp(line, "{\"event\":\"summary\",\"time\":", 26) == 0);
        static const char *keys[] = {
            "\"pid\":4242,", "\"launches_seen\":1234567,", "\"launches_replayed\":1200000,",
            "\"launches_eager\":34567,", "\"replay_pct\":97.2,", "\"graphs_captured\":14,",
            "\"graph_launches\":50000,", "\"graphs_evicted\":3,", "\"capture_failures\":1,", "\"divergences\":310,",
            "\"divergences_by_kind\":{\"kernel\":290,\"config\":7,\"args\":11,\"short\":2}",
            "\"flushes\":{\"stream_call\":4000,\"all_call\":77,\"legacy_order\":0,\"deadline\":9,\"sequence_full\":0,"
            "\"capture\":0,\"opaque_launch\":0,\"exit\":1,\"pause\":0}",
            "\"calls\":{\"pass\":5000,\"launch\":1234567,\"flush_stream\":4321,\"flush_all\":77}",
            "\"disabled\":0,",
            "\"top_sequences\":[{\"seq\":101,\"length\":24,\"hits\":10000,\"saved\":230000,"
            "\"kernels\":[\"gemm_kernel\",\"relu_kernel\",\"softmax_kernel\"],\"evicted\":false},",
            "\"never_replayed\":[{\"seq\":201,\"length\":5,\"hits\":0,\"saved\":0,\"kernels\":[\"fill\",\"copy\"],"
            "\"evicted\":false},{\"seq\":203,",
            "\"top_divergences\":[{\"kind\":\"kernel\",\"expected\":\"relu_kernel\",\"got\":\"dropout_kernel\","
            "\"arg_index\":-1,\"position\":3,\"count\":290},",
            "{\"kind\":\"short\",\"expected\":\"layernorm\",\"got\":null,\"arg_index\":-1,\"position\":9,\"count\":2}",
        };
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            EXPECT_STR_CONTAINS(line, keys[k]);
        EXPECT(memcmp(line + n - 3, "]}\n", 3) == 0);
    }

    TEST("report: mangled C++ kernel names are shown by their readable part") {
        static const char *const m[][2] = {
            {"_Z6k_axpyPfPKffi", "k_axpy"},
            {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_", "at::native::vectorized_elementwise_kernel<...>"},
            {"_ZN3foo3barEv", "foo::bar"},
            {"_ZNK3foo3bazEv", "foo::baz"},
            {"_ZL9my_staticPf", "my_static"},
            {"_ZSt4sortv", "std::sort"},
            {"_Z99short", "_Z99short"},
            {"_Z", "_Z"},
            {"plain_c_kernel", "plain_c_kernel"},
        };
        for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
            memset(&fake_summary, 0, sizeof fake_summary);
            enc_seq_info q = {7, 3, 5, {m[k][0], NULL, NULL}, 0};
            th_capture_begin();
            enc_report_write_table(enc_log_fd(), &fake_summary, &q, 1, NULL, 0, 1, 0);
            const char *t = th_capture_end();
            char want[256];
            snprintf(want, sizeof want, "  %s, ...\n", m[k][1]);
            EXPECT_STR_CONTAINS(t, want);
        }
        /* the JSON keeps the exact name */
        enc_seq_info q = {7, 3, 5, {"_Z6k_axpyPfPKffi", NULL, NULL}, 0};
        static char line[4096];
        EXPECT(enc_report_format_summary(line, sizeof line, &fake_summary, &q, 1, NULL, 0, 1) > 0);
        EXPECT_STR_CONTAINS(line, "\"kernels\":[\"_Z6k_axpyPfPKffi\"]");
    }

    TEST("report: graphs that never replayed are named, the first captured first, 8 at most") {
        enc_summary sum;
        memset(&sum, 0, sizeof sum);
        static const uint64_t ids[12] = {40, 7, 33, 12, 90, 3, 58, 21, 5, 77, 16, 2};
        for (int i = 0; i < 12; i++) {
            enc_seq_info q = {.id = ids[i], .length = 8, .hits = 0};
            enc_report_note_unreplayed(&sum, &q);
            enc_seq_info replayed = {.id = 1000 + (uint64_t)i, .length = 8, .hits = 5};
            enc_report_note_unreplayed(&sum, &replayed); /* replayed: never listed */
        }
        static const uint64_t want[ENC_UNREPLAYED_SHOWN] = {2, 3, 5, 7, 12, 16, 21, 33};
        EXPECT(sum.n_unreplayed == ENC_UNREPLAYED_SHOWN);
        for (int i = 0; i < ENC_UNREPLAYED_SHOWN; i++)
            EXPECT(sum.unreplayed[i].id == want[i]);
        fill_fake();
        fake_summary.n_unreplayed = sum.n_unreplayed;
        fake_summary.captured_never_replayed = 12;
        memcpy(fake_summary.unreplayed, sum.unreplayed, sizeof sum.unreplayed);
        const char *t = table_of(0);
        EXPECT_STR_CONTAINS(t, "captured, never replayed (the first captured first)");
        EXPECT_STR_CONTAINS(t, "(8 of 12 shown)");
    }

    TEST("report: saved = (length - 1) x hits") {
        enc_seq_info s = {1, 24, 10000, {NULL, NULL, NULL}, 0};
        EXPECT_EQ_INT(enc_report_saved(&s), 230000);
        s.length = 1;
        EXPECT_EQ_INT(enc_report_saved(&s), 0);
        s.length = 0;
        EXPECT_EQ_INT(enc_report_saved(&s), 0);
    }

    TEST("report: a write error on the table's fd is reported, not fatal") {
        fill_fake();
        EXPECT_EQ_INT(enc_report_write_table(-1, &fake_summary, fake_seqs, fake_nseqs, fake_divs, fake_ndivs, 1, 1), -1);
    }

    TEST("jsonlog: events are whole JSON lines: start first, early warnings kept, names escaped") {
        snprintf(log_path, sizeof log_path, "%s/events.jsonl", tmpdir);
        snprintf(log_tmpl, sizeof log_tmpl, "%s", log_path);
        EXPECT_EQ_INT(in_child(scenario_events), 0);
    }

    TEST("jsonlog: of the warnings from before the log opened, 8 are kept and the rest counted once") {
        snprintf(log_path, sizeof log_path, "%s/early.jsonl", tmpdir);
        snprintf(log_tmpl, sizeof log_tmpl, "%s", log_path);
        EXPECT_EQ_INT(in_child(scenario_many_early_warnings), 0);
    }

    TEST("jsonlog: divergences: first few of each kind, then one a second with a count") {
        snprintf(log_path, sizeof log_path, "%s/rate.jsonl", tmpdir);
        snprintf(log_tmpl, sizeof log_tmpl, "%s", log_path);
        EXPECT_EQ_INT(in_child(scenario_rate_limit), 0);
    }

    TEST("jsonlog: no ENCORE_LOG, no output from events") {
        EXPECT_EQ_INT(in_child(scenario_no_log), 0);
    }

    TEST("jsonlog: unopenable ENCORE_LOG and ENCORE_REPORT_FILE warn once each") {
        EXPECT_EQ_INT(in_child(scenario_bad_log_path), 0);
    }

    TEST("jsonlog: a forked child writes its own start event (own file with %p)") {
        snprintf(log_tmpl, sizeof log_tmpl, "%s/fork-%%p.jsonl", tmpdir);
        EXPECT_EQ_INT(in_child(scenario_fork), 0);
    }

    TEST("exit: a process that made no CUDA call prints nothing and leaves no log") {
        snprintf(log_path, sizeof log_path, "%s/untouched.jsonl", tmpdir);
        snprintf(log_tmpl, sizeof log_tmpl, "%s", log_path);
        EXPECT_EQ_INT(in_child(scenario_exit_untouched), 0);
    }

    TEST("exit: ENCORE_REPORT=1 prints the table once and the log gets one summary") {
        snprintf(log_path, sizeof log_path, "%s/exit.jsonl", tmpdir);
        snprintf(log_tmpl, sizeof log_tmpl, "%s", log_path);
        EXPECT_EQ_INT(in_child(scenario_exit_report), 0);
    }

    TEST("exit: report off prints nothing") {
        EXPECT_EQ_INT(in_child(scenario_exit_quiet), 0);
    }

    TEST("exit: ENCORE_STATS=1 implies the report and adds hook calls") {
        EXPECT_EQ_INT(in_child(scenario_exit_stats), 0);
    }

    TEST("exit: ENCORE_REPORT_FILE (with %p) gets the table instead of stderr") {
        snprintf(report_tmpl, sizeof report_tmpl, "%s/report-%%p.txt", tmpdir);
        EXPECT_EQ_INT(in_child(scenario_report_file), 0);
    }

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (th_failed == 0 && system(cmd) != 0)
        printf("could not remove %s\n", tmpdir);
    return th_report();
}
