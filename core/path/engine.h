/* encore: the capture-and-replay engine, as the hooks see it.
 *
 * The hooks (interpose/) call these; the engine consults policy/ and calls
 * the real driver through base/driver.h. Nothing here calls back into the
 * hooks. */
#ifndef ENCORE_ENGINE_H
#define ENCORE_ENGINE_H

#include <cuda.h>
#include <stdint.h>

#include "base/guard.h"
#include "core/state/calls.h"
#include "core/state/gate.h"
#include "core/observe/stats.h"

/* enc_hot.paused (core/state/gate.h): who switched encore off. */
#define ENC_PAUSED_BY_PROGRAM 1
#define ENC_PAUSED_BY_CHECK 2
/* The pseudo entry point "encoreSetActive" (cuGetProcAddress): 0 issues everything held and passes
 * launches through from then on, 1 resumes learning and replay (core/path/switch.c). */
CUresult enc_core_set_active(int active);
/* The self-check's own switch (core/path/selfcheck.c): 1 issues everything held and passes
 * launches through, 0 resumes; from inside a launch (the guard is set), on the thread that
 * waits for the GPU. */
void enc_core_pause_for_check(int pause);

/* Start-up: options, report, driver look-ups. Idempotent and thread-safe. */
void enc_core_init(void);
/* cuInit returned r != CUDA_SUCCESS: one warning when that means no usable device or driver. */
void enc_core_driver_init_failed(CUresult r);
static inline void enc_core_ensure_init(void) {
    if (__builtin_expect(!__atomic_load_n(&enc_hot.initialized, __ATOMIC_ACQUIRE), 0)) enc_core_init();
}

CUresult enc_core_launch(const enc_launch *l);
/* A launch to `stream` (an explicit stream) that rests (core/streams/rest.c), with
 * nothing held anywhere: counted, and 1 returned: the hook calls the driver
 * itself, then enc_core_launch_failed if the driver refused. 0: the full
 * path (enc_core_launch). One thread-local compare for other launches. */
int enc_core_launch_rests(CUstream stream);
void enc_core_launch_failed(CUresult r);
/* ENCORE=0 from the start: the launch is counted (seen, eager), as every
 * launch the program makes, and 1 returned: the hook calls the driver itself,
 * before it builds anything. The cheapest a preloaded encore can cost. 0
 * (the full path, enc_core_launch) before start-up, for a thread's first
 * count, and whenever encore is on. */
static inline int enc_core_launch_passes(void) {
    if (__builtin_expect(!__atomic_load_n(&enc_hot.counting_only, __ATOMIC_RELAXED), 1)) return 0;
    enc_tstats *t = enc_thr.tstats;
    if (!t || !__atomic_load_n(&enc_stats_touched_flag, __ATOMIC_RELAXED)) return 0;
    __atomic_store_n(&t->calls[ENC_CLASS_LAUNCH], t->calls[ENC_CLASS_LAUNCH] + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->launches_seen, t->launches_seen + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->launches_eager, t->launches_eager + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->eager_by[ENC_EAGER_PASSIVE], t->eager_by[ENC_EAGER_PASSIVE] + 1, __ATOMIC_RELAXED);
    return 1;
}
/* A launch while switched off (enc_hot.paused): issued (one in ENC_SAMPLE_EVERY of a thread's timed) and counted. */
CUresult enc_core_launch_paused(const enc_launch *l);
/* Switched off, before a launch or op passes through: what is held or to be joined goes first. */
void enc_core_issue_held_while_off(void);

/* The op on `stream` (a NULL stream: per_thread says which). Returns 2 if
 * the engine holds it (the wrapper returns CUDA_SUCCESS without calling the
 * driver), 1 if the wrapper calls the driver now (what was held is issued;
 * the op is part of the open sequence: enc_core_op_failed if the call
 * fails), 0 if it calls the driver as after a flush of the stream. */
int enc_core_op(const enc_op *op, CUstream stream, int per_thread);
void enc_core_op_failed(CUstream stream, int per_thread);
/* Calls that name an event: what holds a record of it, or a wait on it, is
 * issued first (core/graphs/evtab.c). */
void enc_core_event_observe(CUevent ev);
/* A call that may name any event (a program's graph launch): every record and wait held is issued first. */
void enc_core_event_observe_all(void);
extern int enc_n_ev_holders; /* events some stream holds a record of or a wait on; atomic */
void enc_core_event_created(CUevent ev, unsigned flags);
void enc_core_event_destroying(CUevent ev); /* before the driver's destroy: no graph names it afterwards */
void enc_core_event_destroyed(CUevent ev);
/* The program's own memory: device allocations and page-locked host ranges
 * (a copy between other memory is pageable and ends the sequence). */
/* (enum enc_mem_kind: core/state/calls.h) */
void enc_core_mem_added(uintptr_t p, size_t n, int kind);
void enc_core_mem_removed(uintptr_t p);
/* A program's allocation failed with CUDA_ERROR_OUT_OF_MEMORY: encore frees
 * its graphs; 1 if it freed any (the hook then makes the call again, once). */
int enc_core_out_of_memory(void);

/* Flush points. `stream` may be ENC_ANY_STREAM-like placeholders handled by hooks. */
void enc_core_flush_stream(CUstream stream, int per_thread, enum enc_flush_reason why);
void enc_core_flush_all(enum enc_flush_reason why);
/* After the program launched a graph of its own on the stream (core/streams/rest.c). */
void enc_core_program_graph(CUstream stream, int per_thread);
/* Switched off: still order this thread's per-thread streams after launches
 * encore released from other threads before (cheap when there are none). */
void enc_core_join_pending(void);

/* A launch the engine does not defer: count it, flush its stream (or, with
 * per_thread < 0, everything) so it runs in order. */
void enc_core_opaque_launch(CUstream stream, int per_thread);

/* Around a flush-everything call of the program: encore captures nothing
 * meanwhile (the driver fails context-wide calls while a stream captures). */
void enc_core_wide_call_begin(void);
void enc_core_wide_call_end(void);

/* Around the driver's call of an entry point that blocks the host until the
 * GPU gets there (ENC_F_WAITS: a synchronize): the wait is timed, for the
 * report (sync_wait_ns, sync_waits). */
void enc_core_wait_begin(void);
void enc_core_wait_end(void);
/* A query of the GPU's progress (ENC_F_POLLS): a thread that polls instead of waiting ends its steps there. */
void enc_core_polled(void);

/* Lifecycle events. */
/* Before the program's cuStreamBeginCapture: encore stops making driver
 * calls of its own and issues everything it holds (core/path/prog_capture.c). */
void enc_core_capture_prepare(CUstream stream, int per_thread);
void enc_core_capture_begin(CUstream stream, int per_thread, CUresult r);
void enc_core_capture_end(CUstream stream, int per_thread, CUresult r);
void enc_core_stream_destroy(CUstream stream, int per_thread);
/* After cuStreamDestroy: a capture of that stream ended with it. */
void enc_core_stream_destroyed(CUstream stream, int per_thread, CUresult r);
/* A context was destroyed (core/path/context.c): forget the handles encore kept in it. */
void enc_core_context_destroyed(CUcontext ctx, CUresult r);
/* A call that may change the calling thread's current context (or, every_thread, destroy a context
 * current anywhere) is about to run: the remembered current context (context.c) is forgotten. */
void enc_core_current_ctx_changed(int every_thread);
/* Around cuDevicePrimaryCtxReset (reset) and cuDevicePrimaryCtxRelease. */
void enc_core_primary_context_before(CUdevice dev);
void enc_core_primary_context_after(CUdevice dev, int reset, CUresult r);
/* After the program's cuInit: encore's exit flush is registered now, so that
 * it runs before the driver's own teardown (core/path/init.c). */
void enc_core_driver_initialized(CUresult r);
/* A stream's attributes changed (after the call): streams check theirs again at their next launch. */
void enc_core_stream_attrs_changed(void);
/* A context goes away (destroy, primary-context release or reset): every
 * stream forgets what it learnt, and every parameter layout is dropped. */
void enc_core_module_unload(void);
/* A module or a library is unloaded (called before it is): only the layouts
 * and graphs of its functions are dropped. */
void enc_core_unload_module(CUmodule mod);
void enc_core_unload_library(CUlibrary lib);

/* Switch encore off for good: flush what is held, warn once, pass through.
 * Never with a state lock held: code that may hold one requests it instead
 * (core/state/failure.c), and these entry points act on the request. */
void enc_core_disable(const char *why);
/* The result of a driver call the program made: a sticky error (base/driver.h)
 * means the context runs no more work, and encore holds nothing more. */
void enc_core_note_result(CUresult r);
/* Switch off if that was requested; with no lock of encore's held. */
void enc_core_act_on_requests(void);

/* A launch held earlier failed when it was released (one validation could not
 * foresee): the next call that observes its stream returns that error instead
 * of CUDA_SUCCESS, as it would an asynchronous error. Takes (clears) the
 * pending error of that stream, or with `any` of any stream; CUDA_SUCCESS if
 * none. */
CUresult enc_core_take_error(CUstream stream, int per_thread, int any);

/* cuFuncSetAttribute, cuKernelSetAttribute, cuFuncSetCacheConfig and
 * cuKernelSetCacheConfig. A call that changes nothing (the value is the one
 * the function has) changes nothing here either; one that changes it issues
 * what is held first, and after it, the function's cached limits are read
 * again and the graphs with a launch of it are dropped (core/path/validate.c). */
typedef struct enc_func_set {
    void *handle; /* the CUfunction, or CUkernel */
    int kernel;   /* handle is a CUkernel (the cuKernelSet... calls) */
    int cache;    /* a cache configuration, else an attribute */
    int attrib;   /* CUfunction_attribute */
    int value;
    CUdevice dev; /* the cuKernelSet... calls: the device */
} enc_func_set;
void enc_core_func_set_begin(const enc_func_set *c); /* NULL: a call on a function not known */
void enc_core_func_set_end(CUresult r);

/* Count one hook call of class `cls` (thread-local, no locked instruction). */
void enc_stats_count_call(int cls);

/* Test-only audit hooks (resolved from the process if a test preloads them). */
extern void (*enc_audit_enter)(void);
extern void (*enc_audit_leave)(void);

#endif
