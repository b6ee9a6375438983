/* encore: contexts that go away.
 *
 * cuCtxDestroy, cuDevicePrimaryCtxReset (cudaDeviceReset) and the release of
 * a primary context's last reference destroy everything in the context: its
 * streams (encore's capture stream, the side streams of per-thread states),
 * its events, its graphs. The primary context's handle stays the same, so a
 * handle encore keeps per context would be reused, stale, when the program
 * makes the context current again. Everything encore holds was issued before
 * the call (these are flush-everything calls); after it, encore forgets the
 * context's handles without a driver call and creates new ones when needed. */
#define _GNU_SOURCE
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

/* ---- the calling thread's current context, remembered -------------------------------------------- */

/* A launch to an explicit stream asks which context is current (launch.c): a stream of another
 * context must pass through. The answer only changes at the calls that set or destroy a current
 * context, which the hooks see (the policy table's ENC_F_CURRENT_CTX; flush-everything calls, unknown
 * entry points among them), so it is remembered per thread in between. */

void enc_core_current_ctx_changed(int every_thread) {
    enc_thr.cur_ctx_gen = 0;
    if (every_thread && __atomic_add_fetch(&enc_hot.ctx_gen, 1, __ATOMIC_RELEASE) == 0) /* wrapped: never 0 */
        __atomic_add_fetch(&enc_hot.ctx_gen, 1, __ATOMIC_RELEASE);
}

/* The primary context a reset or release on this thread is about to destroy. */
static __thread CUcontext going_ctx __attribute__((tls_model("initial-exec")));
static __thread int going_known __attribute__((tls_model("initial-exec")));

/* ctx NULL: a context encore cannot name went away. Only what is provably
 * its goes: the streams that learnt nothing yet (stream.c), and every
 * memory range (a range wrongly dropped only ends sequences); the graphs
 * and private streams of the contexts that encore knows stay. */
static void context_gone(CUcontext ctx) {
    enc_mem_context_gone(ctx);
    enc_prog_capture_context_gone(ctx);
    enc_learn_context_gone(ctx);
    enc_stream_context_gone(ctx);
}

void enc_core_context_destroyed(CUcontext ctx, CUresult r) {
    if (r == CUDA_SUCCESS && ctx) context_gone(ctx);
}

/* A device's primary context has no handle of its own in the API: retain it
 * (which does not create it while it is active) and release it at once. */
void enc_core_primary_context_before(CUdevice dev) {
    going_ctx = enc_context_known_primary(dev);
    going_known = going_ctx != NULL;
    if (!enc_drv.devicePrimaryCtxGetState || !enc_drv.devicePrimaryCtxRetain || !enc_drv.devicePrimaryCtxRelease ||
        !enc_own_calls_begin())
        return; /* the handle remembered, or none: only what is provably its is forgotten after it */
    ENC_GUARDED {
        unsigned flags;
        int active = 0;
        CUcontext c = NULL;
        if (enc_drv.devicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS) {
            if (!active) {
                going_ctx = NULL;
                going_known = 1; /* there is none: nothing of it to forget */
            } else if (enc_drv.devicePrimaryCtxRetain(&c, dev) == CUDA_SUCCESS) {
                enc_drv.devicePrimaryCtxRelease(dev);
                going_ctx = c;
                going_known = 1;
                enc_context_remember_primary(dev, c);
            }
        }
    }
    enc_own_calls_end();
}

void enc_core_primary_context_after(CUdevice dev, int reset, CUresult r) {
    if (r != CUDA_SUCCESS || (going_known && !going_ctx)) return;
    if (!reset && enc_drv.devicePrimaryCtxGetState && enc_own_calls_begin()) {
        unsigned flags;
        int active = 0;
        CUresult q = CUDA_SUCCESS;
        ENC_GUARDED q = enc_drv.devicePrimaryCtxGetState(dev, &flags, &active);
        enc_own_calls_end();
        if (q == CUDA_SUCCESS && active) return; /* not its last reference: the context lives on */
    }
    context_gone(going_known ? going_ctx : NULL);
}
