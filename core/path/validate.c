/* encore: what a held launch must keep, and the program's changes of a
 * function's attributes.
 *
 * A held launch returns CUDA_SUCCESS at once, so it must be a launch the
 * driver takes. It walks the trie: its structure (function, grid, block,
 * dynamic shared memory, launch attributes) is that of a launch the driver
 * took before, eagerly and again in the capture. What can have changed since
 * is its function's limits (the program lowered its maximum dynamic shared
 * memory, say), and a launch is checked against those and the device's
 * limits anyway: each dimension from 1 to the device's maximum, threads per
 * block within the device's and the function's maximum, dynamic shared memory
 * within the function's. That costs a few comparisons against limits read
 * once (per device; per function in its layout) and read again after the
 * program changes a function attribute. A launch that fails the check is not
 * held: it is issued eagerly after what is held, and returns the driver's
 * own error. So does one whose limits cannot be read.
 *
 * cuFuncSetAttribute and the like: libraries such as CUTLASS and
 * FlashAttention set an attribute before every launch, mostly to the value it
 * already has. Such a call changes nothing, so here it neither issues what is
 * held nor cuts the sequence. A call that changes the value (rare) issues
 * everything held first: held launches were checked against the old limits,
 * and run with the old attributes as they would have without encore. After
 * it, the limits of every function are read again at their next held launch
 * (a CUkernel and a CUfunction may name the same code), and the graphs with a
 * launch of that function are dropped: a graph runs its launches as they were
 * captured, with the attributes of then; the sequence is captured again. A
 * change of an attribute whose rules the check does not know (the cluster
 * dimensions a function requires) makes the function's launches run eagerly
 * from then on. "The function" is every handle of its code: the CUkernel and
 * the CUfunctions cuKernelGetFunction pairs with it (layout.c). */
#define _GNU_SOURCE
#include <pthread.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
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

#define MAX_DEVICES 64 /* devices whose limits are kept (more: launches there run eagerly) */

/* ---- the device's limits ----------------------------------------------------------- */

static enc_dev_limits dev_tab[MAX_DEVICES];
static pthread_mutex_t dev_mu = PTHREAD_MUTEX_INITIALIZER;

static int read_device_limits(enc_dev_limits *d, CUdevice dev) {
    static const CUdevice_attribute attrs[7] = {
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,       CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,       CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,      CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK};
    int v[7];
    for (int i = 0; i < 7; i++)
        if (enc_drv.deviceGetAttribute(&v[i], attrs[i], dev) != CUDA_SUCCESS || v[i] <= 0) return 0;
    for (int i = 0; i < 3; i++) {
        d->max_grid[i] = (unsigned)v[i];
        d->max_block[i] = (unsigned)v[3 + i];
    }
    d->max_threads = (unsigned)v[6];
    d->dev = dev;
    return 1;
}

/* The limits of st's device, or NULL if they cannot be read. */
static const enc_dev_limits *device_limits(const enc_stream_state *st) {
    if (!enc_drv.ctxGetDevice || !enc_drv.deviceGetAttribute) return NULL;
    CUdevice dev = -1;
    int pushed = enc_stream_enter_ctx(st);
    CUresult r = enc_drv.ctxGetDevice(&dev);
    enc_stream_leave_ctx(pushed);
    if (r != CUDA_SUCCESS || dev < 0 || dev >= MAX_DEVICES) return NULL;
    enc_dev_limits *d = &dev_tab[dev];
    if (!__atomic_load_n(&d->ok, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&dev_mu);
        if (!d->ok && read_device_limits(d, dev)) __atomic_store_n(&d->ok, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&dev_mu);
    }
    return __atomic_load_n(&d->ok, __ATOMIC_ACQUIRE) ? d : NULL;
}

/* ---- the function's limits ----------------------------------------------------------- */

static CUresult func_attr(int *v, CUfunction_attribute a, void *handle, int kernel, CUdevice dev) {
    if (kernel)
        return enc_drv.kernelGetAttribute ? enc_drv.kernelGetAttribute(v, a, (CUkernel)handle, dev)
                                          : CUDA_ERROR_NOT_SUPPORTED;
    return enc_drv.funcGetAttribute ? enc_drv.funcGetAttribute(v, a, (CUfunction)handle) : CUDA_ERROR_NOT_SUPPORTED;
}

/* Read L's limits as they are now (generation `gen`); 0 if they cannot be read. */
static int read_func_limits(enc_layout *L, CUdevice dev, unsigned gen) {
    int threads = 0, smem = 0;
    if (func_attr(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, L->func, L->is_kernel, dev) != CUDA_SUCCESS ||
        func_attr(&smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, L->func, L->is_kernel, dev) != CUDA_SUCCESS ||
        threads <= 0 || smem < 0)
        return 0;
    __atomic_store_n(&L->max_threads, threads, __ATOMIC_RELAXED);
    __atomic_store_n(&L->max_dyn_smem, smem, __ATOMIC_RELAXED);
    __atomic_store_n(&L->lim_dev, (int)dev, __ATOMIC_RELAXED);
    __atomic_store_n(&L->lim_gen, gen, __ATOMIC_RELEASE);
    return 1;
}

/* ---- the check ---------------------------------------------------------------------- */

/* Why the driver might refuse r now, or NULL if it takes it. */
const char *enc_launch_refusal(enc_stream_state *st, const enc_rec *r) {
    if (r->L->is_op)
        return NULL; /* the driver decides, as it would eagerly: held ops are checked when taken (nodes.c) */
    const enc_dev_limits *d = st->limits;
    if (__builtin_expect(!d, 0) && !(d = st->limits = device_limits(st))) return "the device's limits cannot be read";
    uint64_t threads = 1;
    for (int i = 0; i < 3; i++) {
        /* 0 wraps to UINT_MAX: a zero dimension is refused too */
        if (r->grid[i] - 1u >= d->max_grid[i]) return "a grid dimension is 0 or above the device's";
        if (r->block[i] - 1u >= d->max_block[i]) return "a block dimension is 0 or above the device's";
        threads *= r->block[i];
    }
    if (threads > d->max_threads) return "more threads per block than the device's maximum";
    enc_layout *L = (enc_layout *)(uintptr_t)r->L; /* its limit fields are written here only */
    if (__atomic_load_n(&L->untrusted, __ATOMIC_RELAXED)) return "the function's attributes were changed";
    unsigned gen = __atomic_load_n(&enc_hot.func_attr_gen, __ATOMIC_ACQUIRE);
    if (__builtin_expect(__atomic_load_n(&L->lim_gen, __ATOMIC_ACQUIRE) != gen, 0) ||
        (L->is_kernel && __atomic_load_n(&L->lim_dev, __ATOMIC_RELAXED) != (int)d->dev)) {
        if (!read_func_limits(L, d->dev, gen)) return "the function's limits cannot be read";
    }
    if (threads > (uint64_t)__atomic_load_n(&L->max_threads, __ATOMIC_RELAXED))
        return "more threads per block than the function's maximum";
    if (r->smem > (unsigned)__atomic_load_n(&L->max_dyn_smem, __ATOMIC_RELAXED))
        return "more dynamic shared memory than the function's maximum";
    return NULL;
}

/* ---- the program changes a function's attributes -------------------------------------- */

/* Attributes whose change cannot make a launch that the driver took before
 * fail unseen: the maximum dynamic shared memory (checked), and preferences.
 * Any other (the cluster dimensions a function requires, whether it may run
 * clusters beyond the portable size) changes rules this check does not
 * know: the function's launches are not held from then on. */
static int checked_or_preference(int attrib) {
    return attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ||
           attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ||
           attrib == CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
}

/* The call in progress on this thread, between begin and end, if it changes something. */
static __thread enc_func_set changing __attribute__((tls_model("initial-exec")));
static __thread int is_changing __attribute__((tls_model("initial-exec")));

/* Does the call set what the function has already? For an attribute, the
 * driver says (through the very handle the call names); a cache
 * configuration cannot be read back, so the one last set through the same
 * handle is compared (one set through another handle of the same code goes
 * unseen: a cache configuration is a preference, it changes no result). */
static int unchanged(const enc_func_set *c) {
    if (!c || __atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) > 0)
        return 0; /* no call of encore's own then */
    if (c->cache) {
        const enc_layout *L = enc_layout_cached((CUfunction)c->handle);
        return L && __atomic_load_n(&L->cache_config_p1, __ATOMIC_RELAXED) == c->value + 1;
    }
    int v = 0;
    return func_attr(&v, (CUfunction_attribute)c->attrib, c->handle, c->kernel, c->dev) == CUDA_SUCCESS &&
           v == c->value;
}

void enc_core_func_set_begin(const enc_func_set *c) {
    is_changing = 0;
    if (unchanged(c)) return;
    enc_core_flush_all(ENC_FLUSH_ALL_CALL);             /* what is held runs with the attributes of before */
    changing = c ? *c : (enc_func_set){.handle = NULL}; /* NULL: any function */
    is_changing = 1;
}

/* After the call that changed `changing` (with result r). */
static void after_change(CUresult r) {
    __atomic_add_fetch(&enc_hot.func_attr_gen, 1, __ATOMIC_ACQ_REL);
    unsigned stamp = enc_layouts_mark_code((CUfunction)changing.handle, changing.kernel);
    int n = __atomic_load_n(&enc_hot.nstates, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        enc_stream_state *st = enc_states[i];
        enc_mutex_lock(&st->mu);
        enc_store_drop_graphs_of(&st->store, stamp);
        enc_mutex_unlock(&st->mu);
    }
    if (!changing.handle || (!changing.cache && !checked_or_preference(changing.attrib))) {
        const enc_layout *L = changing.handle ? enc_layout_cached((CUfunction)changing.handle) : NULL;
        ENC_DEBUG("attribute %d of %s %s changed (result %d): its launches are not held from now on",
                  changing.handle ? changing.attrib : -1, changing.kernel ? "kernel" : "function",
                  L ? L->name : "(not launched yet)", (int)r);
        enc_layouts_distrust(stamp);
    }
    if (changing.cache && r == CUDA_SUCCESS) {
        enc_layout *L = (enc_layout *)(uintptr_t)enc_layout_cached((CUfunction)changing.handle);
        if (L) __atomic_store_n(&L->cache_config_p1, changing.value + 1, __ATOMIC_RELAXED);
    }
}

void enc_core_func_set_end(CUresult r) {
    if (!is_changing) return;
    is_changing = 0;
    ENC_GUARDED after_change(r); /* (after a hooked call the guard is down) */
}
