/* encore: start-up, exit, fork, and switching off. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/observe/stats_engine.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"
#include "core/observe/nvtx.h"
#include "core/observe/tools.h"
#include "core/observe/report.h"
#include "policy/options.h"

static int driver_ready; /* the program's cuInit succeeded */

void enc_core_disable(const char *why) {
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL)) return;
    enc_event_disabled(why);
    enc_core_flush_all(ENC_FLUSH_ALL_CALL);
    __atomic_store_n(&enc_hot.switched_off, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&enc_hot.active, 0, __ATOMIC_RELEASE);
}

/* Has the driver torn itself down (at exit, before this handler ran)? */
static int driver_torn_down(void) {
    CUcontext c;
    CUresult r = CUDA_SUCCESS;
    if (enc_drv.ctxGetCurrent) ENC_GUARDED r = enc_drv.ctxGetCurrent(&c);
    return r == CUDA_ERROR_DEINITIALIZED;
}

/* exit() ran on a thread that was inside encore's own code, which may hold
 * any of encore's locks: a signal handler's exit() (not async-signal-safe,
 * but programs do it). Nothing at exit may wait for those locks: what
 * encore holds is not issued, and the report takes no lock it cannot get
 * at once. */
static int exit_inside_encore(void) {
    static int said;
    if (enc_thr.guard != ENC_GUARD_OWN) return 0;
    if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        enc_log(ENC_LOG_WARN,
                "exit() interrupted encore on its thread (a signal handler's exit()?): the launches encore "
                "holds are not issued");
    enc_stats_no_wait();
    return 1;
}

static void at_exit(void) {
    /* A forked child's counts are its parent's: the report is the parent's to make. */
    if (__atomic_load_n(&enc_hot.forked_child, __ATOMIC_RELAXED)) return;
    int inside = exit_inside_encore();
    /* The program is done: whatever this thread calls from now on (other
     * exit handlers, destructors) passes straight through. */
    enc_guard_set_for_good();
    /* Registered at start-up, before the driver's own exit handler, this
     * runs after it: the flush before the driver's teardown was done (see
     * below), and a driver that is gone takes nothing more. */
    if (!inside && enc_hot.active && !driver_torn_down()) enc_core_flush_all(ENC_FLUSH_EXIT);
    enc_report_at_exit();
}

/* The driver registers its own teardown when it is initialised (the
 * simulated driver from an exit handler registered in cuInit; cudart from
 * its own). Exit handlers run last-registered first, so this one, registered
 * after the program's first successful cuInit, issues what encore holds
 * while the driver still takes it. From here on encore passes every call
 * straight through: what the remaining exit handlers launch runs at once. */
static void at_exit_before_driver(void) {
    if (!__atomic_load_n(&enc_hot.active, __ATOMIC_ACQUIRE)) return;
    __atomic_store_n(&enc_hot.active, 0, __ATOMIC_RELEASE);
    if (exit_inside_encore()) return;
    ENC_GUARDED enc_core_flush_all(ENC_FLUSH_EXIT);
}

/* cuInit failed in a way that means there is no usable GPU or driver: the
 * program's own error follows; encore says once why it does nothing. */
void enc_core_driver_init_failed(CUresult r) {
    if (r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
        r == CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
        ENC_WARN_ONCE("cuInit failed (%s): no usable CUDA device or driver here; encore passes everything through",
                      r == CUDA_ERROR_NO_DEVICE ? "CUDA_ERROR_NO_DEVICE"
                                                : "the driver does not match this system or device");
}

void enc_core_driver_initialized(CUresult r) {
    static int registered;
    if (r != CUDA_SUCCESS || __atomic_exchange_n(&registered, 1, __ATOMIC_ACQ_REL)) return;
    __atomic_store_n(&driver_ready, 1, __ATOMIC_RELEASE);
    atexit(at_exit_before_driver);
}

/* A forked child inherits the parent's held launches, stream states and
 * locks (some held by threads it does not have: driver workers, the
 * deadline thread, the program's) but, in CUDA, no usable context: issuing
 * or waiting for the parent's work there can only hang or fail. Once the
 * parent has initialised the driver or used streams through encore, the
 * child passes every call straight through: no hook runs (the forking
 * thread's guard stays set; threads the child starts find enc_hot.forked_child
 * on the way to any lock), no lock is taken, no join made, no report
 * written, and the forking thread forgets its identity (its cached id is
 * the parent thread's). */
static void after_fork_in_child(void) {
    if (!__atomic_load_n(&driver_ready, __ATOMIC_ACQUIRE) && !__atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE))
        return; /* nothing of the parent's: stay active */
    __atomic_store_n(&enc_hot.forked_child, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&enc_hot.active, 0, __ATOMIC_RELEASE);
    enc_stream_forget_thread();
    enc_guard_set_for_good();
    ENC_DEBUG("forked child: passing every call straight through (the CUDA state is the parent's)");
}

/* A test that preloads encore_audit_enter/leave sees every launch encore issues. */
static void find_audit_hooks(void) {
    void *e = enc_real_dlsym(RTLD_DEFAULT, "encore_audit_enter");
    void *x = enc_real_dlsym(RTLD_DEFAULT, "encore_audit_leave");
    if (e && x) {
        memcpy(&enc_audit_enter, &e, sizeof e);
        memcpy(&enc_audit_leave, &x, sizeof x);
    }
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* What the statistics ask of the engine (core/observe/stats.h). */
static const enc_stats_engine stats_engine = {.time = enc_stats_time, .turned_back = enc_nodes_turned_back};

static void init_once_fn(void) {
    ENC_GUARDED {
        enc_stats_register(&stats_engine);
        enc_options_init();
        enc_log_threshold = enc_opt.log_level;
        enc_hot.trace = enc_opt.log_level >= ENC_LOG_TRACE;
        enc_report_init();
        if (enc_opt.print_config) enc_options_print();
        int active = enc_opt.enabled;
        if (!active) { /* ENCORE=0: a baseline that still counts the launches it passes through */
            __atomic_store_n(&enc_hot.counting_only, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&enc_hot.switched_off, 1, __ATOMIC_RELAXED);
        }
        if (active && enc_tools_step_aside()) active = 0;
        if (active) enc_nvtx_init();
        if (active && enc_driver_resolve() != 0) {
            active = 0;
            if (!enc_libcuda())
                enc_log(ENC_LOG_WARN, "no CUDA driver (libcuda.so.1) found; encore passes everything through");
        }
        find_audit_hooks();
        atexit(at_exit);
        pthread_atfork(NULL, NULL, after_fork_in_child);
        __atomic_store_n(&enc_hot.active, active, __ATOMIC_RELEASE);
        __atomic_store_n(&enc_hot.initialized, 1, __ATOMIC_RELEASE);
    }
}

void enc_core_init(void) { pthread_once(&init_once, init_once_fn); }
