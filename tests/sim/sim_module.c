/* Simulated CUDA driver: modules, libraries, functions, kernels, launches.
 *
 * A module image is the text "simcuda:<path>"; <path> names a shared object
 * holding kernels (see simkernel.h), or is empty for the main program. The
 * function "name" is the exported descriptor simcuda_kernel_<name>. */
#define _GNU_SOURCE
#include "sim_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOD_MAGIC 0x4d4f4421
#define FUNC_MAGIC 0x46554e43
#define LIB_MAGIC 0x4c494221
#define KERN_MAGIC 0x4b45524e

struct sim_module {
    int magic;
    void *dl;
    char *path;
    sim_ctx *ctx;
    sim_library *lib;
    sim_func *funcs; /* cache: one CUfunction per name (mu) */
    pthread_mutex_t mu;
    sim_module *all_next; /* every module ever loaded: never freed */
};

struct sim_library {
    int magic;
    sim_module *mod;
    sim_kernel *kernels;
};

struct sim_kernel {
    int magic;
    sim_library *lib;
    sim_func *func;
    sim_kernel *next;
};

/* ------------------------------------------------------------------------ */
/* parameter layout                                                         */
/* ------------------------------------------------------------------------ */
/* Natural alignment of a parameter of `size` bytes: the largest power of two
 * dividing the size, at most 8 (scalars and pointers align to their size;
 * aggregates are assumed to have 8-byte alignment at most). */
static size_t param_align(size_t size) {
    size_t a = 1;
    while (a < 8 && size % (a * 2) == 0) a *= 2;
    return a;
}

static void layout(sim_func *f) {
    size_t off = 0;
    f->nparams = f->desc->nparams;
    if (f->nparams < 0) f->nparams = 0;
    if (f->nparams > SIMCUDA_MAX_PARAMS) f->nparams = SIMCUDA_MAX_PARAMS;
    for (int i = 0; i < f->nparams; i++) {
        size_t sz = f->desc->sizes[i];
        size_t a = param_align(sz);
        off = (off + a - 1) & ~(a - 1);
        f->offsets[i] = off;
        f->sizes[i] = sz;
        off += sz;
    }
    f->argsize = off;
}

/* ------------------------------------------------------------------------ */
/* modules                                                                  */
/* ------------------------------------------------------------------------ */
static sim_module *mod_get(CUmodule h) {
    sim_module *m = sim_reg_get(h, T_MODULE);
    return (m && m->magic == MOD_MAGIC) ? m : NULL;
}

/* image text -> shared object path ("" = main program); NULL if not ours */
static const char *image_path(const void *image) {
    static const char pfx[] = "simcuda:";
    if (!image || strncmp((const char *)image, pfx, sizeof pfx - 1) != 0) return NULL;
    return (const char *)image + sizeof pfx - 1;
}

static sim_module *all_modules; /* every module ever loaded (all_mu) */
static pthread_mutex_t all_mu = PTHREAD_MUTEX_INITIALIZER;

static CUresult mod_load_path(sim_module **out, const char *path) {
    sim_ctx *c;
    CUresult rc = sim_require_ctx(&c);
    if (rc) return rc;
    void *dl = *path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : dlopen(NULL, RTLD_NOW);
    if (!dl) {
        const char *why = dlerror();
        if (getenv("SIMCUDA_VERBOSE")) fprintf(stderr, "simcuda: cannot load module '%s': %s\n", path, why ? why : "?");
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    sim_module *m = calloc(1, sizeof *m);
    if (!m) { dlclose(dl); return CUDA_ERROR_OUT_OF_MEMORY; }
    m->magic = MOD_MAGIC;
    m->dl = dl;
    m->path = strdup(path);
    m->ctx = c;
    pthread_mutex_init(&m->mu, NULL);
    pthread_mutex_lock(&all_mu);
    m->all_next = all_modules; /* keeps unloaded ones reachable (leak checkers) */
    all_modules = m;
    pthread_mutex_unlock(&all_mu);
    sim_reg_add(m, T_MODULE);
    *out = m;
    return CUDA_SUCCESS;
}

/* encore's updater kernel (core/graphs/updater.cu, ENCORE_DEVICE_PATCH): a real cubin, an ELF image that
 * names encore_updater. The simulator runs it from its own kernel (encore_updater_body below): the path of
 * this library itself, whose descriptor simcuda_kernel_encore_updater is. NULL for any other image. */
static const char *updater_image_path(const void *image) {
    const unsigned char *b = image;
    if (!b || memcmp(b, "\x7f" "ELF", 4) != 0 || b[4] != 2) return NULL; /* ELF64 */
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, b + 0x28, sizeof shoff);
    memcpy(&shentsize, b + 0x3A, sizeof shentsize);
    memcpy(&shnum, b + 0x3C, sizeof shnum);
    size_t n = (size_t)(shoff + (uint64_t)shentsize * shnum);
    static const char name[] = "encore_updater";
    if (n > (64u << 20) || !memmem(b, n, name, sizeof name - 1)) return NULL;
    static Dl_info self;
    if (!self.dli_fname && !dladdr((void *)updater_image_path, &self)) return NULL;
    return self.dli_fname;
}

static CUresult mod_load_image(CUmodule *pm, const void *image) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!pm || !image) return CUDA_ERROR_INVALID_VALUE;
    const char *path = updater_image_path(image);
    if (!path) path = image_path(image);
    if (!path) return CUDA_ERROR_INVALID_IMAGE;
    sim_module *m;
    if ((rc = mod_load_path(&m, path))) return rc;
    *pm = (CUmodule)m;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) { return mod_load_image(module, image); }
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues) {
    (void)numOptions; (void)options; (void)optionValues;
    return mod_load_image(module, image);
}
CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin) { return mod_load_image(module, fatCubin); }

/* read a file: if it holds the image text use it, else load the file itself
 * as a kernels shared object */
static char *read_small_file(const char *fname) {
    FILE *f = fopen(fname, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 4097);
    size_t n = buf ? fread(buf, 1, 4096, f) : 0;
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static CUresult mod_load_file(sim_module **out, const char *fname) {
    char *text = read_small_file(fname);
    if (!text) return CUDA_ERROR_FILE_NOT_FOUND;
    const char *path = image_path(text);
    CUresult rc;
    if (path) {
        char *nl = strpbrk((char *)path, "\r\n");
        if (nl) *nl = 0;
        rc = mod_load_path(out, path);
    } else {
        rc = mod_load_path(out, fname);
    }
    free(text);
    return rc;
}

CUresult cuModuleLoad(CUmodule *module, const char *fname) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
    sim_module *m;
    if ((rc = mod_load_file(&m, fname))) return rc;
    *module = (CUmodule)m;
    return CUDA_SUCCESS;
}

static void mod_free(sim_module *m) {
    sim_reg_del(m);
    m->magic = 0;
    pthread_mutex_lock(&m->mu);
    for (sim_func *f = m->funcs; f; f = f->next) {
        sim_reg_del(f);
        f->magic = 0;
    }
    pthread_mutex_unlock(&m->mu);
    /* Function objects and the shared object stay allocated / loaded: work
     * already queued may still run them, like a GPU finishing queued work. */
}

void sim_module_drop_ctx(sim_ctx *c) {
    pthread_mutex_lock(&all_mu);
    for (sim_module *m = all_modules; m; m = m->all_next)
        if (m->magic == MOD_MAGIC && m->ctx == c && !m->lib) mod_free(m);
    pthread_mutex_unlock(&all_mu);
}

bool sim_func_live(const sim_func *f) { return f && f->magic == FUNC_MAGIC; }

CUresult cuModuleUnload(CUmodule hmod) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_module *m = mod_get(hmod);
    if (!m || m->lib) return CUDA_ERROR_INVALID_HANDLE;
    mod_free(m);
    return CUDA_SUCCESS;
}

static CUresult mod_get_function(sim_func **out, sim_module *m, const char *name) {
    pthread_mutex_lock(&m->mu);
    for (sim_func *f = m->funcs; f; f = f->next)
        if (strcmp(f->name, name) == 0) {
            pthread_mutex_unlock(&m->mu);
            *out = f;
            return CUDA_SUCCESS;
        }
    char sym[512];
    snprintf(sym, sizeof sym, "simcuda_kernel_%s", name);
    const simcuda_kernel_desc *d = dlsym(m->dl, sym);
    if (!d || !d->fn) {
        pthread_mutex_unlock(&m->mu);
        return CUDA_ERROR_NOT_FOUND;
    }
    sim_func *f = calloc(1, sizeof *f);
    if (!f || !(f->name = strdup(name))) {
        free(f);
        pthread_mutex_unlock(&m->mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    f->magic = FUNC_MAGIC;
    f->desc = d;
    f->mod = m;
    __atomic_store_n(&f->max_dyn_smem, SIM_MAX_DYN_SMEM_DEFAULT, __ATOMIC_RELAXED);
    f->carveout = -1;
    layout(f);
    f->next = m->funcs;
    m->funcs = f;
    sim_reg_add(f, T_FUNC);
    pthread_mutex_unlock(&m->mu);
    *out = f;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    sim_module *m = mod_get(hmod);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    sim_func *f;
    if ((rc = mod_get_function(&f, m, name))) return rc;
    *hfunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name) {
    (void)dptr; (void)bytes;
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!mod_get(hmod)) return CUDA_ERROR_INVALID_HANDLE;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    return CUDA_ERROR_NOT_FOUND; /* module globals are not simulated */
}

CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_EAGER_LOADING;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* libraries and kernels                                                    */
/* ------------------------------------------------------------------------ */
static sim_library *lib_get(CUlibrary h) {
    sim_library *l = sim_reg_get(h, T_LIBRARY);
    return (l && l->magic == LIB_MAGIC) ? l : NULL;
}
static sim_kernel *kern_get(CUkernel h) {
    sim_kernel *k = sim_reg_get(h, T_KERNEL);
    return (k && k->magic == KERN_MAGIC) ? k : NULL;
}

static CUresult lib_wrap(CUlibrary *out, sim_module *m) {
    sim_library *l = calloc(1, sizeof *l);
    if (!l) { mod_free(m); return CUDA_ERROR_OUT_OF_MEMORY; }
    l->magic = LIB_MAGIC;
    l->mod = m;
    m->lib = l;
    sim_reg_add(l, T_LIBRARY);
    *out = (CUlibrary)l;
    return CUDA_SUCCESS;
}

CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                           unsigned int numLibraryOptions) {
    (void)jitOptions; (void)jitOptionsValues; (void)numJitOptions;
    (void)libraryOptions; (void)libraryOptionValues; (void)numLibraryOptions;
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!library || !code) return CUDA_ERROR_INVALID_VALUE;
    const char *path = image_path(code);
    if (!path) return CUDA_ERROR_INVALID_IMAGE;
    sim_module *m;
    if ((rc = mod_load_path(&m, path))) return rc;
    return lib_wrap(library, m);
}

CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions, void **jitOptionsValues,
                               unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
                               unsigned int numLibraryOptions) {
    (void)jitOptions; (void)jitOptionsValues; (void)numJitOptions;
    (void)libraryOptions; (void)libraryOptionValues; (void)numLibraryOptions;
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!library || !fileName) return CUDA_ERROR_INVALID_VALUE;
    sim_module *m;
    if ((rc = mod_load_file(&m, fileName))) return rc;
    return lib_wrap(library, m);
}

CUresult cuLibraryUnload(CUlibrary library) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_library *l = lib_get(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    for (sim_kernel *k = l->kernels; k; k = k->next) {
        sim_reg_del(k);
        k->magic = 0;
    }
    sim_reg_del(l);
    l->magic = 0;
    mod_free(l->mod);
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!pKernel || !name) return CUDA_ERROR_INVALID_VALUE;
    sim_library *l = lib_get(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    sim_func *f;
    if ((rc = mod_get_function(&f, l->mod, name))) return rc;
    pthread_mutex_lock(&l->mod->mu);
    sim_kernel *k = f->kernel;
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k) { pthread_mutex_unlock(&l->mod->mu); return CUDA_ERROR_OUT_OF_MEMORY; }
        k->magic = KERN_MAGIC;
        k->lib = l;
        k->func = f;
        k->next = l->kernels;
        l->kernels = k;
        f->kernel = k;
        sim_reg_add(k, T_KERNEL);
    }
    pthread_mutex_unlock(&l->mod->mu);
    *pKernel = (CUkernel)k;
    return CUDA_SUCCESS;
}

CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!pMod) return CUDA_ERROR_INVALID_VALUE;
    sim_library *l = lib_get(library);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    *pMod = (CUmodule)l->mod;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel) {
    CUresult rc = sim_require_ctx(NULL);
    if (rc) return rc;
    if (!pFunc) return CUDA_ERROR_INVALID_VALUE;
    sim_kernel *k = kern_get(kernel);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = (CUfunction)k->func;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!pLib) return CUDA_ERROR_INVALID_VALUE;
    sim_kernel *k = kern_get(kernel);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *pLib = (CUlibrary)k->lib;
    return CUDA_SUCCESS;
}

sim_func *sim_func_resolve(CUfunction h) {
    sim_func *f = sim_reg_get(h, T_FUNC);
    if (f && f->magic == FUNC_MAGIC) return f;
    sim_kernel *k = kern_get((CUkernel)h);
    if (k && k->func && k->func->magic == FUNC_MAGIC) return k->func;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* function queries                                                         */
/* ------------------------------------------------------------------------ */
static CUresult param_info(sim_func *f, size_t index, size_t *off, size_t *size) {
    if (!off) return CUDA_ERROR_INVALID_VALUE;
    if (index >= (size_t)f->nparams) return CUDA_ERROR_INVALID_VALUE;
    *off = f->offsets[index];
    if (size) *size = f->sizes[index];
    return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_func *f = sim_reg_get(func, T_FUNC);
    if (!f || f->magic != FUNC_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    return param_info(f, paramIndex, paramOffset, paramSize);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_kernel *k = kern_get(kernel);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    return param_info(k->func, paramIndex, paramOffset, paramSize);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    sim_func *f = sim_reg_get(hfunc, T_FUNC);
    if (!f || f->magic != FUNC_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    *name = f->name;
    return CUDA_SUCCESS;
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    sim_kernel *k = kern_get(hfunc);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    *name = k->func->name;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!hmod) return CUDA_ERROR_INVALID_VALUE;
    sim_func *f = sim_reg_get(hfunc, T_FUNC);
    if (!f || f->magic != FUNC_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    *hmod = (CUmodule)f->mod;
    return CUDA_SUCCESS;
}

CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!state) return CUDA_ERROR_INVALID_VALUE;
    if (!sim_func_resolve(function)) return CUDA_ERROR_INVALID_HANDLE;
    *state = CU_FUNCTION_LOADING_STATE_LOADED;
    return CUDA_SUCCESS;
}

CUresult cuFuncLoad(CUfunction function) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    return sim_func_resolve(function) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult func_get_attr(int *pi, CUfunction_attribute attrib, sim_func *f) {
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = __atomic_load_n(&f->max_dyn_smem, __ATOMIC_RELAXED); break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = __atomic_load_n(&f->carveout, __ATOMIC_RELAXED); break;
    default:
        if ((int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
        *pi = (unsigned)attrib < 32 ? __atomic_load_n(&f->attrs_other[attrib], __ATOMIC_RELAXED) : 0;
        break;
    }
    return CUDA_SUCCESS;
}

static CUresult func_set_attr(sim_func *f, CUfunction_attribute attrib, int value) {
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > SIM_MAX_DYN_SMEM_OPTIN) return CUDA_ERROR_INVALID_VALUE;
        __atomic_store_n(&f->max_dyn_smem, value, __ATOMIC_RELAXED);
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
        __atomic_store_n(&f->carveout, value, __ATOMIC_RELAXED);
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        __atomic_store_n(&f->attrs_other[attrib], value, __ATOMIC_RELAXED);
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_func *f = sim_func_resolve(hfunc);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    return func_get_attr(pi, attrib, f);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    sim_func *f = sim_func_resolve(hfunc);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    return func_set_attr(f, attrib, value);
}

CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    sim_kernel *k = kern_get(kernel);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    return func_get_attr(pi, attrib, k->func);
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    sim_kernel *k = kern_get(kernel);
    if (!k) return CUDA_ERROR_INVALID_HANDLE;
    return func_set_attr(k->func, attrib, val);
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
    (void)config;
    CUresult rc = sim_check_init();
    if (rc) return rc;
    return sim_func_resolve(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
    (void)config;
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    return kern_get(kernel) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* ------------------------------------------------------------------------ */
/* launches                                                                 */
/* ------------------------------------------------------------------------ */
CUresult sim_kcall_build(sim_kcall *k, sim_func *f, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned smem,
                         void **kernelParams, void **extra) {
    memset(k, 0, sizeof *k);
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return CUDA_ERROR_INVALID_VALUE;
    if (gy > 65535 || gz > 65535 || gx > 2147483647u) return CUDA_ERROR_INVALID_VALUE;
    if (bx > 1024 || by > 1024 || bz > 64 || (unsigned long long)bx * by * bz > 1024) return CUDA_ERROR_INVALID_VALUE;
    if (smem > (unsigned)__atomic_load_n(&f->max_dyn_smem, __ATOMIC_RELAXED)) return CUDA_ERROR_INVALID_VALUE;

    const void *buf = NULL;
    size_t bufsize = 0;
    bool have_ptr = false, have_size = false;
    if (extra) {
        for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
            if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
                buf = extra[i + 1];
                have_ptr = true;
            } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
                if (!extra[i + 1]) return CUDA_ERROR_INVALID_VALUE;
                bufsize = *(size_t *)extra[i + 1];
                have_size = true;
            } else {
                return CUDA_ERROR_INVALID_VALUE;
            }
        }
    }
    if (kernelParams && (have_ptr || have_size)) return CUDA_ERROR_INVALID_VALUE;
    if (f->nparams > 0) {
        if (!kernelParams && !(have_ptr && have_size && buf)) return CUDA_ERROR_INVALID_VALUE;
        /* A buffer shorter than the parameters is taken (NCCL passes only the part
         * of its 4 KB argument struct its kernel reads): the rest is undefined,
         * here a pattern that a kernel reading it would show. An empty one is not. */
        if (!kernelParams && bufsize == 0) return CUDA_ERROR_INVALID_VALUE;
    }

    k->argbuf = calloc(1, f->argsize ? f->argsize : 1);
    k->kparams = calloc((size_t)(f->nparams ? f->nparams : 1), sizeof(void *));
    if (!k->argbuf || !k->kparams) {
        free(k->argbuf);
        free(k->kparams);
        k->argbuf = NULL;
        k->kparams = NULL;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < f->nparams; i++) {
        if (kernelParams) {
            if (!kernelParams[i]) {
                free(k->argbuf);
                free(k->kparams);
                k->argbuf = NULL;
                k->kparams = NULL;
                return CUDA_ERROR_INVALID_VALUE;
            }
            memcpy(k->argbuf + f->offsets[i], kernelParams[i], f->sizes[i]);
        }
        k->kparams[i] = k->argbuf + f->offsets[i];
    }
    if (!kernelParams && f->argsize && buf) {
        size_t n = bufsize < (size_t)f->argsize ? bufsize : (size_t)f->argsize;
        memcpy(k->argbuf, buf, n);
        memset(k->argbuf + n, 0xA5, (size_t)f->argsize - n);
    }
    k->func = f;
    k->argsize = f->argsize;
    k->dims = (simcuda_dims){{gx, gy, gz}, {bx, by, bz}, smem, {0, 0, 0}};
    return CUDA_SUCCESS;
}

void sim_kcall_run(sim_kcall *k) {
    void *args[SIMCUDA_MAX_PARAMS + 1];
    for (int i = 0; i < k->func->nparams; i++) args[i] = k->argbuf + k->func->offsets[i];
    args[k->func->nparams] = NULL;
    k->func->desc->fn(&k->dims, args);
}

static CUresult launch_attrs(CUfunction hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned smem, CUstream hs, void **kernelParams, void **extra, int ptds,
                             const CUlaunchAttribute *attrs, unsigned nattrs) {
    sim_stream *s;
    CUresult rc = sim_stream_resolve(hs, ptds, &s);
    if (rc) return rc;
    sim_func *f = sim_func_resolve(hf);
    if (!f) return CUDA_ERROR_INVALID_HANDLE;
    /* a stream (and a module's function) of the current device (sim_multidev.c);
     * a context-independent kernel (a CUkernel, what the runtime launches) runs
     * in its stream's context whatever the current one (two H100s, 2026-11-25) */
    if (!kern_get((CUkernel)hf) &&
        (rc = sim_launch_ctx_check(sim_current_ctx(), s, f->mod && !f->mod->lib ? f->mod->ctx : NULL)))
        return rc;
    sim_work w = {.kind = W_KERNEL};
    if ((rc = sim_kcall_build(&w.u.k, f, gx, gy, gz, bx, by, bz, smem, kernelParams, extra))) return rc;
    sim_launch_host_time(f);
    /* CU_LAUNCH_ATTRIBUTE_PRIORITY: the kernel runs at that priority (clamped
     * to the context's range) instead of its stream's */
    for (unsigned i = 0; i < nattrs; i++)
        if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_PRIORITY) {
            int p = attrs[i].value.priority;
            w.u.k.prio_set = true;
            w.u.k.prio = p > 0 ? 0 : p < -5 ? -5 : p;
        } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW) {
            w.u.k.apw_set = true;
            w.u.k.apw_bytes = attrs[i].value.accessPolicyWindow.num_bytes;
        } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN) {
            w.u.k.domain_set = true;
            w.u.k.sync_domain = (int)attrs[i].value.memSyncDomain;
        } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) {
            w.u.k.programmatic = attrs[i].value.programmaticStreamSerializationAllowed != 0;
        } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE &&
                   attrs[i].value.deviceUpdatableKernelNode.deviceUpdatable) {
            /* graphs only: under capture the node gets a device handle, written back into the caller's
             * attribute (an H200, driver 13.0: tests/bench/devupdate_driver_probe.c); outside a capture
             * refused (not probed on a GPU). SIMCUDA_DEVNODE_ALONE=1: refused beside any other attribute (a
             * driver that allows it with none only; not seen) */
            pthread_mutex_lock(&g_mu);
            bool capturing = s->cap != NULL;
            pthread_mutex_unlock(&g_mu);
            static int alone = -1;
            if (alone < 0) alone = sim_env_code("SIMCUDA_DEVNODE_ALONE", 1) != 0;
            if (alone && nattrs > 1) {
                sim_work_release(&w);
                return CUDA_ERROR_NOT_SUPPORTED;
            }
            if (!capturing) {
                sim_work_release(&w);
                return CUDA_ERROR_INVALID_VALUE;
            }
            w.u.k.dev_node = sim_devnode_new();
            ((CUlaunchAttribute *)attrs)[i].value.deviceUpdatableKernelNode.devNode =
                (CUgraphDeviceNode)(uintptr_t)w.u.k.dev_node;
        } else if (attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            /* the kernel sees its cluster's shape (%cluster_nctarank on a GPU) */
            w.u.k.dims.cluster[0] = attrs[i].value.clusterDim.x;
            w.u.k.dims.cluster[1] = attrs[i].value.clusterDim.y;
            w.u.k.dims.cluster[2] = attrs[i].value.clusterDim.z;
        }
    return sim_enqueue(s, &w, NULL);
}

static CUresult launch(CUfunction hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem, CUstream hs, void **kernelParams, void **extra, int ptds) {
    return launch_attrs(hf, gx, gy, gz, bx, by, bz, smem, hs, kernelParams, extra, ptds, NULL, 0);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, extra, 0);
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, extra, 1);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                   unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream, void **kernelParams) {
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, NULL, 0);
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams) {
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                  kernelParams, NULL, 1);
}

static CUresult launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **kernelParams, void **extra, int ptds) {
    CUresult rc = sim_check_init();
    if (rc) return rc;
    if (!cfg || (cfg->numAttrs && !cfg->attrs)) return CUDA_ERROR_INVALID_VALUE;
    return launch_attrs(f, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ, cfg->blockDimX, cfg->blockDimY,
                        cfg->blockDimZ, cfg->sharedMemBytes, cfg->hStream, kernelParams, extra, ptds, cfg->attrs,
                        cfg->numAttrs);
}
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
    return launch_ex(config, f, kernelParams, extra, 0);
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra) {
    return launch_ex(config, f, kernelParams, extra, 1);
}
