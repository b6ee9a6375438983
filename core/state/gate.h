/* encore: what every floor of the engine reads and may call, defined at its
 * bottom (core/state/gate.c, core/state/failure.c): whether encore is on,
 * the test-only audit hooks, the stream-state table, the gate of encore's
 * own driver calls while the program captures, and the requests a failure
 * leaves for the entry points (core/path/requests.c acts on them).
 *
 * Floor rule (core/state/: these switches, the shared structures of
 * types.h, stream_state.h and calls.h, fingerprints): files here use only
 * core/observe/, policy/ and base/; nothing here calls a floor above
 * (scripts/check-includes), and no callback is registered here. */
#ifndef ENCORE_GATE_H
#define ENCORE_GATE_H

#include <cuda.h>
#include <sys/types.h>

#include "core/state/stream_state.h"

/* ---- the switches and counts every launch reads, in one cache line -------------------
 * A held launch reads most of these. Each in a cache line of its own, they
 * cost a cache miss each where the program's own work between two launches
 * evicts encore's data (docs/maintainers.md, "a held launch's cost"). All are
 * read and written with atomic builtins. */
typedef struct enc_hot_state {
    int initialized; /* start-up ran (core/path/init.c) */
    /* 1 once start-up ran and encore is deferring; 0 for pass-through (ENCORE=0, or after an
     * internal failure) */
    int active;
    /* Non-zero while encore is switched off (core/path/switch.c): launches pass through, counted.
     * By the program (encoreSetActive(0): ENC_PAUSED_BY_PROGRAM), by the self-check
     * (ENCORE_SELF_CHECK: a passive block, or stepped aside: ENC_PAUSED_BY_CHECK), or both. */
    int paused;
    /* ENCORE=0: nothing is deferred, but the hooks are still handed out (dlsym, cuGetProcAddress)
     * so that every launch is counted (switched off) */
    int counting_only;
    int nstates;           /* stream states in enc_states */
    int n_held;            /* states holding launches */
    int n_open;            /* states with an open sequence */
    int n_join_pending;    /* per-thread states released from another thread */
    int n_early;           /* states with an early_node (graph_end.c) */
    int prog_capturing;    /* the program's captures, live or beginning (below) */
    int disable_requested; /* failure.c */
    /* moves when stream attributes changed somewhere (cuStreamSetAttribute, cuStreamCopyAttributes:
     * core/graphs/issue.c) */
    uint32_t attr_gen;
    /* moves at calls that set or destroy a current context (core/path/context.c); never 0: a
     * thread's zeroed cache starts out of date */
    uint32_t ctx_gen;
    /* moves when the program changes a function attribute (core/path/validate.c); starts at 1:
     * layouts start at 0, their limits read at the first held launch */
    unsigned func_attr_gen;
    int trace; /* ENCORE_LOG_LEVEL=trace: each launch and each sequence end is logged (sequence.c) */
    /* 1 once every entry point with a launch's signature is classed a launch (interpose/hooks.c):
     * their wrappers then read this line, which a launch reads anyway, not the class table */
    int launch_classed;
    /* ---- read only when encore is off, or at flush points: past the first 64 bytes ---- */
    /* encore switched itself off (enc_core_disable): launches are still counted (seen, eager), so
     * that the report accounts for every one */
    int switched_off;
    /* a process forked from one that used the driver (core/path/init.c): every call passes
     * straight through, no hook runs, no lock is taken */
    int forked_child;
    int n_pending_err; /* states with a pending error, and the orphaned one (failure.c) */
} __attribute__((aligned(64))) enc_hot_state;
extern enc_hot_state enc_hot;

/* Test-only audit hooks (resolved from the process if a test preloads them: core/path/init.c). */
extern void (*enc_audit_enter)(void);
extern void (*enc_audit_leave)(void);
/* A driver call that issues GPU work, bracketed by the test-only audit hooks. */
#define AUDITED(call)                           \
    ({                                          \
        if (enc_audit_enter) enc_audit_enter(); \
        CUresult r__ = (call);                  \
        if (enc_audit_leave) enc_audit_leave(); \
        r__;                                    \
    })

/* ---- the stream-state table (core/streams/stream.c fills it) ---------------------- */

extern enc_stream_state *enc_states[ENC_MAX_STATES];

pid_t enc_tid(void);
void enc_tid_forget(void); /* a forked child: this thread's cached id is its parent's */

/* ---- the program's own captures: the gate (core/path/prog_capture.c) -------------- */

/* enc_hot.prog_capturing, the program's captures that are live or beginning:
 * while it is not 0 encore makes no driver call of its own, from any thread.
 * The rule that makes this race-free (prog_capture.c): every driver call of
 * encore's own is made with a stream state's mutex held, or between
 * enc_own_calls_begin and enc_own_calls_end, and is decided on after reading
 * this count under that same hold. */
/* For encore's own driver calls outside a stream state's mutex: 1 (a lock
 * held: end with enc_own_calls_end) if they may be made now, 0 if not. */
int enc_own_calls_begin(void);
void enc_own_calls_end(void);
/* The program's capture begins: own_mu taken and released once (the barrier, core/path/prog_capture.c). */
void enc_own_calls_barrier(void);
/* While a capture is live, a graph's (of ctx) driver objects are destroyed
 * later: 1 if it took them (the caller forgets the handles), 0 if the caller
 * destroys them now. */
int enc_prog_capture_defer_destroy(CUgraphExec exec, CUgraph graph, CUcontext ctx);
/* Destroy the graphs deferred while a capture was live, unless one is live again (the count dropped to 0). */
void enc_prog_capture_drain(void);
/* ctx went away (NULL: a context not named: nothing): what was deferred of it is forgotten. */
void enc_prog_capture_forget(CUcontext ctx);

/* ---- failure.c: held launches that fail when released ----------------------------- */

/* A sticky error (base/driver.h) was seen: switch off, but not here (a state
 * lock may be held): enc_core_act_on_requests does, after unlocking. */
void enc_request_disable(CUresult r);
void enc_request_disable_why(const char *why); /* idem, for another reason (a string literal) */
/* Issuing released launch rec failed with r (with st->mu held): sticky, a
 * request to switch off; else st's pending error. The sequence is not learnt. */
void enc_note_release_failure(enc_stream_state *st, const enc_rec *rec, CUresult r);
/* st's stream goes away (with st->mu held): its pending error is kept for
 * the next flush-everything call. */
void enc_pending_err_orphan(enc_stream_state *st);
/* The reason a switch-off was requested: a string literal, or NULL and *err the sticky error. */
const char *enc_disable_reason(CUresult *err);
/* Take (clear) st's pending error (with st->mu taken here), or the orphaned one; CUDA_SUCCESS if none. */
CUresult enc_pending_err_take(enc_stream_state *st);
CUresult enc_pending_err_take_orphan(void);

#endif
