/* encore: a tiny test helper for the unit tests.
 *
 *   TEST("options: bool spellings") {
 *       EXPECT(x == 1);
 *       EXPECT_STR_CONTAINS(out, "ENCORE_REPORT");
 *   }
 *   return th_report();   // prints "N passed, N failed"; exit status 0 if none failed
 *
 * Each TEST prints one line, "ok   <name>" or "FAIL <name>" followed by the
 * failed expectations. A test binary given an argument runs only the tests
 * whose name contains it. th_capture_* collect what encore logs (the log fd)
 * into a string. */
#ifndef ENCORE_TESTHELPER_H
#define ENCORE_TESTHELPER_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"

static int th_passed, th_failed, th_current_failed;
static const char *th_filter;
static const char *th_name;

static inline void th_init(int argc, char **argv)
{
    th_filter = argc > 1 ? argv[1] : NULL;
    setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline int th_begin(const char *name)
{
    if (th_filter && !strstr(name, th_filter))
        return 0;
    th_name = name;
    th_current_failed = 0;
    return 1;
}

static inline int th_end(void)
{
    if (th_current_failed) {
        th_failed++;
        printf("FAIL %s\n", th_name);
    } else {
        th_passed++;
        printf("ok   %s\n", th_name);
    }
    fflush(stdout);
    return 0;
}

#define TEST(name) for (int th_once_ = th_begin(name); th_once_; th_once_ = th_end())

static inline int th_expect(int cond, const char *what, const char *file, int line)
{
    if (!cond) {
        th_current_failed = 1;
        printf("     %s:%d: expected %s\n", file, line, what);
    }
    return cond;
}

#define EXPECT(cond) th_expect(!!(cond), #cond, __FILE__, __LINE__)
#define EXPECT_EQ_INT(a, b)                                                                         \
    do {                                                                                            \
        long long th_a_ = (long long)(a), th_b_ = (long long)(b);                                  \
        if (!th_expect(th_a_ == th_b_, #a " == " #b, __FILE__, __LINE__))                          \
            printf("       got %lld, want %lld\n", th_a_, th_b_);                                  \
    } while (0)
#define EXPECT_STR_EQ(a, b)                                                                         \
    do {                                                                                            \
        const char *th_a_ = (a), *th_b_ = (b);                                                      \
        if (!th_expect(strcmp(th_a_, th_b_) == 0, #a " equals " #b, __FILE__, __LINE__))           \
            printf("       got \"%s\"\n       want \"%s\"\n", th_a_, th_b_);                       \
    } while (0)
#define EXPECT_STR_CONTAINS(hay, needle)                                                            \
    do {                                                                                            \
        const char *th_h_ = (hay), *th_n_ = (needle);                                              \
        if (!th_expect(strstr(th_h_, th_n_) != NULL, #hay " contains \"" #needle "\"", __FILE__,   \
                       __LINE__))                                                                   \
            printf("       in: %s\n", th_h_);                                                      \
    } while (0)
#define EXPECT_STR_LACKS(hay, needle)                                                               \
    do {                                                                                            \
        const char *th_h_ = (hay), *th_n_ = (needle);                                              \
        if (!th_expect(strstr(th_h_, th_n_) == NULL, #hay " lacks \"" #needle "\"", __FILE__,      \
                       __LINE__))                                                                   \
            printf("       in: %s\n", th_h_);                                                      \
    } while (0)

static inline int th_report(void)
{
    printf("%d passed, %d failed\n", th_passed, th_failed);
    return th_failed ? 1 : 0;
}

/* ---- capturing encore's log output ---------------------------------------- */

static int th_cap_fd = -1;
static char th_cap_buf[1 << 20];

/* Point encore's log fd at a fresh temporary file. */
static inline void th_capture_begin(void)
{
    char path[] = "/tmp/encore-test-XXXXXX";
    th_cap_fd = mkstemp(path);
    if (th_cap_fd < 0) {
        perror("mkstemp");
        exit(2);
    }
    unlink(path);
    enc_log_set_fd(th_cap_fd);
}

/* Restore the log fd to stderr; return what was logged since th_capture_begin
 * (a static buffer, valid until the next call). */
static inline const char *th_capture_end(void)
{
    enc_log_set_fd(2);
    size_t n = 0;
    if (th_cap_fd >= 0) {
        ssize_t r;
        while (n < sizeof th_cap_buf - 1 && (r = pread(th_cap_fd, th_cap_buf + n, sizeof th_cap_buf - 1 - n, (off_t)n)) > 0)
            n += (size_t)r;
        close(th_cap_fd);
        th_cap_fd = -1;
    }
    th_cap_buf[n] = '\0';
    return th_cap_buf;
}

/* Lines in s (count of '\n'). */
static inline int th_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Occurrences of needle in s. */
static inline int th_count(const char *s, const char *needle)
{
    int n = 0;
    size_t l = strlen(needle);
    for (const char *p = strstr(s, needle); p; p = strstr(p + l, needle))
        n++;
    return n;
}

#endif
