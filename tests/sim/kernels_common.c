/* libsimkernels.so: generally useful kernels for tests on the simulated driver.
 *
 * Load with cuModuleLoadData(&mod, "simcuda:" SIMKERNELS_PATH) (the absolute
 * path of this library; CMake passes it to tests, see simkernel.h) and
 * cuModuleGetFunction(&f, mod, "fill_u32") etc. Each kernel works over its n
 * elements sequentially on the stream's worker thread; grid and block only
 * have to be valid (the driver checks them). Pointer parameters are device
 * pointers (CUdeviceptr, 8 bytes); `n` is a 32-bit unsigned count.
 *
 * Several kernels are deliberately order-sensitive (hash_mix, scale_add_u32
 * in place) so that a launch executed out of order or twice changes the
 * result. */
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

#include "simkernel.h"

#define ARG(T, i) (*(T *)args[(i)])

/* fill_u32(uint32_t *ptr, uint32_t value, uint32_t n): ptr[i] = value.
 * Layout: ptr@0, value@8, n@12. */
static void fill_u32_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *p = ARG(uint32_t *, 0);
    uint32_t v = ARG(uint32_t, 1), n = ARG(uint32_t, 2);
    for (uint32_t i = 0; i < n; i++) p[i] = v;
}
SIMCUDA_KERNEL(fill_u32, fill_u32_body, sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* add_u32(uint32_t *dst, const uint32_t *a, const uint32_t *b, uint32_t n):
 * dst[i] = a[i] + b[i]. Layout: dst@0, a@8, b@16, n@24. */
static void add_u32_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *a = ARG(const uint32_t *, 1), *b = ARG(const uint32_t *, 2);
    uint32_t n = ARG(uint32_t, 3);
    for (uint32_t i = 0; i < n; i++) dst[i] = a[i] + b[i];
}
SIMCUDA_KERNEL(add_u32, add_u32_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t));

/* axpy_f32(float a, const float *x, float *y, uint32_t n): y[i] = a*x[i] + y[i].
 * Layout: a@0, x@8 (4 bytes of padding before it), y@16, n@24. */
static void axpy_f32_body(const simcuda_dims *d, void **args) {
    (void)d;
    float a = ARG(float, 0);
    const float *x = ARG(const float *, 1);
    float *y = ARG(float *, 2);
    uint32_t n = ARG(uint32_t, 3);
    for (uint32_t i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
SIMCUDA_KERNEL(axpy_f32, axpy_f32_body, sizeof(float), sizeof(float *), sizeof(float *), sizeof(uint32_t));

/* scale_add_u32(uint32_t *dst, const uint32_t *src, uint32_t mul, uint32_t add,
 * uint32_t n): dst[i] = src[i]*mul + add (dst may equal src).
 * Layout: dst@0, src@8, mul@16, add@20, n@24. */
static void scale_add_u32_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t mul = ARG(uint32_t, 2), add = ARG(uint32_t, 3), n = ARG(uint32_t, 4);
    for (uint32_t i = 0; i < n; i++) dst[i] = src[i] * mul + add;
}
SIMCUDA_KERNEL(scale_add_u32, scale_add_u32_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t),
               sizeof(uint32_t), sizeof(uint32_t));

/* copy_u32(uint32_t *dst, const uint32_t *src, uint32_t n): dst[i] = src[i].
 * Layout: dst@0, src@8, n@16. */
static void copy_u32_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t n = ARG(uint32_t, 2);
    for (uint32_t i = 0; i < n; i++) dst[i] = src[i];
}
SIMCUDA_KERNEL(copy_u32, copy_u32_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t));

/* hash_mix(uint32_t *dst, const uint32_t *src, uint32_t n, uint32_t salt):
 * dst[i] = mix(dst[i], src[i], salt, i), a non-commutative mix: running two
 * hash_mix launches in the other order, or one twice, gives another result.
 * Layout: dst@0, src@8, n@16, salt@20. */
static uint32_t mix32(uint32_t h, uint32_t v) {
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}
static void hash_mix_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *dst = ARG(uint32_t *, 0);
    const uint32_t *src = ARG(const uint32_t *, 1);
    uint32_t n = ARG(uint32_t, 2), salt = ARG(uint32_t, 3);
    for (uint32_t i = 0; i < n; i++) dst[i] = mix32(mix32(dst[i], src[i]), salt ^ i);
}
SIMCUDA_KERNEL(hash_mix, hash_mix_body, sizeof(uint32_t *), sizeof(uint32_t *), sizeof(uint32_t), sizeof(uint32_t));

/* spin_flag_set(uint32_t *ptr, uint32_t value): atomically stores value to
 * *ptr (release order), for a host thread that polls a host-visible flag
 * (e.g. in memory from cuMemHostAlloc). Layout: ptr@0, value@8. */
static void spin_flag_set_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t *p = ARG(uint32_t *, 0);
    __atomic_store_n(p, ARG(uint32_t, 1), __ATOMIC_RELEASE);
}
SIMCUDA_KERNEL(spin_flag_set, spin_flag_set_body, sizeof(uint32_t *), sizeof(uint32_t));

/* sleep_us(uint32_t us): the worker sleeps `us` microseconds; widens race
 * windows in ordering tests. Layout: us@0. */
static void sleep_us_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t us = ARG(uint32_t, 0);
    struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
    nanosleep(&ts, NULL);
}
SIMCUDA_KERNEL(sleep_us, sleep_us_body, sizeof(uint32_t));

/* fault_u32(uint32_t *ptr, uint32_t code): with code 0, ptr[0] += 1; else the
 * kernel "faults" with that CUresult (700 CUDA_ERROR_ILLEGAL_ADDRESS, 710
 * CUDA_ERROR_ASSERT, ...): the context takes it as its sticky error (see
 * simcuda_device_fault in sim_core.c). Layout: ptr@0, code@8. */
static void fault_u32_body(const simcuda_dims *d, void **args) {
    (void)d;
    uint32_t code = ARG(uint32_t, 1);
    if (!code) {
        ARG(uint32_t *, 0)[0] += 1;
        return;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void (*raise_fault)(int) = lib ? (void (*)(int))dlsym(lib, "simcuda_device_fault") : NULL;
    if (raise_fault) raise_fault((int)code);
    if (lib) dlclose(lib);
}
SIMCUDA_KERNEL(fault_u32, fault_u32_body, sizeof(uint32_t *), sizeof(uint32_t));
