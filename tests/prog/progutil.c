#include "progutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PROG_KERNELS_SO
#error "build with -DPROG_KERNELS_SO=\"/abs/path/libprogkernels.so\""
#endif
#ifndef PROG_KERNELS_ALT_SO
#error "build with -DPROG_KERNELS_ALT_SO=\"/abs/path/libprogkernels_alt.so\""
#endif

static uint64_t launches_made;

void prog_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("prog: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

const char *prog_kernels_path(int alt)
{
    const char *env = getenv(alt ? "PROG_KERNELS_ALT" : "PROG_KERNELS");
    if (env && *env)
        return env;
    return alt ? PROG_KERNELS_ALT_SO : PROG_KERNELS_SO;
}

void prog_count_launch(void)
{
    __atomic_fetch_add(&launches_made, 1, __ATOMIC_RELAXED);
}

uint64_t prog_launches_made(void)
{
    return __atomic_load_n(&launches_made, __ATOMIC_RELAXED);
}

void prog_report_launches(void)
{
    fflush(stdout);
    fprintf(stderr, "launches_made=%llu\n", (unsigned long long)prog_launches_made());
}

void prog_report_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long rss = -1, peak = -1;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "VmRSS:", 6))
            rss = strtol(line + 6, NULL, 10);
        else if (!strncmp(line, "VmHWM:", 6))
            peak = strtol(line + 6, NULL, 10);
    }
    if (f)
        fclose(f);
    fflush(stdout);
    fprintf(stderr, "rss_kb=%ld\nrss_peak_kb=%ld\n", rss, peak);
}
