/* Unit tests of the check a launch passes before it is held
 * (core/path/validate.c), and of the program's changes of a function's
 * attributes, against a fake driver: one device (limits as on an H100), a
 * function F whose limits the test sets, a CUkernel K, and a function whose
 * attributes cannot be read. The fakes count their calls. */
#include "base/driver.h"
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
#include "policy/options.h"
#include "testhelper.h"

enum { F = 0x100, K = 0x200, UNREADABLE = 0x300, G = 0x400, DEVICE = 0 };

static int f_max_threads = 1024, f_max_smem = 48 * 1024, attr_calls, kernel_attr_calls;
static CUdevice kernel_attr_dev = -1;

static CUresult fake_stream_get_flags(CUstream s, unsigned *flags) {
    (void)s;
    *flags = 0;
    return CUDA_SUCCESS;
}

static CUresult fake_stream_get_ctx(CUstream s, CUcontext *ctx) {
    (void)s;
    *ctx = NULL; /* the current one: no context push */
    return CUDA_SUCCESS;
}

static CUresult fake_ctx_get_device(CUdevice *dev) {
    *dev = DEVICE;
    return CUDA_SUCCESS;
}

static CUresult fake_device_attribute(int *v, CUdevice_attribute a, CUdevice dev) {
    if (dev != DEVICE) return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult attribute_of(int *v, CUfunction_attribute a) {
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = f_max_threads; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = f_max_smem; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult fake_func_attribute(int *v, CUfunction_attribute a, CUfunction f) {
    attr_calls++;
    if ((uintptr_t)f != F && (uintptr_t)f != G) return CUDA_ERROR_INVALID_HANDLE;
    return attribute_of(v, a);
}

static CUresult fake_kernel_attribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice dev) {
    kernel_attr_calls++;
    kernel_attr_dev = dev;
    if ((uintptr_t)k != K) return CUDA_ERROR_INVALID_HANDLE;
    return attribute_of(v, a);
}

static enc_layout *layout_of(uintptr_t handle, int is_kernel) {
    enc_layout *L = calloc(1, sizeof *L);
    L->func = (void *)handle;
    L->ok = 1;
    L->is_kernel = is_kernel;
    return L;
}

/* A launch of L: grid gx x gy x gz, block bx x by x bz, smem bytes. */
static enc_rec launch(const enc_layout *L, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                      unsigned bz, unsigned smem) {
    enc_rec r;
    memset(&r, 0, sizeof r);
    r.f = (CUfunction)L->func;
    r.L = L;
    r.grid[0] = gx, r.grid[1] = gy, r.grid[2] = gz;
    r.block[0] = bx, r.block[1] = by, r.block[2] = bz;
    r.smem = smem;
    return r;
}

static int valid(enc_stream_state *st, enc_rec r) {
    enc_mutex_lock(&st->mu);
    int ok = enc_launch_valid(st, &r);
    enc_mutex_unlock(&st->mu);
    return ok;
}

/* The program sets F's maximum dynamic shared memory to `value` (the driver takes it). */
static void program_sets_smem(int value) {
    enc_func_set c = {.handle = (void *)F, .attrib = CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, .value = value};
    enc_core_func_set_begin(&c);
    f_max_smem = value;
    enc_core_func_set_end(CUDA_SUCCESS);
}

int main(int argc, char **argv) {
    th_init(argc, argv);
    enc_options_init();
    enc_drv.streamGetFlags = fake_stream_get_flags;
    enc_drv.streamGetCtx = fake_stream_get_ctx;
    enc_drv.ctxGetDevice = fake_ctx_get_device;
    enc_drv.deviceGetAttribute = fake_device_attribute;
    enc_drv.funcGetAttribute = fake_func_attribute;
    enc_drv.kernelGetAttribute = fake_kernel_attribute;
    enc_stream_state *st = enc_stream_for((CUstream)(uintptr_t)0x1000, 0, 1);
    if (!st) return 2;
    const enc_layout *f = layout_of(F, 0), *k = layout_of(K, 1), *unreadable = layout_of(UNREADABLE, 0);

    TEST("validate: a launch within every limit is valid") {
        EXPECT(valid(st, launch(f, 1, 1, 1, 1, 1, 1, 0)));
        EXPECT(valid(st, launch(f, 2147483647u, 65535, 65535, 1024, 1, 1, 48 * 1024)));
        EXPECT(valid(st, launch(f, 8, 8, 1, 8, 8, 16, 0)));
    }

    TEST("validate: a zero grid or block dimension is refused") {
        EXPECT(!valid(st, launch(f, 0, 1, 1, 32, 1, 1, 0)));
        EXPECT(!valid(st, launch(f, 1, 1, 0, 32, 1, 1, 0)));
        EXPECT(!valid(st, launch(f, 1, 1, 1, 32, 0, 1, 0)));
    }

    TEST("validate: a grid or block dimension beyond the device's limit is refused") {
        EXPECT(!valid(st, launch(f, 1, 65536, 1, 32, 1, 1, 0)));
        EXPECT(!valid(st, launch(f, 1, 1, 70000, 32, 1, 1, 0)));
        EXPECT(!valid(st, launch(f, 1, 1, 1, 2048, 1, 1, 0)));
        EXPECT(!valid(st, launch(f, 1, 1, 1, 1, 1, 65, 0)));
    }

    TEST("validate: more threads per block than the device allows are refused") {
        EXPECT(!valid(st, launch(f, 1, 1, 1, 32, 32, 2, 0)));
    }

    TEST("validate: more threads per block than the function allows are refused") {
        f_max_threads = 256;                /* F uses many registers */
        program_sets_smem(f_max_smem + 16); /* (a change: encore reads F's limits again) */
        EXPECT(valid(st, launch(f, 1, 1, 1, 256, 1, 1, 0)));
        EXPECT(!valid(st, launch(f, 1, 1, 1, 512, 1, 1, 0)));
        f_max_threads = 1024;
        program_sets_smem(48 * 1024);
    }

    TEST("validate: more dynamic shared memory than the function allows is refused") {
        program_sets_smem(48 * 1024);
        EXPECT(valid(st, launch(f, 1, 1, 1, 32, 1, 1, 48 * 1024)));
        EXPECT(!valid(st, launch(f, 1, 1, 1, 32, 1, 1, 48 * 1024 + 1)));
    }

    TEST("validate: a function's limits are read once") {
        valid(st, launch(f, 1, 1, 1, 32, 1, 1, 0));
        attr_calls = 0;
        for (int i = 0; i < 100; i++) valid(st, launch(f, 1, 1, 1, 32, 1, 1, 0));
        EXPECT_EQ_INT(attr_calls, 0);
    }

    TEST("validate: a launch held before the program lowered its function's limit is refused after it") {
        program_sets_smem(64 * 1024);
        EXPECT(valid(st, launch(f, 1, 1, 1, 32, 1, 1, 50000)));
        program_sets_smem(1024);
        EXPECT(!valid(st, launch(f, 1, 1, 1, 32, 1, 1, 50000)));
        program_sets_smem(48 * 1024);
    }

    TEST("validate: setting an attribute to the value it has changes nothing") {
        unsigned gen = enc_hot.func_attr_gen;
        program_sets_smem(f_max_smem);
        EXPECT_EQ_INT(enc_hot.func_attr_gen, gen);
        program_sets_smem(f_max_smem + 16);
        EXPECT_EQ_INT(enc_hot.func_attr_gen, gen + 1);
    }

    TEST("validate: a cache configuration set twice to the same value changes it once") {
        enc_layout_for((CUfunction)(uintptr_t)F); /* F was launched: encore knows it */
        unsigned gen = enc_hot.func_attr_gen;
        enc_func_set c = {.handle = (void *)F, .cache = 1, .value = CU_FUNC_CACHE_PREFER_SHARED};
        for (int i = 0; i < 3; i++) {
            enc_core_func_set_begin(&c);
            enc_core_func_set_end(CUDA_SUCCESS);
        }
        EXPECT_EQ_INT(enc_hot.func_attr_gen, gen + 1);
        c.value = CU_FUNC_CACHE_PREFER_L1;
        enc_core_func_set_begin(&c);
        enc_core_func_set_end(CUDA_SUCCESS);
        EXPECT_EQ_INT(enc_hot.func_attr_gen, gen + 2);
    }

    TEST("validate: a change of an attribute the check does not know makes the function's launches run eagerly") {
        const enc_layout *g = enc_layout_for((CUfunction)(uintptr_t)G), *f2 = enc_layout_for((CUfunction)(uintptr_t)F);
        EXPECT(valid(st, launch(g, 4, 1, 1, 32, 1, 1, 0)));
        enc_func_set c = {.handle = (void *)G, .attrib = CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, .value = 8};
        enc_core_func_set_begin(&c);
        enc_core_func_set_end(CUDA_SUCCESS);
        EXPECT(!valid(st, launch(g, 4, 1, 1, 32, 1, 1, 0))); /* (a grid of 4 fits no cluster of 8) */
        EXPECT(valid(st, launch(f2, 4, 1, 1, 32, 1, 1, 0)));
    }

    TEST("validate: a CUkernel's limits are read through cuKernelGetAttribute, for the stream's device") {
        kernel_attr_calls = 0;
        EXPECT(valid(st, launch(k, 1, 1, 1, 32, 1, 1, 0)));
        EXPECT(kernel_attr_calls > 0);
        EXPECT_EQ_INT(kernel_attr_dev, DEVICE);
        EXPECT(!valid(st, launch(k, 1, 1, 1, 32, 1, 1, (unsigned)f_max_smem + 1)));
    }

    TEST("validate: a launch whose function's limits cannot be read is refused (it runs eagerly)") {
        EXPECT(!valid(st, launch(unreadable, 1, 1, 1, 32, 1, 1, 0)));
    }

    TEST("validate: without the driver's attribute queries nothing is held") {
        enc_stream_state *other = enc_stream_for((CUstream)(uintptr_t)0x2000, 0, 1);
        enc_drv.ctxGetDevice = NULL;
        EXPECT(!valid(other, launch(f, 1, 1, 1, 32, 1, 1, 0)));
        enc_drv.ctxGetDevice = fake_ctx_get_device;
    }
    return th_report();
}
