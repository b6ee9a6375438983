/* encore CUPTI visibility audit (test tool, not part of libencore).
 *
 * Preloaded after encore:  LD_PRELOAD="libencore.so:libencore_audit.so"
 *
 * Contract with encore: encore looks up encore_audit_enter/encore_audit_leave
 * with dlsym(RTLD_DEFAULT, ...) at start-up and brackets every launch-type
 * driver call it makes itself (eager launches, re-issued held launches,
 * capture re-issue, graph launches) with enter()/leave().
 *
 * This library subscribes to CUPTI driver-API callbacks for the kernel launch
 * entry points (and graph launches). A launch that reaches the driver inside
 * an enter/leave bracket on the same thread went through encore ("seen");
 * anything else bypassed encore ("unseen"). At exit it prints one line:
 *
 *   encore-audit: launches=N through_encore=M unseen=K graph_launches=G
 *                 graph_unseen=H hooks=E status=ok first_unseen=...
 *
 * Without encore preloaded every launch is unseen (sanity mode).
 *
 * CUPTI is loaded with dlopen so that this library builds with only the CUPTI
 * header, and so that the runner can point it at the CUPTI that matches the
 * program (ENCAUDIT_CUPTI=/path/libcupti.so). Environment (deliberately not
 * ENCORE_*, which encore validates):
 *   ENCAUDIT_CUPTI       path of libcupti to dlopen (default: the build-time
 *                        path, then libcupti.so.13, libcupti.so.12, libcupti.so)
 *   ENCAUDIT_FILE        also append the summary line to this file
 *   ENCAUDIT_PARENT_PID  only audit a process whose parent has this pid (keeps
 *                        compilers and other helpers a program spawns quiet)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_result.h>

#ifndef ENCAUDIT_DEFAULT_CUPTI
#define ENCAUDIT_DEFAULT_CUPTI ""
#endif

#define AUDIT_EXPORT __attribute__((visibility("default")))

/* ---- the contract with encore ------------------------------------------- */

static _Thread_local int audit_depth;
static atomic_ullong audit_hook_calls;

AUDIT_EXPORT void encore_audit_enter(void)
{
    audit_depth++;
    atomic_fetch_add_explicit(&audit_hook_calls, 1, memory_order_relaxed);
}

AUDIT_EXPORT void encore_audit_leave(void)
{
    if (audit_depth > 0)
        audit_depth--;
}

/* ---- counters ------------------------------------------------------------- */

static atomic_ullong n_launches, n_seen, n_unseen;
static atomic_ullong n_graph, n_graph_unseen;

#define MAX_NAMES 6
#define NAME_LEN 160
static char unseen_names[MAX_NAMES][NAME_LEN];
static atomic_int unseen_claimed;          /* slots claimed */
static atomic_int unseen_ready[MAX_NAMES]; /* slot fully written */

enum { ST_OFF = 0, ST_OK, ST_NOCUPTI, ST_ERROR };
static int audit_state = ST_OFF;
static char audit_error[256];

typedef CUptiResult (*pfn_subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
typedef CUptiResult (*pfn_enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                  CUpti_CallbackId);
typedef CUptiResult (*pfn_result_string)(CUptiResult, const char **);

static const char *result_string(pfn_result_string rs, CUptiResult r)
{
    const char *s = NULL;
    if (rs && rs(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

static void remember_unseen(const CUpti_CallbackData *cb)
{
    int slot = atomic_fetch_add_explicit(&unseen_claimed, 1, memory_order_relaxed);
    if (slot >= MAX_NAMES)
        return;
    snprintf(unseen_names[slot], NAME_LEN, "%s:%s", cb->functionName ? cb->functionName : "?",
             cb->symbolName ? cb->symbolName : "?");
    atomic_store_explicit(&unseen_ready[slot], 1, memory_order_release);
}

static void CUPTIAPI audit_callback(void *userdata, CUpti_CallbackDomain domain,
                                    CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API)
        return;
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    if (cb->callbackSite != CUPTI_API_ENTER)
        return;
    int inside = audit_depth > 0;
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
        cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz) {
        atomic_fetch_add_explicit(&n_graph, 1, memory_order_relaxed);
        if (!inside)
            atomic_fetch_add_explicit(&n_graph_unseen, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&n_launches, 1, memory_order_relaxed);
    if (inside) {
        atomic_fetch_add_explicit(&n_seen, 1, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&n_unseen, 1, memory_order_relaxed);
        remember_unseen(cb);
    }
}

static const CUpti_CallbackId audit_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

static void *open_cupti(void)
{
    const char *env = getenv("ENCAUDIT_CUPTI");
    const char *cands[] = {env, ENCAUDIT_DEFAULT_CUPTI, "libcupti.so.13", "libcupti.so.12",
                           "libcupti.so"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        if (!cands[i] || !cands[i][0])
            continue;
        void *h = dlopen(cands[i], RTLD_NOW | RTLD_GLOBAL);
        if (h)
            return h;
        if (i == 0) /* an explicit path that fails is worth saying */
            snprintf(audit_error, sizeof audit_error, "ENCAUDIT_CUPTI=%s: %s", cands[i], dlerror());
    }
    return NULL;
}

static void say(const char *msg)
{
    ssize_t r = write(2, msg, strlen(msg));
    (void)r;
}

__attribute__((constructor)) static void audit_init(void)
{
    const char *ppid = getenv("ENCAUDIT_PARENT_PID");
    if (ppid && *ppid && (long)getppid() != strtol(ppid, NULL, 10))
        return; /* a helper process the program spawned: stay dormant */

    void *h = open_cupti();
    if (!h) {
        audit_state = ST_NOCUPTI;
        if (!audit_error[0])
            snprintf(audit_error, sizeof audit_error, "libcupti not found (set ENCAUDIT_CUPTI)");
        char msg[400];
        snprintf(msg, sizeof msg, "encore-audit: CUPTI not available: %s\n", audit_error);
        say(msg);
        return;
    }
    pfn_subscribe sub = (pfn_subscribe)dlsym(h, "cuptiSubscribe");
    pfn_enable en = (pfn_enable)dlsym(h, "cuptiEnableCallback");
    pfn_result_string rs = (pfn_result_string)dlsym(h, "cuptiGetResultString");
    if (!sub || !en) {
        audit_state = ST_NOCUPTI;
        snprintf(audit_error, sizeof audit_error, "libcupti lacks cuptiSubscribe/cuptiEnableCallback");
        say("encore-audit: CUPTI not available: libcupti lacks cuptiSubscribe\n");
        return;
    }
    CUpti_SubscriberHandle subscriber;
    CUptiResult r = sub(&subscriber, (CUpti_CallbackFunc)audit_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        audit_state = ST_ERROR;
        snprintf(audit_error, sizeof audit_error, "cuptiSubscribe: %s", result_string(rs, r));
        char msg[400];
        snprintf(msg, sizeof msg, "encore-audit: ERROR %s\n", audit_error);
        say(msg);
        return;
    }
    for (size_t i = 0; i < sizeof audit_cbids / sizeof audit_cbids[0]; i++) {
        r = en(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, audit_cbids[i]);
        if (r != CUPTI_SUCCESS) {
            audit_state = ST_ERROR;
            snprintf(audit_error, sizeof audit_error, "cuptiEnableCallback(cbid %u): %s",
                     (unsigned)audit_cbids[i], result_string(rs, r));
            char msg[400];
            snprintf(msg, sizeof msg, "encore-audit: ERROR %s\n", audit_error);
            say(msg);
            return;
        }
    }
    audit_state = ST_OK;
}

__attribute__((destructor)) static void audit_fini(void)
{
    if (audit_state == ST_OFF)
        return;
    static const char *state_names[] = {"off", "ok", "nocupti", "error"};
    char line[2048];
    int n = snprintf(line, sizeof line,
                     "encore-audit: launches=%llu through_encore=%llu unseen=%llu "
                     "graph_launches=%llu graph_unseen=%llu hooks=%llu status=%s pid=%ld",
                     (unsigned long long)atomic_load(&n_launches),
                     (unsigned long long)atomic_load(&n_seen),
                     (unsigned long long)atomic_load(&n_unseen),
                     (unsigned long long)atomic_load(&n_graph),
                     (unsigned long long)atomic_load(&n_graph_unseen),
                     (unsigned long long)atomic_load(&audit_hook_calls), state_names[audit_state],
                     (long)getpid());
    int claimed = atomic_load(&unseen_claimed);
    if (claimed > MAX_NAMES)
        claimed = MAX_NAMES;
    for (int i = 0; i < claimed && n > 0 && n < (int)sizeof line - 8; i++) {
        if (!atomic_load_explicit(&unseen_ready[i], memory_order_acquire))
            continue;
        n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", i == 0 ? " first_unseen=" : ",",
                      unseen_names[i]);
    }
    if (audit_error[0] && n > 0 && n < (int)sizeof line - 8)
        n += snprintf(line + n, sizeof line - (size_t)n, " error=\"%s\"", audit_error);
    if (n < 0)
        return;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    line[n] = '\0';
    say(line);
    const char *file = getenv("ENCAUDIT_FILE");
    if (file && *file) {
        int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ssize_t r = write(fd, line, (size_t)n);
            (void)r;
            close(fd);
        }
    }
}
