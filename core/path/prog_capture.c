/* encore: the program's own stream captures.
 *
 * While a capture of the program is live, in any mode, encore makes no
 * driver call of its own from any thread: no state set-up queries, no layout
 * queries, no capture, no stream or event creation, no graph destruction, no
 * release of held work. The driver forbids many calls during a global-mode
 * capture, from every thread, and invalidates the capture when one comes
 * (cuStreamGetFlags on the capturing stream did, on the GPU:
 * docs/driver-rules.md); legacy-stream work is refused while a blocking
 * stream captures. The program's launches pass straight through meanwhile.
 *
 * enc_hot.prog_capturing counts the captures that are live or beginning; the
 * launch path reads it with one relaxed load. Which streams capture is kept
 * in a small table, so that a capture ends with its stream's
 * cuStreamEndCapture (also when that answers _INVALIDATED or _UNJOINED: the
 * driver ends the capture then too), with cuStreamDestroy of its stream (the
 * driver ends it: the program abandoned it), or with its context.
 *
 * The race: thread A is inside encore, about to make a driver call of its
 * own, while thread B begins a global-mode capture. It is closed with the
 * locks encore's own calls are made under, not with a per-call flag: every
 * driver call of encore's own is made with a stream state's mutex held (or
 * own_mu, below: enc_own_calls_begin), and the decision to make it is
 * taken under that same hold, after reading enc_hot.prog_capturing (a held
 * launch is released only if it is held, and nothing starts holding while a
 * capture is live). At its cuStreamBeginCapture, B first raises
 * enc_hot.prog_capturing, then takes and releases states_mu and every state's
 * mutex in turn, issuing what each state holds (before the capture exists,
 * so that is allowed), then own_mu. Whoever takes one of those locks after B
 * released it sees the raised count (the mutex orders it); whoever held it
 * before B got it has finished its calls. So
 * when B's real cuStreamBeginCapture runs, no call of encore's own is in
 * flight and none can start until the count drops. This costs the hot path
 * nothing (no per-launch atomic read-modify-write, no fence): the price is
 * paid by the program's cuStreamBeginCapture, which takes every state's
 * mutex once. One exception is deliberate: the owner thread of a per-thread
 * default stream still joins the work released on its side stream
 * (cuStreamWaitEvent on a stream that does not capture: it is not an unsafe
 * call, and leaving it out would break the order of the program's work;
 * the stream cannot be capturing then, since every call of the program on
 * that stream, cuStreamBeginCapture and the fork's cuStreamWaitEvent
 * included, joins first). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>

#include "base/driver.h"
#include "base/guard.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/path/engine.h"
#include "core/path/path.h"
#include "core/state/gate.h"
#include "core/streams/rest.h"
#include "core/streams/streams.h"

typedef struct prog_capture {
    CUstream stream; /* the capturing stream (CU_STREAM_PER_THREAD for a thread's own) */
    pid_t tid;       /* per-thread default stream: its thread */
    CUcontext ctx;   /* current when it began (NULL: unknown) */
} prog_capture;

static pthread_mutex_t caps_mu = PTHREAD_MUTEX_INITIALIZER;
static prog_capture *caps;
static int ncaps, caps_cap;

/* The stream a call names, as a key: per-thread default streams by thread. */
static CUstream capture_key(CUstream stream, int per_thread, pid_t *tid) {
    *tid = 0;
    if (stream == CU_STREAM_PER_THREAD || (stream == NULL && per_thread)) {
        *tid = enc_tid();
        return CU_STREAM_PER_THREAD;
    }
    return stream;
}

/* ---- the count --------------------------------------------------------------- */

static void lower(int n) {
    if (n <= 0) return;
    int c = __atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED);
    while (c > 0 && !__atomic_compare_exchange_n(&enc_hot.prog_capturing, &c, c - n > 0 ? c - n : 0, 1,
                                                 __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {}
    if (c - n <= 0) enc_prog_capture_drain();
}

/* ---- the program's calls ------------------------------------------------------ */

void enc_core_capture_prepare(CUstream stream, int per_thread) {
    __atomic_fetch_add(&enc_hot.prog_capturing, 1, __ATOMIC_SEQ_CST);
    /* The capturing stream first (this joins a per-thread stream's released work). */
    enc_core_flush_stream(stream, per_thread, ENC_FLUSH_CAPTURE);
    /* Then the barrier (see the top of this file): every lock encore's own
     * calls are made under, each taken once, issuing what every stream holds:
     * held legacy-stream work released later would invalidate a global
     * capture, and a release from another stream's thread could not happen
     * any more. */
    enc_stream_pass_all(ENC_FLUSH_CAPTURE);
    enc_own_calls_barrier();
}

void enc_core_capture_begin(CUstream stream, int per_thread, CUresult r) {
    if (r != CUDA_SUCCESS) {
        lower(1);
        return;
    }
    prog_capture c = {.stream = NULL, .tid = 0, .ctx = NULL};
    c.stream = capture_key(stream, per_thread, &c.tid);
    ENC_GUARDED enc_drv.ctxGetCurrent(&c.ctx); /* a thread-local query, allowed during any capture */
    pthread_mutex_lock(&caps_mu);
    if (ncaps == caps_cap) {
        int cap = caps_cap ? 2 * caps_cap : 8;
        prog_capture *v = realloc(caps, (size_t)cap * sizeof *v);
        if (v) {
            caps = v;
            caps_cap = cap;
        }
    }
    /* Out of memory: not remembered, so encore stays off until the process
     * ends; safe, only slower. */
    if (ncaps < caps_cap) caps[ncaps++] = c;
    pthread_mutex_unlock(&caps_mu);
}

/* Forget the captures whose key matches; returns how many. With caps_mu held. */
static int forget_captures(CUstream key, pid_t tid, int all_of_stream) {
    int n = 0;
    for (int i = 0; i < ncaps; i++) {
        if (caps[i].stream != key || caps[i].tid != tid) continue;
        caps[i--] = caps[--ncaps];
        n++;
        if (!all_of_stream) break;
    }
    return n;
}

/* Did cuStreamEndCapture's answer end the stream's capture (or say there was
 * none)? Not for _UNMATCHED (the stream only joined a capture begun on
 * another one, which goes on), nor for an error that refused the call itself
 * (a bad argument; a sticky error, until the context is reset): then the
 * capture is taken as live still, the safe side. */
static int capture_ended(CUresult r) {
    switch (r) {
    case CUDA_SUCCESS:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD: /* ends it too (observed) */
    case CUDA_ERROR_ILLEGAL_STATE:               /* the stream was not capturing */
    case CUDA_ERROR_INVALID_HANDLE: /* no such stream any more */ return 1;
    default: return 0;
    }
}

void enc_core_capture_end(CUstream stream, int per_thread, CUresult r) {
    if (!capture_ended(r)) return;
    pid_t tid;
    CUstream key = capture_key(stream, per_thread, &tid);
    pthread_mutex_lock(&caps_mu);
    int n = forget_captures(key, tid, 0);
    pthread_mutex_unlock(&caps_mu);
    lower(n);
}

void enc_core_stream_destroyed(CUstream stream, int per_thread, CUresult r) {
    (void)per_thread;
    if (r != CUDA_SUCCESS || stream == NULL || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) return;
    pthread_mutex_lock(&caps_mu);
    int n = forget_captures(stream, 0, 1); /* the driver ends the capture of a destroyed stream */
    pthread_mutex_unlock(&caps_mu);
    lower(n);
}

void enc_prog_capture_context_gone(CUcontext ctx) {
    int n = 0;
    pthread_mutex_lock(&caps_mu);
    for (int i = 0; ctx && i < ncaps; i++)
        if (caps[i].ctx == ctx) {
            caps[i--] = caps[--ncaps];
            n++;
        }
    pthread_mutex_unlock(&caps_mu);
    enc_prog_capture_forget(ctx);
    lower(n);
}
