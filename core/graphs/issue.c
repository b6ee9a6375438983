/* encore: issuing recorded work on a program's stream: its context made
 * current, a per-thread default stream's side stream, the stream attributes
 * a graph launch does not take from the stream. Used by replay (replay.c),
 * capture (learn.c) and the path (launch.c, ops.c). */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/nodes.h"
#include "core/state/gate.h"

/* ---- issuing ---------------------------------------------------------------------- */

static CUstream issue_handle(const enc_stream_state *st) {
    if (st->kind == ENC_STREAM_LEGACY) return CU_STREAM_LEGACY;
    if (st->kind == ENC_STREAM_PER_THREAD) return CU_STREAM_PER_THREAD;
    return st->handle;
}

int enc_stream_enter_ctx(const enc_stream_state *st) {
    CUcontext cur = NULL;
    if (!st->ctx || enc_drv.ctxGetCurrent(&cur) != CUDA_SUCCESS || cur == st->ctx) return 0;
    return enc_drv.ctxPushCurrent(st->ctx) == CUDA_SUCCESS;
}

void enc_stream_leave_ctx(int pushed) {
    if (pushed) {
        CUcontext c;
        enc_drv.ctxPopCurrent(&c);
    }
}

CUstream enc_stream_begin_issue(enc_stream_state *st, int *pushed, int *side) {
    *pushed = enc_stream_enter_ctx(st);
    *side = st->kind == ENC_STREAM_PER_THREAD && enc_tid() != st->owner;
    if (!*side) return issue_handle(st);
    enc_drv.streamWaitEvent(st->side, st->ev_start, 0);
    return st->side;
}

void enc_stream_end_issue(enc_stream_state *st, int pushed, int side) {
    if (side && enc_drv.eventRecord(st->ev_done, st->side) == CUDA_SUCCESS && !st->join_pending) {
        __atomic_store_n(&st->join_pending, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&enc_hot.n_join_pending, 1, __ATOMIC_RELAXED);
    }
    enc_stream_leave_ctx(pushed);
}

void enc_stream_join_side(enc_stream_state *st) {
    if (__builtin_expect(st->join_pending, 0) && enc_tid() == st->owner) {
        enc_drv.streamWaitEvent(CU_STREAM_PER_THREAD, st->ev_done, 0);
        __atomic_store_n(&st->join_pending, 0, __ATOMIC_RELAXED);
        __atomic_fetch_sub(&enc_hot.n_join_pending, 1, __ATOMIC_RELAXED);
    }
}

/* Any call of this thread may order work after its per-thread streams (a
 * blocking copy or memset runs on the per-thread stream; a flush-everything
 * call may observe it): their released launches come first. Another
 * thread's calls need no join: they cannot name this thread's per-thread
 * stream, legacy-stream work waits for the side stream (a blocking stream),
 * and context-wide synchronisation covers it (it is in the context). */
void enc_stream_join_own_sides(void) {
    if (__builtin_expect(__atomic_load_n(&enc_hot.n_join_pending, __ATOMIC_RELAXED) == 0, 1)) return;
    pid_t me = enc_tid();
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        if (!__atomic_load_n(&st->join_pending, __ATOMIC_RELAXED)) continue;
        enc_mutex_lock(&st->mu);
        if (st->kind == ENC_STREAM_PER_THREAD && st->owner == me && st->join_pending) {
            int pushed = enc_stream_enter_ctx(st); /* CU_STREAM_PER_THREAD names the current context's */
            enc_stream_join_side(st);
            enc_stream_leave_ctx(pushed);
        }
        enc_mutex_unlock(&st->mu);
    }
}

int enc_stream_hold_ok(enc_stream_state *st) {
    if (!st->ev_start && (enc_drv.eventCreate(&st->ev_start, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
                          enc_drv.eventCreate(&st->ev_done, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS ||
                          enc_drv.streamCreate(&st->side, CU_STREAM_DEFAULT) != CUDA_SUCCESS))
        return 0;
    return enc_drv.eventRecord(st->ev_start, CU_STREAM_PER_THREAD) == CUDA_SUCCESS;
}

/* ---- stream attributes (enc_hot.attr_gen: core/state/gate.h) ------------------------ */

/* Do streams a and b answer the same for attribute id? Both refusing it
 * (not a stream attribute, or not on this driver) counts as the same. */
static int same_attr(CUstream a, CUstream b, int id) {
    CUstreamAttrValue va, vb;
    memset(&va, 0, sizeof va);
    memset(&vb, 0, sizeof vb);
    CUresult ra = enc_drv.streamGetAttribute(a, (CUstreamAttrID)id, &va);
    CUresult rb = enc_drv.streamGetAttribute(b, (CUstreamAttrID)id, &vb);
    if (ra != CUDA_SUCCESS || rb != CUDA_SUCCESS) return ra == rb;
    if (id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW && va.accessPolicyWindow.num_bytes == 0 &&
        vb.accessPolicyWindow.num_bytes == 0)
        return 1; /* no window either way */
    return memcmp(&va, &vb, sizeof va) == 0;
}

/* A graph's kernel nodes keep the attributes of the stream they were
 * captured on (encore's), whatever stream the graph is launched into; only
 * the launch stream's priority applies to them (without node priorities,
 * learn.c). So a stream whose attributes differ from the capture stream's in
 * any other (an access-policy window, a memory-sync domain or its map, and
 * every id this build does not know: default-deny) runs its launches
 * eagerly. The synchronization policy is left out: it changes how the host
 * waits, not how kernels run. The priority counts on a per-thread stream
 * (launches released from another thread run on encore's side stream) and on
 * a stream with graphs of mixed node priorities (st->mixed_prio). */
void enc_stream_check_attrs(enc_stream_state *st) {
    uint32_t gen = __atomic_load_n(&enc_hot.attr_gen, __ATOMIC_ACQUIRE);
    int like = 0;
    if (enc_drv.streamGetAttribute) {
        int pushed = enc_stream_enter_ctx(st);
        CUstream ref = enc_learn_capture_stream(st->ctx);
        like = ref != NULL;
        for (int id = 1; like && id < 32; id++) {
            if (id == CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY ||
                (id == CU_LAUNCH_ATTRIBUTE_PRIORITY && st->kind != ENC_STREAM_PER_THREAD && !st->mixed_prio))
                continue;
            like = same_attr(issue_handle(st), ref, id);
        }
        enc_stream_leave_ctx(pushed);
    }
    if (st->attrs_differ != !like)
        ENC_DEBUG("a stream's attributes %s encore's capture stream's: its launches %s", like ? "match" : "differ from",
                  like ? "are held and replayed again" : "run eagerly");
    st->attrs_differ = !like;
    st->attr_gen = gen;
}

int enc_stream_priority_like_capture(enc_stream_state *st) {
    int like = 0;
    ENC_GUARDED {
        int pushed = enc_stream_enter_ctx(st);
        CUstream ref = enc_learn_capture_stream(st->ctx);
        like = ref && enc_drv.streamGetAttribute && same_attr(issue_handle(st), ref, CU_LAUNCH_ATTRIBUTE_PRIORITY);
        enc_stream_leave_ctx(pushed);
    }
    return like;
}

CUresult enc_stream_issue_rec(const enc_rec *r, const unsigned char *arena, CUstream stream) {
    void *ptrs[ENC_MAX_PARAMS];
    const enc_layout *L = r->L;
    if (L->is_op) return enc_op_issue(r, arena, stream, 0, NULL);
    if (r->nattrs == 0)
        return AUDITED(enc_drv.launchKernel(r->f, r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1],
                                            r->block[2], r->smem, stream, enc_rec_params(r, arena, ptrs), NULL));
    return enc_stream_issue_rec_with(r, arena, stream, (CUlaunchAttribute *)(void *)(arena + r->attr_off), r->nattrs);
}

CUresult enc_stream_issue_rec_with(const enc_rec *r, const unsigned char *arena, CUstream stream,
                                   CUlaunchAttribute *attrs, unsigned nattrs) {
    void *ptrs[ENC_MAX_PARAMS];
    void **params = enc_rec_params(r, arena, ptrs);
    CUlaunchConfig cfg = {.gridDimX = r->grid[0],
                          .gridDimY = r->grid[1],
                          .gridDimZ = r->grid[2],
                          .blockDimX = r->block[0],
                          .blockDimY = r->block[1],
                          .blockDimZ = r->block[2],
                          .sharedMemBytes = r->smem,
                          .hStream = stream,
                          .attrs = attrs,
                          .numAttrs = nattrs};
    return AUDITED(enc_drv.launchKernelEx(&cfg, r->f, params, NULL));
}
