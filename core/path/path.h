/* encore: what the files of the path floor (core/path/) offer each other;
 * what they offer the hooks is core/path/engine.h.
 *
 * Floor rule: the path is the top of the engine: it uses every floor below
 * (core/streams/, core/graphs/, core/state/, core/observe/) and nothing
 * below it names it (scripts/check-includes). It registers the statistics'
 * one callback (core/observe/stats_engine.h enc_stats_engine, in init.c). */
#ifndef ENCORE_PATH_H
#define ENCORE_PATH_H

#include <cuda.h>

#include "core/state/stream_state.h"

/* ---- context.c: the calling thread's current context, remembered ---------------------------------- */

/* What cuCtxGetCurrent last answered on this thread, valid while `gen` is enc_hot.ctx_gen: the hooks forget
 * it (enc_core_current_ctx_changed) at every call that may change the thread's current context. */

/* ---- validate.c: what a held launch must keep; function attribute changes -------- */

/* A device's launch limits, read once per device. */
typedef struct enc_dev_limits {
    int ok; /* atomic: the fields below are read */
    CUdevice dev;
    unsigned max_grid[3], max_block[3], max_threads;
} __attribute__((aligned(64))) enc_dev_limits; /* one cache line a held launch reads, not two */

/* Why the driver might refuse launch r on st's stream now (its function's and device's limits,
 * or they cannot be read), or NULL: a refused launch is issued eagerly, after what is held. */
const char *enc_launch_refusal(enc_stream_state *st, const enc_rec *r);
/* The check's usual case inline: the device's limits read, the function's read at the
 * current generation, and the launch within all of them. Anything else: enc_launch_refusal. */
static inline __attribute__((always_inline)) int enc_launch_valid(enc_stream_state *st, const enc_rec *r) {
    const enc_dev_limits *d = st->limits;
    const enc_layout *L = r->L;
    if (__builtin_expect(d != NULL && !L->is_op, 1)) {
        /* 0 wraps to UINT_MAX: a zero dimension fails too */
        uint64_t threads = (uint64_t)r->block[0] * r->block[1] * r->block[2];
        if (r->grid[0] - 1u < d->max_grid[0] && r->grid[1] - 1u < d->max_grid[1] && r->grid[2] - 1u < d->max_grid[2] &&
            r->block[0] - 1u < d->max_block[0] && r->block[1] - 1u < d->max_block[1] &&
            r->block[2] - 1u < d->max_block[2] && threads <= d->max_threads &&
            !__atomic_load_n(&L->untrusted, __ATOMIC_RELAXED) &&
            __atomic_load_n(&L->lim_gen, __ATOMIC_ACQUIRE) ==
                __atomic_load_n(&enc_hot.func_attr_gen, __ATOMIC_ACQUIRE) &&
            (!L->is_kernel || __atomic_load_n(&L->lim_dev, __ATOMIC_RELAXED) == (int)d->dev) &&
            threads <= (uint64_t)__atomic_load_n(&L->max_threads, __ATOMIC_RELAXED) &&
            r->smem <= (unsigned)__atomic_load_n(&L->max_dyn_smem, __ATOMIC_RELAXED))
            return 1;
    }
    return !enc_launch_refusal(st, r);
}

/* ---- launch.c: the launch path, flush points, lifecycle events ------------------ */

/* (what it offers is the engine's interface: core/path/engine.h), and to ops.c: */
/* Issue what other streams hold that legacy-stream order puts before work on st. */
void enc_launch_legacy_order(enc_stream_state *st);
/* The launch to the driver as the program made it (a resting stream, encore switched off):
 * one in ENC_SAMPLE_EVERY of a thread's timed, for the time estimate (launch.c). */
CUresult enc_core_call_sampled(const enc_launch *l);
/* The pending record begins a graph's sequence: hold it (with st->mu held); 0 if not. */
int enc_launch_start_holding(enc_stream_state *st);

/* ---- prog_capture.c: the program's own captures (the gate: core/state/gate.h) ---- */

/* ctx went away (NULL: one not named): the captures in it ended with it. */
void enc_prog_capture_context_gone(CUcontext ctx);

/* ---- deadline.c: the flush-deadline thread --------------------------------------- */

void enc_deadline_start(void); /* once; switches encore off if the thread cannot start */

#endif
