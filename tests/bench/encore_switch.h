/* encore's in-process switch, for benchmark programs (C and CUDA).
 *
 * encore answers cuGetProcAddress for "encoreSetActive" (a name the real
 * driver never has) with CUresult fn(int active): 0 issues everything encore
 * holds and passes launches through from then on (only counted), 1 resumes
 * learning and replay. Blocks alternating the two in one process compare
 * encore with pass-through without process-to-process noise.
 *
 *   encore_switch_fn sw = encore_switch_find();   NULL: encore is not preloaded
 *   encore_switch_set(sw, 0);                      no-op when sw is NULL
 *
 * The look-up goes through dlsym(libcuda.so.1, "cuGetProcAddress_v2"), which
 * encore interposes; it makes no CUDA call that creates a context. */
#ifndef ENCORE_SWITCH_H
#define ENCORE_SWITCH_H

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef int (*encore_switch_fn)(int active);

static inline encore_switch_fn encore_switch_find(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) return NULL;
    typedef int (*gpa2_t)(const char *, void **, int, unsigned long long, int *);
    typedef int (*gpa1_t)(const char *, void **, int, unsigned long long);
    void *p2 = dlsym(lib, "cuGetProcAddress_v2"), *p1 = dlsym(lib, "cuGetProcAddress");
    void *fn = NULL;
    int st = 0, r = -1;
    if (p2) {
        gpa2_t g;
        memcpy(&g, &p2, sizeof g);
        r = g("encoreSetActive", &fn, 12000, 0, &st);
    } else if (p1) {
        gpa1_t g;
        memcpy(&g, &p1, sizeof g);
        r = g("encoreSetActive", &fn, 12000, 0);
    }
    if (r != 0 || !fn) return NULL;
    encore_switch_fn sw;
    memcpy(&sw, &fn, sizeof sw);
    return sw;
}

/* 0 on success (or without encore); the CUresult otherwise. */
static inline int encore_switch_set(encore_switch_fn sw, int active) { return sw ? sw(active) : 0; }

#endif
