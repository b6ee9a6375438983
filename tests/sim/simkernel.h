/* Kernels for the simulated driver (tests only).
 *
 * The simulated libcuda.so.1 runs "kernels" as host functions on the stream's
 * worker thread. A module image passed to cuModuleLoadData / cuLibraryLoadData
 * is the text "simcuda:<path>": <path> is a shared object holding the kernels,
 * or empty for the main program (which must then be linked with -rdynamic).
 * cuModuleGetFunction(&f, mod, "axpy") looks up the exported descriptor
 * `simcuda_kernel_axpy` defined with SIMCUDA_KERNEL below. Parameters are laid
 * out like a real kernel's: each at its natural alignment, and
 * cuFuncGetParamInfo reports the offsets and sizes.
 *
 *   static void axpy_body(const simcuda_dims *d, void **args) {
 *       float a = *(float *)args[0]; float *x = *(float **)args[1]; ...
 *   }
 *   SIMCUDA_KERNEL(axpy, axpy_body, sizeof(float), sizeof(float *), sizeof(float *), sizeof(int));
 *
 * Device pointers are host pointers in the simulation, so a kernel body
 * dereferences them directly. */
#ifndef SIMCUDA_KERNEL_H
#define SIMCUDA_KERNEL_H

#include <stddef.h>

typedef struct simcuda_dims {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
} simcuda_dims;

typedef void (*simcuda_kernel_fn)(const simcuda_dims *dims, void **args);

#define SIMCUDA_MAX_PARAMS 32

typedef struct simcuda_kernel_desc {
    simcuda_kernel_fn fn;
    int nparams;
    size_t sizes[SIMCUDA_MAX_PARAMS];
} simcuda_kernel_desc;

#define SIMCUDA_NARGS_(...) (sizeof((size_t[]){__VA_ARGS__}) / sizeof(size_t))
#define SIMCUDA_KERNEL(name, body, ...)                                        \
    __attribute__((visibility("default"))) const simcuda_kernel_desc           \
        simcuda_kernel_##name = {body, (int)SIMCUDA_NARGS_(__VA_ARGS__), {__VA_ARGS__}}
#define SIMCUDA_KERNEL0(name, body)                                            \
    __attribute__((visibility("default"))) const simcuda_kernel_desc           \
        simcuda_kernel_##name = {body, 0, {0}}

#endif
