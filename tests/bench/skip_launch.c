/* libskiplaunch.so: a test-only preload that makes kernel launches return
 * CUDA_SUCCESS without launching anything.
 *
 *   LD_PRELOAD=build-gpu/tests/bench/libskiplaunch.so python3 bench_torch.py ...
 *
 * It gives the "launch-free bound" of a workload: how fast the program would
 * run if the launch call cost nothing (and the GPU did nothing). Outputs are
 * garbage in this mode, so tests/bench/bench skips the equality check there.
 *
 * It reaches every launch the way encore does: it overrides dlsym (cudart,
 * Triton and friends dlsym libcuda's entry points) and wraps cuGetProcAddress
 * (cudart fetches every other entry point through it, and asks it for
 * "cuGetProcAddress" itself, so that request gets our wrapper back). The
 * launch entry points cuLaunchKernel, cuLaunchKernelEx and their _ptsz
 * variants become no-ops; every other name gets the real pointer. The same
 * names are also exported directly, for programs linked with -lcuda.
 *
 * SKIPLAUNCH_SWITCH=1 makes it switchable in-process (below).
 * SKIPLAUNCH_REPORT=1 prints "skiplaunch: skipped N launches" at exit. */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

static uint64_t skipped;

/* ---- the real dlsym and libcuda -------------------------------------------- */

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym_ptr;

static void *real_dlsym(void *handle, const char *name) {
    dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);
    if (!f) {
        static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
        for (size_t i = 0; !f && i < sizeof versions / sizeof versions[0]; i++)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
        if (!f) {
            static const char msg[] = "skiplaunch: cannot find the real dlsym\n";
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            abort();
        }
        __atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
    }
    return f(handle, name);
}

static void *libcuda(void) {
    static void *h;
    void *p = __atomic_load_n(&h, __ATOMIC_ACQUIRE);
    if (!p) {
        p = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (!p) p = dlopen("libcuda.so", RTLD_NOW | RTLD_GLOBAL);
        __atomic_store_n(&h, p, __ATOMIC_RELEASE);
    }
    return p;
}

static void *real_cuda(const char *name, void **slot) {
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        void *h = libcuda();
        p = h ? real_dlsym(h, name) : NULL;
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}

/* ---- the no-op launches ----------------------------------------------------- */

/* SKIPLAUNCH_SWITCH=1: launches go to the driver until the program switches
 * skipping on through the same in-process switch encore answers
 * (cuGetProcAddress("encoreSetActive"): CUresult fn(int on)), so that a
 * benchmark measures the bound in blocks of one process (tests/bench/bench_paired.py,
 * variant launch-free: its A blocks skip, its P blocks launch). Otherwise
 * every launch is skipped from the start. */
static int skipping = -1; /* -1: not read yet */
static const char *const launch_names[4] = {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                                            "cuLaunchKernelEx_ptsz"};
static void *real_launch[4]; /* launch_names[k] as the driver gave it */

static int switchable(void) {
    const char *e = getenv("SKIPLAUNCH_SWITCH");
    return e && !strcmp(e, "1");
}

static int skip_now(void) {
    int v = __atomic_load_n(&skipping, __ATOMIC_RELAXED);
    if (v < 0) {
        v = !switchable();
        __atomic_store_n(&skipping, v, __ATOMIC_RELAXED);
    }
    return v;
}

static CUresult set_skipping(int on) {
    (void)skip_now();
    __atomic_store_n(&skipping, on != 0, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

#define NOOP_LAUNCH(name, k)                                                                                         \
    static CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,           \
                         unsigned int by, unsigned int bz, unsigned int shmem, CUstream s, void **params,            \
                         void **extra) {                                                                             \
        PFN_cuLaunchKernel_v4000 real = (PFN_cuLaunchKernel_v4000)__atomic_load_n(&real_launch[k], __ATOMIC_ACQUIRE); \
        if (!skip_now() && real) return real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);                    \
        __atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);                                                           \
        return CUDA_SUCCESS;                                                                                         \
    }
#define NOOP_LAUNCH_EX(name, k)                                                                                      \
    static CUresult name(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) {                 \
        PFN_cuLaunchKernelEx_v11060 real =                                                                           \
            (PFN_cuLaunchKernelEx_v11060)__atomic_load_n(&real_launch[k], __ATOMIC_ACQUIRE);                        \
        if (!skip_now() && real) return real(config, f, params, extra);                                              \
        __atomic_fetch_add(&skipped, 1, __ATOMIC_RELAXED);                                                           \
        return CUDA_SUCCESS;                                                                                         \
    }
NOOP_LAUNCH(noop_launch, 0)
NOOP_LAUNCH(noop_launch_ptsz, 1)
NOOP_LAUNCH_EX(noop_launch_ex, 2)
NOOP_LAUNCH_EX(noop_launch_ex_ptsz, 3)

/* The exported names (programs linked with -lcuda) have no driver pointer yet: their first call looks it up. */
static void real_launches_from_libcuda(void) {
    for (int k = 0; k < 4; k++)
        if (!__atomic_load_n(&real_launch[k], __ATOMIC_ACQUIRE) && libcuda())
            __atomic_store_n(&real_launch[k], real_dlsym(libcuda(), launch_names[k]), __ATOMIC_RELEASE);
}

/* The switch, for the name the real driver never has (switchable only). */
static int is_switch(const char *name) { return name && !strcmp(name, "encoreSetActive") && switchable(); }

/* Compile-time checks that the no-ops have the driver's signatures. */
static PFN_cuLaunchKernel_v4000 const check_launch = noop_launch;
static PFN_cuLaunchKernel_v7000_ptsz const check_launch_ptsz = noop_launch_ptsz;
static PFN_cuLaunchKernelEx_v11060 const check_launch_ex = noop_launch_ex;
static PFN_cuLaunchKernelEx_v11060_ptsz const check_launch_ex_ptsz = noop_launch_ex_ptsz;

/* ---- cuGetProcAddress ------------------------------------------------------- */

static void *real_gpa_v1_ptr, *real_gpa_v2_ptr;
static CUresult wrap_gpa_v1(const char *symbol, void **pfn, int version, cuuint64_t flags);
static CUresult wrap_gpa_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status);

/* What to hand out for `name` (a base name as given to cuGetProcAddress, or an
 * exported ABI name as given to dlsym) whose real address is `real`. */
static void *substitute(const char *name, void *real, int gpa_version) {
    if (is_switch(name)) return (void *)set_skipping;
    if (!real || !name || name[0] != 'c' || name[1] != 'u') return real;
    static void *const noops[4] = {(void *)noop_launch, (void *)noop_launch_ptsz, (void *)noop_launch_ex,
                                   (void *)noop_launch_ex_ptsz};
    for (int k = 0; k < 4; k++)
        if (!strcmp(name, launch_names[k])) {
            if (real != noops[k]) __atomic_store_n(&real_launch[k], real, __ATOMIC_RELEASE);
            return noops[k];
        }
    if (!strcmp(name, "cuGetProcAddress_v2")) return (void *)wrap_gpa_v2;
    if (!strcmp(name, "cuGetProcAddress"))
        /* Through cuGetProcAddress the version picks the variant (v12000 has
         * the status argument); through dlsym the name is the 4-argument one. */
        return gpa_version >= 12000 ? (void *)wrap_gpa_v2 : (void *)wrap_gpa_v1;
    return real;
}

static CUresult wrap_gpa_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                            CUdriverProcAddressQueryResult *status) {
    PFN_cuGetProcAddress_v12000 real = (PFN_cuGetProcAddress_v12000)real_cuda("cuGetProcAddress_v2", &real_gpa_v2_ptr);
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;
    if (pfn && is_switch(symbol)) {
        *pfn = (void *)set_skipping;
        if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = substitute(symbol, *pfn, version);
    return r;
}

static CUresult wrap_gpa_v1(const char *symbol, void **pfn, int version, cuuint64_t flags) {
    PFN_cuGetProcAddress_v11030 real = (PFN_cuGetProcAddress_v11030)real_cuda("cuGetProcAddress", &real_gpa_v1_ptr);
    if (!real) return CUDA_ERROR_NOT_INITIALIZED;
    if (pfn && is_switch(symbol)) {
        *pfn = (void *)set_skipping;
        return CUDA_SUCCESS;
    }
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = substitute(symbol, *pfn, version);
    return r;
}

static PFN_cuGetProcAddress_v12000 const check_gpa_v2 = wrap_gpa_v2;
static PFN_cuGetProcAddress_v11030 const check_gpa_v1 = wrap_gpa_v1;

/* ---- dlsym ------------------------------------------------------------------ */

/* RTLD_NEXT must be resolved relative to our caller, not to this library:
 * walk the link map after the caller's object. */
static void *dlsym_next(const void *caller, const char *name) {
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm) return real_dlsym(RTLD_NEXT, name);
    for (struct link_map *m = lm->l_next; m; m = m->l_next) {
        void *p = real_dlsym(m, name);
        Dl_info pi;
        if (p && dladdr(p, &pi) && pi.dli_fname && m->l_name && !strcmp(pi.dli_fname, m->l_name)) return p;
    }
    return NULL;
}

EXPORT void *dlsym(void *handle, const char *name) {
    void *p = handle == RTLD_NEXT ? dlsym_next(__builtin_return_address(0), name) : real_dlsym(handle, name);
    return substitute(name, p, 0);
}

/* ---- direct exports (programs linked with -lcuda) --------------------------- */

EXPORT CUresult skip_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                    CUstream s, void **params, void **extra) __asm__("cuLaunchKernel");
EXPORT CUresult skip_cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                    CUstream s, void **params, void **extra) {
    real_launches_from_libcuda();
    return noop_launch(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
EXPORT CUresult skip_cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                         unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                         CUstream s, void **params, void **extra) __asm__("cuLaunchKernel_ptsz");
EXPORT CUresult skip_cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                         unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                                         CUstream s, void **params, void **extra) {
    real_launches_from_libcuda();
    return noop_launch_ptsz(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
EXPORT CUresult skip_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
    __asm__("cuLaunchKernelEx");
EXPORT CUresult skip_cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) {
    real_launches_from_libcuda();
    return noop_launch_ex(config, f, params, extra);
}
EXPORT CUresult skip_cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
    __asm__("cuLaunchKernelEx_ptsz");
EXPORT CUresult skip_cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) {
    real_launches_from_libcuda();
    return noop_launch_ex_ptsz(config, f, params, extra);
}
EXPORT CUresult skip_cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                         CUdriverProcAddressQueryResult *status) __asm__("cuGetProcAddress_v2");
EXPORT CUresult skip_cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                         CUdriverProcAddressQueryResult *status) {
    return wrap_gpa_v2(symbol, pfn, version, flags, status);
}
EXPORT CUresult skip_cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
    __asm__("cuGetProcAddress");
EXPORT CUresult skip_cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags) {
    return wrap_gpa_v1(symbol, pfn, version, flags);
}

/* ---- report ----------------------------------------------------------------- */

__attribute__((destructor)) static void skiplaunch_report(void) {
    (void)check_launch; (void)check_launch_ptsz; (void)check_launch_ex; (void)check_launch_ex_ptsz;
    (void)check_gpa_v1; (void)check_gpa_v2;
    const char *e = getenv("SKIPLAUNCH_REPORT");
    if (!e || !*e || !strcmp(e, "0")) return;
    char buf[96];
    int n = snprintf(buf, sizeof buf, "skiplaunch: skipped %llu launches\n",
                     (unsigned long long)__atomic_load_n(&skipped, __ATOMIC_RELAXED));
    if (n > 0) {
        ssize_t w = write(2, buf, (size_t)n);
        (void)w;
    }
}
