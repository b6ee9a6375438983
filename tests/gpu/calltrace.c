/* encore diagnostic: which driver call broke a capture? (a tool, not a test)
 *
 *   LD_PRELOAD="libencore.so:libencore_calltrace.so" ./program
 *
 * Subscribes to every CUDA driver API callback through CUPTI (dlopen'ed as
 * audit.c does) and keeps the last CALLTRACE_RING calls (function, thread,
 * result) in a ring. The first time a call returns a stream-capture error
 * (CUDA_ERROR_STREAM_CAPTURE_*, 900-908) or a sticky error, it prints the
 * ring to stderr, oldest first, so the call that broke the capture and the
 * thread that made it can be read off. Environment: ENCAUDIT_CUPTI as for
 * audit.c.
 *
 * Two more uses, for finding out what a library calls between its launches:
 *   CALLTRACE_COUNT=1     at exit, print every driver entry point called, with
 *                         its count, on the main thread and on others
 *   CALLTRACE_DUMP_AT=N   print the ring once, when the N-th call returns (a
 *                         window in the steady state of a loop) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>

#ifndef ENCAUDIT_DEFAULT_CUPTI
#define ENCAUDIT_DEFAULT_CUPTI ""
#endif
#define CALLTRACE_RING 256
#define CALLTRACE_IDS 4096 /* above every CUPTI driver callback id */

typedef struct {
    const char *fn;
    long tid;
    int result;
} entry;
static entry ring[CALLTRACE_RING];
static atomic_uint ring_next;
static atomic_int dumped;
static int count_on;
static unsigned long dump_at;
static long main_tid;
static atomic_ulong calls_main[CALLTRACE_IDS], calls_other[CALLTRACE_IDS];
static const char *names[CALLTRACE_IDS];

typedef CUptiResult (*pfn_subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*pfn_enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);

static void dump(const char *why) {
    if (atomic_exchange(&dumped, 1)) return;
    unsigned end = atomic_load(&ring_next);
    fprintf(stderr, "calltrace: %s; the last driver calls (oldest first; main thread is %ld):\n", why,
            (long)getpid());
    for (unsigned i = end > CALLTRACE_RING ? end - CALLTRACE_RING : 0; i < end; i++) {
        const entry *e = &ring[i % CALLTRACE_RING];
        fprintf(stderr, "calltrace:   tid %ld %-40s -> %d\n", e->tid, e->fn ? e->fn : "?", e->result);
    }
}

static void CUPTIAPI on_call(void *u, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const void *data) {
    (void)u;
    (void)cbid;
    if (dom != CUPTI_CB_DOMAIN_DRIVER_API) return;
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    if (cb->callbackSite != CUPTI_API_EXIT) return;
    int r = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : -1;
    unsigned i = atomic_fetch_add(&ring_next, 1);
    long tid = (long)syscall(SYS_gettid);
    ring[i % CALLTRACE_RING] = (entry){cb->functionName, tid, r};
    if (count_on && cbid < CALLTRACE_IDS) {
        names[cbid] = cb->functionName;
        atomic_fetch_add_explicit(tid == main_tid ? &calls_main[cbid] : &calls_other[cbid], 1, memory_order_relaxed);
    }
    if (dump_at && i + 1 == dump_at) {
        char why[64];
        snprintf(why, sizeof why, "call %lu (CALLTRACE_DUMP_AT)", dump_at);
        dump(why);
    }
    if ((r >= 900 && r <= 908) || r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_ASSERT) {
        char why[160];
        snprintf(why, sizeof why, "%s returned %d", cb->functionName ? cb->functionName : "?", r);
        dump(why);
    }
}

static void print_counts(void) {
    fprintf(stderr, "calltrace: driver calls by entry point (main thread, other threads):\n");
    for (;;) { /* largest first, each printed once */
        unsigned long best = 0;
        int at = -1;
        for (int k = 0; k < CALLTRACE_IDS; k++) {
            unsigned long n = atomic_load(&calls_main[k]) + atomic_load(&calls_other[k]);
            if (n > best) best = n, at = k;
        }
        if (at < 0) break;
        fprintf(stderr, "calltrace:   %-44s %10lu %10lu\n", names[at] ? names[at] : "?", atomic_load(&calls_main[at]),
                atomic_load(&calls_other[at]));
        atomic_store(&calls_main[at], 0);
        atomic_store(&calls_other[at], 0);
    }
}

__attribute__((constructor)) static void calltrace_init(void) {
    const char *c = getenv("CALLTRACE_COUNT"), *d = getenv("CALLTRACE_DUMP_AT");
    count_on = c && *c && *c != '0';
    dump_at = d ? strtoul(d, NULL, 10) : 0;
    main_tid = (long)syscall(SYS_gettid);
    if (count_on) atexit(print_counts);
    const char *env = getenv("ENCAUDIT_CUPTI");
    const char *cands[] = {env, ENCAUDIT_DEFAULT_CUPTI, "libcupti.so.13", "libcupti.so.12", "libcupti.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !h; i++)
        if (cands[i] && cands[i][0]) h = dlopen(cands[i], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "calltrace: CUPTI not found\n");
        return;
    }
    pfn_subscribe sub = (pfn_subscribe)dlsym(h, "cuptiSubscribe");
    pfn_enable_domain en = (pfn_enable_domain)dlsym(h, "cuptiEnableDomain");
    CUpti_SubscriberHandle s;
    if (!sub || !en || sub(&s, (CUpti_CallbackFunc)on_call, NULL) != CUPTI_SUCCESS ||
        en(1, s, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS)
        fprintf(stderr, "calltrace: could not subscribe to driver callbacks\n");
}
