/* encore: parameter layouts, cached per function.
 *
 * A launch is recorded by copying its arguments, which needs the kernel's
 * parameter offsets and sizes (cuFuncGetParamInfo, or cuKernelGetParamInfo
 * for a CUkernel passed as a CUfunction). They are read once per function
 * and kept in an open-addressing table that launches read without a lock;
 * only a miss takes the lock and asks the driver.
 *
 * Each layout remembers the module or library its function belongs to, so
 * that an unload retires only that code's layouts. Retiring rebuilds the
 * table without them in a second buffer and switches to it: a launch reading
 * the old buffer meanwhile still finds memory it may read. The caller frees
 * the retired layouts after a grace period (reclaim.c), after which nothing
 * reads the old buffer either, so the next retirement can reuse it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/driver.h"
#include "base/guard.h"
#include "base/log.h"
#include "core/graphs/graphs.h"
#include "core/graphs/issue.h"
#include "core/graphs/layout.h"
#include "core/graphs/nodes.h"
#include "core/graphs/store.h"
#include "core/state/gate.h"

#define LAYOUT_PROBES 64                         /* slots tried from a function's home slot */
#define LAYOUT_FILL_MAX (ENC_LAYOUT_CAP * 3 / 4) /* layouts cached at most */
#define MURMUR3_FMIX_64 0xff51afd7ed558ccdULL    /* MurmurHash3's 64-bit finaliser multiplier */

static enc_layout *layout_bufs[2][ENC_LAYOUT_CAP];
static enc_layout **layout_tab = layout_bufs[0]; /* the buffer in use; atomic */
static pthread_mutex_t layout_mu = PTHREAD_MUTEX_INITIALIZER;
static int layout_count;

static inline uint32_t ptr_hash(const void *p, uint32_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= MURMUR3_FMIX_64;
    x ^= x >> 33;
    return (uint32_t)x & (cap - 1);
}

/* Read f's parameter offsets and sizes into offs/sizes; returns how many.
 * *ok is cleared when the driver's answer cannot be trusted, *kernel set when
 * f turned out to be a CUkernel. */
static uint32_t read_param_info(CUfunction f, size_t *offs, size_t *sizes, int *ok, int *kernel) {
    uint32_t n = 0;
    *ok = enc_drv.funcGetParamInfo != NULL;
    *kernel = 0;
    while (*ok && n < ENC_MAX_PARAMS) {
        CUresult r = *kernel ? enc_drv.kernelGetParamInfo((CUkernel)(void *)f, n, &offs[n], &sizes[n])
                             : enc_drv.funcGetParamInfo(f, n, &offs[n], &sizes[n]);
        if (r == CUDA_SUCCESS) {
            n++;
            continue;
        }
        if (n == 0 && !*kernel && r == CUDA_ERROR_INVALID_HANDLE && enc_drv.kernelGetParamInfo) {
            *kernel = 1; /* a CUkernel passed as a CUfunction */
            continue;
        }
        if (r != CUDA_ERROR_INVALID_VALUE) { /* anything but "past the last parameter" */
            *ok = 0;
            ENC_DEBUG("cu%sGetParamInfo(%p, %u) failed with CUDA error %d", *kernel ? "Kernel" : "Func", (void *)f, n,
                      (int)r);
        }
        break;
    }
    if (n == ENC_MAX_PARAMS) *ok = 0;
    return n;
}

static void read_name(enc_layout *L, CUfunction f) {
    const char *name = NULL;
    if (L->is_kernel ? (enc_drv.kernelGetName && enc_drv.kernelGetName(&name, (CUkernel)(void *)f) == CUDA_SUCCESS)
                     : (enc_drv.funcGetName && enc_drv.funcGetName(&name, f) == CUDA_SUCCESS)) {
        if (name) strncpy(L->name, name, sizeof L->name - 1);
    }
    if (!L->name[0]) strcpy(L->name, "?");
}

/* Which module (a CUfunction's) or library (a CUkernel's) f belongs to, and
 * the context current now: an unload of that code retires the layout. */
static void read_owner(enc_layout *L, CUfunction f) {
    void *owner = NULL;
    if (L->is_kernel ? (enc_drv.kernelGetLibrary &&
                        enc_drv.kernelGetLibrary((CUlibrary *)&owner, (CUkernel)(void *)f) == CUDA_SUCCESS)
                     : (enc_drv.funcGetModule && enc_drv.funcGetModule((CUmodule *)&owner, f) == CUDA_SUCCESS)) {
        L->owner = owner;
        L->owner_kind = L->is_kernel ? ENC_OWNER_LIBRARY : ENC_OWNER_MODULE;
    }
    CUcontext ctx = NULL;
    if (enc_drv.ctxGetCurrent && enc_drv.ctxGetCurrent(&ctx) == CUDA_SUCCESS) L->ctx = ctx;
}

enc_layout *enc_layout_new(uint32_t n) {
    size_t size = sizeof(enc_layout) + 2 * (size_t)n * sizeof(uint32_t);
    void *p = NULL;
    if (posix_memalign(&p, 64, size) != 0) return NULL;
    memset(p, 0, size);
    return p;
}

static enc_layout *build_layout(CUfunction f) {
    size_t offs[ENC_MAX_PARAMS], sizes[ENC_MAX_PARAMS];
    enc_layout *L = NULL;
    ENC_GUARDED {
        int ok, kernel;
        uint32_t n = read_param_info(f, offs, sizes, &ok, &kernel);
        L = enc_layout_new(n);
        if (!L) return NULL;
        L->func = (void *)f;
        L->nparams = n;
        L->ok = ok;
        L->is_kernel = kernel;
        L->ascending = 1;
        for (uint32_t i = 0; i < n; i++) {
            if (offs[i] + sizes[i] > ENC_MAX_ARG_BYTES) L->ok = 0;
            if (i && offs[i] < offs[i - 1] + sizes[i - 1]) L->ascending = 0;
            L->off[i] = (uint32_t)offs[i];
            L->off[n + i] = (uint32_t)sizes[i];
            if (offs[i] + sizes[i] > L->argbytes) L->argbytes = (uint32_t)(offs[i] + sizes[i]);
        }
        read_name(L, f);
        read_owner(L, f);
    }
    if (!L->ok)
        ENC_DEBUG("no parameter layout for kernel %s (%u parameters read): its launches run eagerly", L->name,
                  L->nparams);
    return L;
}

const enc_layout *enc_layout_cached(CUfunction f) {
    if (__builtin_expect(enc_is_op_func(f), 0)) return enc_op_layout(f);
    uint32_t h = ptr_hash(f, ENC_LAYOUT_CAP);
    enc_layout **tab = __atomic_load_n(&layout_tab, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < LAYOUT_PROBES; i++) {
        enc_layout *L = __atomic_load_n(&tab[(h + i) & (ENC_LAYOUT_CAP - 1)], __ATOMIC_ACQUIRE);
        if (!L) break;
        if (L->func == (void *)f) return L;
    }
    return NULL;
}

const enc_layout *enc_layout_for(CUfunction f) {
    const enc_layout *cached = enc_layout_cached(f);
    if (cached) return cached;
    uint32_t h = ptr_hash(f, ENC_LAYOUT_CAP);
    pthread_mutex_lock(&layout_mu);
    enc_layout *found = NULL;
    uint32_t slot = UINT32_MAX;
    for (uint32_t i = 0; i < LAYOUT_PROBES; i++) {
        uint32_t s = (h + i) & (ENC_LAYOUT_CAP - 1);
        if (!layout_tab[s]) {
            slot = s;
            break;
        }
        if (layout_tab[s]->func == (void *)f) {
            found = layout_tab[s];
            break;
        }
    }
    if (!found && slot != UINT32_MAX && layout_count < LAYOUT_FILL_MAX) {
        found = build_layout(f);
        if (found) {
            __atomic_store_n(&layout_tab[slot], found, __ATOMIC_RELEASE);
            layout_count++;
        }
    }
    pthread_mutex_unlock(&layout_mu);
    return found;
}

/* With layout_mu held: put L in table tab (a free slot near its home; 0 if none). */
static int table_put(enc_layout **tab, enc_layout *L) {
    uint32_t h = ptr_hash(L->func, ENC_LAYOUT_CAP);
    for (uint32_t i = 0; i < LAYOUT_PROBES; i++) {
        uint32_t s = (h + i) & (ENC_LAYOUT_CAP - 1);
        if (!tab[s]) {
            __atomic_store_n(&tab[s], L, __ATOMIC_RELEASE);
            return 1;
        }
    }
    return 0;
}

enc_layout *enc_layouts_retire(enc_layout_pick pick, const void *arg) {
    pthread_mutex_lock(&layout_mu);
    enc_layout **cur = layout_tab, **next = cur == layout_bufs[0] ? layout_bufs[1] : layout_bufs[0];
    int any = 0;
    for (int i = 0; i < ENC_LAYOUT_CAP && !any; i++) any = cur[i] && pick(cur[i], arg);
    if (!any) { /* nothing of that code: the table stays as it is */
        pthread_mutex_unlock(&layout_mu);
        return NULL;
    }
    for (int i = 0; i < ENC_LAYOUT_CAP; i++) /* nothing reads it since the last grace period */
        if (next[i]) next[i] = NULL;
    enc_layout *retired = NULL;
    layout_count = 0;
    for (int i = 0; i < ENC_LAYOUT_CAP; i++) {
        enc_layout *L = cur[i];
        if (!L) continue;
        if (!pick(L, arg) && table_put(next, L)) { /* kept (finding no slot near its home cannot happen) */
            layout_count++;
            continue;
        }
        L->retired = 1;
        L->retired_next = retired;
        retired = L;
    }
    __atomic_store_n(&layout_tab, next, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&layout_mu);
    return retired;
}

static int pick_all(const enc_layout *L, const void *arg) {
    (void)L;
    (void)arg;
    return 1;
}

enc_layout *enc_layouts_reset(void) { return enc_layouts_retire(pick_all, NULL); }

void enc_layouts_free(enc_layout *retired) {
    while (retired) {
        enc_layout *next = retired->retired_next;
        free(retired);
        retired = next;
    }
}

/* A CUkernel and a CUfunction may name the same code: cuKernelGetFunction
 * gives the CUfunction of a CUkernel in the current context. Where it cannot
 * be asked (no such entry point, a query refused, a capture of the program's
 * under way: encore calls no driver function then), every handle of the other
 * kind counts as the same code: a changed attribute then costs the graphs
 * and the holding of all of them (cuDNN and cuBLAS set attributes of their
 * CUfunctions; PyTorch's kernels are CUkernels: issue 28). */
static int kernel_function(CUfunction *out, void *kernel) {
    return enc_drv.kernelGetFunction && __atomic_load_n(&enc_hot.prog_capturing, __ATOMIC_RELAXED) == 0 &&
           enc_drv.kernelGetFunction(out, (CUkernel)kernel) == CUDA_SUCCESS;
}

static int same_code(const enc_layout *L, CUfunction f, int kernel, int alias_ok, CUfunction alias) {
    if (!f || L->func == (void *)f) return 1;
    if (L->is_kernel == kernel) return 0;
    if (kernel) return !alias_ok || L->func == (void *)alias; /* f a CUkernel, L a CUfunction */
    CUfunction g = NULL;                                      /* f a CUfunction, L a CUkernel */
    return !kernel_function(&g, L->func) || g == f;
}

/* A function's attributes changed through handle f (a CUkernel if `kernel`;
 * NULL: any function): every layout naming the same code (f itself; of the
 * other kind, the handles cuKernelGetFunction pairs with f) gets a new stamp. */
unsigned enc_layouts_mark_code(CUfunction f, int kernel) {
    static unsigned stamp_seq;
    CUfunction alias = NULL;
    int alias_ok = f && kernel && kernel_function(&alias, f);
    pthread_mutex_lock(&layout_mu);
    unsigned stamp = ++stamp_seq ? stamp_seq : ++stamp_seq; /* never 0, the mark of none */
    for (int i = 0; i < ENC_LAYOUT_CAP; i++) {
        enc_layout *L = layout_tab[i];
        if (L && !L->is_op && same_code(L, f, kernel, alias_ok, alias))
            __atomic_store_n(&L->changed_mark, stamp, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&layout_mu);
    return stamp;
}

void enc_layouts_distrust(unsigned stamp) {
    pthread_mutex_lock(&layout_mu);
    for (int i = 0; i < ENC_LAYOUT_CAP; i++) {
        enc_layout *L = layout_tab[i];
        if (L && __atomic_load_n(&L->changed_mark, __ATOMIC_RELAXED) == stamp)
            __atomic_store_n(&L->untrusted, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&layout_mu);
}
