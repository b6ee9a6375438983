/* Unit tests of base/log.c: prefix, level words, threshold, once-only
 * warnings, truncation, whole lines under concurrency, warnings kept until a
 * sink is registered, forwarding of warnings to the sink (a fake here; the
 * JSON log's in the library) without recursion. */
#include "base/log.h"
#include "testhelper.h"

#include <fcntl.h>
#include <pthread.h>

/* Stands in for the JSON log's sink. It logs a warning itself, which must
 * not come back here. */
static int forwarded, sink_nests;
static char last_forwarded[2048];
static void fake_sink(const char *msg)
{
    forwarded++;
    snprintf(last_forwarded, sizeof last_forwarded, "%s", msg);
    if (sink_nests)
        enc_log(ENC_LOG_WARN, "nested warning from the sink");
}

static char kept[16][64];
static double kept_time[16];
static int kept_n;
static void collect_kept(double t, const char *msg, void *ctx)
{
    (void)ctx;
    if (kept_n < 16) {
        kept_time[kept_n] = t;
        snprintf(kept[kept_n++], sizeof kept[0], "%s", msg);
    }
}

static int once_shared;
static void *warn_once_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100; i++)
        enc_warn_once(&once_shared, "only once %d", i);
    return NULL;
}

static void *spam_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (int i = 0; i < 300; i++)
        enc_log(ENC_LOG_INFO, "thread %d message %d %s", k, i,
                "padding padding padding padding padding padding padding padding padding");
    return NULL;
}

int main(int argc, char **argv)
{
    th_init(argc, argv);

    TEST("log: default threshold is warn and fd is stderr") {
        EXPECT_EQ_INT(enc_log_threshold, ENC_LOG_WARN);
        EXPECT_EQ_INT(enc_log_fd(), 2);
    }

    TEST("log: warnings before a sink is registered are kept, the first 8, each taken once") {
        th_capture_begin();
        for (int i = 0; i < 10; i++)
            enc_log(ENC_LOG_WARN, "early %d", i);
        enc_log(ENC_LOG_INFO, "info is not kept");
        th_capture_end();
        EXPECT(enc_log_any_kept());
        kept_n = 0;
        unsigned dropped = enc_log_take_kept(collect_kept, NULL);
        EXPECT_EQ_INT(kept_n, ENC_LOG_KEPT);
        EXPECT_STR_EQ(kept[0], "early 0");
        EXPECT_STR_EQ(kept[7], "early 7");
        EXPECT(kept_time[0] > 1e9 && kept_time[7] >= kept_time[0]);
        EXPECT_EQ_INT(dropped, 2);
        EXPECT_EQ_INT(enc_log_take_kept(collect_kept, NULL), 0); /* told once */
        EXPECT_EQ_INT(kept_n, ENC_LOG_KEPT);                      /* taken once */
    }

    enc_log_set_warning_sink(fake_sink);

    TEST("log: every line has the encore: prefix and one newline") {
        th_capture_begin();
        enc_log(ENC_LOG_WARN, "hello %d", 42);
        enc_log(ENC_LOG_ERROR, "already has a newline\n");
        enc_log(ENC_LOG_WARN, "two newlines\n\n");
        enc_log(ENC_LOG_WARN, "via macro %s", "x");
        const char *out = th_capture_end();
        EXPECT_STR_EQ(out, "encore: hello 42\nencore: already has a newline\nencore: two newlines\nencore: via macro x\n");
    }

    TEST("log: debug and trace carry their level word") {
        enc_log_threshold = ENC_LOG_TRACE;
        th_capture_begin();
        enc_log(ENC_LOG_INFO, "info");
        enc_log(ENC_LOG_DEBUG, "dbg");
        ENC_DEBUG("dbg2 %d", 2);
        enc_log(ENC_LOG_TRACE, "trc");
        const char *out = th_capture_end();
        enc_log_threshold = ENC_LOG_WARN;
        EXPECT_STR_EQ(out, "encore: info\nencore: debug: dbg\nencore: debug: dbg2 2\nencore: trace: trc\n");
    }

    TEST("log: nothing is printed above the threshold") {
        th_capture_begin();
        enc_log(ENC_LOG_INFO, "info");
        enc_log(ENC_LOG_DEBUG, "debug");
        ENC_DEBUG("debug");
        enc_log(ENC_LOG_INFO, "info");
        enc_log(ENC_LOG_TRACE, "trace");
        const char *out = th_capture_end();
        EXPECT_STR_EQ(out, "");
        enc_log_threshold = ENC_LOG_ERROR;
        th_capture_begin();
        enc_log(ENC_LOG_WARN, "warn");
        enc_log(ENC_LOG_ERROR, "err");
        out = th_capture_end();
        enc_log_threshold = ENC_LOG_WARN;
        EXPECT_STR_EQ(out, "encore: err\n");
    }

    TEST("log: enc_log_plain prints whatever the threshold") {
        enc_log_threshold = ENC_LOG_ERROR;
        th_capture_begin();
        enc_log_plain("config %s", "line");
        const char *out = th_capture_end();
        enc_log_threshold = ENC_LOG_WARN;
        EXPECT_STR_EQ(out, "encore: config line\n");
    }

    TEST("log: warn_once warns once per flag") {
        static int f1, f2;
        th_capture_begin();
        for (int i = 0; i < 5; i++) {
            enc_warn_once(&f1, "first %d", i);
            enc_warn_once(&f2, "second %d", i);
            ENC_WARN_ONCE("macro %d", i);
        }
        const char *out = th_capture_end();
        EXPECT_STR_EQ(out, "encore: first 0\nencore: second 0\nencore: macro 0\n");
    }

    TEST("log: warn_once from 8 threads at once prints one line") {
        th_capture_begin();
        pthread_t t[8];
        for (int k = 0; k < 8; k++)
            pthread_create(&t[k], NULL, warn_once_thread, NULL);
        for (int k = 0; k < 8; k++)
            pthread_join(t[k], NULL);
        const char *out = th_capture_end();
        EXPECT_EQ_INT(th_count_lines(out), 1);
        EXPECT_STR_CONTAINS(out, "encore: only once ");
    }

    TEST("log: long messages are cut safely and end in ...") {
        static char big[5000];
        memset(big, 'x', sizeof big - 1);
        th_capture_begin();
        enc_log(ENC_LOG_WARN, "%s", big);
        enc_log(ENC_LOG_WARN, "after");
        const char *out = th_capture_end();
        EXPECT_EQ_INT(th_count_lines(out), 2);
        const char *nl = strchr(out, '\n');
        EXPECT(nl && nl - out + 1 <= 1024);
        EXPECT(nl && nl - out >= 3 && memcmp(nl - 3, "...", 3) == 0);
        EXPECT(strncmp(out, "encore: xxx", 11) == 0);
        EXPECT_STR_CONTAINS(out, "...\nencore: after\n");
    }

    TEST("log: lines from many threads are never interleaved") {
        enc_log_threshold = ENC_LOG_INFO;
        th_capture_begin();
        pthread_t t[4];
        for (int k = 0; k < 4; k++)
            pthread_create(&t[k], NULL, spam_thread, (void *)(intptr_t)k);
        for (int k = 0; k < 4; k++)
            pthread_join(t[k], NULL);
        const char *out = th_capture_end();
        enc_log_threshold = ENC_LOG_WARN;
        EXPECT_EQ_INT(th_count_lines(out), 1200);
        EXPECT_EQ_INT(th_count(out, "encore: thread "), 1200);
        EXPECT_EQ_INT(th_count(out, "padding\n"), 1200);
    }

    TEST("log: a write error is ignored and errno is preserved") {
        enc_log_set_fd(-1);
        errno = 1234;
        enc_log(ENC_LOG_WARN, "to nowhere");
        EXPECT_EQ_INT(errno, 1234);
        int fd = open("/dev/null", O_RDONLY);
        enc_log_set_fd(fd);
        enc_log(ENC_LOG_WARN, "to a read-only fd");
        EXPECT_EQ_INT(errno, 1234);
        close(fd);
        enc_log_set_fd(2);
    }

    TEST("log: warnings are forwarded to the JSON sink, without recursion") {
        forwarded = 0;
        sink_nests = 1;
        th_capture_begin();
        enc_log(ENC_LOG_WARN, "disk %s", "full");
        int after_one = forwarded;
        enc_log(ENC_LOG_INFO, "not forwarded");
        enc_log_threshold = ENC_LOG_ERROR;
        enc_log(ENC_LOG_WARN, "forwarded though not printed");
        enc_log_threshold = ENC_LOG_WARN;
        const char *out = th_capture_end();
        sink_nests = 0;
        EXPECT_EQ_INT(after_one, 1);
        EXPECT_EQ_INT(forwarded, 2);
        EXPECT_STR_EQ(last_forwarded, "forwarded though not printed");
        EXPECT_STR_EQ(out, "encore: disk full\nencore: nested warning from the sink\n");
    }

    return th_report();
}
