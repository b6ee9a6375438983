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
 * encore interposes; it makes no CUDA call that creates a context.
 *
 * The launch-free bound in the same process (tests/bench/skip_launch.c,
 * LD_PRELOAD=libskiplaunch.so:libencore.so SKIPLAUNCH_SWITCH=1) has a switch of
 * its own, "skiplaunchSetActive" (1: every kernel launch skipped, 0: passed on
 * to encore):
 *
 *   encore_switch_fn skip = skiplaunch_switch_find();   NULL: no switchable libskiplaunch.so
 *   encore_block_set(sw, skip, letter);                  a block letter's state, below
 *
 * Block letters of the benchmark programs' schedules:
 *   E  as it is (nothing switched)
 *   P  encore passive, launches passed on       A  encore active, launches passed on
 *   B  encore passive, every launch skipped (the bound; needs skiplaunch's switch)
 *   T  encore active with ENCORE_TRIAL's settings (encoreSetActive(2)): a trial
 *      block, beside A blocks with the effective settings
 *   G, D and the like: as P (the program adds what the letter means)
 * With libskiplaunch.so alone (variant launch-free), "encoreSetActive" is
 * skiplaunch's switch too, so that there A blocks skip and P blocks launch. */
#ifndef ENCORE_SWITCH_H
#define ENCORE_SWITCH_H

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef int (*encore_switch_fn)(int active);

static inline encore_switch_fn encore_switch_find_named(const char *name) {
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
        r = g(name, &fn, 12000, 0, &st);
    } else if (p1) {
        gpa1_t g;
        memcpy(&g, &p1, sizeof g);
        r = g(name, &fn, 12000, 0);
    }
    if (r != 0 || !fn) return NULL;
    encore_switch_fn sw;
    memcpy(&sw, &fn, sizeof sw);
    return sw;
}

/* encore's switch; NULL without encore (or, alone, a switchable libskiplaunch.so's). */
static inline encore_switch_fn encore_switch_find(void) { return encore_switch_find_named("encoreSetActive"); }

/* libskiplaunch.so's switch (SKIPLAUNCH_SWITCH=1); NULL without it. */
static inline encore_switch_fn skiplaunch_switch_find(void) { return encore_switch_find_named("skiplaunchSetActive"); }

/* 0 on success (or without encore); the CUresult otherwise. */
static inline int encore_switch_set(encore_switch_fn sw, int active) { return sw ? sw(active) : 0; }

/* Switch encore (sw) and libskiplaunch.so (skip) into the state of block `letter`
 * (above). 0 on success; -1 for a B block without skiplaunch's switch; else the
 * CUresult. Encore is made passive (it issues what it holds) before skipping
 * starts, and skipping stops before encore is made active. */
static inline int encore_block_set(encore_switch_fn sw, encore_switch_fn skip, char letter) {
    int r;
    if (letter == 'E' || letter == 'D') return 0; /* D: encore is bypassed, its switch left alone (a program that
                                                     never switches keeps ENCORE_SELF_CHECK on: schedule ED) */
    if (letter == 'B') {
        if (!skip) return -1;
        return (r = encore_switch_set(sw, 0)) != 0 ? r : skip(1);
    }
    if (skip && (r = skip(0)) != 0) return r;
    return encore_switch_set(sw, letter == 'A' ? 1 : letter == 'T' ? 2 : 0);
}

#endif
