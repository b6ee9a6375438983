/* Simulated CUDA driver: several devices in one process (issue 15).
 *
 * SIMCUDA_DEVICES=N (1 to SIM_MAX_DEVICES, default 1) devices, each with its
 * own primary context (sim_core.c keeps one per device), its legacy stream,
 * its streams and events. All memory is host memory underneath, so every
 * device can read every other's: peer access only changes what the calls
 * below answer. The rules modelled, from the CUDA programming guide's
 * "Stream and Event Behavior" of multi-device systems (not yet recorded on a
 * GPU by sim_probe; scripts/gpu/multi's probe prints the real answers):
 *   - a launch of a CUfunction to a stream of another device than the
 *     current context's fails (CUDA_ERROR_INVALID_HANDLE, "invalid resource
 *     handle"); so does a launch of a function whose module was loaded in
 *     another device's context (sim_launch_ctx_check, called by the launch
 *     entry points of sim_module.c); a context-independent CUkernel (what
 *     the runtime launches) runs in its stream's context instead: on two
 *     H100s (2026-11-25) the runtime's launch to another device's stream
 *     returned cudaSuccess;
 *   - a copy may be issued to a stream of any device (cuMemcpyAsync between
 *     devices, cuMemcpyPeerAsync): it runs in that stream's order;
 *   - cuEventRecord of an event of one device on a stream of another fails
 *     (CUDA_ERROR_INVALID_HANDLE, sim_core.c's event_record);
 *   - cuStreamWaitEvent may make a stream of one device wait for an event of
 *     another (sim_core.c's stream_wait_event needs nothing more);
 *   - cuEventSynchronize/Query work whatever the current device;
 *   - cuMemcpyPeer (synchronous) is ordered after all work pending in the
 *     current context and in both the source's and the destination's
 *     contexts, and returns when the copy is done.
 * Peer access: cuDeviceCanAccessPeer answers 1 between two different
 * devices; cuCtxEnablePeerAccess/DisablePeerAccess keep, per (context,
 * peer context), whether it was enabled, and answer the driver's errors. */
#include "sim_internal.h"

#include <stdlib.h>
#include <string.h>

#include <cudaTypedefs.h>

static int g_ndev = -1;

int sim_device_count(void) {
    int n = __atomic_load_n(&g_ndev, __ATOMIC_ACQUIRE);
    if (n >= 1) return n;
    const char *v = getenv("SIMCUDA_DEVICES");
    n = v && *v ? atoi(v) : 1;
    if (n < 1) n = 1;
    if (n > SIM_MAX_DEVICES) n = SIM_MAX_DEVICES;
    __atomic_store_n(&g_ndev, n, __ATOMIC_RELEASE);
    return n;
}

static bool dev_ok(CUdevice d) { return d >= 0 && d < sim_device_count(); }

static sim_ctx *ctx_of(CUcontext h) {
    sim_ctx *c = sim_reg_get(h, T_CTX);
    return c && !c->dead ? c : NULL;
}

CUresult sim_launch_ctx_check(const sim_ctx *cur, const sim_stream *s, const sim_ctx *fctx) {
    /* No current context (a thread that never set one): the stream's own,
     * as before several devices were modelled. */
    if (cur && cur->dev != s->ctx->dev) return CUDA_ERROR_INVALID_HANDLE;
    if (fctx && fctx->dev != s->ctx->dev) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

/* ---- peer access --------------------------------------------------------------- */

typedef struct peer_ent { const sim_ctx *ctx, *peer; } peer_ent;
static pthread_mutex_t g_peer_mu = PTHREAD_MUTEX_INITIALIZER;
static peer_ent g_peers[SIM_MAX_DEVICES * SIM_MAX_DEVICES * 4];
static int g_npeers;

static int peer_find_locked(const sim_ctx *c, const sim_ctx *p) {
    for (int i = 0; i < g_npeers; i++)
        if (g_peers[i].ctx == c && g_peers[i].peer == p) return i;
    return -1;
}

CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(dev) || !dev_ok(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
    *canAccessPeer = dev != peerDev;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice, CUdevice dstDevice) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    if (!dev_ok(srcDevice) || !dev_ok(dstDevice) || srcDevice == dstDevice) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK: *value = 0; break;
    case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED: *value = 1; break;
    case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED: *value = 1; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
    sim_ctx *cur;
    CUresult rc = sim_require_ctx(&cur);
    if (rc) return rc;
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    sim_ctx *p = ctx_of(peerContext);
    if (!p) return CUDA_ERROR_INVALID_CONTEXT;
    if (p->dev == cur->dev) return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_peer_mu);
    if (peer_find_locked(cur, p) >= 0) rc = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    else if (g_npeers == (int)(sizeof g_peers / sizeof g_peers[0])) rc = CUDA_ERROR_TOO_MANY_PEERS;
    else g_peers[g_npeers++] = (peer_ent){cur, p};
    pthread_mutex_unlock(&g_peer_mu);
    return rc;
}

CUresult cuCtxDisablePeerAccess(CUcontext peerContext) {
    sim_ctx *cur;
    CUresult rc = sim_require_ctx(&cur);
    if (rc) return rc;
    sim_ctx *p = ctx_of(peerContext);
    if (!p) return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&g_peer_mu);
    int i = peer_find_locked(cur, p);
    if (i < 0) rc = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    else g_peers[i] = g_peers[--g_npeers];
    pthread_mutex_unlock(&g_peer_mu);
    return rc;
}

/* ---- peer copies ---------------------------------------------------------------- */

static CUresult peer_args(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, sim_ctx **d,
                          sim_ctx **s) {
    *d = ctx_of(dctx);
    *s = ctx_of(sctx);
    if (!*d || !*s) return CUDA_ERROR_INVALID_CONTEXT;
    if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = sim_ctx_sticky(*d);
    return rc ? rc : sim_ctx_sticky(*s);
}

static CUresult memcpy_peer_async(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n,
                                  CUstream h, int ptds) {
    sim_stream *st;
    CUresult rc = sim_stream_resolve(h, ptds, &st);
    if (rc) return rc;
    sim_ctx *d, *s;
    if ((rc = peer_args(dst, dctx, src, sctx, &d, &s))) return rc;
    if (n == 0) return CUDA_SUCCESS;
    sim_work w = {.kind = W_MEMCPY};
    w.u.cpy.dst = (void *)(uintptr_t)dst;
    w.u.cpy.src = (const void *)(uintptr_t)src;
    w.u.cpy.n = n;
    return sim_enqueue(st, &w, NULL); /* captured when st captures */
}
CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                           size_t ByteCount, CUstream hStream) {
    return memcpy_peer_async(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 0);
}
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                CUcontext srcContext, size_t ByteCount, CUstream hStream) {
    return memcpy_peer_async(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1);
}

/* With g_mu held: c's streams' pending work, as dependencies. */
static int deps_of_ctx_locked(const sim_ctx *c, sim_dep *v, int n, int cap) {
    for (int i = 0; i < c->nstreams && n < cap; i++) v[n++] = (sim_dep){c->streams[i], c->streams[i]->enqueued};
    return n;
}

static CUresult memcpy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, int ptds) {
    sim_ctx *cur;
    CUresult rc = sim_require_ctx(&cur);
    if (rc) return rc;
    sim_ctx *d, *s;
    if ((rc = peer_args(dst, dctx, src, sctx, &d, &s))) return rc;
    if (n == 0) return CUDA_SUCCESS;
    if ((rc = sim_unsafe_call_check())) return rc;
    sim_stream *st;
    if ((rc = sim_stream_resolve(NULL, ptds, &st))) return rc;
    pthread_mutex_lock(&g_mu);
    int cap = cur->nstreams + d->nstreams + s->nstreams + 1, nd = 0;
    sim_dep *deps = calloc((size_t)cap, sizeof *deps);
    if (!deps) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    nd = deps_of_ctx_locked(d, deps, nd, cap);
    if (s != d) nd = deps_of_ctx_locked(s, deps, nd, cap);
    if (cur != d && cur != s) nd = deps_of_ctx_locked(cur, deps, nd, cap);
    sim_work w = {.kind = W_MEMCPY};
    w.u.cpy.dst = (void *)(uintptr_t)dst;
    w.u.cpy.src = (const void *)(uintptr_t)src;
    w.u.cpy.n = n;
    uint64_t seq = 0;
    rc = st->cap ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : sim_enqueue_locked(st, &w, deps, nd, &seq);
    if (st->cap) sim_capture_invalidate_locked(st->cap);
    pthread_mutex_unlock(&g_mu);
    free(deps);
    if (rc) return rc;
    sim_wait_seq(st, seq);
    return sim_ctx_sticky(st->ctx);
}
CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                      size_t ByteCount) {
    return memcpy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, 0);
}
CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                           size_t ByteCount) {
    return memcpy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, 1);
}

/* ---- cuGetProcAddress ------------------------------------------------------------ */

void sim_multidev_procs(void (*add)(const char *name, int version, int per_thread, void *fn)) {
#define MD_E(name, ver, fn) SIM_PROC_E(add, name, ver, fn)
#define MD_T(name, ver, sfx, fn) SIM_PROC_T(add, name, ver, sfx, fn)
    MD_E(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer);
    MD_E(cuDeviceGetP2PAttribute, 8000, cuDeviceGetP2PAttribute);
    MD_E(cuCtxEnablePeerAccess, 4000, cuCtxEnablePeerAccess);
    MD_E(cuCtxDisablePeerAccess, 4000, cuCtxDisablePeerAccess);
    MD_E(cuMemcpyPeer, 4000, cuMemcpyPeer);
    MD_T(cuMemcpyPeer, 7000, ptds, cuMemcpyPeer_ptds);
    MD_E(cuMemcpyPeerAsync, 4000, cuMemcpyPeerAsync);
    MD_T(cuMemcpyPeerAsync, 7000, ptsz, cuMemcpyPeerAsync_ptsz);
#undef MD_E
#undef MD_T
}
