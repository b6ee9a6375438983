/* encore benchmarks: small helpers shared by the native benchmark programs.
 *
 * Benchmarks are not tests: they assert nothing about time. Each program
 * prints one machine-readable line per measurement,
 *     RESULT key=value key=value ...
 * which tests/bench/bench parses. Keep values free of spaces. */
#ifndef ENCORE_BENCH_COMMON_H
#define ENCORE_BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t bench_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread (not wall time): what the launch path costs. */
static inline uint64_t bench_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* FNV-1a, 64 bits: the checksum of a program's final device state. */
static inline uint64_t bench_fnv1a(uint64_t h, const void *data, size_t len) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define BENCH_FNV_INIT 0xcbf29ce484222325ull

/* xorshift64*: the seeded generator of --random sequences. */
static inline uint64_t bench_rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dull;
}

static int bench_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Median of n values (sorts the array in place). */
static inline uint64_t bench_median_u64(uint64_t *v, size_t n) {
    if (n == 0) return 0;
    qsort(v, n, sizeof *v, bench_cmp_u64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Parse a non-negative integer option value or exit with a message. */
static inline long bench_parse_long(const char *opt, const char *s, long min, long max) {
    char *end = NULL;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end || v < min || v > max) {
        fprintf(stderr, "bad value for %s: '%s' (expected an integer in [%ld, %ld])\n", opt, s ? s : "", min, max);
        exit(2);
    }
    return v;
}

#endif
