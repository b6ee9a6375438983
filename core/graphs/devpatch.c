/* encore: device-side patches (ENCORE_DEVICE_PATCH, a trial, off).
 *
 * A patched replay writes each changed kernel node with cuGraphExecKernelNodeSetParams: 0.7-1.2 us of
 * host time a node on the H200, and the graph launch after it costs more too. Hugging Face generate
 * patches 97% of its graph launches, 6.8 nodes each, 12-14 us of its 17 us a graph launch
 * (docs/bench/2026-11-29-h200-pause-ends.md). Since CUDA 12.4 a captured kernel launch can be made
 * device-updatable, and a kernel earlier in the same graph can change its arguments and grid on the GPU.
 * Here a patchable graph of kernel launches is captured with encore's updater kernel first
 * (core/graphs/updater.cu, built with the library and loaded per context from its bytes) and its launches
 * device-updatable; a replay writes the changed argument bytes into the next slot of the graph's ring in
 * page-locked memory (core/graphs/devslot.h) and launches: the updater applies them, one thread an
 * update, before the nodes run. On the H200 that way cost the host 15 ns a node
 * (tests/bench/devupdate_driver_probe.c, call 92); the GPU pays a few microseconds a launch, so it pays
 * only where the GPU waits for the host: a trial, off, until measured side by side.
 *
 * Order and safety. Launches of one graph run in stream order, and the updater counts them on the device
 * (a counter per graph, in device memory, that the host mirrors): launch k takes slot k % slots, which the
 * host fills before launch k and writes again only once the updater marked it done. A slot the GPU has
 * not taken yet (the host more than a ring ahead of the GPU on one graph) is never waited for: the held
 * launches go out eagerly. A graph launch that fails leaves the count where it was.
 *
 * A launch's own attributes (a cluster shape, programmatic serialization) are captured with the device-updatable
 * one; where the driver refuses that capture, graphs of launches with attributes are captured as before from then
 * on (enc_devpatch_refused): one info line, and the graph captured again without. Graphs with copies, memsets or
 * event nodes are not device-patched: on the H200 (driver 580.159.04, 2026-11-29 call 94) the updater's every
 * update in such a graph was refused on the GPU (cudaErrorInvalidValue), its nodes left as they were, and the
 * results changed (PyTorch training, HF generate, the differential test), while graphs of kernels alone took
 * theirs. A refusal is seen only after the launch ran: the first one switches device patches off for good
 * (enc_devpatch_broken: their graphs dropped at their next replay, one warning).
 *
 * Grids are not patched on the device (replay.c patchable): with a node's bytes and its grid set by two updater
 * threads at once, two GPU tests changed results without a refusal (call 95); set one after the other by one
 * thread, the GPU refused the updates (cudaErrorInvalidValue, call 96). Arguments alone are what passed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/log.h"
#include "core/graphs/devpatch.h"
#include "core/graphs/issue.h"
#include "core/state/gate.h"
#include "policy/options.h"

#define DEV_SLOTS 8                                /* a graph's ring */
#define DEV_CTXS 16                                /* contexts with the updater */
#define DEV_COUNTERS 4096                          /* device-patched graphs a context at once */
#define DEV_MAX_RECS (ENC_DEV_UPDATER_THREADS / 2) /* records a device-patched graph (one update each) */

typedef struct dev_ctx {
    CUcontext ctx;
    int state; /* 1 ready, -1 unavailable */
    CUfunction fn;
    CUdeviceptr counters;
    uint64_t *launched; /* DEV_COUNTERS: the host's mirror of each counter */
    uint8_t *used;      /* DEV_COUNTERS */
} dev_ctx;

static dev_ctx ctxs[DEV_CTXS];
static int nctx;
static unsigned refused; /* ENC_DEV_KIND_*: kinds of graph whose capture the driver refused (atomic) */
static int broken;       /* the GPU refused an update: device patches off (atomic) */
static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* The image for ctx's device: the same major, the highest minor not above the device's. */
static const enc_updater_image *image_for(void) {
    CUdevice dev;
    int major = 0, minor = 0;
    if (!enc_drv.ctxGetDevice || !enc_drv.deviceGetAttribute || enc_drv.ctxGetDevice(&dev) != CUDA_SUCCESS ||
        enc_drv.deviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != CUDA_SUCCESS ||
        enc_drv.deviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != CUDA_SUCCESS)
        return NULL;
    const enc_updater_image *best = NULL;
    for (int i = 0; i < enc_updater_nimages; i++) {
        const enc_updater_image *m = &enc_updater_images[i];
        if (m->major == major && m->minor <= minor && (!best || m->minor > best->minor)) best = m;
    }
    return best;
}

/* Load the updater in the current context (ctx), its counters zeroed. With dev_mu held. */
static void load(dev_ctx *c) {
    c->state = -1;
    const char *why = NULL;
    const enc_updater_image *m = enc_updater_nimages ? image_for() : NULL;
    CUmodule mod;
    CUstream s = NULL;
    if (!enc_drv.moduleLoadData || !enc_drv.moduleGetFunction || !enc_drv.memHostAlloc ||
        !enc_drv.memHostGetDevicePointer || !enc_drv.memFreeHost || !enc_drv.memAlloc || !enc_drv.streamSynchronize ||
        !enc_drv.memsetD32Async)
        why = "the driver lacks an entry point it needs";
    else if (!enc_updater_nimages)
        why = "this build of encore has no updater kernel (no CUDA compiler when it was built)";
    else if (!m)
        why = "this build of encore has no updater kernel for this GPU's architecture";
    else if (enc_drv.moduleLoadData(&mod, m->bytes) != CUDA_SUCCESS ||
             enc_drv.moduleGetFunction(&c->fn, mod, ENC_DEV_UPDATER_NAME) != CUDA_SUCCESS)
        why = "the driver did not load the updater kernel";
    else if (enc_drv.memAlloc(&c->counters, DEV_COUNTERS * sizeof(uint32_t)) != CUDA_SUCCESS ||
             enc_drv.streamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
             enc_drv.memsetD32Async(c->counters, 0, DEV_COUNTERS, s) != CUDA_SUCCESS ||
             enc_drv.streamSynchronize(s) != CUDA_SUCCESS)
        why = "its counters could not be set up";
    else if (!(c->launched = calloc(DEV_COUNTERS, sizeof *c->launched)) || !(c->used = calloc(DEV_COUNTERS, 1)))
        why = "out of memory";
    if (s && enc_drv.streamDestroy) enc_drv.streamDestroy(s);
    if (why) {
        enc_log(ENC_LOG_INFO, "ENCORE_DEVICE_PATCH: %s; graphs are patched from the host", why);
        return;
    }
    c->state = 1;
    ENC_DEBUG("ENCORE_DEVICE_PATCH: the updater kernel for sm_%d%d is loaded", m->major, m->minor);
    ENC_WARN_ONCE("ENCORE_DEVICE_PATCH is experimental: earlier forms of it changed results on an H200 "
                  "(docs/driver-rules.md) and this one has not run on a GPU; keep no result computed with it");
}

/* ctx's entry, loaded if need be (the current context is ctx), or NULL. With dev_mu held. */
static dev_ctx *ctx_entry(CUcontext ctx) {
    for (int i = 0; i < nctx; i++)
        if (ctxs[i].ctx == ctx) return ctxs[i].state == 1 ? &ctxs[i] : NULL;
    if (nctx == DEV_CTXS) return NULL;
    dev_ctx *c = &ctxs[nctx++];
    c->ctx = ctx;
    load(c);
    return c->state == 1 ? c : NULL;
}

/* The entry stays (its graphs, dropped with the context, still point into its arrays) and is never taken
 * again: after DEV_CTXS contexts, no more device patches. */
void enc_devpatch_context_gone(CUcontext ctx) {
    if (!ctx) return;
    pthread_mutex_lock(&dev_mu);
    for (int i = 0; i < nctx; i++)
        if (ctxs[i].ctx == ctx) {
            ctxs[i].ctx = NULL;
            ctxs[i].state = -1;
        }
    pthread_mutex_unlock(&dev_mu);
}

unsigned enc_devpatch_kinds(const enc_graph *g) {
    unsigned k = 0;
    for (uint32_t i = 0; i < g->len; i++)
        k |= g->recs[i].L->is_op ? ENC_DEV_KIND_OPS : g->recs[i].nattrs ? ENC_DEV_KIND_ATTRS : ENC_DEV_KIND_KERNELS;
    return k;
}

int enc_devpatch_wanted(const enc_graph *g, CUcontext ctx) {
    if (!enc_opt.device_patch || !enc_opt.patch || g->len == 0 || g->len > DEV_MAX_RECS) return 0;
    unsigned k = enc_devpatch_kinds(g);
    if ((k & ENC_DEV_KIND_OPS) || (k & __atomic_load_n(&refused, __ATOMIC_RELAXED)) || enc_devpatch_broken())
        return 0; /* stream operations (refused on the GPU, above), or a kind the driver refused */
    pthread_mutex_lock(&dev_mu);
    int ok = ctx_entry(ctx) != NULL;
    pthread_mutex_unlock(&dev_mu);
    return ok;
}

void enc_devpatch_refused(const enc_graph *g, CUresult r) {
    unsigned k = enc_devpatch_kinds(g) & ENC_DEV_KIND_ATTRS;
    if (!k) k = ENC_DEV_KIND_KERNELS | ENC_DEV_KIND_ATTRS; /* plain kernels: every kind */
    unsigned was = __atomic_fetch_or(&refused, k, __ATOMIC_RELAXED);
    if ((was | k) != was)
        enc_log(ENC_LOG_INFO,
                "ENCORE_DEVICE_PATCH: the driver refused to capture a graph of %s device-updatable (CUDA error %d); "
                "such graphs are patched from the host",
                k == ENC_DEV_KIND_ATTRS ? "kernels with launch attributes" : "kernels", (int)r);
}

enc_devgraph *enc_devpatch_new(const enc_graph *g, CUcontext ctx) {
    size_t values = 0;
    for (uint32_t i = 0; i < g->len; i++) values += align8(g->recs[i].L->argbytes);
    size_t slot = align8(sizeof(enc_dev_slot) + g->len * sizeof(enc_dev_update) + values);
    if (slot > UINT32_MAX / DEV_SLOTS) return NULL;
    enc_devgraph *d = calloc(1, sizeof *d + g->len * sizeof d->nodes[0]);
    if (!d || !(d->dirty = calloc(g->len, 1))) {
        free(d);
        return NULL;
    }
    d->slot_bytes = (uint32_t)slot;
    d->mask = DEV_SLOTS - 1;
    d->counter = -1;
    pthread_mutex_lock(&dev_mu);
    dev_ctx *c = ctx_entry(ctx);
    for (int i = 0; c && i < DEV_COUNTERS && d->counter < 0; i++)
        if (!c->used[i]) {
            c->used[i] = 1;
            d->counter = i;
            d->ctx_slot = (int)(c - ctxs);
            d->launched = &c->launched[i];
        }
    pthread_mutex_unlock(&dev_mu);
    void *ring = NULL;
    if (d->counter < 0 || enc_drv.memHostAlloc(&ring, slot * DEV_SLOTS, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS) {
        enc_devpatch_free(d, 1);
        return NULL;
    }
    d->ring = ring;
    memset(d->ring, 0, slot * DEV_SLOTS);
    for (uint32_t k = 0; k < DEV_SLOTS; k++) ((enc_dev_slot *)(d->ring + k * slot))->done = 1;
    if (enc_drv.memHostGetDevicePointer(&d->ring_d, d->ring, 0) != CUDA_SUCCESS) {
        enc_devpatch_free(d, 1);
        return NULL;
    }
    return d;
}

/* Every launch of d's graph has had its updater run (each slot it was given is done): its ring is no longer
 * read, and its counter equals the host's count. */
static int settled(const enc_devgraph *d) {
    for (uint32_t k = 0; k <= d->mask; k++)
        if (!__atomic_load_n(&((const enc_dev_slot *)(d->ring + (size_t)k * d->slot_bytes))->done, __ATOMIC_ACQUIRE))
            return 0;
    return 1;
}

void enc_devpatch_free(enc_devgraph *d, int ring) {
    if (!d) return;
    /* A launch still in flight reads the ring and bumps the counter: both are left as they are then (a graph
     * dropped while its launches run, rare), else another graph taking the counter would read the wrong slot. */
    int idle = !d->ring || settled(d);
    if (d->ring && ring && idle) enc_drv.memFreeHost(d->ring); /* its exec was destroyed first */
    if (d->counter >= 0 && idle) {
        pthread_mutex_lock(&dev_mu);
        ctxs[d->ctx_slot].used[d->counter] = 0; /* its count goes on with the next graph that takes it */
        pthread_mutex_unlock(&dev_mu);
    }
    free(d->dirty);
    free(d);
}

CUresult enc_devpatch_capture(enc_devgraph *d, const enc_graph *g, CUstream s) {
    const dev_ctx *c = &ctxs[d->ctx_slot];
    CUdeviceptr counter = c->counters + (CUdeviceptr)d->counter * sizeof(uint32_t);
    unsigned mask = d->mask, bytes = d->slot_bytes;
    void *uargs[4] = {&d->ring_d, &mask, &bytes, &counter};
    CUresult r = AUDITED(enc_drv.launchKernel(c->fn, 1, 1, 1, ENC_DEV_UPDATER_THREADS, 1, 1, 0, s, uargs, NULL));
    for (uint32_t i = 0; i < g->len && r == CUDA_SUCCESS; i++) {
        const enc_rec *rec = &g->recs[i];
        CUlaunchAttribute at[ENC_MAX_ATTRS + 1]; /* its own, then the device-updatable one */
        if (rec->nattrs) memcpy(at, g->arena + rec->attr_off, rec->nattrs * sizeof at[0]);
        CUlaunchAttribute *du = &at[rec->nattrs];
        memset(du, 0, sizeof *du);
        du->id = CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
        du->value.deviceUpdatableKernelNode.deviceUpdatable = 1;
        r = enc_stream_issue_rec_with(rec, g->arena, s, at, rec->nattrs + 1);
        d->nodes[i] = du->value.deviceUpdatableKernelNode.devNode; /* the driver writes the node's handle back */
        if (r == CUDA_SUCCESS && !d->nodes[i]) r = CUDA_ERROR_NOT_SUPPORTED;
    }
    return r;
}

/* ---- a replay ---------------------------------------------------------------------------- */

enc_dev_slot *enc_devpatch_slot(enc_devgraph *d) {
    enc_dev_slot *s = (enc_dev_slot *)(d->ring + (size_t)(*d->launched & d->mask) * d->slot_bytes);
    if (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) return NULL; /* the GPU has not taken it: no wait */
    if (__builtin_expect(s->rc != 0, 0)) { /* that launch ran with its nodes as they were: too late to mend */
        __atomic_store_n(&broken, 1, __ATOMIC_RELAXED);
        ENC_WARN_ONCE("the GPU refused a device-side patch (error %d): a launch may have run with stale arguments; "
                      "device patches are off from now on (ENCORE_DEVICE_PATCH is not to be trusted on this driver; "
                      "please report it)",
                      (int)s->rc);
        return NULL;
    }
    s->n = 0;
    s->rc = 0;
    s->values = d->slot_bytes;
    return s;
}

int enc_devpatch_add(enc_devgraph *d, enc_dev_slot *s, uint32_t i, const enc_rec *h, const unsigned char *arena,
                     const enc_rec *was, const unsigned char *was_arena) {
    uint32_t n = h->L->argbytes;
    int changed = n && memcmp(arena + h->arg_off, was_arena + was->arg_off, n) != 0;
    d->dirty[i] |= (uint8_t)changed;
    if (!d->dirty[i]) return changed;
    uint32_t at = (s->values - n) & ~7u; /* the bytes go below the last ones, from the slot's end down */
    if (at < sizeof(enc_dev_slot) + (s->n + 1) * sizeof(enc_dev_update)) return -1;
    memcpy((unsigned char *)s + at, arena + h->arg_off, n);
    s->values = at;
    s->u[s->n++] = (enc_dev_update){
        .node = (uint64_t)(uintptr_t)d->nodes[i], .kind = ENC_DEV_PARAM, .offset = 0, .size = n, .value_off = at};
    return changed;
}

int enc_devpatch_broken(void) { return __atomic_load_n(&broken, __ATOMIC_RELAXED); }

void enc_devpatch_launching(enc_dev_slot *s) { __atomic_store_n(&s->done, 0, __ATOMIC_RELEASE); }

void enc_devpatch_launched(enc_devgraph *d, enc_dev_slot *s, int ok) {
    if (ok)
        (*d->launched)++;
    else
        __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE); /* never taken: free again */
}
