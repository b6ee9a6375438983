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
 * audit.c. */
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
#define CALLTRACE_RING 64

typedef struct {
    const char *fn;
    long tid;
    int result;
} entry;
static entry ring[CALLTRACE_RING];
static atomic_uint ring_next;
static atomic_int dumped;

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
    ring[i % CALLTRACE_RING] = (entry){cb->functionName, (long)syscall(SYS_gettid), r};
    if ((r >= 900 && r <= 908) || r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_ASSERT) {
        char why[160];
        snprintf(why, sizeof why, "%s returned %d", cb->functionName ? cb->functionName : "?", r);
        dump(why);
    }
}

__attribute__((constructor)) static void calltrace_init(void) {
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
