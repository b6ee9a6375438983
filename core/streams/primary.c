/* encore: each device's primary context, remembered when a stream of it is
 * first asked (stream.c), for core/path/context.c: a reset or release
 * during the program's capture, when encore makes no driver call, still
 * names the context it destroys. */
#define _GNU_SOURCE
#include "base/driver.h"
#include "base/guard.h"
#include "core/streams/streams.h"

/* Each device's primary context, once looked up (its handle never changes):
 * a reset during the program's capture, when encore makes no driver call,
 * still names the context it destroys. A stream's context is looked up when
 * the stream is first asked (enc_context_note), so a context whose streams
 * learnt anything has its entry. */
#define MAX_DEVICES 64
static CUcontext primary_of[MAX_DEVICES]; /* atomic */

void enc_context_remember_primary(CUdevice dev, CUcontext c) {
    if (dev >= 0 && dev < MAX_DEVICES && c) __atomic_store_n(&primary_of[dev], c, __ATOMIC_RELEASE);
}

CUcontext enc_context_known_primary(CUdevice dev) {
    return dev >= 0 && dev < MAX_DEVICES ? __atomic_load_n(&primary_of[dev], __ATOMIC_ACQUIRE) : NULL;
}

/* With ctx current and own calls allowed: if it is its device's primary context, remember it. */
static void note_current(CUcontext ctx) {
    CUdevice dev;
    unsigned flags;
    int active = 0;
    CUcontext c = NULL;
    if (enc_drv.ctxGetDevice(&dev) != CUDA_SUCCESS || enc_context_known_primary(dev) == ctx) return;
    if (enc_drv.devicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active) return;
    if (enc_drv.devicePrimaryCtxRetain(&c, dev) != CUDA_SUCCESS) return;
    enc_drv.devicePrimaryCtxRelease(dev);
    if (c == ctx) enc_context_remember_primary(dev, c);
}

void enc_context_note(CUcontext ctx) {
    if (!ctx || !enc_drv.ctxGetDevice || !enc_drv.devicePrimaryCtxGetState || !enc_drv.devicePrimaryCtxRetain ||
        !enc_drv.devicePrimaryCtxRelease || !enc_drv.ctxGetCurrent || !enc_drv.ctxPushCurrent || !enc_drv.ctxPopCurrent)
        return;
    for (int d = 0; d < MAX_DEVICES; d++)
        if (__atomic_load_n(&primary_of[d], __ATOMIC_ACQUIRE) == ctx) return; /* known */
    ENC_GUARDED {
        CUcontext cur = NULL, popped;
        if (enc_drv.ctxGetCurrent(&cur) == CUDA_SUCCESS) {
            if (cur == ctx) {
                note_current(ctx);
            } else if (enc_drv.ctxPushCurrent(ctx) == CUDA_SUCCESS) {
                note_current(ctx);
                enc_drv.ctxPopCurrent(&popped);
            }
        }
    }
}
