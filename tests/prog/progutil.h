/* Helpers shared by every test program that do not call the driver:
 * hashing, launch counting, failing loudly, locating the kernels. */
#ifndef PROG_UTIL_H
#define PROG_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define PROG_HASH_INIT 0xcbf29ce484222325ULL

static inline uint64_t prog_hash_u64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static inline uint64_t prog_hash_buf(uint64_t h, const uint32_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = prog_hash_u64(h, p[i]);
    return prog_hash_u64(h, n);
}

/* Prints "prog: <message>" on stderr and exits with status 2. */
__attribute__((noreturn, format(printf, 1, 2))) void prog_die(const char *fmt, ...);

/* Path of libprogkernels.so (alt = 0) or libprogkernels_alt.so (alt = 1):
 * $PROG_KERNELS / $PROG_KERNELS_ALT if set, else the path built in. */
const char *prog_kernels_path(int alt);

/* Every kernel launch the program makes goes through prog_count_launch();
 * prog_report_launches() prints "launches_made=<N>" on stderr, which the
 * runner compares with encore's launches_seen. */
void prog_count_launch(void);
uint64_t prog_launches_made(void);
void prog_report_launches(void);

/* Prints "rss_kb=<VmRSS>" and "rss_peak_kb=<VmHWM>" (from /proc/self/status)
 * on stderr, which the runner reads as prog.rss_kb and prog.rss_peak_kb. */
void prog_report_rss(void);

#endif
