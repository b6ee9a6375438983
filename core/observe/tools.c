/* encore: other CUDA tools in the process (see tools.h). */
#define _GNU_SOURCE
#include "core/observe/tools.h"

#include "base/log.h"

#include <link.h>
#include <stdlib.h>
#include <string.h>

/* compute-sanitizer's libraries live in its own directory
 * (<toolkit>/compute-sanitizer/) and are called libsanitizer-*.so and
 * libTreeLauncher*.so; its injection is loaded through CUDA_INJECTION64_PATH
 * or LD_PRELOAD. */
static int names_sanitizer(const char *path) {
    return path &&
           (strstr(path, "compute-sanitizer") || strstr(path, "libsanitizer-") || strstr(path, "libTreeLauncher"));
}

const char *enc_tools_sanitizer_in(const char *injection, const char *preload) {
    if (names_sanitizer(injection)) return "CUDA_INJECTION64_PATH";
    if (names_sanitizer(preload)) return "LD_PRELOAD";
    return NULL;
}

static int loaded_cb(struct dl_phdr_info *info, size_t size, void *found) {
    (void)size;
    if (names_sanitizer(info->dlpi_name)) *(int *)found = 1;
    return *(int *)found;
}

int enc_tools_step_aside(void) {
    const char *why = enc_tools_sanitizer_in(getenv("CUDA_INJECTION64_PATH"), getenv("LD_PRELOAD"));
    int loaded = 0;
    if (!why) dl_iterate_phdr(loaded_cb, &loaded);
    if (!why && !loaded) return 0;
    enc_log(ENC_LOG_WARN,
            "running under compute-sanitizer (%s): encore steps aside and passes every call through, so that "
            "the sanitizer checks and reports the program's own launches",
            why ? why : "its library is loaded");
    return 1;
}
