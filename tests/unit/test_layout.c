/* Unit tests of the parameter-layout cache (core/graphs/layout.c) against a fake
 * driver: enc_drv's parameter-info and name functions point at the fakes
 * below, which describe a few kernels by handle and count their calls. */
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
#include "testhelper.h"

enum {
    AXPY = 0x100,      /* (int at 0, pointer at 8): 16 bytes, padding at 4..8 */
    AS_KERNEL = 0x200, /* a CUkernel: cuFuncGetParamInfo says invalid handle */
    BROKEN = 0x300,    /* parameter 1 fails with an unexpected error */
    HUGE = 0x400,      /* one parameter ending past 64 KiB */
    NAMELESS = 0x500,  /* no parameters, no name */
};

static int param_calls, name_calls, guard_unset_calls;

static CUresult describe(uintptr_t h, size_t i, size_t *off, size_t *size) {
    if (!enc_thr.guard) guard_unset_calls++;
    param_calls++;
    switch (h) {
    case AXPY:
    case AS_KERNEL:
        if (i > 1) return CUDA_ERROR_INVALID_VALUE;
        *off = i ? 8 : 0;
        *size = i ? 8 : 4;
        return CUDA_SUCCESS;
    case BROKEN:
        if (i == 1) return CUDA_ERROR_NOT_SUPPORTED;
        *off = 0;
        *size = 4;
        return CUDA_SUCCESS;
    case HUGE:
        if (i > 0) return CUDA_ERROR_INVALID_VALUE;
        *off = 65536 - 4;
        *size = 8;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult fake_func_param_info(CUfunction f, size_t i, size_t *off, size_t *size) {
    if ((uintptr_t)f == AS_KERNEL) {
        param_calls++;
        return CUDA_ERROR_INVALID_HANDLE;
    }
    return describe((uintptr_t)f, i, off, size);
}

static CUresult fake_kernel_param_info(CUkernel k, size_t i, size_t *off, size_t *size) {
    return describe((uintptr_t)k, i, off, size);
}

static const char *name_of(uintptr_t h) {
    name_calls++;
    switch (h) {
    case AXPY: return "axpy";
    case AS_KERNEL: return "as_kernel";
    case BROKEN: return "broken";
    case HUGE: return "huge";
    default: return NULL;
    }
}

static CUresult fake_func_name(const char **name, CUfunction f) {
    *name = name_of((uintptr_t)f);
    return CUDA_SUCCESS;
}

static CUresult fake_kernel_name(const char **name, CUkernel k) {
    *name = name_of((uintptr_t)k);
    return CUDA_SUCCESS;
}

/* AXPY and BROKEN belong to module 0xA0, HUGE to module 0xB0; the CUkernel
 * AS_KERNEL to library 0xC0; NAMELESS's module is not known. */
static CUresult fake_func_module(CUmodule *mod, CUfunction f) {
    switch ((uintptr_t)f) {
    case AXPY:
    case BROKEN: *mod = (CUmodule)(uintptr_t)0xA0; return CUDA_SUCCESS;
    case HUGE: *mod = (CUmodule)(uintptr_t)0xB0; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_HANDLE;
    }
}

static CUresult fake_kernel_library(CUlibrary *lib, CUkernel k) {
    if ((uintptr_t)k != AS_KERNEL) return CUDA_ERROR_INVALID_HANDLE;
    *lib = (CUlibrary)(uintptr_t)0xC0;
    return CUDA_SUCCESS;
}

static int pick_owner(const enc_layout *L, const void *owner) { return L->owner == owner; }
static int pick_none(const enc_layout *L, const void *arg) {
    (void)L;
    (void)arg;
    return 0;
}

static void use_fake_driver(void) {
    enc_drv.funcGetParamInfo = fake_func_param_info;
    enc_drv.kernelGetParamInfo = fake_kernel_param_info;
    enc_drv.funcGetName = fake_func_name;
    enc_drv.kernelGetName = fake_kernel_name;
    enc_drv.funcGetModule = fake_func_module;
    enc_drv.kernelGetLibrary = fake_kernel_library;
    enc_layouts_free(enc_layouts_reset());
    param_calls = name_calls = guard_unset_calls = 0;
}

static CUfunction fn(uintptr_t h) { return (CUfunction)h; }

int main(int argc, char **argv) {
    th_init(argc, argv);

    TEST("layout: offsets, sizes, packed size and name come from the driver") {
        use_fake_driver();
        const enc_layout *L = enc_layout_for(fn(AXPY));
        EXPECT(L != NULL);
        if (L) {
            EXPECT(L->ok);
            EXPECT(!L->is_kernel);
            EXPECT_EQ_INT(L->nparams, 2);
            EXPECT_EQ_INT(L->off[0], 0);
            EXPECT_EQ_INT(L->off[1], 8);
            EXPECT_EQ_INT(enc_layout_size(L, 0), 4);
            EXPECT_EQ_INT(enc_layout_size(L, 1), 8);
            EXPECT_EQ_INT(L->argbytes, 16);
            EXPECT_STR_EQ(L->name, "axpy");
        }
    }

    TEST("layout: nothing is cached before the first lookup") {
        use_fake_driver();
        EXPECT(enc_layout_cached(fn(AXPY)) == NULL);
        EXPECT_EQ_INT(param_calls, 0);
    }

    TEST("layout: a second lookup is served from the cache without asking the driver") {
        use_fake_driver();
        const enc_layout *L = enc_layout_for(fn(AXPY));
        int calls = param_calls + name_calls;
        EXPECT(enc_layout_for(fn(AXPY)) == L);
        EXPECT(enc_layout_cached(fn(AXPY)) == L);
        EXPECT_EQ_INT(param_calls + name_calls, calls);
    }

    TEST("layout: the driver is asked with the re-entrancy guard set, and the guard is restored") {
        use_fake_driver();
        EXPECT_EQ_INT(enc_thr.guard, 0);
        enc_layout_for(fn(AXPY));
        EXPECT(param_calls > 0);
        EXPECT_EQ_INT(guard_unset_calls, 0);
        EXPECT_EQ_INT(enc_thr.guard, 0);
    }

    TEST("layout: a CUkernel passed as a CUfunction is read with cuKernelGetParamInfo") {
        use_fake_driver();
        const enc_layout *L = enc_layout_for(fn(AS_KERNEL));
        EXPECT(L && L->ok && L->is_kernel);
        if (L) {
            EXPECT_EQ_INT(L->nparams, 2);
            EXPECT_EQ_INT(L->argbytes, 16);
            EXPECT_STR_EQ(L->name, "as_kernel");
        }
    }

    TEST("layout: a driver error other than past-the-last-parameter makes the kernel opaque") {
        use_fake_driver();
        const enc_layout *L = enc_layout_for(fn(BROKEN));
        EXPECT(L && !L->ok);
        if (L) EXPECT_STR_EQ(L->name, "broken");
    }

    TEST("layout: a parameter reaching past 64 KiB makes the kernel opaque") {
        use_fake_driver();
        const enc_layout *L = enc_layout_for(fn(HUGE));
        EXPECT(L && !L->ok);
    }

    TEST("layout: without cuFuncGetParamInfo every kernel is opaque") {
        use_fake_driver();
        enc_drv.funcGetParamInfo = NULL;
        const enc_layout *L = enc_layout_for(fn(AXPY));
        EXPECT(L && !L->ok);
        EXPECT_EQ_INT(param_calls, 0);
        enc_drv.funcGetParamInfo = fake_func_param_info;
    }

    TEST("layout: a kernel without parameters or a name has an empty layout named ?") {
        use_fake_driver();
        const enc_layout *L = enc_layout_for(fn(NAMELESS));
        EXPECT(L && L->ok);
        if (L) {
            EXPECT_EQ_INT(L->nparams, 0);
            EXPECT_EQ_INT(L->argbytes, 0);
            EXPECT_STR_EQ(L->name, "?");
        }
    }

    TEST("layout: after code is unloaded the driver is asked again") {
        use_fake_driver();
        const enc_layout *old = enc_layout_for(fn(AXPY));
        enc_layout *retired = enc_layouts_reset();
        EXPECT(retired == old && retired->retired && retired->retired_next == NULL);
        EXPECT(enc_layout_cached(fn(AXPY)) == NULL);
        int calls = param_calls;
        const enc_layout *L = enc_layout_for(fn(AXPY));
        EXPECT(L != NULL && L != old);
        EXPECT(param_calls > calls);
        EXPECT_STR_EQ(old->name, "axpy"); /* the retired layout stays readable until it is freed */
        enc_layouts_free(retired);
    }

    TEST("layout: it remembers the module of a CUfunction, the library of a CUkernel") {
        use_fake_driver();
        const enc_layout *a = enc_layout_for(fn(AXPY)), *k = enc_layout_for(fn(AS_KERNEL));
        const enc_layout *u = enc_layout_for(fn(NAMELESS));
        EXPECT(a->owner_kind == ENC_OWNER_MODULE && a->owner == (void *)0xA0);
        EXPECT(k->owner_kind == ENC_OWNER_LIBRARY && k->owner == (void *)0xC0);
        EXPECT(u->owner_kind == ENC_OWNER_UNKNOWN && u->owner == NULL);
    }

    TEST("layout: retiring one module's layouts keeps every other layout cached") {
        use_fake_driver();
        const enc_layout *a = enc_layout_for(fn(AXPY)), *b = enc_layout_for(fn(BROKEN));
        const enc_layout *h = enc_layout_for(fn(HUGE)), *k = enc_layout_for(fn(AS_KERNEL));
        enc_layout *retired = enc_layouts_retire(pick_owner, (void *)0xA0);
        int n = 0, all_marked = 1;
        for (enc_layout *L = retired; L; L = L->retired_next, n++) {
            all_marked &= L->retired;
            EXPECT(L == a || L == b);
        }
        EXPECT_EQ_INT(n, 2);
        EXPECT(all_marked);
        EXPECT(enc_layout_cached(fn(AXPY)) == NULL && enc_layout_cached(fn(BROKEN)) == NULL);
        EXPECT(enc_layout_cached(fn(HUGE)) == h && enc_layout_cached(fn(AS_KERNEL)) == k);
        EXPECT(!h->retired && !k->retired);
        enc_layouts_free(retired);
    }

    TEST("layout: retiring nothing leaves the cache as it is") {
        use_fake_driver();
        const enc_layout *a = enc_layout_for(fn(AXPY));
        EXPECT(enc_layouts_retire(pick_none, NULL) == NULL);
        EXPECT(enc_layout_cached(fn(AXPY)) == a);
    }

    TEST("layout: retirements one after the other each keep what they did not pick") {
        use_fake_driver();
        enc_layout_for(fn(AXPY));
        const enc_layout *h = enc_layout_for(fn(HUGE)), *k = enc_layout_for(fn(AS_KERNEL));
        enc_layouts_free(enc_layouts_retire(pick_owner, (void *)0xA0));
        enc_layouts_free(enc_layouts_retire(pick_owner, (void *)0xB0));
        EXPECT(enc_layout_cached(fn(HUGE)) == NULL);
        EXPECT(enc_layout_cached(fn(AS_KERNEL)) == k);
        const enc_layout *a = enc_layout_for(fn(AXPY)); /* asked again, cached again */
        enc_layouts_free(enc_layouts_retire(pick_owner, (void *)0xC0));
        EXPECT(enc_layout_cached(fn(AXPY)) == a && enc_layout_cached(fn(AS_KERNEL)) == NULL);
        (void)h;
    }

    return th_report();
}
