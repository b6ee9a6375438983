/* encore: glibc's own dlsym.
 *
 * encore exports dlsym (interpose/dlsym.c), so the real one is found by
 * version with dlvsym. This file and interpose/dlsym.c are built without
 * sanitizer instrumentation: sanitizer runtimes call dlsym while they start,
 * before instrumented code can run. */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "base/driver.h"

void *(*enc_real_dlsym_fn)(void *, const char *);

void *(*enc_real_dlsym_resolve(void))(void *, const char *) {
    void *(*f)(void *, const char *) = __atomic_load_n(&enc_real_dlsym_fn, __ATOMIC_ACQUIRE);
    if (f) return f;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
    for (unsigned i = 0; i < sizeof versions / sizeof versions[0] && !f; i++)
        f = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (f) __atomic_store_n(&enc_real_dlsym_fn, f, __ATOMIC_RELEASE);
    return f;
}

void *enc_real_dlsym(void *handle, const char *name) {
    void *(*f)(void *, const char *) = enc_real_dlsym_resolve();
    return f ? f(handle, name) : NULL;
}
