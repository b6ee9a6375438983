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
#include "core/stats.h"

/* 1 once start-up ran and encore is deferring; 0 for pass-through
 * (ENCORE=0, or after an internal failure). */
extern int enc_active;
extern int enc_initialized;

/* Start-up: options, report, driver look-ups. Idempotent and thread-safe. */
void enc_core_init(void);
static inline void enc_core_ensure_init(void) {
    if (__builtin_expect(!__atomic_load_n(&enc_initialized, __ATOMIC_ACQUIRE), 0)) enc_core_init();
}

/* A kernel launch from the program, in one of the two shapes. `real` is the
 * driver's function for the exact variant the program called. */
typedef struct enc_launch {
    int shape;      /* ENC_SHAPE_LK or ENC_SHAPE_EX */
    int per_thread; /* NULL stream means the per-thread default stream */
    void *real;
    CUfunction f;
    unsigned grid[3], block[3], smem;
    CUstream stream;
    void **params;
    void **extra;
    const CUlaunchConfig *config; /* ENC_SHAPE_EX */
} enc_launch;
enum { ENC_SHAPE_LK = 0, ENC_SHAPE_EX = 1 };

CUresult enc_core_launch(const enc_launch *l);

/* Flush points. `stream` may be ENC_ANY_STREAM-like placeholders handled by hooks. */
void enc_core_flush_stream(CUstream stream, int per_thread, enum enc_flush_reason why);
void enc_core_flush_all(enum enc_flush_reason why);

/* A launch the engine does not defer: count it, flush its stream (or, with
 * per_thread < 0, everything) so it runs in order. */
void enc_core_opaque_launch(CUstream stream, int per_thread);

/* Around a flush-everything call of the program: encore captures nothing
 * meanwhile (the driver fails context-wide calls while a stream captures). */
void enc_core_wide_call_begin(void);
void enc_core_wide_call_end(void);

/* Lifecycle events. */
void enc_core_capture_begin(CUstream stream, int per_thread, CUresult r);
void enc_core_capture_end(CUstream stream, int per_thread, CUresult r);
void enc_core_stream_destroy(CUstream stream, int per_thread);
/* A context goes away (destroy, primary-context release or reset): every
 * stream forgets what it learnt, and every parameter layout is dropped. */
void enc_core_module_unload(void);
/* A module or a library is unloaded (called before it is): only the layouts
 * and graphs of its functions are dropped. */
void enc_core_unload_module(CUmodule mod);
void enc_core_unload_library(CUlibrary lib);

/* Switch encore off for good: flush what is held, warn once, pass through. */
void enc_core_disable(const char *why);

/* Count one hook call of class `cls` (thread-local, no locked instruction). */
void enc_stats_count_call(int cls);

/* Test-only audit hooks (resolved from the process if a test preloads them). */
extern void (*enc_audit_enter)(void);
extern void (*enc_audit_leave)(void);

#endif
