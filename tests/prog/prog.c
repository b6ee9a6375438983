#include "prog.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct prog_drv drv;
CUcontext prog_ctx;

enum prog_access prog_access_parse(const char *s)
{
    if (!s || !*s || !strcmp(s, "procaddr"))
        return PROG_ACCESS_PROCADDR;
    if (!strcmp(s, "procaddr-ptds"))
        return PROG_ACCESS_PROCADDR_PTDS;
    if (!strcmp(s, "dlsym"))
        return PROG_ACCESS_DLSYM;
    if (!strcmp(s, "dlsym-ptsz"))
        return PROG_ACCESS_DLSYM_PTSZ;
    prog_die("unknown access mode '%s' (procaddr, procaddr-ptds, dlsym, dlsym-ptsz)", s);
}

typedef CUresult (*getproc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

void prog_drv_load(enum prog_access how)
{
    prog_drv_load_into(&drv, how);
}

void prog_drv_load_into(struct prog_drv *table, enum prog_access how)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        prog_die("dlopen libcuda.so.1: %s", dlerror());
    getproc_fn getproc = NULL;
    if (how == PROG_ACCESS_PROCADDR || how == PROG_ACCESS_PROCADDR_PTDS) {
        getproc_fn first = (getproc_fn)dlsym(lib, "cuGetProcAddress_v2");
        if (!first)
            prog_die("dlsym cuGetProcAddress_v2: not found");
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        void *p = NULL;
        CUresult r = first("cuGetProcAddress", &p, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st);
        if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || !p)
            prog_die("cuGetProcAddress(\"cuGetProcAddress\", 13000) failed: result %d status %d", (int)r, (int)st);
        getproc = (getproc_fn)p;
    }
    cuuint64_t flags = how == PROG_ACCESS_PROCADDR_PTDS ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                                        : CU_GET_PROC_ADDRESS_DEFAULT;
    int per_thread = how == PROG_ACCESS_PROCADDR_PTDS || how == PROG_ACCESS_DLSYM_PTSZ;
    (void)per_thread;
#define PROG_DRV_LOAD(sym, pname, ver, dname, dname_pt)                                                     \
    do {                                                                                                   \
        void *p_ = NULL;                                                                                   \
        if (getproc) {                                                                                     \
            CUdriverProcAddressQueryResult st_ = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                     \
            CUresult r_ = getproc(pname, &p_, ver, flags, &st_);                                           \
            if (r_ != CUDA_SUCCESS || st_ != CU_GET_PROC_ADDRESS_SUCCESS || !p_)                           \
                prog_die("cuGetProcAddress(\"%s\", %d, flags %llu) failed: result %d status %d", pname, ver, \
                         (unsigned long long)flags, (int)r_, (int)st_);                                    \
        } else {                                                                                           \
            const char *n_ = per_thread ? dname_pt : dname;                                                \
            p_ = dlsym(lib, n_);                                                                           \
            if (!p_)                                                                                       \
                prog_die("dlsym %s: not found", n_);                                                       \
        }                                                                                                  \
        memcpy(&table->sym, &p_, sizeof p_);                                                                  \
    } while (0);
    PROG_ENTRY_POINTS(PROG_DRV_LOAD)
#undef PROG_DRV_LOAD
}

void prog_check(CUresult r, const char *what, const char *file, int line)
{
    if (r == CUDA_SUCCESS)
        return;
    const char *name = NULL;
    if (!drv.cuGetErrorName || drv.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = "?";
    prog_die("%s:%d: %s failed: %d (%s)", file, line, what, (int)r, name);
}

void prog_init(void)
{
    prog_init_with(prog_access_parse(getenv("PROG_ACCESS")));
}

/* One launch attribute for every prog_launch, which then goes through
 * cuLaunchKernelEx (chosen once, at init; the first set variable wins):
 *   PROG_LAUNCH_PDL=1       programmatic stream serialization allowed, as
 *                           llama.cpp's kernels do (a graph captured from them
 *                           has programmatic edges)
 *   PROG_LAUNCH_PRIORITY=1  a launch priority of -1 (the simulator counts
 *                           kernels run at a priority)
 *   PROG_LAUNCH_CLUSTER=1   a cluster shape of one block (mix sees it) */
static int launch_ex;
static CUlaunchAttribute launch_attr;

static int env_is_1(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

static void choose_launch_attr(void)
{
    memset(&launch_attr, 0, sizeof launch_attr);
    launch_ex = 1;
    if (env_is_1("PROG_LAUNCH_PDL")) {
        launch_attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        launch_attr.value.programmaticStreamSerializationAllowed = 1;
    } else if (env_is_1("PROG_LAUNCH_PRIORITY")) {
        launch_attr.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
        launch_attr.value.priority = -1;
    } else if (env_is_1("PROG_LAUNCH_CLUSTER")) {
        launch_attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        launch_attr.value.clusterDim.x = launch_attr.value.clusterDim.y = launch_attr.value.clusterDim.z = 1;
    } else {
        launch_ex = 0;
    }
}

void prog_init_with(enum prog_access how)
{
    choose_launch_attr();
    prog_drv_load(how);
    CK(drv.cuInit(0));
    CUdevice dev;
    CK(drv.cuDeviceGet(&dev, 0));
    CK(drv.cuDevicePrimaryCtxRetain(&prog_ctx, dev));
    CK(drv.cuCtxSetCurrent(prog_ctx));
}

void prog_thread_init(void)
{
    CK(drv.cuCtxSetCurrent(prog_ctx));
}

void prog_reset_primary(int release)
{
    CUdevice dev;
    CK(drv.cuDeviceGet(&dev, 0));
    if (release)
        CK(drv.cuDevicePrimaryCtxRelease(dev)); /* prog_init's reference, the only one */
    else
        CK(drv.cuDevicePrimaryCtxReset(dev));
    CK(drv.cuDevicePrimaryCtxRetain(&prog_ctx, dev));
    CK(drv.cuCtxSetCurrent(prog_ctx));
}

CUmodule prog_module_load(const char *so_path)
{
    char image[4096];
    if ((size_t)snprintf(image, sizeof image, "simcuda:%s", so_path) >= sizeof image)
        prog_die("kernel path too long: %s", so_path);
    CUmodule mod;
    CK(drv.cuModuleLoadData(&mod, image));
    return mod;
}

CUfunction prog_function(CUmodule mod, const char *name)
{
    CUfunction f;
    CUresult r = drv.cuModuleGetFunction(&f, mod, name);
    if (r != CUDA_SUCCESS)
        prog_die("cuModuleGetFunction(%s) failed: %d", name, (int)r);
    return f;
}

void prog_kernels_load(prog_kernels *k, int alt)
{
    k->mod = prog_module_load(prog_kernels_path(alt));
#define PROG_GETFN(name) k->name = prog_function(k->mod, #name)
    PROG_GETFN(fill);
    PROG_GETFN(mix);
    PROG_GETFN(add);
    PROG_GETFN(axpy);
    PROG_GETFN(copy);
    PROG_GETFN(stamp);
    PROG_GETFN(packed);
    PROG_GETFN(reduce);
    PROG_GETFN(flag_inc);
    PROG_GETFN(flag_wait);
    PROG_GETFN(delay);
    PROG_GETFN(nop);
    PROG_GETFN(fault);
#undef PROG_GETFN
}

void prog_kernels_unload(prog_kernels *k)
{
    CK(drv.cuModuleUnload(k->mod));
    memset(k, 0, sizeof *k);
}

static CUlaunchConfig config_1d(unsigned grid, unsigned block, unsigned shmem, CUstream s, CUlaunchAttribute *attrs,
                                unsigned nattrs);

void prog_launch(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void **params)
{
    prog_count_launch();
    if (launch_ex) {
        CUlaunchConfig cfg = config_1d(grid, block, shmem, s, &launch_attr, 1);
        CK(drv.cuLaunchKernelEx(&cfg, f, params, NULL));
        return;
    }
    CK(drv.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, s, params, NULL));
}

CUresult prog_launch_rc(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void **params)
{
    prog_count_launch();
    return drv.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, s, params, NULL);
}

const char *prog_err_name(CUresult r)
{
    const char *name = NULL;
    if (drv.cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
        return "?";
    return name;
}

static CUlaunchConfig config_1d(unsigned grid, unsigned block, unsigned shmem, CUstream s, CUlaunchAttribute *attrs,
                                unsigned nattrs)
{
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = grid;
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = block;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = shmem;
    cfg.hStream = s;
    cfg.attrs = attrs;
    cfg.numAttrs = nattrs;
    return cfg;
}

void prog_launch_ex(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void **params,
                    CUlaunchAttribute *attrs, unsigned nattrs)
{
    CUlaunchConfig cfg = config_1d(grid, block, shmem, s, attrs, nattrs);
    prog_count_launch();
    CK(drv.cuLaunchKernelEx(&cfg, f, params, NULL));
}

void prog_launch_ex_packed(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void *argbuf,
                           size_t argsize, CUlaunchAttribute *attrs, unsigned nattrs)
{
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &argsize,
                     CU_LAUNCH_PARAM_END};
    CUlaunchConfig cfg = config_1d(grid, block, shmem, s, attrs, nattrs);
    prog_count_launch();
    CK(drv.cuLaunchKernelEx(&cfg, f, NULL, extra));
}

void prog_launch_extra(CUfunction f, unsigned grid, unsigned block, unsigned shmem, CUstream s, void *argbuf,
                       size_t argsize)
{
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &argsize,
                     CU_LAUNCH_PARAM_END};
    prog_count_launch();
    CK(drv.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, s, NULL, extra));
}

void k_fill(const prog_kernels *k, CUstream s, CUdeviceptr dst, uint32_t value, uint32_t n)
{
    void *p[] = {&dst, &value, &n};
    prog_launch(k->fill, PROG_GRID(n), PROG_BLOCK, 0, s, p);
}

void k_mix(const prog_kernels *k, CUstream s, CUdeviceptr dst, uint32_t salt, uint32_t n)
{
    void *p[] = {&dst, &salt, &n};
    prog_launch(k->mix, PROG_GRID(n), PROG_BLOCK, 0, s, p);
}

void k_add(const prog_kernels *k, CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t n)
{
    void *p[] = {&dst, &src, &n};
    prog_launch(k->add, PROG_GRID(n), PROG_BLOCK, 0, s, p);
}

void k_axpy(const prog_kernels *k, CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t a, uint32_t n)
{
    void *p[] = {&dst, &src, &a, &n};
    prog_launch(k->axpy, PROG_GRID(n), PROG_BLOCK, 0, s, p);
}

void k_copy(const prog_kernels *k, CUstream s, CUdeviceptr dst, CUdeviceptr src, uint32_t n)
{
    void *p[] = {&dst, &src, &n};
    prog_launch(k->copy, PROG_GRID(n), PROG_BLOCK, 0, s, p);
}

void k_stamp(const prog_kernels *k, CUstream s, CUdeviceptr dst, uint32_t n)
{
    void *p[] = {&dst, &n};
    prog_launch(k->stamp, PROG_GRID(n), PROG_BLOCK, 0, s, p);
}

void k_reduce(const prog_kernels *k, CUstream s, CUdeviceptr out, CUdeviceptr src, uint32_t n)
{
    void *p[] = {&out, &src, &n};
    prog_launch(k->reduce, 1, 1, 0, s, p);
}

void k_flag_inc(const prog_kernels *k, CUstream s, CUdeviceptr flag)
{
    void *p[] = {&flag};
    prog_launch(k->flag_inc, 1, 1, 0, s, p);
}

void k_flag_wait(const prog_kernels *k, CUstream s, CUdeviceptr flag, uint32_t value, uint32_t timeout_ms)
{
    void *p[] = {&flag, &value, &timeout_ms};
    prog_launch(k->flag_wait, 1, 1, 0, s, p);
}

void k_delay(const prog_kernels *k, CUstream s, uint32_t us)
{
    void *p[] = {&us};
    prog_launch(k->delay, 1, 1, 0, s, p);
}

CUdeviceptr prog_alloc(uint32_t n)
{
    CUdeviceptr d;
    CK(drv.cuMemAlloc(&d, (size_t)n * sizeof(uint32_t)));
    return d;
}

uint64_t prog_hash_dev(CUstream s, CUdeviceptr d, uint32_t n)
{
    uint32_t *h = malloc((size_t)n * sizeof *h);
    if (!h)
        prog_die("out of memory");
    CK(drv.cuMemcpyDtoHAsync(h, d, (size_t)n * sizeof *h, s));
    CK(drv.cuStreamSynchronize(s));
    uint64_t x = prog_hash_buf(PROG_HASH_INIT, h, n);
    free(h);
    return x;
}

CUstream prog_stream_xy(prog_kernels *k, uint32_t n, CUdeviceptr *x, CUdeviceptr *y) {
    prog_kernels_load(k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    *x = prog_alloc(n);
    *y = prog_alloc(n);
    k_fill(k, s, *x, 1, n);
    k_fill(k, s, *y, 2, n);
    return s;
}

void prog_hot_buffers(const prog_kernels *k, CUstream s, uint32_t n, CUdeviceptr *x, CUdeviceptr *y, CUdeviceptr *r)
{
    *x = prog_alloc(n);
    *y = prog_alloc(n);
    *r = prog_alloc(4);
    k_fill(k, s, *x, 1, n);
    k_fill(k, s, *y, 2, n);
    CK(drv.cuStreamSynchronize(s));
}

void prog_ring_buffers(const prog_kernels *k, CUstream s, uint32_t n, int count, uint32_t xsalt, CUdeviceptr *xs,
                       CUdeviceptr *ys)
{
    for (int i = 0; i < count; i++) {
        xs[i] = prog_alloc(n);
        ys[i] = prog_alloc(n);
        k_fill(k, s, xs[i], xsalt * (uint32_t)i + 1u, n);
        k_fill(k, s, ys[i], 5u * (uint32_t)i + 2u, n);
    }
}

CUstream prog_hot_setup(prog_kernels *k, uint32_t n, CUdeviceptr *x, CUdeviceptr *y, CUdeviceptr *r)
{
    prog_init();
    prog_kernels_load(k, 0);
    CUstream s = prog_stream(CU_STREAM_NON_BLOCKING);
    prog_hot_buffers(k, s, n, x, y, r);
    return s;
}

void prog_print_reduce(CUstream s, CUdeviceptr r, const char *what, int i)
{
    uint32_t h[4];
    CK(drv.cuMemcpyDtoHAsync(h, r, sizeof h, s));
    CK(drv.cuStreamSynchronize(s));
    printf("%s %3d reduce %08x\n", what, i, h[0]);
}

void prog_finish(CUstream s, CUdeviceptr x, CUdeviceptr y, uint32_t n)
{
    unsigned long long hx = prog_hash_dev(s, x, n), hy = prog_hash_dev(s, y, n);
    printf("final x %016llx y %016llx\n", hx, hy);
    prog_report_launches();
}

CUstream prog_stream(unsigned flags)
{
    CUstream s;
    CK(drv.cuStreamCreate(&s, flags));
    return s;
}
