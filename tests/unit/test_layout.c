/* Unit tests of the parameter-layout cache (core/layout.c) against a fake
 * driver: enc_drv's parameter-info and name functions point at the fakes
 * below, which describe a few kernels by handle and count their calls. */
#include "base/driver.h"
#include "base/guard.h"
#include "core/internal.h"
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
    if (!enc_tls_guard) guard_unset_calls++;
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

static void use_fake_driver(void) {
    enc_drv.funcGetParamInfo = fake_func_param_info;
    enc_drv.kernelGetParamInfo = fake_kernel_param_info;
    enc_drv.funcGetName = fake_func_name;
    enc_drv.kernelGetName = fake_kernel_name;
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
        EXPECT_EQ_INT(enc_tls_guard, 0);
        enc_layout_for(fn(AXPY));
        EXPECT(param_calls > 0);
        EXPECT_EQ_INT(guard_unset_calls, 0);
        EXPECT_EQ_INT(enc_tls_guard, 0);
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

    return th_report();
}
